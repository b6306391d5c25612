"""The shared description: validation with precise errors, dict/JSON round trips."""
import json

import pytest

from humming.errors import FormatError, ShapeError
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme


def test_defaults_and_describe():
    spec = LayerSpec(4096, 4096)
    assert spec.weight.fmt == "int4" and spec.weight.group_size == 128
    assert "int4 g128" in spec.describe()
    assert not spec.is_moe


@pytest.mark.parametrize("ws", [
    WeightScheme("int4", "group", 128),
    WeightScheme("uint4", "group", 64, zero_point="int", act_order=True),
    WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"),
    WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"),
    WeightScheme("int8", "channel", scale_fmt="bf16"),
    WeightScheme("uint3", "group", 32, zero_point="float"),
])
def test_round_trip(ws):
    spec = LayerSpec(256, 512, ws, ActivationScheme("e4m3", "dynamic_token"), num_experts=8,
                     out_dtype="bf16", bias=True)
    assert LayerSpec.from_dict(spec.to_dict()) == spec
    assert LayerSpec.from_json(json.dumps(spec.to_dict())) == spec
    assert WeightScheme.from_dict(ws.to_dict()) == ws
    hash(spec)


def test_group_size_must_divide_k_and_says_what_fits():
    with pytest.raises(ShapeError) as e:
        LayerSpec(1024, 3696, WeightScheme("int4", "group", 128))
    msg = str(e.value)
    assert "group_size=128" in msg and "K=3696" in msg and "3712" in msg and "48" in msg


def test_block_n_must_divide_n():
    with pytest.raises(ShapeError, match=r"block_n=128 does not divide N=1000"):
        LayerSpec(1000, 1024, WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"))


@pytest.mark.parametrize("kwargs,field", [
    (dict(fmt="int9"), "fmt"),
    (dict(fmt="e8m0"), "fmt"),
    (dict(scale="row"), "scale"),
    (dict(scale_fmt="int8"), "scale_fmt"),
    (dict(zero_point="yes"), "zero_point"),
    (dict(fmt="int4", zero_point="int"), "zero_point"),
    (dict(fmt="e2m1", zero_point="float"), "zero_point"),
    (dict(global_scale="row"), "global_scale"),
    (dict(scale="group", group_size=0), "group_size"),
    (dict(scale="block", group_size=128, block_n=None), "block_n"),
    (dict(act_order="yes"), "act_order"),
    (dict(scale="block", group_size=128, block_n=128, act_order=True), "act_order"),
])
def test_invalid_weight_scheme_names_the_field(kwargs, field):
    with pytest.raises(FormatError, match=rf"WeightScheme\.{field}: expected"):
        WeightScheme(**kwargs)


@pytest.mark.parametrize("kwargs,field", [
    (dict(fmt="int2"), "fmt"),
    (dict(fmt="fp16", quant="dynamic_token"), "quant"),
    (dict(fmt="e4m3"), "quant"),
    (dict(fmt="int8", quant="dynamic_group"), "group_size"),
    (dict(fmt="int8", quant="per_row"), "quant"),
    (dict(fmt="e4m3", quant="dynamic_token", scale_fmt="int4"), "scale_fmt"),
])
def test_invalid_activation_scheme_names_the_field(kwargs, field):
    with pytest.raises(FormatError, match=rf"ActivationScheme\.{field}: expected"):
        ActivationScheme(**kwargs)


@pytest.mark.parametrize("kwargs,field", [
    (dict(n=0, k=128), "n"),
    (dict(n=128, k=-1), "k"),
    (dict(n=128, k=128, num_experts=-2), "num_experts"),
    (dict(n=128, k=128, out_dtype="int8"), "out_dtype"),
    (dict(n=128, k=128, bias=1), "bias"),
])
def test_invalid_layer_spec_names_the_field(kwargs, field):
    with pytest.raises(FormatError, match=rf"LayerSpec\.{field}: expected"):
        LayerSpec(**kwargs)


def test_unknown_keys_and_versions_are_refused():
    d = LayerSpec(128, 128).to_dict()
    d["colour"] = "red"
    with pytest.raises(FormatError, match="unknown field.*colour"):
        LayerSpec.from_dict(d)
    d = LayerSpec(128, 128).to_dict()
    d["schema_version"] = 99
    with pytest.raises(FormatError, match="schema_version"):
        LayerSpec.from_dict(d)


def test_activation_group_must_divide_k():
    with pytest.raises(ShapeError, match="group_size=128 does not divide K=200"):
        LayerSpec(128, 200, WeightScheme("int8", "channel"), ActivationScheme("e4m3", "dynamic_group", 128))


def test_derived_facts():
    assert WeightScheme("uint4", "group", 128).implicit_offset == 8
    assert WeightScheme("uint4", "group", 128, zero_point="int").implicit_offset == 0
    assert WeightScheme("int4").implicit_offset == 0
    ws = WeightScheme("int4", "group", 128)
    assert ws.bytes_per_weight(4096, 4096) == 4096 * 4096 / 2 + 4096 * 32 * 2
