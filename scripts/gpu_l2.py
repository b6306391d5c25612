"""Read bandwidth of the H200's L2 and of its memory, with the benchmark's stream-read kernel.

A buffer small enough to stay in L2 (read again and again in one CUDA graph) against buffers
rotated through more than L2 holds: how many bytes per second the SMs can pull from L2, the
limit of a tile whose activations are re-read by every CTA along N.

    python scripts/gpu_l2.py [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import math

import torch

from humming.bench.stream import StreamReader
from humming.bench.timing import CudaGraphTimer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    timer, rows = CudaGraphTimer(dev), []
    for unroll, threads in ((4, 512), (8, 256)):
        reader = StreamReader(dev, unroll, threads)
        for mb in (4, 8, 16, 24, 34.6, 121):
            nbytes = int(mb * 2 ** 20)
            copies = 1 if nbytes * 2 < l2 else max(2, math.ceil(3 * l2 / nbytes))
            calls = reader.calls(nbytes, copies) * (16 if copies == 1 else 1)
            replay = timer.build(calls)
            replay()
            torch.cuda.synchronize()
            iters = 20
            best = min(timer.time(replay, iters) for _ in range(5)) / iters / len(calls)
            rows.append({"unroll": unroll, "threads": threads, "mb": mb, "resident": copies == 1,
                         "us": best * 1e6, "tb_s": nbytes / best / 1e12})
            print(f"UNROLL={unroll} THREADS={threads} {mb:6.1f} MB {'L2' if copies == 1 else 'HBM'}: "
                  f"{best * 1e6:7.2f} us  {nbytes / best / 1e12:5.2f} TB/s", flush=True)
            timer.release()
            reader.release()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
