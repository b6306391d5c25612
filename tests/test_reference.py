"""The oracle: quantize/dequantize within analytical bounds, GEMM references, canonical layout checks."""
import math
import zlib

import pytest
import torch

from humming import reference as R
from humming.dtypes import IntFormat, get_format
from humming.errors import FormatError, ShapeError
from humming.scheme import ActivationScheme, WeightScheme

SCHEMES = []
for g in (32, 64, 128):
    SCHEMES += [
        WeightScheme("int4", "group", g),
        WeightScheme("uint4", "group", g, zero_point="int"),
        WeightScheme("uint8", "group", g, zero_point="float", scale_fmt="bf16"),
        WeightScheme("uint4", "group", g),  # GPTQ-style implicit offset
        WeightScheme("int3", "group", g, scale_fmt="fp32"),
        WeightScheme("uint2", "group", g, zero_point="int"),
        WeightScheme("e2m1", "group", g, scale_fmt="e8m0"),
        WeightScheme("e3m2", "group", g, scale_fmt="bf16"),
    ]
SCHEMES += [
    WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"),  # NVFP4
    WeightScheme("e2m1", "group", 32, scale_fmt="e4m3", global_scale="channel"),
    WeightScheme("int8", "channel", scale_fmt="fp32"),
    WeightScheme("e4m3", "channel", scale_fmt="fp32"),
    WeightScheme("e5m2", "tensor", scale_fmt="fp32"),
    WeightScheme("int8", "tensor", scale_fmt="fp16"),
    WeightScheme("uint4", "channel", zero_point="int"),
    WeightScheme("e4m3", "block", 128, block_n=64, scale_fmt="fp32"),  # DeepSeek-style FP8 block
    WeightScheme("e4m3", "block", 32, block_n=32, scale_fmt="e8m0"),
    WeightScheme("int6", "block", 64, block_n=16, scale_fmt="fp16"),
    WeightScheme("int4", "group", 64, act_order=True),
    WeightScheme("e2m3", "group", 32, scale_fmt="e8m0"),
]
SHAPES = [(64, 256), (48, 384), (128, 128)]


def ulp_half(fmt, v: torch.Tensor) -> torch.Tensor:
    """Half the spacing of ``fmt`` around |v| (largest rounding error of a value in range)."""
    if isinstance(fmt, IntFormat):
        return torch.full_like(v, 0.5)
    a = v.abs().clamp(min=1e-30)
    e = torch.floor(torch.log2(a)).clamp(min=1 - fmt.bias)
    return torch.pow(2.0, e - fmt.man) / 2


def analytical_bound(qw: R.QuantizedWeight, w_storage: torch.Tensor) -> torch.Tensor:
    """Per-element error bound of round-to-nearest with the stored scales."""
    s = qw.scheme
    n, k = qw.n, qw.k
    eff = R.expand_scales(qw.scales, s, n, k)
    if qw.global_scale is not None:
        eff = eff * qw.global_scale[..., None]
    x = w_storage / eff
    if qw.zeros is not None:
        x = x + R.expand_scales(qw.zeros, s, n, k)
    bound = ulp_half(s.format, x) * eff
    if s.zero_point == "float":  # the zero point itself was rounded to a 16-bit float
        z = R.expand_scales(qw.zeros, s, n, k)
        bound = bound + ulp_half(get_format(s.scale_fmt if s.scale_fmt in ("bf16", "fp32") else "fp16"), z) * eff
    return bound * (1 + 1e-5) + 1e-12


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.describe().replace(" ", "_"))
def test_quantize_dequantize_within_analytical_bound(scheme, shape):
    n, k = shape
    if scheme.scale == "block" and (n % scheme.block_n or k % scheme.group_size):
        n, k = scheme.block_n * 2, scheme.group_size * 3
    if scheme.scale == "group" and k % scheme.group_size:
        k = scheme.group_size * 3
    g = torch.Generator().manual_seed(zlib.crc32(f"{scheme.describe()} {n} {k}".encode()))
    w = torch.randn(n, k, generator=g) * 0.02
    w[0, :7] *= 40  # outliers stretch some groups
    perm = torch.randperm(k, generator=g) if scheme.act_order else None
    qw = R.quantize(w, scheme, perm=perm)
    deq = R.dequantize(qw)
    assert deq.shape == w.shape and deq.dtype == torch.float32
    w_storage = w[:, perm] if perm is not None else w
    deq_storage = deq[:, perm] if perm is not None else deq
    err = (deq_storage - w_storage).abs()
    bound = analytical_bound(qw, w_storage)
    worst = (err - bound).max()
    assert worst <= 0, f"max excess {worst.item():.3e}"
    # scales are exactly representable in the scale format
    sf = scheme.scale_format
    assert torch.equal(sf.round(qw.scales), qw.scales)
    # and the quantization is not degenerate (row 0 holds 40x outliers, which a single
    # tensor-wide scale must stretch over everything)
    limit = 0.6 if scheme.scale == "tensor" else {2: 0.6, 3: 0.35}.get(scheme.bits, 0.2)
    assert (err[1:].norm() / w[1:].norm()) < limit


