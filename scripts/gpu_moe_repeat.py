"""Whether an MoE call repeats bit for bit on the GPU, routed directly and by the routing kernel: the call run
REPS times each way on the same inputs, the largest difference within each way and between them, per layer.

    python3 scripts/gpu_moe_repeat.py [--reps 5]
"""
from __future__ import annotations

import argparse

import torch

import humming
from humming import reference as R
from humming.ops import moe as MOE
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme

CASES = [(WeightScheme("int4", "group", 128), "fp16"), (WeightScheme("uint4", "group", 64, zero_point="int"), "bf16"),
         (WeightScheme("uint4", "group", 64, zero_point="int"), "fp16"), (WeightScheme("int4", "group", 128), "bf16")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--m", default="1,4")
    a = ap.parse_args()
    dev = torch.device("cuda")
    e, topk, n, k = 128, 8, 264, 1024
    for scheme, act in CASES:
        gen = torch.Generator().manual_seed(12)
        qw = R.QuantizedWeight.stack([R.quantize(torch.randn(n, k, generator=gen) * 0.05, scheme)
                                      for _ in range(e)]).to(dev)
        pw = humming.prepare_weight(qw, layer=LayerSpec(n, k, scheme, ActivationScheme(act), num_experts=e,
                                                        out_dtype=act), device=dev)
        dt = torch.bfloat16 if act == "bf16" else torch.float16
        for m in map(int, a.m.split(",")):
            ids = torch.stack([torch.randperm(e, generator=gen)[:topk] for _ in range(m)]).to(dev, torch.int32)
            x = torch.randn(m, k, generator=gen).to(dev, dt)
            outs = {}
            for direct in (True, False):
                MOE.DIRECT_ROUTE = direct
                outs[direct] = [MOE.moe_gemm(x, pw, ids).float() for _ in range(a.reps)]
            torch.cuda.synchronize()
            d = lambda u, v: float((u - v).abs().max())
            within = {w: max(d(o, outs[w][0]) for o in outs[w]) for w in outs}
            between = d(outs[True][0], outs[False][0])
            ref = R.moe_gemm(x.float(), qw, ids)
            tile = pw.plan.tuning_for(MOE.tokens_per_expert(m, topk, e)).config
            print(f"{scheme.describe()} {act} M={m} tile {tile}: direct vs direct {within[True]:.3g}, kernel vs"
                  f" kernel {within[False]:.3g}, direct vs kernel {between:.3g}, vs reference"
                  f" {d(outs[True][0], ref):.3g} (largest |y| {float(ref.abs().max()):.3g})", flush=True)


if __name__ == "__main__":
    main()
