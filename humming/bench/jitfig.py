"""JIT figures: cold compile, disk-cache hit and memory-cache hit of a kernel,
through the same runtime the library uses (``humming.jit.Runtime``)."""
from __future__ import annotations

import statistics
import tempfile
import time

__all__ = ["compile_figures"]


def compile_figures(spec, repeats: int = 3, compiler=None, memory_hits: int = 1000) -> dict:
    """Seconds of a cold compile (a fresh cache folder each time; median of
    ``repeats``), of a disk-cache hit (a new runtime over a warm folder), and
    microseconds of a memory-cache hit (the same runtime again)."""
    from ..jit import Runtime

    cold, disk = [], []
    runtime = None
    for _ in range(max(1, repeats)):
        with tempfile.TemporaryDirectory(prefix="humming-bench-jit-") as folder:
            t0 = time.perf_counter()
            Runtime(cache_dir=folder, compiler=compiler).kernel(spec)
            cold.append(time.perf_counter() - t0)
            runtime = Runtime(cache_dir=folder, compiler=compiler)
            t0 = time.perf_counter()
            kernel = runtime.kernel(spec)
            disk.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for _ in range(memory_hits):
                runtime.kernel(spec)
            memory_us = (time.perf_counter() - t0) / memory_hits * 1e6
    return {"what": f"compile {spec.name}", "compiler": runtime.compiler.name, "cold_s": statistics.median(cold),
            "disk_hit_s": statistics.median(disk), "memory_hit_us": memory_us, "cubin_bytes": len(kernel.cubin)}
