"""quantize_activation: argument checks and torch.compile tracing on the CPU; on a
GPU, bit-exact agreement with a torch reference, CUDA graphs and torch.compile.

The reference below is this file's own (the contract in humming/ops/act_quant.py):
scale = absmax / fmt.max in fp32 (1 for an all-zero row or group), codes =
round-to-nearest-even of x / scale, saturated."""
from __future__ import annotations

import ctypes

import pytest
import torch

from humming.dtypes import get_format
from humming.errors import DeviceError, ShapeError, UnsupportedError
from humming.ops.act_quant import (ActQuantParams, act_quant_spec, quantize_activation, quantized_dtype)

FORMATS = ["int8", "e4m3", "e5m2", "int4", "e2m1"]


# ---------------------------------------------------------------- reference

def _codes(y: torch.Tensor, fmt: str) -> torch.Tensor:
    """fp32 values already divided by their scale -> codes as stored by the op."""
    f = get_format(fmt)
    if not f.is_float:
        q = torch.round(y).clamp(f.min_value, f.max_value).to(torch.int32)
        q = q.to(torch.int8) if f.bits == 8 else (q & 0xF).to(torch.uint8)
    elif f.bits == 8:
        q = y.clamp(-f.max_value, f.max_value).to(f.torch_dtype)
    else:
        q = f.encode(y.clamp(-f.max_value, f.max_value))
    if f.bits == 4:
        q = q[..., 0::2] | (q[..., 1::2] << 4)
    return q


def reference(x, fmt, mode, group_size=None, scale=None):
    xf = x.float().cpu()
    fmax = float(get_format(fmt).max_value)
    if mode == "static_tensor":
        s = scale.float().cpu().reshape(1)
        return _codes(xf / s, fmt), s
    if mode == "dynamic_token":
        amax = xf.abs().amax(dim=-1, keepdim=True)
        s = torch.where(amax > 0, amax / fmax, torch.ones_like(amax))
        return _codes(xf / s, fmt), s
    k = xf.shape[-1]
    xg = xf.reshape(*xf.shape[:-1], k // group_size, group_size)
    amax = xg.abs().amax(dim=-1, keepdim=True)
    s = torch.where(amax > 0, amax / fmax, torch.ones_like(amax))
    return _codes((xg / s).reshape(xf.shape), fmt), s[..., 0]


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.uint8) if t.element_size() == 1 else t.view(torch.int32)


def test_reference_matches_the_number_formats():
    """The test's reference agrees with humming.dtypes' encoders (guards the reference itself)."""
    torch.manual_seed(0)
    y = torch.randn(64, 32) * 50
    for fmt in FORMATS:
        f = get_format(fmt)
        got = _codes(y, fmt)
        want = f.encode(y).to(torch.uint8)
        if f.bits == 4:
            want = want[:, 0::2] | (want[:, 1::2] << 4)
        assert torch.equal(bits(got), want), fmt


# ---------------------------------------------------------------- CPU: checks

def test_quantized_dtypes():
    assert [quantized_dtype(f) for f in FORMATS] == [torch.int8, torch.float8_e4m3fn, torch.float8_e5m2,
                                                     torch.uint8, torch.uint8]
    assert quantized_dtype("int4+bytes") == torch.int8  # int4 codes one per byte
    assert quantized_dtype("e2m1+fp16") == torch.float16 and quantized_dtype("int8+bf16") == torch.bfloat16


def test_values_and_scale_formats_in_the_spec():
    s = act_quant_spec("e2m1+bf16", "dynamic_group", torch.float16, 4096, "sm_90a", 16, scale_fmt="e4m3")
    assert (s.get("OUT16"), s.get("OUT_BITS"), s.get("EXP"), s.get("MAN")) == (2, 4, 2, 1)
    assert (s.get("SC_EXP"), s.get("SC_MAN"), s.get("SC_BIAS"), s.get("SC_MAX")) == (4, 3, 7, 448.0)
    m = act_quant_spec("int8", "dynamic_token", torch.float16, 4096, "sm_80", scale_fmt="e8m0")
    assert (m.get("OUT16"), m.get("SC_EXP"), m.get("SC_MAN"), m.get("SC_BIAS")) == (0, 8, 0, 127)
    f = act_quant_spec("int8+fp16", "dynamic_token", torch.float16, 4096, "sm_80")
    assert (f.get("OUT16"), f.get("SC_EXP")) == (1, 0)
    with pytest.raises(UnsupportedError, match="scale_fmt='int8'"):
        act_quant_spec("int8", "dynamic_token", torch.float16, 4096, "sm_80", scale_fmt="int8")


