"""The harness on a GPU: every baseline passes its reference check and is
timed from CUDA-graph replays; the ceilings measure; ``humming bench`` writes
its table, JSON and plots. (No timing assertions: only that figures exist.)"""
from __future__ import annotations

import json
import math

import pytest
import torch

from humming.bench import schema
from humming.bench.ceilings import DeviceCeilings
from humming.bench.cli import cli_main
from humming.bench.methods import default_methods
from humming.bench.runner import BenchOptions, run_bench
from humming.bench.timing import CudaGraphTimer, host_overhead_us
from humming.bench.workloads import Workload, activation_scheme_from, weight_scheme_from

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

W4 = weight_scheme_from("int4", 128)
A16 = activation_scheme_from("fp16")


def _finite_positive(v):
    return v is not None and math.isfinite(v) and v > 0


def test_sweep_on_gpu_checks_and_times_every_baseline():
    timer = CudaGraphTimer("cuda")
    ce = DeviceCeilings("cuda", timer, repeats=3, copy_bytes=1 << 26, matmul_size=2048)
    wls = [Workload("g/dense", "g", 1024, 2048, W4, A16), Workload("g/moe", "g", 256, 512, W4, A16, 16, 4)]
    host = lambda call: host_overhead_us(call, n=20, hold=lambda: torch.cuda._sleep(20_000_000),  # noqa: E731
                                         sync=torch.cuda.synchronize)
    report = run_bench(wls, default_methods(), BenchOptions(ms=(1, 33, 256), repeats=3), device="cuda",
                       timer=timer, ceilings=ce, host_overhead=host)
    schema.validate_report(report)
    for r in report["results"]:
        where = f"{r['workload']} {r['method']} M={r['m']}: {r['status']} {r['reason']}"
        if r["method"] == "humming":
            assert r["status"] in ("ok", "skipped"), where
            continue
        assert r["status"] == "ok", where
        assert r["rel_err"] < 1e-2 and _finite_positive(r["median_us"]) and r["copies"] >= 2, where
        assert _finite_positive(r["x_stream"]) and _finite_positive(r["x_floor"]), where
    for key in ("copy_gbps", "bf16_tflops", "fp8_tflops"):
        assert _finite_positive(report["ceilings"][key]), key
    assert any(j["what"] == "eager host overhead cublas-fp16" for j in report["jit"])


def test_cli_quick_run_writes_table_json_and_plots(tmp_path, capsys):
    rc = cli_main(["--shapes", "2048x1024", "--m", "1,64", "--quick", "--out", str(tmp_path),
                   "--methods", "humming,cublas-fp16,tinygemm-int4"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "== custom/2048x1024" in out and "ceilings: copy" in out
    report = schema.validate_report(json.loads((tmp_path / "report.json").read_text()))
    assert report["env"]["device"]["sm_count"] > 0 and report["env"]["versions"]["torch"]
    figs = {j["what"]: j for j in report["jit"]}
    assert figs["compile stream-read kernel"]["cold_s"] > 0 and figs["compile stream-read kernel"]["memory_us"] > 0
    if any(r["method"] == "humming" and r["status"] == "ok" for r in report["results"]):
        assert "compile humming custom/2048x1024 M=1" in figs
        assert figs["eager host overhead humming"]["host_us_per_call"] > 0
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "custom_2048x1024.png").exists()
