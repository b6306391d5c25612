"""Which launches go programmatically (Launcher._shape's last field) on this GPU, per weight format, layer
and M: the tile, the grid, the CTAs one SM holds at once (the driver's count) and whether the launch is
crowded (Launcher.crowded). Compiles each tile; launches nothing.

    python3 scripts/gpu_pdl_probe.py [--m 1,5,8,16,64] [--json OUT]
"""
import argparse
import json

import torch

from humming import reference as R
from humming.ops.gemm import prepare_weight
from humming.scheme import WeightScheme
from humming_nvidia.mma_sync_launch import _resident_clusters

SHAPES = [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192)]
FORMATS = {"int4": ("int4", "group", 128), "int3": ("int3", "group", 128), "int2": ("int2", "group", 128),
           "int8": ("int8", "channel", None), "e4m3": ("e4m3", "channel", None)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", default="1,2,4,5,8,16,33,64,128,256")
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--shapes", default=None, help="N x K list (default: the issue's five)")
    ap.add_argument("--json")
    a = ap.parse_args()
    ms = [int(v) for v in a.m.split(",")]
    rows = []
    for f in a.formats.split(","):
        fmt, kind, g = FORMATS[f]
        ws = WeightScheme(fmt, kind, g) if g else WeightScheme(fmt, kind, scale_fmt="fp32")
        for n, k in ([tuple(map(int, v.split("x"))) for v in a.shapes.split(",")] if a.shapes else SHAPES):
            qw = R.quantize(torch.randn(n, k, device="cuda") * 0.02, ws)
            w = prepare_weight(qw, device="cuda")
            L = w.launcher
            for m in ms:
                lp, grid, smem, kps, _, _, _, cz, pdl_ok = L._shape(m)
                tile = L.tile_for(m)
                ctas = grid[0] * grid[1] * grid[2]
                res = L.stream_k_ctas(tile, lp)
                crowded = bool(tile.wgmma) and L.crowded(tile, lp, ctas)
                pdl = L.pdl and (id(lp) in L._pdl_plans) and pdl_ok
                # (clusters of c CTAs the driver holds at once, c = 2..8: where fewer than the tiles, a split launch
                # sums through the workspace)
                clus = [_resident_clusters(lp, smem, c) for c in range(2, 9)] if tile.wgmma else []
                rows.append(dict(fmt=f, n=n, k=k, m=m, wgmma=bool(tile.wgmma), stream=int(tile.stream), bn=tile.bn,
                                 bm=tile.bm, threads=tile.threads, grid=list(grid), ctas=ctas, resident=res,
                                 crowded=crowded, pdl=bool(pdl), smem=smem, cluster=cz, clusters_2_8=clus))
                print(f"{f:5s} {n:6d}x{k:<6d} M={m:<4d} {'wg' if tile.wgmma else 'st' + str(tile.stream)} "
                      f"bm={tile.bm:<3d} bn={tile.bn:<4d} grid={grid} resident/SM={res} crowded={crowded} "
                      f"pdl={bool(pdl)} cluster={cz} clusters(2..8)={clus}", flush=True)
            del w
            torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
