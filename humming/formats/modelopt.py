"""NVIDIA ModelOpt checkpoints (``hf_quant_config.json``, or ``quant_method: modelopt``).

``quant_algo`` (top level, or per layer under ``quantized_layers`` for
``MIXED_PRECISION``):

``NVFP4`` / ``W4A16_NVFP4``  ``weight`` uint8 ``[N, K/2]`` (e2m1, low nibble = even k),
                     ``weight_scale`` float8_e4m3fn ``[N, K/16]``, ``weight_scale_2`` fp32
                     (one value), ``input_scale`` fp32. ``W = e2m1 * weight_scale *
                     weight_scale_2`` (both multiply).
``MXFP8``            ``weight`` float8_e4m3fn ``[N, K]``, ``weight_scale`` uint8 E8M0 ``[N, K/32]``.
``FP8``              ``weight`` float8_e4m3fn, ``weight_scale`` fp32 (one value), ``input_scale``.
"""
from __future__ import annotations

import fnmatch
from typing import Iterable, Mapping, Optional

import torch

from ..errors import FormatError
from ..reference import QuantizedWeight
from ..scheme import ActivationScheme, WeightScheme
from ._common import (attach_input_scale, cfg_int, check_finite, codes_from_float8, get_tensor, scale_to_f32,
                      unpack_bits, unquantized_activation, weight_scheme)

NAME = "modelopt"
TENSORS = ("weight", "weight_scale", "weight_scale_2", "input_scale", "pre_quant_scale", "bias")
ALGOS = ("NVFP4", "W4A16_NVFP4", "MXFP8", "FP8")


def detect(qc: Mapping) -> bool:
    return str(qc.get("quant_method", "")).lower() == "modelopt"


def layer_algo(qc: Mapping, layer_name: Optional[str] = None) -> tuple[str, dict]:
    """``(quant_algo, per-layer config)`` for ``layer_name`` (or the model-wide one)."""
    algo = str(qc.get("quant_algo", "")).upper()
    if algo == "MIXED_PRECISION":
        layers = qc.get("quantized_layers") or {}
        if layer_name is None:
            if not layers:
                raise FormatError("quantization_config.quantized_layers: expected per-layer configs for "
                                  "MIXED_PRECISION, got none")
            cfg = dict(next(iter(layers.values())))
        elif layer_name in layers:
            cfg = dict(layers[layer_name])
        else:
            raise FormatError(f"quantization_config.quantized_layers: no entry for layer {layer_name!r}")
        algo = str(cfg.get("quant_algo", "")).upper()
    else:
        cfg = dict(qc)
    if algo not in ALGOS:
        raise FormatError(f"quantization_config.quant_algo: expected one of {', '.join(ALGOS)} "
                          f"(or MIXED_PRECISION of them), got {algo!r}")
    return algo, cfg


def is_excluded(qc: Mapping, layer_name: str) -> bool:
    return any(fnmatch.fnmatch(layer_name, pat) for pat in qc.get("exclude_modules") or ())


def _group(algo: str, cfg: Mapping) -> int:
    want = 32 if algo == "MXFP8" else 16
    if algo != "FP8":
        gs = cfg_int(cfg, "group_size", default=want)
        if gs != want:
            raise FormatError(f"quantization_config.group_size: expected {want} for {algo}, got {gs}")
    return want


def schemes(qc: Mapping, config: Mapping, layer_name: Optional[str] = None
            ) -> tuple[WeightScheme, ActivationScheme]:
    algo, cfg = layer_algo(qc, layer_name)
    gs = _group(algo, cfg)
    if algo in ("NVFP4", "W4A16_NVFP4"):
        ws = weight_scheme(fmt="e2m1", scale="group", group_size=gs, scale_fmt="e4m3", global_scale="tensor")
        act = (ActivationScheme(fmt="e2m1", quant="dynamic_group", group_size=16, scale_fmt="e4m3")
               if algo == "NVFP4" else unquantized_activation(config))
    elif algo == "MXFP8":
        ws = weight_scheme(fmt="e4m3", scale="group", group_size=gs, scale_fmt="e8m0")
        act = ActivationScheme(fmt="e4m3", quant="dynamic_group", group_size=32, scale_fmt="e8m0")
    else:
        ws = weight_scheme(fmt="e4m3", scale="tensor", scale_fmt="fp32")
        act = ActivationScheme(fmt="e4m3", quant="static_tensor")
    return ws, act


def layer_prefixes(names: Iterable[str], qc: Mapping) -> list[str]:
    names = set(names)
    return sorted(n[: -len(".weight_scale")] for n in names
                  if n.endswith(".weight_scale") and n[: -len("_scale")] in names)


def _one(tensors, name: str) -> torch.Tensor:
    t = get_tensor(tensors, name, (torch.float32, torch.bfloat16, torch.float16))
    if t.numel() != 1:
        raise FormatError(f"tensor {name}: expected one value, got shape {list(t.shape)}")
    v = t.to(torch.float32).reshape(1)
    check_finite(name, v)
    return v


def load(qc: Mapping, tensors: Mapping[str, torch.Tensor], prefix: str) -> QuantizedWeight:
    if is_excluded(qc, prefix):
        raise FormatError(f"layer {prefix}: matched by quantization_config.exclude_modules (not quantized)")
    algo, cfg = layer_algo(qc, prefix)
    gs = _group(algo, cfg)
    p = prefix + "."
    glob = None
    if algo in ("NVFP4", "W4A16_NVFP4"):
        packed = get_tensor(tensors, p + "weight", (torch.uint8,), ndim=2)
        n, k = packed.shape[0], packed.shape[1] * 2
        codes = unpack_bits(p + "weight", packed, 4, k, dim=1)
        st = get_tensor(tensors, p + "weight_scale", shape=(n, k // gs))
        scales, sfmt = scale_to_f32(p + "weight_scale", st, allow=("e4m3",))
        glob = _one(tensors, p + "weight_scale_2")
        scheme = weight_scheme(fmt="e2m1", scale="group", group_size=gs, scale_fmt=sfmt, global_scale="tensor")
    else:
        codes = codes_from_float8(p + "weight", get_tensor(tensors, p + "weight", ndim=2))
        n, k = codes.shape
        if algo == "MXFP8":
            st = get_tensor(tensors, p + "weight_scale", shape=(n, k // gs))
            scales, sfmt = scale_to_f32(p + "weight_scale", st, allow=("e8m0",))
            scheme = weight_scheme(fmt="e4m3", scale="group", group_size=gs, scale_fmt=sfmt)
        else:
            scales = _one(tensors, p + "weight_scale").reshape(1, 1)
            scheme = weight_scheme(fmt="e4m3", scale="tensor", scale_fmt="fp32")
    if get_tensor(tensors, p + "pre_quant_scale", optional=True) is not None:
        raise FormatError(f"tensor {p}pre_quant_scale: AWQ-smoothed ModelOpt layers are not supported "
                          "(the activation pre-scale has no place in the weight description)")
    bias = get_tensor(tensors, p + "bias", ndim=1, shape=(n,), optional=True)
    qw = QuantizedWeight(scheme, codes, scales, None, glob, None, None if bias is None else bias.to(torch.float32),
                         meta={"format": NAME, "quant_algo": algo, "prefix": prefix})
    attach_input_scale(qw.meta, tensors, p)
    return qw
