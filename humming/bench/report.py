"""Reading a report: the table, the JSON file, one PNG plot per workload."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

__all__ = ["format_table", "format_summary", "write_json", "plot_report", "subject_method"]


def _num(v, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{max(0, digits - 1 - int(math.floor(math.log10(abs(v)))))}f}" if v else "0"


def _mb(nbytes) -> str:
    return f"{nbytes / 1e6:.1f} MB" if nbytes else "-"


def _columns(rows) -> list[str]:
    seen = {}
    for r in rows:
        for name in r.get("speedup", {}):
            seen.setdefault(name, None)
    return list(seen)


def _status_text(r) -> str:
    if r["status"] == "wrong":
        return f"WRONG (rel err {_num(r['rel_err'])})"
    return r["status"]


def _render(header: list[str], lines: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h) for i, h in enumerate(header)]
    fmt = lambda cells: "  ".join(c.rjust(w) if i > 1 else c.ljust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths)))
    return [fmt(header), fmt(["-" * w for w in widths])] + [fmt(l) for l in lines]


def format_table(report: dict) -> str:
    """One block per workload: per M and method the time, rates, ratios to the
    floor and to the stream time, and the speedups over every baseline."""
    out = []
    for w in report["workloads"]:
        rows = [r for r in report["results"] if r["workload"] == w["name"]]
        if not rows:
            continue
        moe = f", {w['num_experts']} experts top-{w['topk']}" if w["kind"] == "moe" else ""
        out.append(f"== {w['name']}: N={w['n']} K={w['k']}{moe}; weights {w['weight']}; activations "
                   f"{w['activation']}")
        cols = _columns(rows)
        header = ["M", "method", "us", "+-%", "TFLOP/s", "GB/s", "x floor", "x stream", "weights"] + \
            [f"vs {c}" for c in cols]
        lines = []
        for r in sorted(rows, key=lambda r: (r["m"], r["role"] != "primary", r["role"] != "external")):
            if r["status"] == "skipped":  # said once below, not per M
                continue
            if r["status"] != "ok":
                lines.append([str(r["m"]), r["method"], _status_text(r)] + [""] * (len(header) - 3))
                continue
            spread = 100 * (r["max_us"] - r["min_us"]) / r["median_us"]
            lines.append([str(r["m"]), r["method"], _num(r["median_us"]), f"{spread:.1f}", _num(r["tflops"]),
                          _num(r["gbps"]), _num(r["x_floor"]), _num(r["x_stream"]), _mb(r["weight_bytes"])]
                         + [_num(r["speedup"].get(c)) for c in cols])
        out.extend(_render(header, lines))
        reasons = sorted({f"{r['method']}: {r['reason']}" for r in rows if r["status"] != "ok"})
        out.extend(f"  note {x}" for x in reasons)
        out.append("")
    return "\n".join(out)


def format_summary(report: dict) -> str:
    """The ceilings, JIT figures and notes."""
    ce = report["ceilings"]
    dev = report["env"].get("device", {})
    lines = [f"device: {dev.get('name', '?')} ({dev.get('sm_count', '?')} SMs, L2 {_mb(ce.get('l2_bytes'))})",
             f"ceilings: copy {_num(ce.get('copy_gbps'))} GB/s (read+write), dense bf16 "
             f"{_num(ce.get('bf16_tflops'))} TFLOP/s, fp8 {_num(ce.get('fp8_tflops'))} TFLOP/s"]
    for key, us in sorted(ce.get("stream_us", {}).items(), key=lambda kv: int(kv[0])):
        lines.append(f"  stream {_mb(int(key))}: {_num(us)} us")
    st = report["env"].get("settings") or {}
    if st:  # (e.g. HUMMING_PDL=0: the decode kernels launched plainly)
        lines.append("settings: " + " ".join(f"{k}={v}" for k, v in st.items()))
    for j in report["jit"]:
        figs = ", ".join(f"{k} {_num(v) if isinstance(v, (int, float)) else v}" for k, v in j.items() if k != "what")
        lines.append(f"jit: {j['what']}: {figs}")
    lines.extend(f"note: {n}" for n in report["notes"])
    return "\n".join(lines)


def write_json(report: dict, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, sort_keys=False) + "\n")
    return path


def subject_method(rows) -> str | None:
    """The method a workload's plot is about: humming if it ran, else an external one."""
    for role in ("primary", "external"):
        names = [r["method"] for r in rows if r["role"] == role and r["status"] == "ok"]
        if names:
            return names[0]
    return None


