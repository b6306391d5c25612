"""The compilers: NVRTC in process (default) and NVCC as a subprocess.

A compiler turns a generated source into a CUBIN for one ``sm_*`` target. It
has an ``identity`` (name, version and the CUDA headers it sees) and portable
``flags`` (no paths); both go into the cache key. Include paths are given at
compile time and never enter a key.

Choose with ``get_compiler(name)``; ``name=None`` reads ``HUMMING_COMPILER``
(``nvrtc`` or ``nvcc``) and defaults to ``nvrtc``.
"""
from __future__ import annotations

import ctypes
import functools
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import CompileError
from .spec import KernelSpec

__all__ = ["CompileOutput", "Compiler", "NvrtcCompiler", "NvccCompiler", "get_compiler",
           "cuda_include_dir"]

#: Flags every compile gets (both compilers; no fast-math: rounding must be exact).
COMMON_FLAGS = ("-std=c++17",)


@dataclass(frozen=True)
class CompileOutput:
    ok: bool
    cubin: bytes
    log: str
    seconds: float


def _split_target(target: str) -> tuple[str, str]:
    """``"sm_90a"`` -> ``("90", "a")``."""
    body = target[3:]
    suffix = body[-1] if body[-1] in "af" else ""
    return body[: len(body) - len(suffix)], suffix


@functools.lru_cache(maxsize=None)
def cuda_include_dir() -> Path | None:
    """The CUDA runtime headers NVRTC should see (cuda_fp16.h, ...), from
    cuda.pathfinder; None when none are installed (our own headers need none)."""
    try:
        from cuda.pathfinder import find_nvidia_header_directory

        d = find_nvidia_header_directory("cudart")
    except Exception:  # pathfinder missing or nothing found
        return None
    return Path(d) if d else None


@functools.lru_cache(maxsize=None)
def _cuda_headers_identity() -> str:
    """Version of the CUDA headers NVRTC compiles against (no paths, no times)."""
    d = cuda_include_dir()
    if d is None:
        return "cuda-headers:none"
    version = "?"
    api = d / "cuda_runtime_api.h"
    if api.is_file():
        m = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", api.read_text(errors="replace"))
        version = m.group(1) if m else "?"
    sizes = ",".join(str((d / h).stat().st_size) if (d / h).is_file() else "-"
                     for h in ("cuda_fp16.hpp", "cuda_bf16.hpp", "cuda_fp8.hpp"))
    return f"cuda-headers:{version}:{sizes}"


class Compiler:
    """Interface; see the module docstring."""

    name = "?"

    @property
    def identity(self) -> str:
        raise NotImplementedError

    def flags(self, spec: KernelSpec) -> list[str]:
        raise NotImplementedError

    def compile(self, source: str, spec: KernelSpec, roots: Sequence[Path]) -> CompileOutput:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.identity}>"