def test_one_code_per_byte_is_for_4bit_integers():
    from humming.ops.act_quant import act_quant_spec

    spec = act_quant_spec("int4+bytes", "dynamic_token", torch.float16, 4096, "sm_90a")
    cfg = dict(spec.config)
    assert (cfg["OUT_BITS"], cfg["QMIN"], cfg["QMAX"], cfg["OUT_FLOAT"]) == (8, -8.0, 7.0, False)
    for fmt in ("e2m1+bytes", "int8+bytes"):
        with pytest.raises(UnsupportedError, match="one code per byte is for 4-bit integer formats"):
            quantized_dtype(fmt)


@pytest.mark.parametrize("fmt", ["uint8", "e8m0", "fp16", "int2"])
def test_unsupported_formats_are_named(fmt):
    with pytest.raises(UnsupportedError, match=fmt):
        act_quant_spec(fmt, "dynamic_token", torch.float16, 128, "sm_90a")


def test_spec_carries_the_format_and_layout():
    s = act_quant_spec("e4m3", "dynamic_group", torch.bfloat16, 512, "sm_89", group_size=128)
    assert (s.get("EXP"), s.get("MAN"), s.get("BIAS"), s.get("QMAX"), s.get("QMIN")) == (4, 3, 7, 448.0, -448.0)
    assert s.get("IN_BF16") is True and s.get("MODE") == 2 and s.get("GROUP") == 128 and s.get("OUT_BITS") == 8
    assert (s.threads, s.get("ROW_THREADS")) == (128, 32) and s.params_size == ctypes.sizeof(ActQuantParams) == 64
    i4 = act_quant_spec("int4", "dynamic_token", torch.float16, 9000, "sm_80")
    assert (i4.get("QMIN"), i4.get("QMAX"), i4.get("OUT_BITS"), i4.get("OUT_FLOAT")) == (-8.0, 7.0, 4, False)
    assert (i4.threads, i4.get("ROW_THREADS")) == (1024, 1024)
    with pytest.raises(UnsupportedError, match="group_size=48"):
        act_quant_spec("int8", "dynamic_group", torch.float16, 480, "sm_80", group_size=48)
    with pytest.raises(ValueError, match="'per_row'"):
        act_quant_spec("int8", "per_row", torch.float16, 480, "sm_80")


def test_cpu_tensors_are_refused():
    with pytest.raises(DeviceError, match="CUDA tensor"):
        quantize_activation(torch.zeros(2, 8, dtype=torch.float16), "e4m3", "dynamic_token")


def _fake(*shape, dtype=torch.float16):
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode()
    with mode:
        return mode, torch.empty(*shape, dtype=dtype, device="cuda")


@pytest.mark.parametrize("fmt, mode, g, q_shape, s_shape", [
    ("e4m3", "dynamic_token", None, (5, 64), (5, 1)),
    ("int4", "dynamic_group", 16, (5, 32), (5, 4)),
    ("int8", "static_tensor", None, (5, 64), (0,)),
    ("e2m1+fp16", "dynamic_group", 16, (5, 64), (5, 1)),  # 16-bit values: one power of two per row
    ("int4+bf16", "dynamic_token", None, (5, 64), (5, 1)),
    ("e4m3", "dynamic_group+major", 16, (5, 64), (4, 8)),  # by group: [K / 16, M rounded up to 4]
])
def test_fake_implementation_gives_shapes_and_dtypes(fmt, mode, g, q_shape, s_shape):
    mode_, x = _fake(5, 64)
    mode, major = mode.split("+")[0], mode.endswith("+major")
    with mode_:
        scale = torch.ones(1, device="cuda") if mode == "static_tensor" else None
        q, s = torch.ops.humming.quantize_activation(x, fmt, mode, g, scale, group_major=major)
    assert (tuple(q.shape), q.dtype, q.device.type) == (q_shape, quantized_dtype(fmt), "cuda")
    assert (tuple(s.shape), s.dtype) == (s_shape, torch.float32)


