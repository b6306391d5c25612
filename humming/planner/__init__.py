"""The planner: ``plan(layer, device) -> Plan``.

See :mod:`humming.planner.planner` for the steps, :mod:`.compute` for the
fallback chain and :mod:`.family` for the contract kernel families fulfil.
"""
from __future__ import annotations

from .family import (SLOTS, ActivationHandling, ComponentVariant, Compute, FallbackStep, FamilyBase,
                     KernelFamily, MRange, WeightLayout)
from .plans import PLAN_VERSION, Plan
from .planner import MODES, clear_cache, plan, resolve_device

__all__ = [
    "plan", "Plan", "PLAN_VERSION", "MODES", "clear_cache", "resolve_device",
    "KernelFamily", "FamilyBase", "ComponentVariant", "MRange", "FallbackStep", "Compute",
    "WeightLayout", "ActivationHandling", "SLOTS",
]
