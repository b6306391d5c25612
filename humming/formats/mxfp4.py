"""OCP MXFP4 weights in the blocks/scales layout of gpt-oss (``quant_method: mxfp4``).

Tensors of a weight ``prefix`` (gpt-oss: ``...mlp.experts.gate_up_proj`` and
``...mlp.experts.down_proj``):

``{prefix}_blocks``  uint8 ``[(E,) N, K/32, 16]`` -- 32 e2m1 codes per block, two per
                     byte, low nibble first (element ``2i`` in bits 0-3 of byte ``i``).
``{prefix}_scales``  uint8 ``[(E,) N, K/32]`` -- E8M0, ``2**(s - 127)`` (OCP MX v1.0).
``{prefix}_bias``    ``[(E,) N]`` (optional).

``W[n, 32b + j] = e2m1(code) * 2**(scale[n, b] - 127)``; rows are output
features, so the expert weights load as ``[E, N, K]`` directly.

gpt-oss's ``gate_up_proj`` rows are **interleaved**: even rows are the gate,
odd rows the up projection (SwiGLU with alpha 1.702 and clamp 7 in the model).
The loader keeps the checkpoint's row order; :func:`split_gate_up` separates them.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping, Optional

import torch

from ..errors import FormatError
from ..reference import QuantizedWeight
from ..scheme import ActivationScheme, WeightScheme
from ._common import get_tensor, scale_to_f32, unpack_bits, unquantized_activation, weight_scheme

NAME = "mxfp4"
TENSORS = ("_blocks", "_scales", "_bias")
SCHEME = WeightScheme(fmt="e2m1", scale="group", group_size=32, scale_fmt="e8m0")


def detect(qc: Mapping) -> bool:
    return str(qc.get("quant_method", "")).lower() == "mxfp4"


def schemes(qc: Mapping, config: Mapping, layer_name: Optional[str] = None
            ) -> tuple[WeightScheme, ActivationScheme]:
    return SCHEME, unquantized_activation(config, "bf16")


def layer_prefixes(names: Iterable[str], qc: Mapping) -> list[str]:
    names = set(names)
    return sorted(n[: -len("_blocks")] for n in names if n.endswith("_blocks") and n[:-7] + "_scales" in names)


def load(qc: Mapping, tensors: Mapping[str, torch.Tensor], prefix: str) -> QuantizedWeight:
    blocks = get_tensor(tensors, prefix + "_blocks", (torch.uint8,), ndim=(3, 4))
    if blocks.shape[-1] != 16:
        raise FormatError(f"tensor {prefix}_blocks: expected 16 bytes (32 e2m1 codes) per block in the last "
                          f"dimension, got shape {list(blocks.shape)}")
    lead = tuple(blocks.shape[:-2])
    nb = blocks.shape[-2]
    st = get_tensor(tensors, prefix + "_scales", (torch.uint8,), shape=lead + (nb,))
    k = nb * 32
    codes = unpack_bits(prefix + "_blocks", blocks.reshape(*lead, nb * 16), 4, k, dim=-1)
    scales, sfmt = scale_to_f32(prefix + "_scales", st, allow=("e8m0",))
    bias = get_tensor(tensors, prefix + "_bias", ndim=len(lead), shape=lead, optional=True)
    scheme = weight_scheme(fmt="e2m1", scale="group", group_size=32, scale_fmt=sfmt)
    return QuantizedWeight(scheme, codes.contiguous(), scales, None, None, None,
                           None if bias is None else bias.to(torch.float32).contiguous(),
                           meta={"format": NAME, "prefix": prefix, "row_order": "checkpoint"})


def split_gate_up(qw: QuantizedWeight) -> tuple[QuantizedWeight, QuantizedWeight]:
    """Split gpt-oss's interleaved ``gate_up_proj`` (even rows gate, odd rows up) into two weights."""
    if qw.n % 2:
        raise FormatError(f"split_gate_up: expected an even number of rows, got N={qw.n}")
    if qw.scheme.scale == "block" or qw.scheme.global_scale == "channel":
        raise FormatError("split_gate_up: row blocks or per-row global scales cannot be split by row parity")

    per_row = qw.scheme.scale != "tensor"

    def rows(t, start, matrix=True):
        if t is None or (matrix and not per_row):
            return t
        return t[..., start::2, :].contiguous() if matrix else t[..., start::2].contiguous()

    parts = []
    for start, name in ((0, "gate"), (1, "up")):
        parts.append(replace(qw, codes=qw.codes[..., start::2, :].contiguous(), scales=rows(qw.scales, start),
                             zeros=rows(qw.zeros, start), bias=rows(qw.bias, start, matrix=False),
                             meta=dict(qw.meta, row_order=name)))
    return parts[0], parts[1]
