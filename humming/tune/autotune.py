"""``humming tune``: time a layer's candidate kernel configs on this GPU and keep the fastest.

For each M range of the heuristics' plan (up to ``max_m`` tokens) the kernel family offers candidate
configs (``tuning_candidates``: for ``mma_sync`` the range's own tile under other K-slice caps, and its
neighbouring ranges' tiles). Each candidate is prepared on random weights (normal x 0.02, the layer's
own scheme, act-order permutation and bias included), checked against :mod:`humming.reference` on a
NaN-poisoned output, and timed by the benchmark's method (CUDA-graph replay of calls that rotate over
enough weight copies to overflow the L2, median of repeats) at the range's first and last token counts.
Candidates are timed in a new random order in each round, so clock drift spreads over all of them.
A range takes a candidate only when it beats the heuristics' config by more than ``margin`` over the
sum of its token counts; the result goes to the tuning database (:mod:`humming.tune.database`), from
which :func:`humming.plan` takes it for this layer on this device.

MoE layers (``num_experts``) are tuned the same way through :func:`humming.moe_gemm`: their M ranges count the
rows one expert gets (``tokens_per_expert``), so each range is timed at the token counts whose share per expert is
its first and last (``moe_range_token_counts``), with ``topk`` experts per token routed at random (every expert
its own weights, each its own act-order permutation). An MoE plan's one-row range, where it has one, serves the
calls routed directly (one pair per block: ``humming.ops.moe.direct_routing``) and is timed at them; the next
range at the calls routed by kernel. The weight copies that overflow the L2 count the bytes of the experts a
call touches.
"""
from __future__ import annotations

import datetime
import random
import statistics
from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Sequence

from ..errors import UnsupportedError

__all__ = ["RangeResult", "choose", "range_token_counts", "moe_range_token_counts", "layer_range_token_counts",
           "default_topk", "candidate_plans", "tune"]

#: the relative Frobenius error a candidate may show against the reference (the benchmark's tolerance)
TOLERANCE = 1e-2


@dataclass
class RangeResult:
    """What was measured for one M range: the candidates (the heuristics' first), their times (us, the
    median per token count), the errors, and the one kept."""

    lo: int
    hi: Optional[int]
    ms: tuple
    configs: list
    times_us: list = field(default_factory=list)  # per candidate: [median us per m] or None (rejected)
    errors: list = field(default_factory=list)    # per candidate: relative error, or the reason it failed
    chosen: int = 0

    def to_dict(self) -> dict:
        return {"m_min": self.lo, "m_max": self.hi, "ms": list(self.ms), "configs": self.configs,
                "times_us": self.times_us, "errors": self.errors, "chosen": self.chosen,
                "speedup": self.speedup()}

    def speedup(self) -> Optional[float]:
        """The heuristics' time over the kept candidate's (summed over ``ms``)."""
        base, best = self.times_us[0] if self.times_us else None, (
            self.times_us[self.chosen] if self.times_us else None)
        if not base or not best:
            return None
        return sum(base) / sum(best)


def choose(times_us: Sequence[Optional[Sequence[float]]], margin: float) -> int:
    """The candidate to keep: the fastest (summed over token counts) where it beats candidate 0, the
    heuristics' config, by more than ``margin`` (a fraction); else 0. ``None`` marks a rejected one."""
    if not times_us or times_us[0] is None:
        return 0
    base = sum(times_us[0])
    best, idx = base, 0
    for i, t in enumerate(times_us):
        if t is not None and sum(t) < best:
            best, idx = sum(t), i
    return idx if best < base * (1.0 - margin) else 0


def range_token_counts(lo: int, hi: Optional[int], max_m: int) -> tuple:
    """The token counts a range is timed at: its first and its last (capped at ``max_m``)."""
    last = min(hi if hi is not None else max(max_m, lo), max_m)
    return tuple(sorted({lo, max(lo, last)}))


def default_topk(layer) -> int:
    """The experts per token an MoE layer is tuned at when the caller names none: 8 (at most the experts)."""
    return min(8, layer.num_experts)


