"""The prepared weight layout ``mma_sync_fragment`` (v5), on the host side.

See ``include/humming/gemm/layout.cuh`` for the definition; this module packs
unsigned B-bit values ``[N, K]`` into it (and unpacks, for tests), with torch on
CPU or GPU. ``N`` must be a multiple of 16 and ``K`` of 64: callers pad first.
"""
from __future__ import annotations

import functools

import torch

LAYOUT_NAME = "mma_sync_fragment"
# v2: scale rows g and g + 8 of each 16-row block side by side; v3: the words of 3-, 5-, 6- and
# 7-bit blocks stored plane by plane (`to_storage`); v4: 3-bit values as whole fields, five per
# 16-bit half (`fields3`: one LOP3 per pair in the dequantizer, where v3's 2-bit and 1-bit planes
# took two); v5: 4-bit float codes (e2m1) as magnitude and sign fields (`fields4`: 11 operations per four
# pairs in the dequantizer, where nibbles took 15)
LAYOUT_VERSION = 5
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


def slots(bits: int, plane: int, device=None) -> torch.Tensor:
    """Slot of pair j (0..15) in its word of plane ``plane`` (layout.cuh's ``slot``): j % (16 / P)."""
    return torch.arange(PAIRS, device=device) % (16 // planes(bits)[plane][0])


def fields3() -> list[list[tuple[int, int, int, int]]]:
    """Where the bits of 3-bit pair j (0..15) sit (layout.cuh's ``word3`` / ``pos3``): for each j, a list
    of runs (word, bit of the word's low half, first value bit, width). Pair j < 15 is one whole field:
    even j = 2 e in word e // 3 at bit 6 (e % 3), odd j = 2 o + 1 in word o // 2 at bit 3 + 6 (o % 2) for
    o < 4, else in word 2 at bit 3, 9 or 12 (o = 4, 5, 6). Pair 15 takes the spare bit 15 of each word: value bit b
    in word b. The second element of a pair sits 16 bits above the first."""
    out = []
    for j in range(PAIRS - 1):
        if j % 2 == 0:
            e = j // 2
            out.append([(e // 3, 6 * (e % 3), 0, 3)])
        else:
            o = j // 2
            out.append([(o // 2, 3 + 6 * (o % 2), 0, 3)] if o < 4 else [(2, (3, 9, 12)[o - 4], 0, 3)])
    out.append([(b, 15, b, 1) for b in range(3)])  # (bit b of the value at bit 15 of word b)
    return out


def float4_fields(bits: int, mshift: int) -> bool:
    """Whether ``bits``-bit float codes whose magnitude goes to bit ``mshift`` of a 16-bit half (``mantissa
    bits of the compute type - the format's``) are stored as fields (layout.cuh's ``float4_fields``): e2m1 in
    fp16 (9) and bf16 (6)."""
    return bits == 4 and mshift in (6, 9)


def fields4(mshift: int) -> list[list[tuple[int, int, int, int]]]:
    """Where the bits of 4-bit float pair j (0..15) sit (layout.cuh's ``f4_mag`` / ``f4_sign``), as
    :func:`fields3` gives them: pair j in word j // 4, q = j % 4, its magnitude (value bits 0-2) at bit
    0, 3, mshift, 12 and its sign (value bit 3) at 15 - mshift + 0, 1, -, 2 (q = 2: bit 15) of each half."""
    if not float4_fields(4, mshift):
        raise ValueError(f"layout.fields4: 4-bit float fields exist for magnitudes at bit 6 or 9, not {mshift}")
    mag = (0, 3, mshift, 12)
    sign = (15 - mshift, 16 - mshift, 15, 17 - mshift)
    return [[(j // 4, mag[j % 4], 0, 3), (j // 4, sign[j % 4], 3, 1)] for j in range(PAIRS)]


def fields_for(bits: int, wfloat: bool = False, mshift: int = 0):
    """The field runs of a width stored as fields (:func:`fields3` for 3 bits, :func:`fields4` for 4-bit
    floats that :func:`float4_fields` names), else None (power-of-two planes)."""
    if bits == 3:
        return fields3()
    if wfloat and float4_fields(bits, mshift):
        return fields4(mshift)
    return None


@functools.lru_cache(maxsize=None)
def _fragment_index(device_type: str, per: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    """(row, col) inside a block of element e of register j of lane l: [32, 16, per].

    16-bit operands (16x64 blocks, per = 2): pair j = 4 kt + r holds row g + 8 (r & 1), columns
    16 kt + 2 t + 8 (r >> 1) + e (mma.sync m16n8k16's A operand). Byte operands (16x128,
    per = 4): register j = 4 kt + r, columns 32 kt + 4 t + 16 (r >> 1) + e (m16n8k32's).
    4-bit operands (16x256, per = 8): columns 64 kt + 8 t + 32 (r >> 1) + e (m16n8k64's)."""
    lane = torch.arange(LANES).view(LANES, 1, 1)
    j = torch.arange(PAIRS).view(1, PAIRS, 1)
    e = torch.arange(per).view(1, 1, per)
    g, t = lane // 4, lane % 4
    kt, r = j // 4, j % 4
    row = g + 8 * (r & 1) + 0 * e
    col = 8 * per * kt + per * t + 4 * per * (r >> 1) + e
    return row.expand(LANES, PAIRS, per).contiguous(), col.expand(LANES, PAIRS, per).contiguous()


def pack(values: torch.Tensor, bits: int, fields=None) -> torch.Tensor:
    """Pack unsigned ``bits``-bit values ``[N, K]`` (any int dtype) -> int32 ``[N/16, K/64, 32, bits]``.
    ``fields``: the runs of a width stored as fields (:func:`fields_for`); 3-bit values always are."""
    n, k = values.shape
    if n % BLOCK_ROWS or k % BLOCK_COLS:
        raise ValueError(f"layout.pack: N={n} must be a multiple of 16 and K={k} of 64 (pad first)")
    dev = values.device
    row, col = (t.to(dev) for t in _fragment_index(dev.type))
    v = values.to(torch.int64).view(n // 16, 16, k // 64, 64).permute(0, 2, 1, 3)  # [NB, KB, 16, 64]
    flat = v.reshape(n // 16, k // 64, 16 * 64)
    idx = (row * 64 + col).view(-1)
    frag = flat[:, :, idx].view(n // 16, k // 64, LANES, PAIRS, 2)  # [NB, KB, lane, pair, elem]
    if bits == 3 and fields is None:
        fields = fields3()
    if fields is not None:
        allw = torch.zeros(n // 16, k // 64, LANES, bits, dtype=torch.int64, device=dev)
        for j, runs in enumerate(fields):
            for word, pos, vb, width in runs:
                f = ((frag[..., j, :] >> vb) & ((1 << width) - 1)) << pos  # [NB, KB, lane, 2]
                allw[..., word] |= f[..., 0] | (f[..., 1] << 16)
        return ((allw + 2**31) % 2**32 - 2**31).to(torch.int32)
    words = []
    for i, (p, off) in enumerate(planes(bits)):
        per_word = 16 // p
        field = (frag >> off) & ((1 << p) - 1)  # [NB, KB, lane, 16, 2]
        field = field.view(n // 16, k // 64, LANES, p, per_word, 2)
        slot_shift = (slots(bits, i, dev) * p).view(1, 1, 1, p, per_word, 1)
        elem_shift = torch.tensor([0, 16], device=dev).view(1, 1, 1, 1, 1, 2)
        w = (field << (slot_shift + elem_shift)).sum(dim=(-1, -2))  # [NB, KB, lane, p] (disjoint bits)
        words.append(w)
    allw = torch.cat(words, dim=-1).contiguous()  # [NB, KB, lane, bits]
    return ((allw + 2**31) % 2**32 - 2**31).to(torch.int32)


def storage_index(bits: int) -> torch.Tensor:
    """Where word i of lane l sits among a block's 32 * bits stored words (layout.cuh's ``word_index``),
    as a ``[32 * bits]`` tensor indexed by ``l * bits + i``: plane by plane, plane q's P words of lane l
    at ``32 * off_q + l * P`` (one-plane widths: ``l * bits + i``, the order :func:`pack` returns)."""
    idx = torch.empty(LANES, bits, dtype=torch.int64)
    for p, off in planes(bits):
        for i in range(off, off + p):
            idx[:, i] = 32 * off + torch.arange(LANES) * p + (i - off)
    return idx.view(-1)


def to_storage(packed: torch.Tensor, bits: int) -> torch.Tensor:
    """:func:`pack`'s ``[..., 32, bits]`` (each lane's words in order) -> ``[..., 32 * bits]``, each
    block's words in the order the kernels read them (:func:`storage_index`)."""
    flat = packed.reshape(*packed.shape[:-2], LANES * bits)
    out = torch.empty_like(flat)
    out[..., storage_index(bits).to(packed.device)] = flat
    return out


def from_storage(stored: torch.Tensor, bits: int) -> torch.Tensor:
    """Inverse of :func:`to_storage`."""
    return stored[..., storage_index(bits).to(stored.device)].reshape(*stored.shape[:-1], LANES, bits)


#: The byte-operand variant (int8 / fp8 MMA, m16n8k32): blocks of 16 rows x 128 columns.
BYTE_BLOCK_COLS, BYTE_REGS = 128, PAIRS


def _fragments(values: torch.Tensor, per: int, what: str) -> torch.Tensor:
    """``values [N, K]`` (int64) in fragment order for operands of ``per`` elements per 32-bit
    register: ``[N/16, K/cols, 32 lanes, 16 registers, per]`` with cols = 32 per."""
    n, k = values.shape
    cols = 32 * per
    if n % BLOCK_ROWS or k % cols:
        raise ValueError(f"layout.{what}: N={n} must be a multiple of 16 and K={k} of {cols} (pad first)")
    dev = values.device
    row, col = (t.to(dev) for t in _fragment_index(dev.type, per))
    kb = k // cols
    flat = values.to(torch.int64).view(n // 16, 16, kb, cols).permute(0, 2, 1, 3).reshape(n // 16, kb, 16 * cols)
    return flat[:, :, (row * cols + col).view(-1)].view(n // 16, kb, LANES, PAIRS, per)


#: Where byte i of a byte-operand register sits in its word: in order, or (``pairs``) bytes 1 and 2
#: swapped, so that the bytes 0, 2 and 1, 3 of a word -- the two 16-bit halves' low bytes, and
#: their high bytes -- hold a register's codes 0, 1 and 2, 3 (integer codes made fp8 operands
#: two at a time from fp16 pairs: dequant.cuh's DequantBytes::INT_FP8).
BYTE_ORDER = {False: (0, 1, 2, 3), True: (0, 2, 1, 3)}


def _byte_shifts(bits: int, pairs: bool, dev) -> torch.Tensor:
    per = 8 // bits
    pos = torch.tensor(BYTE_ORDER[bool(pairs)], device=dev).view(1, 4)
    return 8 * pos + bits * torch.arange(per, device=dev).view(per, 1)


def pack_bytes(values: torch.Tensor, bits: int, pairs: bool = False) -> torch.Tensor:
    """Pack unsigned ``bits``-bit values ``[N, K]`` (bits 1, 2, 4 or 8) for byte-operand
    MMAs -> int32 ``[N/16, K/128, 32, 2*bits]``: register j of word q of a lane is
    register 8/bits * q + j of its fragment, byte i at bits 8 i + bits j (see layout.cuh),
    or with ``pairs`` at bits 8 BYTE_ORDER[True][i] + bits j."""
    if bits not in (1, 2, 4, 8):
        raise ValueError(f"layout.pack_bytes: bits must be 1, 2, 4 or 8, got {bits}")
    frag = _fragments(values, 4, "pack_bytes")
    n, kb, dev = frag.shape[0] * 16, frag.shape[1], values.device
    per = 8 // bits
    frag = (frag & ((1 << bits) - 1)).view(n // 16, kb, LANES, 2 * bits, per, 4)
    shift = _byte_shifts(bits, pairs, dev)
    words = (frag << shift).sum(dim=(-1, -2))  # [NB, KB, lane, 2*bits] (disjoint bits)
    return ((words + 2**31) % 2**32 - 2**31).to(torch.int32)


def unpack_bytes(packed: torch.Tensor, bits: int, pairs: bool = False) -> torch.Tensor:
    """Inverse of :func:`pack_bytes` (for tests) -> int64 ``[N, K]``."""
    nb, kb, lanes, wpl = packed.shape
    assert wpl == 2 * bits and lanes == LANES
    dev = packed.device
    w = (packed.to(torch.int64) & 0xFFFFFFFF).view(nb, kb, LANES, wpl, 1, 1)
    shift = _byte_shifts(bits, pairs, dev)
    frag = ((w >> shift) & ((1 << bits) - 1)).view(nb, kb, LANES * BYTE_REGS * 4)
    row, col = (t.to(dev) for t in _fragment_index(dev.type, 4))
    out = torch.zeros(nb, kb, 16 * BYTE_BLOCK_COLS, dtype=torch.int64, device=dev)
    out[:, :, (row * BYTE_BLOCK_COLS + col).view(-1)] = frag
    return out.view(nb, kb, 16, BYTE_BLOCK_COLS).permute(0, 2, 1, 3).reshape(nb * 16, kb * BYTE_BLOCK_COLS)


#: The 4-bit operand variant (int4 MMA, m16n8k64): blocks of 16 rows x 256 columns.
NIBBLE_BLOCK_COLS = 256


def pack_nibbles(values: torch.Tensor) -> torch.Tensor:
    """Pack 4-bit values ``[N, K]`` (the low nibble of any int dtype) for int4 MMAs -> int32
    ``[N/16, K/256, 32, 16]``: word j of a lane is register j of its fragment, element e in
    bits 4 e .. 4 e + 3 (the register mma.sync m16n8k64 takes as it is)."""
    frag = _fragments(values, 8, "pack_nibbles") & 0xF
    words = (frag << (4 * torch.arange(8, device=values.device))).sum(dim=-1)  # [NB, KB, lane, 16] (disjoint bits)
    return ((words + 2**31) % 2**32 - 2**31).to(torch.int32)


def unpack_nibbles(packed: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`pack_nibbles` (for tests) -> int64 ``[N, K]`` of 0..15."""
    nb, kb, lanes, wpl = packed.shape
    assert wpl == PAIRS and lanes == LANES
    dev = packed.device
    w = (packed.to(torch.int64) & 0xFFFFFFFF).unsqueeze(-1)
    frag = ((w >> (4 * torch.arange(8, device=dev))) & 0xF).view(nb, kb, -1)
    row, col = (t.to(dev) for t in _fragment_index(dev.type, 8))
    out = torch.zeros(nb, kb, 16 * NIBBLE_BLOCK_COLS, dtype=torch.int64, device=dev)
    out[:, :, (row * NIBBLE_BLOCK_COLS + col).view(-1)] = frag
    return out.view(nb, kb, 16, NIBBLE_BLOCK_COLS).permute(0, 2, 1, 3).reshape(nb * 16, kb * NIBBLE_BLOCK_COLS)


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


def unpack(packed: torch.Tensor, bits: int, fields=None) -> torch.Tensor:
    """Inverse of :func:`pack` (for tests): int32 ``[N/16, K/64, 32, bits]`` -> int64 ``[N, K]``."""
    nb, kb, lanes, b = packed.shape
    assert b == bits and lanes == LANES
    dev = packed.device
    w = packed.to(torch.int64) & 0xFFFFFFFF
    frag = torch.zeros(nb, kb, LANES, PAIRS, 2, dtype=torch.int64, device=dev)
    if bits == 3 and fields is None:
        fields = fields3()
    for j, runs in enumerate(fields or ()):
        for word, pos, vb, width in runs:
            for e in range(2):
                frag[..., j, e] |= ((w[..., word] >> (pos + 16 * e)) & ((1 << width) - 1)) << vb
    for i, (p, off) in enumerate(planes(bits) if fields is None else ()):  # (other widths: plane by plane)
        per_word = 16 // p
        pw = w[..., off:off + p]  # this plane's words [NB, KB, lane, p]
        j = torch.arange(PAIRS, device=dev)
        word_of = pw[..., j // per_word]  # [NB, KB, lane, 16]
        shift = slots(bits, i, dev) * p
        for e in range(2):
            frag[..., e] |= ((word_of >> (shift + 16 * e)) & ((1 << p) - 1)) << off
    row, col = (t.to(dev) for t in _fragment_index(dev.type))
    out = torch.zeros(nb, kb, 16 * 64, dtype=torch.int64, device=dev)
    out[:, :, (row * 64 + col).view(-1)] = frag.view(nb, kb, -1)
    return out.view(nb, kb, 16, 64).permute(0, 2, 1, 3).reshape(nb * 16, kb * 64)
