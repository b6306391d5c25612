"""The JSON schema of a benchmark report, shared with the external adapters.

Like ``timing.py`` this file imports only the standard library, so an adapter
that runs with another library's ``humming`` package on its path can load it
by file path and report in exactly this shape.

A report is a dict::

    schema      "humming-bench"
    version     1
    created     ISO-8601 time
    producer    {"library": ..., "version": ...}
    args        the options of the run (free-form)
    env         {"versions": {...}, "device": {...}, "git": {...}, "settings": {HUMMING_* variables}}
    ceilings    {"copy_gbps", "bf16_tflops", "fp8_tflops", "l2_bytes",
                 "stream_us": {"<bytes>": us}}   (numbers or null)
    workloads   [{"name", "model", "kind", "n", "k", "num_experts", "topk",
                  "weight", "activation"}]
    results     [row]   (see ROW_FIELDS; one per workload x M x method)
    jit         [{"what", ...figures}]
    notes       [str]

A row's raw fields come from the measurement; :func:`finalize` adds the
derived ones (TFLOP/s, GB/s, floor and stream times, the ratios against them,
and the speedups against every baseline at the same workload and M).
"""
from __future__ import annotations

import datetime as _dt
import math

__all__ = ["SCHEMA", "VERSION", "ROLES", "STATUSES", "ROW_FIELDS", "DERIVED_FIELDS", "new_report",
           "result_row", "finalize", "validate_report"]

SCHEMA = "humming-bench"
VERSION = 1
ROLES = ("primary", "baseline", "external")
STATUSES = ("ok", "wrong", "skipped", "error")

_NUM = (int, float)
_OPT_NUM = (int, float, type(None))
_OPT_STR = (str, type(None))

#: raw row fields and their types
ROW_FIELDS = {
    "workload": str, "m": int, "method": str, "role": str, "status": str, "reason": _OPT_STR,
    "median_us": _OPT_NUM, "min_us": _OPT_NUM, "max_us": _OPT_NUM, "samples_us": list,
    "copies": int, "iters": int, "weight_bytes": int, "flops": _NUM, "io_bytes": int,
    "rel_err": _OPT_NUM,
}
#: fields :func:`finalize` adds
DERIVED_FIELDS = {
    "tflops": _OPT_NUM, "gbps": _OPT_NUM, "floor_us": _OPT_NUM, "stream_us": _OPT_NUM,
    "x_floor": _OPT_NUM, "x_stream": _OPT_NUM, "speedup": dict,
}
_TOP = {"schema": str, "version": int, "created": str, "producer": dict, "args": dict, "env": dict,
        "ceilings": dict, "workloads": list, "results": list, "jit": list, "notes": list}
_CEILINGS = {"copy_gbps": _OPT_NUM, "bf16_tflops": _OPT_NUM, "fp8_tflops": _OPT_NUM, "l2_bytes": _OPT_NUM,
             "stream_us": dict}
_WORKLOAD = {"name": str, "model": str, "kind": str, "n": int, "k": int, "num_experts": int, "topk": int,
             "weight": str, "activation": str}


def new_report(producer: dict, args: dict | None = None, env: dict | None = None) -> dict:
    """An empty report (no ceilings measured, no rows)."""
    return {
        "schema": SCHEMA, "version": VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "producer": dict(producer), "args": dict(args or {}), "env": dict(env or {}),
        "ceilings": {"copy_gbps": None, "bf16_tflops": None, "fp8_tflops": None, "l2_bytes": None,
                     "stream_us": {}},
        "workloads": [], "results": [], "jit": [], "notes": [],
    }


def result_row(workload: str, m: int, method: str, role: str, *, status: str = "ok", reason: str | None = None,
               measurement=None, weight_bytes: int = 0, flops: float = 0.0, io_bytes: int = 0,
               rel_err: float | None = None) -> dict:
    """One raw row; ``measurement`` is a timing.Measurement (None unless timed).
    A non-finite ``rel_err`` (NaN output, wrong shape) is stored as null."""
    m_ = measurement
    return {
        "workload": workload, "m": int(m), "method": method, "role": role, "status": status, "reason": reason,
        "median_us": None if m_ is None else m_.median_us,
        "min_us": None if m_ is None else m_.min_us,
        "max_us": None if m_ is None else m_.max_us,
        "samples_us": [] if m_ is None else list(m_.samples_us),
        "copies": 0 if m_ is None else m_.copies, "iters": 0 if m_ is None else m_.iters,
        "weight_bytes": int(weight_bytes), "flops": float(flops), "io_bytes": int(io_bytes),
        "rel_err": float(rel_err) if rel_err is not None and math.isfinite(rel_err) else None,
    }


