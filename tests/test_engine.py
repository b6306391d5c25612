"""humming.engine: the serving-engine interface (scalar type names, the capability predicate, the
checked conversion of checkpoint tensors) on the CPU, and LinearKernel end to end where a GPU is."""
from __future__ import annotations

import pytest
import torch

from humming import reference as R
from humming.demo import _pack_along
from humming.dtypes import FloatFormat, IntFormat, format_names, get_format
from humming.engine import (LinearConfig, LinearKernel, can_implement, convert_weight, precompile,
                            scalar_type_name, weight_format)
from humming.errors import DeviceError, FormatError, ShapeError, UnsupportedError
from humming.formats import load
from humming.planner import plan
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme

GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 32, "sym": True, "desc_act": False}


# ---------------------------------------------------------------------------
# scalar type names
# ---------------------------------------------------------------------------

ENGINE_NAMES = [  # (the engine's name, zero points) -> (humming fmt, zero_point)
    ("uint4b8", False, "uint4", "none"), ("uint8b128", False, "uint8", "none"), ("uint2b2", False, "uint2", "none"),
    ("uint3b4", False, "uint3", "none"), ("uint4", True, "uint4", "int"), ("uint8", "float", "uint8", "float"),
    ("int8", False, "int8", "none"), ("int4", False, "int4", "none"),
    ("float8_e4m3fn", False, "e4m3", "none"), ("float8_e5m2", False, "e5m2", "none"),
    ("float4_e2m1f", False, "e2m1", "none"), ("float6_e3m2f", False, "e3m2", "none"),
    ("float6_e2m3f", False, "e2m3", "none"),
]


@pytest.mark.parametrize("name,zp,fmt,zpk", ENGINE_NAMES)
def test_engine_scalar_types_map_to_weight_formats(name, zp, fmt, zpk):
    assert weight_format(name, zp) == (fmt, zpk)
    assert scalar_type_name(fmt, zpk) == name
    WeightScheme(fmt, zero_point=zpk)  # (a scheme humming takes)


def test_every_weight_format_has_a_name_that_maps_back():
    seen = 0
    for name in format_names():
        f = get_format(name)
        if f.bits > 8 or (isinstance(f, FloatFormat) and not f.signed) or not isinstance(f, (IntFormat, FloatFormat)):
            continue
        zps = ("none", "int", "float") if isinstance(f, IntFormat) and not f.signed else ("none",)
        for zp in zps:
            assert weight_format(scalar_type_name(f.name, zp), zp) == (f.name, zp), (f.name, zp)
            seen += 1
    assert seen >= 8 * 4 + 5  # int1-8, uint1-8 three ways, the float formats


@pytest.mark.parametrize("name,zp,match", [
    ("uint4", False, r"uint4: unsigned codes without a bias need zero points"),
    ("uint4b7", False, r"expected the bias 8 .* got 7"),
    ("uint4b8", True, r"biased codes take no zero points"),
    ("int4b8", False, r"signed integer type carries no bias"),
    ("int4", True, r"signed codes are symmetric"),
    ("int9", False, r"expected 1-8 bits, got 9"),
    ("float8_e4m3", False, r"e4m3 is float8_e4m3fn \(flags 'fn'\), not flags ''"),
    ("float4_e2m1f", True, r"float codes take no zero points"),
    ("float5_e2m1f", False, r"5 bits is not 1 sign \+ 2 exponent \+ 1 mantissa"),
    ("float8_e3m4", False, r"no signed float format e3m4|e3m4 is"),
    ("bfloat16", False, r"expected '\[u\]int<bits>\[b<bias>\]' or 'float<bits>_e<E>m<M>\[flags\]', got 'bfloat16'"),
    ("uint4b8", "maybe", r"zero_points: expected a bool, 'int' or 'float', got 'maybe'"),
])
def test_bad_scalar_types_say_what_was_expected(name, zp, match):
    with pytest.raises(FormatError, match=match):
        weight_format(name, zp)


# ---------------------------------------------------------------------------
# LinearConfig -> LayerSpec, and the capability predicate
# ---------------------------------------------------------------------------