@pytest.mark.parametrize("args, error, words", [
    (("int4", "dynamic_token"), ShapeError, ["K must be even", "K=7"]),
    (("int8", "dynamic_group", 16), ShapeError, ["group_size=16", "K=7"]),
    (("int8", "static_tensor", None, None), ShapeError, ["static_tensor", "None"]),
    (("int8", "dynamic_token", None, "scale"), ShapeError, ["only taken by static_tensor"]),
    (("int8", "rowwise"), ValueError, ["'rowwise'"]),
    (("int8", "dynamic_token", None, None, "fp32", True), ValueError, ["group_major", "dynamic_token"]),
    (("int8+fp16", "dynamic_group", 7, None, "fp32", True), ValueError, ["group_major", "16-bit values"]),
])
def test_bad_calls_name_what_is_wrong(args, error, words):
    mode_, x = _fake(3, 7)
    with mode_:
        args = tuple(torch.ones(1, device="cuda") if a == "scale" else a for a in args)
        with pytest.raises(error) as e:
            torch.ops.humming.quantize_activation(x, *args)
    for w in words:
        assert w in str(e.value)
    mode_, xi = _fake(3, 8, dtype=torch.int32)
    with mode_, pytest.raises(ShapeError, match="float16 or bfloat16, found torch.int32"):
        torch.ops.humming.quantize_activation(xi, "int8", "dynamic_token")


def test_torch_compile_traces_the_op():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(x):
        q, s = quantize_activation(x * 2, "e4m3", "dynamic_group", 32)
        return q, s

    compiled = torch.compile(f, backend=backend, fullgraph=True)
    with pytest.raises(DeviceError):  # traced fine; running it on the CPU is refused
        compiled(torch.randn(5, 64, dtype=torch.float16))
    (gm,) = graphs
    (node,) = [n for n in gm.graph.nodes if n.target is torch.ops.humming.quantize_activation.default]
    q, s = node.meta["example_value"]
    assert (tuple(q.shape), q.dtype, tuple(s.shape)) == ((5, 64), torch.float8_e4m3fn, (5, 2))


# ---------------------------------------------------------------- GPU

SHAPES = [(1, 1), (1, 4096), (3, 7), (5, 8), (2, 17), (37, 130), (4, 1000), (3, 1024), (2, 1025),
          (6, 4102), (2, 9000), (1, 16384 + 8)]


