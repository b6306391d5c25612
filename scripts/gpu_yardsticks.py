"""Which read kernel is the issue's "stream time"? Times read-only kernels over the issue-6 byte counts two ways.

The issue-6 targets are ratios to "the stream time (a plain read-only kernel streaming the same bytes; on this H200
it reads 34.6 MB in about 11.8 us, 69 % of the floor, and 121 MB in 35.3 us, 80 %)", figures from
../shared/reference/h200-figures.md ("Streaming read of the same bytes": 4.38 / 10.64 / 11.79 / 35.3 us for the
int4 g128 layers of 4096x4096 / 14336x4096 / 8192x8192 / 28672x8192, 20.95 us for 67.1 MB). The bench's stream
ceiling is the fastest of its tuned variants (UNROLL loads in flight per thread). This script times, per byte count:

* the stream-read kernel at UNROLL 1 (one 16-byte load per thread per step of a grid-wide loop: the plain form)
  and at the bench's tuned variants;
* torch's own reduction over the buffer (``sum`` of it as int32 words);

each two ways: the bench's method (``timing.time_calls``: graphs of >= 5 calls over copies of > 3 x L2, the median
of three repeats) and the reference's (a graph of R calls, R x bytes >= 192 MB, 2 <= R <= 24, timed by
``triton.testing.do_bench(warmup=5, rep=40, return_mode="median")`` / R).

With ``--gemm``, times the planner's GEMM (int4 g128 by default; ``--gemm-weights``) and cuBLAS fp16 on the issue-6
layers at M = 1, 16, 64 (``--gemm-shapes``, ``--gemm-m``) the same two ways, so each ratio to the stream can be taken
within one method.

    python scripts/gpu_yardsticks.py --out yard.json [--gemm]
"""
from __future__ import annotations

import argparse
import json

import torch

from humming.bench.stream import StreamReader
from humming.bench.timing import CudaGraphTimer, copies_for, time_calls

