"""The prepared weight layout ``mma_sync_fragment`` (v1), on the host side.

See ``include/humming/gemm/layout.cuh`` for the definition; this module packs
unsigned B-bit values ``[N, K]`` into it (and unpacks, for tests), with torch on
CPU or GPU. ``N`` must be a multiple of 16 and ``K`` of 64: callers pad first.
"""
from __future__ import annotations

import functools

import torch

LAYOUT_NAME = "mma_sync_fragment"
LAYOUT_VERSION = 2  # v2: scale rows g and g + 8 of each 16-row block side by side
BLOCK_ROWS, BLOCK_COLS, LANES, PAIRS = 16, 64, 32, 16


def planes(bits: int) -> list[tuple[int, int]]:
    """[(width, bit offset)] of the power-of-two planes of a ``bits``-bit value, largest first."""
    if not 1 <= bits <= 8:
        raise ValueError(f"layout: bits must be 1..8, got {bits}")
    out, off = [], 0
    for p in (8, 4, 2, 1):
        if bits & p:
            out.append((p, off))
            off += p
    return out


@functools.lru_cache(maxsize=None)
def _fragment_index(device_type: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(row, col) inside a 16x64 block of element e of pair j of lane l: [32, 16, 2]."""
    lane = torch.arange(LANES).view(LANES, 1, 1)
    j = torch.arange(PAIRS).view(1, PAIRS, 1)
    e = torch.arange(2).view(1, 1, 2)
    g, t = lane // 4, lane % 4
    kt, r = j // 4, j % 4
    row = g + 8 * (r & 1) + 0 * e
    col = 16 * kt + 2 * t + 8 * (r >> 1) + e
    return row.expand(LANES, PAIRS, 2).contiguous(), col.expand(LANES, PAIRS, 2).contiguous()


def pack(values: torch.Tensor, bits: int) -> torch.Tensor:
    """Pack unsigned ``bits``-bit values ``[N, K]`` (any int dtype) -> int32 ``[N/16, K/64, 32, bits]``."""
    n, k = values.shape
    if n % BLOCK_ROWS or k % BLOCK_COLS:
        raise ValueError(f"layout.pack: N={n} must be a multiple of 16 and K={k} of 64 (pad first)")
    dev = values.device
    row, col = (t.to(dev) for t in _fragment_index(dev.type))
    v = values.to(torch.int64).view(n // 16, 16, k // 64, 64).permute(0, 2, 1, 3)  # [NB, KB, 16, 64]
    flat = v.reshape(n // 16, k // 64, 16 * 64)
    idx = (row * 64 + col).view(-1)
    frag = flat[:, :, idx].view(n // 16, k // 64, LANES, PAIRS, 2)  # [NB, KB, lane, pair, elem]
    words = []
    for p, off in planes(bits):
        per_word = 16 // p
        field = (frag >> off) & ((1 << p) - 1)  # [NB, KB, lane, 16, 2]
        field = field.view(n // 16, k // 64, LANES, p, per_word, 2)
        slot_shift = (torch.arange(per_word, device=dev) * p).view(1, 1, 1, 1, per_word, 1)
        elem_shift = torch.tensor([0, 16], device=dev).view(1, 1, 1, 1, 1, 2)
        w = (field << (slot_shift + elem_shift)).sum(dim=(-1, -2))  # [NB, KB, lane, p] (disjoint bits)
        words.append(w)
    allw = torch.cat(words, dim=-1).contiguous()  # [NB, KB, lane, bits]
    return ((allw + 2**31) % 2**32 - 2**31).to(torch.int32)


def pair_scale_rows(t: torch.Tensor) -> torch.Tensor:
    """Scale entries ``[groups, Np]`` (Np a multiple of 16) with the rows of each
    16-row block reordered 0, 8, 1, 9, ..., 7, 15: the two rows a lane of the MMA
    fragment holds (g and g + 8) sit side by side, so one 4-byte (8 with zero
    points) load fetches both."""
    g, np_ = t.shape
    if np_ % BLOCK_ROWS:
        raise ValueError(f"layout.pair_scale_rows: Np={np_} must be a multiple of 16")
    return t.reshape(g, np_ // 16, 2, 8).transpose(-1, -2).reshape(g, np_).contiguous()


def unpair_scale_rows(t: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`pair_scale_rows`."""
    g, np_ = t.shape
    return t.reshape(g, np_ // 16, 8, 2).transpose(-1, -2).reshape(g, np_).contiguous()


def unpack(packed: torch.Tensor, bits: int) -> torch.Tensor:
    """Inverse of :func:`pack` (for tests): int32 ``[N/16, K/64, 32, bits]`` -> int64 ``[N, K]``."""
    nb, kb, lanes, b = packed.shape
    assert b == bits and lanes == LANES
    dev = packed.device
    w = packed.to(torch.int64) & 0xFFFFFFFF
    frag = torch.zeros(nb, kb, LANES, PAIRS, 2, dtype=torch.int64, device=dev)
    for p, off in planes(bits):
        per_word = 16 // p
        pw = w[..., off:off + p]  # this plane's words [NB, KB, lane, p]
        j = torch.arange(PAIRS, device=dev)
        word_of = pw[..., j // per_word]  # [NB, KB, lane, 16]
        shift = (j % per_word) * p
        for e in range(2):
            frag[..., e] |= ((word_of >> (shift + 16 * e)) & ((1 << p) - 1)) << off
    row, col = (t.to(dev) for t in _fragment_index(dev.type))
    out = torch.zeros(nb, kb, 16 * 64, dtype=torch.int64, device=dev)
    out[:, :, (row * 64 + col).view(-1)] = frag.view(nb, kb, -1)
    return out.view(nb, kb, 16, 64).permute(0, 2, 1, 3).reshape(nb * 16, kb * 64)