def _ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def finalize(report: dict) -> dict:
    """Fill the derived fields of every row from its raw fields and the
    report's ceilings (in place; returns the report)."""
    ce = report["ceilings"]
    copy_gbps = ce.get("copy_gbps")
    stream = ce.get("stream_us") or {}
    ok = [r for r in report["results"] if r["status"] == "ok"]
    by_point: dict[tuple, list[dict]] = {}
    for r in ok:
        by_point.setdefault((r["workload"], r["m"]), []).append(r)
    for r in report["results"]:
        t = r["median_us"] if r["status"] == "ok" else None
        r["tflops"] = r["flops"] / t / 1e6 if t else None
        r["gbps"] = r["io_bytes"] / t / 1e3 if t else None
        r["floor_us"] = r["weight_bytes"] / copy_gbps / 1e3 if copy_gbps and r["weight_bytes"] else None
        r["stream_us"] = stream.get(str(r["weight_bytes"]))
        r["x_floor"] = _ratio(t, r["floor_us"])
        r["x_stream"] = _ratio(t, r["stream_us"])
        r["speedup"] = {}
        if t is None or r["role"] == "baseline":
            continue
        for other in by_point.get((r["workload"], r["m"]), []):
            if other is r or other["method"] == r["method"]:
                continue
            if other["role"] == "baseline" or (r["role"] == "primary" and other["role"] == "external"):
                r["speedup"][other["method"]] = other["median_us"] / t
    return report


def _check(obj, spec: dict, where: str) -> None:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected an object, found {type(obj).__name__}")
    for key, typ in spec.items():
        if key not in obj:
            raise ValueError(f"{where}.{key}: expected a field of type {_tname(typ)}, found it missing")
        v = obj[key]
        if isinstance(v, bool) and bool not in (typ if isinstance(typ, tuple) else (typ,)):
            raise ValueError(f"{where}.{key}: expected {_tname(typ)}, found a bool")
        if not isinstance(v, typ):
            raise ValueError(f"{where}.{key}: expected {_tname(typ)}, found {type(v).__name__} {v!r:.60}")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{where}.{key}: expected a finite number, found {v}")


def _tname(typ) -> str:
    typs = typ if isinstance(typ, tuple) else (typ,)
    return " or ".join("null" if t is type(None) else t.__name__ for t in typs)


def validate_report(report: dict, derived: bool = True) -> dict:
    """Check ``report`` against the schema; raise ValueError naming the first
    field that is wrong (its path, the expected and the found). ``derived``:
    also require the fields :func:`finalize` adds. Returns the report."""
    _check(report, _TOP, "report")
    if report["schema"] != SCHEMA:
        raise ValueError(f"report.schema: expected {SCHEMA!r}, found {report['schema']!r}")
    if report["version"] != VERSION:
        raise ValueError(f"report.version: expected {VERSION}, found {report['version']!r}")
    _check(report["ceilings"], _CEILINGS, "report.ceilings")
    for key, v in report["ceilings"]["stream_us"].items():
        if not key.isdigit() or not isinstance(v, _NUM) or isinstance(v, bool) or v <= 0:
            raise ValueError(f"report.ceilings.stream_us[{key!r}]: expected a byte count mapped to a positive "
                             f"time in us, found {v!r}")
    names = set()
    for i, w in enumerate(report["workloads"]):
        _check(w, _WORKLOAD, f"report.workloads[{i}]")
        if w["kind"] not in ("dense", "moe"):
            raise ValueError(f"report.workloads[{i}].kind: expected 'dense' or 'moe', found {w['kind']!r}")
        names.add(w["name"])
    spec = dict(ROW_FIELDS, **DERIVED_FIELDS) if derived else ROW_FIELDS
    for i, r in enumerate(report["results"]):
        where = f"report.results[{i}]"
        _check(r, spec, where)
        if r["role"] not in ROLES:
            raise ValueError(f"{where}.role: expected one of {ROLES}, found {r['role']!r}")
        if r["status"] not in STATUSES:
            raise ValueError(f"{where}.status: expected one of {STATUSES}, found {r['status']!r}")
        if r["workload"] not in names:
            raise ValueError(f"{where}.workload: expected one of the report's workloads, found {r['workload']!r}")
        if r["status"] == "ok":
            for key in ("median_us", "min_us", "max_us"):
                if r[key] is None or r[key] <= 0:
                    raise ValueError(f"{where}.{key}: expected a positive time for status 'ok', found {r[key]!r}")
            if not r["min_us"] <= r["median_us"] <= r["max_us"]:
                raise ValueError(f"{where}: expected min_us <= median_us <= max_us, found {r['min_us']}, "
                                 f"{r['median_us']}, {r['max_us']}")
            if len(r["samples_us"]) < 3:
                raise ValueError(f"{where}.samples_us: expected at least 3 repeats, found {len(r['samples_us'])}")
        elif not r["reason"]:
            raise ValueError(f"{where}.reason: expected the reason for status {r['status']!r}, found none")
    for i, j in enumerate(report["jit"]):
        _check(j, {"what": str}, f"report.jit[{i}]")
    return report