def layer_range_token_counts(layer, lo: int, hi: Optional[int], max_m: int, topk: Optional[int] = None) -> tuple:
    """The token counts a range of ``layer``'s plan is timed at: ``range_token_counts``, or for an MoE layer
    (whose ranges count the rows one expert gets) ``moe_range_token_counts`` at ``topk`` (``default_topk``
    where None); () where an MoE range is not timed."""
    if layer.is_moe:
        from ..ops.moe import direct_tokens

        topk = default_topk(layer) if topk is None else topk
        return moe_range_token_counts(lo, hi, max_m, topk, layer.num_experts, direct_tokens(layer, topk))
    return range_token_counts(lo, hi, max_m)


def moe_range_token_counts(lo: int, hi: Optional[int], max_m: int, topk: int, experts: int,
                           direct: int = 0) -> tuple:
    """The token counts an MoE layer's range of ``lo``..``hi`` rows per block is timed at, calls of up to
    ``direct`` tokens routed directly (one row per block: humming.ops.moe.direct_tokens). A one-row range: one
    token and ``direct`` (() without direct routing). Other ranges: the fewest tokens routed by kernel whose share
    per expert, ``tokens_per_expert`` (ceil(M x topk / E), at least 2), falls in the range, and the most (at most
    ``max_m``): e.g. one token and ``8 E / topk`` for the range of 1-8 rows, ``direct`` + 1 and ``8 E / topk`` for
    that of 2-8. () where the range lies past ``max_m`` tokens' share."""
    from ..ops.moe import tokens_per_expert

    def share(m):
        return tokens_per_expert(m, topk, experts)
    if hi == 1:
        return tuple(sorted({1, min(direct, max_m)})) if direct else ()
    if lo > share(max_m) or (lo > 1 and direct >= max_m):
        return ()
    first = max(1, (max(lo, 2) - 1) * experts // topk)  # (about the fewest tokens whose share reaches lo)
    while first > 1 and share(first - 1) >= lo:
        first -= 1
    while share(first) < lo:
        first += 1
    if lo > 1:  # (the calls this range serves are routed by kernel; a range from one row serves direct ones too)
        first = max(first, direct + 1)
    last = max_m if hi is None or share(max_m) <= hi else min(max_m, hi * experts // topk)
    while last > first and share(last) > (hi if hi is not None else share(max_m)):
        last -= 1
    return tuple(sorted({first, last})) if first <= last else ()


def candidate_plans(plan, caps, index: int) -> list:
    """``[(config, plan)]``: the family's candidates for ``plan.tuning[index]``, each in a copy of ``plan``
    whose range ``index`` holds it (the heuristics' config first)."""
    from ..planner.family import MRange

    fam = plan._family
    offer = getattr(fam, "tuning_candidates", None)
    if offer is None:
        raise UnsupportedError(f"humming tune: kernel family {plan.backend}:{plan.family} offers no candidates",
                               [f"{plan.family}: no tuning_candidates()"])
    r = plan.tuning[index]
    out = []
    for cfg in offer(plan.layer, caps, plan.compute, plan.tuning, index):
        tuning = plan.tuning[:index] + (MRange(r.lo, r.hi, cfg),) + plan.tuning[index + 1:]
        out.append((dict(cfg), replace(plan, tuning=tuning)))
    return out


def _target(device):
    """``(torch device, the device argument plan() takes, the GPU's name)`` of the GPU to tune on."""
    import torch

    from ..ops.gemm import _detect_cuda

    dev = _detect_cuda(device, "humming tune")
    return dev, dev.index, torch.cuda.get_device_name(dev)


def tune(layer, device=None, *, max_m: int = 4096, repeats: int = 5, rounds: int = 3, margin: float = 0.03,
         store: bool = True, db=None, seed: int = 0, out: Callable[[str], None] = print,
         topk: Optional[int] = None) -> dict:
    """Tune ``layer`` on this process's GPU (``device``: a CUDA device or its index); returns the tuning
    database entry (stored there unless ``store=False``; ``db``: another file). MoE layers: ``topk`` experts per
    token (default 8, at most the experts)."""
    import torch

    from .. import reference as R
    from ..bench.ceilings import device_l2_bytes
    from ..bench.runner import _rel_error, sample_rows
    from ..bench.timing import CudaGraphTimer, copies_for, time_calls
    from ..dtypes import get_format
    from ..jit import warmup
    from ..ops.gemm import gemm, prepare_weight
    from ..ops.moe import moe_gemm
    from ..planner import plan as make_plan
    from ..planner.planner import resolve_device
    from . import database

    if not isinstance(max_m, int) or max_m < 1:
        raise ValueError(f"tune: max_m must be a positive integer, found {max_m!r}")
    moe = layer.is_moe
    if moe:
        topk = default_topk(layer) if topk is None else topk
        if not isinstance(topk, int) or not 1 <= topk <= layer.num_experts:
            raise ValueError(f"tune: topk must be an integer in 1..{layer.num_experts} (the experts), found {topk!r}")
    dev, where, gpu_name = _target(device)
    base = make_plan(layer, where, tuning_db=False)
    if not base.runnable:
        raise UnsupportedError(f"humming tune: the plan for {base.device} cannot run", [base.not_runnable_reason])
    _, caps, _ = resolve_device(where)
    g = torch.Generator(device=dev)
    g.manual_seed(seed)
    data = None
    if moe:  # (the bench's weights: quantized expert by expert, each its own act-order permutation; its routing)
        import dataclasses

        from ..bench.methods import WorkloadData
        from ..bench.workloads import Workload

        data = WorkloadData(Workload("tune", "tune", layer.n, layer.k, layer.weight, layer.activation,
                                    layer.num_experts, topk), dev, seed=seed)
        qw = data.quantized(layer.weight)
        if layer.bias:
            qw = dataclasses.replace(qw, bias=torch.randn(layer.num_experts, layer.n, generator=g, device=dev))
        data.drop_master()
    else:
        w = torch.randn(layer.n, layer.k, generator=g, device=dev) * 0.02
        perm = torch.randperm(layer.k, generator=g, device=dev) if layer.weight.act_order else None
        bias = torch.randn(layer.n, generator=g, device=dev) if layer.bias else None
        qw = R.quantize(w, layer.weight, perm=perm, bias=bias)
        del w
    act = layer.activation
    xdtype = torch.bfloat16 if act.fmt == "bf16" or (act.is_quantized and layer.out_dtype == "bf16") \
        else torch.float16
    l2 = device_l2_bytes(dev)
    timer = CudaGraphTimer(dev)
    results = []
    def run(pw, m, y=None):  # (one call: the layer's GEMM at m tokens; y: the output to write, where there is one)
        if moe:
            return moe_gemm(xs[m], pw, ids[m], act_scale=scales[m], check_ids=False)
        return gemm(xs[m], pw, act_scale=scales[m], out=y)

    for i, r in enumerate(base.tuning):
        if r.lo > max_m:
            break
        ms = layer_range_token_counts(layer, r.lo, r.hi, max_m, topk)
        if not ms:
            continue
        cands = candidate_plans(base, caps, i)
        res = RangeResult(r.lo, r.hi, ms, [c for c, _ in cands])
        results.append(res)
        if len(cands) == 1:
            out(f"{r.label():<14} one candidate (the heuristics' config): nothing to time")
            res.times_us, res.errors = [None], [None]
            continue
        # (MoE: the bytes of the experts the fewest tokens touch, which a call reads, must overflow the L2)
        touched = min(data.touched_experts(m) for m in ms) / layer.num_experts if moe else 1.0
        preps = []
        for cfg, p in cands:
            first = prepare_weight(qw, layer=layer, device=dev, plan=p)
            copies = copies_for(max(1, int(first.nbytes * touched)), l2)
            preps.append([first] + [prepare_weight(qw, layer=layer, device=dev, plan=p) for _ in range(copies - 1)])
        warmup(list(dict.fromkeys(pw[0].launcher.spec_for(m) for pw in preps for m in ms)))
        xs, scales, refs, rows, ids = {}, {}, {}, {}, {}
        for m in ms:
            x = torch.randn(m, layer.k, generator=g, device=dev)
            scale = None
            if act.quant == "static_tensor":  # (a calibrated scale: this batch's absmax over the format's max)
                scale = (x.abs().max() / get_format(act.fmt).max_value).float().reshape(1)
            xs[m], scales[m] = x.to(xdtype), scale
            rows[m] = sample_rows(m, 32).to(dev)
            aq = act if act.is_quantized else None
            if moe:  # (the reference dequantizes only the experts the sampled rows chose)
                from ..bench.methods import moe_subset

                ids[m] = data.topk_ids(m)
                sub, local = moe_subset(qw, ids[m][rows[m]])
                refs[m] = R.moe_gemm(xs[m][rows[m]].float(), sub, local, activation=aq, act_scale=scale)
            else:
                refs[m] = R.gemm(xs[m][rows[m]].float(), qw, aq, act_scale=scale)
        errors = []
        for pw in preps:  # (each candidate against the reference, on an output poisoned with NaN)
            worst = 0.0
            for m in ms:
                if moe:
                    y = _poisoned_moe(lambda: run(pw[0], m))
                else:
                    y = torch.full((m, layer.n), float("nan"), dtype=pw[0].out_dtype, device=dev)
                    run(pw[0], m, y)
                worst = max(worst, _rel_error(y[rows[m]], refs[m]))
            errors.append(worst)
        samples = [[[] for _ in ms] for _ in preps]
        for _ in range(rounds):
            order = list(range(len(preps)))
            random.shuffle(order)
            for ci in order:
                if not errors[ci] <= TOLERANCE:
                    continue
                for mi, m in enumerate(ms):
                    meas = time_calls([lambda p=p, m=m: run(p, m) for p in preps[ci]], timer, repeats=repeats)
                    timer.release()
                    samples[ci][mi].append(meas.median_us)
        res.times_us = [[statistics.median(s) for s in samples[ci]] if errors[ci] <= TOLERANCE else None
                        for ci in range(len(preps))]
        res.errors = [e if e <= TOLERANCE else f"error {e:.2e} above {TOLERANCE:.0e}" for e in errors]
        res.chosen = choose(res.times_us, margin)
        if not errors[0] <= TOLERANCE:  # (a kernel the planner would run computes wrong: say so loudly)
            out(f"{r.label():<14} WARNING: the heuristics' own config failed the reference check "
                f"({res.errors[0]}); it stays in the entry, as the planner would run it anyway; please report this")
        for ci, cfg in enumerate(res.configs):
            t = res.times_us[ci]
            mark = "*" if ci == res.chosen else " "
            what = " / ".join(f"{v:.2f}" for v in t) if t is not None else res.errors[ci]
            out(f"{r.label() if ci == 0 else '':<14}{mark} {what:<24} {', '.join(f'{k}={v}' for k, v in cfg.items())}")
        del preps
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
    tuning = [dict(t.to_dict()) for t in base.tuning]
    for res in results:
        for t in tuning:
            if (t["m_min"], t["m_max"]) == (res.lo, res.hi):
                t["config"] = dict(res.configs[res.chosen])
    from .. import __version__

    version = getattr(base._family, "tuning_version", None)

    entry = {"device": base.device, "family": f"{base.backend}:{base.family}", "layer": layer.to_dict(),
             "compute": base.compute.to_dict(), "tuning": tuning,
             "measured": {"humming": __version__, "when": datetime.datetime.now(datetime.timezone.utc)
                          .strftime("%Y-%m-%d %H:%M UTC"), "gpu": gpu_name,
                          "max_m": max_m, "margin": margin, **({"topk": topk} if moe else {}),
                          "kernels": version() if version is not None else None,
                          "ranges": [res.to_dict() for res in results]}}
    if store:
        path = database.store(entry, db)
        out(f"stored in {path}")
    return entry


def _poisoned_moe(call):
    """``call()`` (an MoE GEMM) with humming.ops.moe's rows poisoned with NaN before the kernel writes them."""
    from ..ops import moe as MOE

    was, MOE.POISON = MOE.POISON, True
    try:
        return call()
    finally:
        MOE.POISON = was
