"""The mma.sync family's kernel model: what one compiled kernel is.

:class:`GemmParams` mirrors the kernel's parameter struct; a :class:`Recipe` holds every compile-time fact of a
kernel that does not depend on M (formats, scales, zero points, output, target, components) and a :class:`Tile`
its blocking for an M range; from them come the shared-memory and register budgets and the ``KernelSpec``
(:func:`kernel_spec`). The CUDA side is ``include/humming/kernels/gemm_mma_sync.cuh``. Planner heuristics live in
``gemm_mma_sync``, weight packing in ``mma_sync_pack``, launching in ``mma_sync_launch``.
"""
from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

from humming.errors import UnsupportedError

from . import layout


HEADER = "humming/kernels/gemm_mma_sync.cuh"
# The prepared weight is padded to these multiples, so that every tile the
# kernels use (BN <= 128 dividing 128, BK dividing Kp) reads in range: K to
# two 64-unit blocks (the lean decode loop takes blocks in pairs), 256 values
# for byte operands.
PAD_N, PAD_K = 128, 128


def padded_k(k: int, recipe: "Recipe | None" = None) -> int:
    """The prepared weight's K (values): a multiple of two 64-unit blocks."""
    step = PAD_K * (recipe.ku if recipe is not None else 1)
    return -(-k // step) * step


def padded_n(n: int) -> int:
    """The prepared weight's rows: a multiple of PAD_N (every tile's BN divides the rows it runs on)."""
    return -(-n // PAD_N) * PAD_N


ENTRY = "humming::gemm_mma_sync"
PARAMS = "humming::GemmParams"


class GemmParams(ctypes.Structure):
    """Mirror of ``humming::GemmParams`` (the kernel asserts the size)."""

    _fields_ = [
        ("x", ctypes.c_void_p),
        ("w", ctypes.c_void_p),
        ("sz", ctypes.c_void_p),
        ("chan", ctypes.c_void_p),
        ("act_scale", ctypes.c_void_p),
        ("bias", ctypes.c_void_p),
        ("y", ctypes.c_void_p),
        ("ws", ctypes.c_void_p),
        ("counters", ctypes.c_void_p),
        ("M", ctypes.c_int),
        ("N", ctypes.c_int),
        ("K", ctypes.c_int),
        ("Np", ctypes.c_int),
        ("Kp", ctypes.c_int),
        ("lda", ctypes.c_int),
        ("ldy", ctypes.c_int),
        ("groups", ctypes.c_int),
        ("k_steps_per_split", ctypes.c_int),
        ("out_mul", ctypes.c_float),
        ("trace", ctypes.c_void_p),  # HUMMING_TRACE builds: 16 words per CTA (scripts/gpu_trace.py)
        ("tma_rows", ctypes.c_int),
        ("early_w", ctypes.c_int),  # a programmatic launch: split warpgroup tiles copy early weights too
        ("tmap", ctypes.c_uint64 * 16),  # humming::TensorMap at byte 128 (alignas(64); the entry checks the size)
        # MoE launches (Cfg::MOE): the expert of each BM-row block, and each expert's stride in the stacked tensors
        ("expert_ids", ctypes.c_void_p),
        ("w_estride", ctypes.c_int64),   # u32 words
        ("sz_estride", ctypes.c_int64),  # bytes
        ("chan_estride", ctypes.c_int),  # floats
        ("bias_estride", ctypes.c_int),  # floats
        # XGATHER launches: each routed row's element offset in x (padding rows -1 - o: skipped, or row o
        # copied), or null
        ("x_rows", ctypes.c_void_p),
        ("experts", ctypes.c_int),  # MoE: E (a block's expert outside [0, E) returns at once)
        ("_align", ctypes.c_uint8 * 20),  # (the struct is a multiple of TensorMap's 64-byte alignment: 320 bytes)
    ]


TMAP_OFFSET = GemmParams.tmap.offset
_TMA_ROWS_OFFSET = GemmParams.tma_rows.offset  # (the launcher writes tma_rows .. the map's end in one copy)
_TMA_TAIL = GemmParams.expert_ids.offset - _TMA_ROWS_OFFSET


#: the token counts (wgmma N) of the warpgroup tiles: the widths whose wrappers gemm/wgmma.cuh holds
#: (scripts/gen_wgmma.py) and the kernel's run_wg accepts
WGMMA_BM = (8, 16, 32, 64, 128, 160, 192, 224, 256)


@dataclass(frozen=True)
class Tile:
    """CTA tile: BM tokens x BN weight rows x BK columns per stage; warps WM x WN x WK.

    ``stream`` selects the streaming scheduler (decode): one warp per 16 weight rows
    (BN = 16 WN, WM = 1, BM <= 16), WK warps along K each streaming a contiguous
    run of 64-column blocks, ``stages`` blocks of weights in flight per warp,
    BK = 64 WK (the unit of the K slices). ``stream=1`` (or True) keeps the ring
    of blocks in registers (``GemmMmaSync::run_stream``); ``stream=3`` and ``4``
    run the lean loop (``run_ring``: folds at compile-time places, one MMA chain)
    with the ring in shared memory (cp.async targets: each lane copies the words
    it reads) or in registers; their launches split K for about ``occupancy``
    CTAs per SM. (``stream=2``, an earlier shared-memory
    ring, was slower than both on the H200 and is gone.)
    """

    bm: int = 16
    bn: int = 64
    bk: int = 256
    wm: int = 1
    wn: int = 4
    wk: int = 1
    stages: int = 4
    l2_prefetch: int = 0  # 0, 64, 128 or 256: L2 prefetch size hint on the weight copies
    stream: int = 0
    occupancy: int = 1  # CTAs per SM promised to the register allocator (__launch_bounds__)
    wgmma: int = 0      # 1: warpgroup MMAs (sm_90a; GemmMmaSync::run_wg): BM tokens per m64 x BM x k16 MMA
    tma: int = 0        # 1 (wgmma tiles): stages filled by bulk copies (TMA) from one thread, on mbarriers
    chains: int = 1     # wgmma tiles: accumulator sets per warp (1, 2 or 4 independent chains of wgmmas)
    fold: int = 0       # wgmma tiles of 16-bit operands: 1 applies the group scales to each block's fp32
    #                     partial sums (GemmMmaSync::WG_FOLD) instead of multiplying the dequantized weights
    cluster: int = 1    # TMA tiles: CTAs per cluster (1, 2 or 4) along N, which share each stage's
    #                     activations (each loads its share of the rows and multicasts it to all)
    xwin: int = 0       # register rings on cp.async targets (stream=4): turns of activations each K run
    #                     keeps in shared memory (2 or more), refilled in place; 0 keeps its whole run, so
    #                     the activations of many tokens over a long K split the launch (see x_turns)
    kg: int = 1         # cp.async warpgroup tiles (not TMA, stream-K or clusters): groups of 32 WN threads along K in
    #                     one CTA (2-4), each with its own stages and an even share of the CTA's K steps, their
    #                     partial tiles summed in shared memory (GemmMmaSync::KG): the warps of ``kg`` CTAs of
    #                     a K split on one SM without the split's sum through the workspace
    sk: int = 0         # cp.async warpgroup tiles (not TMA): stream-K (GemmMmaSync::run_wg_sk): a launch of
    #                     one CTA per resident slot, each taking an equal run of the (tile, K step) space, a
    #                     tile cut between CTAs summed by its first CTA, which waits for the others' parts
    #                     (Launcher.stream_k_shape). The waits assume every CTA of the launch gets an SM:
    #                     not so where other kernels hold SMs for as long as they like (persistent
    #                     communication kernels beside it, a partitioned GPU); hence opt-in (stream_k_enabled)

    @property
    def threads(self) -> int:
        return 32 * self.wm * self.wn * self.wk * self.kg

    def check(self) -> None:
        if self.bm % (8 * self.wm) or self.bn % (16 * self.wn) or self.bk % 64 or (self.bk // 64) % self.wk:
            raise ValueError(f"Tile {self}: BM must be a multiple of 8*WM, BN of 16*WN, BK of 64 and "
                             f"BK/64 of WK")
        if self.stages < 2:
            raise ValueError(f"Tile {self}: at least 2 stages")
        if self.stream and (self.bn != 16 * self.wn or self.wm != 1 or self.bm not in (8, 16)
                            or self.bk != 64 * self.wk):
            raise ValueError(f"Tile {self}: a stream tile has BN = 16*WN, WM = 1, BM of 8 or 16 and BK = 64*WK")
        if self.stream not in (0, 1, 3, 4):
            raise ValueError(f"Tile {self}: stream must be 0 (prefill), 1, 3 or 4")
        if self.wgmma and (self.stream or self.wm != 1 or self.wk != 1 or self.wn % 4
                           or self.bn not in (16 * self.wn, 32 * self.wn)
                           or self.bm not in WGMMA_BM or self.stages < 3 or self.bk not in (128, 256)):
            raise ValueError(f"Tile {self}: a wgmma tile has WM = WK = 1, WN a multiple of 4 (warpgroups), "
                             f"BN = 16*WN or 32*WN (one or two 64-row wgmmas per warpgroup), BM of "
                             f"{', '.join(map(str, WGMMA_BM[:-1]))} or {WGMMA_BM[-1]}, BK = 128 or 256 and at "
                             f"least 3 stages")
        if self.tma and (not self.wgmma or self.stages > 8):
            raise ValueError(f"Tile {self}: TMA stages need a wgmma tile of at most 8 stages")
        if self.chains not in (1, 2, 4) or (self.chains > 1 and not self.wgmma):
            raise ValueError(f"Tile {self}: 1, 2 or 4 accumulator chains, more than one on wgmma tiles only")
        if self.fold not in (0, 1) or (self.fold and not self.wgmma):
            raise ValueError(f"Tile {self}: fold (group scales folded per block) is 0 or 1, on wgmma tiles only")
        if self.cluster not in (1, 2, 4) or (self.cluster > 1 and (not self.tma or self.bm % (8 * self.cluster))):
            raise ValueError(f"Tile {self}: clusters of 1, 2 or 4 CTAs, more than one on TMA tiles whose BM "
                             f"splits into a multiple of 8 rows per CTA")
        if self.sk not in (0, 1) or (self.sk and (not self.wgmma or self.tma or self.cluster != 1)):
            raise ValueError(f"Tile {self}: stream-K (sk=1) is for cp.async warpgroup tiles (wgmma=1, not TMA, "
                             f"no clusters)")
        if self.kg not in (1, 2, 3, 4) or (self.kg > 1 and (not self.wgmma or self.tma or self.sk or self.cluster != 1)):
            raise ValueError(f"Tile {self}: 1-4 groups along K (kg), more than one on cp.async warpgroup tiles only "
                             f"(no TMA, stream-K or clusters)")
        if self.xwin and (self.stream != 4 or self.xwin < 2):
            raise ValueError(f"Tile {self}: an activation window (xwin) holds 2 turns or more, on register rings "
                             f"(stream=4) only")

    def to_dict(self) -> dict:
        d = {"bm": self.bm, "bn": self.bn, "bk": self.bk, "wm": self.wm, "wn": self.wn, "wk": self.wk,
             "stages": self.stages}
        if self.l2_prefetch:
            d["l2_prefetch"] = self.l2_prefetch
        if self.stream:
            d["stream"] = int(self.stream)
        if self.occupancy != 1:
            d["occupancy"] = self.occupancy
        if self.wgmma:
            d["wgmma"] = int(self.wgmma)
        if self.tma:
            d["tma"] = int(self.tma)
        if self.chains != 1:
            d["chains"] = int(self.chains)
        if self.fold:
            d["fold"] = int(self.fold)
        if self.cluster != 1:
            d["cluster"] = int(self.cluster)
        if self.xwin:
            d["xwin"] = int(self.xwin)
        if self.sk:
            d["sk"] = int(self.sk)
        if self.kg != 1:
            d["kg"] = int(self.kg)
        return d


def op8_unit(op8: int) -> int:
    """K values per 16-bit kernel unit for MMA operands ``op8`` (see Recipe.op8)."""
    return 4 if op8 == 4 else 2 if op8 else 1


@dataclass(frozen=True)
class Recipe:
    """Compile-time facts of one prepared layer (independent of M)."""

    bits: int
    wfloat: bool
    fexp: int = 0
    fman: int = 0
    fbias: int = 0
    fcvt: bool = False       # native_cvt: e4m3 codes into fp16 by the chip's conversion (no re-bias factor)
    offset: int = 0          # subtracted from integer codes (two's complement -> offset binary)
    zp: int = 0              # 0 none, 1 integer, 2 float
    gscale: bool = True      # per-group scales in the main loop
    group: int = 128         # K extent of a scale group in kernel K units (a multiple of 16)
    bf16: bool = False       # compute (activation) type
    out_bf16: bool = False
    has_chan: bool = False
    act_scale: int = 0       # 0 none, 1 per token, 2 per tensor, 3 per token and group of agroup values (byte
                             # operands on warpgroup tiles: folded with each block's sums)
    has_bias: bool = False
    cp_async: bool = True
    k8mma: bool = False      # two m16n8k8 instead of m16n8k16 (Turing)
    target: str = "sm_80"
    defines: tuple = ()
    op8: int = 0             # MMA operands: 0 fp16/bf16; bytes (m16n8k32): 1 int8, 2 e4m3, 3 e5m2; 4 int4 (m16n8k64)
    agroup: int = 0          # act_scale 3: activation values per scale (a multiple of 128)
    moe: bool = False        # MoE GEMM: each BM-row block of the sorted rows against its expert (GemmParams.expert_ids);
                             # the experts' output multipliers travel as channel multipliers (has_chan)
    xgather: bool = False    # MoE GEMM of 16-bit activations reading each routed row from its token's row of x
                             # (GemmParams.x_rows, moe_route's XOFF): no gather kernel (humming.ops.moe)
    fp8_split: bool = False  # int4 codes (offset 8) made e4m3 operands two per register where the tile allows
                             # (DequantBytes' INT_FP8_MODE 2: fp8_split_mode), their words in order

    @property
    def ku(self) -> int:
        """K values per kernel K unit: the kernel counts K in 16-bit units (one value of a
        16-bit operand, two of a byte operand, four of an int4 one); K, Kp, lda, group and
        tiles' BK are in units."""
        return op8_unit(self.op8)

    @property
    def wpl(self) -> int:
        """32-bit words per lane of a 16-row x 64-unit weight block."""
        return self.bits * self.ku

    @property
    def magic(self) -> int:
        return 0x4300 if self.bf16 else 0x6400

    @property
    def via_fp32(self) -> bool:
        return (not self.wfloat) and self.bf16 and self.bits == 8

    @property
    def fields(self):
        """How the 16-bit operand's words hold the codes where they are fields, not planes (layout.fields_for:
        3-bit values; e2m1 codes re-biased into fp16 / bf16, their magnitude at bit 9 / 6), else None."""
        if self.op8:
            return None
        mshift = (7 if self.bf16 else 10) - self.fman
        return layout.fields_for(self.bits, self.wfloat and not self.fcvt, mshift)


def _gs_rows(group: int, bk: int) -> int:
    if group % bk == 0:
        return 1
    if bk % group == 0:
        return bk // group
    return bk // group + 2


#: Static shared memory of the kernel (the split-K "last CTA" flag, padded):
#: the dynamic part of a tile must leave room for it under the per-block limit.
STATIC_SMEM_BYTES = 16

#: Most dynamic shared memory a stream tile's activation slice may use; the
#: launcher splits K further rather than go above it. 63 KB, so that the kernel
#: (plus its few static bytes) loads on every target, Turing's 64 KB included.
STREAM_SMEM_CAP = 63 * 1024
#: The same for ring tiles (``stream=3``), whose rings and several CTAs per SM
#: share the SM's shared memory too.
RING_X_CAP = 32 * 1024
#: The same for register rings on cp.async targets (:func:`x_turns`), whose blocks may take 99 KB
#: or more (sm_80 and up): the launcher keeps each CTA within its share of the SM (``occupancy`` CTAs)
#: and this. The slice of a batch of 2-8 tokens then fits without splitting K past one wave (H200,
#: int4 g128, gpu_sweep.py r4, kernel alone, with 63 KB: 8192x8192 M=4 on DECODE_INT4_LONG_K 15.9 us at
#: two slices against 12.1 at one for M=3; M=8 on DECODE_INT4_WIDE 18.7 at three slices against 13.3
#: at two for M=6).
RING_XTURN_CAP = 96 * 1024


def x_turns(recipe: Recipe, tile: Tile) -> bool:
    """Whether a ring tile copies its activations turn by turn (GemmMmaSync::run_ring, XTURN: register
    rings on cp.async targets) into its K slice's place in shared memory."""
    return tile.stream == 4 and recipe.cp_async


def x_window_blocks(tile: Tile) -> int:
    """64-column blocks of each activation row a windowed ring (``xwin``) keeps in shared memory: its
    window of ``xwin`` turns for each of its WK K runs (0: no window, the slice's)."""
    return tile.wk * tile.xwin * tile.stages if tile.xwin else 0


def stream_x_cap(recipe: Recipe, tile: Tile) -> int:
    """The most dynamic shared memory a stream tile's activation slice may take (before the SM's
    share per CTA, which the launcher applies too)."""
    return RING_X_CAP if tile.stream == 3 else RING_XTURN_CAP if x_turns(recipe, tile) else STREAM_SMEM_CAP


def stream_red_bytes(tile: Tile) -> int:
    return tile.wk * tile.bm * (tile.bn + 4) * 4


def ring_slot_bytes(recipe: Recipe) -> int:
    """One slot of a warp's shared-memory ring (``stream=3``): the warp's weight words
    and, with group scales, per lane and entry the 4 (8 with zero points) bytes of its
    two rows (mirrors GemmMmaSync::RING_SLOT)."""
    nsc = 1 if recipe.group % 64 == 0 else 4
    return recipe.wpl * 128 + (32 * nsc * (8 if recipe.zp else 4) if recipe.gscale else 0)


def stream_ring_bytes(tile: Tile, recipe: Recipe) -> int:
    """The per-warp rings in shared memory (``stream=3``, on cp.async targets)."""
    if not (recipe.cp_async and tile.stream == 3):
        return 0
    return (tile.threads // 32) * tile.stages * ring_slot_bytes(recipe)


def ring_fold_period(recipe: Recipe) -> int:
    """Blocks of 64 columns per fold of a ``stream=3`` tile (mirrors GemmMmaSync::RING_FP):
    its K slices and every warp's run of blocks start on a multiple of it."""
    if not recipe.gscale:
        return 4
    if recipe.group % 64:
        return 1
    g64 = recipe.group // 64
    return 4 if g64 % 4 == 0 else 2 if g64 % 2 == 0 else 1


def ring_slice_step(recipe: Recipe, tile: Tile) -> int:
    """K steps (of BK = 64 WK columns) a ring tile's K slices are a multiple of: whole fold chunks."""
    fp = ring_fold_period(recipe)
    return fp // math.gcd(fp, tile.wk)


def stream_smem(tile: Tile, m: int, slice_blocks: int, recipe: Recipe) -> int:
    """Dynamic shared memory of one stream-tile launch: the activation slice of
    min(BM, M) rows or the WK partial tiles, whichever is larger, then the
    weight rings (mirrors GemmMmaSync::run_stream / run_ring)."""
    blocks = x_window_blocks(tile) or slice_blocks
    head = -(-max(min(tile.bm, m) * blocks * 128, stream_red_bytes(tile)) // 16) * 16
    return head + stream_ring_bytes(tile, recipe)


def _xs_rows(recipe: Recipe, tile: Tile) -> int:
    """Rows of activation group scales a stage holds (act_scale 3; mirrors GemmMmaSync::XS_ROWS): one per
    group its 128-value blocks lie in."""
    if recipe.act_scale != 3 or recipe.agroup < 128:  # (smaller groups: kernel_spec refuses the recipe)
        return 0
    kb, gpb = tile.bk // 64, recipe.agroup // 128
    return kb // gpb if kb % gpb == 0 else 1 if gpb % kb == 0 else kb


def smem_bytes(recipe: Recipe, tile: Tile) -> int:
    """Dynamic shared memory of the kernel (mirrors GemmMmaSync::SMEM_BYTES); for
    a stream tile the most a launch may use (each launch sets its own)."""
    if tile.stream:
        if tile.xwin:
            return stream_smem(tile, tile.bm, 0, recipe)
        return max(stream_x_cap(recipe, tile), -(-stream_red_bytes(tile) // 16) * 16) + stream_ring_bytes(tile, recipe)
    a = tile.bm * tile.bk * 2
    w = (tile.bn // 16) * (tile.bk // 64) * recipe.wpl * 128
    s = (_gs_rows(recipe.group, tile.bk) * tile.bn * (4 if recipe.zp else 2)) if recipe.gscale else 0
    s += _xs_rows(recipe, tile) * tile.bm * 4
    red = tile.bm * (tile.bn + 4) * 4
    if tile.wgmma:  # stages on 1024-byte boundaries, and 1 KB to align the first one (TMA: + the barriers)
        bars = (128 if tile.wn > 4 or tile.cluster > 1 else 64) if tile.tma else 0  # (full barriers; empty ones
        #                                                 with two warpgroups or more, or in a cluster)
        group = max(-(-(a + w + s) // 1024) * 1024 * tile.stages, red)
        return (tile.kg * -(-group // 1024) * 1024 if tile.kg > 1 else group) + 1024 + bars
    return max((a + w + s) * tile.stages, red)


def raw_codes(recipe: Recipe) -> bool:
    """Whether stream tiles feed the integer codes to the MMA raw (mirrors ``Dequant::RAW_OK``:
    integers not through fp32, no float zero points, not 1 or 2 bits). 3-, 4- and 8-bit fields sit at an
    offset that depends only on the row half of a pair (3-bit: 0 / 3, layout v4), 5-7-bit ones are
    gathered to bit 0; 1- and 2-bit codes are dequantized in place (cheaper than the correction MMAs), except
    in a ring's one-token loop, whose correction (one MMA of the constant operand per 128 columns) makes them raw
    too (``RAW_ONE``: a magic number per fragment register, ``Dequant::FIELD_MAGIC``)."""
    return not (recipe.op8 or recipe.wfloat or recipe.via_fp32 or recipe.zp == 2 or recipe.bits in (1, 2))


def lean_stream(recipe: Recipe) -> bool:
    """Whether a stream tile's kernel for ``recipe`` is the lean variant (raw integer codes, no zero
    points, at most one scale entry per block), whose registers min_blocks can budget."""
    return raw_codes(recipe) and not recipe.zp and (not recipe.gscale or recipe.group % 64 == 0)


def stream_work_regs(recipe: Recipe, tile: Tile) -> int | None:
    """The working registers (besides the ring) that a stream tile's kernel for ``recipe`` needs
    per thread, where min_blocks may budget them; None where it may not (no floor). The lean
    variants (raw integer codes, no zero points, at most one scale entry per block): about 48
    (one token per warp) or 72, 8 more for codes gathered from planes. 2-bit codes in fp16
    dequantized on register rings (stream 4) of at most 8 tokens per warp, without zero points,
    per channel or in groups of whole pairs of 64-column blocks: about 52 (measured: at the
    64-register floor of two 512-thread CTAs, a ring of 4 x 3 words, they spill nothing; groups
    of 64 (a fold per block), bf16 codes of 1 and 2 bits, and the shared-memory rings (stream 3)
    of 2-bit codes spill 8-16 bytes there).
    Zero points and the other variants keep whatever registers they need: a floor that forces
    ptxas below their working set spills (the compile tests check that no planned variant does)."""
    if not tile.stream:
        return None
    if lean_stream(recipe):
        work = (48 if tile.bm <= 8 else 72) if tile.stream >= 3 else 56
        if recipe.bits not in (1, 2, 4, 8):  # (gathered from planes: more live words; int7 per channel
            work += 8                        # spilled 8-16 bytes at the 85-register floor of three CTAs)
        if recipe.bits == 3 and tile.stream == 1:  # (3-bit codes on the register-streaming tiles: at the 85-register
            # floor of three CTAs sm_80 and sm_89 spilled 16-24 bytes in the loop (sm_90a did not). Two CTAs per SM
            # were as fast or faster on the H200 for the tiles the planner takes there (gpu_sweep.py i3occ, int3
            # g128, kernel alone, us, three -> two CTAs: M=1 4096x4096 16 rows 7.78 -> 7.71, 8192x4096 32 rows
            # 10.04 -> 9.38, 14336x4096 64 rows 15.26 -> 14.10; M=8 16 rows 16.11 -> 17.44, 64 rows 12.91 ->
            # 12.12 and 22.94 -> 22.49))
            work += 8
        if recipe.bits == 8 and not recipe.cp_async and tile.stream == 1:  # (Turing's int8 in groups of 64 at three
            # register slots (four_slots_spill): at the 80-register floor of three 256-thread CTAs 8-16 bytes of stack
            # with three to five local accesses in the loop; at two, 128 registers and none (seventy-ninth session)
            work += 8
        return work
    if (tile.stream == 4 and tile.bm <= 8 and recipe.bits == 2 and not recipe.bf16 and not recipe.wfloat
            and not recipe.zp and not recipe.via_fp32 and not recipe.op8 and (not recipe.gscale or recipe.group % 128 == 0)):
        return 52
    return None


def min_blocks(recipe: Recipe, tile: Tile) -> int:
    """The occupancy floor given to ``__launch_bounds__``: the tile's ``occupancy``, lowered until
    a ring of ``stages`` blocks plus the variant's working registers (stream_work_regs) fit; 1 (no
    floor) for stream variants whose working set is not budgeted."""
    occ = max(1, tile.occupancy)
    if tile.stream:
        work = stream_work_regs(recipe, tile)
        if work is None:
            return 1
        ring = tile.stages * (recipe.wpl + (1 if recipe.gscale else 0)) if tile.stream in (1, 4) else 0
        while occ > 1 and 65536 // (tile.threads * occ) < work + ring:
            occ -= 1
    return occ


def ctas_by_registers(regs: int, threads: int) -> int:
    """CTAs of ``threads`` threads that an SM's 65536 registers hold at ``regs`` per thread (allocated in
    steps of 8)."""
    return 65536 // (-(-int(regs) // 8) * 8 * threads)


def resident_ctas(recipe: Recipe, tile: Tile, regs: int | None = None) -> int:
    """The CTAs per SM a ring tile's launch splits K for: its ``occupancy``, or fewer where that
    many do not fit the SM's 65536 registers with ``regs`` per thread (the compiled kernel's, in
    the allocation's steps of 8), or, with ``regs`` unknown, where the kernel's floor (min_blocks)
    had to drop. A launch split for more CTAs than fit runs in more than one wave: 16 warps of
    128 registers, split for two per SM, ran 1.7 waves on the H200."""
    occ = max(1, tile.occupancy)
    if regs:
        return max(1, min(occ, ctas_by_registers(regs, tile.threads)))
    return min(occ, min_blocks(recipe, tile)) if stream_work_regs(recipe, tile) is not None else occ


def scale_acc(recipe: Recipe, tile: Tile) -> bool:
    """Whether the kernel applies the group scales to fp32 partial sums (GemmMmaSync::SCALE_ACC) rather
    than to the dequantized weights: byte operands always; 16-bit ones on the decode and small-M mma.sync
    tiles (at most 16 tokens per warp) and on warpgroup tiles that fold them (Tile.fold)."""
    return bool(recipe.gscale) and (recipe.op8 != 0 or bool(tile.fold) or (not tile.wgmma and (tile.bm // tile.wm) <= 16))


def tma_box_rows(tile: Tile, m: int) -> int:
    """Rows of the activation box one CTA of a TMA tile loads per 64-column block for ``m`` tokens:
    min(BM, M), no rows past M (see GemmMmaSync::tma_stage); in a cluster its share of them, rounded up to
    whole 8-row swizzle atoms (1024 bytes: each CTA's rows start on an atom; rows past M arrive as zeros)."""
    rows = min(tile.bm, m)
    if tile.cluster > 1:
        rows = -(-rows // (8 * tile.cluster)) * 8
    return rows


#: the most tokens of a warpgroup tile that takes a split layer's codes as two e4m3 operands per register
#: (INT_FP8_MODE 2: twice the A fragments and the wgmmas); larger tiles convert them by F2FP (mode 1). (H100,
#: int4 g128 x e4m3 through the bench, gpu_run.sh s56c / s56d, split / F2FP, us: M = 1 / 8 / 16 17.3 / 17.5 /
#: 17.3-17.7 against 17.9-18.2 / 18.1-18.2 / 17.5-17.7 on 8192x8192, 52.6-54.1 / 47.9 / 53.7-55.1 against
#: 54.1-55.2 / 50.4-50.6 / 57.7-58.7 on 28672x8192, 10.3 / 10.4 / 11.4 against 10.8-10.9 / 10.8 / 11.6-11.7 on
#: 4096x4096; the 32-token tile lost on 28672x8192, 55.3-56.4 against 48.8-49.1, the 64-token one 1-4 %)
FP8_SPLIT_MAX_BM = 16


def fp8_split_mode(tile: Tile) -> int:
    """The INT_FP8_MODE of a tile of a ``fp8_split`` layer (words in order): 2, two e4m3 operands per register
    and two wgmmas per k32 step, on warpgroup tiles of at most FP8_SPLIT_MAX_BM tokens; 1, a PRMT per word and
    the F2FP conversion (mode 0's), on the others."""
    return 2 if tile.wgmma and tile.bm <= FP8_SPLIT_MAX_BM else 1


def kernel_spec(recipe: Recipe, tile: Tile):
    from humming.jit import KernelSpec

    tile.check()
    if tile.wgmma and (not recipe.target.startswith("sm_90a") or not recipe.cp_async or not wgmma_operands(recipe)):
        raise UnsupportedError(f"wgmma tile {tile.to_dict()} cannot run this layer's kernel",
                               [f"warpgroup MMAs need the sm_90a target, cp.async and 16-bit, int8 or fp8 "
                                f"operands (byte operands: scale groups of whole 64-unit blocks); the kernel is "
                                f"for {recipe.target} with {OP8_NAMES[recipe.op8]} operands"
                                + (f", groups of {recipe.group} units" if recipe.op8 and recipe.gscale else "")])
    if recipe.act_scale == 3 and not (tile.wgmma and wg_fold(recipe) and not half_block_groups(recipe)
                                      and recipe.agroup % 128 == 0):
        raise UnsupportedError(f"tile {tile.to_dict()} cannot run this layer's kernel",
                               [f"activation scales per group of {recipe.agroup} values are folded with each block's "
                                f"sums of byte operands on warpgroup tiles (fp8 operands, or int8 ones with group "
                                f"scales, of whole 128-value blocks; groups a multiple of 128)"])
    if tile.xwin and not x_turns(recipe, tile):
        raise UnsupportedError(f"ring tile {tile.to_dict()} cannot run this layer's kernel",
                               [f"an activation window (xwin) needs cp.async copies; the kernel is for {recipe.target} "
                                f"without them"])
    if tile.fold and not can_fold(recipe):
        raise UnsupportedError(f"wgmma tile {tile.to_dict()} cannot run this layer's kernel",
                               ["folding group scales per block needs 16-bit operands and scale groups of whole "
                                "64-column blocks; the layer has "
                                + (f"groups of {recipe.group} units" if recipe.gscale else "no group scales")
                                + f" on {OP8_NAMES[recipe.op8]} operands"])
    cfg = {
        "BM": tile.bm, "BN": tile.bn, "BK": tile.bk, "WM": tile.wm, "WN": tile.wn, "WK": tile.wk,
        "STAGES": tile.stages, "L2_PREFETCH": tile.l2_prefetch, "BITS": recipe.bits, "WFLOAT": recipe.wfloat, "FEXP": recipe.fexp,
        "FMAN": recipe.fman, "FCVT": recipe.fcvt, "OFFSET": recipe.offset, "ZP": recipe.zp, "GSCALE": recipe.gscale,
        "GROUP": recipe.group if recipe.gscale else 64,
        "GS_ROWS": _gs_rows(recipe.group, tile.bk) if recipe.gscale else 0,
        "SCALE_ACC": scale_acc(recipe, tile),
        "STREAM": int(tile.stream), "WG": int(tile.wgmma), "TMA": int(tile.tma), "CHAINS": int(tile.chains),
        "CLUSTER": int(tile.cluster), "XWIN": int(tile.xwin), "SK": int(tile.sk),
        **({"KG": tile.kg} if tile.kg > 1 else {}),
        "BF16": recipe.bf16, "OUT_BF16": recipe.out_bf16, "HAS_CHAN": recipe.has_chan,
        "ACT_SCALE": recipe.act_scale, "HAS_BIAS": recipe.has_bias, "CP_ASYNC": recipe.cp_async,
        "K8MMA": recipe.k8mma, "OP8": recipe.op8,
    }
    if recipe.act_scale == 3:
        cfg["AGROUP"] = recipe.agroup
    if recipe.fp8_split:
        cfg["INT_FP8_MODE"] = fp8_split_mode(tile)
    if recipe.moe:
        if tile.tma or tile.sk or tile.cluster != 1 or tile.kg != 1:
            raise UnsupportedError(f"tile {tile.to_dict()} cannot run an MoE kernel",
                                   ["MoE tiles load their stages by cp.async, one CTA per tile (no TMA, stream-K, "
                                    "clusters or groups along K: each BM-row block picks its expert's weights; groups "
                                    "along K not tested there)"])
        cfg["MOE"] = 1
    if recipe.xgather:
        if not recipe.moe or recipe.op8 or recipe.act_scale:
            raise UnsupportedError("only MoE kernels of 16-bit activations read routed rows from their tokens' rows",
                                   [f"recipe {recipe}"])
        cfg["XGATHER"] = 1
    return KernelSpec(family="gemm_mma_sync", header=HEADER, entry=ENTRY, params=PARAMS, config=cfg,
                      target=recipe.target, threads=tile.threads, smem_bytes=smem_bytes(recipe, tile),
                      # an explicit occupancy floor: without it ptxas may cap registers low
                      # and spill (seen: 168 registers + 8 bytes of stack on sm_80)
                      min_blocks=min_blocks(recipe, tile),
                      defines=recipe.defines, params_size=ctypes.sizeof(GemmParams), cluster=tile.cluster)


#: Recipe.op8 -> the MMA operand type
OP8_NAMES = {0: "16-bit", 1: "int8", 2: "e4m3", 3: "e5m2", 4: "int4"}


def wgmma_operands(recipe: "Recipe") -> bool:
    """Whether the warpgroup scheduler multiplies this recipe's operands: 16-bit, int8 or fp8 (no int4
    wgmma, no Turing k8 form), byte operands' group scales over whole halves of 64-unit blocks (64 values:
    GemmMmaSync::GSUB)."""
    return not recipe.k8mma and recipe.op8 != 4 and not (recipe.op8 and recipe.gscale and recipe.group % 32)


#: K units an int8 warpgroup tile without group scales sums in int32 per K slice (65536 values:
#: |sum| < 2^30); the launch splits K further where a slice would be longer (GemmMmaSync::WG_FOLD)
WG_INT_SLICE = 1 << 15


def can_fold(recipe: "Recipe") -> bool:
    """Whether a 16-bit warpgroup tile can fold this layer's group scales per block (Tile.fold): group
    scales over whole 64-column blocks."""
    return not recipe.op8 and bool(recipe.gscale) and recipe.group % 64 == 0


def wg_fold(recipe: "Recipe") -> bool:
    """Whether a byte-operand warpgroup kernel folds each block's partial sums into fp32 accumulators
    (GemmMmaSync::WG_FOLD): group scales or zero points, and fp8 always (its wgmma accumulators keep
    fewer bits than fp32)."""
    return bool(recipe.op8) and (recipe.gscale or recipe.op8 in (2, 3))


def half_block_groups(recipe: "Recipe") -> bool:
    """Byte operands with group scales over halves of 64-unit blocks (groups of 64 values, or odd multiples of
    64: GemmMmaSync::GSUB = 2), whose warpgroup tiles fold two partial sets per block: one more int32
    accumulator per token and row, so 255 registers on 128-token tiles, which byte_wgmma_tile gives TMA stages.
    With cp.async stages they spill 96-176 bytes and run no faster than mma.sync; with TMA stages they spill 48
    and run 1.3-1.4x faster (H200, W4A8 uint4 g64 int zero points, gpu_sweep.py bg64, kernel alone, us,
    M = 256 / 1024: 8192x8192 65.8 / 258 against 93.3 / 362 with cp.async, 72.4 / 283 for WG_64 and 90.6 / 356
    for mma.sync's BYTE_TILE_LARGE, the tile these layers ran before; 14336x4096 71.7 / 246 against 94.1 / 325,
    80.0 / 273 and 96.8 / 332; 28672x8192 253 / 878 against 357 / 1237, 246 / 964 and 352 / 1211)."""
    return bool(recipe.op8) and bool(recipe.gscale) and recipe.group % 64 != 0
