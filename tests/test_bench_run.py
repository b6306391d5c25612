"""The benchmark harness on CPU: the timing method against a fake clock, the
sweep with real CPU baselines and fake humming ops, the report (schema, table,
JSON, plots) and the external-library protocol."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
import torch

import humming.ops
from humming import reference as ref
from humming.bench import schema
from humming.bench.methods import (CublasMethod, HummingMethod, Instance, Method, Prepared, ScaledMMMethod,
                                   TinyGemmMethod, TorchLoopMoEMethod)
from humming.bench.report import format_summary, format_table, plot_report, write_json
from humming.bench.runner import (BenchOptions, ExternalSpec, Progress, check_instance, merge_external,
                                  run_bench, run_external, sample_rows)
from humming.bench.timing import Measurement, copies_for, host_overhead_us, time_calls
from humming.bench.workloads import Workload, activation_scheme_from, weight_scheme_from


class Clock:
    """A fake device clock: calls advance it, timers read it."""

    def __init__(self):
        self.t = 0.0
        self.slowdown = []  # per timed replay batch: extra factor, consumed in order

    def tick(self, us: float) -> None:
        self.t += us * 1e-6


class FakeTimer:
    """The Timer protocol over a Clock: build() runs each call once (warm-up)
    and returns a replay of all calls; time() reads the clock."""

    def __init__(self, clock: Clock):
        self.clock = clock
        self.built = []
        self.timed_iters = []

    def build(self, calls):
        for c in calls:
            c()
        self.built.append(len(calls))
        return lambda: [c() for c in calls]

    def time(self, replay, iters):
        t0 = self.clock.t
        for _ in range(iters):
            replay()
        dt = self.clock.t - t0
        self.timed_iters.append(iters)
        if self.clock.slowdown:
            dt *= self.clock.slowdown.pop(0)
        return dt


# ---------------------------------------------------------------------------
# timing method
# ---------------------------------------------------------------------------


def test_copies_for_beats_three_l2():
    l2 = 60 << 20
    for nbytes in (1 << 20, 8_700_000, 30_300_000, 61 << 20, 500 << 20):
        r = copies_for(nbytes, l2)
        assert r >= 2
        assert r * nbytes > 3 * l2 or r == 64
        assert (r - 1) * nbytes <= 3 * l2 or r == 2  # no more than needed
    assert copies_for(1000, l2) == 64  # capped
    assert copies_for(1000, l2, max_copies=8) == 8
    with pytest.raises(ValueError, match="weight_bytes"):
        copies_for(0, l2)


def test_time_calls_per_call_time_from_fake_clock():
    clock = Clock()
    costs = [10.0, 12.0, 14.0]  # each weight copy's call takes its own time
    calls = [lambda c=c: clock.tick(c) for c in costs]
    timer = FakeTimer(clock)
    meas = time_calls(calls, timer, repeats=5, warmup=2, target_s=1e-3, min_calls=1)
    assert meas.copies == 3
    assert meas.median_us == pytest.approx(12.0)  # mean over the copies of one replay
    assert len(meas.samples_us) == 5
    # one replay is 36 us, so 1 ms needs ceil(1000 / 36) = 28 replays per repeat
    assert meas.iters == 28
    assert timer.timed_iters == [1] + [28] * 5
    assert timer.built == [3]


def test_time_calls_warms_up_for_warmup_s_untimed():
    """Before the timed repeats the unit is replayed, untimed, for at least warmup_s (the device's
    clocks coming back from idle), at most 20 x max_iters times."""
    clock = Clock()
    n = []
    calls = [lambda: (n.append(1), clock.tick(100.0))]
    timer = FakeTimer(clock)
    meas = time_calls(calls, timer, repeats=3, warmup=0, target_s=0.95e-3, min_calls=1, warmup_s=0.04995)
    # calibration (1 replay), 0.04995 s / 100 us -> 500 warm-up replays, then 3 repeats of 10 replays
    assert timer.timed_iters == [1, 10, 10, 10] and meas.iters == 10
    assert len(n) == 1 + 1 + 500 + 30  # (the build runs each call once)
    n.clear()
    time_calls(calls, FakeTimer(clock), repeats=3, warmup=0, target_s=0.95e-3, min_calls=1, warmup_s=10.0, max_iters=5)
    assert len(n) == 1 + 1 + 100 + 3 * 5
    n.clear()
    time_calls(calls, FakeTimer(clock), repeats=3, warmup=0, target_s=0.95e-3, min_calls=1, warmup_s=0.0)
    assert len(n) == 1 + 1 + 30


def test_time_calls_repeats_the_copies_whole_up_to_min_calls():
    """Few copies (a large layer) are captured twice or more, in the same order, so that every call
    is still R - 1 copies away from its copy's last use and a unit holds at least MIN_CALLS calls."""
    from humming.bench.timing import MIN_CALLS

    clock = Clock()
    order = []
    calls = [lambda c=c: (order.append(c), clock.tick(10.0 + c)) for c in range(2)]
    timer = FakeTimer(clock)
    meas = time_calls(calls, timer, repeats=3, warmup=0, target_s=1e-3)
    assert MIN_CALLS == 5 and timer.built == [6]  # two copies: the pair three times
    assert meas.copies == 2
    assert meas.median_us == pytest.approx(10.5)
    assert order[:6] == [0, 1, 0, 1, 0, 1]
    for cs, mc, built in ((calls * 3, MIN_CALLS, 6), (calls[:1], 4, 4)):  # six copies: once; one copy: four times
        t = FakeTimer(Clock())
        time_calls(cs, t, repeats=3, min_calls=mc)
        assert t.built == [built]
    with pytest.raises(ValueError, match="min_calls must be >= 1"):
        time_calls(calls, FakeTimer(Clock()), repeats=3, min_calls=0)