def _inputs(m, k, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(m, k, generator=g, device="cuda", dtype=torch.float32)
    x = x * torch.exp(torch.randn(m, 1, generator=g, device="cuda") * 2)  # rows of different magnitude
    return x.to(dtype)


def _check(x, fmt, mode, group_size=None, scale=None):
    q, s = quantize_activation(x, fmt, mode, group_size, scale)
    rq, rs = reference(x, fmt, mode, group_size, scale)
    torch.cuda.synchronize()
    assert q.shape == rq.shape and q.dtype == rq.dtype, (q.shape, q.dtype, rq.shape, rq.dtype)
    assert s.shape == rs.shape and s.dtype == torch.float32
    ulps = (bits(s.cpu()) - bits(rs)).abs().max().item() if s.numel() else 0
    assert ulps <= 1, f"scales differ by {ulps} ulp"
    diff = (bits(q.cpu()) != bits(rq)).nonzero()
    assert diff.numel() == 0, f"{diff.shape[0]} codes differ, first at {diff[0].tolist()}"


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("fmt", FORMATS)
def test_dynamic_token_matches_reference(poison_cuda, fmt, dtype):
    for i, (m, k) in enumerate(SHAPES):
        if get_format(fmt).bits == 4 and k % 2:
            continue
        poison_cuda()
        _check(_inputs(m, k, dtype, seed=i), fmt, "dynamic_token")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("group_size", [16, 32, 128, 512])
def test_dynamic_group_matches_reference(poison_cuda, fmt, dtype, group_size):
    for i, (m, groups) in enumerate([(1, 1), (3, 5), (37, 8), (2, 56), (1, 130)]):
        poison_cuda()
        _check(_inputs(m, groups * group_size, dtype, seed=100 + i), fmt, "dynamic_group", group_size)


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["e4m3", "int8", "int4"])
def test_group_major_scales_are_the_row_major_ones_by_group(poison_cuda, fmt):
    """group_major=True: the same codes, the scales [K / group, M rounded up to 4] (what the byte warpgroup
    GEMM copies into its stages), each the row-major one."""
    for i, (m, groups) in enumerate([(1, 3), (5, 8), (64, 2), (37, 4)]):
        poison_cuda()
        x = _inputs(m, groups * 128, torch.bfloat16, seed=300 + i)
        q, s = quantize_activation(x, fmt, "dynamic_group", 128)
        qg, sg = quantize_activation(x, fmt, "dynamic_group", 128, group_major=True)
        assert tuple(sg.shape) == (groups, (m + 3) // 4 * 4) and sg.is_contiguous()
        assert torch.equal(bits(qg), bits(q)) and torch.equal(sg[:, :m], s.t())


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", FORMATS)
def test_static_tensor_matches_reference(poison_cuda, fmt):
    for i, (m, k) in enumerate(SHAPES):
        if get_format(fmt).bits == 4 and k % 2:
            continue
        x = _inputs(m, k, torch.bfloat16, seed=200 + i)
        scale = (x.float().abs().amax() / 3).reshape(1)  # saturates the largest values
        poison_cuda()
        _check(x, fmt, "static_tensor", scale=scale)


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["e4m3", "int8", "int4"])
def test_unaligned_strided_and_batched_inputs(fmt):
    base = _inputs(9, 1030, torch.float16, seed=7)
    for x in (base[:, 1:1025],      # rows start 2 bytes past alignment, row stride 1030
              base[:, 3:1027],      # odd offset
              base[1:4, 2:42],      # warp-per-row layout, strided
              base.reshape(3, 3, 1030)[:, :, :1024]):  # [..., K]
        if x.dim() == 3:
            q, s = quantize_activation(x, fmt, "dynamic_token")
            rq, rs = reference(x.reshape(-1, 1024), fmt, "dynamic_token")
            assert torch.equal(bits(q.reshape(9, -1).cpu()), bits(rq)) and s.shape == (3, 3, 1)
        else:
            _check(x, fmt, "dynamic_token")
    _check(base[:, 2:2 + 512], fmt, "dynamic_group", 64)  # unaligned rows, group path


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["dynamic_token", "static_tensor"])
def test_int4_one_code_per_byte_matches_the_packed_codes(poison_cuda, mode):
    """"int4+bytes": the int4 codes and scales, one code per byte (int8)."""
    scale = torch.tensor([0.05], device="cuda") if mode == "static_tensor" else None
    for i, (m, k) in enumerate(SHAPES):
        if k % 2:
            continue
        poison_cuda()
        x = _inputs(m, k, torch.float16, seed=i)
        q, s = quantize_activation(x, "int4", mode, scale=scale)
        qb, sb = quantize_activation(x, "int4+bytes", mode, scale=scale)
        torch.cuda.synchronize()
        assert qb.dtype == torch.int8 and qb.shape == (m, k)
        lo, hi = (q & 0xF).to(torch.int16), (q >> 4).to(torch.int16)
        codes = torch.stack((lo, hi), dim=-1).reshape(m, k)
        assert torch.equal(codes - 16 * (codes >= 8), qb.to(torch.int16))
        assert torch.equal(s, sb)


def _pow2_ceil(s: torch.Tensor) -> torch.Tensor:
    """The smallest power of two >= s (exactly: frexp, not a rounded log2)."""
    m, e = torch.frexp(s)  # s = m 2^e, m in [0.5, 1)
    return torch.ldexp(torch.ones_like(s), torch.where(m == 0.5, e - 1, e))


# (fmt, mode, group, scale format): what GEMMs on 16-bit operands ask for, NVFP4 / MXFP4 / MXFP8
# / DeepSeek FP8-block activations among them
VALUE_CASES = [("e2m1", "dynamic_group", 16, "e4m3"), ("e2m1", "dynamic_group", 32, "e8m0"),
               ("e4m3", "dynamic_group", 32, "e8m0"), ("e4m3", "dynamic_group", 128, "fp32"),
               ("int8", "dynamic_group", 64, "fp32"), ("int4", "dynamic_group", 128, "bf16"),
               ("e2m1", "dynamic_token", None, "fp32"), ("int8", "dynamic_token", None, "fp32"),
               ("e5m2", "dynamic_token", None, "e8m0"), ("e2m1", "static_tensor", None, "fp32"),
               ("int4", "static_tensor", None, "fp32")]


