#!/usr/bin/env python3
"""Benchmark the ``humming-kernels`` package (PyPI; the library to beat) the way
``humming bench`` benchmarks its own methods, and write the same JSON schema.

It runs in its own process, with the folder holding that package first on
PYTHONPATH, so ``import humming`` finds *that* library, not ours. It loads our
timing method and schema by file path (``bench_lib`` in the request), so the
measurement is the same code: R weight copies (R x bytes > 3 x L2), a CUDA
graph of the R calls, CUDA-event timing of replays, median of >= 3 repeats.

Usage (``humming bench --external humming-kernels=PATH`` writes the request)::

    python humming_kernels_adapter.py --request request.json --out report.json

Per workload it builds a ``HummingLayer`` through the library's public API
(quantizing with its own ``quant_tensor``), asks the library's own heuristic
for the config of each benchmarked M, and passes those configs as one
M-interval list (``tuning_config=[[lo, hi, cfg], ...]``), so one compile step
builds only the kernels of the benchmarked Ms. Each output is checked against
``x @ dequant(W)`` of the library's own quantized tensors before it is timed.
The weights, activations and routing are drawn exactly as ``humming bench``
draws them (same generator, seeds and order), so both see the same numbers.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

METHOD = "humming-kernels"

_WEIGHT_DTYPES = {"e2m1": "float4e2m1", "e0m3": "float4e0m3", "e3m2": "float6e3m2", "e2m3": "float6e2m3",
                  "e4m3": "float8e4m3", "e5m2": "float8e5m2", "e3m4": "float8e3m4"}
_SCALE_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "e4m3": "float8e4m3",
                 "e5m2": "float8e5m2", "e8m0": "float8e8m0"}
_ACT_DTYPES = {"e4m3": "float8e4m3", "e5m2": "float8e5m2", "int8": "int8", "int4": "int4", "e2m1": "float4e2m1"}


class Unsupported(Exception):
    """This scheme has no equivalent in the library (the row is 'skipped')."""


def weight_config(scheme: dict) -> dict:
    """Our WeightScheme (as a dict) -> the library's ``weight_config``."""
    fmt = scheme["fmt"]
    zp = scheme.get("zero_point", "none")
    if fmt.startswith("uint") and zp == "none":
        dtype = "int" + fmt[4:]  # our implicit-offset unsigned codes are symmetric integers
    elif fmt.startswith(("int", "uint")):
        dtype = fmt
    elif fmt in _WEIGHT_DTYPES:
        dtype = _WEIGHT_DTYPES[fmt]
    else:
        raise Unsupported(f"weight format {fmt} has no humming-kernels equivalent")
    cfg = {"dtype": dtype}
    kind = scheme["scale"]
    if kind == "group":
        cfg["group_size"] = scheme["group_size"]
    elif kind == "block":
        cfg.update(group_size=scheme["group_size"], group_size_n=scheme["block_n"])
    elif kind == "tensor":
        cfg["weight_scale_type"] = "tensor"
    if kind != "block" and scheme.get("scale_fmt") not in (None, "fp16", "bf16"):
        if scheme["scale_fmt"] not in _SCALE_DTYPES:
            raise Unsupported(f"scale format {scheme['scale_fmt']} has no humming-kernels equivalent")
        cfg["scale_dtype"] = _SCALE_DTYPES[scheme["scale_fmt"]]
    if zp != "none":
        cfg["has_zero_point"] = True
        cfg["is_fp_zero_point"] = zp == "float"
    if scheme.get("global_scale", "none") != "none":
        cfg["weight_scale_2_type"] = scheme["global_scale"]
    if scheme.get("act_order"):
        raise Unsupported("act-order weights are not supported by humming-kernels")
    return cfg


def input_config(act: dict) -> dict | None:
    """Our ActivationScheme (as a dict) -> the library's ``input_config`` (None: 16-bit)."""
    if act["quant"] == "none":
        return None
    if act["fmt"] not in _ACT_DTYPES:
        raise Unsupported(f"activation format {act['fmt']} has no humming-kernels equivalent")
    cfg = {"dtype": _ACT_DTYPES[act["fmt"]], "input_quant_mode": act["quant"]}
    if act.get("group_size"):
        cfg["group_size"] = act["group_size"]
    return cfg


