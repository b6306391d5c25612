"""The JIT runtime: spec -> source -> key -> (memory | disk | compile) -> Kernel.

``Runtime.kernel(spec)`` is the whole lazy path: a dict lookup when the spec was
seen before in this process; otherwise render, hash, read the disk cache, and
compile only on a miss. ``warmup(specs)`` does the same for a list ahead of
time, compiling the misses in parallel.

Parallel warm-up uses threads: NVCC runs as a subprocess, and NVRTC's compile
call goes through ctypes, which releases the GIL (the cuda.bindings 13.5
wrapper holds it: measured, two threads took as long as one; NVIDIA/cuda-python
issue 624). NVRTC itself compiles independently per thread.
``executor="process"`` runs compile worker subprocesses instead.
"""
from __future__ import annotations

import concurrent.futures as cf
import os
import pickle
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import CompileError
from .cache import CacheEntry, DiskCache, cache_key
from .codegen import header_digests, include_roots, render
from .compilers import CompileOutput, Compiler, get_compiler
from .launch import Kernel
from .spec import KernelSpec

__all__ = ["Runtime", "WarmupResult", "default_runtime", "reset_default_runtime", "get_kernel", "warmup"]


@dataclass(frozen=True)
class WarmupResult:
    spec: KernelSpec
    key: str
    origin: str  # "memory", "disk" or "compiled"
    seconds: float  # wall time to get it (for "compiled": the compile itself)


