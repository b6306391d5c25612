"""AutoRound checkpoints (Intel ``auto-round``).

AutoRound writes integer weights in GPTQ's or AWQ's tensor layout:

* ``--format auto_gptq`` exports ``quant_method: gptq`` with ``provider:
  auto-round``: a GPTQ v1 checkpoint (zeros stored minus one), read by
  :mod:`humming.formats.gptq`;
* its own format, ``quant_method: auto-round``, names the layout in
  ``packing_format``: ``auto_round:auto_gptq`` (GPTQ v1 zeros),
  ``auto_round:auto_awq`` (AWQ GEMM packing), and ``auto_round`` /
  ``auto_round:exllamav2`` / ``auto_round:gptqmodel`` (GPTQ layout with zeros
  stored as they are, i.e. GPTQ v2 semantics; AutoRound's
  ``qlinear_torch.QuantLinear``).

Config: ``bits``, ``group_size``, ``sym``, ``data_type: int``.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional

import torch

from ..errors import FormatError
from ..reference import QuantizedWeight
from ..scheme import ActivationScheme, WeightScheme
from . import awq, gptq
from ._common import cfg_get, cfg_int

NAME = "auto-round"
TENSORS = gptq.TENSORS


def detect(qc: Mapping) -> bool:
    return str(qc.get("quant_method", "")).lower() in ("auto-round", "auto_round", "intel/auto-round")


def layout(qc: Mapping) -> str:
    """``gptq_v1``, ``gptq_v2`` or ``awq`` from ``packing_format``."""
    pf = str(cfg_get(qc, "packing_format", "backend", default="auto_round:auto_gptq")).lower()
    dt = str(cfg_get(qc, "data_type", default="int")).lower()
    if dt not in ("int", "int_sym", "int_asym"):
        raise FormatError(f"quantization_config.data_type: expected 'int' (integer weights), got {dt!r}")
    if "awq" in pf:
        return "awq"
    if "auto_gptq" in pf:
        return "gptq_v1"
    if pf in ("auto_round", "auto_round:exllamav2", "auto_round:gptqmodel", "auto_round:tritonv2"):
        return "gptq_v2"
    raise FormatError(f"quantization_config.packing_format: expected auto_round[:auto_gptq|:auto_awq|:exllamav2|"
                      f":gptqmodel], got {pf!r}")


def schemes(qc: Mapping, config: Mapping, layer_name: Optional[str] = None
            ) -> tuple[WeightScheme, ActivationScheme]:
    lay = layout(qc)
    if cfg_int(qc, "act_bits", default=16) < 16:
        raise FormatError(f"quantization_config.act_bits: expected 16 (weight-only), got {qc.get('act_bits')}")
    base = dict(qc, quant_method="gptq", desc_act=False)
    if lay == "awq":
        return awq.schemes(dict(qc, zero_point=not cfg_get(qc, "sym", default=True)), config, layer_name)
    return gptq.schemes(base, config, layer_name)


def layer_prefixes(names: Iterable[str], qc: Mapping) -> list[str]:
    return gptq.layer_prefixes(names, qc)


def load(qc: Mapping, tensors: Mapping[str, torch.Tensor], prefix: str) -> QuantizedWeight:
    lay = layout(qc)
    gs = cfg_int(qc, "group_size", default=128)
    if lay == "awq":
        return awq.load_packed(tensors, prefix, gs, source=NAME)
    bits = cfg_int(qc, "bits", default=4, allowed=range(1, 9))
    return gptq.load_packed(tensors, prefix, bits, gs, version=1 if lay == "gptq_v1" else 2, source=NAME)
