"""The humming-kernels adapter's pure parts (CPU): scheme mapping, the
M-interval list, the activation quantizer, and that it draws exactly the data
``humming bench`` draws."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from humming import reference as ref
from humming.bench.methods import WorkloadData
from humming.bench.workloads import Workload, activation_scheme_from, weight_scheme_from
from humming.scheme import WeightScheme

ADAPTER = Path(__file__).resolve().parents[1] / "scripts" / "external" / "humming_kernels_adapter.py"


@pytest.fixture(scope="module")
def adapter():
    spec = importlib.util.spec_from_file_location("hk_adapter", ADAPTER)
    mod = importlib.util.module_from_spec(spec)
    before = set(sys.modules)
    spec.loader.exec_module(mod)
    assert not any(m == "humming" or m.startswith("humming.") for m in set(sys.modules) - before)
    return mod


@pytest.mark.parametrize("scheme, expected", [
    (WeightScheme("int4", "group", 128), {"dtype": "int4", "group_size": 128}),
    (WeightScheme("uint4", "group", 128), {"dtype": "int4", "group_size": 128}),  # implicit offset = symmetric
    (WeightScheme("uint4", "group", 64, zero_point="int"),
     {"dtype": "uint4", "group_size": 64, "has_zero_point": True, "is_fp_zero_point": False}),
    (WeightScheme("e4m3", "channel", None, scale_fmt="bf16"), {"dtype": "float8e4m3"}),
    (WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"),
     {"dtype": "float4e2m1", "group_size": 32, "scale_dtype": "float8e8m0"}),
    (WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"),
     {"dtype": "float4e2m1", "group_size": 16, "scale_dtype": "float8e4m3", "weight_scale_2_type": "tensor"}),
    (WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"),
     {"dtype": "float8e4m3", "group_size": 128, "group_size_n": 128}),
])
def test_weight_config(adapter, scheme, expected):
    assert adapter.weight_config(scheme.to_dict()) == expected


def test_unsupported_and_input_config(adapter):
    with pytest.raises(adapter.Unsupported, match="act-order"):
        adapter.weight_config(WeightScheme("int4", "group", 128, act_order=True).to_dict())
    assert adapter.input_config(activation_scheme_from("fp16").to_dict()) is None
    assert adapter.input_config(activation_scheme_from("e4m3").to_dict()) == {
        "dtype": "float8e4m3", "input_quant_mode": "dynamic_token"}
    assert adapter.input_config(activation_scheme_from("int8", group_size=128).to_dict()) == {
        "dtype": "int8", "input_quant_mode": "dynamic_group", "group_size": 128}


def test_intervals_pick_each_benchmarked_m(adapter):
    tc = adapter.intervals([1, 16, 256], ["a", "b", "c"])
    assert tc == [[0, 1, "a"], [1, 16, "b"], [16, 1 << 30, "c"]]

    def pick(m):  # the library's rule: lo < m <= hi
        return next(cfg for lo, hi, cfg in tc if lo < m <= hi)

    assert [pick(m) for m in (1, 16, 256)] == ["a", "b", "c"]


@pytest.mark.parametrize("fmt, group", [("e4m3", None), ("e5m2", None), ("int8", None), ("e4m3", 64)])
def test_fake_quant_matches_the_reference(adapter, fmt, group):
    act = activation_scheme_from(fmt, group_size=group)
    x = torch.randn(7, 256) * 3
    x[2] = 0  # an all-zero row gets scale 1
    q, s = ref.quantize_activation(x, act)
    assert torch.equal(adapter.fake_quant(torch, x, act.to_dict()), ref.dequantize_activation(q, s, act))


def test_adapter_draws_the_bench_data(adapter):
    wl = Workload("m", "m", 48, 128, weight_scheme_from("int4", 64), activation_scheme_from("fp16"), 6, 2)
    data = WorkloadData(wl, "cpu", seed=5)
    d = wl.to_dict()
    assert torch.equal(adapter.master_weight(torch, d, "cpu", 5), data.w16)
    assert torch.equal(adapter.activations(torch, d, 9, "cpu", 5), data.x(9))
    assert torch.equal(adapter.routing(torch, d, 9, "cpu", 5), data.topk_ids(9))


def test_adapter_refuses_to_benchmark_this_repository(tmp_path):
    from humming.bench.runner import BenchOptions, ExternalSpec, run_external

    wl = Workload("d", "d", 64, 128, weight_scheme_from("int4", 64), activation_scheme_from("fp16"))
    ext = run_external(ExternalSpec("humming-kernels", str(ADAPTER), pythonpath=""), [wl], BenchOptions(ms=(1,)), 0)
    (row,) = ext["results"]
    assert row["status"] == "error" and row["method"] == "humming-kernels"
    assert "found this repository's package" in row["reason"]