class Runtime:
    """Memory cache in front of a disk cache in front of a compiler.

    ``cache_dir``: the disk cache folder (default: ``default_cache_dir()``);
    ``disk=False`` keeps compiled kernels in memory only. ``compiler``: a name
    (``"nvrtc"``/``"nvcc"``) or a Compiler (default: ``HUMMING_COMPILER`` or
    nvrtc). ``roots``: our include roots (default: the NVIDIA backend's).
    """

    def __init__(self, cache_dir: str | os.PathLike | None = None, compiler: str | Compiler | None = None,
                 disk: bool = True, roots: Sequence[str | os.PathLike] | None = None):
        self.compiler = get_compiler(compiler)
        self.disk = DiskCache(cache_dir) if disk else None
        self.roots = tuple(Path(r) for r in roots) if roots is not None else include_roots()
        self._kernels: dict[KernelSpec, Kernel] = {}
        self._locks: dict[KernelSpec, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    # -- the lazy path --------------------------------------------------------
    def kernel(self, spec: KernelSpec) -> Kernel:
        """The kernel for ``spec``, compiling it only if no cache has it."""
        k = self._kernels.get(spec)
        if k is not None:
            return k
        return self._get(spec)

    def describe(self, spec: KernelSpec) -> dict:
        """What a compile of ``spec`` is made of: source, headers, flags, key."""
        source = render(spec)
        headers = header_digests(source, self.roots)
        flags = self.compiler.flags(spec)
        key = cache_key(source, headers, self.compiler.identity, flags, spec.target)
        return {"key": key, "source": source, "headers": headers, "flags": flags,
                "compiler": self.compiler.identity, "target": spec.target}

    def _lock_for(self, spec: KernelSpec) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(spec, threading.Lock())

    def _get(self, spec: KernelSpec) -> Kernel:
        with self._lock_for(spec):
            k = self._kernels.get(spec)
            if k is not None:
                return k
            d = self.describe(spec)
            entry = self.disk.get(spec.family, d["key"]) if self.disk is not None else None
            origin = "disk"
            if entry is None:
                entry = self._compile(spec, d)
                origin = "compiled"
            k = Kernel(spec, entry.key, entry.cubin, entry.meta, origin)
            self._kernels[spec] = k
            return k

    def _compile(self, spec: KernelSpec, d: dict) -> CacheEntry:
        entry = self._finish(spec, d, self.compiler.compile(d["source"], spec, self.roots))
        if isinstance(entry, CompileError):
            raise entry
        return entry

    def _finish(self, spec: KernelSpec, d: dict, out: CompileOutput) -> CacheEntry | CompileError:
        """Store a compiler's output (disk cache), or keep the failed source and
        return the CompileError to raise."""
        if not out.ok:
            kept = self._keep_failed(spec, d, out.log)
            return CompileError(f"{self.compiler.name} could not compile {spec.name} for {spec.target}",
                                out.log, str(kept))
        meta = {"family": spec.family, "spec": spec.name, "target": spec.target, "flags": d["flags"],
                "compiler": d["compiler"], "headers": d["headers"], "source": d["source"],
                "compile_seconds": round(out.seconds, 4), "log": out.log}
        if self.disk is None:
            return CacheEntry(d["key"], out.cubin, meta)
        return self.disk.put(spec.family, d["key"], out.cubin, meta)

    def _keep_failed(self, spec: KernelSpec, d: dict, log: str) -> Path:
        cache = self.disk
        if cache is None:
            import tempfile

            cache = DiskCache(Path(tempfile.gettempdir()) / "humming-failed")
        return cache.save_failed(spec.family, d["key"], d["source"], log)

    # -- ahead of time --------------------------------------------------------
    def warmup(self, specs: Iterable[KernelSpec], max_workers: int | None = None,
               executor: str = "auto") -> list[WarmupResult]:
        """Make every spec ready (memory cache), compiling misses in parallel.

        ``executor``: ``"auto"`` (threads when there is more than one to
        compile), ``"thread"``, ``"process"`` or ``"serial"``. Returns one result per
        distinct spec, in first-seen order. A compile error is raised after the
        other specs finished.
        """
        if executor not in ("auto", "process", "thread", "serial"):
            raise ValueError(f"warmup: executor must be 'auto', 'process', 'thread' or 'serial', "
                             f"found {executor!r}")
        specs = list(dict.fromkeys(specs))
        results: dict[KernelSpec, WarmupResult] = {}
        todo = []
        for spec in specs:
            t0 = time.perf_counter()
            if spec in self._kernels:
                results[spec] = WarmupResult(spec, self._kernels[spec].key, "memory", time.perf_counter() - t0)
                continue
            d = self.describe(spec)
            entry = self.disk.get(spec.family, d["key"]) if self.disk is not None else None
            if entry is not None:
                self._kernels.setdefault(spec, Kernel(spec, entry.key, entry.cubin, entry.meta, "disk"))
                results[spec] = WarmupResult(spec, entry.key, "disk", time.perf_counter() - t0)
            else:
                todo.append((spec, d))
        workers = max(1, min(max_workers or _cpu_count(), len(todo)))
        if executor == "auto":
            executor = "serial" if workers == 1 else "thread"
        roots = [str(r) for r in self.roots]
        if executor == "serial" or not todo:
            outputs = [self.compiler.compile(d["source"], spec, self.roots) for spec, d in todo]
        elif executor == "thread":
            with cf.ThreadPoolExecutor(workers) as pool:
                outputs = list(pool.map(lambda job: self.compiler.compile(job[1]["source"], job[0], self.roots),
                                        todo))
        else:
            outputs = _compile_in_processes(self.compiler.name, [(spec, d["source"]) for spec, d in todo],
                                            roots, workers)
        errors = []
        for (spec, d), out in zip(todo, outputs):
            entry = self._finish(spec, d, out)
            if isinstance(entry, CompileError):
                errors.append(entry)
                continue
            self._kernels.setdefault(spec, Kernel(spec, entry.key, entry.cubin, entry.meta, "compiled"))
            results[spec] = WarmupResult(spec, entry.key, "compiled", out.seconds)
        if errors:
            raise errors[0]
        return [results[s] for s in specs]


def _compile_in_processes(compiler: str, jobs: list, roots: list[str], workers: int) -> list[CompileOutput]:
    """Compile ``jobs`` in ``workers`` subprocesses (``python -m humming.jit.worker``)."""
    chunks = [jobs[i::workers] for i in range(workers)]
    procs = []
    for chunk in chunks:
        p = subprocess.Popen([sys.executable, "-m", "humming.jit.worker"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(p)
        p.stdin.write(pickle.dumps((compiler, chunk, roots)))
        p.stdin.close()
    results: list = [None] * len(jobs)
    for w, p in enumerate(procs):
        out = p.stdout.read()
        err = p.stderr.read().decode(errors="replace")
        if p.wait() != 0:
            raise CompileError(f"a compile worker process failed (exit {p.returncode})", err)
        for j, res in enumerate(pickle.loads(out)):
            results[w + j * workers] = res
    return results


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


_default: Runtime | None = None
_default_lock = threading.Lock()


def default_runtime() -> Runtime:
    """The process-wide runtime (created on first use from the environment)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Runtime()
    return _default


def reset_default_runtime() -> None:
    """Forget the process-wide runtime (e.g. after changing HUMMING_CACHE_DIR)."""
    global _default
    _default = None


def get_kernel(spec: KernelSpec) -> Kernel:
    """``default_runtime().kernel(spec)``."""
    return (_default or default_runtime()).kernel(spec)


def warmup(specs: Iterable[KernelSpec], max_workers: int | None = None) -> list[WarmupResult]:
    """``default_runtime().warmup(specs, max_workers)``."""
    return default_runtime().warmup(specs, max_workers)
