"""The values a plan is made of, and the contract a kernel family fulfils.

A *kernel family* is what a backend offers: kernels built around one tensor-core
instruction family (``mma_sync``, ``wgmma``, ``tcgen05``, block-scaled
``mma.sync``...). The planner picks the compute types, then asks the families
the chip has, in priority order, whether they can run the layer, which
component variant fills each slot (:meth:`KernelFamily.components`) and how to
tune each M range (:meth:`KernelFamily.tuning`). :class:`FamilyBase` holds the
shared defaults.

"Can it run the layer" is two questions:

* :meth:`KernelFamily.check` -- can the family's *instructions* do it (a fact
  of the hardware, e.g. group scales between MMA instructions need the group
  size to be a multiple of the instruction K);
* :meth:`KernelFamily.limits` -- can the family's *current implementation* do
  it (e.g. "this version's kernels multiply fp16/bf16 operands only").

``plan(..., families="implemented")`` walks on down the fallback chain past
both; ``families="hardware"`` decides with :meth:`check` alone and marks the
plan not runnable when the chosen family has limits for the layer.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping, Protocol, runtime_checkable

__all__ = [
    "SLOTS",
    "MRange",
    "FallbackStep",
    "Compute",
    "WeightLayout",
    "ActivationHandling",
    "KernelFamily",
    "FamilyBase",
    "ComponentVariant",
    "frozen_mapping",
    "mma_type_tag",
]

#: The component slots of a kernel, in the order they are reported.
SLOTS = ("loader", "dequantizer", "mma", "scheduler", "epilogue")

#: Short operand-type names used in MMA component names (PTX spelling).
_MMA_TAGS = {"fp16": "f16", "bf16": "bf16", "tf32": "tf32", "int8": "s8", "uint8": "u8",
             "int4": "s4", "uint4": "u4", "fp32": "f32", "int32": "s32"}


def mma_type_tag(fmt: str) -> str:
    return _MMA_TAGS.get(fmt, fmt)


def frozen_mapping(d: Mapping | None) -> Mapping:
    """A read-only copy of ``d`` (the values must be JSON-able scalars)."""
    return MappingProxyType(dict(d or {}))


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class MRange:
    """Tuning for token counts ``lo <= M <= hi`` (``hi=None``: no upper bound)."""

    lo: int
    hi: int | None
    config: Mapping = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.lo, int) or self.lo < 1:
            raise ValueError(f"MRange.lo: expected an integer >= 1, found {self.lo!r}")
        if self.hi is not None and (not isinstance(self.hi, int) or self.hi < self.lo):
            raise ValueError(f"MRange.hi: expected None or an integer >= lo={self.lo}, found {self.hi!r}")
        object.__setattr__(self, "config", frozen_mapping(self.config))

    def contains(self, m: int) -> bool:
        return self.lo <= m and (self.hi is None or m <= self.hi)

    def label(self) -> str:
        return f"M {self.lo}-{self.hi}" if self.hi is not None else f"M >= {self.lo}"

    def to_dict(self) -> dict:
        return {"m_min": self.lo, "m_max": self.hi, "config": dict(self.config)}


@dataclass(frozen=True)
class FallbackStep:
    """One move along the fallback chain: operand type ``src`` was given up for ``dst``."""

    src: str
    dst: str
    reason: str

    def to_dict(self) -> dict:
        return {"from": self.src, "to": self.dst, "reason": self.reason}


@dataclass(frozen=True)
class Compute:
    """The tensor-core operands: activation type ``a``, weight type ``b``, accumulator ``acc``.

    ``op`` is the capability entry (``MmaOp``) that multiplies them; ``emulated``
    says the op is a compiler emulation (``native: false``); ``block_scaled``
    says the MMA applies the group scales itself (MX / NVFP4 kinds).
    """

    a: str
    b: str
    acc: str
    mma_family: str
    op: Any = field(default=None, compare=False, repr=False)
    kind: str | None = None
    emulated: bool = False
    block_scaled: bool = False

    @property
    def is_16bit(self) -> bool:
        return self.a in ("fp16", "bf16")

    @property
    def shapes(self) -> tuple:
        return tuple(getattr(self.op, "shapes", ()) or ())

    def to_dict(self) -> dict:
        return {"activation": self.a, "weight": self.b, "accumulator": self.acc,
                "mma_family": self.mma_family, "mma_kind": self.kind,
                "native": not self.emulated, "block_scaled": self.block_scaled}


@dataclass(frozen=True)
class WeightLayout:
    """How the prepared weight is laid out: a name, a version and the parameters that decide it."""

    name: str
    version: int
    params: Mapping = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "params", frozen_mapping(self.params))

    @property
    def fingerprint(self) -> str:
        return _digest({"name": self.name, "version": self.version, "params": dict(self.params)})[:16]

    @property
    def descriptor(self) -> str:
        return f"{self.name}.v{self.version}"

    def to_dict(self) -> dict:
        return {"name": self.name, "version": self.version, "params": dict(self.params),
                "fingerprint": self.fingerprint}


@dataclass(frozen=True)
class ActivationHandling:
    """Where the activations are quantized and what the kernel does with them.

    ``quantize``: ``"none"`` (16-bit activations used as they are) or
    ``"separate_kernel"`` (``humming.ops.act_quant`` runs before the GEMM).
    ``operand``: the tensor-core type they are multiplied in; ``stored_as`` the
    type the quantization kernel writes (the values are those of the scheme's
    format, held exactly); ``convert``: what the GEMM does on load.
    ``scales``: where activation scales are applied.
    """

    quantize: str
    values: str
    stored_as: str
    operand: str
    convert: str
    scales: str

    def to_dict(self) -> dict:
        return {"quantize": self.quantize, "values": self.values, "stored_as": self.stored_as,
                "operand": self.operand, "convert": self.convert, "scales": self.scales}


@runtime_checkable
class KernelFamily(Protocol):
    """What a backend declares for one family of kernels.

    Attributes: ``name`` (unique, e.g. ``"mma_sync"``), ``backend``,
    ``mma_family`` (the capability-file family it issues), ``implemented``
    (whether this version can generate and run its kernels), ``priority``
    (higher is tried first when several families can run a layer).
    ``accepts(op)`` narrows the capability ops of ``mma_family`` the family
    issues (e.g. only the ``kind::`` forms of mma.sync).
    ``check(layer, caps, compute)`` lists hardware-level reasons the
    family's instructions cannot run the layer with ``compute``;
    ``limits(layer, caps, compute)`` (optional; default: none) lists reasons
    the family's implementation in this version cannot, though the
    instructions could.
    ``kernel_spec(plan, m)`` is optional: :meth:`humming.planner.Plan.kernel`
    calls it.
    ``tuned(layer, caps, compute, tuning, components, scales)`` (optional; default:
    nothing) says what depends on the final ``tuning`` (a plugin's override included):
    ``{"components": {slot: variant}, "scales": {key: place}, "notes": [...]}``, entries
    that replace the plan's (e.g. per M range, as ``"partial_accumulators (M 1-32),
    dequantized_weights (M >= 33)"``; notes are added); a slot a component variant has
    taken keeps it.
    ``native_form(layer, caps, compute)`` (optional; default: None) returns
    ``(mma family, fewest tokens)`` where the family's kernels also issue
    another capability family's instructions (nvidia's mma_sync issues wgmma on
    sm_90a); from 1 token on, an emulated ``compute`` of the family's own
    ``mma_family`` is then not emulated in practice, and the plan says so.
    Measured tuning (:mod:`humming.tune`), all optional: ``check_tuning(layer, caps,
    compute, tuning)`` lists why a tuning database entry cannot run (the planner sets
    it aside with those reasons); ``tuning_version()`` names the kernel sources an
    entry was measured with (entries of other sources are set aside);
    ``tuning_candidates(layer, caps, compute, tuning, index)`` gives the configs
    ``humming tune`` times for ``tuning[index]``, its own first (a family without it
    is not tuned).
    """

    name: str
    backend: str
    mma_family: str
    implemented: bool
    priority: int

    def accepts(self, op) -> bool: ...

    def check(self, layer, caps, compute: Compute) -> list[str]: ...

    def limits(self, layer, caps, compute: Compute) -> list[str]: ...

    def components(self, layer, caps, compute: Compute) -> dict: ...

    def tuning(self, layer, caps, compute: Compute) -> list[MRange]: ...

    def weight_layout(self, layer, caps, compute: Compute) -> WeightLayout: ...


class FamilyBase:
    """Shared defaults for kernel families; subclasses set the class attributes."""

    name: str = ""
    backend: str = ""
    mma_family: str = ""
    implemented: bool = False
    priority: int = 0
    #: the layout name prefix of this family's prepared weights
    layout_name: str = ""

    def accepts(self, op) -> bool:
        """Whether this family issues capability op ``op`` (of its ``mma_family``)."""
        return True

    def check(self, layer, caps, compute: Compute) -> list[str]:
        """Hardware-level reasons this family's instructions cannot run ``layer`` (none here)."""
        return []

    def limits(self, layer, caps, compute: Compute) -> list[str]:
        """Reasons this version's implementation of the family cannot run ``layer``
        although :meth:`check` passes (none here)."""
        return []

    def components(self, layer, caps, compute: Compute) -> dict:
        raise NotImplementedError(f"kernel family {self.name!r} declares no components")

    def tuning(self, layer, caps, compute: Compute) -> list[MRange]:
        from ..tune.heuristics import tile_rules_for, m_ranges

        return m_ranges(layer, caps, compute, tile_rules_for(self.mma_family))

    def weight_layout(self, layer, caps, compute: Compute) -> WeightLayout:
        return WeightLayout(self.layout_name or f"{self.name}_tiles", 1, {
            "bits": layer.weight.bits,
            "operand": compute.b,
            "source_format": layer.weight.fmt,
            "zero_point_folded": layer.weight.zero_point == "int" and not compute.is_16bit,
        })

    def __repr__(self) -> str:
        state = "implemented" if self.implemented else "declared"
        return f"<{type(self).__name__} {self.backend}:{self.name} ({state}, issues {self.mma_family})>"


@dataclass(frozen=True)
class ComponentVariant:
    """A component variant a plugin adds to an existing family.

    When ``applies(layer, caps, compute)`` is true for a plan of one of
    ``families`` (names; empty = any), the variant ``name`` fills ``slot``
    instead of the family's own choice. Among several applicable variants for a
    slot the highest ``priority`` wins.
    """

    slot: str
    name: str
    backend: str
    families: tuple = ()
    applies: Callable = field(default=lambda layer, caps, compute: True, compare=False)
    priority: int = 0
    description: str = ""

    def __post_init__(self):
        if self.slot not in SLOTS:
            raise ValueError(f"ComponentVariant.slot: expected one of {', '.join(SLOTS)}, "
                             f"found {self.slot!r}")
        object.__setattr__(self, "families", tuple(self.families))