@pytest.mark.gpu
@pytest.mark.parametrize("out", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("case", VALUE_CASES, ids=lambda c: "-".join(str(v) for v in c))
def test_values_match_the_library_reference(poison_cuda, case, out):
    """16-bit values (``fmt + "+fp16"``): token and static modes hold reference.quantize_activation's
    codes exactly, with its scales; dynamic_group holds fp16(code x scale / t) with t the row's power
    of two >= every group scale (exact for e2m1/e4m3 codes over e4m3/e8m0 scales), and returns t."""
    from humming import reference as R
    from humming.ops.act_quant import VALUES
    from humming.scheme import ActivationScheme

    fmt, mode, g, sfmt = case
    act = ActivationScheme(fmt, mode, g, sfmt)
    for i, (m, k) in enumerate([(1, 4096), (3, 640), (37, 1024), (2, 16384), (5, 128)]):
        x = _inputs(m, k, torch.float16 if i % 2 else torch.bfloat16, seed=300 + i)
        scale = (x.float().abs().amax() / 3).reshape(1) if mode == "static_tensor" else None
        poison_cuda()
        v, s = quantize_activation(x, fmt + VALUES[out], mode, g, scale=scale, scale_fmt=sfmt)
        rq, rs = R.quantize_activation(x, act, scale)
        torch.cuda.synchronize()
        assert v.dtype == out and v.shape == (m, k) and s.dtype == torch.float32
        if mode == "dynamic_group":
            t = _pow2_ceil(rs.amax(dim=-1, keepdim=True))
            assert torch.equal(s, t), "row powers of two differ"
            want = ((rq * rs.repeat_interleave(g, dim=-1)) / t).to(out)
        else:
            assert torch.equal(s.reshape(-1), rs.reshape(-1)), "scales differ"
            want = rq.to(out)  # exact: the codes' values are 16-bit floats
        diff = (v.view(torch.int16) != want.view(torch.int16)).nonzero()
        assert diff.numel() == 0, f"{diff.shape[0]} values differ, first at {diff[0].tolist()}"
        exact = fmt in ("e2m1", "e4m3") and sfmt in ("e4m3", "e8m0") or mode != "dynamic_group"
        if exact:  # nothing rounded: value x t is the reference's own quantized activation
            xe = R.dequantize_activation(rq, rs, act)
            sv = s.reshape(1, 1) if mode == "static_tensor" else s.reshape(-1, 1)
            assert torch.equal(v.float() * sv, xe), "value x scale is not the reference's activation"


@pytest.mark.gpu
@pytest.mark.parametrize("sfmt", ["e4m3", "e8m0", "bf16"])
@pytest.mark.parametrize("fmt", ["int8", "e4m3", "e2m1"])
def test_scale_formats_round_up_like_the_reference(poison_cuda, fmt, sfmt):
    """Dynamic scales rounded up into their storage format (saturating), codes divided by them."""
    from humming import reference as R
    from humming.scheme import ActivationScheme

    for mode, g in (("dynamic_token", None), ("dynamic_group", 32)):
        act = ActivationScheme(fmt, mode, g, sfmt)
        x = _inputs(9, 2048, torch.float16, seed=17)
        x[0] *= 1e-3  # scales near the bottom of e4m3's range
        x[1, :32] = 60000.0  # and beyond its top: saturated at 448
        poison_cuda()
        q, s = quantize_activation(x, fmt, mode, g, scale_fmt=sfmt)
        rq, rs = R.quantize_activation(x, act)
        torch.cuda.synchronize()
        assert torch.equal(s.cpu(), rs.cpu()), f"{mode}: scales differ"
        f = get_format(fmt)
        qc = q.cpu()
        if f.bits == 4:
            qc = torch.stack((qc & 0xF, qc >> 4), dim=-1).reshape(x.shape)
            vals = f.decode(qc)
        else:
            vals = qc.float()
        assert torch.equal(vals, rq.cpu()), f"{mode}: codes differ"


@pytest.mark.gpu
def test_zero_rows_and_groups_get_scale_one():
    x = _inputs(4, 256, torch.float16, seed=3)
    x[1] = 0
    x[2, 64:128] = 0
    q, s = quantize_activation(x, "e4m3", "dynamic_token")
    assert s[1, 0].item() == 1.0 and torch.all(bits(q[1]) == 0)
    q, s = quantize_activation(x, "int8", "dynamic_group", 64)
    assert s[2, 1].item() == 1.0 and s[1].eq(1).all() and torch.all(q[2, 64:128] == 0)
    _check(x, "e2m1", "dynamic_group", 32)


@pytest.mark.gpu
def test_extreme_values_round_like_the_reference():
    """Ties, saturation, subnormal codes and values near the fp16 limits."""
    vals = torch.tensor([0.0, -0.0, 1e-7, -6e-8, 65504.0, -65504.0, 0.5, 1.5, 2.5, -2.5, 3.5, 447.9, 1e-3],
                        dtype=torch.float16)
    x = vals.repeat(3, 8).cuda()
    for fmt in FORMATS:
        _check(x, fmt, "dynamic_token")
        _check(x, fmt, "static_tensor", scale=torch.tensor([0.25], device="cuda"))
        _check(x, fmt, "static_tensor", scale=torch.tensor([3e-9], device="cuda"))


@pytest.mark.gpu
def test_software_and_native_fp8_encoders_agree():
    from humming.jit import get_kernel
    from humming.ops.act_quant import device_target

    x = _inputs(64, 4096, torch.bfloat16, seed=11)
    for fmt in ("e4m3", "e5m2"):
        outs = []
        for soft in (False, True):
            spec = act_quant_spec(fmt, "dynamic_token", x.dtype, 4096, device_target(x.device.index), soft_cvt=soft)
            q = torch.empty(64, 4096, dtype=quantized_dtype(fmt), device="cuda")
            s = torch.empty(64, 1, device="cuda")
            plan = get_kernel(spec).plan(ActQuantParams(x.data_ptr(), q.data_ptr(), s.data_ptr(), 64, 4096,
                                                        4096, 4096, 1))
            plan.launch(64)
            outs.append(bits(q).clone())
        assert torch.equal(outs[0], outs[1])
        _check(x, fmt, "dynamic_token")


@pytest.mark.gpu
def test_cuda_graph_capture_and_replay():
    x = _inputs(16, 4096, torch.float16, seed=1)
    scale = torch.tensor([0.05], device="cuda")
    quantize_activation(x, "e4m3", "dynamic_token")  # compile and load outside the capture
    quantize_activation(x, "int8", "static_tensor", scale=scale)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        q1, s1 = quantize_activation(x, "e4m3", "dynamic_token")
        q2, _ = quantize_activation(x, "int8", "static_tensor", scale=scale)
    for seed in (2, 3):
        x.copy_(_inputs(16, 4096, torch.float16, seed=seed))
        scale.fill_(0.01 * seed)
        graph.replay()
        torch.cuda.synchronize()
        rq1, rs1 = reference(x, "e4m3", "dynamic_token")
        rq2, _ = reference(x, "int8", "static_tensor", scale=scale)
        assert torch.equal(bits(q1.cpu()), bits(rq1)) and torch.equal(s1.cpu(), rs1)
        assert torch.equal(q2.cpu(), rq2)


class _QuantThenMatmul(torch.nn.Module):
    def forward(self, x, w):
        q, s = quantize_activation(x, "int8", "dynamic_token")
        return (q.float() * s) @ w


@pytest.mark.gpu
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_torch_compile_of_a_module_using_the_op(backend):
    torch._dynamo.reset()
    x = _inputs(8, 256, torch.float16, seed=5)
    w = torch.randn(256, 32, device="cuda")
    mod = _QuantThenMatmul()
    compiled = torch.compile(mod, backend=backend, fullgraph=True)
    torch.testing.assert_close(compiled(x, w), mod(x, w), rtol=1e-3, atol=1e-2)


@pytest.mark.gpu
def test_opcheck():
    x = _inputs(4, 256, torch.float16, seed=9)
    torch.library.opcheck(torch.ops.humming.quantize_activation.default, (x, "e4m3", "dynamic_token", None, None))
    torch.library.opcheck(torch.ops.humming.quantize_activation.default,
                          (x, "int4", "dynamic_group", 32, None))