@pytest.mark.parametrize("scheme", [WeightScheme("int4", "group", 32),
                                    WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor")])
def test_moe_weights_quantize_per_expert(scheme):
    w = torch.randn(3, 32, 64) * 0.05
    qw = R.quantize(w, scheme)
    assert qw.is_moe and qw.num_experts == 3
    for e in range(3):
        single = R.quantize(w[e], scheme)
        assert torch.equal(R.dequantize(qw.expert(e)), R.dequantize(single))
    stacked = R.QuantizedWeight.stack([qw.expert(e) for e in range(3)])
    assert torch.equal(R.dequantize(stacked), R.dequantize(qw))


def test_gemm_matches_explicit_computation():
    torch.manual_seed(0)
    w = torch.randn(96, 256) * 0.02
    x = torch.randn(7, 256)
    bias = torch.randn(96)
    qw = R.quantize(w, WeightScheme("int4", "group", 64), bias=bias)
    y = R.gemm(x, qw)
    want = x.double() @ R.dequantize(qw).double().T + bias.double()
    assert torch.allclose(y.double(), want, rtol=1e-6, atol=1e-6)
    # fp16 activations are rounded to fp16 first
    y16 = R.gemm(x, qw, ActivationScheme("fp16"))
    want16 = x.half().double() @ R.dequantize(qw).double().T + bias.double()
    assert torch.allclose(y16.double(), want16, rtol=1e-6, atol=1e-6)
    # the result is close to the unquantized product
    rel = (y - (x @ w.T + bias)).norm() / (x @ w.T + bias).norm()
    assert rel < 0.15


def test_act_order_gemm_uses_the_permutation():
    torch.manual_seed(1)
    w = torch.randn(32, 128) * 0.02
    x = torch.randn(4, 128)
    perm = torch.randperm(128)
    qw = R.quantize(w, WeightScheme("int8", "group", 32, act_order=True), perm=perm)
    rel = (R.gemm(x, qw) - x @ w.T).norm() / (x @ w.T).norm()
    assert rel < 0.02
    assert torch.equal(R.dequantize(qw)[:, perm][:, :32], R.dequantize(qw)[:, perm[:32]])


@pytest.mark.parametrize("act", [
    ActivationScheme("e4m3", "dynamic_token"),
    ActivationScheme("e5m2", "dynamic_token"),
    ActivationScheme("int8", "dynamic_token"),
    ActivationScheme("int4", "dynamic_group", 32),
    ActivationScheme("e2m1", "dynamic_group", 16, scale_fmt="e4m3"),
    ActivationScheme("e4m3", "dynamic_group", 128),
])
def test_quantize_activation(act):
    torch.manual_seed(2)
    x = torch.randn(5, 256) * 3
    x[1] = 0  # an all-zero row gets scale 1
    q, s = R.quantize_activation(x, act)
    fmt = act.format
    assert torch.equal(fmt.round(q), q)
    assert q.abs().max() <= fmt.max_value
    xd = R.dequantize_activation(q, s, act)
    assert torch.all(xd[1] == 0)
    if act.quant == "dynamic_token":
        assert s.shape == (5, 1) and s[1, 0] == 1
        # the largest element of each row maps onto the format's largest value
        assert torch.allclose(q.abs().amax(-1)[[0, 2, 3, 4]], torch.full((4,), float(fmt.max_value)))
    rel = (xd - x).norm() / x.norm()
    assert rel < {8: 0.08, 4: 0.25}[fmt.bits]


def test_static_activation_scale():
    x = torch.randn(3, 64)
    act = ActivationScheme("e4m3", "static_tensor")
    with pytest.raises(FormatError, match="needs a scale"):
        R.quantize_activation(x, act)
    q, s = R.quantize_activation(x * 100, act, torch.tensor([0.01]))
    assert s.shape == (1,)
    assert q.abs().max() == 448  # saturates: 0.01 is too small a scale for this data


def test_moe_gemm_reference():
    torch.manual_seed(3)
    qw = R.quantize(torch.randn(4, 48, 64) * 0.02, WeightScheme("int4", "group", 32))
    x = torch.randn(6, 64)
    ids = torch.randint(0, 4, (6, 2))
    wts = torch.rand(6, 2)
    y = R.moe_gemm(x, qw, ids, wts)
    for m in range(6):
        for t in range(2):
            want = R.gemm(x[m:m + 1], qw.expert(int(ids[m, t])))[0] * wts[m, t]
            assert torch.allclose(y[m, t], want, rtol=1e-5, atol=1e-6)
    assert torch.allclose(R.moe_gemm(x, qw, ids, wts, reduce=True), y.sum(1), atol=1e-6)
    x3 = torch.randn(6, 2, 64)
    y3 = R.moe_gemm(x3, qw, ids)
    assert torch.allclose(y3[2, 1], R.gemm(x3[2, 1:2], qw.expert(int(ids[2, 1])))[0], atol=1e-6)
    with pytest.raises(ShapeError, match="topk_ids must be below 4"):
        R.moe_gemm(x, qw, ids + 4)
    # the call's shapes and dtypes are named as the kernels' moe_gemm names them (R.check_moe_call)
    bad = [((x[:, :60], qw, ids), r"reference.moe_gemm: x must be \[M, K\] = \[6, 64\] or \[M, topk, K\]"),
           ((x[:5], qw, ids), r"x must be \[M, K\] = \[6, 64\] .* got \[5, 64\]"),
           ((x.long(), qw, ids), "x must be a floating-point tensor, got torch.int64"),
           ((x, qw, ids.float()), "topk_ids must be an int32 or int64 tensor"),
           ((x, qw, ids, torch.rand(6, 3)), r"topk_weights must be a float tensor \[M, topk\] = \[6, 2\]")]
    for args, msg in bad:
        with pytest.raises(ShapeError, match=msg):
            R.moe_gemm(*args)


def test_quantized_weight_validation_names_the_tensor():
    qw = R.quantize(torch.randn(32, 64), WeightScheme("int4", "group", 32))
    with pytest.raises(FormatError, match=r"QuantizedWeight\.scales: expected float32 \[32, 2\]"):
        R.QuantizedWeight(qw.scheme, qw.codes, qw.scales[:, :1])
    with pytest.raises(FormatError, match=r"QuantizedWeight\.codes: expected codes of 4 bits"):
        R.QuantizedWeight(qw.scheme, qw.codes | 0x30, qw.scales)
    with pytest.raises(FormatError, match=r"QuantizedWeight\.codes: expected uint8"):
        R.QuantizedWeight(qw.scheme, qw.codes.to(torch.int32), qw.scales)
    with pytest.raises(FormatError, match=r"QuantizedWeight\.zeros: expected None"):
        R.QuantizedWeight(qw.scheme, qw.codes, qw.scales, zeros=qw.scales)
    with pytest.raises(FormatError, match=r"QuantizedWeight\.perm: expected a permutation"):
        R.QuantizedWeight(qw.scheme.replace(act_order=True), qw.codes, qw.scales,
                          perm=torch.zeros(64, dtype=torch.int64))
    with pytest.raises(FormatError, match=r"group_size=32 does not divide K=48"):
        R.QuantizedWeight(qw.scheme, qw.codes[:, :48], qw.scales)


def test_invalid_quantize_inputs():
    with pytest.raises(FormatError, match="act_order=True needs perm"):
        R.quantize(torch.randn(8, 64), WeightScheme("int4", "group", 32, act_order=True))
    with pytest.raises(FormatError, match="symmetric int1"):
        R.quantize(torch.randn(8, 64), WeightScheme("int1", "group", 32))
    with pytest.raises(FormatError, match="NaN"):
        R.quantize(torch.full((8, 64), math.nan), WeightScheme("int4", "group", 32))


def test_encode_ceil_never_rounds_down():
    for name in ("e8m0", "e4m3", "fp16", "bf16"):
        fmt = get_format(name)
        x = torch.rand(1000) * 10 + 1e-3
        v = R.encode_ceil(fmt, x)
        assert torch.all(v >= x)
        assert torch.equal(fmt.round(v), v)
