"""Formats whose producer cannot run here, built from their published layout and checked
against an independent reader that is installed (transformers' own loaders, compressed-tensors'
AutoAWQ converter). Each test names the document its fixture follows."""
from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import save_file

from humming.dtypes import get_format
from humming.formats import load_checkpoint, load_moe, split_gate_up
from humming.reference import dequantize


def _save(d, tensors, quant_config, name="model.safetensors"):
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(d / name))
    (d / "config.json").write_text(json.dumps({"quantization_config": quant_config}))
    return d


# ---------------------------------------------------------------------------
# AWQ -- AutoAWQ awq/modules/linear/gemm.py (WQLinear_GEMM.from_linear) packing order
# ---------------------------------------------------------------------------

AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]


def _pack_awq(values: torch.Tensor) -> torch.Tensor:
    """[R, C] ints in 0..15 -> [R, C/8] int32, nibble i of word c = column 8c + AWQ_ORDER[i]."""
    r, c = values.shape
    out = torch.zeros(r, c // 8, dtype=torch.int64)
    for col in range(c // 8):
        for i in range(8):
            out[:, col] |= values[:, col * 8 + AWQ_ORDER[i]].to(torch.int64) << (4 * i)
    return ((out + 2 ** 31) % 2 ** 32 - 2 ** 31).to(torch.int32)


def test_awq_gemm_matches_compressed_tensors_converter(tmp_path):
    ct = pytest.importorskip("compressed_tensors.entrypoints.convert.converters.autoawq")
    g = torch.Generator().manual_seed(0)
    k, n, gs = 128, 32, 32
    q = torch.randint(0, 16, (k, n), generator=g)  # AWQ stores [K, N]
    z = torch.randint(0, 16, (k // gs, n), generator=g)
    s = (torch.rand(k // gs, n, generator=g) * 0.02 + 0.001).half()
    bias = torch.randn(n, generator=g).half()
    tensors = {"l.qweight": _pack_awq(q), "l.qzeros": _pack_awq(z), "l.scales": s, "l.bias": bias}
    _save(tmp_path, tensors, {"quant_method": "awq", "bits": 4, "group_size": gs, "zero_point": True,
                              "version": "gemm"})
    qw = load_checkpoint(tmp_path).layers["l"]
    assert qw.scheme.describe() == "uint4 g32 fp16 scales, int zero points"
    # compressed-tensors' reader of the same packing; AutoAWQ dequantizes (q - z) * s in fp16
    conv = ct.AutoAWQConverter(bits=4, group_size=gs)
    wq, ws, wz = conv._convert_gemm_module(tensors["l.qweight"], s, tensors["l.qzeros"])
    want = ((wq.float() - wz.float().repeat_interleave(gs, 1)) * ws.float().repeat_interleave(gs, 1)).half()
    assert torch.equal(dequantize(qw).half(), want)
    assert torch.equal(qw.codes, q.t().to(torch.uint8))  # and the codes are the ones we packed
    assert torch.equal(qw.bias, bias.float())


# ---------------------------------------------------------------------------
# gpt-oss MXFP4 -- OpenAI gpt-oss model card / OCP MX v1.0; reader: transformers integrations/mxfp4.py
# ---------------------------------------------------------------------------


def _gpt_oss(tmp_path, e=3, hidden=64, inter=32):
    """gate_up_proj [E, 2I, H/32, 16] (interleaved gate/up rows), down_proj [E, H, I/32, 16]."""
    g = torch.Generator().manual_seed(1)
    pre = "model.layers.0.mlp.experts."
    u8 = dict(generator=g, dtype=torch.uint8)
    tensors = {
        pre + "gate_up_proj_blocks": torch.randint(0, 256, (e, 2 * inter, hidden // 32, 16), **u8),
        pre + "gate_up_proj_scales": torch.randint(118, 134, (e, 2 * inter, hidden // 32), **u8),
        pre + "gate_up_proj_bias": torch.randn(e, 2 * inter, generator=g).bfloat16(),
        pre + "down_proj_blocks": torch.randint(0, 256, (e, hidden, inter // 32, 16), **u8),
        pre + "down_proj_scales": torch.randint(118, 134, (e, hidden, inter // 32), **u8),
        "model.layers.0.mlp.router.weight": torch.randn(e, hidden, generator=g).bfloat16(),
    }
    _save(tmp_path, tensors, {"quant_method": "mxfp4", "modules_to_not_convert": ["router"]})
    return pre, tensors


def test_gpt_oss_mxfp4_experts_match_transformers(tmp_path):
    mx = pytest.importorskip("transformers.integrations.mxfp4")
    pre, t = _gpt_oss(tmp_path)
    ck = load_checkpoint(tmp_path)
    assert set(ck.layers) == {pre + "gate_up_proj", pre + "down_proj"}
    assert list(ck.unquantized) == ["model.layers.0.mlp.router.weight"]
    qw = ck.layers[pre + "gate_up_proj"]
    assert qw.is_moe and qw.num_experts == 3 and (qw.n, qw.k) == (64, 64)
    assert qw.scheme.describe() == "e2m1 g32 e8m0 scales"
    want = mx.convert_moe_packed_tensors(t[pre + "gate_up_proj_blocks"], t[pre + "gate_up_proj_scales"],
                                         dtype=torch.float32).transpose(1, 2)  # transformers keeps [E, K, N]
    assert torch.equal(dequantize(qw), want)
    assert torch.equal(qw.bias, t[pre + "gate_up_proj_bias"].float())
    assert load_moe(ck.quant_config, ck.tensors, pre + "down_proj").num_experts == 3


def test_split_gate_up_takes_even_rows_as_gate(tmp_path):
    pre, t = _gpt_oss(tmp_path)
    qw = load_checkpoint(tmp_path).layers[pre + "gate_up_proj"]
    gate, up = split_gate_up(qw)
    w = dequantize(qw)
    assert torch.equal(dequantize(gate), w[:, 0::2]) and torch.equal(dequantize(up), w[:, 1::2])
    assert torch.equal(gate.bias, qw.bias[:, 0::2]) and torch.equal(up.bias, qw.bias[:, 1::2])
    assert (gate.meta["row_order"], up.meta["row_order"]) == ("gate", "up")


# ---------------------------------------------------------------------------
# BitNet b1.58 -- transformers integrations/bitnet.py (pack_weights / BitLinear / AutoBitLinear)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("linear_class", ["bitlinear", "autobitlinear"])
def test_bitnet_blocked_packing_and_scale_convention(tmp_path, linear_class):
    bn = pytest.importorskip("transformers.integrations.bitnet")
    g = torch.Generator().manual_seed(2)
    tern = torch.randint(-1, 2, (32, 48), generator=g, dtype=torch.int8)
    packed = bn.pack_weights(tern.clone())
    ws = torch.tensor([2.375], dtype=torch.bfloat16)
    _save(tmp_path, {"m.proj.weight": packed, "m.proj.weight_scale": ws},
          {"quant_method": "bitnet", "linear_class": linear_class, "quantization_mode": "offline"})
    ck = load_checkpoint(tmp_path)
    qw = ck.layers["m.proj"]
    assert qw.scheme.fmt == "int2" and qw.scheme.scale == "tensor"
    unpack = getattr(bn.unpack_weights, "_torchdynamo_orig_callable", bn.unpack_weights)  # skip torch.compile
    values = unpack(packed, dtype=torch.float32)
    assert torch.equal(get_format("int2").decode(qw.codes), values)
    assert torch.equal(values, tern.float())
    if linear_class == "bitlinear":  # BitLinear: y = (x_q @ w.T) / (x_scale * weight_scale)
        assert qw.meta["scale_divides"] and torch.equal(qw.scales, 1.0 / ws.float().reshape(1, 1))
    else:  # AutoBitLinear: y = (x @ w.T) * weight_scale
        assert torch.equal(dequantize(qw), values * ws.float())
    assert ck.activation_scheme.describe() == "int8 dynamic token (fp32 scales)"


# ---------------------------------------------------------------------------
# FP8 block -- DeepSeek-V3 weight_scale_inv; reader: transformers integrations/finegrained_fp8.py
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("scale_store", ["fp32", "ue8m0_fp32", "ue8m0_e8m0"])
def test_fp8_block_matches_transformers_dequant(tmp_path, scale_store):
    fp8 = pytest.importorskip("transformers.integrations.finegrained_fp8")
    g = torch.Generator().manual_seed(4)
    n, k = 200, 320  # partial last blocks on both axes
    w = (torch.randn(n, k, generator=g) * 50).to(torch.float8_e4m3fn)
    sn, sk = -(-n // 128), -(-k // 128)
    if scale_store == "fp32":
        s = torch.rand(sn, sk, generator=g) * 0.01 + 1e-4
    else:
        s = torch.exp2(torch.randint(-12, -2, (sn, sk), generator=g).float())
    stored = s.to(torch.float8_e8m0fnu) if scale_store == "ue8m0_e8m0" else s
    qc = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
    if scale_store != "fp32":
        qc["scale_fmt"] = "ue8m0"
    _save(tmp_path, {"x.weight": w, "x.weight_scale_inv": stored}, qc)
    ck = load_checkpoint(tmp_path)
    qw = ck.layers["x"]
    assert qw.scheme.scale_fmt == ("fp32" if scale_store == "fp32" else "e8m0")
    assert (qw.scheme.scale, qw.scheme.block_n, qw.scheme.group_size) == ("block", 8, 64)  # gcd refinement
    want = fp8._dequantize_fp8_weight(w, s, [128, 128], torch.float32)
    assert torch.equal(dequantize(qw), want)
    assert ck.activation_scheme.describe().startswith("e4m3 dynamic group g128")
