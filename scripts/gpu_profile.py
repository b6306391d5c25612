"""One mma_sync GEMM launch per M, for a profiler (ncu --kernel-name humming_entry).
SHAPE=NxK picks the layer, WEIGHT=FMT:GROUP its weights (int4:128), TILE="Tile(...)" one tile for every M (default: the planner's
tuning for this GPU, as humming.ops.gemm launches it).

    ncu --clock-control none --kernel-name humming_entry --section SpeedOfLight \\
        --section WarpStateStats --section SchedulerStats python3 scripts/gpu_profile.py 1 16
"""
import sys

import torch

from humming import reference as R
from humming.scheme import WeightScheme
from humming_nvidia import gemm_mma_sync as G


def main():
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    target = f"sm_{props.major}{props.minor}" + ("a" if props.major >= 9 else "")
    import os

    n, k = (int(v) for v in os.environ.get("SHAPE", "8192x8192").split("x"))
    w, g = os.environ.get("WEIGHT", "int4:128").split(":")  # WEIGHT=FMT:GROUP (0: per channel)
    sch = WeightScheme(w, "group", int(g)) if int(g) else WeightScheme(w, "channel", scale_fmt="fp32")
    rec = G.recipe_for(sch, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target=target)
    qw = R.quantize(torch.randn(n, k, device=dev) * 0.02, sch)
    pw = G.pack_weight(qw, rec, dev)
    tile = os.environ.get("TILE")  # e.g. "Tile(8, 16, 512, 1, 1, 8, 8, stream=3, occupancy=4)": every M
    if tile:
        t = G.fit_tile(eval(tile, {"Tile": G.Tile}), rec, props.shared_memory_per_block_optin, pw.kp)
        L = G.Launcher(pw, [(1, None, t)], props.multi_processor_count,
                       smem_per_sm=props.shared_memory_per_multiprocessor)
    else:  # the planner's tuning for this GPU
        from humming.ops import prepare_weight, gemm

        prepared = prepare_weight(qw)
        L = lambda x, y: gemm(x, prepared, out=y)  # noqa: E731
    flush = torch.empty(64 << 20, device=dev, dtype=torch.float32)  # 256 MB: the weights leave L2 first
    for m in map(int, sys.argv[1:] or ["1"]):
        x = torch.randn(m, k, device=dev, dtype=torch.float16)
        y = torch.empty(m, n, device=dev, dtype=torch.float16)
        flush.zero_()
        L(x, y)
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
