"""Checkpoint formats -> :class:`~humming.reference.QuantizedWeight`, bit for bit.

One module per export format; each offers ``detect(quant_config)``,
``load(quant_config, tensors, prefix)``, ``schemes(quant_config, config,
layer_name)`` and ``layer_prefixes(tensor_names, quant_config)``:

=====================  ======================================================
``gptq``               GPTQ v1/v2, 2..8 bits, sym/asym, ``g_idx`` act order kept
``awq``                AutoAWQ GEMM packing
``compressed_tensors`` pack-quantized, int8/fp8 (tensor/channel/group/block),
                       nvfp4, mxfp4, mxfp8
``modelopt``           ModelOpt NVFP4, MXFP8, FP8
``mxfp4``              OCP MXFP4 blocks/scales (gpt-oss experts, biases)
``fp8_block``          ``quant_method: fp8`` (DeepSeek 128x128 blocks, ue8m0 scales)
``bitnet``             BitNet b1.58 ternary weights
``autoround``          AutoRound's GPTQ/AWQ-layout exports
=====================  ======================================================

Entry points: :func:`detect_format`, :func:`load`, :func:`load_moe`,
:func:`schemes_from_config` and :func:`load_checkpoint`.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from types import ModuleType
from typing import Iterator, Mapping, Optional, Sequence

import torch

from ..errors import FormatError
from ..reference import QuantizedWeight
from ..scheme import ActivationScheme, WeightScheme
from . import autoround, awq, bitnet, compressed_tensors, fp8_block, gptq, modelopt, mxfp4
from ._common import quant_section
from .mxfp4 import split_gate_up
from .safetensors_io import SafetensorsFile, ShardedTensors, read_header

__all__ = [
    "FORMATS",
    "Checkpoint",
    "detect_format",
    "load",
    "load_moe",
    "stack_experts",
    "schemes_from_config",
    "load_checkpoint",
    "split_gate_up",
    "quant_section",
    "read_header",
    "SafetensorsFile",
]

FORMATS: tuple[ModuleType, ...] = (gptq, awq, compressed_tensors, modelopt, mxfp4, fp8_block, bitnet, autoround)


def detect_format(quant_config: Mapping) -> ModuleType:
    """The format module for a quantization config (or a whole HF config / hf_quant_config.json)."""
    qc = quant_section(quant_config)
    for mod in FORMATS:
        if mod.detect(qc):
            return mod
    known = ", ".join(m.NAME for m in FORMATS)
    raise FormatError(f"quantization_config.quant_method: expected one of {known}, "
                      f"got {qc.get('quant_method')!r}")


def load(quant_config: Mapping, tensors: Mapping[str, torch.Tensor], prefix: str) -> QuantizedWeight:
    """Load the weight of layer ``prefix`` (``prefix + '.qweight'`` etc.) as a QuantizedWeight."""
    qc = quant_section(quant_config)
    return detect_format(qc).load(qc, tensors, prefix)


def stack_experts(experts: Sequence[QuantizedWeight]) -> QuantizedWeight:
    """Stack dense per-expert weights of one scheme into an MoE weight ``[E, N, K]``."""
    return QuantizedWeight.stack(list(experts))


def load_moe(quant_config: Mapping, tensors: Mapping[str, torch.Tensor], prefixes: Sequence[str] | str
             ) -> QuantizedWeight:
    """An MoE weight: one prefix per expert (stacked), or one prefix of a format that stores experts
    together (gpt-oss ``..._blocks`` ``[E, N, K/32, 16]``)."""
    if isinstance(prefixes, str):
        qw = load(quant_config, tensors, prefixes)
        if not qw.is_moe:
            raise FormatError(f"load_moe: {prefixes} holds one dense weight {list(qw.codes.shape)}; pass one "
                              "prefix per expert")
        return qw
    if not prefixes:
        raise FormatError("load_moe: expected at least one expert prefix")
    return stack_experts([load(quant_config, tensors, p) for p in prefixes])


def schemes_from_config(config: Mapping, layer_name: Optional[str] = None
                        ) -> tuple[WeightScheme, ActivationScheme]:
    """``(WeightScheme, ActivationScheme)`` from an HF ``config.json`` dict (or its
    ``quantization_config``, or a ModelOpt ``hf_quant_config.json``). For configs
    with per-layer groups, ``layer_name`` picks one (default: the first linear group)."""
    qc = quant_section(config)
    whole = config if "quantization_config" in config else {}
    return detect_format(qc).schemes(qc, whole, layer_name)


# ---------------------------------------------------------------------------
# checkpoints on disk
# ---------------------------------------------------------------------------


class _LazyLayers(Mapping):
    def __init__(self, fmt: ModuleType, qc: dict, tensors: Mapping, prefixes: list[str]):
        self._fmt, self._qc, self._tensors = fmt, qc, tensors
        self._prefixes = prefixes
        self._cache: dict[str, QuantizedWeight] = {}

    def __getitem__(self, prefix: str) -> QuantizedWeight:
        if prefix not in self._cache:
            if prefix not in self._prefixes:
                raise KeyError(prefix)
            self._cache[prefix] = self._fmt.load(self._qc, self._tensors, prefix)
        return self._cache[prefix]

    def __iter__(self) -> Iterator[str]:
        return iter(self._prefixes)

    def __len__(self) -> int:
        return len(self._prefixes)

    def __contains__(self, prefix) -> bool:
        return prefix in self._prefixes


class _Subset(Mapping):
    def __init__(self, tensors: Mapping, names: list[str]):
        self._tensors, self._names = tensors, names

    def __getitem__(self, name: str) -> torch.Tensor:
        if name not in self._names:
            raise KeyError(name)
        return self._tensors[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


@dataclass
class Checkpoint:
    """A quantized checkpoint read from disk.

    ``layers`` maps layer prefixes to QuantizedWeights (loaded on first access,
    or all at once with ``load_checkpoint(..., eager=True)``); ``unquantized``
    maps the names of every other tensor (embeddings, norms, routers, ...) to
    tensors. ``weight_scheme``/``activation_scheme`` describe the model-wide
    (first linear group's) scheme; :meth:`schemes` asks for one layer.
    """

    path: str
    config: dict
    quant_config: dict
    format: str
    weight_scheme: WeightScheme
    activation_scheme: ActivationScheme
    layers: Mapping[str, QuantizedWeight]
    unquantized: Mapping[str, torch.Tensor]
    tensors: Mapping[str, torch.Tensor] = field(repr=False)

    def schemes(self, layer_name: str) -> tuple[WeightScheme, ActivationScheme]:
        return detect_format(self.quant_config).schemes(self.quant_config, self.config, layer_name)

    def moe(self, prefixes: Sequence[str]) -> QuantizedWeight:
        """Stack per-expert layers into one MoE weight."""
        return stack_experts([self.layers[p] for p in prefixes])


_CONFIG_FILES = ("config.json", "hf_quant_config.json", "quantize_config.json", "quant_config.json")


def _read_json(path: str) -> dict:
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise FormatError(f"config file {path}: cannot be read as JSON ({e})") from None
    if not isinstance(d, dict):
        raise FormatError(f"config file {path}: expected a JSON object")
    return d


def _find_quant_config(d: str) -> tuple[dict, dict]:
    """``(config.json contents, quantization config)`` of a checkpoint directory."""
    found = {name: _read_json(os.path.join(d, name)) for name in _CONFIG_FILES if os.path.isfile(os.path.join(d, name))}
    config = found.get("config.json", {})
    if isinstance(config.get("quantization_config"), Mapping):
        return config, dict(config["quantization_config"])
    if "hf_quant_config.json" in found:
        return config, quant_section(found["hf_quant_config.json"])
    if "quantize_config.json" in found:  # GPTQ / AutoRound side file
        qc = dict(found["quantize_config.json"])
        qc.setdefault("quant_method", "gptq")
        return config, qc
    if "quant_config.json" in found:  # AutoAWQ side file
        qc = dict(found["quant_config.json"])
        qc.setdefault("quant_method", "awq")
        return config, qc
    raise FormatError(f"checkpoint {d}: no quantization config found (looked for config.json "
                      "'quantization_config', hf_quant_config.json, quantize_config.json, quant_config.json)")


def _safetensors_files(d: str) -> tuple[list[str], Optional[dict]]:
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.isfile(index):
        wm = _read_json(index).get("weight_map")
        if not isinstance(wm, dict):
            raise FormatError(f"safetensors index {index}: expected a 'weight_map' object")
        files = sorted({os.path.join(d, f) for f in wm.values()})
        for f in files:
            if not os.path.isfile(f):
                raise FormatError(f"safetensors index {index}: shard {os.path.basename(f)} is missing")
        return files, wm
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".safetensors"))
    if not files:
        raise FormatError(f"checkpoint {d}: no .safetensors files")
    return files, None


def _owned(fmt: ModuleType, prefix: str) -> list[str]:
    return [prefix + t if t.startswith("_") else f"{prefix}.{t}" for t in fmt.TENSORS]


def load_checkpoint(path_or_dir: str | os.PathLike, eager: bool = False) -> Checkpoint:
    """Read a quantized checkpoint: a directory (config + safetensors shards) or one .safetensors file
    (its directory's config files are used). Every file header is validated up front."""
    path = os.fspath(path_or_dir)
    if os.path.isfile(path):
        d, (files, wm) = os.path.dirname(path) or ".", ([path], None)
    elif os.path.isdir(path):
        d = path
        files, wm = _safetensors_files(d)
    else:
        raise FormatError(f"checkpoint {path}: no such file or directory")
    config, qc = _find_quant_config(d)
    fmt = detect_format(qc)
    tensors = ShardedTensors(files, wm)
    prefixes = fmt.layer_prefixes(list(tensors), qc)
    owned = {n for p in prefixes for n in _owned(fmt, p)}
    layers = _LazyLayers(fmt, qc, tensors, prefixes)
    ws, act = fmt.schemes(qc, config, None)
    ckpt = Checkpoint(path=path, config=config, quant_config=qc, format=fmt.NAME, weight_scheme=ws,
                      activation_scheme=act, layers=layers,
                      unquantized=_Subset(tensors, [n for n in tensors if n not in owned]), tensors=tensors)
    if eager:
        for p in prefixes:
            layers[p]
    return ckpt
