"""AWQ checkpoints in AutoAWQ's GEMM packing.

Config: ``quant_method: awq``, ``bits``/``w_bit`` (4), ``group_size``/
``q_group_size``, ``zero_point`` (true), ``version: gemm``.

Tensors of a linear ``prefix`` (``W [N, K]``):

``qweight``  int32 ``[K, N/8]`` -- packed along **N**: nibble ``i`` (bits
             ``4i..4i+3``) of word ``c`` holds column ``8c + [0,2,4,6,1,3,5,7][i]``
             (AutoAWQ's ``WQLinear_GEMM.from_linear`` order; unpacking reads
             nibble ``[0,4,1,5,2,6,3,7][j]`` for column ``8c + j``).
``qzeros``   int32 ``[K/g, N/8]`` -- the same packing; zero points as they are
             (no minus one).
``scales``   fp16 ``[K/g, N]``.

Dequantization (AutoAWQ ``dequantize_gemm``): ``W[n, k] = (q - z) * s``.
Mapping: ``uint4`` with integer zero points (or none, when every zero is 8).
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional

import torch

from ..errors import FormatError
from ..reference import QuantizedWeight
from ..scheme import ActivationScheme, WeightScheme
from ._common import (cfg_get, cfg_int, check_groups, get_tensor, scale_to_f32, unpack_bits, unquantized_activation,
                      weight_scheme)

NAME = "awq"
TENSORS = ("qweight", "qzeros", "scales", "bias")
AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)  # nibble i holds column AWQ_ORDER[i] of its group of 8
AWQ_REVERSE_ORDER = (0, 4, 1, 5, 2, 6, 3, 7)  # column j sits in nibble AWQ_REVERSE_ORDER[j]


def detect(qc: Mapping) -> bool:
    return str(qc.get("quant_method", "")).lower() == "awq"


def _params(qc: Mapping) -> tuple[int, int]:
    version = str(cfg_get(qc, "version", default="gemm")).lower()
    if version != "gemm":
        raise FormatError(f"quantization_config.version: expected 'gemm' (AutoAWQ GEMM packing), got {version!r}")
    bits = cfg_int(qc, "bits", "w_bit", default=4)
    if bits != 4:
        raise FormatError(f"quantization_config.bits: expected 4 for AWQ GEMM packing, got {bits}")
    return bits, cfg_int(qc, "group_size", "q_group_size", default=128)


def schemes(qc: Mapping, config: Mapping, layer_name: Optional[str] = None
            ) -> tuple[WeightScheme, ActivationScheme]:
    _, gs = _params(qc)
    zp = "int" if cfg_get(qc, "zero_point", default=True) else "none"
    kw = dict(scale="channel") if gs in (-1, 0) else dict(scale="group", group_size=gs)
    return (weight_scheme(fmt="uint4", scale_fmt="fp16", zero_point=zp, **kw),
            unquantized_activation(config, "fp16"))


def layer_prefixes(names: Iterable[str], qc: Mapping) -> list[str]:
    return sorted(n[: -len(".qweight")] for n in names if n.endswith(".qweight"))


def _unpack_n(name: str, packed: torch.Tensor, n: int) -> torch.Tensor:
    """``[R, N/8]`` int32 in AWQ order -> ``[R, N]`` uint8 in column order."""
    nib = unpack_bits(name, packed, 4, packed.shape[1] * 8, dim=1)  # nibble order
    idx = torch.arange(packed.shape[1] * 8, device=packed.device).reshape(-1, 8)
    idx = idx[:, list(AWQ_REVERSE_ORDER)].reshape(-1)
    return nib[:, idx][:, :n]


def load(qc: Mapping, tensors: Mapping[str, torch.Tensor], prefix: str) -> QuantizedWeight:
    _, gs = _params(qc)
    return load_packed(tensors, prefix, gs, source=NAME)


def load_packed(tensors: Mapping[str, torch.Tensor], prefix: str, group_size: int, source: str = NAME
                ) -> QuantizedWeight:
    p = prefix + "."
    qweight = get_tensor(tensors, p + "qweight", (torch.int32,), ndim=2)
    scales_t = get_tensor(tensors, p + "scales", (torch.float16, torch.bfloat16, torch.float32), ndim=2)
    k, n = qweight.shape[0], scales_t.shape[1]
    if qweight.shape[1] * 8 != n:
        raise FormatError(f"tensor {p}qweight: expected {n // 8 if n % 8 == 0 else f'{n}/8'} packed columns "
                          f"(N={n} from {p}scales, 8 codes per int32), got {qweight.shape[1]}")
    g = scales_t.shape[0]
    group_size = check_groups(p + "scales", k, group_size, g, f"rows of {p}qweight")
    qzeros = get_tensor(tensors, p + "qzeros", (torch.int32,), shape=(g, n // 8))
    codes = _unpack_n(p + "qweight", qweight, n).t().contiguous()  # [N, K]
    z = _unpack_n(p + "qzeros", qzeros, n).t().to(torch.float32).contiguous()  # [N, G]
    scales, sfmt = scale_to_f32(p + "scales", scales_t, allow=("fp16", "bf16", "fp32"))
    zeros = None if bool((z == 8).all()) else z
    kw = dict(scale="channel") if g == 1 else dict(scale="group", group_size=group_size)
    scheme = weight_scheme(fmt="uint4", scale_fmt=sfmt, zero_point="none" if zeros is None else "int", **kw)
    bias = get_tensor(tensors, p + "bias", ndim=1, shape=(n,), optional=True)
    return QuantizedWeight(scheme, codes, scales.t().contiguous(), zeros, None, None,
                           None if bias is None else bias.to(torch.float32),
                           meta={"format": source, "prefix": prefix})
