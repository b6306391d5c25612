"""FP8 checkpoints with ``quant_method: fp8`` (DeepSeek-V3/R1 style, Qwen FP8, ...).

Config: ``weight_block_size: [bn, bk]`` (absent = one scale per tensor),
``activation_scheme: dynamic | static``, ``fmt: e4m3``, and optionally
``scale_fmt: ue8m0`` (DeepSeek-V3.1+: every block scale is a power of two).

Tensors of a linear ``prefix``: ``weight`` float8_e4m3fn ``[N, K]``,
``weight_scale_inv`` ``[ceil(N/bn), ceil(K/bk)]`` (float32, or float8_e8m0fnu /
uint8 for ue8m0) -- despite its name a **multiplier**: ``W = weight * scale``
over each block. ``input_scale``/``activation_scale`` for static activations.

When the blocks do not divide the weight (the last block row/column is
partial), the scales are expanded exactly onto the finest grid that keeps the
block boundaries (``gcd``).
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping, Optional

import torch

from ..errors import FormatError
from ..reference import QuantizedWeight
from ..scheme import ActivationScheme, WeightScheme
from ._common import (attach_input_scale, cfg_get, codes_from_float8, get_tensor, is_power_of_two,
                      refine_blocks, scale_to_f32, weight_scheme)

NAME = "fp8"
TENSORS = ("weight", "weight_scale_inv", "input_scale", "activation_scale", "bias")


def detect(qc: Mapping) -> bool:
    return str(qc.get("quant_method", "")).lower() == "fp8"


def _block(qc: Mapping) -> Optional[tuple[int, int]]:
    b = qc.get("weight_block_size")
    if b is None:
        return None
    if not (isinstance(b, (list, tuple)) and len(b) == 2 and all(isinstance(v, int) and v > 0 for v in b)):
        raise FormatError(f"quantization_config.weight_block_size: expected [rows, cols] of positive integers, "
                          f"got {b!r}")
    return int(b[0]), int(b[1])


def _ue8m0(qc: Mapping) -> bool:
    fmt = str(cfg_get(qc, "scale_fmt", default="float")).lower()
    if fmt not in ("float", "ue8m0", "fp32"):
        raise FormatError(f"quantization_config.scale_fmt: expected 'float' or 'ue8m0', got {fmt!r}")
    return fmt == "ue8m0"


def _activation(qc: Mapping, block) -> ActivationScheme:
    mode = str(cfg_get(qc, "activation_scheme", default="dynamic")).lower()
    if mode == "static":
        return ActivationScheme(fmt="e4m3", quant="static_tensor")
    if mode != "dynamic":
        raise FormatError(f"quantization_config.activation_scheme: expected 'dynamic' or 'static', got {mode!r}")
    if block is None:
        return ActivationScheme(fmt="e4m3", quant="dynamic_token")
    return ActivationScheme(fmt="e4m3", quant="dynamic_group", group_size=block[1],
                            scale_fmt="e8m0" if _ue8m0(qc) else "fp32")


def schemes(qc: Mapping, config: Mapping, layer_name: Optional[str] = None
            ) -> tuple[WeightScheme, ActivationScheme]:
    block = _block(qc)
    sfmt = "e8m0" if _ue8m0(qc) else "fp32"
    if block is None:
        ws = weight_scheme(fmt="e4m3", scale="tensor", scale_fmt=sfmt)
    else:
        ws = weight_scheme(fmt="e4m3", scale="block", block_n=block[0], group_size=block[1], scale_fmt=sfmt)
    return ws, _activation(qc, block)


def layer_prefixes(names: Iterable[str], qc: Mapping) -> list[str]:
    return sorted(n[: -len(".weight_scale_inv")] for n in names if n.endswith(".weight_scale_inv"))


def load(qc: Mapping, tensors: Mapping[str, torch.Tensor], prefix: str) -> QuantizedWeight:
    p = prefix + "."
    wt = get_tensor(tensors, p + "weight", ndim=2)
    codes = codes_from_float8(p + "weight", wt)
    n, k = codes.shape
    block = _block(qc)
    st = get_tensor(tensors, p + "weight_scale_inv")
    scales, sfmt = scale_to_f32(p + "weight_scale_inv", st, allow=("fp32", "bf16", "e8m0"))
    if _ue8m0(qc) and sfmt != "e8m0":
        if not is_power_of_two(scales):
            raise FormatError(f"tensor {p}weight_scale_inv: quantization_config.scale_fmt is 'ue8m0' but the "
                              "scales are not all powers of two")
        sfmt = "e8m0"
    if block is None:
        if scales.numel() != 1:
            raise FormatError(f"tensor {p}weight_scale_inv: expected one value (no weight_block_size), got shape "
                              f"{list(st.shape)}")
        scales, kw = scales.reshape(1, 1), dict(scale="tensor")
    else:
        want = (math.ceil(n / block[0]), math.ceil(k / block[1]))
        if tuple(scales.shape) != want:
            raise FormatError(f"tensor {p}weight_scale_inv: expected shape {list(want)} for {block[0]}x{block[1]} "
                              f"blocks over weight [{n}, {k}], got {list(st.shape)}")
        scales, kw = refine_blocks(scales, n, k, *block)
    scheme = weight_scheme(fmt="e4m3", scale_fmt=sfmt, **kw)
    bias = get_tensor(tensors, p + "bias", ndim=1, shape=(n,), optional=True)
    qw = QuantizedWeight(scheme, codes, scales, None, None, None, None if bias is None else bias.to(torch.float32),
                         meta={"format": NAME, "prefix": prefix})
    attach_input_scale(qw.meta, tensors, p, ("input_scale", "activation_scale"))
    return qw
