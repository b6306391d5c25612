"""The sweep: workloads x methods x M, checked then timed, into one report.

Everything device-specific comes in from outside (the timer, the ceilings,
the host-overhead probe and the compile-figure probe), so the whole flow runs
on CPU in the tests with fakes; the CLI passes the CUDA ones.
"""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import torch

from ..errors import DeviceError, UnsupportedError
from . import schema
from .methods import Instance, Method, WorkloadData
from .timing import FIRST_WARMUP_S, MIN_CALLS, WARMUP_S, copies_for, time_calls
from .workloads import Workload

__all__ = ["BenchOptions", "ExternalSpec", "Progress", "run_bench", "count_points", "check_instance", "sample_rows",
           "run_external", "merge_external"]


@dataclass
class BenchOptions:
    ms: tuple[int, ...]
    repeats: int = 5
    seed: int = 0
    target_s: float = 0.01
    check_rows: int = 32
    max_copies: int = 64
    l2_bytes: int | None = None  # default: the ceilings' (the device's)
    min_calls: int = MIN_CALLS  # calls per timed unit at the least (timing.MIN_CALLS)
    warmup_s: float = WARMUP_S  # untimed replays before each point's repeats (timing.WARMUP_S)
    first_warmup_s: float = FIRST_WARMUP_S  # ... at the least before each method's first point (timing.FIRST_WARMUP_S)


@dataclass
class ExternalSpec:
    """Another library, run in its own process: ``python adapter --spec S --out O``
    with ``pythonpath`` first on PYTHONPATH."""

    name: str
    adapter: str
    pythonpath: str = ""
    python: str = sys.executable
    timeout_s: float = 900.0
    extra_env: dict = field(default_factory=dict)


class Progress:
    """A one-line progress bar on a terminal; on a pipe, a line every ~10%."""

    def __init__(self, total: int, stream=None, enabled: bool = True):
        self.total = max(1, total)
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_decile = -1
        self._t0 = time.perf_counter()

    def step(self, label: str = "") -> None:
        self.done += 1
        if not self.enabled:
            return
        frac = self.done / self.total
        elapsed = time.perf_counter() - self._t0
        text = f"[{'#' * int(frac * 30):<30}] {self.done}/{self.total} {elapsed:5.0f}s {label}"
        if self.tty:
            self.stream.write("\r" + text[:120].ljust(120) + ("\n" if self.done >= self.total else ""))
        elif int(frac * 10) != self._last_decile or self.done >= self.total:
            self._last_decile = int(frac * 10)
            self.stream.write(text + "\n")
        self.stream.flush()


def count_points(workloads, methods, ms) -> int:
    """How many (workload, method, M) points a sweep has."""
    return sum(len(ms) for wl in workloads for m in methods if wl.kind in m.kinds)


def sample_rows(m: int, most: int) -> torch.Tensor:
    """Up to ``most`` row indices spread over ``0..m-1``, first and last included."""
    return torch.linspace(0, m - 1, min(m, most)).round().long().unique()


def _rel_error(y: torch.Tensor, expected: torch.Tensor) -> float:
    y = y.float()
    if y.shape != expected.shape or not torch.isfinite(y).all():
        return float("inf")
    denom = expected.norm().clamp_min(1e-30)
    return float((y - expected.to(y.device)).norm() / denom)


def check_instance(inst: Instance, m: int, rows_most: int = 32) -> float:
    """Worst relative (Frobenius) error of the first and last weight copy's
    output on sampled rows, against ``inst.reference``; inf on a shape
    mismatch or a non-finite value."""
    rows = sample_rows(m, rows_most)
    expected = inst.reference(rows).float()
    worst = 0.0
    for call in dict.fromkeys((inst.calls[0], inst.calls[-1])):
        y = call()
        full = (m,) + tuple(expected.shape[1:])
        if tuple(y.shape) != full and y.numel() == torch.Size(full).numel():
            y = y.reshape(full)  # e.g. MoE output [M * topk, N]
        if tuple(y.shape) != full:
            return float("inf")
        worst = max(worst, _rel_error(y[rows.to(y.device)], expected))
    return worst


def _free(device) -> None:
    """Give a method's weight copies back to the device before the next one."""
    if torch.device(device).type == "cuda":
        gc.collect()
        torch.cuda.empty_cache()


