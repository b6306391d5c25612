"""Tuning heuristics: a few M ranges per layer, each with a small kernel config.

Everything here is derived from the layer shape and the device's figures (SM
count, shared memory, whether cp.async exists), never from an SM number. A
family describes what its kernels allow with :class:`TileRules`; a backend may
replace the whole result through the ``humming_tuning`` plugin hook.

Config keys (all ints): ``tile_m``, ``tile_n``, ``tile_k`` (the CTA tile),
``stages`` (shared-memory pipeline depth), ``warps``, ``split_k`` (K slices
reduced in fp32; 1 = none), ``ctas_per_sm``.

These serve the families without tuning of their own (the declared ones); the
implemented NVIDIA ``mma_sync`` family returns its kernel's tiles
(``humming_nvidia.gemm_mma_sync.tuning``). Either way the planner reads
``split_k > 1`` in any range as the split-K scheduler.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..dtypes import get_format
from ..planner.family import MRange

__all__ = ["TileRules", "Figures", "figures", "tile_rules_for", "m_ranges", "DEFAULT_SM_COUNT"]

#: SM count assumed when the device is an architecture, not a product (no figures).
DEFAULT_SM_COUNT = 108
#: Shared memory per block assumed when the capability file gives none.
DEFAULT_SMEM = 48 * 1024


@dataclass(frozen=True)
class TileRules:
    """What a family's kernels allow; per-range tuples follow ``m_bounds``."""

    m_bounds: tuple = (16, 64, 256, None)   # upper ends of the M ranges
    tile_m: tuple = (16, 64, 128, 128)      # CTA tile M per range (dense)
    moe_tile_m: tuple = (16, 16, 32, 64)    # per-expert tile M per range (MoE)
    tile_k: tuple = (256, 128, 64, 64)      # preferred K tile per range (halved to fit)
    k_align: int = 64                       # K tiles are multiples of this (K is padded to it)
    tile_n: tuple = (256, 128, 64)          # N tile candidates, largest first
    max_stages: int = 4
    min_stages: int = 2
    ctas_per_sm: int = 1
    split_k: bool = True                    # may split K for small M when tiles < SMs
    epilogue_smem: int = 0                  # bytes reserved next to the pipeline


_RULES = {
    "mma_sync": TileRules(),
    "mma_block_scaled": TileRules(tile_k=(256, 128, 128, 128), k_align=128),
    "wgmma": TileRules(max_stages=6),
    "tcgen05": TileRules(tile_m=(32, 64, 128, 256), tile_n=(256, 128), max_stages=6, k_align=128,
                         tile_k=(256, 128, 128, 128)),
}


def tile_rules_for(mma_family: str) -> TileRules:
    return _RULES.get(mma_family, TileRules())


@dataclass(frozen=True)
class Figures:
    sm_count: int
    smem_per_block: int
    smem_per_sm: int
    cp_async: bool
    sm_count_known: bool


def figures(caps) -> Figures:
    """The figures tuning needs, from a capability object (or a detected device's)."""
    product = getattr(caps, "product", None)
    sm = getattr(product, "sm_count", None) if product is not None else None
    smem_sm = caps.limit("smem_per_sm")
    smem_block = caps.limit("smem_per_block_optin") or caps.limit("smem_per_block") or smem_sm or DEFAULT_SMEM
    smem_sm = smem_sm or smem_block
    return Figures(sm_count=int(sm or DEFAULT_SM_COUNT), smem_per_block=int(smem_block),
                   smem_per_sm=int(smem_sm), cp_async=bool(caps.has("cp_async")),
                   sm_count_known=sm is not None)


def _bytes(fmt: str) -> float:
    return get_format(fmt).bits / 8


def _stage_bytes(layer, compute, tm, tn, tk) -> int:
    a = tm * tk * _bytes(compute.a)
    b = tn * tk * layer.weight.bits / 8
    groups = 1
    if layer.weight.scale in ("group", "block"):
        groups = max(1, tk // layer.weight.group_size)
    s = tn * groups * _bytes(layer.weight.scale_fmt)
    return int(a + b + s)


def _halvings(start: int, stop: int) -> list[int]:
    out = []
    while start >= stop:
        out.append(start)
        start //= 2
    return out


def _config(layer, compute, fig: Figures, rules: TileRules, idx: int, m_rep: int) -> dict:
    n = layer.n
    kp = -(-layer.k // rules.k_align) * rules.k_align
    tm = (rules.moe_tile_m if layer.is_moe else rules.tile_m)[idx]
    slots = fig.sm_count * rules.ctas_per_sm
    m_tiles = max(1, math.ceil(m_rep / tm)) * (max(1, layer.num_experts) if layer.is_moe else 1)
    # the largest N tile that still gives every CTA slot a tile
    tn = next((c for c in rules.tile_n if math.ceil(n / c) * m_tiles >= slots), rules.tile_n[-1])
    tks = [c for c in _halvings(rules.tile_k[idx], rules.k_align) if kp % c == 0]
    if layer.weight.scale in ("group", "block"):
        g = layer.weight.group_size
        # a K tile holds whole groups or lies inside one (scales load once per tile)
        tks = [c for c in tks if c % g == 0 or g % c == 0] or tks
    tks = tks or [rules.k_align]
    budget = min(fig.smem_per_block, fig.smem_per_sm // rules.ctas_per_sm) - rules.epilogue_smem
    choice = None
    for tn_c in _halvings(tn, rules.tile_n[-1]):
        for tk_c in tks:
            if _stage_bytes(layer, compute, tm, tn_c, tk_c) * rules.min_stages <= budget:
                choice = (tn_c, tk_c)
                break
        if choice:
            break
    tn, tk = choice or (rules.tile_n[-1], tks[-1])
    per_stage = _stage_bytes(layer, compute, tm, tn, tk)
    if fig.cp_async:
        stages = max(rules.min_stages, min(rules.max_stages, budget // max(1, per_stage)))
    else:
        stages = 2  # register-staged loads double-buffer; there is no async copy to deepen
    tiles = math.ceil(n / tn) * m_tiles
    split = 1
    if rules.split_k and tiles < slots and not layer.is_moe:
        want = slots // tiles
        most = max(1, kp // (tk * rules.min_stages))
        split = 1 << int(math.log2(max(1, min(want, most, 16))))
    warps = 4 if tm * tn <= 64 * 128 else 8
    return {"tile_m": tm, "tile_n": tn, "tile_k": tk, "stages": int(stages), "warps": warps,
            "split_k": split, "ctas_per_sm": rules.ctas_per_sm}


def m_ranges(layer, caps, compute, rules: TileRules | None = None, fig: Figures | None = None) -> list[MRange]:
    """Few M ranges (3-5) with a config each; equal neighbours are merged."""
    rules = rules or TileRules()
    fig = fig or figures(caps)
    out: list[MRange] = []
    lo = 1
    for idx, hi in enumerate(rules.m_bounds):
        m_rep = hi if hi is not None else max(4 * (lo - 1), 1024)
        cfg = _config(layer, compute, fig, rules, idx, m_rep)
        if out and dict(out[-1].config) == cfg:
            out[-1] = MRange(out[-1].lo, hi, cfg)
        else:
            out.append(MRange(lo, hi, cfg))
        if hi is None:
            break
        lo = hi + 1
    return out