def intervals(ms: list[int], configs: list[dict]) -> list:
    """One ``[lo, hi, cfg]`` per benchmarked M (the library picks ``lo < m <= hi``)."""
    out, lo = [], 0
    for i, (m, cfg) in enumerate(zip(ms, configs)):
        hi = (1 << 30) if i == len(ms) - 1 else m
        out.append([lo, hi, cfg])
        lo = m
    return out


def load_bench_lib(folder: str):
    """Our ``timing`` and ``schema`` modules, by path (they import only the standard library)."""
    mods = []
    for name in ("timing", "schema"):
        spec = importlib.util.spec_from_file_location(f"_humming_bench_{name}", Path(folder) / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        mods.append(mod)
    return mods


# ---------------------------------------------------------------------------
# data, drawn exactly as humming.bench.methods.WorkloadData draws it
# ---------------------------------------------------------------------------


def _gen(torch, device, seed, salt):
    g = torch.Generator(device=device)
    g.manual_seed(seed * 1000003 + salt)
    return g


def master_weight(torch, wl, device, seed, chunk_elems=1 << 28):
    shape = ((wl["num_experts"],) if wl["num_experts"] else ()) + (wl["n"], wl["k"])
    w = torch.empty(shape, dtype=torch.float16, device=device)
    flat = w.view(-1, wl["k"])
    g = _gen(torch, device, seed, 1)
    rows = max(1, chunk_elems // wl["k"])
    for r in range(0, flat.shape[0], rows):
        part = flat[r:r + rows]
        part.copy_(torch.randn(part.shape, generator=g, device=device) * 0.02)
    return w


def activations(torch, wl, m, device, seed):
    return torch.randn(m, wl["k"], generator=_gen(torch, device, seed, 2 + m), device=device)


def routing(torch, wl, m, device, seed):
    scores = torch.rand(m, wl["num_experts"], generator=_gen(torch, device, seed, 7 + m), device=device)
    return scores.topk(wl["topk"], dim=1).indices.to(torch.int32)


def fake_quant(torch, x, act):
    """The activations as a dynamically quantizing kernel sees them (fp32)."""
    if act["quant"] == "none":
        return x
    fmt = act["fmt"]
    fmax = {"e4m3": 448.0, "e5m2": 57344.0, "int8": 127.0, "int4": 7.0, "e2m1": 6.0}[fmt]
    g = act.get("group_size") if act["quant"] == "dynamic_group" else x.shape[-1]
    xg = x.reshape(x.shape[0], -1, g)
    amax = xg.abs().amax(dim=-1, keepdim=True)
    s = torch.where(amax > 0, amax / fmax, torch.ones_like(amax))
    v = xg / s
    if fmt == "e4m3":
        v = v.to(torch.float8_e4m3fn).float()
    elif fmt == "e5m2":
        v = v.to(torch.float8_e5m2).float()
    elif fmt in ("int8", "int4"):
        v = torch.round(v).clamp(-fmax - 1, fmax)
    else:
        raise Unsupported(f"no reference quantizer for {fmt} activations")
    return (v * s).reshape(x.shape)


# ---------------------------------------------------------------------------
# one workload
# ---------------------------------------------------------------------------


class Workload:
    def __init__(self, req, wl, timing, schema, timer, log):
        self.req, self.wl, self.timing, self.schema, self.timer, self.log = req, wl, timing, schema, timer, log
        self.name = req.get("method", METHOD)
        self.rows, self.jit = [], []

    def row(self, m, status, reason=None, **kw):
        self.rows.append(self.schema.result_row(self.wl["name"], m, self.name, "external", status=status,
                                                reason=reason, flops=self.flops(m), **kw))

    def flops(self, m):
        return 2.0 * m * (self.wl["topk"] or 1) * self.wl["n"] * self.wl["k"]

    def run(self):
        try:
            self._run()
        except Unsupported as e:
            self._fill("skipped", str(e))
        except Exception as e:  # noqa: BLE001 -- the report says what broke
            self._fill("error", f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:300])
        return self.rows

    def _fill(self, status, reason):
        done = {r["m"] for r in self.rows}
        for m in self.req["ms"]:
            if m not in done:
                self.row(m, status, reason)

    def _run(self):
        import torch
        from humming.forward import humming_forward
        from humming.layer import HummingLayer
        from humming.schema import HummingWeightSchema
        from humming.tune import get_heuristics_config

        req, wl = self.req, self.wl
        dev = torch.device("cuda")
        seed = req["seed"]
        act = wl["activation_scheme"]
        dtype = torch.bfloat16 if act["fmt"] == "bf16" else torch.float16
        e, topk = wl["num_experts"], wl["topk"]
        layer = HummingLayer(shape_n=wl["n"], shape_k=wl["k"], weight_config=weight_config(wl["weight_scheme"]),
                             input_config=input_config(act), num_experts=e or None, torch_dtype=dtype).cuda()
        w16 = master_weight(torch, wl, dev, seed)
        tensors = HummingWeightSchema.quant_tensor(w16.to(dtype), layer.weight_schema, dtype)
        schema_w = layer.weight_schema

        def dequant(expert=None):
            t = tensors if expert is None else {k: v[expert] for k, v in tensors.items()}
            return schema_w.dequant_tensors(t).float()

        w_deq = None if e else dequant()
        layer.load_from_tensors(tensors)
        layer.transform()
        config = layer.humming_config
        gemm_type = "indexed" if e else "dense"
        ms = req["ms"]
        eff = [m * (topk or 1) for m in ms]
        configs = [get_heuristics_config(config, shape_m=x, gemm_type=gemm_type) for x in eff]
        tuning = intervals(eff, configs)
        compute = {"gemm_type": gemm_type}
        names = ("weight", "weight_scale", "zero_point", "weight_scale_2", "bias")
        base = {n: getattr(layer, n, None) for n in names}
        per_copy = sum(t.numel() * t.element_size() for t in base.values() if t is not None)
        if e:
            min_bytes = per_copy * topk // e
        else:
            min_bytes = per_copy
        copies = self.timing.copies_for(min_bytes, req["l2_bytes"], max_copies=req["max_copies"])
        weights = [base] + [{n: None if t is None else t.clone() for n, t in base.items()} for _ in range(copies - 1)]
        locks = [torch.zeros(2048, dtype=torch.int32, device=dev) for _ in range(copies)]
        tol = 2e-2 if act["quant"] != "none" else 1e-2
        first_call = True
        for m, cfg in zip(ms, configs):
            x32 = activations(torch, wl, m, dev, seed)
            x = x32.to(dtype)
            moe = {}
            if e:
                from humming.testing.data import generate_moe_tensors

                ids = routing(torch, wl, m, dev, seed)
                _, _, sorted_ids, expert_ids, padded = generate_moe_tensors(
                    ids, e, "indexed", block_size_config=int(cfg["block_shape"][0]))
                moe = dict(sorted_ids=sorted_ids, expert_ids=expert_ids, num_tokens_padded=padded, top_k=topk)

            def call(i, x=x, moe=moe):
                wt = weights[i]
                return humming_forward(config, inputs=x, weight=wt["weight"], weight_scale=wt["weight_scale"],
                                       zero_point=wt["zero_point"], bias=wt["bias"],
                                       weight_scale_2=wt["weight_scale_2"], locks=locks[i],
                                       compute_config=compute, tuning_config=tuning, **moe)

            calls = [lambda i=i: call(i) for i in range(copies)]
            if first_call:  # compiles every benchmarked M's kernel, in parallel, into a fresh cache
                t0 = time.perf_counter()
                calls[0]()
                torch.cuda.synchronize()
                self.jit.append({"what": f"first call, compiles {len({json.dumps(c, sort_keys=True) for c in configs})}"
                                         f" kernels ({wl['name']})", "cold_s": time.perf_counter() - t0})
                first_call = False
            rows = torch.linspace(0, m - 1, min(m, req["check_rows"])).round().long().unique().to(dev)
            xe = fake_quant(torch, x.float(), act)[rows].double()
            if e:
                sel = ids[rows].long()
                expected = torch.empty(sel.shape + (wl["n"],), dtype=torch.float64, device=dev)
                for ex in torch.unique(sel).tolist():
                    hit = sel == ex
                    expected[hit] = xe[torch.nonzero(hit)[:, 0]] @ dequant(ex).double().T
                wbytes = per_copy * int(torch.unique(ids).numel()) // e
            else:
                expected = xe @ w_deq.double().T
                wbytes = per_copy
            expected = expected.float()
            err = 0.0
            for c in (calls[0], calls[-1]):
                y = c().float().reshape((m,) + tuple(expected.shape[1:]))[rows]
                ok = torch.isfinite(y).all()
                err = max(err, float((y - expected).norm() / expected.norm().clamp_min(1e-30)) if ok else float("inf"))
            io = int(wbytes + m * wl["k"] * 2 + m * (topk or 1) * wl["n"] * 2)
            common = dict(weight_bytes=int(wbytes), io_bytes=io, rel_err=err)
            if not err <= tol:
                self.row(m, "wrong", f"relative error {err:.3g} against x @ dequant(W) exceeds {tol:g}; not timed",
                         **common)
                continue
            meas = self.timing.time_calls(calls, self.timer, repeats=req["repeats"], target_s=req["target_s"],
                                          min_calls=req.get("min_calls", self.timing.MIN_CALLS),
                                          warmup_s=max(req.get("warmup_s", self.timing.WARMUP_S),
                                                       req.get("first_warmup_s", 0.0) if m == ms[0] else 0.0))
            self.timer.release()
            self.row(m, "ok", measurement=meas, **common)
            self.log(f"{wl['name']} M={m}: {meas.median_us:.1f} us")
            if m == ms[0] and req.get("host_overhead", True):
                us = self.timing.host_overhead_us(calls[0], hold=lambda: torch.cuda._sleep(200_000_000),
                                                  sync=torch.cuda.synchronize)
                self.jit.append({"what": f"eager host overhead ({wl['name']})", "m": m, "host_us_per_call": us})


def ensure_executables() -> None:
    """Give the library's prebuilt helpers their exec bit back (unpacking a wheel
    with Python's zipfile drops it; the library runs ``nvrtc_compile`` as a program)."""
    spec = importlib.util.find_spec("humming")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for path in Path(folder, "_native").glob("*/*"):
            if path.suffix in ("", ".so") and not os.access(path, os.X_OK):
                try:
                    path.chmod(path.stat().st_mode | 0o111)
                except OSError:
                    pass


def environment(torch, humming) -> dict:
    props = torch.cuda.get_device_properties(0)
    return {"versions": {"humming-kernels": getattr(humming, "__version__", None), "torch": torch.__version__,
                         "torch_cuda": torch.version.cuda, "python": sys.version.split()[0],
                         "humming_path": str(Path(humming.__file__).resolve().parent)},
            "device": {"name": props.name, "sm_count": props.multi_processor_count}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--request", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    req = json.loads(Path(args.request).read_text())
    timing, schema = load_bench_lib(req["bench_lib"])
    # a fresh compile cache: the first call of each workload measures a cold compile
    os.environ.setdefault("HUMMING_CACHE_DIR", tempfile.mkdtemp(prefix="humming-kernels-cache-"))
    ensure_executables()
    import torch

    import humming

    ours = Path(req["bench_lib"]).resolve().parent  # this repository's humming package
    if Path(humming.__file__).resolve().parent == ours:
        raise SystemExit(f"import humming found this repository's package ({ours}), not humming-kernels: "
                         "put the folder holding humming-kernels first on PYTHONPATH")

    log = lambda text: print(f"[{METHOD}] {text}", file=sys.stderr, flush=True)  # noqa: E731
    log(f"humming-kernels {getattr(humming, '__version__', '?')} from {Path(humming.__file__).parent}")
    report = schema.new_report({"library": req.get("method", METHOD), "version": getattr(humming, "__version__", None)},
                               {k: v for k, v in req.items() if k != "workloads"}, environment(torch, humming))
    report["workloads"] = [{k: wl[k] for k in ("name", "model", "kind", "n", "k", "num_experts", "topk", "weight",
                                               "activation")} for wl in req["workloads"]]
    timer = timing.CudaGraphTimer("cuda")
    for wl in req["workloads"]:
        w = Workload(req, wl, timing, schema, timer, log)
        report["results"] += w.run()
        report["jit"] += w.jit
        torch.cuda.empty_cache()
    report["notes"].append("disk-cache hits are not measured for humming-kernels (one process per run)")
    schema.validate_report(report, derived=False)
    Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