def test_time_calls_median_and_spread_ignore_warmup_and_outliers():
    clock = Clock()
    calls = [lambda: clock.tick(100.0)]
    clock.slowdown = [1.0, 1.0, 3.0, 1.1, 0.9, 1.0]  # calibration, then 5 repeats with one outlier
    meas = time_calls(calls, FakeTimer(clock), repeats=5, warmup=3, target_s=1e-9)
    assert meas.iters == 1
    assert meas.median_us == pytest.approx(100.0)
    assert meas.max_us == pytest.approx(300.0) and meas.min_us == pytest.approx(90.0)
    assert meas.spread == pytest.approx(2.1)


def test_time_calls_rejects_too_few_repeats_and_no_calls():
    timer = FakeTimer(Clock())
    with pytest.raises(ValueError, match="repeats must be >= 3"):
        time_calls([lambda: None], timer, repeats=2)
    with pytest.raises(ValueError, match="at least one call"):
        time_calls([], timer)


def test_host_overhead_measures_the_issue_loop_only():
    clock = Clock()
    events = []
    calls = []

    def call():
        calls.append(1)
        clock.tick(7.0)

    us = host_overhead_us(call, n=50, hold=lambda: events.append("hold"), sync=lambda: events.append("sync"),
                          clock=lambda: clock.t)
    assert us == pytest.approx(7.0)
    assert len(calls) == 51  # one untimed first call
    assert events == ["sync", "hold", "sync"]


# ---------------------------------------------------------------------------
# the sweep with fakes
# ---------------------------------------------------------------------------


class Clocked(Method):
    """A real method whose calls also advance the fake clock by ``cost(m)`` us."""

    def __init__(self, inner: Method, clock: Clock, cost):
        self.inner, self.clock, self.cost = inner, clock, cost
        self.name, self.role, self.kinds, self.tol = inner.name, inner.role, inner.kinds, inner.tol

    def unavailable(self, wl, device):
        return self.inner.unavailable(wl, device)

    def copy_bytes(self, data):
        return self.inner.copy_bytes(data)

    def prepare(self, data, copies):
        p = self.inner.prepare(data, copies)

        def instance(m):
            i = p.instance(m)

            def timed(call):
                def run():
                    self.clock.tick(self.cost(m))
                    return call()
                return run

            return Instance([timed(c) for c in i.calls], i.reference, i.weight_bytes, i.io_bytes)

        return Prepared(instance, handle=p.handle)


class _FakePrepared:
    def __init__(self, qw, offset, notes=()):
        self.qw = qw
        self.nbytes = int(qw.nbytes())
        self.offset = offset
        self.plan = type("Plan", (), {"notes": tuple(notes)})()

    def kernel_specs(self, ms):
        return [f"gemm-spec-m{m}" for m in ms]


