"""Which split-K launches of the planner run their K slices as one cluster: per shape and M, the
tile, the split, the clusters the launch needs and how many the driver says the GPU holds at once
(cuOccupancyMaxActiveClusters), and the cluster size the launcher took (1: the workspace).

    python scripts/gpu_clusters.py --shapes 8192x8192,28672x8192 --m 1,16,64
"""
from __future__ import annotations

import argparse

import torch

import humming.ops as ops
from humming import reference as R
from humming.jit import driver as drv
from humming.scheme import LayerSpec, WeightScheme


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4096x4096,14336x4096,4096x14336,8192x8192,28672x8192")
    ap.add_argument("--m", default="1,4,16,33,64")
    ap.add_argument("--weight", default="int4")
    ap.add_argument("--group", type=int, default=128)
    args = ap.parse_args()
    dev = torch.device("cuda")
    scheme = (WeightScheme(args.weight, "channel", scale_fmt="fp32") if args.group == 0 else
              WeightScheme(args.weight, "group", args.group))
    for shape in args.shapes.split(","):
        n, k = map(int, shape.split("x"))
        qw = R.quantize(torch.randn(n, k, device=dev) * 0.02, scheme)
        pw = ops.prepare_weight(qw, layer=LayerSpec(n=n, k=k, weight=scheme), device=dev)
        L = pw.launcher
        for m in map(int, args.m.split(",")):
            lp, grid, smem, *_, cz, _ = L._shape(m)
            split = grid[2]
            fits = [drv.max_active_clusters(lp.kernel.function(), lp.block, smem, c) for c in (2, 3, 4, 8)]
            print(f"{shape:>11} M={m:<3} {L.tile_for(m)} grid {grid} smem {smem}: clusters needed "
                  f"{grid[0] * grid[1]}, resident at once for 2/3/4/8 slices {fits}, launched with {cz}", flush=True)


if __name__ == "__main__":
    main()
