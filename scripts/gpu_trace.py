"""Where a decode GEMM's time goes: the CTA timelines of the planner's kernels, next to the stream-read
kernel's, under CUDA-graph replay with cold weights (as the benchmark times them).

Both kernels are built with HUMMING_TRACE: thread 0 of every CTA stamps the global timer at its events (ptx::trace_at): 0 entry, 1 the previous kernel waited for (PDL), 2 the
activations staged (ring tiles), 3 the main loop done, 5 the CTA that sums the split-K slices starts
summing, 4 exit. Per call of the replayed sequence the script reports (medians over the calls, us):

  period   last exit of the call - last exit of the call before: the time per call the bench measures
  overlap  last exit of the call before - first entry of this one (PDL: > 0)
  launch   first entry -> last entry (how long the CTAs take to land)
  wait     the call before's last exit -> the first return from the wait (the grid's completion)
  stage    entry (or the wait) -> staged, median over CTAs
  loop     staged -> loop done: min / median / max over CTAs
  tail     loop done -> exit, median (the in-CTA reduction, the epilogue, the split-K sum)
  sum      split-K: the summing CTA's start -> exit, median; with its parts: s_fence (the fence), s_own (thread
           0's loads and sums), s_all (the barrier: the slowest thread's), s_epi (the epilogue)
  spread   last exit - median exit: the CTAs that finish late
  rr       the share of CTAs b past the first wave's SMs that ran on the SM of CTA b % SMs (1 under a
           breadth-first dispatch; --sms writes each CTA's SM to the JSON)

    python scripts/gpu_trace.py --shapes 8192x8192 --m 1 [--weight int4 --group 128] [--json out.json]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics

import torch

import humming.ops as ops
from humming import reference as R
from humming.bench.stream import CONFIGS, StreamReader
from humming.bench.timing import CudaGraphTimer, time_calls
from humming.scheme import LayerSpec, WeightScheme

TRACE = (("HUMMING_TRACE", "1"),)
WORDS = 16  # per CTA


def _ctas(grid) -> int:
    g = tuple(grid) + (1,) * (3 - len(tuple(grid)))
    return g[0] * g[1] * g[2]


def analyse(traces: list[torch.Tensor], per_call: bool = False) -> dict:
    """Per-call timelines (int64 [ctas, 16] each, in replay order) -> medians over the calls, in us
    (``per_call``: also each call's own figures, under "calls": the first call of a replay follows the
    previous replay's last across the graph launch, without a programmatic overlap)."""
    rows = []
    prev_end = None
    for t in traces:
        t = t.to(torch.float64)
        ent, ext = t[:, 0], t[:, 4]
        ok = (ent > 0) & (ext > 0)
        ent, ext, tt = ent[ok], ext[ok], t[ok]
        start, end = float(ent.min()), float(ext.max())
        r = {"launch": (float(ent.max()) - start) / 1e3, "spread": (end - float(ext.median())) / 1e3,
             "span": (end - start) / 1e3}
        waited = tt[:, 1] > 0
        staged = tt[:, 2] > 0
        looped = tt[:, 3] > 0
        if staged.any():
            r["stage"] = float((tt[staged, 2] - tt[staged, 0]).median()) / 1e3
            both = staged & waited
            if both.any():
                r["xwait"] = float((tt[both, 2] - tt[both, 1]).median()) / 1e3
        if looped.any():
            begin = torch.where(staged, tt[:, 2], torch.where(waited, tt[:, 1], tt[:, 0]))[looped]
            loop = (tt[looped, 3] - begin) / 1e3
            r["loop_min"], r["loop_med"], r["loop_max"] = float(loop.min()), float(loop.median()), float(loop.max())
            r["tail"] = float((tt[looped, 4] - tt[looped, 3]).median()) / 1e3
            # the loops by how many CTAs of the call shared the CTA's SM (word 7): "loop_on1", "loop_on2", ...
            sms = tt[:, 7].long()
            share = (sms[:, None] == sms[None, :]).sum(1)[looped]
            for c in torch.unique(share).tolist():
                r[f"loop_on{c}"] = float(loop[share == c].median())
                r[f"ctas_on{c}"] = float((share == c).sum())
        summed = tt[:, 5] > 0
        if summed.any():
            r["sum"] = float((tt[summed, 4] - tt[summed, 5]).median()) / 1e3
            for name, (a, b) in {"s_fence": (5, 8), "s_own": (8, 9), "s_all": (9, 10), "s_epi": (10, 4)}.items():
                ok = summed & (tt[:, a] > 0) & (tt[:, b] > 0)
                if ok.any():  # (stamps 8-10 inside the sum, where a build has them)
                    r[name] = float((tt[ok, b] - tt[ok, a]).median()) / 1e3
        if prev_end is not None:
            r["period"] = (end - prev_end) / 1e3
            r["overlap"] = (prev_end - start) / 1e3
            if waited.any():
                r["wait"] = (float(tt[waited, 1].min()) - prev_end) / 1e3
        sm = t[:, 7].long()  # (word 7: the SM, by the launch's linear block index)
        nsm = int(torch.unique(sm).numel())
        if t.shape[0] > nsm:  # breadth-first dispatch would put CTA b on the SM of CTA b % SMs
            r["rr"] = float((sm[nsm:] == sm[torch.arange(nsm, t.shape[0]) % nsm]).double().mean())
        prev_end = end
        rows.append(r)
    keys = sorted({k for r in rows for k in r})
    out = {k: statistics.median([r[k] for r in rows if k in r]) for k in keys}
    if per_call:
        out["calls"] = rows
    stamps = torch.cat([t[:, :5].reshape(-1) for t in traces])
    stamps = torch.unique(stamps[stamps > 0])
    d = stamps[1:] - stamps[:-1]
    out["timer_step_ns"] = float(d[d > 0].min()) if d.numel() else math.nan
    out["ctas"] = int(traces[0].shape[0])
    return out


def replay_traces(timer, calls, bufs, reps: int = 5) -> list[torch.Tensor]:
    """Replay the calls ``reps`` times, clear the buffers (a stamp only some CTAs write, such as the
    split-K sum's, would otherwise survive from an earlier replay), replay once more and read them."""
    replay = timer.build(calls)
    for _ in range(reps):
        replay()
    torch.cuda.synchronize()
    for b in bufs:
        b.zero_()
    replay()
    torch.cuda.synchronize()
    out = [b.view(-1, WORDS).cpu() for b in bufs]
    timer.release()
    return out


def fmt(r: dict) -> str:
    keys = ["period", "span", "overlap", "wait", "launch", "stage", "xwait", "loop_min", "loop_med", "loop_max", "tail",
            "sum", "s_fence", "s_own", "s_all", "s_epi", "spread", "rr"] + sorted(k for k in r if k.startswith("loop_on"))
    return "  ".join(f"{k} {r[k]:.2f}" for k in keys if k in r) + f"  (ctas {r['ctas']}, timer step " \
           f"{r['timer_step_ns']:.0f} ns)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4096x4096,8192x8192,28672x8192")
    ap.add_argument("--m", default="1")
    ap.add_argument("--weight", default="int4")
    ap.add_argument("--group", type=int, default=128, help="group size (0: per channel)")
    ap.add_argument("--define", action="append", default=[],
                    help="NAME[=VALUE] for the GEMM kernels' build besides HUMMING_TRACE (diagnostic variants)")
    ap.add_argument("--no-stream", action="store_true", help="skip the stream-read kernel")
    ap.add_argument("--tile", action="append", default=[],
                    help="Tile(...) to run at every M instead of the planner's (repeatable: one row each)")
    ap.add_argument("--per-call", action="store_true", help="print each call's figures too (the first call of "
                    "a replay follows the previous replay across a graph launch)")
    ap.add_argument("--time", action="store_true", help="also time the traced calls as the bench does "
                    "(timing.time_calls: graph replays, CUDA events), with the timestamps written and with the "
                    "trace pointer cleared (the same build, its stamps skipped), and the plain build's calls")
    ap.add_argument("--sms", action="store_true", help="with --json: each CTA's SM (by linear block index) in one call")
    ap.add_argument("--json")
    args = ap.parse_args()
    extra = tuple((d.split("=", 1) + ["1"])[:2] for d in args.define)
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    scheme = (WeightScheme(args.weight, "channel", scale_fmt="fp32") if args.group == 0 else
              WeightScheme(args.weight, "group", args.group))
    timer = CudaGraphTimer(dev)
    results = []
    for shape in args.shapes.split(","):
        n, k = map(int, shape.split("x"))
        qw = R.quantize(torch.randn(n, k, device=dev) * 0.02, scheme)
        layer = LayerSpec(n=n, k=k, weight=scheme)
        p0 = ops.prepare_weight(qw, layer=layer, device=dev)
        nbytes = p0.nbytes() if callable(p0.nbytes) else p0.nbytes
        copies = max(2, math.ceil(3 * props.L2_cache_size / nbytes))
        preps = [p0] + [ops.prepare_weight(qw, layer=layer, device=dev) for _ in range(copies - 1)]
        # --time: the same layer's plain (untraced) build as well, timed next to the traced one
        plain = [ops.prepare_weight(qw, layer=layer, device=dev) for _ in range(copies)] if args.time else []
        for pw in preps:  # the traced build of the same kernels (no launch has compiled them yet)
            pk = pw.launcher.packed
            pk.recipe = dataclasses.replace(pk.recipe, defines=tuple(pk.recipe.defines) + TRACE
                                            + tuple(tuple(d) for d in extra))
        # the stream-read kernel over the same bytes, each configuration the bench tries
        for unroll, threads in () if args.no_stream else CONFIGS:
            sr = StreamReader(dev, unroll, threads, defines=TRACE)
            calls = sr.calls(nbytes, copies)
            bufs = []
            for plan in sr.plans:
                bufs.append(torch.zeros(_ctas(plan.grid) * WORDS, dtype=torch.int64, device=dev))
                plan.params.trace = bufs[-1].data_ptr()
            r = analyse(replay_traces(timer, calls, bufs))
            r.update(shape=shape, kernel=f"stream unroll {unroll} x {threads}", mbytes=nbytes / 1e6)
            print(f"{shape} {r['kernel']:<28} {fmt(r)}", flush=True)
            results.append(r)
            sr.release()
        from humming_nvidia import gemm_mma_sync as G

        variants = [None] + [eval(t, {"Tile": G.Tile}) for t in args.tile]  # (a diagnostic script's own input)
        planned = [pw.launcher._entries for pw in preps + plain]
        for m, forced in [(int(v), f) for v in args.m.split(",") for f in variants]:
            for pw, entries in zip(preps + plain, planned):  # the planner's tile, or the forced one for every M
                pw.launcher._entries = entries if forced is None else [(1 << 62, forced, 16)]
                pw.launcher._by_m.clear()
            x = torch.randn(m, k, device=dev, dtype=torch.float16)
            calls = [lambda pw=pw: ops.gemm(x, pw) for pw in preps]
            for c in calls:  # compile, and each tile's first (plain) launch
                c()
            for c in calls:
                c()
            torch.cuda.synchronize()
            bufs = []
            for pw in preps:
                lp, grid = pw.launcher._by_m[m][:2]
                bufs.append(torch.zeros(_ctas(grid) * WORDS, dtype=torch.int64, device=dev))
                lp.params.trace = bufs[-1].data_ptr()
            tile = preps[0].launcher._entry(m)[1]
            grid = preps[0].launcher._by_m[m][1]
            traces = replay_traces(timer, calls, bufs)
            r = analyse(traces, args.per_call)
            if args.sms:
                r["sms"] = traces[len(traces) // 2][:, 7].tolist()
            r.update(shape=shape, kernel=f"humming M={m}" + "".join(f" {d[0]}" for d in extra), tile=str(tile), grid=list(grid), mbytes=nbytes / 1e6,
                     pdl=bool(preps[0].launcher._by_m[m][0].pdl))
            print(f"{shape} {r['kernel']:<28} {fmt(r)}\n    {tile} grid {tuple(grid)} pdl {r['pdl']}", flush=True)
            for i, c in enumerate(r.get("calls", [])):
                print(f"    call {i}: " + "  ".join(f"{k} {v:.2f}" for k, v in c.items()), flush=True)
            if args.time:  # the bench's measurement of the same calls, stamping and not
                stamped = time_calls(calls, timer, repeats=5).median_us
                for pw in preps:
                    pw.launcher._by_m[m][0].params.trace = None
                quiet = time_calls(calls, timer, repeats=5).median_us
                plain_calls = [lambda pw=pw: ops.gemm(x, pw) for pw in plain]
                for c in plain_calls + plain_calls:  # (compile; the first launch goes plainly)
                    c()
                untraced = time_calls(plain_calls, timer, repeats=5).median_us
                again = time_calls(calls, timer, repeats=5).median_us  # (drift: the traced quiet calls again)
                timer.release()
                r.update(timed_stamped=stamped, timed_quiet=quiet, timed_plain=untraced, timed_quiet_again=again)
                print(f"    timed (bench method): stamping {stamped:.2f} us, stamps skipped {quiet:.2f} us, "
                      f"plain build {untraced:.2f} us, stamps skipped again {again:.2f} us", flush=True)
            results.append(r)
        del preps, p0, plain
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
