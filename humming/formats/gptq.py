"""GPTQ checkpoints (AutoGPTQ, GPTQModel, and AutoRound's GPTQ export).

Config: ``quant_method: gptq``, ``bits`` (2..8), ``group_size`` (-1 = one group
over K), ``sym``, ``desc_act``, and ``checkpoint_format``/``format``:
``gptq`` (v1) or ``gptq_v2``.

Tensors of a linear ``prefix`` (``y = x @ W.T``, ``W [N, K]``):

``qweight``  int32 ``[K*bits/32, N]`` -- codes packed along K as a dense
             little-endian bit stream (2/4/8 bits: ``32/bits`` per word; 3 bits:
             32 codes in 3 words, crossing word boundaries).
``qzeros``   int32 ``[G, N*bits/32]`` -- zero points packed the same way along N.
             v1 stores ``z - 1`` (the dequantizer adds 1 back); v2 stores ``z``.
``scales``   fp16 ``[G, N]``.
``g_idx``    int32 ``[K]`` (optional) -- the group of each input column. With
             ``desc_act`` it is not sorted: the loader keeps it as a K
             permutation (``perm = argsort(g_idx, stable)``) so groups are
             contiguous in storage order, instead of refusing the checkpoint.
``bias``     optional.

Dequantization: ``W[n, k] = scales[g_idx[k], n] * (q[k, n] - z[g_idx[k], n])``.

Mapping: ``uint{bits}``; when every zero equals ``2**(bits-1)`` (symmetric
GPTQ; v1 stores ``2**(bits-1) - 1``) there is no zero-point tensor and the
scheme's implicit offset does the subtraction; otherwise integer zero points.
A v1 stored zero of ``2**bits - 1`` means ``2**bits`` to AutoGPTQ's dequantizer
(``stored + 1``); such checkpoints keep that meaning with float zero points.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional

import torch

from ..errors import FormatError
from ..reference import QuantizedWeight
from ..scheme import ActivationScheme, WeightScheme
from ._common import (cfg_get, cfg_int, check_groups, get_tensor, perm_from_g_idx, scale_to_f32, unpack_bits,
                      unquantized_activation, weight_scheme)

NAME = "gptq"
TENSORS = ("qweight", "qzeros", "scales", "g_idx", "bias")
_PACK_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64)


def detect(qc: Mapping) -> bool:
    return str(qc.get("quant_method", "")).lower() == "gptq"


def checkpoint_version(qc: Mapping) -> int:
    """1 for ``gptq`` (zeros stored minus one), 2 for ``gptq_v2``."""
    fmt = str(cfg_get(qc, "checkpoint_format", "format", default="gptq")).lower()
    if fmt == "gptq":
        return 1
    if fmt == "gptq_v2":
        return 2
    raise FormatError(f"quantization_config.checkpoint_format: expected 'gptq' or 'gptq_v2', got {fmt!r}")


def _bits(qc: Mapping) -> int:
    return cfg_int(qc, "bits", "w_bit", default=4, allowed=range(1, 9))


def schemes(qc: Mapping, config: Mapping, layer_name: Optional[str] = None
            ) -> tuple[WeightScheme, ActivationScheme]:
    bits = _bits(qc)
    gs = cfg_int(qc, "group_size", default=128)
    sym = bool(cfg_get(qc, "sym", default=True))
    kw = dict(scale="channel") if gs in (-1, 0) else dict(scale="group", group_size=gs)
    ws = weight_scheme(fmt=f"uint{bits}", scale_fmt="fp16", zero_point="none" if sym else "int",
                       act_order=bool(cfg_get(qc, "desc_act", default=False)) and gs not in (-1, 0), **kw)
    return ws, unquantized_activation(config, "fp16")


def layer_prefixes(names: Iterable[str], qc: Mapping) -> list[str]:
    return sorted(n[: -len(".qweight")] for n in names if n.endswith(".qweight"))


def load(qc: Mapping, tensors: Mapping[str, torch.Tensor], prefix: str) -> QuantizedWeight:
    return load_packed(tensors, prefix, bits=_bits(qc), group_size=cfg_int(qc, "group_size", default=128),
                       version=checkpoint_version(qc), source=NAME)


def load_packed(tensors: Mapping[str, torch.Tensor], prefix: str, bits: int, group_size: int, version: int,
                source: str = NAME) -> QuantizedWeight:
    """Load GPTQ-layout tensors (shared with AutoRound's exports)."""
    p = prefix + "."
    qweight = get_tensor(tensors, p + "qweight", _PACK_DTYPES, ndim=2)
    scales_t = get_tensor(tensors, p + "scales", (torch.float16, torch.bfloat16, torch.float32), ndim=2)
    wbits = qweight.element_size() * 8
    if (qweight.shape[0] * wbits) % bits:
        raise FormatError(f"tensor {p}qweight: {qweight.shape[0]} rows of {wbits}-bit words do not hold a whole "
                          f"number of {bits}-bit codes (quantization_config.bits={bits} against the packing)")
    k = qweight.shape[0] * wbits // bits
    n = qweight.shape[1]
    g = scales_t.shape[0]
    if scales_t.shape[1] != n:
        raise FormatError(f"tensor {p}scales: expected {n} columns (N from qweight), got shape "
                          f"{list(scales_t.shape)}")
    check_groups(p + "scales", k, group_size, g, f"from {p}qweight with bits={bits}")
    zw = -(-n * bits // wbits)
    qzeros = get_tensor(tensors, p + "qzeros", _PACK_DTYPES, shape=(g, zw))

    codes = unpack_bits(p + "qweight", qweight, bits, k, dim=0).t().contiguous()  # [N, K]
    z = unpack_bits(p + "qzeros", qzeros, bits, n, dim=1).t().to(torch.int32)  # [N, G]
    if version == 1:
        z = z + 1
    scales, sfmt = scale_to_f32(p + "scales", scales_t, allow=("fp16", "bf16", "fp32"))
    scales = scales.t().contiguous()  # [N, G]

    perm = None
    g_idx = get_tensor(tensors, p + "g_idx", (torch.int32, torch.int64, torch.int16), ndim=1, optional=True)
    if g_idx is not None:
        perm, _ = perm_from_g_idx(p + "g_idx", g_idx, k, g)
        if perm is not None:
            codes = codes[:, perm].contiguous()

    half = 1 << (bits - 1)
    if bool((z == half).all()):
        zp, zeros = "none", None
    else:
        zp = "int" if int(z.max()) <= (1 << bits) - 1 else "float"
        zeros = z.to(torch.float32).contiguous()
    kw = dict(scale="channel") if g == 1 else dict(scale="group", group_size=k // g)
    scheme = weight_scheme(fmt=f"uint{bits}", scale_fmt=sfmt, zero_point=zp, act_order=perm is not None, **kw)
    bias = get_tensor(tensors, p + "bias", ndim=1, shape=(n,), optional=True)
    return QuantizedWeight(scheme, codes, scales, zeros, None, perm,
                           None if bias is None else bias.to(torch.float32),
                           meta={"format": source, "checkpoint_version": version, "prefix": prefix})