PREPARED = []


def _fake_ops(monkeypatch, offset=0.0, notes=()):
    """humming.ops.prepare_weight/gemm/moe_gemm computed with the reference (plus
    ``offset`` to make a wrong kernel; ``notes``: those of the prepared weights' plans)."""
    def prepare_weight(qw, layer=None, device=None):
        assert layer.n == qw.n and layer.k == qw.k
        PREPARED.append(qw)
        return _FakePrepared(qw, offset, notes)

    PREPARED.clear()

    def gemm(x, p, bias=None):
        return (x.float() @ ref.dequantize(p.qw).T + p.offset).to(x.dtype)

    def moe_gemm(x, p, topk_ids, topk_weights=None):
        return (ref.moe_gemm(x, p.qw, topk_ids) + p.offset).to(x.dtype)

    for name, fn in (("prepare_weight", prepare_weight), ("gemm", gemm), ("moe_gemm", moe_gemm)):
        monkeypatch.setattr(humming.ops, name, fn, raising=False)


W4 = weight_scheme_from("int4", 64)
A16 = activation_scheme_from("fp16")
DENSE = Workload("t/dense", "t", 96, 256, W4, A16)
MOE = Workload("t/moe", "t", 64, 128, W4, A16, num_experts=6, topk=2)
MS = (1, 5, 33)


def _sweep(monkeypatch, methods_for, offset=0.0, workloads=(DENSE, MOE), notes=(), **kw):
    _fake_ops(monkeypatch, offset, notes)
    clock = Clock()
    methods = methods_for(clock)
    timer = FakeTimer(clock)
    report = run_bench(list(workloads), methods, BenchOptions(ms=MS, repeats=3, target_s=1e-9, l2_bytes=1 << 14,
                                                                    warmup_s=0.0),
                       device="cpu", timer=timer, **kw)
    return report, timer


def _cost(base):
    return lambda m: base + 0.5 * m


def _all_methods(clock):
    return [Clocked(HummingMethod(), clock, _cost(5.0)), Clocked(CublasMethod("fp16"), clock, _cost(20.0)),
            Clocked(ScaledMMMethod("tensor"), clock, _cost(10.0)), Clocked(ScaledMMMethod("row"), clock, _cost(12.0)),
            Clocked(TinyGemmMethod(), clock, _cost(1.0)), Clocked(TorchLoopMoEMethod(), clock, _cost(30.0))]


class FakeCeilings:
    l2_bytes = 1 << 14

    def __init__(self):
        self.streamed = []

    def copy_gbps(self):
        return 4000.0

    def bf16_tflops(self):
        return 700.0

    def fp8_tflops(self):
        raise RuntimeError("no fp8 here")

    def stream_us(self, nbytes):
        self.streamed.append(nbytes)
        return nbytes / 2e3  # 2 GB/s, i.e. bytes / 2000 us


