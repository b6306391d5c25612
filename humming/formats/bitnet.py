"""BitNet b1.58 checkpoints (``quant_method: bitnet``, as read by transformers).

Tensors of a linear ``prefix``: ``weight`` uint8 ``[N/4, K]`` and
``weight_scale`` ``[1]`` (the model dtype).

Packing (transformers ``integrations/bitnet.py``, ``pack_weights``): ternary
values ``w`` are stored as ``w + 1`` in 2 bits; bits ``2i..2i+1`` of packed row
``r`` hold original row ``i * N/4 + r`` -- the four row blocks are stacked in
the bit planes (*blocked*, not interleaved).

The scale's meaning depends on the layer class in the config:

* ``linear_class: bitlinear`` (default): ``BitLinear`` **divides** the output by
  ``weight_scale`` -> the canonical scale is ``1 / weight_scale`` (fp32, its
  reciprocal need not fit the stored dtype);
* ``linear_class: autobitlinear``: ``AutoBitLinear`` **multiplies** the output
  by ``weight_scale``.

Mapping: ``int2`` codes of -1, 0, 1 (a stored 3 is refused), one tensor scale.
Activations: int8, per-token absmax, dynamic.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional

import torch

from ..errors import FormatError
from ..reference import QuantizedWeight
from ..scheme import ActivationScheme, WeightScheme
from ._common import cfg_get, check_finite, get_tensor, scale_to_f32, weight_scheme

NAME = "bitnet"
TENSORS = ("weight", "weight_scale", "bias")
VALUES_PER_BYTE = 4


def detect(qc: Mapping) -> bool:
    return str(qc.get("quant_method", "")).lower() == "bitnet"


def scale_divides(qc: Mapping) -> bool:
    cls = str(cfg_get(qc, "linear_class", default="bitlinear")).lower()
    if cls not in ("bitlinear", "autobitlinear"):
        raise FormatError(f"quantization_config.linear_class: expected 'bitlinear' or 'autobitlinear', got {cls!r}")
    if cls == "autobitlinear" and str(cfg_get(qc, "quantization_mode", default="offline")).lower() == "online":
        raise FormatError("quantization_config.quantization_mode: 'online' checkpoints hold unquantized weights "
                          "(quantized while running), expected 'offline'")
    return cls == "bitlinear"


def schemes(qc: Mapping, config: Mapping, layer_name: Optional[str] = None
            ) -> tuple[WeightScheme, ActivationScheme]:
    return (weight_scheme(fmt="int2", scale="tensor", scale_fmt="fp32" if scale_divides(qc) else "bf16"),
            ActivationScheme(fmt="int8", quant="dynamic_token"))


def layer_prefixes(names: Iterable[str], qc: Mapping) -> list[str]:
    names = set(names)
    return sorted(n[: -len(".weight_scale")] for n in names
                  if n.endswith(".weight_scale") and n[: -len("_scale")] in names)


def unpack_ternary(name: str, packed: torch.Tensor) -> torch.Tensor:
    """``[N/4, K]`` packed bytes -> ``[N, K]`` stored values ``w + 1`` in {0, 1, 2} (uint8)."""
    planes = [(packed >> (2 * i)) & 3 for i in range(VALUES_PER_BYTE)]
    u = torch.cat(planes, dim=0)
    if bool((u == 3).any()):
        raise FormatError(f"tensor {name}: found the 2-bit value 3, expected ternary codes 0, 1, 2 (w + 1)")
    return u


def load(qc: Mapping, tensors: Mapping[str, torch.Tensor], prefix: str) -> QuantizedWeight:
    p = prefix + "."
    packed = get_tensor(tensors, p + "weight", (torch.uint8,), ndim=2)
    u = unpack_ternary(p + "weight", packed)
    codes = ((u.to(torch.int16) - 1) & 3).to(torch.uint8)  # int2 two's complement of w
    st = get_tensor(tensors, p + "weight_scale")
    if st.numel() != 1:
        raise FormatError(f"tensor {p}weight_scale: expected one value (per-tensor scale), got shape "
                          f"{list(st.shape)}")
    s, sfmt = scale_to_f32(p + "weight_scale", st.reshape(1, 1), allow=("fp16", "bf16", "fp32"))
    divides = scale_divides(qc)
    if divides:
        if float(s) == 0.0:
            raise FormatError(f"tensor {p}weight_scale: BitLinear divides by it, found 0")
        s, sfmt = 1.0 / s, "fp32"
        check_finite(p + "weight_scale", s)
    scheme = weight_scheme(fmt="int2", scale="tensor", scale_fmt=sfmt)
    n = codes.shape[0]
    bias = get_tensor(tensors, p + "bias", ndim=1, shape=(n,), optional=True)
    return QuantizedWeight(scheme, codes, s.contiguous(), None, None, None,
                           None if bias is None else bias.to(torch.float32),
                           meta={"format": NAME, "prefix": prefix, "scale_divides": divides,
                                 "stored_scale": float(st.to(torch.float32).reshape(()))})