# (label, bytes): the int4 g128 layers of the reference table, its fp8 8192x8192 row, and the other widths the
# issue names at 8192x8192 (int3 g128, int2 g128: codes plus fp16 group scales)
SIZES = [("int4g128 4096x4096", 4096 * 4096 // 2 + 4096 * 32 * 2),
         ("int4g128 14336x4096", 14336 * 4096 // 2 + 14336 * 32 * 2),
         ("int4g128 8192x8192", 8192 * 8192 // 2 + 8192 * 64 * 2),
         ("int4g128 28672x8192", 28672 * 8192 // 2 + 28672 * 64 * 2),
         ("fp8 8192x8192", 8192 * 8192),
         ("int3g128 8192x8192", 8192 * 8192 * 3 // 8 + 8192 * 64 * 2),
         ("int2g128 8192x8192", 8192 * 8192 // 4 + 8192 * 64 * 2)]
REFERENCE_US = {"int4g128 4096x4096": 4.38, "int4g128 14336x4096": 10.64, "int4g128 8192x8192": 11.79,
                "int4g128 28672x8192": 35.3, "fp8 8192x8192": 20.95}
VARIANTS = [("plain (unroll 1, 256 thr)", 1, 256), ("unroll 1, 512 thr", 1, 512),
            ("tuned (unroll 4, 512 thr)", 4, 512), ("tuned (unroll 8, 256 thr)", 8, 256)]


def reference_copies(nbytes):
    """The reference's R: R x bytes >= 192 MB, 2 <= R <= 24."""
    return max(2, min(24, -(-(192 << 20) // nbytes)))


def do_bench_graph(calls, nbytes, dev):
    """The reference's method: one graph of R calls, triton's do_bench median / R."""
    import triton

    r = reference_copies(nbytes)
    fns = [calls[i % len(calls)] for i in range(r)]
    s = torch.cuda.Stream(dev)
    with torch.cuda.stream(s):
        for f in fns:
            f()
    torch.cuda.synchronize(dev)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for f in fns:
            f()
    return triton.testing.do_bench(g.replay, warmup=5, rep=40, return_mode="median") * 1e3 / r


def torch_sum_calls(nbytes, copies, dev, keep):
    bufs = [torch.empty(-(-nbytes // 4), dtype=torch.int32, device=dev) for _ in range(copies)]
    keep.extend(bufs)
    return [(lambda b=b: torch.sum(b, dtype=torch.int64)) for b in bufs]


def gemm_rows(dev, timer, rounds, weights, shapes, ms, cublas=True):
    """The planner's GEMM of each weight (FMT:GROUP, 0 per channel) and cuBLAS fp16 at each M, by both methods,
    R weight copies as the reference takes them (R x bytes >= 192 MB)."""
    from humming.bench.methods import CublasMethod, HummingMethod, WorkloadData
    from humming.bench.workloads import Workload
    from humming.scheme import WeightScheme

    rows = []
    for rnd in range(rounds):
        for (n, k), w in [(shape, w) for w in weights for shape in shapes]:
            fmt, group = w.split(":")
            scheme = WeightScheme(fmt, "group", int(group)) if int(group) else WeightScheme(fmt, "channel")
            wl = Workload(f"{n}x{k}", "custom", n, k, scheme)
            data = WorkloadData(wl, dev)
            methods = [HummingMethod()] + ([CublasMethod("fp16")] if cublas and w == weights[0] else [])
            for method in methods:
                copies = reference_copies(method.copy_bytes(data))
                prepared = method.prepare(data, copies)
                for m in ms:
                    calls = prepared.instance(m).calls
                    ours = time_calls(calls, timer, repeats=3).median_us
                    ref = do_bench_graph(calls, method.copy_bytes(data), dev)
                    rows.append(dict(round=rnd, size=wl.name, weight=w, method=method.name, m=m, bench_us=ours,
                                     do_bench_us=ref))
                    print(f"{rnd} {wl.name:12s} {w:9s} {method.name:12s} M={m:4d}  bench {ours:7.2f} us  do_bench "
                          f"{ref:7.2f} us", flush=True)
                prepared.close()
                del prepared
                timer.release()
                torch.cuda.empty_cache()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--gemm", action="store_true", help="also GEMM rows (humming, and cuBLAS for the first weight)")
    ap.add_argument("--gemm-weights", default="int4:128", help="FMT:GROUP,... (GROUP 0: per channel)")
    ap.add_argument("--gemm-shapes", default="4096x4096,14336x4096,4096x14336,8192x8192,28672x8192")
    ap.add_argument("--gemm-m", default="1,16,64")
    ap.add_argument("--no-stream", action="store_true", help="without the read kernels' rows")
    args = ap.parse_args()
    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    timer = CudaGraphTimer(dev)
    readers = {label: StreamReader(dev, u, t) for label, u, t in VARIANTS}
    rows = []
    for rnd in range(0 if args.no_stream else args.rounds):
        for label, nbytes in SIZES:
            copies = max(copies_for(nbytes, l2), reference_copies(nbytes))
            for vname in list(readers) + ["torch.sum (int32 words)"]:
                keep = []
                if vname in readers:
                    calls = readers[vname].calls(nbytes, copies)
                else:
                    calls = torch_sum_calls(nbytes, copies, dev, keep)
                ours = time_calls(calls, timer, repeats=3).median_us
                ref = do_bench_graph(calls, nbytes, dev)
                if vname in readers:
                    readers[vname].release()
                del keep
                floor = nbytes / 4.27e6
                rows.append(dict(round=rnd, size=label, bytes=nbytes, variant=vname, bench_us=ours, do_bench_us=ref,
                                 floor_us=floor, reference_us=REFERENCE_US.get(label)))
                print(f"{rnd} {label:22s} {nbytes / 1e6:7.1f} MB  {vname:28s} bench {ours:7.2f} us  do_bench "
                      f"{ref:7.2f} us  ({floor / ref:4.0%} of floor)  reference {REFERENCE_US.get(label, '-')}",
                      flush=True)
    if args.gemm:
        shapes = [tuple(map(int, s.split("x"))) for s in args.gemm_shapes.split(",")]
        rows += gemm_rows(dev, timer, args.rounds, args.gemm_weights.split(","), shapes,
                          [int(m) for m in args.gemm_m.split(",")])
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