def _nogil_compile_program():
    """``nvrtcCompileProgram`` through ctypes, which releases the GIL during the
    call (the cuda.bindings wrapper holds it, so threads would compile one at a
    time); None when the library cannot be opened that way."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib

        fn = ctypes.CDLL(load_nvidia_dynamic_lib("nvrtc").abs_path).nvrtcCompileProgram
    except Exception:
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    fn.restype = ctypes.c_int
    return fn


class NvrtcCompiler(Compiler):
    """NVRTC through ``cuda.bindings.nvrtc``, in process; the compile call itself
    goes through ctypes so that several threads can compile at once."""

    name = "nvrtc"

    def __init__(self):
        from cuda.bindings import nvrtc

        self._nvrtc = nvrtc
        self._compile_program = _nogil_compile_program()
        err, major, minor = nvrtc.nvrtcVersion()
        self._check(err, "nvrtcVersion")
        err, archs = nvrtc.nvrtcGetSupportedArchs()
        self._check(err, "nvrtcGetSupportedArchs")
        self.version = (major, minor)
        self.supported_archs = tuple(int(a) for a in archs)

    def _check(self, err, what: str):
        if err != self._nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(f"NVRTC {what} failed: {err!r}")

    @functools.cached_property
    def identity(self) -> str:
        # The library file's name and size tell builds of one version apart
        # (13.0.48 vs 13.0.88) without using its path or time.
        lib = "?"
        try:
            from cuda.pathfinder import load_nvidia_dynamic_lib

            real = Path(os.path.realpath(load_nvidia_dynamic_lib("nvrtc").abs_path))
            lib = f"{real.name}:{real.stat().st_size}"
        except Exception:
            pass
        return f"nvrtc:{self.version[0]}.{self.version[1]}:{lib}:{_cuda_headers_identity()}"

    def flags(self, spec: KernelSpec) -> list[str]:
        return [*COMMON_FLAGS, f"--gpu-architecture={spec.target}"]

    def compile(self, source: str, spec: KernelSpec, roots: Sequence[Path]) -> CompileOutput:
        nv = self._nvrtc
        t0 = time.perf_counter()
        if spec.arch not in self.supported_archs:
            return CompileOutput(False, b"", f"NVRTC {self.version[0]}.{self.version[1]} cannot target "
                                 f"{spec.target}: it supports sm_{', sm_'.join(map(str, self.supported_archs))}",
                                 time.perf_counter() - t0)
        includes = [*roots] + ([cuda_include_dir()] if cuda_include_dir() else [])
        opts = [f.encode() for f in self.flags(spec)] + [f"-I{p}".encode() for p in includes]
        err, prog = nv.nvrtcCreateProgram(source.encode(), f"{spec.family}.cu".encode(), 0, [], [])
        self._check(err, "nvrtcCreateProgram")
        try:
            if self._compile_program is not None:
                err = nv.nvrtcResult(self._compile_program(int(prog), len(opts),
                                                           (ctypes.c_char_p * len(opts))(*opts)))
            else:
                (err,) = nv.nvrtcCompileProgram(prog, len(opts), opts)
            # Buffers must be fresh and mutable: NVRTC writes into them (a
            # `b" " * 1` would be CPython's shared one-byte object).
            _, size = nv.nvrtcGetProgramLogSize(prog)
            buf = bytearray(size)
            nv.nvrtcGetProgramLog(prog, buf)
            log = bytes(buf).rstrip(b"\x00").decode("utf-8", "replace")
            if err != nv.nvrtcResult.NVRTC_SUCCESS:
                return CompileOutput(False, b"", log or repr(err), time.perf_counter() - t0)
            e2, size = nv.nvrtcGetCUBINSize(prog)
            if e2 != nv.nvrtcResult.NVRTC_SUCCESS or size == 0:
                return CompileOutput(False, b"", log + f"\nNVRTC produced no CUBIN for {spec.target} "
                                     "(a compute_* target gives PTX only; use sm_*)", time.perf_counter() - t0)
            cubin = bytearray(size)
            (e3,) = nv.nvrtcGetCUBIN(prog, cubin)
            self._check(e3, "nvrtcGetCUBIN")
            return CompileOutput(True, bytes(cubin), log, time.perf_counter() - t0)
        finally:
            nv.nvrtcDestroyProgram(prog)


class NvccCompiler(Compiler):
    """``nvcc -cubin`` in a subprocess (``-gencode=arch=compute_X,code=sm_X``)."""

    name = "nvcc"

    def __init__(self, nvcc: str | None = None):
        self.path = nvcc or self._find()

    @staticmethod
    def _find() -> str:
        path = None
        try:
            from cuda.pathfinder import find_nvidia_binary_utility

            path = find_nvidia_binary_utility("nvcc")
        except Exception:
            pass
        path = path or shutil.which("nvcc")
        if not path:
            raise CompileError("nvcc was asked for (HUMMING_COMPILER=nvcc or compiler='nvcc') but "
                               "is neither found by cuda.pathfinder nor on PATH")
        return str(path)

    @functools.cached_property
    def identity(self) -> str:
        out = subprocess.run([self.path, "--version"], capture_output=True, text=True, check=False).stdout
        rel = re.search(r"release [^\n]*", out)
        build = re.search(r"Build [^\n]*", out)
        return f"nvcc:{rel.group(0) if rel else '?'}:{build.group(0) if build else '?'}"

    def flags(self, spec: KernelSpec) -> list[str]:
        num, suffix = _split_target(spec.target)
        return ["-cubin", *COMMON_FLAGS, f"-gencode=arch=compute_{num}{suffix},code=sm_{num}{suffix}"]

    def compile(self, source: str, spec: KernelSpec, roots: Sequence[Path]) -> CompileOutput:
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="humming-nvcc-") as tmp:
            src = Path(tmp) / f"{spec.family}.cu"
            out = Path(tmp) / f"{spec.family}.cubin"
            src.write_text(source)
            cmd = [self.path, *self.flags(spec), *(f"-I{r}" for r in roots), "-o", str(out), str(src)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            log = (proc.stdout + proc.stderr).strip()
            if proc.returncode != 0 or not out.is_file():
                return CompileOutput(False, b"", log or f"nvcc exited with {proc.returncode}",
                                     time.perf_counter() - t0)
            return CompileOutput(True, out.read_bytes(), log, time.perf_counter() - t0)


_compilers: dict[str, Compiler] = {}
_KINDS = {"nvrtc": NvrtcCompiler, "nvcc": NvccCompiler}


def get_compiler(name: str | Compiler | None = None) -> Compiler:
    """The compiler called ``name`` (or ``HUMMING_COMPILER``, default nvrtc); one per process."""
    if isinstance(name, Compiler):
        return name
    name = (name or os.environ.get("HUMMING_COMPILER") or "nvrtc").strip().lower()
    if name not in _KINDS:
        raise ValueError(f"compiler: expected one of {sorted(_KINDS)}, found {name!r} "
                         "(argument or HUMMING_COMPILER)")
    if name not in _compilers:
        _compilers[name] = _KINDS[name]()
    return _compilers[name]