def test_sweep_checks_times_and_reports(monkeypatch):
    ce = FakeCeilings()
    host = []
    report, timer = _sweep(monkeypatch, _all_methods, ceilings=ce, host_overhead=lambda call: host.append(call) or 3.5,
                           compile_figures=lambda spec: {"spec": spec, "cold_s": 0.5},
                           jit_specs=[("extra", "extra-spec")])
    schema.validate_report(report)
    rows = {(r["workload"], r["m"], r["method"]): r for r in report["results"]}
    # methods run only the kinds they support: no cuBLAS row for MoE, no loop row for dense
    assert ("t/moe", 1, "cublas-fp16") not in rows and ("t/dense", 1, "torch-loop-fp16") not in rows
    for m in MS:
        h = rows[("t/dense", m, "humming")]
        assert h["status"] == "ok" and h["rel_err"] < 1e-3
        assert h["median_us"] == pytest.approx(5.0 + 0.5 * m)
        c = rows[("t/dense", m, "cublas-fp16")]
        assert c["status"] == "ok" and c["median_us"] == pytest.approx(20.0 + 0.5 * m)
        assert h["speedup"]["cublas-fp16"] == pytest.approx(c["median_us"] / h["median_us"])
        for mode in ("tensor", "row"):  # real torch._scaled_mm on CPU against the reference
            s = rows[("t/dense", m, f"scaled-mm-fp8-{mode}")]
            assert s["status"] == "ok" and s["rel_err"] < 1e-2
        t = rows[("t/dense", m, "tinygemm-int4")]  # torch's CPU twin of tinygemm
        assert t["status"] == "ok" and t["rel_err"] < 1e-2 and t["speedup"] == {}
        moe = rows[("t/moe", m, "humming")]
        assert moe["status"] == "ok" and moe["speedup"]["torch-loop-fp16"] > 1
        assert rows[("t/moe", m, "torch-loop-fp16")]["status"] == "ok"
        assert c["speedup"] == {}  # baselines carry no speedups
    # weight copies: R x bytes > 3 x L2 (16 KiB here), each call on its own copy
    h = rows[("t/dense", 1, "humming")]
    assert h["copies"] == 4 and rows[("t/dense", 1, "cublas-fp16")]["copies"] == 2
    moe_copies = rows[("t/moe", 1, "humming")]["copies"]  # sized by the top-2 experts one token reads
    assert moe_copies == copies_for(2 * int(W4.bytes_per_weight(64, 128)), 1 << 14) == 6
    assert len(PREPARED) == 4 + moe_copies  # humming prepares once per copy
    # derived figures from the fake ceilings
    assert h["weight_bytes"] == int(W4.bytes_per_weight(96, 256))
    assert h["floor_us"] == pytest.approx(h["weight_bytes"] / 4000.0 / 1e3)
    assert h["stream_us"] == pytest.approx(h["weight_bytes"] / 2e3)
    assert h["x_stream"] == pytest.approx(h["median_us"] / h["stream_us"])
    assert h["tflops"] == pytest.approx(2 * 96 * 256 / (h["median_us"] * 1e-6) / 1e12)
    # MoE weight bytes are those of the experts the routing touched
    moe1 = rows[("t/moe", 1, "humming")]
    assert moe1["weight_bytes"] == int(6 * W4.bytes_per_weight(64, 128)) * 2 // 6
    assert report["ceilings"]["copy_gbps"] == 4000.0 and report["ceilings"]["fp8_tflops"] is None
    assert any("fp8_tflops" in n for n in report["notes"])
    assert sorted(set(ce.streamed)) == sorted(int(k) for k in report["ceilings"]["stream_us"])
    # host overhead measured once per method, on the first workload at the smallest M
    figs = [j for j in report["jit"] if j["what"].startswith("eager host overhead")]
    assert {j["what"].split()[-1] for j in figs} == {"humming", "cublas-fp16", "scaled-mm-fp8-tensor",
                                                     "scaled-mm-fp8-row", "tinygemm-int4"}
    assert all(j["host_us_per_call"] == 3.5 and j["m"] == 1 for j in figs)
    # compile figures: the extra spec, and humming's kernel for the smallest M (once per run)
    compiles = [(j["what"], j["spec"]) for j in report["jit"] if "cold_s" in j]
    assert compiles == [("compile extra", "extra-spec"), ("compile humming t/dense M=1", "gemm-spec-m1")]


def test_a_plan_on_measured_tuning_is_named_in_the_report(monkeypatch):
    tuned = "tuning database /x/tuning.json: tuning measured for this layer (...); it differs in M 9-16"
    report, _ = _sweep(monkeypatch, lambda clock: [Clocked(HummingMethod(), clock, _cost(5.0))],
                       workloads=(DENSE,), notes=("another note", tuned))
    assert [n for n in report["notes"] if "tuning database" in n] == [f"humming t/dense: {tuned}"]
    report, _ = _sweep(monkeypatch, lambda clock: [Clocked(HummingMethod(), clock, _cost(5.0))],
                       workloads=(DENSE,), notes=("another note",))
    assert not [n for n in report["notes"] if "tuning database" in n]


@pytest.mark.parametrize("offset", [0.25, float("nan")])
def test_wrong_kernel_is_reported_and_never_timed(monkeypatch, offset):
    report, timer = _sweep(monkeypatch, lambda clock: [Clocked(HummingMethod(), clock, _cost(5.0))], offset=offset,
                           workloads=(DENSE,))
    rows = report["results"]
    assert [r["status"] for r in rows] == ["wrong"] * len(MS)
    assert all("not timed" in r["reason"] and r["median_us"] is None for r in rows)
    if offset == offset:
        assert all(r["rel_err"] > 1e-2 for r in rows)
    else:  # NaN output: no finite error to report, and the JSON stays valid
        assert all(r["rel_err"] is None and "non-finite" in r["reason"] for r in rows)
    assert timer.built == [] and timer.timed_iters == []
    assert "WRONG" in format_table(schema.validate_report(report))