CONFIGS = {
    "gptq": (LinearConfig("uint4b8", (4096, 11008), torch.float16, 128),
             LayerSpec(11008, 4096, WeightScheme("uint4", "group", 128), ActivationScheme("fp16"))),
    "gptq_act_order_bf16": (
        LinearConfig("uint4b8", (3584, 4096), torch.bfloat16, 128, has_g_idx=True, scale_type=torch.float16),
        LayerSpec(4096, 3584, WeightScheme("uint4", "group", 128, act_order=True), ActivationScheme("bf16"),
                  out_dtype="bf16")),
    "awq": (LinearConfig("uint4", (3696, 7392), torch.float16, 48, zero_points=True, bias=True),
            LayerSpec(7392, 3696, WeightScheme("uint4", "group", 48, zero_point="int"), ActivationScheme("fp16"),
                      bias=True)),
    "mxfp4": (LinearConfig("float4_e2m1f", (2880, 5760), torch.bfloat16, 32, scale_type="float8_e8m0fnu"),
              LayerSpec(5760, 2880, WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), ActivationScheme("bf16"),
                        out_dtype="bf16")),
    "nvfp4": (LinearConfig("float4_e2m1f", (4096, 4096), torch.bfloat16, 16, scale_type=torch.float8_e4m3fn,
                           global_scale=True),
              LayerSpec(4096, 4096, WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"),
                        ActivationScheme("bf16"), out_dtype="bf16")),
    "fp8_channel": (LinearConfig("float8_e4m3fn", (4096, 6144), torch.bfloat16, -1, scale_type=torch.float32),
                    LayerSpec(6144, 4096, WeightScheme("e4m3", "channel", None, scale_fmt="fp32"),
                              ActivationScheme("bf16"), out_dtype="bf16")),
    "w4a8": (LinearConfig("uint4b8", (8192, 8192), "int8", 128, out_type=torch.bfloat16),
             LayerSpec(8192, 8192, WeightScheme("uint4", "group", 128, scale_fmt="bf16"),
                       ActivationScheme("int8", "dynamic_token"), out_dtype="bf16")),
    "w8a8_static": (LinearConfig("int8", (4096, 4096), torch.float8_e4m3fn, -1, out_type="fp16",
                                 act_quant="static_tensor", scale_type="fp32"),
                    LayerSpec(4096, 4096, WeightScheme("int8", "channel", None, scale_fmt="fp32"),
                              ActivationScheme("e4m3", "static_tensor"))),
}


CONFIGS["nvfp4_w4a4"] = (
    LinearConfig("float4_e2m1f", (4096, 4096), "float4_e2m1f", 16, scale_type=torch.float8_e4m3fn,
                 global_scale=True, out_type=torch.bfloat16, act_quant="dynamic_group", act_group_size=16,
                 act_scale_type="float8_e4m3fn"),
    LayerSpec(4096, 4096, WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"),
              ActivationScheme("e2m1", "dynamic_group", group_size=16, scale_fmt="e4m3"), out_dtype="bf16"))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_configs_describe_the_layer(name):
    cfg, layer = CONFIGS[name]
    assert cfg.layer_spec() == layer


