"""Small checkpoints of the formats whose activations are quantized in groups, written from
``humming.reference.quantize``, for the GPU test that runs them (test_gemm_gpu) and the CPU test of their plans
(test_formats)."""
from __future__ import annotations

import json

import torch
from safetensors.torch import save_file

from humming import reference as R
from humming.scheme import WeightScheme


def nvfp4_and_fp8_block_checkpoints(root):
    """A ModelOpt NVFP4 checkpoint (layer "l") and a DeepSeek FP8-block one (layer "x") in two
    folders under ``root``, from reference.quantize: (folder, prefix, the weight) each."""
    g = torch.Generator().manual_seed(5)
    nv = R.quantize(torch.randn(256, 640, generator=g) * 0.02,
                    WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"))
    c = nv.codes.to(torch.uint8)
    (root / "nvfp4").mkdir()
    save_file({"l.weight": (c[:, 0::2] | (c[:, 1::2] << 4)).contiguous(),  # two codes per byte, even low
               "l.weight_scale": nv.scales.to(torch.float8_e4m3fn), "l.weight_scale_2": nv.global_scale.reshape(()),
               "l.input_scale": torch.tensor(1.0)}, str(root / "nvfp4" / "model.safetensors"))
    (root / "nvfp4" / "hf_quant_config.json").write_text(json.dumps(
        {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "group_size": 16}}))
    fb = R.quantize(torch.randn(256, 640, generator=g) * 0.02,
                    WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"))
    (root / "fp8blk").mkdir()
    save_file({"x.weight": fb.codes.to(torch.uint8).view(torch.float8_e4m3fn).contiguous(),
               "x.weight_scale_inv": fb.scales.contiguous()}, str(root / "fp8blk" / "model.safetensors"))
    (root / "fp8blk" / "config.json").write_text(json.dumps({"quantization_config": {
        "quant_method": "fp8", "weight_block_size": [128, 128], "activation_scheme": "dynamic"}}))
    return [(root / "nvfp4", "l", nv), (root / "fp8blk", "x", fb)]