class _Broken(Method):
    name = "broken"

    def copy_bytes(self, data):
        return 1000

    def prepare(self, data, copies):
        raise RuntimeError("no kernel for this\nsecond line")


class _NotHere(Method):
    name = "not-here"

    def unavailable(self, wl, device):
        return "not on this machine"


def test_failures_become_rows_with_reasons(monkeypatch):
    report, _ = _sweep(monkeypatch, lambda clock: [_Broken(), _NotHere()], workloads=(DENSE,))
    schema.validate_report(report)
    by = {(r["method"], r["status"]) for r in report["results"]}
    assert by == {("broken", "error"), ("not-here", "skipped")}
    err = next(r for r in report["results"] if r["method"] == "broken")
    assert err["reason"] == "prepare failed: RuntimeError: no kernel for this"
    text = format_table(report)
    assert "note not-here: not on this machine" in text


def test_check_instance_flags_shape_and_nan():
    expected = torch.ones(4, 3)
    good = Instance([lambda: torch.ones(4, 3)] * 2, lambda rows: expected[rows], 1, 1)
    assert check_instance(good, 4) == 0.0
    nan = Instance([lambda: torch.full((4, 3), float("nan"))], lambda rows: expected[rows], 1, 1)
    assert check_instance(nan, 4) == float("inf")
    shape = Instance([lambda: torch.ones(4, 2)], lambda rows: expected[rows], 1, 1)
    assert check_instance(shape, 4) == float("inf")
    flat = Instance([lambda: torch.ones(8, 3)], lambda rows: torch.ones(len(rows), 2, 3), 1, 1)
    assert check_instance(flat, 4) == 0.0  # [M * topk, N] is read as [M, topk, N]
    assert sample_rows(1000, 8).tolist()[0] == 0 and sample_rows(1000, 8).tolist()[-1] == 999
    assert sample_rows(3, 32).tolist() == [0, 1, 2]


# ---------------------------------------------------------------------------
# report: schema, JSON, table, plots
# ---------------------------------------------------------------------------


def _tiny_report():
    r = schema.new_report({"library": "humming", "version": "0"})
    r["workloads"] = [DENSE.to_dict()]
    meas = lambda us: Measurement((us * 0.9, us, us * 1.2), 4, 10)  # noqa: E731
    r["results"] = [
        schema.result_row("t/dense", 1, "humming", "primary", measurement=meas(10.0), weight_bytes=2000,
                          flops=DENSE.flops(1), io_bytes=3000),
        schema.result_row("t/dense", 1, "cublas-fp16", "baseline", measurement=meas(30.0), weight_bytes=8000,
                          flops=DENSE.flops(1), io_bytes=9000),
        schema.result_row("t/dense", 1, "ext", "external", measurement=meas(20.0), weight_bytes=2100,
                          flops=DENSE.flops(1), io_bytes=3100),
    ]
    r["ceilings"].update(copy_gbps=4000.0, stream_us={"2000": 2.0})
    return schema.finalize(r)


def test_finalize_speedups_by_role():
    r = _tiny_report()
    h, c, e = r["results"]
    assert h["speedup"] == {"cublas-fp16": pytest.approx(3.0), "ext": pytest.approx(2.0)}
    assert e["speedup"] == {"cublas-fp16": pytest.approx(1.5)}  # external: only against baselines
    assert c["speedup"] == {}
    assert h["x_stream"] == pytest.approx(5.0) and e["stream_us"] is None
    assert h["gbps"] == pytest.approx(3000 / 10e-6 / 1e9)