def _series(rows, method, key):
    pts = sorted((r["m"], r[key]) for r in rows if r["method"] == method and r["status"] == "ok"
                 and r.get(key) is not None)
    return [p[0] for p in pts], [p[1] for p in pts]


def _roofline(report: dict, workload: dict, subj_rows: dict) -> list[tuple[int, float]]:
    """(M, us) of the best the subject could do: its bytes at the stream time,
    or its FLOPs at the dense bf16 (fp8 for 8-bit activations) rate."""
    ce = report["ceilings"]
    rate = ce.get("fp8_tflops") if workload["activation"].startswith(("e4m3", "e5m2", "int8")) \
        else ce.get("bf16_tflops")
    out = []
    for m, r in sorted(subj_rows.items()):
        if r.get("stream_us"):
            out.append((m, max(r["stream_us"], r["flops"] / (rate * 1e6) if rate else 0.0)))
    return out


def plot_report(report: dict, out_dir, log=print) -> list[Path]:
    """One PNG per workload: speedup of the subject method over every baseline
    against M (with the floor: the speedup it would have at its roofline), and
    the time of every method against M with the roofline and the bytes floor.
    Needs matplotlib; without it, prints a note and returns []."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("note: matplotlib is not installed; no plots written")
        return []
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for w in report["workloads"]:
        rows = [r for r in report["results"] if r["workload"] == w["name"]]
        subject = subject_method(rows)
        if subject is None:
            continue
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
        others = _columns([r for r in rows if r["method"] == subject])
        subj_rows = {r["m"]: r for r in rows if r["method"] == subject and r["status"] == "ok"}
        for other in others:
            pts = sorted((m, r["speedup"][other]) for m, r in subj_rows.items() if other in r["speedup"])
            ax1.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"vs {other}")
        roof = _roofline(report, w, subj_rows)
        if others and roof:
            base = others[0]
            base_t = dict(zip(*_series(rows, base, "median_us")))
            bound = [(m, base_t[m] / t) for m, t in roof if m in base_t]
            ax1.plot([b[0] for b in bound], [b[1] for b in bound], "k--",
                     label=f"floor: {base} / {subject} at its roofline")
        ax1.axhline(1.0, color="grey", lw=0.8)
        ax1.set(xscale="log", xlabel="M (tokens)", ylabel=f"speedup of {subject}", title=w["name"])
        ax1.legend(fontsize=7)
        for method in dict.fromkeys(r["method"] for r in rows):
            ms, ts = _series(rows, method, "median_us")
            if ms:
                ax2.plot(ms, ts, marker="o", lw=2.2 if method == subject else 1.0, label=method)
        if roof:
            ax2.plot([r[0] for r in roof], [r[1] for r in roof], "k--",
                     label=f"roofline: max(stream time of {subject}'s bytes, FLOPs / dense rate)")
        ms, ts = _series(rows, subject, "floor_us")
        if ms:
            ax2.plot(ms, ts, "k:", label=f"floor: {subject}'s bytes / copy bandwidth")
        ax2.set(xscale="log", yscale="log", xlabel="M (tokens)", ylabel="us per call",
                title=f"N={w['n']} K={w['k']}, {w['weight']}")
        ax2.legend(fontsize=7)
        fig.tight_layout()
        path = out_dir / (re.sub(r"[^A-Za-z0-9_.-]+", "_", w["name"]) + ".png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