@pytest.mark.parametrize("device", ["H200", "A100", "L40S", "T4"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_can_implement_is_the_planner_answer(name, device):
    cfg, layer = CONFIGS[name]
    p = plan(layer, device)
    assert can_implement(cfg, device) == ((True, None) if p.runnable else (False, p.not_runnable_reason))
    assert p.runnable  # (every layer above runs on these chips, some through a fallback the plan names)


class _ScalarType:  # (an engine's type object: its str() is the name)
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


def test_an_engine_config_object_is_read_by_attribute():
    from types import SimpleNamespace

    mp = SimpleNamespace(full_weight_shape=(7168, 4096), partition_weight_shape=(3584, 4096),
                         weight_type=_ScalarType("uint4b8"), act_type=torch.bfloat16, group_size=128,
                         zero_points=False, has_g_idx=True, out_type=None)
    cfg = LinearConfig.from_engine(mp, scale_type=torch.float16)
    assert cfg.layer_spec() == CONFIGS["gptq_act_order_bf16"][1] and cfg.full_weight_shape == (7168, 4096)
    assert can_implement(cfg, "H200") == (True, None)
    with pytest.raises(FormatError, match=r"from_engine: the config has no group_size, has_g_idx \(a SimpleNamespace\)"):
        LinearConfig.from_engine(SimpleNamespace(weight_type="uint4b8", partition_weight_shape=(1, 1), act_type=None,
                                                 zero_points=False))


@pytest.mark.parametrize("cfg,match", [
    (LinearConfig("uint4b8", (3696, 8192), torch.float16, 128),
     r"group_size: 128 does not divide this partition's K = 3696"),
    (LinearConfig("uint4b8", (4096, 4096), torch.float16, -1, has_g_idx=True), r"has_g_idx: .*per-channel"),
    (LinearConfig("uint4b8", (4096, 4096), torch.float32, 128), r"act_type: expected one of .* got fp32"),
    (LinearConfig("uint4b8", (4096, 4096), "int8", 128), r"out_type: int8 activations need the output dtype"),
    (LinearConfig("uint4b8", (4096,), torch.float16, 128), r"partition_weight_shape: expected \(K, N\)"),
    (LinearConfig("uint4b8", (4096, 4096), torch.float16, 0), r"group_size: expected -1 .* got 0"),
    (LinearConfig("uint4", (4096, 4096), torch.float16, 128), r"need zero points"),
])
def test_configs_humming_cannot_take_give_the_reason(cfg, match):
    ok, why = can_implement(cfg, "H200")
    assert not ok and why is not None
    import re
    assert re.search(match, why), why


def test_a_device_nothing_runs_on_gives_the_planner_reasons():
    cfg, layer = CONFIGS["gptq"]
    with pytest.raises(UnsupportedError) as err:
        plan(layer, "zhenwu-810e")
    ok, why = can_implement(cfg, "zhenwu-810e")
    assert not ok and why == "; ".join(err.value.reasons) and "m16n16k16" in why


def test_the_current_gpu_is_asked_when_no_device_is_named():
    cfg, layer = CONFIGS["gptq"]
    ok, why = can_implement(cfg)
    if torch.cuda.is_available():
        assert ok and why is None
    else:  # (a pure predicate: a CPU-only process gets an answer, not an exception)
        assert not ok and "GPU" in why


# ---------------------------------------------------------------------------
# converting checkpoint tensors, checked against the config
# ---------------------------------------------------------------------------


def _gptq(n=96, k=256, gs=32, seed=0, act_order=False):
    """GPTQ v1 tensors of a symmetric 4-bit layer (unprefixed) and the config for them."""
    g = torch.Generator().manual_seed(seed)
    qw = R.quantize(torch.randn(n, k, generator=g) * 0.02, WeightScheme("uint4", "group", gs, act_order=act_order),
                    perm=torch.randperm(k, generator=g) if act_order else None)
    codes = qw.codes
    if act_order:  # (GPTQ stores input columns in their own order, g_idx[i] the group of column i;
        # humming's storage column j is input column perm[j])
        inv = torch.argsort(qw.perm)
        codes = codes[:, inv]
    t = {"qweight": _pack_along(codes.t(), 0), "qzeros": _pack_along(torch.full((k // gs, n), 7), 1),
         "scales": qw.scales.t().contiguous().half()}
    if act_order:
        t["g_idx"] = (inv // gs).to(torch.int32)
        qc = {**GPTQ, "group_size": gs, "desc_act": True}
    else:
        t["g_idx"] = (torch.arange(k) // gs).to(torch.int32)
        qc = {**GPTQ, "group_size": gs}
    return t, qc


def test_checkpoint_tensors_convert_with_or_without_a_prefix():
    t, qc = _gptq()
    cfg = LinearConfig("uint4b8", (256, 96), torch.float16, 32)
    a = convert_weight(cfg, t, qc)
    b = convert_weight(cfg, {f"model.l.{k}": v for k, v in t.items()}, qc, prefix="model.l")
    ref = load(qc, {f"x.{k}": v for k, v in t.items()}, "x")
    for qw in (a, b):
        assert qw.scheme == ref.scheme and torch.equal(qw.codes, ref.codes) and torch.equal(qw.scales, ref.scales)
        assert qw.bias is None
    assert torch.equal(R.dequantize(a), R.dequantize(ref))


def test_a_checkpoint_that_is_not_the_configured_layer_is_refused_naming_the_field():
    t, qc = _gptq()
    with pytest.raises(FormatError, match=r"group_size 32 where the config says 64"):
        convert_weight(LinearConfig("uint4b8", (256, 96), torch.float16, 64), t, qc)
    with pytest.raises(FormatError, match=r"zero_point 'none' where the config says 'int'"):
        convert_weight(LinearConfig("uint4", (256, 96), torch.float16, 32, zero_points=True), t, qc)
    with pytest.raises(ShapeError, match=r"N x K = 96 x 256; the config's partition is N x K = 96 x 512"):
        convert_weight(LinearConfig("uint4b8", (512, 96), torch.float16, 32), t, qc)
    with pytest.raises(FormatError, match=r"scale_fmt 'fp16' where the config says 'bf16'"):
        convert_weight(LinearConfig("uint4b8", (256, 96), torch.bfloat16, 32, scale_type="bf16"), t, qc)
    with pytest.raises(FormatError, match=r"need the checkpoint's quant_config"):
        convert_weight(LinearConfig("uint4b8", (256, 96), torch.float16, 32), t)
    with pytest.raises(FormatError, match=r"tensor layer.scales: expected in the checkpoint"):
        convert_weight(LinearConfig("uint4b8", (256, 96), torch.float16, 32),
                       {k: v for k, v in t.items() if k != "scales"}, qc)


def test_an_unsaid_scale_type_takes_the_checkpoint_scale_format():
    t, qc = _gptq(act_order=True)  # (fp16 scales, as GPTQ stores them, for a bf16 model)
    qw = convert_weight(LinearConfig("uint4b8", (256, 96), torch.bfloat16, 32, has_g_idx=True), t, qc)
    assert qw.scheme.scale_fmt == "fp16" and qw.scheme.act_order and qw.perm is not None


def test_bias_follows_the_config():
    t, qc = _gptq()
    cfg = LinearConfig("uint4b8", (256, 96), torch.float16, 32, bias=True)
    assert torch.equal(convert_weight(cfg, t, qc).bias, torch.zeros(96))  # (replaced per call)
    b = torch.randn(96)
    assert torch.equal(convert_weight(cfg, t, qc, bias=b).bias, b)
    with pytest.raises(ShapeError, match=r"bias must be \[96\], got \[95\]"):
        convert_weight(cfg, t, qc, bias=torch.randn(95))
    with pytest.raises(ShapeError, match=r"a bias was given, but the config says bias=False"):
        convert_weight(LinearConfig("uint4b8", (256, 96), torch.float16, 32), t, qc, bias=b)


def test_a_kernel_off_a_gpu_says_so():
    with pytest.raises(DeviceError, match=r"runs on CUDA devices, got cpu"):
        LinearKernel(CONFIGS["gptq"][0], device="cpu")
    if not torch.cuda.is_available():
        with pytest.raises(DeviceError, match=r"no CUDA GPU is available in this process"):
            LinearKernel(CONFIGS["gptq"][0])


# ---------------------------------------------------------------------------
# on the GPU
# ---------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("m", [1, 5, 33])
def test_linear_kernel_from_gptq_tensors(m, poison_cuda):
    t, qc = _gptq(n=200, k=384, gs=32, seed=m, act_order=True)
    cfg = LinearConfig("uint4b8", (384, 200), torch.bfloat16, 32, has_g_idx=True, bias=True)
    kern = LinearKernel(cfg)
    # (the engine's tensors on the GPU, or still on the CPU for one token)
    pw = kern.process_weights({k: v.cuda() if m > 1 else v for k, v in t.items()}, qc)
    assert pw.layer.weight.scale_fmt == "fp16" and kern.plan.runnable  # (planned for the checkpoint's scales)
    poison_cuda()
    x = torch.randn(2, m, 384, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(200, device="cuda")
    y = kern.apply(x, bias=bias)
    qw = convert_weight(cfg, t, qc).to("cuda")
    ref = R.gemm(x.reshape(-1, 384).float(), qw, ActivationScheme("bf16")) + bias
    assert y.shape == (2, m, 200) and y.dtype == torch.bfloat16
    # (bf16 output: 2^-8 relative rounding of each value, fp32 sums)
    assert torch.allclose(y.reshape(-1, 200).float(), ref, rtol=8e-3, atol=8e-3 * float(ref.abs().max()))


@pytest.mark.gpu
def test_unsupported_kernels_raise_the_reason_and_precompile_loads_every_bucket():
    with pytest.raises(UnsupportedError, match=r"does not divide this partition's K"):
        LinearKernel(LinearConfig("uint4b8", (3696, 8192), torch.float16, 128))
    t, qc = _gptq(n=128, k=512, gs=32, seed=7)
    kern = LinearKernel(LinearConfig("uint4b8", (512, 128), torch.float16, 32))
    with pytest.raises(ShapeError, match=r"precompile: a LinearKernel has no converted weight"):
        precompile([kern])
    kern.process_weights({k: v.cuda() for k, v in t.items()}, qc)
    first = precompile([kern], ms=(1, 16, 64, 256))
    again = precompile([kern], ms=(1, 16, 64, 256))
    assert first and len(again) == len(first) and all(r.origin == "memory" for r in again)


@pytest.mark.gpu
@pytest.mark.parametrize("act", [torch.float16, "int8"])
def test_every_rank_of_a_layer_whose_groups_straddle_the_ranks(act, poison_cuda):
    """Four row-parallel ranks of 320 columns of a GPTQ layer in groups of 128 (offsets 0, 64, 0, 64): each
    rank's kernel on its columns against the reference of its shard, and (16-bit activations) the ranks'
    sum against the full layer's."""
    n, k, ranks, g = 384, 1280, 4, 128
    gen = torch.Generator().manual_seed(4)
    full = R.quantize(torch.randn(n, k, generator=gen) * 0.02, WeightScheme("uint4", "group", g))
    t = {"qweight": _pack_along(full.codes.t(), 0), "qzeros": _pack_along(torch.full((k // g, n), 7), 1),
         "scales": full.scales.t().contiguous().half(), "g_idx": (torch.arange(k) // g).to(torch.int32)}
    qc = {**GPTQ, "group_size": g}
    size = k // ranks
    quant = ActivationScheme("int8", "dynamic_token") if act == "int8" else None
    x = torch.randn(7, k, device="cuda", dtype=torch.float16)
    total = torch.zeros(7, n, device="cuda", dtype=torch.float64)
    for r in range(ranks):
        cfg = LinearConfig("uint4b8", (size, n), act, g, k_offset=r * size,
                           out_type=torch.float16 if act == "int8" else None)
        kern = LinearKernel(cfg)
        kern.process_weights(t, qc)
        assert kern.layer.weight.group_offset == (r * size) % g
        xr = x[:, r * size:(r + 1) * size].contiguous()
        poison_cuda()
        y = kern.apply(xr)
        ref = R.gemm(xr.float(), full.k_shard(r * size, size).to("cuda"), quant)
        # (fp16 outputs: 2^-11 relative rounding; each rank's activations quantized per token as the reference does)
        assert torch.allclose(y.float(), ref, rtol=3e-3, atol=3e-3 * float(ref.abs().max())), r
        total += y.double()
    if quant is None:
        ref = R.gemm(x.float(), full.to("cuda")).double()
        assert torch.allclose(total, ref, rtol=4e-3, atol=4e-3 * float(ref.abs().max()))


# ---------------------------------------------------------------------------
# MoE layers
# ---------------------------------------------------------------------------


def _gptq_experts(e=4, n=96, k=256, gs=32, act_order=False):
    """One GPTQ layer per expert, under the prefixes an engine's checkpoint gives them (act order: each its own
    g_idx)."""
    tensors = {}
    for i in range(e):
        t, qc = _gptq(n=n, k=k, gs=gs, seed=10 + i, act_order=act_order)
        tensors.update({f"model.experts.{i}.up_proj.{name}": v for name, v in t.items()})
    return tensors, qc, [f"model.experts.{i}.up_proj" for i in range(e)]


def test_moe_configs_plan_and_convert_expert_by_expert():
    cfg = LinearConfig("uint4b8", (256, 96), torch.float16, 32, num_experts=4)
    assert can_implement(cfg, "H200") == (True, None) and can_implement(cfg, "T4") == (True, None)
    assert cfg.layer_spec().num_experts == 4
    ao = LinearConfig("uint4b8", (256, 96), torch.float16, 32, has_g_idx=True, num_experts=4)
    assert can_implement(ao, "A100") == (True, None)
    ok, why = can_implement(LinearConfig("uint4b8", (256, 96), torch.int8, 32, has_g_idx=True, num_experts=4,
                                         out_type=torch.float16, act_quant="dynamic_group", act_group_size=128),
                            "A100")
    assert not ok and "MoE weights with act order take no per-group activation scales" in why
    ta, qa, pa = _gptq_experts(act_order=True)  # (each expert's g_idx: its own permutation, stacked [E, K])
    qwa = convert_weight(ao, ta, qa, prefix=pa)
    assert qwa.perm.shape == (4, 256) and not torch.equal(qwa.perm[0], qwa.perm[1])
    assert torch.equal(R.dequantize(qwa.expert(3)), R.dequantize(load(qa, ta, pa[3])))
    tensors, qc, prefixes = _gptq_experts()
    qw = convert_weight(cfg, tensors, qc, prefix=prefixes)
    assert qw.is_moe and qw.num_experts == 4 and (qw.n, qw.k) == (96, 256)
    one = load(qc, tensors, prefixes[2])
    assert torch.equal(R.dequantize(qw.expert(2)), R.dequantize(one))
    with pytest.raises(ShapeError, match=r"per expert, 4 experts; the config's partition is N x K = 96 x 256$"):
        convert_weight(LinearConfig("uint4b8", (256, 96), torch.float16, 32), tensors, qc, prefix=prefixes)
    with pytest.raises(ShapeError, match=r"is N x K = 96 x 256; the config's partition is N x K = 96 x 256 per "
                                         r"expert, 8 experts"):
        convert_weight(LinearConfig("uint4b8", (256, 96), torch.float16, 32, num_experts=8), one)
    b = convert_weight(LinearConfig("uint4b8", (256, 96), torch.float16, 32, num_experts=4, bias=True), qw)
    assert b.bias.shape == (4, 96) and not b.bias.any()
    with pytest.raises(ShapeError, match=r"bias must be \[4, 96\], got \[96\]"):
        convert_weight(LinearConfig("uint4b8", (256, 96), torch.float16, 32, num_experts=4, bias=True), qw,
                       bias=torch.randn(96))
    with pytest.raises(FormatError, match=r"num_experts: expected 0 \(a dense layer\) or the number of experts"):
        LinearConfig("uint4b8", (256, 96), torch.float16, 32, num_experts=-1).layer_spec()


@pytest.mark.gpu
@pytest.mark.parametrize("act_order", [False, True], ids=["plain", "act_order"])
def test_moe_kernel_from_gptq_experts(poison_cuda, act_order):
    from humming.engine import MoEKernel
    from humming.ops import moe as MOE

    tensors, qc, prefixes = _gptq_experts(e=8, n=200, k=384, act_order=act_order)
    cfg = LinearConfig("uint4b8", (384, 200), torch.float16, 32, has_g_idx=act_order, num_experts=8)
    with pytest.raises(FormatError, match="use LinearKernel"):
        MoEKernel(LinearConfig("uint4b8", (384, 200), torch.float16, 32))
    kern = MoEKernel(cfg)
    kern.process_weights(tensors, qc, prefix=prefixes)
    qw = convert_weight(cfg, tensors, qc, prefix=prefixes).to("cuda")
    with pytest.raises(ShapeError, match="use MoEKernel"):
        LinearKernel.apply(kern, torch.randn(3, 384, device="cuda").half())
    x = torch.randn(9, 384, device="cuda").half()
    ids = torch.stack([torch.randperm(8)[:2] for _ in range(9)]).to("cuda", torch.int32)
    wts = torch.rand(9, 2, device="cuda")
    y = kern(x, ids, wts, reduce=True)
    ref = R.moe_gemm(x.float(), qw, ids, wts, reduce=True)
    assert y.shape == (9, 200) and torch.allclose(y.float(), ref, rtol=4e-3, atol=4e-3 * float(ref.abs().max()))
    xb = torch.randn(8, 16, 384, device="cuda").half()
    counts = torch.randint(0, 17, (8,)).to("cuda", torch.int32)
    yb = kern.apply_batched(xb, counts, tokens_per_expert=4)
    for i in range(8):
        c = int(counts[i])
        if c == 0:  # (an expert without tokens)
            continue
        r = R.gemm(xb[i, :c].float(), qw.expert(i))
        assert torch.allclose(yb[i, :c].float(), r, rtol=4e-3, atol=4e-3 * float(r.abs().max() + 1))
    assert len(precompile([kern], ms=(1, 16, 64))) >= 1
    assert MOE.tokens_per_expert(9, 2, 8) == 3


def test_apply_names_what_it_was_given():
    """LinearKernel.apply refuses a non-tensor x, and (through gemm) a weight that was never prepared, by name --
    no GPU needed: the kernel object is built without its constructor's device check."""
    qw = R.quantize(torch.randn(64, 256) * 0.02, WeightScheme("int4", "group", 128))
    kern = LinearKernel.__new__(LinearKernel)
    kern.layer = LayerSpec(64, 256, qw.scheme, ActivationScheme("fp16"))
    kern.weight = None
    with pytest.raises(ShapeError, match="call process_weights first"):
        kern.apply(torch.randn(2, 256).half())
    kern.weight = qw
    with pytest.raises(ShapeError, match=r"apply: x must be a tensor \[..., 256\], got list"):
        kern.apply([[0.0] * 256])
    with pytest.raises(ShapeError, match="gemm: the weight must be a PreparedWeight .* got a QuantizedWeight"):
        kern.apply(torch.randn(2, 256).half())