@pytest.mark.parametrize("path, value, message", [
    (("schema",), "other", "report.schema: expected 'humming-bench'"),
    (("results", 0, "median_us"), None, "report.results[0].median_us: expected a positive time"),
    (("results", 1, "role"), "boss", "report.results[1].role: expected one of"),
    (("results", 2, "m"), "1", "report.results[2].m: expected int, found str"),
    (("results", 0, "workload"), "nope", "report.results[0].workload: expected one of the report's workloads"),
    (("ceilings", "stream_us"), {"2000": -1}, "report.ceilings.stream_us['2000']"),
    (("workloads", 0, "kind"), "sparse", "report.workloads[0].kind"),
    (("results", 0, "samples_us"), [1.0], "at least 3 repeats"),
    (("results", 0, "speedup"), None, "report.results[0].speedup: expected dict"),
])
def test_validate_report_names_the_field(path, value, message):
    r = _tiny_report()
    schema.validate_report(r)
    obj = r
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        schema.validate_report(r)


def test_validate_report_missing_field_and_raw_mode():
    r = _tiny_report()
    del r["results"][0]["tflops"]
    with pytest.raises(ValueError, match=r"report.results\[0\].tflops: expected a field"):
        schema.validate_report(r)
    schema.validate_report(r, derived=False)


def test_json_roundtrip_table_and_summary(tmp_path):
    r = _tiny_report()
    r["jit"].append({"what": "compile x", "cold_s": 0.41})
    path = write_json(r, tmp_path / "a" / "report.json")
    back = schema.validate_report(json.loads(path.read_text()))
    assert back["results"][0]["speedup"]["cublas-fp16"] == pytest.approx(3.0)
    table = format_table(back)
    assert "== t/dense: N=96 K=256" in table
    head = next(l for l in table.splitlines() if l.startswith("M "))
    assert "vs cublas-fp16" in head and "vs ext" in head and "x stream" in head
    line = next(l for l in table.splitlines() if l.startswith("1 ") and "humming" in l)
    assert " 10.0 " in line and " 3.00" in line and " 2.00" in line
    summary = format_summary(back)
    assert "compile x: cold_s 0.410" in summary and "4,000 GB/s" in summary
    assert "settings:" not in summary
    back["env"]["settings"] = {"HUMMING_PDL": "0"}  # (bench.env.settings: the run's HUMMING_* variables)
    assert "settings: HUMMING_PDL=0" in format_summary(back)


def test_environment_records_the_humming_settings(monkeypatch):
    from humming.bench import env

    monkeypatch.setenv("HUMMING_PDL", "0")
    monkeypatch.setenv("NOT_OURS", "1")
    monkeypatch.setenv("HUMMING_CACHE_DIR", "/tmp/somewhere")
    st = env.settings()
    assert st["HUMMING_PDL"] == "0" and "NOT_OURS" not in st and "HUMMING_CACHE_DIR" not in st


def test_plots_written_or_skipped_with_a_note(tmp_path):
    notes = []
    paths = plot_report(_tiny_report(), tmp_path, log=notes.append)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert paths == [] and "matplotlib" in notes[0]
        return
    assert [p.name for p in paths] == ["t_dense.png"]
    assert paths[0].read_bytes()[:4] == b"\x89PNG"


def test_progress_lines_on_a_pipe(capsys):
    p = Progress(20, stream=sys.stdout)
    for i in range(20):
        p.step(f"point {i}")
    lines = capsys.readouterr().out.strip().splitlines()
    assert 10 <= len(lines) <= 12 and lines[-1].startswith("[" + "#" * 30 + "] 20/20")


# ---------------------------------------------------------------------------
# external libraries
# ---------------------------------------------------------------------------

_ADAPTER = textwrap.dedent('''
    import argparse, importlib.util, json, sys
    ap = argparse.ArgumentParser(); ap.add_argument("--request"); ap.add_argument("--out")
    a = ap.parse_args()
    req = json.load(open(a.request))
    def load(name):
        spec = importlib.util.spec_from_file_location(name, req["bench_lib"] + f"/{name}.py")
        mod = sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    schema, timing = load("schema"), load("timing")
    import marker_module  # only importable from the given PYTHONPATH
    r = schema.new_report({"library": req["method"], "version": marker_module.VERSION})
    r["workloads"] = [{k: w[k] for k in ("name", "model", "kind", "n", "k", "num_experts", "topk", "weight",
                       "activation")} for w in req["workloads"]]
    for w in req["workloads"]:
        for m in req["ms"]:
            meas = timing.Measurement((7.0, 8.0, 9.0), 2, 1)
            r["results"].append(schema.result_row(w["name"], m, req["method"], "external", measurement=meas,
                                                  weight_bytes=1000, flops=1.0, io_bytes=2000))
    r["jit"].append({"what": "first call", "cold_s": 2.5})
    json.dump(r, open(a.out, "w"))
''')


