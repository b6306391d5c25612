"""Where an MoE call's time goes on the GPU: the whole `moe_gemm` and each of its launches alone (routing,
gather, routed GEMM, combine), each captured in CUDA graphs and replayed, median of rounds. Where the call can
route directly (few pairs), the whole call with the routing kernel (`moe_gemm`) and without it (`direct`, and
`direct_ids64` with int64 ids: one conversion launch more).

Weights cold as far as the shape allows: GRAPHS graphs per stage, each with its own random routing (so other
experts' weights), replayed round-robin. Prints a table and writes JSON (--json).

    python3 scripts/gpu_moe_parts.py --experts 128 --topk 8 --n 1536 --k 2048 --m 1,16,256 --json out.json
"""
from __future__ import annotations

import argparse
import json
import statistics

import torch

import humming
from humming import reference as R
from humming.ops import moe as MOE
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme

GRAPHS = 8


def _time(graphs, reps: int = 20, rounds: int = 5) -> float:
    """Median over rounds of the mean us per replay, the graphs replayed round-robin."""
    out = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for i in range(reps):
            for g in graphs:
                g.replay()
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b) * 1e3 / (reps * len(graphs)))
    return statistics.median(out)


def _capture(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()  # (compiles, allocates)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


def _direct(on: bool, fn):
    """fn with humming.ops.moe's direct routing on or off while it runs (and while a graph captures it)."""
    def run():
        was, MOE.DIRECT_ROUTE = MOE.DIRECT_ROUTE, on
        try:
            fn()
        finally:
            MOE.DIRECT_ROUTE = was
    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--experts", type=int, default=128)
    ap.add_argument("--topk", type=int, default=8)
    ap.add_argument("--n", type=int, default=1536)
    ap.add_argument("--k", type=int, default=2048)
    ap.add_argument("--m", default="1,16,256")
    ap.add_argument("--json")
    a = ap.parse_args()
    dev = torch.device("cuda")
    scheme, act = WeightScheme("int4", "group", 128), ActivationScheme("fp16")
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    qw = R.QuantizedWeight.stack([R.quantize(torch.randn(a.n, a.k, device=dev) * 0.02, scheme)
                                  for _ in range(a.experts)])
    layer = LayerSpec(a.n, a.k, scheme, act, num_experts=a.experts, out_dtype="fp16")
    pw = humming.prepare_weight(qw, layer=layer, device=dev)
    rows = []
    for m in (int(v) for v in a.m.split(",")):
        tile_m = MOE.tokens_per_expert(m, a.topk, a.experts)
        bm = pw.launcher.tile_for(tile_m).bm
        sets = []
        for _ in range(GRAPHS):
            ids = torch.stack([torch.randperm(a.experts, generator=g)[:a.topk] for _ in range(m)]).to(dev, torch.int32)
            x = torch.randn(m, a.k, generator=g).to(dev, torch.float16)
            wts = torch.rand(m, a.topk, generator=g).to(dev)
            route = MOE._route_kernel(ids, a.experts, bm)
            xs = MOE._gather(x, route.src, route.num_rows, a.topk)
            ys = MOE._routed_gemm(xs, pw, route.expert_ids, tile_m, None)
            sets.append((ids, x, wts, route, xs, ys))
        stages = {
            "moe_gemm": lambda s: (lambda: MOE.moe_gemm(s[1], pw, s[0], s[2], reduce=True, check_ids=False)),
            "route": lambda s: (lambda: MOE._route_kernel(s[0], a.experts, bm)),
            "gather": lambda s: (lambda: MOE._gather(s[1], s[3].src, s[3].num_rows, a.topk)),
            "gemm": lambda s: (lambda: MOE._routed_gemm(s[4], pw, s[3].expert_ids, tile_m, None)),
            "combine": lambda s: (lambda: MOE._combine(s[5], s[3], m, a.topk, s[2], True)),
        }
        if m * a.topk * MOE.DIRECT_SHARE <= a.experts:  # (the whole call routed directly, int32 and int64 ids)
            stages["direct"] = lambda s: _direct(True, lambda: MOE.moe_gemm(s[1], pw, s[0], s[2], reduce=True,
                                                                            check_ids=False))
            stages["direct_ids64"] = lambda s, i64={}: _direct(True, lambda: MOE.moe_gemm(
                s[1], pw, i64.setdefault(id(s), s[0].long()), s[2], reduce=True, check_ids=False))
            stages["moe_gemm"] = lambda s: _direct(False, lambda: MOE.moe_gemm(s[1], pw, s[0], s[2], reduce=True,
                                                                              check_ids=False))
        if pw.packed.recipe.xgather:  # (HUMMING_MOE_XGATHER=1: the GEMM reading the rows from x, its routing's XOFF)
            stages["route_xoff"] = lambda s: (lambda: MOE._route_kernel(s[0], a.experts, bm, xoff=(a.topk, a.k)))
            xoffs = {id(s): MOE._route_kernel(s[0], a.experts, bm, xoff=(a.topk, a.k)) for s in sets}
            stages["gemm_from_x"] = lambda s: (lambda r=xoffs[id(s)]: MOE._routed_gemm(
                s[1], pw, r.expert_ids, tile_m, None, x_rows=r.src))
        row = {"m": m, "tile_m": tile_m, "bm": bm, "blocks": sets[0][3].blocks}
        for name, make in stages.items():
            row[name] = _time([_capture(make(s)) for s in sets])
        rows.append(row)
        print(f"M={m:<5} tile_m={tile_m:<3} bm={bm:<3} blocks={row['blocks']:<5} "
              + "  ".join(f"{k} {row[k]:.2f}" for k in stages) + "  (us)", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"layer": vars(a), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
