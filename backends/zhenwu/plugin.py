"""The T-Head Zhenwu 810E backend, registered through the ``humming.backends``
entry point (``zhenwu = "humming_zhenwu.plugin"``).

The device is CUDA-compatible and runs the NVIDIA kernel families (its
capability file, ``zhenwu-810e``, says what it has: sm_80-class mma.sync, no
int4 tensor cores, NVCC-only compile). This backend contributes:

* detection: a GPU whose name starts with ``PPU`` or ``ZW`` is a Zhenwu 810E;
* tuning: two CTAs per SM sharing its large shared memory, and no split-K
  (the public Zhenwu tuning rarely splits K). For the NVIDIA ``mma_sync``
  family these are the kernel's own tiles (:func:`humming_nvidia.gemm_mma_sync.tuning`)
  fitted to half an SM's shared memory, with ``split_k`` 1 so the launcher
  never splits; other families get the generic heuristics with the same rules.
"""
from __future__ import annotations

from dataclasses import replace

from humming.planner import MRange
from humming.plugins import hookimpl
from humming.tune.heuristics import m_ranges, tile_rules_for

DEVICE = "zhenwu-810e"
NAME_PREFIXES = ("PPU", "ZW")
CTAS_PER_SM = 2


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
    if (family.backend, family.name) == ("nvidia", "mma_sync"):
        from humming_nvidia import gemm_mma_sync

        per_block = caps.limit("smem_per_block_optin") or caps.limit("smem_per_block")
        budget = caps.limit("smem_per_sm") // CTAS_PER_SM
        ranges = gemm_mma_sync.tuning(layer, caps, compute, max_smem=min(budget, per_block or budget))
        return [MRange(r.lo, r.hi, {**r.config, "split_k": 1}) for r in ranges]
    rules = replace(tile_rules_for(family.mma_family), ctas_per_sm=CTAS_PER_SM, split_k=False)
    return m_ranges(layer, caps, compute, rules)
