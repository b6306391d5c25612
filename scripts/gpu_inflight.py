"""Read bandwidth against bytes in flight per SM (Little's law on this GPU): the
stream-read kernel over a layer's worth of bytes (cold, rotated copies, graph
replay) with 256-thread CTAs, 1-8 per SM, and 1-8 16-byte loads in flight per
thread. Tells how many bytes a decode kernel must keep in flight per SM to
read at a given fraction of the stream time.

    python scripts/gpu_inflight.py [--mb 34.6] [--runs] [--json out.json]

(--runs: the same bytes read as per-warp sequential runs, the decode kernels' pattern, against
the grid-wide stride: whether scattered streams cost DRAM bandwidth.)
"""
from __future__ import annotations

import argparse
import json
import math
import statistics

import torch

from humming.bench.stream import StreamReader
from humming.bench.timing import CudaGraphTimer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=34.6, help="bytes per read, MB (8192x8192 int4 g128: 34.6)")
    ap.add_argument("--runs", action="store_true",
                    help="also per-warp runs of 512-byte blocks (the decode kernels' access pattern) against "
                         "the grid-wide stride, at the decode kernels' 16 warps per SM")
    ap.add_argument("--json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    sm = props.multi_processor_count
    nbytes = int(args.mb * 1e6)
    copies = max(2, math.ceil(3 * props.L2_cache_size / nbytes))
    timer = CudaGraphTimer(dev)
    rows = []

    def time_us(unroll, per_sm, run=0):
        """Median time of one read of `nbytes` (us): 256-thread CTAs, `per_sm` of them per SM."""
        rd = StreamReader(dev, unroll=unroll, threads=256, run=run)
        rd.blocks = sm * per_sm
        replay = timer.build(rd.calls(nbytes, copies))
        replay()
        torch.cuda.synchronize()
        one = timer.time(replay, 1)
        iters = max(3, math.ceil(4e-3 / max(one, 1e-6)))
        us = statistics.median(timer.time(replay, iters) / iters / copies * 1e6 for _ in range(5))
        timer.release()
        rd.release()
        return us

    print(f"{props.name}: {args.mb} MB per read, {copies} copies, 256 threads per CTA")
    print(f"{'CTAs/SM':>8} {'unroll':>6} {'KB/SM in flight':>16} {'us':>8} {'TB/s':>6}")
    for unroll in (1, 2, 4, 8):
        for per_sm in (1, 2, 4, 8):
            us = time_us(unroll, per_sm)
            kb = per_sm * 256 * unroll * 16 / 1024
            rows.append({"ctas_per_sm": per_sm, "unroll": unroll, "kb_in_flight_per_sm": kb, "us": us,
                         "tb_s": nbytes / us / 1e6})
            print(f"{per_sm:>8} {unroll:>6} {kb:>16.0f} {us:>8.2f} {nbytes / us / 1e6:>6.2f}", flush=True)
    if args.runs:
        # 4 blocks in flight per warp (all issued before their first use: checked by
        # tests/test_bench_stream.py; with more, ptxas interleaves loads and uses), 16-64 warps
        # per SM, runs of 4-128 blocks (DECODE_INT4_LONG_K on 8192x8192: 32 blocks per warp),
        # and the grid-wide stride with the same loads in flight
        print(f"{'run blocks':>10} {'warps/SM':>8} {'KB/SM':>6} {'us':>8} {'TB/s':>6}")
        for per_sm in (2, 4, 8):
            for run in (0, 4, 32, 128):
                us = time_us(4, per_sm, run)
                kb = per_sm * 256 * 4 * 16 / 1024
                rows.append({"run_blocks": run, "warps_per_sm": per_sm * 8, "kb_in_flight_per_sm": kb, "us": us,
                             "tb_s": nbytes / us / 1e6})
                print(f"{run or 'stride':>10} {per_sm * 8:>8} {kb:>6.0f} {us:>8.2f} {nbytes / us / 1e6:>6.2f}",
                      flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props.name, "mb": args.mb, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