def _describe(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


def run_bench(workloads: Sequence[Workload], methods: Sequence[Method], options: BenchOptions, *, device,
              timer, ceilings=None, external: Sequence[ExternalSpec] = (), host_overhead=None,
              compile_figures: Callable | None = None, jit_specs: Sequence[tuple] = (), env: dict | None = None,
              args: dict | None = None, progress: Progress | None = None, producer: dict | None = None) -> dict:
    """Run the sweep and return the finalized report (see ``schema``).

    ``compile_figures(spec) -> dict`` is measured for humming's first GEMM
    kernel and for every ``(what, spec)`` in ``jit_specs``;
    ``host_overhead(call) -> us`` for each method at the first workload's
    smallest M."""
    import humming

    report = schema.new_report(producer or {"library": "humming", "version": humming.__version__}, args, env)
    report["workloads"] = [wl.to_dict() for wl in workloads]
    notes = report["notes"]
    ce = report["ceilings"]
    l2 = options.l2_bytes if options.l2_bytes is not None else getattr(ceilings, "l2_bytes", 0)
    ce["l2_bytes"] = l2
    if ceilings is not None:
        for key in ("copy_gbps", "bf16_tflops", "fp8_tflops"):
            try:
                ce[key] = float(getattr(ceilings, key)())
            except Exception as e:  # a ceiling that cannot be measured is a note, not a failed run
                notes.append(f"ceiling {key} not measured: {_describe(e)}")
    progress = progress or Progress(count_points(workloads, methods, options.ms), enabled=False)
    specs = list(jit_specs)
    for wl in workloads:
        data = WorkloadData(wl, device, options.seed)
        for method in (m for m in methods if wl.kind in m.kinds):
            _run_method(report, wl, data, method, options, timer, l2, host_overhead, progress, specs)
            _free(device)
        del data
        _free(device)
    for ext in external:
        merge_external(report, run_external(ext, workloads, options, l2))
    if ceilings is not None:
        sizes = sorted({r["weight_bytes"] for r in report["results"] if r["status"] == "ok" and r["weight_bytes"]})
        for nbytes in sizes:
            try:
                ce["stream_us"][str(nbytes)] = float(ceilings.stream_us(nbytes))
            except Exception as e:
                notes.append(f"stream time of {nbytes} bytes not measured: {_describe(e)}")
    if compile_figures is not None:
        for what, spec in specs:
            try:
                report["jit"].append({"what": f"compile {what}", **compile_figures(spec)})
            except Exception as e:
                notes.append(f"compile figures of {what} not measured: {_describe(e)}")
    return schema.finalize(report)


def _run_method(report, wl, data, method, options, timer, l2, host_overhead, progress, specs) -> None:
    rows = report["results"]

    def add(m, status, reason, **kw):
        rows.append(schema.result_row(wl.name, m, method.name, method.role, status=status, reason=reason, **kw))

    def skip_all(status, reason):
        for m in options.ms:
            add(m, status, reason, flops=wl.flops(m))
            progress.step(f"{wl.name} {method.name} M={m} {status}")

    reason = method.unavailable(wl, data.device)
    if reason:
        return skip_all("skipped", reason)
    try:
        copies = copies_for(method.copy_bytes(data), l2, max_copies=options.max_copies)
        prepared = method.prepare(data, copies)
    except (UnsupportedError, DeviceError) as e:
        return skip_all("skipped", _describe(e))
    except Exception as e:
        return skip_all("error", f"prepare failed: {_describe(e)}")
    _collect_spec(prepared, wl, method, min(options.ms), specs)
    _tuning_note(report, prepared, wl, method)
    try:
        for i, m in enumerate(options.ms):  # (the first point comes after the preparation: warmed longer)
            warm = max(options.warmup_s, options.first_warmup_s) if i == 0 else options.warmup_s
            status = _run_point(wl, m, method, prepared, options, timer, add, warm)
            if status == "ok" and host_overhead is not None and m == min(options.ms) \
                    and report["workloads"][0]["name"] == wl.name:
                _host_figure(report, wl, m, method, prepared, host_overhead)
            progress.step(f"{wl.name} {method.name} M={m} {status}")
    finally:
        prepared.close()


def _run_point(wl, m, method, prepared, options, timer, add, warmup_s: float) -> str:
    try:
        inst = prepared.instance(m)
        err = check_instance(inst, m, options.check_rows)
        common = dict(weight_bytes=inst.weight_bytes, flops=wl.flops(m), io_bytes=inst.io_bytes, rel_err=err)
        if not err <= method.tol:
            what = f"relative error {err:.3g}" if err < float("inf") else "non-finite or wrongly shaped output"
            add(m, "wrong", f"{what} against humming.reference (tolerance {method.tol:g}); not timed", **common)
            return "wrong"
        meas = time_calls(inst.calls, timer, repeats=options.repeats, target_s=options.target_s,
                          min_calls=options.min_calls, warmup_s=warmup_s)
        add(m, "ok", None, measurement=meas, **common)
        return "ok"
    except UnsupportedError as e:
        add(m, "skipped", _describe(e), flops=wl.flops(m))
        return "skipped"
    except Exception as e:
        add(m, "error", _describe(e), flops=wl.flops(m))
        return "error"
    finally:
        release = getattr(timer, "release", None)
        if release is not None:
            release()


def _host_figure(report, wl, m, method, prepared, host_overhead) -> None:
    try:
        us = float(host_overhead(prepared.instance(m).calls[0]))
        report["jit"].append({"what": f"eager host overhead {method.name}", "workload": wl.name, "m": m,
                              "host_us_per_call": us})
    except Exception as e:
        report["notes"].append(f"host overhead of {method.name} not measured: {_describe(e)}")


def _tuning_note(report, prepared, wl, method) -> None:
    """Where a method's plan runs measured tuning (a tuning database entry, `humming tune`) instead of the
    heuristics', the report says so: its times are of those configs."""
    plan = getattr(getattr(prepared, "handle", None), "plan", None)
    for n in getattr(plan, "notes", None) or ():
        if isinstance(n, str) and n.startswith("tuning database"):
            report["notes"].append(f"{method.name} {wl.name}: {n}")


def _collect_spec(prepared, wl, method, m, specs) -> None:
    """The KernelSpec humming compiles for ``m`` (``handle.kernel_specs([m])``), once per run."""
    kernel_specs = getattr(getattr(prepared, "handle", None), "kernel_specs", None)
    if any(what.startswith(method.name) for what, _ in specs) or method.role != "primary" or kernel_specs is None:
        return
    try:
        specs.append((f"{method.name} {wl.name} M={m}", kernel_specs([m])[0]))
    except Exception:
        return


# ---------------------------------------------------------------------------
# external libraries
# ---------------------------------------------------------------------------


def _external_request(ext: ExternalSpec, workloads, options: BenchOptions, l2: int) -> dict:
    return {
        "method": ext.name,
        "bench_lib": str(Path(__file__).resolve().parent),
        "workloads": [dict(wl.to_dict(), weight_scheme=wl.weight.to_dict(), activation_scheme=wl.activation.to_dict())
                      for wl in workloads],
        "ms": list(options.ms), "repeats": options.repeats, "seed": options.seed, "target_s": options.target_s,
        "check_rows": options.check_rows, "max_copies": options.max_copies, "l2_bytes": l2,
        "min_calls": options.min_calls, "warmup_s": options.warmup_s, "first_warmup_s": options.first_warmup_s,
    }


def run_external(ext: ExternalSpec, workloads, options: BenchOptions, l2: int) -> dict:
    """Run one external adapter; returns its report, or a report of "error"
    rows naming what went wrong."""
    with tempfile.TemporaryDirectory(prefix="humming-bench-ext-") as folder:
        req_path = Path(folder) / "request.json"
        out_path = Path(folder) / "report.json"
        req_path.write_text(json.dumps(_external_request(ext, workloads, options, l2)))
        env = dict(os.environ, **ext.extra_env)
        if ext.pythonpath:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [ext.pythonpath, env.get("PYTHONPATH", "")]))
        cmd = [ext.python, ext.adapter, "--request", str(req_path), "--out", str(out_path)]
        failure = None
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=ext.timeout_s)
            if proc.stderr:
                sys.stderr.write(proc.stderr[-4000:])
            if proc.returncode != 0:
                failure = f"adapter exited with {proc.returncode}: {proc.stderr.strip()[-300:]}"
        except (OSError, subprocess.SubprocessError) as e:
            failure = f"adapter did not run: {_describe(e)}"
        if failure is None:
            try:
                return schema.validate_report(json.loads(out_path.read_text()), derived=False)
            except (OSError, ValueError) as e:
                failure = f"adapter report unusable: {_describe(e)}"
    report = schema.new_report({"library": ext.name, "version": None})
    report["workloads"] = [wl.to_dict() for wl in workloads]
    report["results"] = [schema.result_row(wl.name, m, ext.name, "external", status="error", reason=failure,
                                           flops=wl.flops(m)) for wl in workloads for m in options.ms]
    report["notes"].append(f"{ext.name}: {failure}")
    return report


def merge_external(report: dict, ext: dict) -> None:
    """Add an external report's rows (role "external"), versions and JIT figures."""
    known = {w["name"] for w in report["workloads"]}
    name = ext["producer"].get("library", "external")
    for row in ext["results"]:
        if row["workload"] not in known:
            report["notes"].append(f"{name}: row for unknown workload {row['workload']!r} dropped")
            continue
        row = dict(row, role="external")
        report["results"].append(row)
    report["env"].setdefault("external", {})[name] = {"producer": ext["producer"], "env": ext.get("env", {})}
    report["jit"].extend(dict(j, what=f"{name}: {j['what']}") for j in ext.get("jit", []))
    report["notes"].extend(f"{name}: {n}" for n in ext.get("notes", []))
