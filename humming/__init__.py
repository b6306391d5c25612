"""humming: JIT-compiled GPU GEMM kernels for quantized LLM inference."""
from __future__ import annotations

__version__ = "0.1.0"

from . import errors
from .errors import UnsupportedError, FormatError, ShapeError, CompileError, DeviceError

# Lazy exports: ``import humming`` stays cheap (no plugin loading, no GPU query, no compile).
_LAZY = {
    "plan": ("humming.planner", "plan"),
    "devices": ("humming.plugins", "devices"),
    "load_checkpoint": ("humming.formats", "load_checkpoint"),
    "prepare_weight": ("humming.ops.gemm", "prepare_weight"),
    "gemm": ("humming.ops.gemm", "gemm"),
    "moe_gemm": ("humming.ops.moe", "moe_gemm"),
    "QuantLinear": ("humming.nn", "QuantLinear"),
    "QuantMoE": ("humming.nn", "QuantMoE"),
}


def __getattr__(name):
    import importlib

    if name == "capabilities":  # the module, with every backend's capability files registered
        from .plugins import get_plugin_manager

        get_plugin_manager()
        return importlib.import_module("humming.capabilities")
    if name in ("formats", "reference", "scheme", "dtypes", "ops", "nn", "jit", "engine"):
        return importlib.import_module(f"humming.{name}")
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'humming' has no attribute {name!r}")