def test_each_methods_first_point_is_warmed_after_its_preparation(monkeypatch):
    """A method's first point follows its preparation (host work, the GPU idle) and is replayed untimed for at
    least first_warmup_s; its later points keep warmup_s (the H100's first point of 28672x8192 read 49.5 us
    without it, 43.1 with, where the next point of the same kernel read 43.7). The external adapters get it in
    their request."""
    import humming.bench.runner as runner
    from humming.bench.runner import _external_request
    from humming.bench.timing import FIRST_WARMUP_S

    seen = []
    real = runner.time_calls

    def spy(calls, timer, **kw):
        seen.append(kw["warmup_s"])
        return real(calls, timer, **kw)

    monkeypatch.setattr(runner, "time_calls", spy)
    _fake_ops(monkeypatch, 0.0, ())
    clock = Clock()
    methods = [Clocked(HummingMethod(), clock, _cost(5.0)), Clocked(CublasMethod("fp16"), clock, _cost(20.0))]
    for warm, first in ((0.0, 2e-4), (3e-4, 2e-4), (0.0, 0.0)):
        seen.clear()
        report = run_bench([DENSE], methods, BenchOptions(ms=MS, repeats=3, target_s=1e-9, l2_bytes=1 << 14,
                                                          warmup_s=warm, first_warmup_s=first),
                           device="cpu", timer=FakeTimer(clock))
        assert all(r["status"] == "ok" for r in report["results"])
        assert seen == [max(warm, first), warm, warm] * 2  # (humming's three points, then cuBLAS's)
    assert BenchOptions(ms=MS).first_warmup_s == FIRST_WARMUP_S > 0
    req = _external_request(ExternalSpec("libx", "a.py"), [DENSE], BenchOptions(ms=MS, first_warmup_s=0.07), 1 << 20)
    assert req["first_warmup_s"] == 0.07 and req["warmup_s"] == 0.0
    import argparse

    from humming.bench.cli import add_arguments
    parse = add_arguments(argparse.ArgumentParser()).parse_args
    assert parse(["--shapes", "64x64"]).first_warmup_s is None  # (the run takes FIRST_WARMUP_S, and records it)
    assert parse(["--shapes", "64x64", "--first-warmup-s", "0"]).first_warmup_s == 0.0


def test_external_adapter_runs_in_its_own_process(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "marker_module.py").write_text("VERSION = '9.9'\n")
    adapter = tmp_path / "adapter.py"
    adapter.write_text(_ADAPTER)
    opts = BenchOptions(ms=(1, 16), repeats=3)
    ext = run_external(ExternalSpec("libx", str(adapter), str(lib)), [DENSE], opts, 1 << 20)
    assert ext["producer"] == {"library": "libx", "version": "9.9"}
    report = _tiny_report()
    merge_external(report, ext)
    schema.finalize(report)
    schema.validate_report(report)
    rows = [r for r in report["results"] if r["method"] == "libx"]
    assert [r["m"] for r in rows] == [1, 16] and all(r["role"] == "external" for r in rows)
    assert rows[0]["speedup"] == {"cublas-fp16": pytest.approx(30.0 / 8.0)}
    assert report["results"][0]["speedup"]["libx"] == pytest.approx(8.0 / 10.0)
    assert report["jit"][-1] == {"what": "libx: first call", "cold_s": 2.5}


def test_external_adapter_failure_becomes_error_rows(tmp_path):
    adapter = tmp_path / "adapter.py"
    adapter.write_text("import sys\nsys.exit('cannot import humming: no module')\n")
    ext = run_external(ExternalSpec("libx", str(adapter)), [DENSE], BenchOptions(ms=(1, 16)), 0)
    schema.validate_report(ext, derived=False)
    assert [r["status"] for r in ext["results"]] == ["error", "error"]
    assert "exited with 1" in ext["results"][0]["reason"] and "cannot import humming" in ext["results"][0]["reason"]
