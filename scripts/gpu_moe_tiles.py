"""Which tile an MoE layer's decode call should run: the whole `moe_gemm` (route, GEMM, combine) timed with each
candidate tile serving every token count, on the GPU, captured in CUDA graphs and replayed round-robin over
GRAPHS random routings (other experts' weights each: cold as far as the layer allows), median of rounds.

The candidates: the plan's own tile for the tokens' share per expert, the rings dense layers of 1..E experts'
rows would run (shaped for that many rows: the MoE heuristics shape the ring for one expert's), and the
plan's warpgroup tiles of 9-32 rows per expert with K-slice caps 1 / 4 / 16. Each is checked by the family's
check_tuning first. Prints a table (us, and the fraction of the touched experts' bytes at the measured stream
rate) and writes JSON (--json).

    python3 scripts/gpu_moe_tiles.py --experts 128 --topk 8 --n 1536 --k 2048 --m 1,4,16,64 --json out.json
    python3 scripts/gpu_moe_tiles.py --only 64x2,128x1 --check ...   (two rings, BN x WK, each checked too)
    python3 scripts/gpu_moe_tiles.py --as a100 ...   (an older GPU's plan and candidates, compiled for this GPU and
                                                      launched as that GPU would: its SM count, plain launches)
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics

import torch

import humming
from humming import reference as R
from humming.ops import moe as MOE
from humming.ops.gemm import MOE_MIN_TOKENS
from humming.planner.family import MRange
from humming.device import get_device
from humming.planner.planner import resolve_device
from humming.scheme import WEIGHT_PRESETS, ActivationScheme, LayerSpec, WeightScheme
from humming_nvidia import gemm_mma_sync as G

from gpu_moe_parts import GRAPHS, _capture, _time  # (scripts/: graphs captured and replayed round-robin)

RINGS = ((16, 1, 8), (32, 2, 2), (32, 2, 4), (32, 2, 8), (64, 4, 4), (128, 8, 1), (128, 8, 2))


def tile_rows(plan, layer, m: int, topk: int, sms: int) -> int:
    """The rows per block whose range's tile a call of ``m`` tokens runs (on ``sms`` SMs): direct_rows' where it
    routes directly, else the tokens per expert."""
    if m > MOE.direct_tokens(layer, topk):
        return MOE.tokens_per_expert(m, topk, layer.num_experts)
    one, wide = (plan.tuning_for(r).config for r in (MOE.DIRECT_TOKENS, MOE_MIN_TOKENS))
    return MOE.direct_rows(m * topk, layer.n, (one["bm"], one["bn"]), (wide["bm"], wide["bn"]), sms)


def prepare_as(qw, layer, plan, there, dev):
    """``qw`` prepared under ``plan`` (made for ``there``, another GPU), compiled for this GPU and launched as
    ``there`` would launch it (gemm_mma_sync.prepare_as)."""
    from humming.ops.gemm import PreparedWeight, _detect_cuda, _register

    dev = _detect_cuda(dev)  # (cuda:N, as ops.prepare_weight keeps it)
    packed, launcher = G.prepare_as(plan, qw, dev, get_device(dev.index or 0), there)
    w = PreparedWeight(layer, plan, packed, launcher, dev, dict(packed.descriptor))
    w.handle = _register(w)
    return w


def candidates(plan, caps, layer, tile_ms) -> list[dict]:
    out = []
    for tm in tile_ms:  # (the plan's own)
        out.append(dict(next(r for r in plan.tuning if r.lo <= tm and (r.hi is None or tm <= r.hi)).config))
    e = layer.num_experts
    active = sorted({a for a in (1, 2, 4, 8, 16, 32, 64, e) if a <= e})
    for a in active:
        for rr in G._tuning_of(layer.replace(n=layer.n * a, num_experts=0), caps, plan.compute):
            t = G.tile_from_config(rr.config)
            if t is not None and t.stream and rr.hi != 1 and rr.lo <= 8:
                out.append(dict(rr.config))
    for bn, wn, wk in RINGS:  # (other ring shapes of 8 rows: BN over WN warps, BK over WK warps)
        out.append({"bm": 8, "bn": bn, "bk": 64 * wk, "wm": 1, "wn": wn, "wk": wk, "stages": 4, "stream": 4,
                    "occupancy": 2, "split_k": 16})
    for r in plan.tuning:
        t = G.tile_from_config(r.config)
        if t is not None and t.wgmma and r.lo <= 32:
            for s in (1, 16):
                out.append({**dict(r.config), "split_k": s})
    seen, keep = set(), []
    for cfg in out:
        key = tuple(sorted(cfg.items()))
        if key in seen or G.check_tuning(layer, caps, plan.compute, [MRange(1, None, cfg)]):
            continue
        seen.add(key)
        keep.append(cfg)
    return keep


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--experts", type=int, default=128)
    ap.add_argument("--topk", type=int, default=8)
    ap.add_argument("--n", type=int, default=1536)
    ap.add_argument("--k", type=int, default=2048)
    ap.add_argument("--m", default="1,4,16,64")
    ap.add_argument("--limit", type=int, default=14, help="at most this many candidates")
    ap.add_argument("--only", help="keep only these candidates, BNxWK comma-separated (e.g. 64x2,128x1)")
    ap.add_argument("--check", action="store_true",
                    help="also check each candidate's result against humming.reference.moe_gemm (first routing per M; "
                         "the largest error over the largest reference value, which must stay under 2^-6)")
    ap.add_argument("--weight", default="int4", help="weight format or preset (int4, uint4, mxfp4, nvfp4, ...)")
    ap.add_argument("--group-size", type=int, default=128, help="(formats, not presets) <= 0: per channel")
    ap.add_argument("--act", default="fp16", choices=("fp16", "bf16"))
    ap.add_argument("--as", dest="as_device", help="plan as this device (a100, l40s, ...) and launch as it would")
    ap.add_argument("--json")
    a = ap.parse_args()
    dev = torch.device("cuda")
    if a.weight in WEIGHT_PRESETS:
        scheme = WeightScheme(**WEIGHT_PRESETS[a.weight])
    else:
        zp = "int" if a.weight.startswith("u") else "none"
        scheme = (WeightScheme(a.weight, "group", a.group_size, zero_point=zp) if a.group_size > 0
                  else WeightScheme(a.weight, "channel", scale_fmt="fp32"))
    act, xdt = ActivationScheme(a.act), torch.float16 if a.act == "fp16" else torch.bfloat16
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    qw = R.QuantizedWeight.stack([R.quantize(torch.randn(a.n, a.k, device=dev) * 0.02, scheme)
                                  for _ in range(a.experts)])
    layer = LayerSpec(a.n, a.k, scheme, act, num_experts=a.experts, out_dtype=a.act)
    there = get_device(a.as_device) if a.as_device else None
    base = humming.plan(layer, there or dev.index or 0, tuning_db=False)
    _, caps, _ = resolve_device(there or dev.index or 0)
    ms = [int(v) for v in a.m.split(",")]
    sms = there.sm_count if there else torch.cuda.get_device_properties(dev).multi_processor_count
    print(f"plan: {base.device}; tuning " + "; ".join(f"{r.lo}-{r.hi}: {dict(r.config)}" for r in base.tuning))
    tile_ms = [tile_rows(base, layer, m, a.topk, sms) for m in ms]
    cands = candidates(base, caps, layer, tile_ms)
    if a.only:
        keep = set(a.only.split(","))
        cands = [c for c in cands if f"{c['bn']}x{c['wk']}" in keep]
    cands = cands[:a.limit]
    per_expert = int(scheme.bytes_per_weight(a.n, a.k))  # (codes, scales and zero points)
    # the stream rate over this many bytes (a read-only sum over a buffer as large as the experts)
    buf = torch.empty(per_expert * a.experts // 4, dtype=torch.float32, device=dev).uniform_()
    stream_us = _time([_capture(lambda: buf.sum())])
    rate = per_expert * a.experts / (stream_us * 1e-6)
    print(f"stream: {per_expert * a.experts / 1e6:.0f} MB in {stream_us:.1f} us ({rate / 1e12:.2f} TB/s)")
    routings = {}
    for m in ms:
        sets = []
        for _ in range(GRAPHS):
            ids = torch.stack([torch.randperm(a.experts, generator=g)[:a.topk] for _ in range(m)]).to(dev, torch.int32)
            x = torch.randn(m, a.k, generator=g).to(dev, xdt)
            wts = torch.rand(m, a.topk, generator=g).to(dev)
            sets.append((ids, x, wts))
        touched = statistics.mean(len(torch.unique(s[0])) for s in sets)
        routings[m] = (sets, touched)
    rows, failed = [], []
    print(f"{'tile':<92}" + "".join(f"{'M=' + str(m):>16}" for m in ms))
    for cfg in cands:
        plan = dataclasses.replace(base, tuning=(MRange(1, None, cfg),))
        pw = (prepare_as(qw, layer, plan, there, dev) if there
              else humming.prepare_weight(qw, layer=layer, plan=plan, device=dev))
        row = {"config": cfg, "us": {}, "of_stream": {}, "error": {}}
        for m in ms:
            sets, touched = routings[m]
            if a.check:  # (a garbage layout or a missed block errs by O(1) of the largest value; rounding by 2^-10)
                ids, x, wts = sets[0]
                y = MOE.moe_gemm(x, pw, ids, wts, reduce=True).float()
                ref = R.moe_gemm(x.float(), qw, ids, wts, reduce=True)
                err = float((y - ref).abs().max() / ref.abs().max()) if not torch.isnan(y).any() else float("nan")
                row["error"][m] = err
                if not err <= 2.0 ** -6:
                    failed.append((cfg, m, err))
            try:
                us = _time([_capture(lambda s=s, pw=pw: MOE.moe_gemm(s[1], pw, s[0], s[2], reduce=True,
                                                                     check_ids=False)) for s in sets])
            except Exception as exc:  # (a candidate that cannot launch: say why, go on)
                print(f"  {cfg}: M={m}: {type(exc).__name__}: {str(exc)[:200]}")
                us = None
            row["us"][m] = us
            row["of_stream"][m] = None if us is None else us / (touched * per_expert / rate * 1e6)
        rows.append(row)
        label = ", ".join(f"{k}={v}" for k, v in cfg.items())
        print(f"{label:<92}" + "".join(
            f"{'-':>16}" if row['us'][m] is None else f"{row['us'][m]:>8.1f} ({row['of_stream'][m]:.2f}x)" for m in ms),
            flush=True)
        del pw
    print("touched experts: " + ", ".join(f"M={m} {routings[m][1]:.1f}" for m in ms))
    if a.check:
        worst = max((e for r in rows for e in r["error"].values()), default=0.0)
        print(f"checked against the reference: worst error {worst:.2e} of the largest value; "
              + (f"FAILED {len(failed)}: {failed}" if failed else "all within 2^-6"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"layer": vars(a), "stream_us": stream_us, "rate": rate,
                       "touched": {m: routings[m][1] for m in ms}, "rows": rows, "failed": failed}, f, indent=1)
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
