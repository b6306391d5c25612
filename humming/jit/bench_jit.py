"""How fast is the JIT? Cold compile, disk hit, memory hit, and the launch path.

    python -m humming.jit.bench_jit                     # act_quant e4m3 for sm_90a, NVRTC
    python -m humming.jit.bench_jit --compiler nvcc --target sm_80 --repeats 3
    python -m humming.jit.bench_jit --gemm              # the M=1 int4 g128 GEMM kernel

* cold: a fresh cache folder and a fresh Runtime each time (the compiler itself
  is loaded once per process; ``first_s`` is the very first compile);
* disk hit: a fresh Runtime on a folder that holds the entry (render, hash the
  headers, read and verify the entry);
* memory hit: ``Runtime.kernel(spec)`` again;
* launch path: the Python side of ``LaunchPlan.launch`` -- writing the changed
  fields of the parameter struct and everything up to the driver call, with the
  driver calls replaced by no-ops (so it runs without a GPU).
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
import timeit

from . import driver as _drv
from .runtime import Runtime
from .spec import KernelSpec

__all__ = ["bench_compile", "bench_warmup", "bench_launch_path", "main"]


def bench_compile(spec: KernelSpec, repeats: int = 5, compiler: str | None = None) -> dict:
    """Median cold-compile, disk-hit and memory-hit times for ``spec``."""
    cold = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="humming-bench-") as d:
            rt = Runtime(cache_dir=d, compiler=compiler)
            t0 = time.perf_counter()
            rt.kernel(spec)
            cold.append(time.perf_counter() - t0)
    with tempfile.TemporaryDirectory(prefix="humming-bench-") as d:
        Runtime(cache_dir=d, compiler=compiler).kernel(spec)
        disk = []
        for _ in range(max(repeats, 20)):
            rt = Runtime(cache_dir=d, compiler=compiler)
            t0 = time.perf_counter()
            k = rt.kernel(spec)
            disk.append(time.perf_counter() - t0)
            assert k.origin == "disk"
        n = 20000
        memory = timeit.timeit(lambda: rt.kernel(spec), number=n) / n
    return {"spec": spec.name, "compiler": rt.compiler.identity, "cubin_bytes": len(k.cubin),
            "first_s": cold[0], "cold_s": statistics.median(cold), "disk_ms": statistics.median(disk) * 1e3,
            "memory_us": memory * 1e6}


def _cpu_seconds() -> float:
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def bench_warmup(specs, max_workers: int = 2, compiler: str | None = None,
                 executors=("serial", "thread", "process")) -> dict:
    """Wall seconds and CPU use (cpu seconds / wall seconds; 2.0 = two busy cores)
    of a cold ``warmup(specs)`` with each executor."""
    out = {}
    for ex in executors:
        with tempfile.TemporaryDirectory(prefix="humming-bench-") as d:
            rt = Runtime(cache_dir=d, compiler=compiler)
            c0, t0 = _cpu_seconds(), time.perf_counter()
            rt.warmup(specs, max_workers=max_workers, executor=ex)
            wall = time.perf_counter() - t0
            out[ex] = {"wall_s": wall, "cpu_per_wall": (_cpu_seconds() - c0) / wall}
    return out


class _NullDriver:
    """Stands in for cuda.bindings.driver: every launch succeeds and does nothing."""

    @staticmethod
    def cuLaunchKernel(*args):
        return (0,)


@contextlib.contextmanager
def _no_driver():
    names = ("_driver", "_SUCCESS", "current_context", "raw_stream", "current_device_index", "launch_raw")
    saved = {name: getattr(_drv, name) for name in names}
    _drv._driver, _drv._SUCCESS = _NullDriver(), 0
    _drv.current_context = lambda: 1
    _drv.raw_stream = lambda: 0
    _drv.current_device_index = lambda: 0
    _drv.launch_raw = lambda *args: 0  # cuLaunchKernel succeeded
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(_drv, name, value)


def bench_launch_path(kernel, params, fields: dict, grid_x: int = 1, number: int = 100000) -> dict:
    """Microseconds per call of: write ``fields`` into ``params`` + ``plan.launch``
    (driver calls stubbed out), and of the launch alone."""
    plan = kernel.plan(params)
    items = tuple(fields.items())

    def call():
        for name, value in items:
            setattr(params, name, value)
        plan.launch(grid_x)

    with _no_driver():
        kernel._functions.setdefault(1, 1)  # a CUfunction handle for context 1
        try:
            call()
            full = timeit.timeit(call, number=number) / number
            bare = timeit.timeit(lambda: plan.launch(grid_x), number=number) / number
        finally:
            kernel._functions.pop(1, None)
    return {"write_and_launch_us": full * 1e6, "launch_only_us": bare * 1e6, "fields": len(items)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--fmt", default="e4m3")
    ap.add_argument("--mode", default="dynamic_token")
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--compiler", default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--gemm", action="store_true",
                    help="time the decode (M=1) mma_sync GEMM kernel of an int4 g128 layer instead")
    ap.add_argument("--warmup", type=int, default=0, metavar="N",
                    help="also time a cold warm-up of N kernels (serial, threads, processes)")
    args = ap.parse_args(argv)

    import torch

    from ..ops.act_quant import ActQuantParams, act_quant_spec

    spec = act_quant_spec(args.fmt, args.mode, torch.float16, args.k, args.target,
                          group_size=128 if args.mode == "dynamic_group" else None)
    if args.gemm:
        import humming
        from humming.scheme import LayerSpec, WeightScheme

        plan = humming.plan(LayerSpec(args.k, args.k, WeightScheme("int4", "group", 128)), args.target.rstrip("a"))
        spec = plan.kernel(1)
    r = bench_compile(spec, args.repeats, args.compiler)
    print(f"{r['spec']}\n  compiler   {r['compiler']}\n  cubin      {r['cubin_bytes']} bytes")
    print(f"  first compile in process  {r['first_s'] * 1e3:8.1f} ms")
    print(f"  cold compile (median {args.repeats})  {r['cold_s'] * 1e3:8.1f} ms")
    print(f"  disk cache hit            {r['disk_ms']:8.3f} ms")
    print(f"  memory cache hit          {r['memory_us']:8.3f} us")
    with tempfile.TemporaryDirectory(prefix="humming-bench-") as d:
        kernel = Runtime(cache_dir=d, compiler=args.compiler).kernel(spec)
        if args.gemm:
            from humming_nvidia.gemm_mma_sync import GemmParams

            params, fields = GemmParams(), {"x": 1 << 32, "y": 2 << 32, "M": 1, "lda": args.k, "ldy": args.k}
        else:
            params = ActQuantParams()
            fields = {"x": 1 << 32, "q": 2 << 32, "scales": 3 << 32, "m": 1, "k": args.k}
        lr = bench_launch_path(kernel, params, fields)
    print(f"  launch path, Python side: {lr['write_and_launch_us']:.2f} us with {lr['fields']} field writes, "
          f"{lr['launch_only_us']:.2f} us launch alone (driver calls excluded)")
    if args.warmup:
        specs = [act_quant_spec(args.fmt, args.mode, torch.float16, args.k, args.target, soft_cvt=bool(i % 2),
                                group_size=128 if args.mode == "dynamic_group" else None) for i in range(2)]
        specs += [act_quant_spec(f, m, dt, k, args.target, group_size=g)
                  for f in ("int8", "e5m2", "int4", "e2m1") for m, g in (("dynamic_token", None), ("dynamic_group", 64))
                  for dt in (torch.float16, torch.bfloat16) for k in (512, 4096)]
        specs = specs[:args.warmup]
        for ex, r in bench_warmup(specs, compiler=args.compiler).items():
            print(f"  warm-up of {len(specs)} kernels, {ex:7s}  {r['wall_s']:6.2f} s wall, "
                  f"{r['cpu_per_wall']:.2f} CPUs busy")


if __name__ == "__main__":
    main()
