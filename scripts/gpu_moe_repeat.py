"""Whether an MoE call repeats bit for bit on the GPU, routed directly and by the routing kernel: the call run
REPS times each way on the same inputs, the largest difference within each way and between them, per layer and
input ([M, K] and [M, topk, K] rows; a bias per expert; experts held elsewhere and an id past E, unchecked), and
where the two ways differ: the pair, its expert, the column, both values.

    python3 scripts/gpu_moe_repeat.py [--reps 5] [--m 1,4]
"""
from __future__ import annotations

import argparse

import torch

import humming
from humming import reference as R
from humming.ops import moe as MOE
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme

CASES = [(WeightScheme("uint4", "group", 64, zero_point="int"), "bf16"), (WeightScheme("int4", "group", 128), "fp16"),
         (WeightScheme("uint4", "group", 64, zero_point="int"), "fp16"), (WeightScheme("int4", "group", 128), "bf16")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--m", default="1,4")
    a = ap.parse_args()
    dev = torch.device("cuda")
    e, topk, n, k = 128, 8, 264, 1024
    d = lambda u, v: float((u - v).abs().max())
    MOE.DIRECT_TOKENS = 2  # (direct calls on the routed calls' tile, as the test compares them)
    for scheme, act in CASES:
        gen = torch.Generator().manual_seed(12)
        qw = R.QuantizedWeight.stack([R.quantize(torch.randn(n, k, generator=gen) * 0.05, scheme)
                                      for _ in range(e)])
        qw.bias = torch.randn(e, n, generator=gen) * 0.1
        qw = qw.to(dev)
        pw = humming.prepare_weight(qw, layer=LayerSpec(n, k, scheme, ActivationScheme(act), num_experts=e,
                                                        out_dtype=act, bias=True), device=dev)
        dt = torch.bfloat16 if act == "bf16" else torch.float16
        for m in map(int, a.m.split(",")):
            ids = torch.stack([torch.randperm(e, generator=gen)[:topk] for _ in range(m)])
            ids[torch.rand(m, topk, generator=gen) < 0.2] = -1
            ids[-1, 0] = e + 7
            ids = ids.to(dev, torch.int32)
            tile = pw.plan.tuning_for(MOE.tokens_per_expert(m, topk, e)).config
            print(f"{scheme.describe()} {act} M={m} tile {tile}")
            for x in (torch.randn(m, k, generator=gen).to(dev, dt), torch.randn(m, topk, k, generator=gen).to(dev, dt)):
                outs = {}
                for direct in (True, False):
                    MOE.DIRECT_ROUTE = direct
                    outs[direct] = [MOE.moe_gemm(x, pw, ids, check_ids=False).float() for _ in range(a.reps)]
                torch.cuda.synchronize()
                within = {w: max(d(o, outs[w][0]) for o in outs[w]) for w in outs}
                u, v = outs[True][0], outs[False][0]
                ref = R.moe_gemm(x.float(), qw, ids.masked_fill(ids >= e, -1))
                print(f"  x {list(x.shape)}: direct vs direct {within[True]:.3g}, kernel vs kernel {within[False]:.3g},"
                      f" direct vs kernel {d(u, v):.3g}, vs reference {d(u, ref):.3g} / {d(v, ref):.3g} (largest |y|"
                      f" {float(ref.abs().max()):.3g})", flush=True)
                for t, j, c in (u != v).nonzero().tolist()[:8]:
                    print(f"    token {t} pair {j} expert {int(ids[t, j])} column {c}: direct {float(u[t, j, c]):.6g}"
                          f" kernel {float(v[t, j, c]):.6g} reference {float(ref[t, j, c]):.6g}")


if __name__ == "__main__":
    main()
