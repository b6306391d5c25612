"""The T-Head Zhenwu 810E backend, registered through the ``humming.backends``
entry point (``zhenwu = "humming_zhenwu.plugin"``).

The device is CUDA-compatible and runs the NVIDIA kernel families (its
capability file, ``zhenwu-810e``, says what it has: sm_80-class mma.sync, no
int4 tensor cores, NVCC-only compile). This backend contributes:

* detection: a GPU whose name starts with ``PPU`` or ``ZW`` is a Zhenwu 810E;
* tuning: two CTAs per SM sharing its large shared memory, and no split-K
  (the public Zhenwu tuning rarely splits K).
"""
from __future__ import annotations

from dataclasses import replace

from humming.plugins import hookimpl
from humming.tune.heuristics import m_ranges, tile_rules_for

DEVICE = "zhenwu-810e"
NAME_PREFIXES = ("PPU", "ZW")


@hookimpl
def humming_detect_device(props):
    name = str(getattr(props, "name", "") or "").strip().upper()
    if name.startswith(NAME_PREFIXES):
        return DEVICE
    return None


def _is_zhenwu(caps) -> bool:
    return DEVICE in tuple(getattr(caps, "chain", ()) or ())


@hookimpl
def humming_tuning(family, layer, caps, compute):
    if not _is_zhenwu(caps):
        return None
    rules = replace(tile_rules_for(family.mma_family), ctas_per_sm=2, split_k=False)
    return m_ranges(layer, caps, compute, rules)
