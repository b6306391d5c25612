"""Eager host overhead of one ``humming.ops.gemm`` call at M=1, and where it goes.

    python3 scripts/gpu_host.py [--shape 4096x4096] [--json out.json]

The headline figure is the issue-5 measure: 1000 back-to-back eager calls while a
long sleep kernel keeps the GPU busy (so the loop's wall time is host work only),
per call. The same loop with the GPU free, minus the kernel's GPU time from
graph replays, is printed next to it. Then the parts of the path, each timed the
same way, and the cuLaunchKernel entry in use (native, ctypes).
"""
from __future__ import annotations

import argparse
import json

import torch

from humming import reference as R
from humming.bench.timing import CudaGraphTimer, host_overhead_us
from humming.jit import driver as _drv
from humming.ops import gemm, prepare_weight
from humming.scheme import WeightScheme


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="4096x4096")
    ap.add_argument("--m", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    n, k = (int(v) for v in args.shape.split("x"))
    dev = torch.device("cuda")
    qw = R.quantize(torch.randn(n, k, device=dev) * 0.02, WeightScheme("int4", "group", 128))
    pw = prepare_weight(qw)
    x = torch.randn(args.m, k, device=dev, dtype=torch.float16)
    y = torch.empty(args.m, n, device=dev, dtype=torch.float16)
    sync = torch.cuda.synchronize
    hold = lambda: torch.cuda._sleep(200_000_000)  # noqa: E731

    def host(fn, n_calls=1000):
        return min(host_overhead_us(fn, n=n_calls, hold=hold, sync=sync) for _ in range(3))

    ref = R.gemm(x.float(), qw)
    out = gemm(x, pw)
    sync()
    err = float((out.float() - ref).abs().max() / ref.abs().max())
    headline = host(lambda: gemm(x, pw))
    timer = CudaGraphTimer(dev)
    replay = timer.build([lambda: gemm(x, pw)])
    replay()
    sync()
    gpu_us = timer.time(replay, 200) / 200 * 1e6
    timer.release()
    # back to back with the GPU free: wall minus GPU time
    import time

    gemm(x, pw)
    sync()
    t0 = time.perf_counter()
    for _ in range(1000):
        gemm(x, pw)
    sync()
    wall_us = (time.perf_counter() - t0) / 1000 * 1e6

    L = pw.launcher
    lp = L._plans[L.tile_for(args.m)]
    shape = L._by_m[args.m]
    fn, b, grid, smem = lp._fn, lp.block, shape[1], shape[2]
    st = _drv.raw_stream()
    import ctypes

    lib = ctypes.CDLL("libcuda.so.1")
    cf = lib.cuLaunchKernel
    cf.restype = ctypes.c_int
    u = ctypes.c_uint
    cf.argtypes = [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    L.run(x, x.data_ptr(), y, args.m, k)  # leaves the parameter struct ready for the raw launches
    parts = {
        "gemm(x, w)": lambda: gemm(x, pw),
        "gemm(x, w, out=y)": lambda: gemm(x, pw, out=y),
        "launcher.run (y given)": lambda: L.run(x, x.data_ptr(), y, args.m, k),
        "launcher(x, y)": lambda: L(x, y),
        f"launch_any ({_drv.launch_path})": lambda: _drv.launch_any(fn, *grid, *b, smem, st, lp._args_ptr, False,
                                                                     shape[7]),  # (shape[7]: the cluster size)
        "cuLaunchKernel via ctypes": lambda: cf(fn, *grid, *b, smem, st or None, lp._args_ptr, None),
        "torch.empty(1, N)": lambda: torch.empty((args.m, n), dtype=torch.float16, device=dev),
        "raw_stream()": _drv.raw_stream,
        "current_device_index()": _drv.current_device_index,
        "torch.compiler.is_compiling()": torch.compiler.is_compiling,
        "y.zero_() (a torch launch)": lambda: y.zero_(),
    }
    res = {name: host(fn) for name, fn in parts.items()}
    print(f"device {torch.cuda.get_device_name()}  shape {n}x{k}  M={args.m}  err {err:.1e}  "
          f"launch entry {_drv.launch_path}")
    print(f"eager host overhead per gemm call: {headline:.2f} us  (GPU time per call {gpu_us:.2f} us; "
          f"1000 back-to-back calls, GPU free: {wall_us:.2f} us per call, minus GPU time {wall_us - gpu_us:.2f})")
    for name, v in res.items():
        print(f"   {name:34s} {v:6.2f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"host_us": headline, "gpu_us": gpu_us, "wall_us": wall_us, "parts": res,
                       "launch_path": _drv.launch_path, "err": err, "device": torch.cuda.get_device_name()}, f,
                      indent=1)


if __name__ == "__main__":
    main()
