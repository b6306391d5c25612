"""The JIT: KernelSpec -> source -> compile (NVRTC/NVCC) -> cache -> launch.

Quick use::

    from humming.jit import KernelSpec, get_kernel
    kernel = get_kernel(spec)                  # memory, disk, or compile
    plan = kernel.plan(params_struct, grid=(blocks,))
    plan.launch()                              # on torch's current stream

``warmup(specs)`` compiles a list ahead of time, in parallel. The disk cache is
``$HUMMING_CACHE_DIR`` (default ``~/.cache/humming``); ``HUMMING_COMPILER``
picks ``nvrtc`` (default) or ``nvcc``.
"""
from __future__ import annotations

from .cache import DiskCache, cache_key, default_cache_dir
from .codegen import ENTRY_SYMBOL, header_digests, include_roots, render
from .compilers import Compiler, NvccCompiler, NvrtcCompiler, get_compiler
from .launch import Kernel, LaunchPlan
from .runtime import Runtime, WarmupResult, default_runtime, get_kernel, reset_default_runtime, warmup
from .spec import KernelSpec

__all__ = [
    "KernelSpec", "render", "ENTRY_SYMBOL", "include_roots", "header_digests",
    "Compiler", "NvrtcCompiler", "NvccCompiler", "get_compiler",
    "DiskCache", "cache_key", "default_cache_dir",
    "Kernel", "LaunchPlan",
    "Runtime", "WarmupResult", "default_runtime", "reset_default_runtime", "get_kernel", "warmup",
]
