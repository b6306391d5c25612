"""Which step of the bench moves a kernel's time (twenty-third session: 28672x8192 int4 g128 at M=1 read 35.4 us
through `humming bench` and 33.4 us timed the same way by scripts/gpu_placement.py in a fresh process).

Runs humming.bench.runner.run_bench on one layer, humming alone, in one process: without the device ceilings,
with them (copy bandwidth, bf16 / fp8 matmul rates and stream times measured first, as `humming bench` does),
and without them again.

    python scripts/gpu_benchdiff.py --shape 28672x8192 --m 1
"""
from __future__ import annotations

import argparse

import torch

from humming.bench.ceilings import DeviceCeilings
from humming.bench.cli import add_arguments, build_workloads, select_methods
from humming.bench.runner import BenchOptions, run_bench
from humming.bench.timing import CudaGraphTimer


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="28672x8192")
    ap.add_argument("--m", default="1")
    a = ap.parse_args()
    args = add_arguments(argparse.ArgumentParser()).parse_args(
        ["--shapes", a.shape, "--m", a.m, "--weight", "int4", "--group-size", "128"])
    workloads = build_workloads(args)
    methods = select_methods("humming")
    device = torch.device("cuda", torch.cuda.current_device())
    timer = CudaGraphTimer(device)
    options = BenchOptions(ms=tuple(int(v) for v in a.m.split(",")), repeats=5, seed=0)
    for tag, ceil in (("no ceilings", False), ("ceilings first", True), ("no ceilings, again", False),
                      ("ceilings first, again", True)):
        rep = run_bench(workloads, methods, options, device=device, timer=timer,
                        ceilings=DeviceCeilings(device, timer, 5) if ceil else None)
        rows = [r for r in rep["results"] if r["method"] == "humming"]
        print(f"{tag:<24} " + "  ".join(f"M={r['m']} {r['median_us']:.2f} us ({', '.join(f'{s:.2f}' for s in r['samples_us'])})"
                                         for r in rows), flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
