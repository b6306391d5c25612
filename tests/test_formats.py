"""humming.formats: dispatch, schemes from configs, checkpoints on disk, MoE stacking and bad input."""
from __future__ import annotations

import json
import struct

import pytest
import torch
from safetensors.torch import save_file

from humming.errors import FormatError
from humming.formats import (detect_format, load, load_checkpoint, load_moe, read_header, schemes_from_config)
from humming.formats._common import unpack_bits
from humming.reference import dequantize


def _pack4(v: torch.Tensor, dim: int) -> torch.Tensor:
    """Pack 4-bit values 8 per int32 word along ``dim``, low nibble first (GPTQ layout)."""
    x = v.movedim(dim, -1).to(torch.int64)
    x = x.reshape(*x.shape[:-1], -1, 8) << (torch.arange(8) * 4)
    w = x.sum(-1)
    return ((w + 2 ** 31) % 2 ** 32 - 2 ** 31).to(torch.int32).movedim(-1, dim).contiguous()


def _gptq_tensors(prefix="l", n=16, k=64, gs=32, zeros=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randint(0, 16, (k, n), generator=g)
    z = torch.full((k // gs, n), 7) if zeros is None else zeros
    s = (torch.rand(k // gs, n, generator=g) + 0.5).half()
    t = {f"{prefix}.qweight": _pack4(q, 0), f"{prefix}.qzeros": _pack4(z, 1), f"{prefix}.scales": s,
         f"{prefix}.g_idx": (torch.arange(k) // gs).to(torch.int32)}
    return t, q, z, s


GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 32, "sym": True, "desc_act": False}


def _save(d, tensors, config, name="model.safetensors"):
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(d / name))
    (d / "config.json").write_text(json.dumps(config))
    return d


# ---------------------------------------------------------------------------
# dispatch and schemes
# ---------------------------------------------------------------------------


def test_detect_format_by_quant_method_and_unknown_method_is_named():
    assert detect_format({"quantization_config": GPTQ}).NAME == "gptq"
    assert detect_format({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4"}}).NAME == "modelopt"
    with pytest.raises(FormatError, match=r"quant_method: expected one of .*gptq.*got 'hqq'"):
        detect_format({"quant_method": "hqq"})


def test_unpack_bits_dense_stream_crosses_words():
    vals = torch.randint(0, 8, (3, 32), generator=torch.Generator().manual_seed(5))
    stream = sum(int(v) << (3 * i) for i, v in enumerate(vals[1].tolist()))
    words = [(stream >> (32 * w)) & 0xFFFFFFFF for w in range(3)]
    packed = torch.tensor([[w - (1 << 32) if w >= 1 << 31 else w for w in words]], dtype=torch.int32)
    assert torch.equal(unpack_bits("x", packed, 3, 32)[0], vals[1].to(torch.uint8))


def test_gptq_symmetric_v1_zero_7_maps_to_uint4_implicit_offset():
    t, q, _, s = _gptq_tensors()
    qw = load(GPTQ, t, "l")
    assert qw.scheme.describe() == "uint4 g32 fp16 scales" and qw.zeros is None
    want = (q.float() - 8) * s.float().repeat_interleave(32, 0)
    assert torch.equal(dequantize(qw), want.t())


def test_gptq_v2_and_v1_overflowed_zero():
    t, q, _, s = _gptq_tensors(zeros=torch.full((2, 16), 8))
    assert load(dict(GPTQ, checkpoint_format="gptq_v2"), t, "l").zeros is None  # v2 stores 8 itself
    z = torch.randint(0, 16, (2, 16), generator=torch.Generator().manual_seed(1))
    z[0, 0] = 15  # v1 stored 15: AutoGPTQ's dequantizer uses 15 + 1 = 16
    t, q, _, s = _gptq_tensors(zeros=z)
    qw = load(dict(GPTQ, sym=False), t, "l")
    assert qw.scheme.zero_point == "float" and float(qw.zeros[0, 0]) == 16.0
    want = (q.float() - (z.float() + 1).repeat_interleave(32, 0)) * s.float().repeat_interleave(32, 0)
    assert torch.equal(dequantize(qw), want.t())


def test_schemes_from_whole_config_or_quantization_config():
    ws, act = schemes_from_config({"quantization_config": dict(GPTQ, desc_act=True), "torch_dtype": "bfloat16"})
    assert ws.describe() == "uint4 g32 fp16 scales, act order" and act.fmt == "bf16"
    ws2, act2 = schemes_from_config(dict(GPTQ, sym=False, group_size=-1))
    assert ws2.describe() == "uint4 per-channel fp16 scales, int zero points" and act2.fmt == "fp16"


CT_TWO_GROUPS = {
    "quant_method": "compressed-tensors", "format": "mixed-precision", "ignore": ["lm_head", "re:.*router$"],
    "config_groups": {
        "attn": {"targets": ["re:.*self_attn.*"], "format": "float-quantized",
                 "weights": {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True},
                 "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True}},
        "mlp": {"targets": ["Linear"], "format": "pack-quantized",
                "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 64,
                            "symmetric": False}},
    },
}


def test_compressed_tensors_groups_picked_per_layer():
    ws, act = schemes_from_config(CT_TWO_GROUPS, layer_name="model.layers.0.self_attn.q_proj")
    assert ws.fmt == "e4m3" and ws.scale == "channel" and act.describe() == "e4m3 dynamic token (fp32 scales)"
    ws, act = schemes_from_config(CT_TWO_GROUPS, layer_name="model.layers.0.mlp.up_proj")
    assert ws.describe() == "uint4 g64 bf16 scales, int zero points" and act.fmt == "bf16"
    ws, _ = schemes_from_config({"quantization_config": CT_TWO_GROUPS, "torch_dtype": "float16"})
    assert ws.fmt == "uint4" and ws.scale_fmt == "fp16"  # default: the first group targeting Linear
    with pytest.raises(FormatError, match="ignore"):
        load(CT_TWO_GROUPS, {}, "model.layers.0.mlp.router")


# ---------------------------------------------------------------------------
# checkpoints on disk
# ---------------------------------------------------------------------------


def test_load_checkpoint_sharded_with_index_and_unquantized_tensors(tmp_path):
    t0, *_ = _gptq_tensors("model.a")
    t1, *_ = _gptq_tensors("model.b", seed=1)
    t1["model.norm.weight"] = torch.ones(16)
    save_file(t0, str(tmp_path / "model-00001-of-00002.safetensors"))
    save_file(t1, str(tmp_path / "model-00002-of-00002.safetensors"))
    wm = {**{k: "model-00001-of-00002.safetensors" for k in t0}, **{k: "model-00002-of-00002.safetensors" for k in t1}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": wm}))
    (tmp_path / "quantize_config.json").write_text(json.dumps({k: v for k, v in GPTQ.items() if k != "quant_method"}))
    ck = load_checkpoint(tmp_path, eager=True)
    assert ck.format == "gptq" and sorted(ck.layers) == ["model.a", "model.b"]
    assert list(ck.unquantized) == ["model.norm.weight"]
    moe = ck.moe(["model.a", "model.b"])
    assert moe.is_moe and tuple(moe.codes.shape) == (2, 16, 64)
    assert torch.equal(dequantize(moe)[1], dequantize(ck.layers["model.b"]))
    wm["model.c.qweight"] = "model-00003-of-00002.safetensors"
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": wm}))
    with pytest.raises(FormatError, match="model-00003-of-00002.safetensors is missing"):
        load_checkpoint(tmp_path)


def test_load_moe_stacks_act_order_experts():
    experts = []
    tensors = {}
    for e in range(3):
        t, *_ = _gptq_tensors(f"experts.{e}.w1", seed=e)
        perm = torch.randperm(64, generator=torch.Generator().manual_seed(10 + e))
        gi = torch.empty(64, dtype=torch.int32)
        gi[perm] = (torch.arange(64) // 32).to(torch.int32)
        t[f"experts.{e}.w1.g_idx"] = gi
        tensors.update(t)
        experts.append(f"experts.{e}.w1")
    moe = load_moe(dict(GPTQ, desc_act=True), tensors, experts)
    assert moe.scheme.act_order and tuple(moe.perm.shape) == (3, 64)
    for e, p in enumerate(experts):
        assert torch.equal(dequantize(moe)[e], dequantize(load(GPTQ, tensors, p)))


# ---------------------------------------------------------------------------
# bad input: every error names the tensor or key, the expected and the found
# ---------------------------------------------------------------------------


def test_missing_tensor_is_named():
    t, *_ = _gptq_tensors()
    del t["l.qzeros"]
    with pytest.raises(FormatError, match=r"tensor l\.qzeros: expected in the checkpoint, not found"):
        load(GPTQ, t, "l")


def test_wrong_dtype_and_shape_are_named():
    t, *_ = _gptq_tensors()
    bad = dict(t, **{"l.scales": t["l.scales"].to(torch.int32)})
    with pytest.raises(FormatError, match=r"tensor l\.scales: expected dtype float16 or bfloat16 or float32, "
                                          r"got int32"):
        load(GPTQ, bad, "l")
    bad = dict(t, **{"l.qzeros": t["l.qzeros"][:1]})
    with pytest.raises(FormatError, match=r"tensor l\.qzeros: expected shape \[2, 2\], got \[1, 2\]"):
        load(GPTQ, bad, "l")


def test_group_size_against_k_and_bits_against_packing():
    t, *_ = _gptq_tensors()
    with pytest.raises(FormatError, match=r"group_size: 48 does not divide K=64"):
        load(dict(GPTQ, group_size=48), t, "l")
    with pytest.raises(FormatError, match=r"tensor l\.scales: expected 4 rows \(K=64 / group_size=16\), got 2"):
        load(dict(GPTQ, group_size=16), t, "l")
    with pytest.raises(FormatError, match=r"bits=3 against the packing"):
        load(dict(GPTQ, bits=3), t, "l")
    with pytest.raises(FormatError, match=r"quantization_config.bits: expected 4 .*AWQ.*got 3"):
        load({"quant_method": "awq", "bits": 3}, t, "l")


def test_inconsistent_g_idx_is_refused():
    t, *_ = _gptq_tensors()
    t["l.g_idx"] = torch.zeros(64, dtype=torch.int32)
    with pytest.raises(FormatError, match=r"tensor l\.g_idx: expected every group to hold 32 columns, "
                                          r"group 0 holds 64"):
        load(GPTQ, t, "l")


def test_ue8m0_config_with_non_power_of_two_scales_is_refused():
    qc = {"quant_method": "fp8", "weight_block_size": [128, 128], "scale_fmt": "ue8m0"}
    t = {"x.weight": torch.zeros(128, 128).to(torch.float8_e4m3fn), "x.weight_scale_inv": torch.full((1, 1), 0.3)}
    with pytest.raises(FormatError, match="not all powers of two"):
        load(qc, t, "x")


def test_nan_scale_and_bad_ternary_code_are_refused():
    t, *_ = _gptq_tensors()
    t["l.scales"][0, 3] = float("nan")
    with pytest.raises(FormatError, match=r"tensor l\.scales: expected finite values, found 1 NaN/inf"):
        load(GPTQ, t, "l")
    bit = {"w.weight": torch.full((2, 8), 0b11, dtype=torch.uint8), "w.weight_scale": torch.ones(1)}
    with pytest.raises(FormatError, match=r"tensor w\.weight: found the 2-bit value 3"):
        load({"quant_method": "bitnet"}, bit, "w")


def test_truncated_safetensors_raises_naming_file_and_tensor(tmp_path):
    t, *_ = _gptq_tensors()
    _save(tmp_path, t, {"quantization_config": GPTQ})
    f = tmp_path / "model.safetensors"
    data = f.read_bytes()
    f.write_bytes(data[:-40])
    with pytest.raises(FormatError, match=r"model\.safetensors, tensor l\.\w+: data ends at byte \d+.*truncated"):
        load_checkpoint(tmp_path)
    f.write_bytes(data[:5])
    with pytest.raises(FormatError, match="expected an 8-byte header length"):
        load_checkpoint(tmp_path)


def test_corrupt_safetensors_header_raises(tmp_path):
    p = tmp_path / "x.safetensors"
    body = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                       "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}).encode()
    p.write_bytes(struct.pack("<Q", len(body)) + body + bytes(12))
    with pytest.raises(FormatError, match=r"tensor b: data at 4 overlaps the previous tensor"):
        read_header(str(p))
    body = b"{not json"
    p.write_bytes(struct.pack("<Q", len(body)) + body)
    with pytest.raises(FormatError, match="header is not valid JSON"):
        read_header(str(p))
    body = json.dumps({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}).encode()
    p.write_bytes(struct.pack("<Q", len(body)) + body + bytes(8))
    with pytest.raises(FormatError, match=r"tensor a: shape \[3\] of F32 needs 12 bytes, data_offsets span 8"):
        read_header(str(p))


def test_checkpoint_without_quantization_config(tmp_path):
    save_file({"w": torch.zeros(2)}, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FormatError, match="no quantization config found"):
        load_checkpoint(tmp_path)


def test_compressed_tensors_legacy_per_word_packing():
    """compressed-tensors before its dense packing put ``32 // bits`` values in each int32 word
    (its ``pack_to_int32`` with ``pack_factor = 32 // num_bits``): 3-bit values, 10 per word."""
    g = torch.Generator().manual_seed(8)
    n, k = 8, 64
    u = torch.randint(0, 8, (n, k), generator=g)  # stored values q + 4
    words = torch.zeros(n, 7, dtype=torch.int64)
    for i in range(k):
        words[:, i // 10] |= u[:, i].to(torch.int64) << (3 * (i % 10))
    s = (torch.rand(n, 2, generator=g) + 0.5).bfloat16()
    t = {"p.weight_packed": words.to(torch.int32), "p.weight_shape": torch.tensor([n, k]), "p.weight_scale": s}
    qc = {"quant_method": "compressed-tensors", "format": "pack-quantized",
          "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 3, "type": "int",
                                                                      "strategy": "group", "group_size": 32}}}}
    qw = load(qc, t, "p")
    assert qw.scheme.describe() == "int3 g32 bf16 scales"
    assert torch.equal(dequantize(qw), (u.float() - 4) * s.float().repeat_interleave(32, 1))
    t["p.weight_packed"] = words[:, :5].to(torch.int32)
    with pytest.raises(FormatError, match=r"tensor p\.weight_packed: expected 6 packed int32 words .* got 5"):
        load(qc, t, "p")


@pytest.mark.gpu
def test_loaders_accept_cuda_tensors():
    t, *_ = _gptq_tensors()
    perm = torch.randperm(64, generator=torch.Generator().manual_seed(2))
    t["l.g_idx"] = torch.empty(64, dtype=torch.int32).index_put_((perm,), (torch.arange(64) // 32).to(torch.int32))
    t["w.weight"] = torch.randint(0, 3, (4, 32), dtype=torch.uint8) | (torch.randint(0, 3, (4, 32)) << 2).to(
        torch.uint8)
    t["w.weight_scale"] = torch.tensor([1.5])
    for qc, p in ((dict(GPTQ, desc_act=True), "l"), ({"quant_method": "bitnet"}, "w")):
        cpu = load(qc, t, p)
        gpu = load(qc, {k: v.cuda() for k, v in t.items()}, p)
        assert gpu.device.type == "cuda"
        assert torch.equal(dequantize(gpu).cpu(), dequantize(cpu))


@pytest.mark.parametrize("device", ["H200", "H100", "A100", "L40S", "RTX-4090", "T4"])
def test_group_activation_checkpoints_plan_their_scales_by_the_compute_type(tmp_path, device):
    """The plans the GPU test of these checkpoints (test_gemm_gpu.test_checkpoints_with_group_activations) runs,
    on the CPU, for several chips: each runnable, the activation group scales folded into the 16-bit values (and a
    per-row power of two in the epilogue) on 16-bit operands, or into fp32 partial sums on 8-bit ones -- which the
    DeepSeek FP8-block layer takes on Hopper's e4m3 warpgroup MMAs (the GPU test expected the first everywhere and
    failed on Hopper from 2703b0c until the sixty-eighth session)."""
    import humming
    from _checkpoints import nvfp4_and_fp8_block_checkpoints
    from humming.scheme import LayerSpec

    for folder, prefix, qw in nvfp4_and_fp8_block_checkpoints(tmp_path):
        ck = load_checkpoint(folder)
        ws, act = ck.schemes(prefix)
        assert act.quant == "dynamic_group", act.describe()
        plan = humming.plan(LayerSpec(qw.n, qw.k, ws, act, out_dtype="fp16"), device)
        assert plan.runnable, plan.explain()
        want = "values_and_epilogue" if plan.compute.is_16bit else "partial_accumulators"
        assert plan.scales["activation"] == want, plan.explain()
        hopper_fp8 = folder.name == "fp8blk" and device in ("H200", "H100")
        assert (plan.compute.a == "e4m3") == hopper_fp8, (folder.name, device, plan.compute)
