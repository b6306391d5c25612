"""Checkpoints written by the real producing libraries load bit-exactly.

Each test quantizes and packs random weights with the producer (installed from
PyPI by the ``dev`` extra), writes a real safetensors checkpoint with the
producer's config, reads it with ``humming.formats.load_checkpoint`` and
compares our dequantized weight with the producer's own decompression, in the
producer's output dtype (fp32 math in the reference is exact for these
formats, so rounding it to that dtype reproduces the producer's single rounding).
"""
from __future__ import annotations

import copy
import json

import pytest
import torch
from safetensors.torch import save_file

from humming.formats import load_checkpoint
from humming.reference import dequantize

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")


def _write(tmp_path, tensors, config=None, extra=None):
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(tmp_path / "model.safetensors"))
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    for name, d in (extra or {}).items():
        (tmp_path / name).write_text(json.dumps(d))
    return tmp_path


# ---------------------------------------------------------------------------
# compressed-tensors
# ---------------------------------------------------------------------------


def _ct_checkpoint(tmp_path, scheme_args, n, k, dtype=torch.bfloat16, seed=0):
    """Quantize one nn.Linear with compressed-tensors' own qparams and compressors, save it,
    and return (producer's decompressed weight, checkpoint dir)."""
    from compressed_tensors.compressors import ModelCompressor
    from compressed_tensors.quantization import (QuantizationConfig, QuantizationScheme,
                                                 apply_quantization_config)
    from compressed_tensors.quantization.utils import (calculate_qparams, generate_gparam,
                                                       maybe_pad_tensor_for_block_quant)

    torch.manual_seed(seed)
    model = torch.nn.Sequential()
    model.add_module("proj", torch.nn.Linear(k, n, bias=False, dtype=dtype))
    scheme = QuantizationScheme(targets=["Linear"], **scheme_args)
    apply_quantization_config(model, QuantizationConfig(config_groups={"group_0": scheme}))
    m, a = model.proj, scheme.weights
    w = m.weight.data
    if a.strategy == "channel":
        lo, hi = w.amin(1, keepdim=True), w.amax(1, keepdim=True)
    elif a.strategy == "tensor":
        lo, hi = w.amin().reshape(1), w.amax().reshape(1)
    elif a.strategy in ("group", "tensor_group"):
        wg = w.reshape(n, -1, a.group_size)
        lo, hi = wg.amin(-1), wg.amax(-1)
    else:  # block: the producer pads partial blocks
        bn, bk = a.block_structure
        wp = maybe_pad_tensor_for_block_quant(w, tuple(a.block_structure))
        wb = wp.reshape(wp.shape[0] // bn, bn, wp.shape[1] // bk, bk).transpose(1, 2)
        lo, hi = wb.amin((-1, -2)), wb.amax((-1, -2))
    gscale = None
    if a.strategy == "tensor_group":
        gscale = generate_gparam(w.amin().float(), w.amax().float()).reshape(1)
        m.weight_global_scale.data.copy_(gscale)
    s, z = calculate_qparams(lo, hi, a, global_scale=gscale)
    m.weight_scale.data.copy_(s.reshape(m.weight_scale.shape))
    if hasattr(m, "weight_zero_point"):
        m.weight_zero_point.data.copy_(z.reshape(m.weight_zero_point.shape))
    for name in ("input_scale", "input_global_scale"):  # static activation scales: no calibration here
        if hasattr(m, name):
            getattr(m, name).data.fill_(0.0625)
    comp = ModelCompressor.from_pretrained_model(model)
    comp.compress_model(model)
    _write(tmp_path, dict(model.state_dict()), {"torch_dtype": str(dtype).replace("torch.", "")})
    comp.update_config(str(tmp_path))
    comp.decompress_model(model)
    return model.proj.weight.data, tmp_path


def _int_args(bits, strategy, symmetric=True, group_size=None, actorder=None):
    from compressed_tensors.quantization import QuantizationArgs
    return dict(weights=QuantizationArgs(num_bits=bits, type="int", strategy=strategy, symmetric=symmetric,
                                         group_size=group_size, actorder=actorder))


CT_PRESETS = [
    # (preset or args, N, K, expected fmt, expected scale kind)
    ("W4A16", 64, 256, "int4", "group"),
    ("W4A16_ASYM", 64, 256, "uint4", "group"),
    ("W3A16", 48, 256, "int3", "group"),      # dense 3-bit packing across int32 words
    ("W8A16", 32, 256, "int8", "group"),
    ("W8A8", 64, 96, "int8", "channel"),
    ("FP8", 64, 96, "e4m3", "tensor"),
    ("FP8_DYNAMIC", 64, 96, "e4m3", "channel"),
    ("FP8_BLOCK", 160, 320, "e4m3", "block"),  # partial 128x128 blocks on both axes
    ("NVFP4", 64, 128, "e2m1", "group"),
    ("MXFP4", 64, 128, "e2m1", "group"),
    ("MXFP8", 64, 128, "e4m3", "group"),
]


@pytest.mark.parametrize("preset,n,k,fmt,kind", CT_PRESETS, ids=[p[0] for p in CT_PRESETS])
def test_compressed_tensors_presets_match_producer(tmp_path, preset, n, k, fmt, kind):
    pytest.importorskip("compressed_tensors")
    from compressed_tensors.quantization.quant_scheme import PRESET_SCHEMES

    ref, d = _ct_checkpoint(tmp_path, copy.deepcopy(PRESET_SCHEMES[preset]), n, k)
    ck = load_checkpoint(d)
    assert ck.format == "compressed-tensors"
    qw = ck.layers["proj"]
    assert (qw.scheme.fmt, qw.scheme.scale) == (fmt, kind)
    assert ck.weight_scheme.fmt == fmt
    ours = dequantize(qw)
    assert ours.shape == ref.shape
    assert torch.equal(ours.to(ref.dtype), ref)
    if preset == "FP8":  # static activations: the calibrated scale travels in meta
        assert ck.activation_scheme.quant == "static_tensor"
        assert torch.equal(qw.meta["input_scale"], ck.tensors["proj.input_scale"].float().reshape(-1))
    if preset == "NVFP4":
        assert qw.scheme.global_scale == "tensor"
        gs = ck.tensors["proj.weight_global_scale"].float()
        assert torch.equal(qw.global_scale, 1.0 / gs)  # stored divisor -> multiplying reciprocal


@pytest.mark.parametrize("bits,strategy,sym,gs", [(4, "channel", False, None), (2, "group", False, 64),
                                                  (6, "group", True, 64), (4, "channel", True, None)])
def test_compressed_tensors_int_variants(tmp_path, bits, strategy, sym, gs):
    pytest.importorskip("compressed_tensors")
    ref, d = _ct_checkpoint(tmp_path, _int_args(bits, strategy, sym, gs), 40, 128, dtype=torch.float16)
    qw = load_checkpoint(d).layers["proj"]
    assert qw.scheme.zero_point == ("none" if sym else "int")
    assert qw.scheme.scale_fmt == "fp16"
    assert torch.equal(dequantize(qw).to(ref.dtype), ref)


def test_compressed_tensors_group_g_idx_kept_as_permutation(tmp_path):
    """Older compressed-tensors ``actorder: group`` checkpoints carry ``weight_g_idx`` (column k
    uses scale group g_idx[k]). The producer removed that mode, so this fixture re-packs a producer
    checkpoint with permuted columns and a matching g_idx, following the old format's meaning."""
    pytest.importorskip("compressed_tensors")
    from compressed_tensors.compressors.pack_quantized.helpers import pack_to_int32, unpack_from_int32
    from safetensors.torch import load_file

    ref, d = _ct_checkpoint(tmp_path, _int_args(4, "group", True, 32), 24, 128)
    sd = load_file(str(d / "model.safetensors"))
    q = unpack_from_int32(sd["proj.weight_packed"], 4, torch.Size([24, 128]))
    g = torch.Generator().manual_seed(3)
    perm = torch.randperm(128, generator=g)  # storage column j goes to original column perm[j]
    q_orig = torch.empty_like(q)
    q_orig[:, perm] = q
    g_idx = torch.empty(128, dtype=torch.int32)
    g_idx[perm] = torch.arange(128, dtype=torch.int32) // 32
    sd["proj.weight_packed"] = pack_to_int32(q_orig, 4)
    sd["proj.weight_g_idx"] = g_idx
    _write(d, sd)
    qw = load_checkpoint(d).layers["proj"]
    assert qw.scheme.act_order and qw.perm is not None
    want = torch.empty_like(ref)
    want[:, perm] = ref
    assert torch.equal(dequantize(qw).to(ref.dtype), want)


# ---------------------------------------------------------------------------
# GPTQ through AutoRound's packers (GPTQ v1 export and AutoRound's own v2-style layout)
# ---------------------------------------------------------------------------


def _autoround_gptq(tmp_path, bits, sym, v1, g_idx_perm=None, n=64, k=256, gs=64, bias=False, seed=0):
    if v1:
        from auto_round_extension.torch.qlinear_torch_zp import QuantLinear
    else:
        from auto_round_extension.torch.qlinear_torch import QuantLinear
    torch.manual_seed(seed)
    lin = torch.nn.Linear(k, n, bias=bias)
    w = lin.weight.data
    maxq = 2 ** bits - 1
    wg = w.reshape(n, k // gs, gs)
    if sym:
        s = (wg.abs().amax(-1) / ((maxq + 1) / 2 - 0.5)).half().float()
        z = torch.full((n, k // gs), (maxq + 1) // 2, dtype=torch.int32)
    else:
        lo, hi = wg.amin(-1).clamp(max=0), wg.amax(-1).clamp(min=0)
        s = ((hi - lo) / maxq).half().float()
        z = torch.round(-lo / s).clamp(1, maxq).to(torch.int32)
    q = QuantLinear(bits, gs, k, n, bias, g_idx=True)
    q.device = "cpu"
    q.pack(lin, s, z, None)
    if g_idx_perm is not None:  # act order: column perm[j] belongs to group j // gs
        gi = torch.empty(k, dtype=torch.int32)
        gi[g_idx_perm] = torch.arange(k, dtype=torch.int32) // gs
        q.g_idx = gi
    with torch.no_grad():
        ref = q.forward(torch.eye(k)).t()  # the producer's dequantized weight [N, K], fp16 math
        if bias:
            ref = ref - q.bias.float()[:, None]
    sd = {f"model.proj.{name}": t for name, t in q.state_dict().items()}
    if v1:
        qc = {"quant_method": "gptq", "bits": bits, "group_size": gs, "sym": sym,
              "desc_act": g_idx_perm is not None, "checkpoint_format": "gptq", "provider": "auto-round"}
    else:
        qc = {"quant_method": "auto-round", "bits": bits, "group_size": gs, "sym": sym,
              "packing_format": "auto_round", "data_type": "int"}
    _write(tmp_path, sd, {"quantization_config": qc, "torch_dtype": "float16"})
    return ref, q


@pytest.mark.parametrize("v1", [True, False], ids=["gptq_v1", "autoround_v2"])
@pytest.mark.parametrize("bits,sym", [(2, False), (3, True), (3, False), (4, True), (4, False), (8, True)])
def test_gptq_autoround_packers_match_producer(tmp_path, bits, sym, v1):
    pytest.importorskip("auto_round_extension")
    ref, _ = _autoround_gptq(tmp_path, bits, sym, v1)
    qw = load_checkpoint(tmp_path).layers["model.proj"]
    assert qw.scheme.fmt == f"uint{bits}"
    assert qw.scheme.zero_point == ("none" if sym else "int")  # symmetric: implicit offset 2**(bits-1)
    assert torch.equal(dequantize(qw).half().float(), ref.float())


def test_gptq_desc_act_g_idx_matches_producer(tmp_path):
    pytest.importorskip("auto_round_extension")
    perm = torch.randperm(256, generator=torch.Generator().manual_seed(7))
    ref, q = _autoround_gptq(tmp_path, 4, False, True, g_idx_perm=perm, bias=True)
    ck = load_checkpoint(tmp_path)
    qw = ck.layers["model.proj"]
    assert qw.scheme.act_order and ck.weight_scheme.act_order
    assert torch.equal(torch.sort(qw.perm).values, torch.arange(256))
    assert torch.equal(dequantize(qw).half().float(), ref.float())
    assert torch.equal(qw.bias, q.bias.float())


# ---------------------------------------------------------------------------
# ModelOpt
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_modelopt_nvfp4_export_matches_producer(tmp_path):
    """A tiny Llama quantized with ``mtq.NVFP4_DEFAULT_CFG`` and exported with
    ``export_hf_checkpoint`` (real hf_quant_config.json and tensor names)."""
    pytest.importorskip("modelopt")
    import modelopt.torch.quantization as mtq
    from modelopt.torch.export import export_hf_checkpoint
    from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(hidden_size=64, intermediate_size=96, num_hidden_layers=1, num_attention_heads=2,
                      num_key_value_heads=2, head_dim=32, vocab_size=64, architectures=["LlamaForCausalLM"])
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model = mtq.quantize(model, mtq.NVFP4_DEFAULT_CFG, lambda m: m(torch.randint(0, 64, (1, 8))))
    export_hf_checkpoint(model, export_dir=str(tmp_path))
    ck = load_checkpoint(tmp_path)
    assert ck.format == "modelopt"
    assert ck.weight_scheme.describe() == "e2m1 g16 e4m3 scales, tensor global scale"
    names = [p for p in ck.layers if p.endswith(("q_proj", "down_proj"))]
    assert len(names) == 2 and "lm_head" not in ck.layers
    for p in names:
        qw = ck.layers[p]
        packed, s, s2 = (ck.tensors[f"{p}.{t}"] for t in ("weight", "weight_scale", "weight_scale_2"))
        qt = NVFP4QTensor(torch.Size([packed.shape[0], packed.shape[1] * 2]), torch.bfloat16, packed)
        ref = qt.dequantize(dtype=torch.float32, scale=s, double_scale=s2.float(), block_sizes={-1: 16})
        ours = dequantize(qw)
        # ModelOpt multiplies scale*scale_2 first, the reference code*scale first: both are one fp32
        # rounding of the same product, so they agree to 1 ulp, and exactly once rounded to bf16.
        assert torch.allclose(ours, ref, rtol=2 ** -23, atol=0)
        assert torch.equal(ours.bfloat16(), ref.bfloat16())
        assert torch.equal(qw.global_scale, s2.float().reshape(1))


@pytest.mark.slow
def test_modelopt_mxfp8_tensors_match_producer(tmp_path):
    pytest.importorskip("modelopt")
    from modelopt.torch.quantization.qtensor.mxfp8_tensor import MXFP8QTensor

    torch.manual_seed(1)
    w = torch.randn(48, 128)
    qt, scale = MXFP8QTensor.quantize(w)
    ref = qt.dequantize(dtype=torch.float32, scale=scale)
    sd = {"layer.weight": qt._quantized_data, "layer.weight_scale": scale}
    _write(tmp_path, sd, extra={"hf_quant_config.json": {"producer": {"name": "modelopt"},
                                                         "quantization": {"quant_algo": "MXFP8", "group_size": 32}}})
    ck = load_checkpoint(tmp_path)
    qw = ck.layers["layer"]
    assert qw.scheme.describe() == "e4m3 g32 e8m0 scales"
    assert torch.equal(dequantize(qw), ref)
