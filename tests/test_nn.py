"""humming.nn.QuantLinear on the CPU (the reference path) and, where a GPU is, on humming's
kernels: construction, static activation scales (a calibrated ``input_scale``), checkpoints."""
from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import save_file

from humming import reference as R
from humming.errors import ShapeError
from humming.formats import load_checkpoint
from humming.nn import QuantLinear, QuantMoE
from humming.scheme import ActivationScheme, WeightScheme

FP8_STATIC = ActivationScheme("e4m3", "static_tensor")


def _modelopt_fp8(tmp_path, input_scale: float | None = 0.05):
    """A ModelOpt FP8 checkpoint (e4m3 weights with a tensor scale, static e4m3 activations) of
    one layer "l" [96, 256]; the QuantizedWeight it was written from."""
    g = torch.Generator().manual_seed(3)
    qw = R.quantize(torch.randn(96, 256, generator=g) * 0.02, WeightScheme("e4m3", "tensor", scale_fmt="fp32"))
    t = {"l.weight": qw.codes.view(torch.float8_e4m3fn).contiguous(), "l.weight_scale": qw.scales.reshape(())}
    if input_scale is not None:
        t["l.input_scale"] = torch.tensor(input_scale)
    save_file(t, str(tmp_path / "model.safetensors"))
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(
        {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8"}}))
    return qw


def test_from_float_runs_the_reference_on_cpu():
    w = torch.randn(64, 256) * 0.02
    ql = QuantLinear.from_float(w, WeightScheme("int4", "group", 128), device="cpu")
    assert ql.prepared is None and "reference (CPU)" in repr(ql)
    x = torch.randn(2, 3, 256)
    y = ql(x)
    assert y.shape == (2, 3, 64) and y.dtype == torch.float16
    want = R.gemm(x.reshape(-1, 256), ql.qweight, ActivationScheme("fp16")).to(torch.float16)  # x as fp16 sees it
    assert torch.equal(y, want.reshape(2, 3, 64))


def test_the_ops_name_a_weight_that_is_not_prepared():
    """gemm / moe_gemm given a QuantizedWeight, a tensor (arguments swapped) or None, and prepare_weight given a
    float tensor, raise an error that says what was expected and what came -- before any GPU is needed."""
    import humming

    qw = R.quantize(torch.randn(64, 256) * 0.02, WeightScheme("int4", "group", 128))
    x = torch.randn(2, 256, dtype=torch.float16)
    with pytest.raises(ShapeError, match=r"gemm: the weight must be a PreparedWeight .* got a QuantizedWeight; "
                                         r"prepare it once with humming.prepare_weight"):
        humming.gemm(x, qw)
    with pytest.raises(ShapeError, match=r"got a torch.Tensor \(the arguments are x, then the prepared weight\)"):
        humming.gemm(qw, x)
    with pytest.raises(ShapeError, match="got NoneType"):
        humming.gemm(x, None)
    with pytest.raises(ShapeError, match="moe_gemm: the weight must be a PreparedWeight .* got a QuantizedWeight"):
        humming.moe_gemm(x, qw, torch.zeros(2, 1, dtype=torch.int32))
    from humming.ops.moe import moe_gemm_batched

    with pytest.raises(ShapeError, match="moe_gemm_batched: the weight must be a PreparedWeight .* got a Quantized"):
        moe_gemm_batched(x[None], qw, torch.ones(1, dtype=torch.int32))
    # the modules check their inputs on the reference path (CPU) as the kernels' path does
    ql = QuantLinear.from_float(torch.randn(64, 256) * 0.02, WeightScheme("int4", "group", 128), device="cpu")
    with pytest.raises(ShapeError, match=r"QuantLinear: x must be a floating-point tensor \[..., 256\] "
                                         r"\(in_features\), got torch.float32 \[2, 200\]"):
        ql(torch.randn(2, 200))
    with pytest.raises(ShapeError, match=r"got torch.int64 \[2, 256\]"):
        ql(torch.ones(2, 256, dtype=torch.long))
    qm = QuantMoE.from_float(torch.randn(4, 64, 256) * 0.02, WeightScheme("int4", "group", 128), device="cpu")
    with pytest.raises(ShapeError, match=r"x must be \[M, K\] = \[3, 256\]"):
        qm(torch.randn(3, 200), torch.zeros(3, 2, dtype=torch.int32))
    with pytest.raises(ShapeError, match=r"topk_weights must be a float tensor \[M, topk\] = \[3, 2\]"):
        qm(torch.randn(3, 256), torch.zeros(3, 2, dtype=torch.int32), torch.rand(3, 3))
    with pytest.raises(ShapeError, match=r"prepare_weight: the weight must be a QuantizedWeight, got Tensor "
                                         r"\(a float weight: quantize it first"):
        humming.prepare_weight(torch.randn(64, 256))


def test_static_activations_need_one_positive_scale():
    w = torch.randn(32, 128) * 0.02
    with pytest.raises(ShapeError, match="e4m3 static tensor .* need act_scale"):
        QuantLinear.from_float(w, WeightScheme("int4", "group", 128), FP8_STATIC, device="cpu")
    for bad in (torch.tensor([0.1, 0.2]), -1.0, float("nan")):
        with pytest.raises(ShapeError, match="one finite positive value"):
            QuantLinear.from_float(w, WeightScheme("int4", "group", 128), FP8_STATIC, device="cpu", act_scale=bad)
    with pytest.raises(ShapeError, match="act_scale is for static_tensor activations"):
        QuantLinear.from_float(w, WeightScheme("int4", "group", 128), ActivationScheme("e4m3", "dynamic_token"),
                               device="cpu", act_scale=0.1)


def test_checkpoint_input_scale_is_the_static_scale(tmp_path):
    """ModelOpt FP8: the layer's input_scale is the activations' static scale, on every call."""
    qw = _modelopt_fp8(tmp_path)
    ql = QuantLinear.from_checkpoint(tmp_path, "l", device="cpu")
    assert ql.activation == FP8_STATIC and ql.act_scale.tolist() == [pytest.approx(0.05)]
    x = torch.randn(5, 256)
    want = R.gemm(x, qw, FP8_STATIC, act_scale=torch.tensor([0.05])).to(torch.float16)
    assert torch.equal(ql(x), want)
    # a different scale quantizes differently: the module really uses its own
    assert not torch.equal(want, R.gemm(x, qw, FP8_STATIC, act_scale=torch.tensor([0.5])).to(torch.float16))


def test_checkpoint_without_input_scale_names_the_layer(tmp_path):
    _modelopt_fp8(tmp_path, input_scale=None)
    with pytest.raises(ShapeError, match=r"layer l has e4m3 static tensor .* no l\.input_scale"):
        QuantLinear.from_checkpoint(load_checkpoint(tmp_path), "l", device="cpu")


@pytest.mark.gpu
def test_checkpoint_static_activations_on_the_gpu(tmp_path):
    qw = _modelopt_fp8(tmp_path)
    ql = QuantLinear.from_checkpoint(tmp_path, "l", device="cuda")
    assert ql.prepared is not None and ql.act_scale.device.type == "cuda"
    x = torch.randn(16, 256, device="cuda", dtype=torch.float16)
    ref = R.gemm(x.float(), qw.to("cuda"), FP8_STATIC, act_scale=ql.act_scale)
    y = ql(x)
    assert torch.allclose(y.float(), ref, rtol=3e-3, atol=3e-3 * float(ref.abs().max()))


def test_a_rank_of_a_checkpoint_layer_whose_groups_straddle_the_ranks(tmp_path):
    """(CPU, the reference path) Four ranks of a GPTQ layer of 1280 columns in groups of 128: 320 columns each,
    starting 0, 64, 0 and 64 columns into a group. The ranks' outputs sum to the whole layer's (fp16 outputs)."""
    from humming.demo import write_gptq_checkpoint

    write_gptq_checkpoint(str(tmp_path), layers={"l": (96, 1280)})
    whole = QuantLinear.from_checkpoint(tmp_path, "l", device="cpu")
    x = torch.randn(3, 1280)
    parts = [QuantLinear.from_checkpoint(tmp_path, "l", device="cpu", k_shard=(r * 320, 320)) for r in range(4)]
    assert [p.qweight.scheme.group_offset for p in parts] == [0, 64, 0, 64]
    assert [p.in_features for p in parts] == [320] * 4
    total = sum(p(x[:, r * 320:(r + 1) * 320]).float() for r, p in enumerate(parts))
    assert torch.allclose(total, whole(x).float(), rtol=1e-2, atol=1e-2 * float(whole(x).abs().max()))


def _w4a8_fp8_checkpoint(tmp_path, device):
    """A GPTQ int4 layer loaded with e4m3 activations per token (W4A8-FP8 from a weight-only checkpoint)."""
    from humming.demo import write_gptq_checkpoint

    write_gptq_checkpoint(str(tmp_path), layers={"l": (96, 640)})
    act = ActivationScheme("e4m3", "dynamic_token")
    ql = QuantLinear.from_checkpoint(tmp_path, "l", activation=act, device=device)
    assert ql.activation == act and ql.qweight.scheme.format.name == "uint4"
    return ql, act


def test_a_weight_only_checkpoint_with_fp8_activations(tmp_path):
    """(CPU, the reference path) the activations are quantized to e4m3 per token before the product: the module's
    output is the reference's for that activation scheme, not the fp16 one."""
    ql, act = _w4a8_fp8_checkpoint(tmp_path, "cpu")
    x = torch.randn(5, 640)
    assert torch.equal(ql(x), R.gemm(x, ql.qweight, act).to(torch.float16))
    assert not torch.equal(ql(x), R.gemm(x, ql.qweight, ActivationScheme("fp16")).to(torch.float16))


@pytest.mark.gpu
def test_a_weight_only_checkpoint_with_fp8_activations_on_the_gpu(tmp_path):
    """The same on the GPU: e4m3 MMAs where the chip has them natively (sm_89, sm_90, sm_120: the int4 codes made
    e4m3 operands), 16-bit ones elsewhere; within the fp8 tolerance of the reference (the activations' e4m3
    rounding is the reference's own; what is left is fp32 sums and the fp16 output)."""
    ql, act = _w4a8_fp8_checkpoint(tmp_path, "cuda")
    cap = torch.cuda.get_device_capability()
    native = cap in ((8, 9), (9, 0), (12, 0))
    assert (ql.prepared.plan.compute.a == "e4m3") == native, ql.prepared.plan.explain()
    for m in (1, 16, 33, 300):
        x = torch.randn(m, 640, device="cuda", dtype=torch.float16)
        ref = R.gemm(x.float(), ql.qweight.to("cuda"), act)
        y = ql(x)
        assert torch.allclose(y.float(), ref, rtol=3e-3, atol=3e-3 * float(ref.abs().max())), m
