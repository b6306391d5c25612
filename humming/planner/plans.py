"""The Plan: what will run for one layer on one device, and why."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import UnsupportedError
from ..scheme import LayerSpec
from .family import SLOTS, ActivationHandling, Compute, MRange, WeightLayout, frozen_mapping

__all__ = ["Plan", "PLAN_VERSION"]

#: Version of :meth:`Plan.to_dict`'s schema; bumped when a key changes meaning.
PLAN_VERSION = 1


@dataclass(frozen=True, eq=False)
class Plan:
    """A frozen decision for one layer on one device.

    Read it with :meth:`explain` (a person) or :meth:`to_dict` (an engine: JSON,
    stable keys, ``"plan_version": 1``). Two plans are equal when their
    fingerprints are; :meth:`fingerprint` is stable across processes.
    """

    layer: LayerSpec
    device: str
    device_chain: tuple
    mode: str                       # "implemented" or "hardware"
    compute: Compute
    fallbacks: tuple                # FallbackStep, in the order they were taken
    family: str
    backend: str
    implemented: bool
    runnable: bool
    not_runnable_reason: str | None
    components: Mapping             # slot -> variant
    scales: Mapping                 # what -> where it is applied
    weight_layout: WeightLayout
    activation: ActivationHandling
    tuning: tuple                   # MRange, ascending and covering M >= 1
    notes: tuple = ()
    #: what keeps this version's implementation of the chosen family from running the
    #: layer (hardware mode only: with the implemented families the walk goes on past them)
    limits: tuple = ()
    _family: Any = field(default=None, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "components", frozen_mapping(self.components))
        object.__setattr__(self, "scales", frozen_mapping(self.scales))

    # -- queries -----------------------------------------------------------------
    def tuning_for(self, m: int) -> MRange:
        """The M range that holds ``m`` tokens."""
        if not isinstance(m, int) or m < 1:
            raise ValueError(f"Plan.tuning_for: m must be a positive integer, found {m!r}")
        for r in self.tuning:
            if r.contains(m):
                return r
        raise ValueError(f"Plan.tuning_for: no M range holds m={m} "
                         f"(ranges: {', '.join(r.label() for r in self.tuning)})")

    def kernel(self, m: int):
        """The :class:`humming.jit.KernelSpec` for ``m`` tokens (from the family)."""
        if not self.runnable:
            raise UnsupportedError(f"plan for {self.device} is not runnable: {self.not_runnable_reason}",
                                   [self.not_runnable_reason or ""])
        spec_fn = getattr(self._family, "kernel_spec", None)
        if spec_fn is None:
            raise UnsupportedError(
                f"kernel family {self.family!r} ({self.backend}) cannot generate kernels in this version",
                [f"{self.family}: no kernel_spec()"])
        return spec_fn(self, m)

    # -- serialisation -------------------------------------------------------------
    def _body(self) -> dict:
        return {
            "plan_version": PLAN_VERSION,
            "layer": self.layer.to_dict(),
            "device": {"name": self.device, "chain": list(self.device_chain)},
            "mode": self.mode,
            "compute": self.compute.to_dict(),
            "fallbacks": [s.to_dict() for s in self.fallbacks],
            "family": {"name": self.family, "backend": self.backend, "implemented": self.implemented},
            "runnable": self.runnable,
            "not_runnable_reason": self.not_runnable_reason,
            "limits": list(self.limits),
            "components": {slot: self.components[slot] for slot in SLOTS if slot in self.components},
            "scales": dict(self.scales),
            "weight_layout": self.weight_layout.to_dict(),
            "activation": self.activation.to_dict(),
            "tuning": [r.to_dict() for r in self.tuning],
            "notes": list(self.notes),
        }

    def fingerprint(self) -> str:
        """sha256 (hex, 16 chars) of the plan's content, the same in every process."""
        fp = self.__dict__.get("_fp")
        if fp is None:
            text = json.dumps(self._body(), sort_keys=True, separators=(",", ":"))
            fp = hashlib.sha256(text.encode()).hexdigest()[:16]
            object.__setattr__(self, "_fp", fp)
        return fp

    def to_dict(self) -> dict:
        """Plain JSON-able dict with stable keys, versioned by ``plan_version``."""
        d = self._body()
        d["fingerprint"] = self.fingerprint()
        return d

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=indent is None)

    def __eq__(self, other) -> bool:
        return isinstance(other, Plan) and other.fingerprint() == self.fingerprint()

    def __hash__(self) -> int:
        return hash(self.fingerprint())

    # -- for a person --------------------------------------------------------------------
    def explain(self) -> str:
        c = self.compute
        lines = [f"Plan for {self.layer.describe()}",
                 f"  device      {self.device} ({' -> '.join(self.device_chain)})",
                 f"  mode        {self.mode} families"]
        op = f"{c.mma_family}" + (f" kind::{c.kind}" if c.kind else "")
        how = "block-scaled, " if c.block_scaled else ""
        how += "emulated by the compiler" if c.emulated else "native"
        lines.append(f"  compute     {c.a} x {c.b} -> {c.acc} on {op} ({how})")
        if self.fallbacks:
            lines.append("  fallbacks")
            for s in self.fallbacks:
                lines.append(f"    {s.src} -> {s.dst}: {s.reason}")
        else:
            lines.append("  fallbacks   none: the activation type is multiplied as it is")
        state = "implemented" if self.implemented else "declared, not implemented"
        lines.append(f"  family      {self.backend}:{self.family} ({state})")
        if self.limits:
            lines.append(f"  limits      this version's {self.family} kernels cannot run this layer:")
            lines.extend(f"    - {r}" for r in self.limits)
        if self.runnable:
            lines.append("  runnable    yes")
        elif self.limits:
            lines.append("  runnable    no: implementation limits (above); "
                         "plan with families=\"implemented\" for what runs")
        else:
            lines.append(f"  runnable    no: {self.not_runnable_reason}")
        lines.append("  components")
        for slot in SLOTS:
            if slot in self.components:
                lines.append(f"    {slot:<12}{self.components[slot]}")
        lines.append("  scales")
        width = max(map(len, self.scales), default=0) + 2
        for what, where in self.scales.items():
            lines.append(f"    {what:<{width}}{where}")
        a = self.activation
        lines.append(f"  activations {a.values}: quantize {a.quantize.replace('_', ' ')}, stored as "
                     f"{a.stored_as}, operand {a.operand}, on load {a.convert}, scales {a.scales}")
        wl = self.weight_layout
        params = ", ".join(f"{k}={v}" for k, v in wl.params.items())
        lines.append(f"  weights     layout {wl.descriptor} [{params}] fingerprint {wl.fingerprint}")
        lines.append("  tuning")
        for r in self.tuning:
            cfg = ", ".join(f"{k}={v}" for k, v in r.config.items())
            lines.append(f"    {r.label():<14}{cfg}")
        if self.notes:
            lines.append("  notes")
            lines.extend(f"    - {n}" for n in self.notes)
        lines.append(f"  fingerprint {self.fingerprint()}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.explain()
