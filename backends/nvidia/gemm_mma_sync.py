"""The mma.sync GEMM family: its planner heuristics and entry points, and its whole surface as one module.

The family is four modules (``backends/nvidia``): ``mma_sync_kernel`` (what a kernel is: parameters, Recipe,
Tile, budgets, KernelSpec), ``mma_sync_pack`` (weights into the kernel layout), ``mma_sync_launch`` (the
Launcher) and this one: the tiles per M range a layer gets (:func:`tuning` and the rules it calls), what the
family refuses (:func:`check_layer`), a measured tuning's checks and candidates, and the entry points the plan
calls (:func:`prepare`, :func:`spec_for_plan`). Every public name of the other three is importable from here.
The CUDA side is ``include/humming/kernels/gemm_mma_sync.cuh``.
"""
from __future__ import annotations

import os
from dataclasses import replace

from humming.errors import UnsupportedError

from .mma_sync_kernel import (can_fold, ctas_by_registers, ENTRY, GemmParams, half_block_groups, HEADER,
    FP8_SPLIT_MAX_BM, fp8_split_mode, kernel_spec, lean_stream, min_blocks, OP8_NAMES, op8_unit, PAD_K, PAD_N,
    padded_k, padded_n, PARAMS,
    raw_codes, Recipe, resident_ctas, ring_fold_period, ring_slice_step, ring_slot_bytes, RING_X_CAP,
    RING_XTURN_CAP, scale_acc, smem_bytes, STATIC_SMEM_BYTES, stream_red_bytes, stream_ring_bytes,
    stream_smem, STREAM_SMEM_CAP, stream_work_regs, stream_x_cap, Tile, tma_box_rows, TMAP_OFFSET, wg_fold,
    WG_INT_SLICE, wgmma_operands, x_turns, x_window_blocks)
from .mma_sync_pack import (byte_flip, byte_operand_limits, code_offset, CVT_DEQUANT, cvt_dequant, fp8_pairs,
    fp8_split_enabled, fp8_split_limits, group_columns,
    group_padding_note, int_fp8, int_fp8_limits, kernel_group, kernel_layer, _op8, OP8_OF, pack_moe_weight,
    pack_weight, PackedWeight, recipe_for)
from .mma_sync_launch import (CLUSTER_MAX_CTAS_PER_SM, cluster_fit_enabled, cluster_max_ctas_per_sm, Launcher,
                              ring_wave_slices)

# (what this module re-exports: the public names of the three above; its own follow)
__all__ = ["byte_flip", "byte_operand_limits", "can_fold", "code_offset", "CLUSTER_MAX_CTAS_PER_SM", "cluster_fit_enabled",
    "cluster_max_ctas_per_sm", "ctas_by_registers", "CVT_DEQUANT", "cvt_dequant", "ENTRY", "FP8_SPLIT_MAX_BM",
    "fp8_pairs", "fp8_split_enabled", "fp8_split_limits", "fp8_split_mode", "GemmParams",
    "group_columns", "group_padding_note", "half_block_groups", "int_fp8", "int_fp8_limits",
    "HEADER", "kernel_group", "kernel_layer", "kernel_spec", "Launcher", "lean_stream",
    "min_blocks", "OP8_NAMES", "OP8_OF", "op8_unit", "pack_moe_weight", "pack_weight", "PackedWeight", "PAD_K",
    "PAD_N", "padded_k", "padded_n", "PARAMS", "raw_codes", "Recipe", "recipe_for", "resident_ctas",
    "ring_fold_period", "ring_slice_step", "ring_slot_bytes", "ring_wave_slices", "RING_X_CAP", "RING_XTURN_CAP",
    "scale_acc",
    "smem_bytes", "STATIC_SMEM_BYTES", "stream_red_bytes", "stream_ring_bytes", "stream_smem", "STREAM_SMEM_CAP",
    "stream_work_regs", "stream_x_cap", "Tile", "tma_box_rows", "TMAP_OFFSET", "wg_fold", "WG_INT_SLICE",
    "wgmma_operands", "x_turns", "x_window_blocks"]


def scale_places(layer, caps, compute, tuning, scales: dict) -> dict:
    """The plan's ``scales`` entry for group or block scales of a 16-bit layer, per M range of
    ``tuning``: where the range's kernel applies them (``partial_accumulators`` where scale_acc holds,
    ``dequantized_weights`` elsewhere), e.g. ``"partial_accumulators (M 1-32), dequantized_weights (M >=
    33)"``. Nothing where the generic answer stands (other places, or tiles the tuning does not name)."""
    key = next((k for k in ("weight_group", "weight_block") if scales.get(k) == "dequantized_weights"), None)
    if key is None or not compute.is_16bit:
        return {}
    recipe = _sizing_recipe(kernel_layer(layer, compute), compute)
    runs: list[list] = []  # [place, lo, hi]
    for r in tuning:
        tile = tile_from_config(r.config)
        if tile is None:
            return {}
        place = "partial_accumulators" if scale_acc(recipe, tile) else "dequantized_weights"
        if runs and runs[-1][0] == place:
            runs[-1][2] = r.hi
        else:
            runs.append([place, r.lo, r.hi])
    if len(runs) == 1:
        return {key: runs[0][0]}
    return {key: ", ".join(f"{p} (M {lo}-{hi})" if hi is not None else f"{p} (M >= {lo})" for p, lo, hi in runs)}


# ---------------------------------------------------------------------------
# tuning and the family entry points (called through the plan)
# ---------------------------------------------------------------------------


#: Tiles per M range. Small M streams weights (wide BK, deep pipeline; split-K
#: fills the GPU at launch); larger M reuses each dequantized weight tile across
#: more tokens. ``fit_tile`` adapts them to the layer and the device.
#: (Chosen from sweeps on the H200 with scripts/gpu_tiles.py, int4 g128: the
#: streaming tile for decode over the five issue-6 shapes, the others over
#: 6144x4096 and 8192x8192. ``shape_stream_tile`` re-splits the decode tile's
#: warps per layer when K is short.)
TILE_16 = Tile(16, 128, 256, 1, 4, 2, 3)
TILE_32 = Tile(32, 128, 128, 1, 4, 1, 4)
TILE_64 = Tile(64, 128, 128, 1, 4, 1, 4)
#: 33-64 tokens on a layer of fewer 128-row blocks than SMs: K split over two warps
#: of each weight-row warp as well (H200, int4 g128, M=64, 8192x8192: 62.0 -> 53.3 us)
TILE_32_WK2 = Tile(32, 128, 128, 1, 4, 2, 4)
#: 129-512 tokens on a layer of 4097-8192 rows: 256 rows per CTA, 8 warps
#: (H200, int4 g128, M=256, 8192x8192: 126 -> 116 us; 28672x8192 loses: 398 -> 473)
TILE_64_WIDE = Tile(64, 256, 128, 1, 8, 1, 3)
#: decode of 4-bit integer codes over a long K (> 4096) on layers of fewer 64-row blocks
#: than SMs: the lean register ring (run_ring, stream=4) with 4 blocks in flight per warp
#: (H200, int4 g128, M=1, gpu_sweep.py: 4096x14336 15.4 -> 14.4 us, 8192x8192 15.8 -> 15.1
#: with 8 blocks, then 13.9 and 13.9 with the unchecked steady-state turns. Once the
#: activations came turn by turn (XTURN; scripts/gpu_trace.py, graph replay with PDL),
#: 4 blocks per turn: 4096x14336 12.9 -> 11.3 us, 8192x8192 12.3 -> 11.5)
DECODE_INT4_LONG_K = Tile(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2)
#: ... and over a short K (<= 4096) on cp.async targets: the lean register ring, 8 warps
#: along K, split between N and K per layer by shape_stream_tile (H200, M=1, traced with
#: PDL after XTURN: 4096x4096 7.17 us with the shared-memory ring of 16 warps this tile
#: replaced, 4.61 with it). Four register slots: eight spilled in their loops at 128 registers
#: (255 for groups of 16 and 32) on sm_80, sm_89 and sm_90a, and four were as fast or faster
#: kernel alone (H200, gpu_sweep.py i4ch, M=1, us, eight -> four slots: int4 g128 4096x4096 5.43
#: -> 5.38, 8192x4096 7.71 -> 7.15; g64 6.31 -> 5.38, 9.99 -> 7.75; per channel 6.11 -> 5.48,
#: 7.63 -> 7.40). short_k_ring below: groups of 16 and 32 on twice the rows of shape_stream_tile's
#: pick, eight slots where they do not spill and were faster.
DECODE_INT4_SHORT_K = Tile(8, 16, 512, 1, 1, 8, 4, stream=4, occupancy=2)
#: the shared-memory ring of 16 warps the short-K int4 decode took before (kept for int4 codes on
#: the int8 MMA over K <= 4096 values, whose activations are int8 codes: not measured against it)
BYTE_DECODE_INT4_SHORT_K = Tile(8, 16, 1024, 1, 1, 16, 8, stream=3, occupancy=2)
#: ... and on layers of at least one 64-row block per SM, any K: the lean register ring,
#: 64 rows per CTA (H200, gpu_sweep.py, after the unchecked steady-state turns: 28672x8192
#: 42.3 us (register streaming) -> 39.6, 14336x4096 15.7 (shared ring) -> 13.1), K over two
#: warps: two CTAs of 8 warps fit an SM's registers (16 warps of 128 registers, the tile this
#: replaced, fit once: its launches split for two per SM ran 1.7 waves; H200, M=1, traced with
#: PDL: 14336x4096 12.9 -> 10.2 us)
DECODE_INT4_WIDE = Tile(8, 64, 128, 1, 4, 2, 4, stream=4, occupancy=2)
#: MoE decode of 4-bit integer codes, layers of at least MOE_MANY_EXPERTS experts (1-8 rows per expert; chips with
#: cp.async, moe_decode_rings):
#: DECODE_INT4_WIDE's ring, 64 rows per CTA. The heuristics' dense ring is shaped for one expert's rows, but a
#: decode call touches tens of experts (Qwen3-30B-A3B, 128 top-8: 8 at one token, 29 at 4, 83 at 16, 125 at 64),
#: so its CTAs are many and each stages activations as it reads weights. H100, int4 g128 fp16, the whole call
#: (route, GEMM, combine), graph replay, us, M = 1 / 4 / 16 / 64 tokens (scripts/gpu_moe_tiles.py, fifty-first
#: session): gate/up 1536x2048, 8x32 BK 256 (DECODE_INT4_LONG_K, the plan before) 19.4 / 39.1 / 89.2 / 130.6,
#: this 16.9 / 33.2 / 74.1 / 106.2; down 2048x768, 15.5 / 33.6 / 80.9 / 119.2 before, this 12.8 / 25.9 / 56.6 /
#: 81.8 (a range cannot tell one token from 64: both give each expert 2-8 rows; this is faster at every M). An
#: 8x128 ring with one warp along K (MOE_ROUTED_INT4 below) was faster still from 4 tokens (gate/up 18.8 / 34.3 /
#: 66.7 / 96.5, down 15.3 / 22.9 / 45.4 / 65.2). Since direct routing (humming.ops.moe: calls of at most E / 4
#: pairs, one pair per block) runs the one-row range's tile, this ring serves those calls (fifty-second session,
#: H100, direct: gate/up M = 1 / 4 13.9 / 30.8 us against the 8 x 128 ring's 19.9 / 31.5; down 11.1 / 24.2
#: against 13.3 / 18.9): its 64-row CTAs fill the SMs where a token's eight blocks give 128-row CTAs too few.
MOE_DECODE_INT4 = DECODE_INT4_WIDE
#: ... and the calls routed by kernel (more pairs, 2-8 rows per expert): 128 rows per CTA, one warp along K, BK 64
#: (fifty-second session, H100, checked against the reference with gpu_moe_tiles.py --check: worst 4.4e-4 of the
#: largest value; gate/up M = 16 / 64 68.0 / 97.9 us against 74.2 / 106.9, down 45.3 / 66.0 against 58.7 / 83.6)
MOE_ROUTED_INT4 = Tile(8, 128, 64, 1, 8, 1, 4, stream=4, occupancy=2)
MOE_MANY_EXPERTS = 32
#: The two rings serve every chip with cp.async (sm_80 on), whose rings are the same mma.sync code. Ampere, Ada and
#: Blackwell planned their dense heuristics' 8 x 16 short-K ring for these layers before. Measured on the H200 with
#: the A100's plan compiled for it and launched as an A100 launches it (108 SMs' grids, plain launches;
#: scripts/gpu_moe_tiles.py --as a100, fifty-third session), Qwen3-30B-A3B, the whole call, us, M = 1 / 4 / 16 / 64:
#: gate/up 8 x 16 ring 21.6 / 58.3 / 145 / 228, 8 x 64 15.1 / 29.0 / 67.5 / 97.9, 8 x 128 15.3 / 29.8 / 59.9 / 86.0;
#: down 21.0 / 62.8 / 162 / 260, 10.9 / 23.7 / 55.0 / 81.1, 12.6 / 19.0 / 42.5 / 60.5 (L40S's and B200's plans the
#: same within noise). Turing keeps its rings (no cp.async; not measured).


def moe_decode_rings(layer, recipe: Recipe, caps) -> bool:
    """Whether an MoE layer's decode ranges take MOE_DECODE_INT4 (one row per block: direct routing's calls) and
    MOE_ROUTED_INT4 (2-8 rows): 4-bit integer codes fed raw on 16-bit operands, at least MOE_MANY_EXPERTS experts
    (a decode call touches tens of them), a chip with cp.async."""
    return (layer.is_moe and layer.num_experts >= MOE_MANY_EXPERTS and recipe.bits == 4 and raw_codes(recipe)
            and not recipe.op8 and bool(caps.has("cp_async")))


#: decode of the other formats (one scale entry per block) over a long K on up to 16384
#: rows: the lean register ring, 8 warps along K (H200, gpu_sweep.py, 8192x8192 M=1 against
#: register streaming: int3 g128 0.87x the time, e4m3 per channel 0.95x, int2 g128 0.97x,
#: int8 per channel 1.0x)
DECODE_LONG_K = Tile(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2)
#: ... and for 2-bit codes (dequantized on the ring: not raw), 8 warps of four along K, two CTAs
#: per SM with no register floor needed (H200, gpu_sweep.py dec2b, int2 g128 M=1 kernel alone:
#: 8192x8192 10.04 -> 9.70 us, 4096x14336 10.04 -> 9.55; before this session's register floor
#: for DECODE_LONG_K, 16 warps of 107 registers ran one CTA per SM in two waves: 11.1 us)
DECODE_INT2_LONG_K = Tile(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2)
#: ... and over a short K (at most 4096 columns), on cp.async targets: register rings where the register-
#: streaming tiles ran before (stream=1; since the one-token loop takes 2-bit codes raw), picked by rows as
#: the 3-bit rings are (ring2_short_tile): the wide ring where the layer has a 64-row block per SM, else the
#: long-K ring of 32 rows where its CTAs fill three quarters of two per SM, else DECODE_INT3's 32-row ring of
#: 16 warps, one CTA per SM (H200, gpu_sweep.py i2short, M=1, kernel alone, us, the register-streaming tile
#: in brackets: int2 g128 4096x4096 4.27 (6.69), 8192x4096 5.87 (8.70), 14336x4096 9.12 (11.94); int2 per
#: channel 4.34 (6.90), 6.03 (8.51), 9.39 (10.90))
#: ... and for 3-bit raw codes (then with a k-half factor, v3's Dequant::RAW_KH; 128 registers: one CTA of 16
#: warps per SM) on layers of at most 8192 rows, any K: 32 rows per CTA where N / 32 CTAs fit one
#: wave, else 64 (H200, gpu_sweep.py dec3k, int3 g128 M=1 kernel alone, us: 4096x4096 5.91 (the
#: 64-row ring 7.05, the warpgroup tile 8.09), 4096x14336 13.10 (14.96, 17.30), 8192x8192 16.41
#: (15.66, 16.90); 14336x4096 keeps the warpgroup tile: 16.40 against 17.04 for the 64-row ring)
#: Up to RING3_TOKENS tokens run these rings too (dec3k, M = 2 / 4, us, the warpgroup tile in brackets:
#: 8192x8192 on the 64-row ring 15.98 / 16.25 (16.97 / 17.04); 4096x14336 on the 32-row ring at M=2 13.28,
#: on the 64-row one 15.23 / 15.57 (17.30 / 17.41); the 32-row ring at M=4 19.77: its 4 rows of 14336
#: columns pass the activation cap, K splits two ways, two waves). ring3_tile picks by that split.
#: Wider layers take one token on rings of 128 or 224 rows (wide3, M=1, us: 14336x4096 14.34 on 128 rows,
#: one wave of 112 CTAs, against 16.29 for the warpgroup tile and 17.05 for the 64-row ring; 28672x8192 45.18
#: on 224 rows, 128 CTAs, against 48.09 on 128 rows and 49.88 for the warpgroup tile). After layout v3
#: (3-bit blocks read once from L2) 2-4 tokens take these rings there too, where one fills the wave at
#: RING3_TOKENS tokens (gpu_sweep.py dec3k / wide3, M = 2 / 4, kernel alone, us: 14336x4096 on 128 rows
#: 12.60 / 12.67 against 15.25 / 15.40 for the warpgroup tile; 28672x8192 on 224 rows 42.15 / 42.39
#: against 44.34 / 44.31).
DECODE_INT3 = Tile(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=1)
DECODE_INT3_WIDE = Tile(8, 64, 256, 1, 4, 4, 4, stream=4, occupancy=1)
DECODE_INT3_128 = Tile(8, 128, 128, 1, 8, 2, 4, stream=4, occupancy=1)
DECODE_INT3_224 = Tile(8, 224, 64, 1, 14, 1, 4, stream=4, occupancy=1)
#: After layout v4 (one LOP3 per 3-bit pair) the 112-row ring (7 warps along N, 2 along K) leads on the wide
#: layers, in two full waves too (gpu_sweep.py dec3v4 / wide3v4, kernel alone, M = 1 / 2, us: 28672x8192 37.08
#: / 37.49, 256 CTAs, against 39.62 / 40.80 on 224 rows and 39.11 / 38.33 on 128; 14336x4096 11.29 / 11.31, one
#: wave of 128 CTAs, against 11.43 / 11.55 on 128 rows): ring3_tile takes it first on layers of more than
#: RING3_FEW_MAX_N rows whose CTAs fill their last wave to three quarters, in at most two waves.
DECODE_INT3_112 = Tile(8, 112, 128, 1, 7, 2, 4, stream=4, occupancy=1)
RING3_MAX_N = 28672      # one token
RING3_FEW_MAX_N = 8192   # 2 to RING3_TOKENS tokens
RING3_TOKENS = 4
#: After layout v4, RING3_TOKENS + 1 to RING3_MANY_TOKENS tokens run a 3-bit ring too, on layers of at most
#: RING3_MANY_MAX_N rows where one fills three quarters of a wave at RING3_MANY_TOKENS tokens (gpu_sweep.py
#: dec3m8 / wide3m8, kernel alone, M = 5 / 8, us, the warpgroup tile in brackets: 4096x4096 on 32 rows 5.26 /
#: 5.42 (7.70 / 7.69); 8192x8192 on 128 rows 13.93 / 14.24 (14.41 / 14.37); 14336x4096 on 112 rows 11.57 /
#: 11.92 (14.07 / 14.18)); 4096x14336, whose K splits three ways at 8 tokens, keeps the warpgroup tile (14.82
#: / 14.72; the 64-row ring 12.79 at M=5), and 28672x8192 too (37.84 / 38.29 against 39.46 / 49.01 on 112 rows).
RING3_MANY_TOKENS = 8
RING3_MANY_MAX_N = 16384
#: warpgroup-MMA tiles (sm_90a, 16-bit operands) for more than 32 tokens, from H200 sweeps
#: (scripts/gpu_sweep.py --groups wg64,wg256,wgsel, int4 g128; us, against the mma.sync tiles
#: the planner took): M=64 8192x8192 45.8 (52.5), 28672x8192 68.0 (~129); M=128 4096x4096 with
#: 64-row CTAs 16.8 (36.3), 28672x8192 with 128 tokens 108 (231); M=256 8192x8192 55.3 (116),
#: 4096x14336 64.6 (118), 28672x8192 with 256 tokens 192 (388); M=1024 8192x8192 195 (505)
#: M=16 8192x8192 with 64-row CTAs 22.9 (26.2), 14336x4096 17.6 (23.7), 28672x8192 with 128 49.5
#: (62.2); M=32 with 32 tokens 8192x8192 31.3 (37.3), 28672x8192 54.2 (106).
#: After the split-K sum was made parallel (ninth session, gpu_sweep.py --groups wgocc16,wgocc32,
#: wgocc64,wgsmall --ctas 1,2,3,4): four-warp tiles of at most 32 tokens, launched for two CTAs
#: per SM (Launcher.ctas_for), on layers of at most 16384 rows (16 tokens) or 8192 (32), also
#: those of at most 4096 rows, which kept the mma.sync tile until then (4096x4096 M=16 9.2 against 9.8, M=32 10.6
#: against 13.9, M=64 with two 32-token tiles 12.7 against 19.6; 4096x14336 M=16 18.2 against
#: 20.9, M=32 21.2 against 32.1, M=64 30.5 against 51.5; 8192x8192 M=32 20.1 against 23.0 for
#: WG_32; 14336x4096 M=32 20.0 against 19.3)
WG_16_NARROW = Tile(16, 64, 128, 1, 4, 1, 6, wgmma=1)
WG_16 = Tile(16, 128, 128, 1, 8, 1, 6, wgmma=1)
WG_32_NARROW = Tile(32, 64, 128, 1, 4, 1, 4, wgmma=1)
WG_32 = Tile(32, 128, 128, 1, 8, 1, 4, wgmma=1)
WG_64 = Tile(64, 128, 128, 1, 8, 1, 4, wgmma=1)
WG_64_NARROW = Tile(64, 64, 128, 1, 4, 1, 4, wgmma=1)
WG_128 = Tile(128, 128, 128, 1, 8, 1, 4, wgmma=1)
WG_256 = Tile(256, 128, 128, 1, 8, 1, 3, wgmma=1)
#: 128 tokens x 256 rows on sixteen warps (four warpgroups of 64 rows, 128 registers, one CTA per SM) in WG_256's
#: place on dense layers of more than 4096 rows over a K of at most WIDE_256_MAX_K, codes of at most 4 bits on 16-bit
#: operands (wide_256). Its CTA holds half the activations of WG_256's in a stage (three stages of 48 KB against 72
#: KB for int4 g128) and issues from sixteen warps where WG_256's eight hold 255 registers; over a short K each CTA
#: is a few stages between its prologue and a 64 KB epilogue. H100, int4 g128, fp16 (seventy-fifth session,
#: gpu_run.sh s75w): kernel alone (gpu_sweep.py wide256, three rounds, us, WG_256 -> this tile, M = 1024 / 4096):
#: 32768x512 101.7 / 397 -> 87.7 / 334, 24576x1536 141 / 659 -> 139 / 565, 5120x2048 57.0 / 155 -> 54.2 / 143; over a
#: longer K 1-5 % (1536x7168, 6144x4096, 4096x14336, 8192x8192) or a tie (28672x4096). Through the bench (one round
#: each, the planner with WG_256, then with this tile in its place, M = 1024 / 2048 / 4096): deepseek-v3's kv_b 100
#: / 192 / 388 -> 87.7 / 166 / 341, q_b 147-154 / 285-293 / 595-605 -> 146 / 270 / 546, qwen3-30b-a3b's qkv
#: (5120x2048) 47.0-47.4 / 77.7-78.3 / 151-153 -> 47.0 / 79.2 / 137; where WG_256 takes 129-256 tokens (more than
#: 8192 rows), M=256: kv_b 24.7 -> 22.5, q_b 47.0 -> 45.3. Over a longer K the bench was mixed, 5 % either way
#: (deepseek-v3's dense_gate_up, 36864x7168, 1.02-1.05x slower; llama3-70b's gate_up, 57344x8192, 1.03-1.05x), so
#: WG_256 stays there; four stages were no better than three. HUMMING_WG256_WIDE (read when a plan is made): 0 never,
#: 3 or 4 everywhere the planner takes WG_256, at that many stages (measurements); unset, wide_256's rule.
WG_256_WIDE = Tile(128, 256, 128, 1, 16, 1, 3, wgmma=1)
WIDE_256_MAX_K = 2048


def rows_fit(tile: Tile, n: int) -> bool:
    """Whether ``tile``'s CTAs, BN rows of packed weights each, cover a layer of ``n`` rows (padded to PAD_N when
    prepared) exactly: a tile wider than 128 rows must not read past them, which the Launcher refuses."""
    return padded_n(n) % tile.bn == 0


def wide_256(layer, recipe: "Recipe", kp: int) -> Tile | None:
    """The tile a dense layer takes where the planner takes WG_256 (``kp``: its padded K in kernel units): WG_256_WIDE
    over a short K (see there), else None; ``HUMMING_WG256_WIDE`` overrides the rule. Never where the weight rows,
    padded to 128, are not a multiple of its 256 (the launcher refuses such a tile)."""
    raw = os.environ.get("HUMMING_WG256_WIDE", "")
    if raw not in ("", "0", "3", "4"):
        raise ValueError(f"HUMMING_WG256_WIDE: expected 0 (never), or 3 or 4 stages, got {raw!r}")
    if layer.is_moe or raw == "0" or not rows_fit(WG_256_WIDE, layer.n):
        return None
    if raw:
        return replace(WG_256_WIDE, stages=int(raw))
    ok = (not recipe.op8 and recipe.bits <= 4 and kp * recipe.ku <= WIDE_256_MAX_K
          and padded_n(layer.n) > 4096 and not wide_256_spills(recipe))
    return WG_256_WIDE if ok else None


def wide_256_spills(recipe: "Recipe") -> bool:
    """Whether WG_256_WIDE's kernel needs a stack for ``recipe`` at its 128 registers: integer codes in scale groups of
    32 columns (sm_90a, NVRTC 13.0: 8 bytes, one local load in the main loop, for int4 and int2 on bf16 operands and
    int3 on fp16 ones; groups of 16, 48, 64 and more, per channel and float codes compile without one). Found by
    compiling the planner's kernels over random layers on the CPU (seventy-seventh session); such layers keep the
    tile they took before it (WG_256)."""
    return recipe.gscale and not recipe.wfloat and recipe.group == 32


def four_slots_spill(recipe: "Recipe", tile: Tile, cp_async: bool) -> bool:
    """Whether a stream tile's kernel for ``recipe`` needs a stack at four ring slots where three compile without one
    (so the planner gives it three). Found by compiling planned kernels on the CPU (NVRTC 13.0); not timed:
     * Turing (no cp.async: the slots are registers): 8-bit codes whose kernels min_blocks does not budget (zero
       points, float codes, groups of 16 or 32) took 194-255 registers at four slots and spilled in the loop with zero
       points in groups of 16 and e4m3 in groups of 64; at three, 118-221 registers and no spill;
     * Turing: sub-byte integer codes in groups of 64 on the register-streaming tiles (stream 1: the 16- and 32-row
       decode tiles of layers of about 2048 rows or fewer), every activation: int4 at min_blocks' floor of three CTAs
       per SM (80 registers) 8-16 bytes of stack with a local load in the loop; int3 and int5 at a floor of two (128
       registers) up to 16 bytes outside the loops. At three slots all take the floor of three and compile at 80
       registers without a stack (seventy-eighth session; groups of 128 took 78 registers without one). int8 in
       groups of 64 (budgeted at a floor of two CTAs: 128 registers) kept 8 bytes outside the loops at four slots and
       none at three, where stream_work_regs keeps its floor at two (at three CTAs it spilled in the loop; seventy-
       ninth session; groups of 128 and per channel compile at four);
     * uint7 with zero points in groups of 64 on the sixteen-warp long-K ring (stream 4, 512 threads: 128 registers
       at most): 48 bytes and four local accesses in the loop on sm_90a, 16 and three on sm_86 / sm_89; at three
       slots 126 registers and no stack there (sm_80 and Blackwell compile either way; seventy-eighth session).
       An MoE layer's 5-7-bit codes in groups of 64 on that ring (4096x14336, sm_80 to sm_89; seventy-ninth session):
       at four slots int5 with quantized activations 8 bytes and a local access in the loop, uint5 with 16-bit ones
       24 bytes, uint6 with quantized ones 16, uint7 with quantized ones 32-48 bytes and five to seven accesses in
       the loop; at three, 121-128 registers and no stack for every one of them and every activation. And 3-bit
       codes there with quantized activations: int3 on sm_80 / sm_89 (4096x14336), uint3 with zero points on sm_90a
       (2048x4096), 8 bytes and one access in the loop at four, none at three;
     * 5- and 7-bit codes with zero points in groups of 16 on the register-streaming tiles (stream 1, no register
       floor), and 3-bit ones on Turing: 255 registers and 8-16 bytes of stack at four slots on sm_75 to sm_89 (uint5
       on the 16-row tile: four local accesses in the loop); 197-254 registers and no stack at three (sm_90a compiles
       either way; 4-, 6- and 8-bit codes, and 3-bit ones with cp.async, compile at four; seventy-eighth session).
     * int7 in groups of 64 (no zero points) on the register-streaming tiles at one token (stream 1, a floor of two
       CTAs: 128 registers): 8 bytes of stack outside the loops on sm_90a (7168x2048, 8192x4096, 14336x4096); at three
       slots 128 registers and none, the floor unchanged (seventy-ninth session; sm_80 to sm_89 and Blackwell
       compiled either way).
     * MoE decode tiles (stream 1) of 6- and 7-bit codes on sm_80 to sm_89 (seventy-ninth session; sm_90a and
       Blackwell compile either way): in groups of 128 at the floor of two CTAs (128 registers), int6 with
       quantized activations (int8 / e4m3 per token, made fp16 operands: a per-token scale) kept 24 bytes of stack
       and five local accesses in the loop at four slots, and int7 with 16-bit ones 16 bytes and four; at three
       slots none (int7 with quantized activations is the other way round: 16 bytes and four accesses at three,
       none at four). In groups of 16 or 32 (no floor): 255 registers and 8 bytes outside the loops at four slots
       for int7 / uint7 g32 and uint6 g16; 223-255 and none at three.
    fit_tile keeps a ring's slots in whole fold chunks: rings folding every two or four blocks stay at four."""
    if not tile.stream or tile.stages <= 3:
        return False
    if recipe.moe and tile.stream == 1 and recipe.gscale and recipe.bits in (6, 7):
        if recipe.group == 128 and (recipe.bits == 6) == bool(recipe.act_scale):
            return True
        if recipe.group <= 32 and stream_work_regs(recipe, tile) is None:
            return True
    if tile.stream == 1 and recipe.bits == 7 and not recipe.zp and recipe.gscale and recipe.group == 64:
        return True
    if not cp_async and recipe.bits == 8 and stream_work_regs(recipe, tile) is None:
        return True
    if (not cp_async and tile.stream == 1 and recipe.gscale and recipe.group == 64
            and stream_work_regs(recipe, tile) is not None):
        return True
    if (tile.stream == 1 and recipe.zp and recipe.gscale and recipe.group == 16
            and (recipe.bits in (5, 7) or (recipe.bits == 3 and not cp_async))):
        return True
    if not (tile.stream == 4 and tile.threads == 512 and recipe.gscale and recipe.group == 64):
        return False
    return ((recipe.bits == 7 and bool(recipe.zp))
            or (recipe.moe and recipe.bits in (3, 5, 6, 7)))


#: 64 tokens on four warps with TMA stages (bulk copies on mbarriers, refilled one step behind, each
#: warp issuing a share of a refill: the kernel's SHARED_REFILL) and two accumulator chains, three
#: stages (three CTAs fit an SM), K split for two per SM (H200, int4 g128, M=64, gpu_sweep.py tma64 /
#: tmaocc64: 8192x8192 25.8 us against 27.9 for WG_64_NARROW, 4096x14336 27.9 against 31.3, 14336x4096
#: 22.7 against 24.6 for WG_64; 28672x8192 keeps WG_64: 67.6 against 81.5)
WG_64_TMA = Tile(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2)
#: 9-16 tokens on four warps of two 16-row blocks each (128 rows per CTA: two m64 wgmmas per k16
#: step sharing the activations' descriptor), on layers of more than 8192 rows and on those of at
#: most 4096 with K >= 12288 (H200, int4 g128, M=16, gpu_sweep.py wide16p, two runs: 28672x8192
#: 46.6 us against 49.2 for WG_16, 14336x4096 16.9 against 17.2-17.3, 4096x14336 17.6 against
#: 18.4 for WG_16_NARROW; 8192x8192 17.8 against 17.6 and 4096x4096 10.8 against 9.3 keep
#: WG_16_NARROW). At 32 and 64 tokens the two-block tiles lose or tie (wide32p, wide64, wide64p:
#: 8192x8192 M=64 30.5-33.4 us against 25.6 for WG_64_TMA; 28672x8192 M=32 53.7 against 53.7)
WG_16_TWO = Tile(16, 128, 128, 1, 4, 1, 6, wgmma=1)


def wgmma_tile(lo: int, n: int, heavy: bool = False, k: int = 0, ops16: bool = False) -> Tile:
    """The warpgroup tile for the M range starting at ``lo`` (> 8) on a layer of ``n`` rows and
    ``k`` columns (since the ninth session's sweeps every range above 8 tokens has one, so the
    mma.sync tiles run there only where wgmma does not). 256-token CTAs hold 128 accumulators per thread and
    reach ptxas' 255 registers; where the dequantizer needs more (``heavy``: see heavy_dequant) they
    spilled, so those layers keep 128 tokens. ``ops16``: 16-bit operands, every code, whose 65-512-token tiles
    were measured apart (below: int4 g128, then e4m3 / int8 per channel, int3 g128, MXFP4, int2 g128 and uint4
    with integer and float zero points, which take 128 tokens where the others take 256); byte operands start
    from the tiles without them (byte_wgmma_tile)."""
    if lo <= 16:
        return WG_16_TWO if n > 8192 or (n <= 4096 and k >= 12288) else WG_16_NARROW
    if lo <= 32:  # (14336x4096 M=32: WG_32 19.3 us against 20.0)
        return WG_32_NARROW if n <= 8192 else WG_32
    if lo <= 64:  # (at most 4096 rows: two 32-token tiles, but WG_64_TMA on long K -- its K slices stay
        # long enough: 4096x14336 M=33 26.1 us against 30.3, M=64 27.6 against 30.7; 4096x4096 M=64 15.3
        # against 12.8, 2048x8192 18.2 against 14.7)
        if n <= 4096:
            return WG_64_TMA if k >= 12288 else WG_32_NARROW
        return WG_64_TMA if n <= 16384 else WG_64
    if ops16 and lo <= 128 and 2048 < n and (n > 4096 or k >= 8192):
        # (H200, int4 g128, kernel alone, plain launches, gpu_sweep.py wgmid, M = 96 / 128: 4096x14336 WG_128 in
        # four K slices 35.9 / 37.9 us against 55.3 / 55.6 for WG_64_NARROW; 8192x8192 WG_128 in two 36.5 / 37.9
        # against 40.5 / 40.2 for WG_64; 14336x4096 WG_128 30.7 / 31.0 against 35.0 / 35.5; K split: tuning.
        # The other codes alike at M=96, gpu_run.sh s38n: e4m3 / int8 per channel, int3 g128, MXFP4 on 4096x14336
        # 37.6 / 36.5 / 35.8 / 36.1 us against 42.8 / 42.0 / 43.1 / 43.2 for WG_64_NARROW split in two; 8192x8192
        # 39.0 / 37.4 / 36.7 / 36.9 against 42.7 / 40.6 / 39.1 / 40.2 for WG_64. Through the bench, s39h, int4 g128 /
        # e4m3 per channel: 4096x8192 M = 65 / 128 23.5 / 27.1 and 24.6 / 28.7 us against 32.8 / 33.0 and 33.7 / 34.8
        # for WG_64_NARROW; over a K of 4096 a wash, 16.9 / 20.1 against 18.1 / 18.2, and of 2048 a loss, 13.7 / 16.8
        # against 10.8 / 10.9. On 4097-8192 rows any K: s39g, int4 g128 6144x2048 M = 65 / 128 9.8 / 10.9 against
        # 12.7 / 12.8 for WG_64, though WG_64 led kernel alone, 12.9 against 16.9 at M=96, plain launches)
        return WG_128
    if ops16 and lo <= 128 and n <= 4096 and 4096 <= k:
        # (the layers of at most 4096 rows over a K of 4096 or more that the rule above leaves: two 32-token CTAs per
        # SM with K split, tuning's split_k. H200, through the bench against WG_64_NARROW whole, M = 65 / 96 / 128,
        # us: int4 g128 (s40d, s40e) 1024x4096 7.33 / 7.72 / 8.31 against 17.8 / 17.9 / 18.0, 2048x4096 10.4 / 10.9 /
        # 12.6 against 17.9 / 18.0 / 18.0, 3072x4096 13.4 / 13.8 / 15.8 against 18.0 / 18.1 / 18.1, 4096x4096 15.5 /
        # 15.8 / 17.8 against 18.2 / 18.2 / 18.3, 4096x6144 20.7 / 20.9 / 24.5 against 25.4 / 25.5 / 25.6, 2048x8192
        # 17.5 / 18.2 / 19.5 against 32.4 / 32.6 / 32.8, 2048x14336 27.6 / 28.5 / 29.5 against 54.1 / 54.6 / 54.7;
        # e4m3 per channel (s40d) 2048x4096 9.83 / 9.93 / 12.0 against 18.2 / 18.3 / 18.4, 2048x6144 13.0 / 13.2 /
        # 15.1 against 25.2 / 25.4 / 25.7. Kernel alone (s40a, plain launches) 4096x4096 at M=128 had lost, 19.5
        # against 18.2. A K under 4096 keeps WG_64_NARROW: 4096x2048 kernel alone 10.6 / 10.9 / 12.6 against
        # 10.8 / 10.9 / 11.0)
        return WG_32_NARROW
    if lo <= 128:
        return WG_64_NARROW if n <= 4096 else WG_64 if n <= 16384 else WG_128
    if ops16 and lo <= 512:
        # (H200, int4 g128, kernel alone, plain launches, gpu_sweep.py wgbig: 4096x14336 M=256 WG_128 in two K
        # slices 58.0 us against 67.2 for WG_64, M=512 WG_128 97.6 against 115; 4096x4096 M=256 WG_64 21.9 against
        # 25.1 / 30.1 for WG_128 split / whole, M=512 WG_128 31.5 against 36.1; 8192x8192 M=512 WG_256 105
        # against 118 for WG_128, M=256 WG_128 58.1 against 68.9 / 97.1 for WG_256; 14336x4096 WG_256 either.
        # The other codes alike, s38n, e4m3 / int8 / int3 / MXFP4: 4096x14336 M=256 WG_128 in two K slices 59.8 /
        # 57.8 / 57.3 / 57.5 against 68.1 / 64.8 / 65.0 / 66.8 for WG_64, M=512 99.3 / 98.5 / 95.8 / 96.8 against
        # 140 / 133 / 114 / 118; 8192x8192 M=512 int3 / MXFP4 WG_256 101 / 101 against 121 / 120 for WG_128, the
        # 8-bit codes' WG_256 being WG_128 (fit_tile): 126 / 123. Zero-point codes through the bench, s39c, uint4 g128
        # integer / g64 float: 4096x14336 M = 96 / 200 / 512 36.5 / 53.3 / 102 us against 58.6 / 72.0 / 126 for
        # WG_64_NARROW / WG_64, float alike; 4096x4096 M=512 31.8 against 38.6; 8192x8192 M=96 32.3 against 43.6)
        if 2048 < n <= 4096:  # (at 129-256 tokens with its K split, tuning: s39h, through the bench, int4 g128 / e4m3
            # per channel M = 200 / 256, 4096x4096 17.0 / 17.9 and 17.7 / 18.3 us against 22.0 / 22.1 and 21.2 / 21.4
            # for WG_64, 4096x2048 10.7 / 11.2 against 13.0 / 13.0, 4096x8192 29.8 / 30.4 against 40.1 / 40.4)
            return WG_128
        if 4096 < n <= 8192 and lo > 256:
            return WG_128 if heavy else WG_256
    if heavy:
        return WG_64 if n <= 4096 else WG_128
    if lo <= 512:
        return WG_64 if n <= 4096 else WG_128 if n <= 8192 else WG_256
    return WG_256


def heavy_dequant(recipe: "Recipe") -> bool:
    """Whether the dequantizer holds more registers than the 256-token warpgroup tile leaves (sm_90a, at
    ptxas' 255): zero points (two more words per fragment; bf16 spilled). (bf16 3-bit codes spilled 8 bytes
    there with layout v3's two planes; v4's whole fields fit, in fp16 and bf16 alike.)"""
    return recipe.zp != 0


def wgmma_ok(recipe: "Recipe", caps) -> bool:
    """Whether the warpgroup scheduler can run this layer's kernels: a chip with wgmma and
    cp.async; 16-bit operands (the weights dequantized into the MMA's A fragments), or int8
    or fp8 ones (m64nNk32) whose group scales, if any, span whole halves of 64-unit blocks (64
    values: they are applied to each half block's partial sums; int4 operands have no wgmma)."""
    return bool(caps.has("wgmma") and caps.has("cp_async") and wgmma_operands(recipe))


#: byte operands on warpgroup MMAs, from H200 sweeps (scripts/gpu_sweep.py --act int8 --groups
#: bwg16,bwg64,bwg256,bwg256c; kernel alone, us, against the mma.sync byte tile the planner took
#: before): W4A8 int4 g128 M=16 8192x8192 13.4 with WG_16_NARROW (20.8), 28672x8192 36.0 (57.4);
#: M=64 8192x8192 21.2 with WG_64_TMA (51.4), 28672x8192 55.8 with WG_64 (169); M=256 8192x8192 42.5
#: with WG_128 (73.7; WG_64 55.1), 28672x8192 163 (285); M=1024 166 (289) and 564 (991). Per
#: channel (no fold): int4 M=256 8192x8192 31.6 with WG_128 (68.2), M=1024 104 with BYTE_WG_LARGE
#: (121 with WG_128, 267 before); int8 M=1024 210 with WG_128 (397). 256-token byte tiles do not fit
#: (shared memory: fit_tile shrinks them to 128 tokens and 3 stages, 26-35 % slower than WG_128).
BYTE_WG_LARGE = Tile(128, 256, 128, 1, 16, 1, 3, wgmma=1)
#: decode (1-8 tokens) of byte operands on Hopper: 8-token warpgroup tiles (m64n8k32), K split for two
#: CTAs per SM (H200, gpu_sweep.py --groups bdec4,bdec8, M=1, kernel alone, us, against the decode
#: tile the planner took: W4A8 int4 g128 8192x8192 12.8 (15.5 with the int8 ring), 1.05x the stream
#: time, 28672x8192 34.0 (44.3); W8A8 int8 per channel 8192x8192 21.1 (32.5); e4m3 x e4m3 per
#: channel 8192x8192 20.9 and 28672x8192 ~63, 1.02-1.08x the stream time, against 25.3 and 90.5 through
#: 16-bit operands and 34.0 and 110 on the emulated fp8 mma.sync)
BYTE_WG_DECODE = Tile(8, 64, 128, 1, 4, 1, 8, wgmma=1)
#: 8-bit weight codes (int8, e4m3) above 128 tokens: only three 128-token stages fit, which cp.async
#: refills two behind (one in flight); TMA refills one behind (H200, 8192x8192, gpu_sweep.py b8tma,
#: kernel alone: e4m3 x e4m3 M=256 46.9 us against 56.8, M=1024 180 against 214; int8 M=1024 163
#: against 210)
BYTE_WG_8BIT = Tile(128, 128, 128, 1, 8, 1, 3, wgmma=1, tma=1)


def byte_wgmma_tile(tile: Tile, recipe: "Recipe", lo: int, n: int, k: int) -> Tile:
    """The warpgroup tile of a byte-operand layer of ``n`` x ``k`` for the range starting at ``lo`` whose
    warpgroup tile of byte operands' own ranges (wgmma_tile without ops16) is ``tile``: 8-token tiles for
    decode; TMA stages for 8-bit codes above 128 tokens; at most 128 tokens where the partial sums are folded
    (the fp32 sums beside them take 255 registers at 128 tokens and spill at 256); above 512 tokens, int8 per
    channel with codes of at most 4 bits, 128 x 256 CTAs of 16 warps (where the rows, padded to 128, are a
    multiple of 256). On 2049-4096 rows: 65-128 tokens over a long K on 128-row CTAs (their K split in two:
    tuning), 257-512 tokens of codes of at most 4 bits on
    128-token CTAs (H200, kernel alone, gpu_run.sh s39d, 4096x14336: W4A8 int4 g128 / per channel, e4m3 x e4m3
    per channel M=96 WG_64 in two K slices 29.3 / 23.9 / 37.6 us against 34.6 / 30.3 / 41.9 for WG_64_NARROW,
    30.6 / 26.0 / 39.9 for WG_128 in four; W4A8 M=512 WG_128 67.9 / 49.5 against 89.7 / 66.5 for WG_64; at
    129-256 tokens WG_64 stays: 45.5 / 34.1 against 44.9 / 36.2 for WG_128 in two). On more than 4096 rows,
    65-128 tokens take 128-token tiles (BYTE_WG_8BIT for 8-bit codes, WG_128 otherwise; K split where they fill
    under half the SMs: tuning), which read each weight once where two 64-token tiles read it twice (H200, the
    bench, gpu_run.sh s42c / s42e, two rounds, us, M = 65 / 96 / 128, against WG_64: e4m3 x e4m3 per channel
    8192x8192 28.7 / 29.4 / 30.5 against 42.4 / 42.5 / 43.1, 14336x4096 28.1 / 29.0 / 30.4 against 44.8 / 46.0 /
    47.6, 28672x8192 91.2 / 89.7 / 93.6 against 119 / 114 / 121; W8A8 int8 per channel alike; W4A8 int4 g128
    27.3 / 27.9 / 28.7 against 32.6 / 32.9 / 33.1 and 26.6 / 27.9 / 28.9 against 33.3 / 34.3 / 35.8; uint4 g64
    with zero points 36.7 / 37.1 / 37.9 against 40.8 / 41.1 / 41.5 and 36.4 / 37.0 / 38.2 against 42.2 / 43.2 /
    44.5; e4m3 in groups of 128 with activations in groups of 128 35.8 / 36.3 / 37.1 against 47.8 / 47.7 / 47.8).
    128-token tiles of groups of half a block (half_block_groups) and of activation group scales (act_scale 3)
    take TMA stages."""
    t = _byte_wgmma_tile(tile, recipe, lo, n, k)
    if (half_block_groups(recipe) or recipe.act_scale == 3) and t.bm == 128 and not t.tma:
        return replace(t, tma=1)
    return t


def _byte_wgmma_tile(tile: Tile, recipe: "Recipe", lo: int, n: int, k: int) -> Tile:
    if lo <= 8:
        return BYTE_WG_DECODE
    if recipe.bits == 8 and (lo > 128 or (lo > 64 and n > 4096)):
        return BYTE_WG_8BIT
    if 64 < lo <= 128 and n > 4096:
        return WG_128
    if lo > 512 and not wg_fold(recipe) and recipe.bits <= 4 and rows_fit(BYTE_WG_LARGE, n):
        return BYTE_WG_LARGE  # (rows that pad to an odd count of 128 take WG_128)
    if 2048 < n <= 4096 and lo <= 512:
        if 64 < lo <= 128 and k >= 12288:
            return WG_64
        if lo > 256 and recipe.bits <= 4:
            return WG_128
    if tile.bm > 128:
        return WG_128
    return tile


DEFAULT_RANGES = (
    (1, 8, Tile(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=3)),
    (9, 32, TILE_16),
    (33, 64, TILE_32),  # re-chosen per layer shape: shape_mid_tile
    (65, 128, TILE_32),
    (129, 512, TILE_64),
    (513, None, TILE_64),
)
#: the range whose tile :func:`shape_mid_tile` picks from the layer's N
SHAPED_MID_RANGE = (33, 64)
#: the range that takes TILE_64_WIDE on layers of 4097-8192 rows (above 512 tokens the
#: 128-row CTAs win again: H200, 8192x8192 M=1024 477 -> 445 us)
WIDE_RANGE = (129, 512)


#: decode (1-8 tokens) of 8-bit weight codes on 16-bit operands on Hopper: the 8-token warpgroup tile
#: (m64n8k16), K split for two CTAs per SM (H200, gpu_sweep.py dec16o, M=1, kernel alone, 8192x8192:
#: int8 per channel 21.3 us against 25.2 for DECODE_LONG_K, 1.13x the stream time; e4m3 per channel
#: 21.8 against 25.3). Narrower codes keep the rings at one token (WG_DECODE from two), which decode
#: them with fewer instructions per byte (dec16, dec16o: int4 g128 15.0 against 13.6 with the group
#: scales folded, 16.1 without;
#: int3 g128 21.8 against 20.3; int2 g128 13.7 against 12.6; 28672x8192 int4 with two 64-row wgmmas
#: per warpgroup 37.9 against 38.9, within the sweep's spread); TMA stages of 8 tokens are slower still
#: (1-row boxes: 16.4-70 us)
WG_DECODE_8BIT = Tile(8, 64, 128, 1, 4, 1, 8, wgmma=1)
#: the most tokens per warpgroup tile that folds a 16-bit layer's group scales per block (Tile.fold):
#: the fold costs 4 x (tokens / 8) FMAs per block and lane where the multiply it saves costs 16 (H200,
#: int4 g128, gpu_sweep.py fold16 / fold32 / fold64, kernel alone, us: M=16 8192x8192 16.5 against
#: 17.5, 28672x8192 WG_16_TWO 43.2 against 46.7, 14336x4096 15.8 against 16.7, 4096x14336 16.9 against
#: 17.6, 4096x4096 9.1 against 9.3; M=32 8192x8192 19.7 against 20.4, 4096x14336 20.8 against 21.5,
#: 28672x8192 WG_32 53.4 against 53.6; M=64 8192x8192 WG_64_TMA 26.6 against 25.7, 28672x8192 WG_64
#: 81.7 against 67.6)
FOLD_MAX_BM = 32


#: decode of 2-8 tokens of 16-bit operands on Hopper (and of one token on layers of more than 16384
#: rows whose group scales fold): 8-token warpgroup tiles of four 64-column blocks per stage (BK = 256),
#: with 128 rows per warpgroup (two 64-row wgmmas) on the layers WG_16_TWO takes. The rings' cost grows
#: with the tokens (each token's activations are read per MMA from shared memory), the warpgroup tiles'
#: does not (H200, gpu_sweep.py decm / bk256 / bk256b, kernel alone, us, the ring the planner took in
#: brackets): int4 g128 M=2 / 4 / 8: 8192x8192 14.2 / 14.3 / 14.3 (14.9 / 21.0 / 29.6), 28672x8192 35.3 /
#: 35.5 / 36.0 (41.8 / 56.2 / 73.7), 14336x4096 13.6 / 13.6 / 13.6 (13.7 / 16.3 / 25.1), 4096x14336 14.2 /
#: 14.3 (14.7 / 16.1), 4096x4096 7.8 / 7.9 (7.9 / 10.0); 8192x8192 M=2 / 4 / 8: int3 g128 20.5 / 20.5 / 20.7
#: (21.4 / 28.2 / 33.5), int4 per channel (not folded) 13.5 / 13.6 / 13.6 (16.3 / 22.1 / 28.7), e2m1 g32
#: (not folded) 17.4 / 17.4 / 17.5 (register rings 20.3 / 30.0 / 40.5). At M=1 the rings stay ahead (8192x8192 13.7
#: against 14.1, 4096x14336 13.9 against 14.2) except on 28672x8192 (WG_DECODE_TWO folded: 35.4 against
#: 39.1 and 40.1 for the rings, 1.08x the sweep's stream time). BK = 256 halves the per-stage bookkeeping
#: per byte (SASS, int4 g128 folded: 164 instructions per KB of weights per warp against 216 at BK = 128).
WG_DECODE = Tile(8, 64, 256, 1, 4, 1, 4, wgmma=1)
WG_DECODE_TWO = Tile(8, 128, 256, 1, 4, 1, 4, wgmma=1)
#: 9-16 tokens where the group scales fold: BK = 256 (H200, gpu_sweep.py bk256 --m 16, us, the tile the
#: planner took in brackets: 4096x4096 8.7 (9.1), 14336x4096 15.2 (15.9), 4096x14336 16.2 (16.8),
#: 8192x8192 15.7 (16.4), 28672x8192 with 128 rows per warpgroup 40.6 (43.2)). Not folded, and at 33-64
#: tokens, BK = 128 stays (64 tokens: 18-34 % slower with BK = 256).
WG_16_DEEP = Tile(16, 64, 256, 1, 4, 1, 4, wgmma=1)
WG_16_DEEP_TWO = Tile(16, 128, 256, 1, 4, 1, 4, wgmma=1)
#: ... with two 64-row wgmmas per warpgroup on layers of more rows than this (H200, int4 g128, gpu_sweep.py w16 /
#: x16, kernel alone, us, WG_16_DEEP_TWO against WG_16_DEEP: 14336x4096 M=16 13.89 against 14.97, M=9 13.78
#: against 14.31; 28672x8192 M=16 41.4 against 50.0; 8192x8192 M=16 16.53 against 15.75, 4096x4096 10.6
#: against 7.6)
WG_16_TWO_FROM_N = 8192
#: ... and with 8-bit weight codes on 16-bit operands, where a stage of WG_16_TWO holds twice the weight bytes and
#: two CTAs fit an SM at fewer stages (wgmma_pair), on layers of more rows than this; below, the 64-row tile's three
#: CTAs per SM win (H200, e4m3 per channel, M=16, gpu_sweep.py occ8_16, kernel alone, us: 14336x4096 19.8 against
#: 21.8 for WG_16_TWO at four stages and 22.6 at six, 4096x14336 22.2 against 23.2 and 22.9; 28672x8192, where the
#: 64-row tiles take two waves, 90.2 against 66.4 and 78.1. The bench, gpu_run.sh occ2, two rounds: 14336x4096
#: 20.0 / 20.0 -> 19.2 / 19.2, 4096x14336 21.2 / 21.2 -> 17.7 / 17.8)
BYTE_CODES_16_TWO_FROM_N = 16384
#: 17-32 tokens where the group scales fold, except on layers of 4097-8192 rows (gpu_sweep.py bk256m32,
#: M=32, us, the tile the planner took in brackets: 4096x4096 10.2 (10.6), 14336x4096 18.1 (19.2 with WG_32),
#: 4096x14336 19.4 (20.7), 28672x8192 with two warpgroups 51.9 (53.9); 8192x8192 20.5 against 19.7 for
#: WG_32_NARROW, which it keeps)
WG_32_DEEP = Tile(32, 64, 256, 1, 4, 1, 4, wgmma=1)
WG_32_DEEP_TWO = Tile(32, 128, 256, 1, 8, 1, 3, wgmma=1)


#: decode of 2-8 tokens on Hopper where one token runs the lean ring of int4 codes or the 2-bit ring
#: (decode_ring_tile): register rings, which copy the activations turn by turn and whose slices of them may
#: take 96 KB (RING_XTURN_CAP), against the eight-token warpgroup tiles (H200, gpu_sweep.py r4 / r4u, kernel
#: alone, us, M = 2 / 4 / 6 / 8, the warpgroup tile's range in brackets; int4 g128: 4096x4096 on the long-K
#: ring 5.55 / 5.77 / 5.92 / 6.13 (6.91-7.00), 14336x4096 on the wide ring 11.24 / 11.41 / 11.93 / 12.17
#: (12.34-12.47), 4096x14336 long-K 11.19 / 11.82 / 12.29, wide at 8 13.65 (13.91-14.11), 8192x8192 long-K
#: 11.63 / 12.21 / 12.59, wide at 8 13.44 (14.06-14.32); int2 g128 8192x8192 long-K 9.86 / 10.61 at 2 / 4,
#: wide at 8 11.67 (12.51-12.89); int4 per channel, M = 2 / 4 / 8: 8192x8192 11.73 / 12.21 / 13.32 wide
#: (13.59-13.79), 4096x14336 11.16 / 11.69 and 12.64 for the warpgroup tile at 8 (the wide ring 13.48)).
#: Up to RING_LONG_MAX tokens a long-K ring's slice of activations fits its CTA's share of shared memory
#: within one wave of CTAs; from there on the long-K ring keeps a window of them (DECODE_INT4_LONG_K_WINDOW;
#: before it, the wide ring, twice the rows per CTA and half the K slice, or without group scales the warpgroup
#: tile).
RING_DECODE_MAX = 8
RING_LONG_MAX = 6
#: 7-8 tokens of int4 and 2-bit codes over a long K, on layers of fewer rows than one wide-ring CTA (64 rows) per
#: SM: the long-K ring with a window of two turns of activations per K run (Tile.xwin), so that 8 rows of a long K
#: need no more K slices than one token; the window costs 1-2 % where the slices are the same (H200, gpu_sweep.py
#: xw8 / xw8b, kernel alone, us, M = 8: int4 g128 4096x14336 12.56 against 13.59 for the wide ring and 18.06 for
#: the long-K ring without the window (three slices), 8192x8192 13.04 against 13.46 and 16.79, the eight-token
#: warpgroup tile 14.1-14.2; M = 6, where both keep their slices, 12.39 against 12.27 and 12.85 against 12.69;
#: int4 per channel 13.35 against 13.76 for the warpgroup tile, 12.75 against 13.74; int2 g128 11.88 against
#: 12.07 for the wide ring, 11.15 against 12.55)
DECODE_INT4_LONG_K_WINDOW = replace(DECODE_INT4_LONG_K, xwin=2)


def wide_layer(layer, sms: int | None) -> bool:
    """Whether the layer has a 64-row block per SM or more (``sms`` known): its one-token rings are
    DECODE_INT4_WIDE's 64 rows per CTA (int4, and 2-bit codes over a short K)."""
    return bool(sms) and -(-layer.n // 64) >= sms


def decode_ring_tile(lo: int, layer, recipe: "Recipe", kp: int, sms: int | None) -> Tile | None:
    """The register ring of the Hopper decode range starting at ``lo`` tokens (2 to RING_DECODE_MAX; see
    above), or None where the warpgroup tiles take it: int4 codes that go into the MMA raw (the layer's
    one-token ring is DECODE_INT4_WIDE, _LONG_K or _SHORT_K; up to RING_LONG_MAX tokens on narrow layers over
    a long K, the 16-row ring: long_k_16_row_ring) and 2-bit codes in groups of 64 or more over
    more than 4096 columns (DECODE_INT2_LONG_K), on layers of at most 16384 rows, from RING_LONG_MAX + 1
    tokens over a long K with a window of activations (DECODE_INT4_LONG_K_WINDOW); 3-bit codes up to
    RING3_TOKENS tokens where ring3 says so: ring3_tile at that many tokens, on layers of at most
    RING3_FEW_MAX_N rows or where one of the rings fills most of one wave of ``sms`` at that many tokens;
    from there to RING3_MANY_TOKENS, on layers of at most RING3_MANY_MAX_N rows, the ring that fills most of
    a wave at RING3_MANY_TOKENS tokens, if one does."""
    if recipe.op8 or lo > RING_DECODE_MAX:
        return None
    if ring3(layer, recipe, sms):
        if lo > RING3_TOKENS:  # (5-8 tokens: a ring that fills the wave at 8, on layers of at most 16384 rows)
            if layer.n > RING3_MANY_MAX_N:
                return None
            return ring3_tile(layer, kp, sms, RING3_MANY_TOKENS, fallback=False)
        return ring3_tile(layer, kp, sms, RING3_TOKENS)  # (None on wider layers where no ring fits)
    if layer.n > 16384:
        return None
    int4 = recipe.bits == 4 and raw_codes(recipe)
    int2 = recipe.bits == 2 and not recipe.wfloat and kp > 4096 and bool(recipe.gscale) and recipe.group % 64 == 0
    if not (int4 or int2):
        return None
    if int4 and long_k_16_row_ring(layer, recipe, kp, sms, tokens=lo):
        return short_k_ring(DECODE_INT4_SHORT_K, recipe, hopper=True)  # (2 to RING_LONG_MAX tokens, narrow layers)
    hi = RING_LONG_MAX if lo <= RING_LONG_MAX else RING_DECODE_MAX  # (the range's last token count)
    if wide_layer(layer, sms):
        window = ring_needs_window(DECODE_INT4_WIDE, layer, kp, sms, hi)
        return replace(DECODE_INT4_WIDE, xwin=2) if window else DECODE_INT4_WIDE
    if kp <= 4096 or (lo <= RING_LONG_MAX and not ring_needs_window(DECODE_INT4_LONG_K, layer, kp, sms, hi)):
        return DECODE_INT2_LONG_K if int2 else DECODE_INT4_LONG_K
    return DECODE_INT4_LONG_K_WINDOW  # (DECODE_INT2_LONG_K's shape too)


#: A window of activations where a range's last token count would otherwise split K for them past one wave: the
#: long-K ring's slice of 2-6 tokens fits RING_XTURN_CAP over a K of 8192 (RING_LONG_MAX), not over a longer one on
#: layers of more than 132 32-row CTAs (8192x14336: four tokens' 14336 columns are 112 KB, so the launch split K in
#: two, 512 CTAs for 264 places), nor the wide ring's 7-8 tokens over 8192 columns (14336x8192: 128 KB, 448 CTAs).
#: H100, int4 g128 fp16, through the bench, two rounds alike, us, split -> window (gpu_run.sh s60a, s60b):
#: 8192x14336 M = 4 / 6 25.6 / 26.0 -> 21.6 / 21.9 (bf16 and per channel alike); 8192x28672 M = 2 / 4 / 6 51.3 /
#: 47.9 / 49.4 -> 50.1 / 43.0 / 43.5; 5120x13824 M = 4 / 6 21.3 / 21.9 -> 17.0 / 17.9; 5120x27648 M = 2 / 4 / 6 37.2 /
#: 30.0 / 35.0 -> 33.0 / 31.3 / 32.9; 6144x28672 43.2 / 41.8 / 37.7 -> 40.6 / 35.2 / 36.3; the wide ring: 14336x8192
#: M = 7 / 8 25.8 -> 22.0, 10240x8192 23.8 -> 18.8, 10240x14336 M = 6 37.5 -> 31.6, 10240x18432 M = 2 / 4 / 6 45.2 /
#: 46.1 / 37.5 -> 45.5 / 39.4 / 39.8. Lost: 10240x14336 M = 8, 31.0 -> 32.0 (split three ways: 480 CTAs of a third
#: of K in two rounds, against the window's 160 of the whole K in one), and single token counts above where the
#: split took fewer rounds (5120x27648 M = 4, 10240x18432 M = 6); a rule by rounds of CTAs per K at the range's last
#: token count (s60b's tree) lost more than it saved (5120x27648 M = 2 33.0 -> 37.2, 6144x28672 M = 4 35.2 -> 41.8,
#: 10240x18432 M = 4 39.4 -> 46.1). Where the slices fit either way, no window (it costs 1-2 %: 5120x13824 M = 2,
#: 16.1 -> 16.3; DECODE_INT4_LONG_K_WINDOW).
def ring_needs_window(tile: Tile, layer, kp: int, sms: int | None, tokens: int) -> bool:
    """Whether ``tokens`` rows of 16-bit activations over the K slice of a one-wave launch of this ring (``occupancy``
    CTAs per SM, as Launcher.stream_split splits it) outgrow RING_XTURN_CAP, so that without a window of them the
    launch would split K further, past one wave (above). MoE layers: not measured (their launches hold every routed
    block's CTAs), no."""
    if not sms or layer.is_moe:
        return False
    want = ring_wave_slices(tile.occupancy, sms, -(-padded_n(layer.n) // tile.bn))  # (the window's slices)
    return -(-tokens * kp * 2 // RING_XTURN_CAP) > want  # (the slices whose activations fit without one)


def wgmma_decode_from(layer, recipe: "Recipe", sms: int | None = None) -> int:
    """The fewest tokens a layer that runs warpgroup tiles (wgmma_ok) runs on them: 1 for byte operands
    (BYTE_WG_DECODE), 8-bit weight codes (WG_DECODE_8BIT), and where the group scales fold, layers of
    more than 16384 rows and 3-bit codes, unless ring3 gives them a register ring (WG_DECODE,
    WG_DECODE_TWO); RING_DECODE_MAX + 1 (RING3_TOKENS + 1 for 3-bit codes) where decode_ring_tile takes 2
    or more tokens; 2 otherwise (one token keeps the rings).
    (3-bit rings: DECODE_INT3's comment; before raw 3-bit codes (v3's k-half factor) they lost, 8192x8192 19.8 us and
    4096x14336 16.1 against 16.9 and 17.3 for the warpgroup tile.)"""
    kp = padded_k(layer.k, recipe) // recipe.ku
    if recipe.op8 or recipe.bits == 8 or (can_fold(recipe) and not ring3(layer, recipe, sms) and (layer.n > 16384 or recipe.bits == 3)):
        return 1
    for lo in (RING_DECODE_MAX, RING3_TOKENS, 2):  # (int4 / int2: a tile at any SM count; 3-bit: by ``sms``)
        if decode_ring_tile(lo, layer, recipe, kp, sms) is not None:
            return lo + 1
    return 2


def ring3(layer, recipe: "Recipe", sms: int | None = None) -> bool:
    """Whether one token of a 3-bit layer runs a register ring (ring3_tile): raw codes (no float zero
    points), one scale entry per block, at most RING3_FEW_MAX_N rows, or at most RING3_MAX_N where one of
    the rings fills most of one wave of ``sms`` (2 to RING3_TOKENS tokens: decode_ring_tile)."""
    if not (recipe.bits == 3 and raw_codes(recipe) and layer.n <= RING3_MAX_N
            and (not recipe.gscale or recipe.group % 64 == 0)):
        return False
    return layer.n <= RING3_FEW_MAX_N or ring3_tile(layer, padded_k(layer.k, recipe) // recipe.ku, sms, 1) is not None


def ring3_tile(layer, kp: int, sms: int | None, m: int, fallback: bool = True) -> Tile | None:
    """The 3-bit ring for up to ``m`` tokens. On layers of more than RING3_FEW_MAX_N rows, DECODE_INT3_112
    where its rows divide the padded layer's and its CTAs, K split for the activation cap at ``m`` rows
    (RING_XTURN_CAP; kp in 16-bit units), take one or two waves of ``sms`` (one CTA per SM), the last at
    least three quarters full. Else the first of DECODE_INT3, _WIDE, _128 and _224 (32 to 224 rows per CTA)
    whose rows divide the layer's and whose CTAs fit one wave and fill at least three quarters of it; else
    DECODE_INT3 on layers of at most RING3_FEW_MAX_N rows (the long-K ring they ran before; not with
    ``fallback=False``), None on the wider ones (unknown SM count: the same)."""
    few = layer.n <= RING3_FEW_MAX_N and fallback
    if not sms:
        return DECODE_INT3 if few else None
    split = -(-(m * kp * 2) // RING_XTURN_CAP)
    n = padded_n(layer.n)
    if layer.n > RING3_FEW_MAX_N and n % DECODE_INT3_112.bn == 0:
        ctas = n // DECODE_INT3_112.bn * split
        waves = -(-ctas // sms)
        if waves <= 2 and 4 * ctas >= (4 * waves - 1) * sms:
            return DECODE_INT3_112
    for t in (DECODE_INT3, DECODE_INT3_WIDE, DECODE_INT3_128, DECODE_INT3_224):
        ctas = n // t.bn * split
        if n % t.bn == 0 and ctas <= sms and 4 * ctas >= 3 * sms:
            return t
    return DECODE_INT3 if few else None


#: With HUMMING_STREAM_K=1 (stream_k_enabled), layers of more rows than this run their 1-16 token warpgroup
#: tiles (128 rows per CTA) stream-K (Tile.sk). 28672 rows make 224 such tiles, two CTAs on 92 of the H200's
#: SMs and one on 40; stream-K gives every resident CTA the same share of the (tile, K step) space. It is off
#: by default: through the bench it lost on the H200 (int4 g128 28672x8192, gpu_run.sh skab, one machine,
#: data-parallel -> stream-K, us: M=1 36.8-36.9 -> 38.1, M=8 35.4-35.5 -> 36.6-36.7, M=16 39.7-39.8 ->
#: 39.3-39.4; kernel alone, plain launches, M=1 36.21 -> 36.42), though the timer-stamping build of the CTA
#: timelines (gpu_run.sh sk2, sktr3) ran M=1 35.3 -> 32.5 (docs/perf-notes.md, twenty-second session).
STREAM_K_FROM_N = 16384


#: One token of 3-bit codes whose correction takes one MMA per 128 columns (the kernel's ONE_CORR; here no zero
#: points and groups of 128 columns or a multiple) runs these rings of two CTAs per SM (no more than 128
#: registers) where one of them fills at least three quarters of those slots (H200, int3 g128, kernel alone:
#: 8192x8192 on DECODE_INT4_LONG_K 10.71 us against 11.04 on DECODE_INT3_WIDE; 14336x4096 on DECODE_INT4_WIDE
#: 10.67 against 11.03 on DECODE_INT3_128). Integer zero points take 164 registers: one CTA per SM.
RING3_ONE_TWO = (DECODE_INT4_LONG_K, DECODE_INT4_WIDE)


#: One token of e2m1 codes in groups of less than 64 (MXFP4: 32, e8m0 scales; NVFP4: 16, e4m3 scales and a global
#: scale): the 3-bit rings of 16 warps and 128 registers, one CTA per SM, 32 rows per CTA where they fit one wave,
#: else 64 (fp4_one_tile), where the register-streaming tiles ran before (8 warps of 199-231 registers: one CTA
#: per SM). H200, gpu_sweep.py fp4, M=1, kernel alone, us, the register-streaming tile in brackets: MXFP4 4096x4096
#: 5.90 (10.27), 4096x14336 13.06 (19.55), 8192x8192 14.76 on 64 rows (18.97), 14336x4096 16.03 on 64 rows
#: (20.49); NVFP4 6.68 (11.27), 16.15 (22.66), 18.09 (22.28), 19.57 (24.48). Through the bench (us, before ->
#: after): MXFP4 8.27 -> 4.73, 19.5 -> 12.2, 18.9 -> 13.9, 17.6 -> 14.8; NVFP4 9.48 -> 5.70, 22.3 -> 15.2, 22.1 ->
#: 17.3, 20.7 -> 18.2. Quantized activations (W4A4) and chips without wgmma: not measured.
#: On layers of more 64-row blocks than SMs, the rings of 112 rows (14 warps) or 128 (16): fp4_one_tile takes the
#: rows that put the fewest on the busiest SM (H200, gpu_sweep.py fp4w, M=1, kernel alone, us, 64 rows -> 112 -> 128;
#: the register-streaming tile in brackets): MXFP4 14336x4096 13.60 -> 12.38 -> 12.38, 28672x8192 42.64 -> 40.15
#: -> 42.03 (62.76); NVFP4 15.92 -> 14.52 -> 15.74, 55.89 -> 54.62 -> 54.81 (71.87). Above 28672 rows: not measured.
FP4_ONE_MAX_N = 28672
FP4_ONE_WIDE = (DECODE_INT3_WIDE, DECODE_INT3_112, DECODE_INT3_128)


def fp4_one_tile(layer, sms: int | None) -> Tile:
    """The one-token ring of e2m1 codes in small groups (see FP4_ONE_MAX_N): 32 rows where its CTAs fit one wave,
    else of FP4_ONE_WIDE (one CTA per SM each) the one whose busiest SM holds the fewest rows (its waves times
    its rows), the fewer waves on a tie; 112 rows only where they divide the layer's."""
    n = padded_n(layer.n)
    if not sms:
        return DECODE_INT3_WIDE
    if -(-n // DECODE_INT3.bn) <= sms:
        return DECODE_INT3

    def waves(t: Tile) -> int:
        ctas = -(-n // t.bn)
        return -(-ctas // sms)

    fits = [t for t in FP4_ONE_WIDE if t.bn != DECODE_INT3_112.bn or n % t.bn == 0]
    return min(fits, key=lambda t: (waves(t) * t.bn, waves(t)))


def ring2_short_tile(layer, sms: int | None) -> Tile:
    """The one-token register ring of 2-bit codes over a short K (see DECODE_INT2_LONG_K)."""
    if wide_layer(layer, sms):
        return DECODE_INT4_WIDE
    if sms and 4 * (padded_n(layer.n) // DECODE_INT2_LONG_K.bn) >= 3 * DECODE_INT2_LONG_K.occupancy * sms:
        return DECODE_INT2_LONG_K
    return DECODE_INT3


def ring3_one_tile(layer, recipe: "Recipe", kp: int, sms: int | None) -> Tile | None:
    """The 3-bit ring of one token: the first of RING3_ONE_TWO whose CTAs fill its occupancy (two per SM) of
    ``sms`` to at least three quarters, where the layer's correction is one MMA per 128 columns; else
    ring3_tile's."""
    if sms and not recipe.zp and recipe.gscale and recipe.group % 128 == 0:  # (per channel: not measured)
        n = padded_n(layer.n)
        for t in RING3_ONE_TWO:
            ctas, slots = n // t.bn, t.occupancy * sms
            if n % t.bn == 0 and 3 * slots <= 4 * ctas <= 4 * slots:
                return t
    return ring3_tile(layer, kp, sms, 1)


#: 9-16 tokens of 4-bit integer codes on the 64-row 16-token tile (WG_16_DEEP) take three groups of four warps along K
#: in each CTA (Tile.kg) where its tiles fill at least WG16_KG_MIN_WAVE of the SMs and at most all of them: one CTA
#: per tile, no K split, where one group per CTA split K two or three ways (summed in clusters, or through the
#: workspace where they did not hold). H100, int4 g128 fp16, through the bench, two rounds alike, us, M = 9-12 / 16,
#: one group -> three (gpu_run.sh s69k, s70k): 8192x8192 (128 tiles) 16.0-16.1 / 16.3 -> 14.3-14.4 / 14.4-14.5 (two
#: groups 14.3-14.4 / 14.6), 7168x8192 (112) 14.7 / 14.8-14.9 -> 12.8 / 12.9, 6144x4096 (96) 7.63-7.64 / 7.71-7.73 ->
#: 7.11-7.14 / 7.19-7.20; lost where fewer tiles left SMs idle or the launch still split K through the workspace:
#: 5120x8192 (80) 10.2-10.3 / 10.3 -> 11.4 / 11.5, 4096x4096 (64, two slices) 6.27 / 6.23-6.27 -> 6.98-7.06 /
#: 6.83-6.90, 4096x14336 (64) 13.9 / 14.1 -> 14.3 / 14.4; on the 128-row tile, 14336x4096 (112 tiles) 13.2 / 13.5 ->
#: two groups 13.1-13.2 / 13.4, three 13.3-13.4 / 13.5 (a tie: it keeps one). Since the two slices of such a launch
#: sum in a cluster (seventieth session), three groups win there too, where the two slices' CTAs fill
#: WG16_KG_MIN_WAVE of the SMs (H100, the same way, s70c, s73v): 4096x4096 (64 tiles) 6.20-6.22 / 6.23-6.26 ->
#: 6.03-6.12 / 6.15-6.21, 4096x14336 (64) 14.0 / 14.1-14.2 -> 13.4-13.5 / 13.5, 3584x8192 (56) 8.51-8.53 / 8.57-8.63
#: -> 8.19-8.23 / 8.24-8.25, 3072x14336 (48) 11.6-11.7 / 11.8 -> 11.3 / 11.4, 3072x8192 (48) 7.87-7.90 / 7.92-7.98 ->
#: 7.74-7.82 / 7.77-7.82; not three slices (s73t): 2560x8192 (40 tiles) 7.18-7.22 / 7.21-7.35 -> 8.35-8.43 / 8.19-8.20,
#: 2560x14336 (40) 10.0-10.1 / 10.1 -> 11.1-11.2 / 11.0, 2816x8192 (44) 7.78-7.83 / 7.89-7.92 -> 8.59-8.63 / 8.51-8.53;
#: nor four: 2048x8192 (32) 6.43-6.44 / 6.46-6.47 -> 8.00-8.03 / 7.81-7.82, 2048x14336 (32) 8.88-8.90 / 9.00-9.02 ->
#: 10.1 / 9.98-9.99 (each group's share of a slice a few stages). Not measured on the H200 (its faster
#: memory left the 16-token rows further from the stream: s67t) nor for other codes, which keep one group unless
#: HUMMING_WG16_KG says; nor over a K below WG16_KG_MIN_K (each group's share of a short K is a few stages: not
#: measured).
WG16_KG_DEFAULT = 3
WG16_KG_MIN_WAVE = 2 / 3
WG16_KG_MIN_K = 4096


def _groups_switch(var: str) -> int:
    """An environment switch of groups along K, read when a plan is made: 1-4, or 0 where unset."""
    raw = os.environ.get(var, "")
    if raw not in ("", "1", "2", "3", "4"):
        raise ValueError(f"{var}: expected 1-4 groups along K, got {raw!r}")
    return int(raw or 0)


def wg16_groups_along_k(layer, recipe: "Recipe", tile: Tile, sms: int | None) -> int:
    """The groups along K (Tile.kg) of a dense layer's 16-token warpgroup tile (WG_16_DEEP, WG_16_DEEP_TWO): none where
    its tiles exceed the SMs (one wave of one CTA each), else ``HUMMING_WG16_KG`` (1-4, read when a plan is made) where
    set, else WG16_KG_DEFAULT for 4-bit integer codes on WG_16_DEEP whose tiles fill WG16_KG_MIN_WAVE of the SMs, or
    whose launch splits K in two and fills as much, over a K of at least WG16_KG_MIN_K."""
    switch = _groups_switch("HUMMING_WG16_KG")
    tiles = -(-padded_n(layer.n) // tile.bn)
    if not sms or layer.is_moe or tile not in (WG_16_DEEP, WG_16_DEEP_TWO) or tiles > sms:
        return 1
    if switch:
        return switch
    # (one CTA per tile: the tiles fill WG16_KG_MIN_WAVE of the SMs; or the launch splits K in two, each pair of
    # slices summed in a cluster, and those CTAs fill as much: Launcher.split_for gives two slices where the SMs over
    # the tiles round down to two)
    wave = tiles >= WG16_KG_MIN_WAVE * sms or (sms // tiles == 2 and 2 * tiles >= WG16_KG_MIN_WAVE * sms)
    ok = (tile == WG_16_DEEP and recipe.bits == 4 and not recipe.wfloat and not recipe.op8
          and wave and layer.k >= WG16_KG_MIN_K)
    return WG16_KG_DEFAULT if ok else 1


#: 33-64 tokens with groups along K (HUMMING_WG64_KG, not planned by default: it lost to WG_64_TMA's split launch, H100,
#: int4 g128 fp16, through the bench, two rounds alike, us, M = 33 / 48 / 64, s70m: 8192x8192 23.9-24.0 / 24.1-24.2 /
#: 23.9-24.4 -> 25.7-25.8 / 26.1-26.3 / 26.6-26.8, 7168x8192 23.1-23.2 / 23.2-23.3 / 23.8 -> 24.9 / 25.3 / 26.0,
#: 6144x4096 12.9-13.0 / 13.0-13.2 / 13.4-13.5 -> 13.7-13.8 / 13.9-14.0 / 14.1): WG_64_TMA's cp.async
#: twin with three groups of four warps in one CTA (384 threads, 161 registers, 194560 bytes of shared memory at three
#: stages each for int4 g128 on sm_90a), one CTA per 64-row tile where the tiles fill 2/3 of the SMs to all of them:
#: the split launch's sum of 64-token partial tiles through the workspace (8192x8192: 128 tiles, three slices) left out,
#: as for 16 tokens (wg16_groups_along_k)
WG_64_KG = Tile(64, 64, 128, 1, 4, 1, 3, wgmma=1, chains=2, kg=3)


def wg64_groups_along_k(layer, recipe: "Recipe", tile: Tile, sms: int | None) -> int:
    """``HUMMING_WG64_KG`` (2-4; unset or 1: none): groups along K for a dense layer's 33-64 token range where the
    planner gives it WG_64_TMA and its 64-row tiles fill WG16_KG_MIN_WAVE of the SMs to all of them (16-bit operands;
    an experiment's switch, read when a plan is made)."""
    switch = _groups_switch("HUMMING_WG64_KG")
    tiles = -(-padded_n(layer.n) // tile.bn)
    if (switch <= 1 or not sms or layer.is_moe or tile != WG_64_TMA or recipe.op8
            or not WG16_KG_MIN_WAVE * sms <= tiles <= sms):
        return 1
    return switch


def stream_k_enabled() -> bool:
    """Whether plans take the stream-K tiles of STREAM_K_FROM_N: ``HUMMING_STREAM_K`` is 1/on (read when a
    plan is made; plans are cached per process, so set it before the first, or call
    ``humming.planner.clear_cache()``)."""
    return os.environ.get("HUMMING_STREAM_K", "0").lower() in ("1", "on", "true", "yes")


#: 17-64 tokens of 4-bit integer codes on layers of at most NARROW_16_ROWS_PER_SM rows per SM (1056 on 132 SMs) over a
#: K of at most NARROW_16_MAX_K, with group scales that fold: the 16-token tile (WG_16_DEEP) in two to four M tiles,
#: where the 32-token tiles took them (measured over K = 3584-8192). H100, through the bench, us, M = 17 / 32 / 48 /
#: 64, the 32-token tile -> the 16-token one (gpu_run.sh s61g two rounds alike, s61h, s61i; the 16-token launches
#: programmatic, PDL_CROWDED_BM): int4 g128 fp16 512x3584 4.70 / 4.84 / 5.61 / 5.79 -> 3.90 / 4.16 / 4.33 / 4.50,
#: 1024x4096 5.60-5.67 / 5.86-5.89 / 6.50-6.57 / 6.82-6.86 -> 4.56-4.67 / 4.57-4.64 / 5.21-5.29 / 5.78-5.84, 1024x8192
#: 7.28-7.30 / 7.53 / 8.92 / 9.18-9.25 -> 6.15 / 6.22-6.25 / 7.66-7.69 / 8.26-8.29, 1024x3584 5.50 / 5.79 / 5.87 / 6.03
#: -> 4.44 / 4.54 / 4.92 / 5.15; bf16 1024x4096 M = 17 / 32 / 64 5.83 / 6.04 / 7.03 -> 4.66 / 4.81 / 6.05; uint4 g64
#: with zero points 6.16 / 6.35 / 7.28 -> 4.96 / 5.10 / 6.71. Wider layers lost at 17-32 tokens where the 32-token
#: launch's clusters fit (1280x8192 5.92 / 6.36 -> 7.05 / 7.02, 1536x4096 4.55 / 4.97 -> 5.22 / 5.31, 3072x4096 5.77 /
#: 6.13 -> 7.30 / 7.41) and won where they did not (2048x4096 8.33 / 8.85 -> 5.84 / 5.90), which the 32-token tile
#: wins since (5.18 / 5.55-5.59: Launcher.cluster_fallback_split); at 64 tokens they lost (2048x8192 12.1 -> 13.3), and
#: so did a longer K (2048x14336 M=48 16.0 -> 18.7).
NARROW_16_ROWS_PER_SM = 8
NARROW_16_MAX_K = 8192


def narrow_16_tokens(layer, recipe: "Recipe", sms: int | None) -> int:
    """The most tokens of a Hopper layer's 16-bit warpgroup ranges that take the 16-token tile (above): 64, or 16 (the
    tile's own range) where ``sms`` is unknown, on MoE layers, for codes other than 4-bit integers (not measured: each
    M tile dequantizes the weights again, and 2-, 3- and 8-bit codes cost more to), without folding group scales."""
    if (not sms or layer.is_moe or recipe.op8 or not can_fold(recipe) or layer.k > NARROW_16_MAX_K
            or recipe.bits != 4 or recipe.wfloat):
        return 16
    return 64 if layer.n <= NARROW_16_ROWS_PER_SM * sms else 16


def warpgroup_tile(lo: int, layer, recipe: "Recipe", sms: int | None = None) -> Tile:
    """The warpgroup tile of the M range starting at ``lo`` (16-bit operands: from
    wgmma_decode_from's token count on), with the group scales folded per block where it pays
    (FOLD_MAX_BM); ``sms``: the GPU's SM count where known (narrow_16_tokens)."""
    if recipe.op8:
        return byte_wgmma_tile(wgmma_tile(max(lo, 9), layer.n, heavy_dequant(recipe), layer.k), recipe, lo,
                               layer.n, layer.k)
    two = layer.n > 8192 or (layer.n <= 4096 and layer.k >= 12288)  # (as WG_16_TWO: two 64-row wgmmas)
    if 9 <= lo <= narrow_16_tokens(layer, recipe, sms):
        lo = 9  # (the 16-token tile, in M tiles of 16)
    if lo <= 8:
        tile = WG_DECODE_8BIT if recipe.bits == 8 else WG_DECODE_TWO if two else WG_DECODE
    elif lo <= 16 and can_fold(recipe):
        tile = WG_16_DEEP_TWO if layer.n > WG_16_TWO_FROM_N else WG_16_DEEP
    elif lo <= 32 and can_fold(recipe) and not 4096 < layer.n <= 8192:
        tile = WG_32_DEEP_TWO if layer.n > 16384 else WG_32_DEEP
    elif lo <= 64 and can_fold(recipe) and 2048 < layer.n <= 4096 and 4096 <= layer.k < 12288:
        # (where wgmma_tile takes two 32-token tiles, WG_32_NARROW: folded, BK = 256 beat BK = 128 there. H200, int4
        # g128 4096x4096, `humming tune` (gpu_run.sh s46t), M = 33 / 64: 9.05 / 9.55 us against 12.55 / 12.79; the
        # bench with that tuning, M=64, 9.63 against 12.8. 65-128 tokens keep WG_32_NARROW: not measured so)
        tile = WG_32_DEEP
    else:
        tile = wgmma_tile(lo, layer.n, heavy_dequant(recipe), layer.k, ops16=True)
        if tile == WG_16_TWO and recipe.bits == 8 and layer.n <= BYTE_CODES_16_TWO_FROM_N:
            tile = WG_16_NARROW
    if layer.n > STREAM_K_FROM_N and tile in (WG_DECODE_TWO, WG_16_DEEP_TWO) and stream_k_enabled():
        tile = replace(tile, sk=1)
    elif (kg := wg16_groups_along_k(layer, recipe, tile, sms)) > 1:  # (one CTA per SM: tiles that fit one wave)
        tile = replace(tile, kg=kg)
    elif (kg := wg64_groups_along_k(layer, recipe, tile, sms)) > 1:
        tile = replace(WG_64_KG, kg=kg)
    return replace(tile, fold=1) if tile.bm <= FOLD_MAX_BM and can_fold(recipe) else tile


def wgmma_from(layer, caps, compute) -> int | None:
    """The fewest tokens the plan runs on warpgroup MMAs (None: mma.sync at every M): see
    wgmma_decode_from. MoE layers (M: the rows one expert gets): the first of the tuning's ranges from which
    every range is a warpgroup tile (their decode ranges are shaped for MoE: tuning)."""
    kl = kernel_layer(layer, compute)
    recipe = _sizing_recipe(kl, compute)
    if not wgmma_ok(recipe, caps):
        return None
    if layer.is_moe:
        ranges = tuning(layer, caps, compute)
        wg = [i for i, r in enumerate(ranges) if all(s.config.get("wgmma") for s in ranges[i:])]
        return ranges[wg[0]].lo if wg else None
    return wgmma_decode_from(kl, recipe, caps.product.sm_count if caps.product is not None else None)


def _max_smem(caps) -> int:
    return int(caps.limit("smem_per_block_optin") or caps.limit("smem_per_block") or 48 * 1024)


COMPUTE_TYPES = ("fp16", "bf16")


def _byte_wgmma_everywhere(layer, caps, compute, acc: str) -> bool:
    """Byte operands whose plan runs warpgroup MMAs at every M (so no emulated mma.sync is issued):
    a native wgmma form of the pair, and a layer the warpgroup scheduler takes (MoE layers: fp8 weights, or
    with HUMMING_MOE_BYTE_WGMMA=1: moe_byte_wgmma_enabled)."""
    if ((layer.is_moe and not moe_byte_wgmma_enabled(layer))
            or (layer.activation.quant == "dynamic_group" and not _group_acts_fit(layer, compute))
            or not caps.find_mma(compute.a, compute.b, acc, families="wgmma")):
        return False
    try:  # (the weights as the byte operand: any other limit keeps the emulation among the reasons)
        recipe = recipe_for(layer.weight, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False,
                            target="sm_80", op8=_op8(compute))
    except UnsupportedError:
        return False
    return wgmma_ok(recipe, caps)


def int_fp8_split(layer, caps, compute) -> bool:
    """Whether the plan takes the layer's int4 codes as two e4m3 operands per register (Recipe.fp8_split, the
    dequantizer ``int_bittrick_split``): HUMMING_INT_FP8_SPLIT on (fp8_split_enabled), codes the split holds
    (fp8_split_limits), and a plan that runs warpgroup tiles at every M (Hopper: the split's tiles)."""
    return (fp8_split_enabled() and not fp8_split_limits(layer.weight, _op8(compute))
            and _byte_wgmma_everywhere(layer, caps, compute, "fp32"))


def byte_group_activations(layer, caps, compute) -> bool:
    """Whether per-group activation scales meet this layer's byte operands (GemmMmaSync::AGS, folded with each
    block's sums): fp8 x fp8 (8-bit float weights: no byte rings at any M) on a chip whose plan runs warpgroup
    tiles at every M, activation groups of a multiple of 128 values (whole blocks), weight groups that span whole
    blocks, no act order (its permutation would mix groups within a block) and no K-shard placed in whole weight
    groups (the activations' groups would not be the kernels' blocks): _group_acts_fit, which
    _byte_wgmma_everywhere checks for such layers."""
    return layer.activation.quant == "dynamic_group" and _byte_wgmma_everywhere(layer, caps, compute, "fp32")


def byte_group_acts_enabled() -> bool:
    """Whether plans may fold per-group activation scales on fp8 warpgroup tiles (byte_group_activations): yes
    unless ``HUMMING_BYTE_GROUP_ACTS`` is 0/off (read when a plan is made; plans are cached), which keeps bf16
    operands. With the scales laid out by group and copied into the stages they beat the bf16 operands at every
    M measured (H200, through the bench, gpu_run.sh s42b / s42c, e4m3 g128 x e4m3 in groups of 128, us, M = 1 /
    16 / 64 / 128 / 256 / 1024: 8192x8192 24.8 / 25.1 / 26.8 / 37.1 / 65.1 / 245 against 26.5 / 26.9 / 32.8 /
    41.6 / 75.3 / 302; 14336x4096 21.9 / 24.9 / 25.1 / 35.7 / 66.4 / 221 against 22.5 / 24.8 / 30.7 / 40.4 / 77.8
    / 266; 28672x8192 72.7 / 73.4 / 90.9 / 119 / 231 / 804 against 75.6 / 80.3 / 92.3 / 135 / 269 / 1031). Read
    from global memory at each fold, row-major [M, K / group] (a cache line per token), they had lost: 29.5 / 92.0
    / 353 us at M = 1 / 256 / 1024 on 8192x8192 (s41k)."""
    return os.environ.get("HUMMING_BYTE_GROUP_ACTS", "1").lower() not in ("0", "off", "false", "no")


def _group_acts_fit(layer, compute) -> bool:
    a, w = layer.activation, layer.weight
    return (byte_group_acts_enabled() and _op8(compute) in (2, 3) and w.is_float and w.bits == 8
            and a.group_size is not None
            and a.group_size % 128 == 0 and not w.act_order and w.group_offset is None
            and (w.scale not in ("group", "block") or w.group_size % 128 == 0))


#: byte operands (int8, fp8) on chips with warpgroup MMAs take 16-bit operands instead where their weights' scale groups
#: are not whole multiples of this many values: the byte warpgroup tiles fold at most two groups per 128-value block
#: (GSUB), and mma.sync, which took groups of 32, ran them at 0.42-0.48x cuBLAS fp16 above 256 tokens (H200, through
#: the bench, gpu_run.sh s41d, us, W4A8 int4 g32 on 16-bit / int8 operands, M = 1 / 16 / 64 / 256 / 1024: 8192x8192
#: 20.0 / 22.6 / 33.8 / 67.7 / 243 against 22.2 / 23.7 / 52.3 / 109 / 427; 28672x8192 63.8 / 54.6 / 73.7 / 222 / 795
#: against 65.7 / 65.4 / 121 / 425 / 1418). Groups of 64 keep their byte tiles: 16-bit operands were slower at 1-64
#: tokens there (uint4 g64 zp 8192x8192 20.8 / 23.1 / 33.8 against 18.4 / 18.8 / 27.2 us) and within 10 % above.
BYTE_GROUP_VALUES = 64


def check_layer(layer, caps, compute) -> list[str]:
    """Reasons this version's mma_sync kernels cannot run ``layer`` with ``compute`` (empty: they can)."""
    reasons = []
    sixteen = compute.a in COMPUTE_TYPES and compute.b in COMPUTE_TYPES
    op8 = _op8(compute)
    if not sixteen and not op8:
        reasons.append(f"the mma_sync kernels of this version multiply fp16, bf16, int8 x int8, int4 x int4 or "
                       f"fp8 x fp8 (alike) operands; {compute.a} x {compute.b} MMA is not implemented yet")

    def plain_ops(acc):  # the chip's mma.sync forms of these operands (not the kind:: block-scaled ones)
        ops = [op for op in caps.find_mma(compute.a, compute.b, acc, families="mma_sync", native_only=False)
               if op.kind is None]
        return ops, ", ".join(sorted({sh for op in ops for sh in op.shapes})) or "none"

    if sixteen:
        # (the 16-bit kernels issue m16n8k16, or two m16n8k8 where the chip has no k16 form: Turing)
        ops, listed = plain_ops("fp32")
        if ops and not any({"m16n8k16", "m16n8k8"} & set(op.shapes) for op in ops):
            reasons.append(f"the 16-bit kernels issue mma.sync m16n8k16 (m16n8k8 on Turing) {compute.a}; this chip "
                           f"lists {listed}, which this version's kernels do not issue")
    if op8:
        acc = "int32" if op8 in (1, 4) else "fp32"
        shape = "m16n8k64" if op8 == 4 else "m16n8k32"
        ops, listed = plain_ops(acc)
        ks = [op for op in ops if shape in op.shapes]
        if not ks:
            reasons.append(f"the {'int4' if op8 == 4 else 'byte'}-operand kernels issue mma.sync {shape} "
                           f"{compute.a}; this chip lists {listed}")
        elif not any(op.native for op in ks) and not _byte_wgmma_everywhere(layer, caps, compute, acc):
            # the compiler's emulation converts both operands of every MMA to 16 bits (fp8) or
            # int8 (int4): the 16-bit or int8 kernels convert each weight once (H200, e4m3 per
            # channel, 8192x8192: emulated 39 / 173 / 2595 us at M = 1 / 256 / 4096, docs/perf-notes.md)
            reasons.append(f"{compute.a} mma.sync {shape} is a compiler emulation on this chip (conversions + "
                           f"a wider MMA per MMA), slower than converting the weights once")
            if layer.is_moe and _byte_wgmma_everywhere(layer.replace(num_experts=0), caps, compute, acc):
                reasons.append(f"MoE layers of {'these weights' if layer.weight.is_float else 'integer weights'} "
                               f"take the {compute.a} warpgroup tiles (wgmma, as dense layers do) "
                               f"{'unless' if layer.weight.is_float else 'only with'} HUMMING_MOE_BYTE_WGMMA="
                               f"{'0' if layer.weight.is_float else '1'} (measured mixed for integer weights: "
                               f"docs/perf-notes.md, fifty-sixth session)")
    w = layer.weight
    if (op8 in (1, 2, 3) and caps.has("wgmma") and w.scale in ("group", "block")
            and w.group_size % BYTE_GROUP_VALUES):
        # (the 16-bit operands' warpgroup tiles apply the scales to the dequantized weights: BYTE_GROUP_VALUES)
        reasons.append(f"{compute.a} x {compute.b} with scale groups of {w.group_size} values folds its partial "
                       f"sums more often than once per {BYTE_GROUP_VALUES} values on this chip's warpgroup tiles, "
                       f"slower than 16-bit operands (which hold {compute.a} values exactly)")
    if layer.is_moe and w.act_order and layer.activation.quant == "dynamic_group":
        reasons.append("MoE weights with act order take no per-group activation scales: the gather puts each "
                       "expert's columns in its own order before the activations are quantized, so the groups "
                       "would not be the activations' columns")
    if compute.a == "bf16" and not caps.supports_mma("bf16", family="mma_sync"):
        reasons.append("no bf16 mma.sync on this chip")
    try:
        # what the weights would meet with the 16-bit operands this version multiplies
        # (16-bit operands: with the scale groups padded to what the kernels apply, kernel_group)
        recipe_for(kernel_layer(layer, compute).weight, bf16=compute.a == "bf16" if sixteen else False,
                   out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_80", op8=op8)
    except UnsupportedError as e:
        reasons.extend(e.reasons)
    act = layer.activation
    if act.quant == "dynamic_group":
        if not sixteen and not byte_group_activations(layer, caps, compute):
            moved = ("act order" if w.act_order else f"a K-shard starting {w.group_offset} columns into its first "
                     f"group" if w.group_offset is not None else None)
            reasons.append("per-group activation scales on byte operands are not implemented in the planned kernels "
                           "(16-bit operands take them folded into the values; fp8 warpgroup MMAs fold them unless "
                           "HUMMING_BYTE_GROUP_ACTS=0" + (f", but not with {moved}, whose columns the kernels read "
                                                          f"in another place than the activations' groups" if moved
                                                          else "") + ")")
        g = act.group_size
        if not (g in (8, 16, 32, 64, 128, 256) or (g > 256 and g % 256 == 0)):
            reasons.append(f"activation groups of {g}: the quantization kernel takes groups of 8, 16, 32, 64, "
                           f"128, 256 or a multiple of 256")
    if act.is_quantized and act.format.bits == 4:
        # int4 codes meet int4 operands packed, int8 ones one per byte, and 16-bit ones as their
        # values (humming.ops.gemm); e2m1 codes meet 16-bit operands as their values
        if act.format.is_float and not sixteen:
            reasons.append(f"{act.fmt} activations meet 16-bit operands in this version (their values are "
                           f"exact in fp16 and bf16)")
        elif not (sixteen or op8 in (1, 4)):
            reasons.append(f"{act.fmt} activations meet int4, int8 or 16-bit operands in this version")
    return reasons


#: The most K slices a launch may use. The ranges whose tile holds at most
#: ``SPLIT_K_BM`` tokens carry it as ``split_k``; the launcher picks the split
#: from M and the SM count, up to it. Other ranges (no ``split_k``) never split.
MAX_SPLIT_K = 16
SPLIT_K_BM = 32
#: 16-bit operands' warpgroup tiles of more than SPLIT_K_BM tokens split K on dense layers whose grid leaves
#: half the SMs idle at their range's first M, whatever the range (tuning; before, only 128-256-token tiles at
#: 129-256 tokens did). H100, int4 g128, through the bench (sixty-second session, gpu_run.sh s62k), us, M = 129 /
#: 256 / 513 / 1024 / 2048: 1536x7168 (deepseek-v3's q_a) 34.5 / 33.7 / 77.1 / 78.7 / 83.1 -> 15.3 / 19.5 / 32.1 /
#: 44.3 / 84.1 (cuBLAS fp16 at 1024: 32.4); 2048x4096 21.1 / 20.8 / 46.5 / 47.7 / 51.5 -> 13.2 / 12.9 / 27.2 / 28.8
#: / 52.2; 1024x4096 21.2 / 20.8 / 46.2 / 47.3 / 47.4 -> 10.8 / 12.5 / 34.5 / 36.1 / 29.9; 3072x4096 and 4096x4096
#: (grids that fill) unchanged
IDLE_SPLIT_16 = True
#: above 256 tokens, where 16-bit operands' dense layers take the 256-token tile (WG_256), each 32-token step of M
#: takes the tile of 128-256 tokens whose waves cost least (wave_steps). WG_128: a WG_128 CTA does half a WG_256
#: CTA's tokens, at WAVE_128_RATE of its rate, so its grid wins where the WG_256 grid ends in a short last wave.
#: Fitted on the H100 (int4 g128, through the bench, WG_128 against WG_256, M = 1024 / 2048 / 4096, gpu_run.sh s62m):
#: 5120x2048 49.7 / 84.1 / 170 against 55.9 / 87.3 / 152; 6144x4096 96.1 / 187 / 360 against 106 / 160 / 331;
#: 5120x5120 112 / 187 / 384 against 126 / 192 / 327; 8192x8192 258 / 489 / 917 against 217 / 435 / 831; 7168x16384
#: 466 / 835 against 409 / 803. With one CTA per SM (both tiles on Hopper) those are 0.82-0.92 of WG_256's rate per
#: token at equal waves (mean 0.865). Checked at other M (s63a, two rounds against the tree without the steps): where
#: the cost `waves x tokens per CTA / rate` is at most 0.87 of WG_256's, WG_128 won by 5-37 % (5120x2048 M = 300 /
#: 1000 / 1600 26.6 / 55.0 / 80.7 -> 17.0 / 50.8 / 69.1 us, 6144x4096 M = 600 / 1000 / 1300 92.9 / 100 / 150 -> 59.1
#: / 91.3 / 133, 8192x8192 M=600 196 -> 184, 14336x4096 M=300 104 -> 91.3, 28672x8192 M = 300 / 600 386 / 581 -> 368
#: / 533, 3072x4096 M = 600 / 1300 / 2000 46.5 / 94.2 / 101 -> 29.3 / 63.7 / 90.9, 4096x4096 M = 1100 / 1300 100 / 100
#: -> 94.7 / 93.0; MXFP4 6144x4096 M = 600 / 1300 95.8 / 150 -> 61.4 / 126); at 0.92, 2 % (14336x4096 M=1100 266 ->
#: 261); at 0.96 from 4 % better to 4 % worse (three waves against five: 5120x2048 M = 2000 / 2048, 6144x4096 M=1600
#: 156 -> 162, 8192x8192 M=1100, 14336x4096 M=600 and at 1300, six against ten, 315 -> 322); at 1.16 (WG_256 one
#: wave, WG_128 two) WG_256 won by 12-20 % (s63b: 6144x4096 M = 300 / 450 47.5 / 47.9 against 56.5 / 59.5, 5120x2048
#: M=450 27.0 against 32.0, 8192x4096 M = 300 / 450 51.0 / 52.4 against 57.4 / 59.7). So a step takes WG_128 where its
#: cost is below WAVE_128_MARGIN of WG_256's; steps past WAVE_MAX_WAVES waves of WG_256 keep it (its last wave is
#: then a small share).
#: The tiles of 160, 192 and 224 tokens (WG_FITTED: M tiles cut to the tokens M needs) take WAVE_FITTED_COST of a
#: WG_256 CTA's time, measured where their grid had the 256-token one's waves (H100, int4 g128 and MXFP4, through the
#: bench, gpu_run.sh s64b and s64c, this rule's first form, each M tile of WG_256's count cut to the tokens M needs,
#: against WG_256, us): 160 tokens 0.69-0.74 (6144x4096 M = 288 / 300 / 320 33.0 / 33.8 / 33.5 against 46.8 / 46.9 /
#: 46.9, 8192x8192 M = 288 / 320 72.0 / 70.3 against 97.7 / 98.5, 8192x4096 M = 288 / 320 36.3 / 37.0 against 52.0 /
#: 52.1, MXFP4 6144x4096 M=300 33.4 against 48.1); 192 tokens 0.84-0.87 (6144x4096 M=352 40.4 against 47.0, 8192x8192
#: 84.7 against 99.0, 8192x4096 44.8 against 51.2, MXFP4 6144x4096 M=350 41.6 against 48.1); 224 tokens 0.92-0.94
#: (6144x4096 M = 416 / 448 44.0 / 44.4 against 47.3 / 48.0, 8192x8192 94.6 / 94.2 against 100.5 / 100.4, 14336x4096
#: (two waves) 97.1 / 99.0 against 103 / 107). (Stream-K on WG_256 in the steps it keeps lost by up to 46 %, s64b:
#: 6144x4096 M=300 54.4 against 46.9, 5120x2048 M=600 39.3 against 27.0; on the fitted tiles it lost to them by up to
#: 30 % at one wave, 6144x4096 M=400 52.0 against 43.9, and won by at most 5 % on wider layers.) Checked against the
#: 128-token steps alone (s64e, two rounds): up to 30 % faster (8192x8192 M=600 182 -> 138 us, 4096x4096 M=1100 96.0
#: -> 71.8), nowhere more than 4 % slower (6144x4096 M=1000 91.5 -> 95.0, a tie of the model taken as the wider tile)
WAVE_TILES = True
WAVE_128_RATE = 0.865
WAVE_128_MARGIN = 0.93
WAVE_MAX_WAVES = 8
WAVE_FITTED_COST = {160: 0.71, 192: 0.86, 224: 0.93}
WG_FITTED = {bm: replace(WG_256, bm=bm, stages=4) for bm in WAVE_FITTED_COST}  # (fit_tile: as many stages as fit)
#: Where wide_256 puts WG_256_WIDE in WG_256's place, wave_steps costs the 256-token steps as that tile: its own M
#: tiles of 128 tokens and N tiles of 256 rows, each CTA WAVE_WIDE_COST of a WG_256 CTA's time (the same output),
#: WAVE_WIDE_SHORT_COST over a K of at most WAVE_WIDE_SHORT_K. Measured through the bench against the steps costed
#: as WG_256's (H100, int4 g128, fp16, gpu_run.sh s76w: two rounds alternated, the better of each, us, the steps'
#: tile -> WG_256_WIDE): a wide CTA took 1.00-1.07x a 224-token CTA's time over K = 1024-2048 and 0.94-1.00x at 512
#: (the 224-token tile costs 0.93 of WG_256's), so with fewer waves it won -- 12288x1024 M = 550 / 600 / 1300 / 1600
#: 34.2 / 35.1 / 77.9 / 92.5 -> 30.5 / 32.0 / 64.5 / 82.6, 24576x1536 M = 550 / 600 / 1100 94.1 / 95.9 / 172 -> 89.3
#: / 89.9 / 159, 32768x512 M = 550 / 600 / 850 58.4 / 64.1 / 85.3 -> 52.0 / 53.4 / 72.7, 5120x2048 M=1600 (WG_128)
#: 69.3 -> 54.7 -- and at the 224-token tile's waves it lost 2-6 % (24576x1536 M = 400 / 850 65.5 / 130 -> 68.7 /
#: 138, 5120x2048 M=1300 50.9 -> 53.4) but over a K of 512 (32768x512 M = 400 / 650 43.3 / 65.2 -> 42.1 / 61.4).
#: Held out (seventy-seventh session, gpu_run.sh s76v, H100: 13 other M on 32768x512, 24576x1536, 6144x2048 and
#: 12288x1024, two rounds): of the 21 of 52 rows whose plans differ, these costs won 20 (4-22 %) and tied one, 1577
#: -> 1404 us in all (e.g. 6144x2048 M=1300 69.2 -> 54.5, 32768x512 M=620 64.6 -> 53.7).
#: HUMMING_WAVE_WIDE (read when a plan is made) 0 costs them as WG_256's (the seventy-fifth session's steps), 1 as
#: this tile (the default), for measurements.
WAVE_WIDE = True
WAVE_WIDE_COST = 0.97
WAVE_WIDE_SHORT_COST = 0.9
WAVE_WIDE_SHORT_K = 512


def _wave_wide() -> bool:
    """Whether wave_steps costs the 256-token steps as WG_256_WIDE where the planner takes it: WAVE_WIDE, or
    HUMMING_WAVE_WIDE 1 (yes) / 0 (no)."""
    raw = os.environ.get("HUMMING_WAVE_WIDE", "")
    if raw not in ("", "0", "1"):
        raise ValueError(f"HUMMING_WAVE_WIDE: expected 0 or 1, got {raw!r}")
    return raw == "1" if raw else WAVE_WIDE


def wave_tile(bm: int) -> Tile:
    """The warpgroup tile of ``bm`` tokens that wave_steps picks from."""
    return WG_128 if bm == WG_128.bm else WG_256 if bm == WG_256.bm else WG_FITTED[bm]


def wave_steps(lo: int, hi: int | None, layer, recipe: "Recipe", sms: int | None, smem: int, kp: int):
    """``[(lo, hi, tokens)]``: the M range lo..hi (``hi`` None: unbounded) cut into steps of 32 tokens where its
    warpgroup tile is WG_256 on a dense layer of 16-bit operands whose 256-token grid fills more than half the SMs at
    ``lo`` (narrower grids split K: IDLE_SPLIT_16), each step taking the tile of 128, 160, 192, 224 or 256 tokens
    (wave_tile) whose waves cost least -- ``waves x`` the tile's cost per CTA relative to WG_256 (WAVE_128_RATE,
    WAVE_FITTED_COST; WG_128's divided by WAVE_128_MARGIN; the 256-token steps as WG_256_WIDE's where _wave_wide and
    wide_256 give that tile) -- neighbours of one tile merged; the rest of the range,
    from where WG_256's grid is WAVE_MAX_WAVES waves deep, one step of 256 tokens. Otherwise ``[(lo, hi, None)]``
    (the range's own tile). Steps start one past a multiple of 32, so within each every tile's M tiles, and so
    their waves, are constant."""
    whole = [(lo, hi, None)]
    if (not WAVE_TILES or not sms or layer.is_moe or recipe.op8 or lo <= 256 or lo % 32 != 1
            or warpgroup_tile(lo, layer, recipe, sms) != WG_256):
        return whole
    fitted = {bm: wgmma_pair(fit_tile(wave_tile(bm), recipe, smem, kp), recipe, smem)
              for bm in (WG_128.bm, *WAVE_FITTED_COST, WG_256.bm)}
    if any(t.bm != bm for bm, t in fitted.items()):  # (codes whose fitted tiles hold fewer tokens)
        return whole
    n_tiles = -(-padded_n(layer.n) // WG_256.bn)
    if 2 * n_tiles * -(-lo // 256) <= sms:
        return whole
    per_wave = {bm: sms * ctas_by_smem(recipe, t, smem) for bm, t in fitted.items()}
    cost = {WG_128.bm: WG_128.bm / WG_256.bm / WAVE_128_RATE / WAVE_128_MARGIN, **WAVE_FITTED_COST, WG_256.bm: 1.0}
    shape = {bm: (bm, n_tiles) for bm in cost}  # (each key's M tile and its N tiles)
    deep = per_wave[WG_256.bm]  # (WG_256's CTAs a wave: where its grid is WAVE_MAX_WAVES deep, the steps end)
    wide = wide_256(layer, recipe, kp) if _wave_wide() else None
    if wide is not None:  # (the 256-token steps take WG_256_WIDE: cost them as it)
        top = fit_tile(wide, recipe, smem, kp)
        shape[WG_256.bm] = (top.bm, -(-padded_n(layer.n) // top.bn))
        per_wave[WG_256.bm] = sms * ctas_by_smem(recipe, top, smem)
        cost[WG_256.bm] = WAVE_WIDE_SHORT_COST if kp * recipe.ku <= WAVE_WIDE_SHORT_K else WAVE_WIDE_COST

    def waves(t: int, b: int) -> int:
        return -(-shape[t][1] * -(-b // shape[t][0]) // per_wave[t])

    out = []
    a = lo
    while hi is None or a <= hi:
        b = a + 31
        if -(-n_tiles * -(-b // WG_256.bm) // deep) > WAVE_MAX_WAVES:
            break
        bm = min(cost, key=lambda t: (waves(t, b) * cost[t], -t))
        b = b if hi is None else min(b, hi)
        if out and out[-1][2] == bm:
            out[-1] = (out[-1][0], b, bm)
        else:
            out.append((a, b, bm))
        a = b + 1
    if hi is None or a <= hi:
        if out and out[-1][2] == WG_256.bm:
            out[-1] = (out[-1][0], hi, WG_256.bm)
        else:
            out.append((a, hi, WG_256.bm))
    return out


def wave_step_labels(layer, caps, compute, tuning) -> list[str]:
    """The M steps above 256 tokens that wave_steps gives a tile of fewer than 256 tokens, by tile (``"128 at M
    257-384, 769-1152"``), kept where ``tuning`` (the plan's final ranges) runs that tile there; for the plan's
    scheduler slot."""
    if layer.is_moe or not caps.has("wgmma") or not tuning:
        return []
    layer = kernel_layer(layer, compute)
    recipe = _sizing_recipe(layer, compute, cp_async=caps.has("cp_async"))
    if not wgmma_ok(recipe, caps):
        return []
    sms = caps.product.sm_count if caps.product is not None else None
    kp = padded_k(layer.k, recipe) // recipe.ku
    by_bm = {}
    for lo, hi, bm in (s for r in ((257, 512), (513, None)) for s in wave_steps(*r, layer, recipe, sms,
                                                                               _max_smem(caps), kp)):
        if bm is None or bm == WG_256.bm:
            continue
        run = tile_from_config(next((r for r in tuning if r.lo <= lo and (r.hi is None or lo <= r.hi)),
                                    tuning[-1]).config)
        if run is None or run.bm != bm:
            continue
        steps = by_bm.setdefault(bm, [])
        if steps and steps[-1][1] == lo - 1:
            steps[-1] = (steps[-1][0], hi)
        else:
            steps.append((lo, hi))
    return [f"{bm} at M " + ", ".join(f"{lo}-{hi}" for lo, hi in steps) for bm, steps in sorted(by_bm.items())]


def _sizing_recipe(layer, compute, cp_async: bool = True) -> Recipe:
    """The recipe that sizes the tiles (``cp_async``: whether the chip has it, which sets the shared
    memory of the register rings' slices, stream_x_cap); for a layer this version cannot run (a
    ``families="hardware"`` plan, not runnable) the nearest one it could."""
    w = layer.weight
    op8 = _op8(compute)
    groups = bool(op8) and layer.activation.quant == "dynamic_group"  # (byte_wgmma_tile's act_scale 3)
    try:
        return recipe_for(w, bf16=compute.a == "bf16", out_bf16=False, caps_cp_async=cp_async, k8mma=False,
                          target="sm_80", op8=op8, act_scale=3 if groups else 0,
                          agroup=layer.activation.group_size or 0)
    except UnsupportedError:
        grouped = w.scale in ("group", "block")
        zp = {"none": 0, "int": 1, "float": 2}[w.zero_point]
        group = -(-w.group_size // 16) * 16 if grouped else (1 << 30 if zp else 64)
        return Recipe(bits=w.bits, wfloat=w.is_float, zp=zp, gscale=grouped or zp != 0, group=group, cp_async=cp_async)


def split_config(tile: Tile) -> dict:
    """The ``split_k`` entry of a range whose nominal tile is ``tile``."""
    return {"split_k": MAX_SPLIT_K} if tile.bm <= SPLIT_K_BM else {}


def tuning(layer, caps, compute, max_smem: int | None = None):
    """The planner's tuning for this family: one MRange per tile of DEFAULT_RANGES, fitted
    to the layer's padded K and ``max_smem`` bytes of shared memory (default: the
    device's per-block limit). Config keys: the :class:`Tile` fields, plus
    ``split_k`` (the most K slices) on the small-M ranges. Without cp.async the
    loads are synchronous and two stages suffice."""
    from humming.planner.family import MRange

    layer = kernel_layer(layer, compute)  # (padded scale groups: the K the kernels run)
    recipe = _sizing_recipe(layer, compute, cp_async=caps.has("cp_async"))
    kp = padded_k(layer.k, recipe) // recipe.ku  # in kernel K units
    smem = int(max_smem or _max_smem(caps))
    sms = caps.product.sm_count if caps.product is not None else None
    out = []
    ranges = DEFAULT_RANGES
    wg = wgmma_ok(recipe, caps)
    if wg and warpgroup_tile(9, layer, recipe, sms) != warpgroup_tile(17, layer, recipe, sms):  # two warpgroup tiles
        ranges = tuple(r for lo, hi, t in ranges
                       for r in (((9, 16, t), (17, 32, t)) if (lo, hi) == (9, 32) else ((lo, hi, t),)))
    if wg:  # (wgmma_tile's tiles of 16-bit operands and byte_wgmma_tile's above 256 tokens, the K split of 129-256
        # tokens; ranges of one config merge again below)
        ranges = tuple(r for lo, hi, t in ranges
                       for r in (((129, 256, t), (257, 512, t)) if (lo, hi) == (129, 512) else ((lo, hi, t),)))
    wave = {}  # (the steps of M above 256 tokens that take a tile of fewer tokens than WG_256: wave_steps)
    if wg:
        steps = {(lo, hi): wave_steps(lo, hi, layer, recipe, sms, smem, kp) for lo, hi, _ in ranges}
        wave = {(a, b): bm for cut in steps.values() for a, b, bm in cut if bm is not None and bm != WG_256.bm}
        ranges = tuple((a, b, t) for lo, hi, t in ranges for a, b, _ in steps[(lo, hi)])
    dec = wgmma_decode_from(layer, recipe, sms) if wg else 1
    direct_tile = False  # (an MoE one-row tile of its own: MOE_DECODE_INT4)
    if dec > 1:  # one token on the rings; 2-8 on a warpgroup tile or the rings (decode_ring_tile)
        mid = min(dec - 1, RING3_TOKENS if ring3(layer, recipe, sms) else RING_LONG_MAX)  # (3-bit: 2-4, 5-8)
        cuts = ((1, 1), (2, mid), (mid + 1, 8)) if dec > 2 else ((1, 1), (2, 8))
        ranges = tuple(r for lo, hi, t in ranges
                       for r in (tuple((a, b, t) for a, b in cuts) if (lo, hi) == (1, 8) else ((lo, hi, t),)))
    moe_rings = moe_decode_rings(layer, recipe, caps)
    if moe_rings and dec == 1:  # (one row per block on a ring of its own: see below)
        ranges = tuple(r for lo, hi, t in ranges
                       for r in (((1, 1, t), (2, 8, t)) if (lo, hi) == (1, 8) else ((lo, hi, t),)))
    for lo, hi, t in ranges:
        # (a stream tile's ring is register loads either way: its depth stays)
        nominal = t if caps.has("cp_async") or t.stream else replace(t, stages=min(t.stages, 2))
        short4 = False  # (the short-K int4 ring, shaped below)
        if t.stream and recipe.bits == 4 and raw_codes(recipe):
            if wide_layer(layer, sms):
                nominal = DECODE_INT4_WIDE
            elif kp > 4096:
                nominal = DECODE_INT4_LONG_K
            elif kp <= 4096 and caps.has("cp_async"):
                nominal, short4 = DECODE_INT4_SHORT_K, True
        elif t.stream and not recipe.op8 and kp > 4096 and layer.n <= 16384 and (not recipe.gscale or
                                                                                recipe.group % 64 == 0):
            # (codes gathered from two or three planes need more working registers than the 64 that two
            # CTAs of 512 threads leave: one CTA per SM (H200, int3 g128 M=1: 4096x14336 17.0 us against
            # 20.2 with two, 8192x8192 21.5 against 20.4, which spilled 16 bytes)
            nominal = (DECODE_INT2_LONG_K if recipe.bits == 2 else DECODE_LONG_K if recipe.bits in (1, 4, 8)
                       else replace(DECODE_LONG_K, occupancy=1))
        # one token of 3-bit codes (Hopper: measured against the warpgroup tiles; 2 to RING3_TOKENS tokens
        # take decode_ring_tile below)
        three = wg and t.stream and hi == 1 and ring3(layer, recipe, sms)
        if three:
            nominal = ring3_one_tile(layer, recipe, kp, sms)
        # (these two: measured and GPU-tested with 16-bit activations only; quantized ones keep their tiles)
        plain = not layer.activation.is_quantized
        two = (wg and t.stream and hi == 1 and recipe.bits == 2 and not recipe.op8 and not recipe.wfloat
               and kp <= 4096 and layer.n <= 16384 and caps.has("cp_async")
               and (not recipe.gscale or recipe.group % 64 == 0) and plain)
        if two:  # (one token of 2-bit codes over a short K: rings shaped as measured, not by shape_stream_tile)
            nominal = ring2_short_tile(layer, sms)
        fp4 = (wg and t.stream and hi == 1 and recipe.wfloat and recipe.bits == 4 and not recipe.op8
               and layer.n <= FP4_ONE_MAX_N and bool(recipe.gscale) and recipe.group % 64 != 0 and plain)
        if fp4:
            nominal = fp4_one_tile(layer, sms)
        if t.stream and recipe.op8 and recipe.bits == 4 and byte_flip(recipe) and caps.has("cp_async"):
            # int4 codes on the int8 MMA: the lean shared-memory ring (kp in units: K <= 4096 values -> 2048)
            nominal = BYTE_DECODE_INT4_SHORT_K if kp <= 2048 else BYTE_DECODE_INT4
        elif not (three or two or fp4):
            nominal = shape_stream_tile(nominal, layer.n, kp, sms)
            if short4:
                nominal = short_k_ring(nominal, recipe, hopper=caps.has("wgmma"))
            elif (hi == 1 and nominal == DECODE_INT4_LONG_K and caps.has("wgmma")
                  and long_k_16_row_ring(layer, recipe, kp, sms, one_per_sm=long_k_one_ring_ctas_per_sm(caps))):
                nominal = short_k_ring(DECODE_INT4_SHORT_K, recipe, hopper=True)
        if (lo, hi) == SHAPED_MID_RANGE:
            nominal = shape_mid_tile(nominal, layer.n, sms)
        if ((lo, hi) == WIDE_RANGE and 4096 < layer.n <= 8192 and caps.has("cp_async")
                and rows_fit(TILE_64_WIDE, layer.n)):
            nominal = TILE_64_WIDE
        if recipe.op8:
            nominal = byte_tile(nominal, lo, hi, layer.n)
            if half_block_groups(recipe) and (lo > 128 or (lo > 32 and recipe.group % 32 != 0)):
                nominal = half_group_byte_tile(nominal)
        if wg and t.stream and 1 < lo < dec:  # several tokens on a register ring, as chosen (not reshaped for a
            # short K: on 4096x4096 the long-K ring beat the short-K one at 2-8 tokens, gpu_sweep.py r4)
            nominal = decode_ring_tile(lo, layer, recipe, kp, sms)
        split = split_config(t)
        if wg and lo >= dec:
            nominal = (wave_tile(wave[(lo, hi)]) if (lo, hi) in wave else
                       warpgroup_tile(moe_fp8_rows(layer, recipe, lo), layer, recipe, sms))
            if nominal == WG_256 and (wide := wide_256(layer, recipe, kp)) is not None:
                nominal = wide
            if nominal.tma and not caps.has("tma"):  # (a wgmma chip declared without TMA: cp.async stages)
                nominal = replace(nominal, tma=0)
            # (measured so: split K up to 64 tokens, and above for tiles of at most 32 tokens (split_config: wgmma_tile's
            # 65-128-token tiles of small layers), not otherwise -- but for 16-bit operands' tiles of 128 tokens
            # or more, and byte operands' tiles on 2049-4096 rows, whose grid leaves half the SMs idle from the
            # range's first M on (wgmma_tile's tiles of 2049-4096 rows at 129-256 tokens, and at 65-128 over a K of
            # 8192 or more, of 4097-8192 rows at 65-128; byte_wgmma_tile's 65-128 on a long K, the 8-bit TMA tile at
            # 129-256, its 128-token tiles at 65-128 on more than 4096 rows; their M tiles are as many at every M of
            # the range), into as many K slices as one wave of one CTA per SM holds). And for 16-bit operands'
            # tiles of more than 32 tokens on dense layers whose grid leaves half the SMs idle at the range's first
            # M, at any M (IDLE_SPLIT_16: narrow layers at large M; the launcher splits each M's grid as far as one
            # wave holds)
            if lo > 64:
                tiles = -(-padded_n(layer.n) // nominal.bn) * -(-lo // nominal.bm)
                wide = (nominal.bm >= 128 if not recipe.op8 else 2048 < layer.n <= 4096
                        or (nominal.bm >= 128 and lo <= 128 and layer.n > 4096))
                any_range = IDLE_SPLIT_16 and not recipe.op8 and not layer.is_moe and nominal.bm > SPLIT_K_BM
                idle = sms and 2 * tiles <= sms and ((wide and lo <= 256) or any_range)
                split = {"split_k": sms // tiles} if idle else split_config(nominal)
        fitted = fit_tile(nominal, recipe, smem, kp)
        if fitted.wgmma and sms and -(-padded_n(layer.n) // fitted.bn) * -(-lo // fitted.bm) > sms:
            fitted = wgmma_pair(fitted, recipe, smem)  # (more CTAs than SMs from the range's first M on)
            fitted = decode_depth(fitted, recipe, smem)
        fitted = byte_depth(fitted, recipe, smem)
        if wg and fitted.stream == 4 and recipe.bits == 2 and hi == 1 and layer.n <= 4096 and kp > 4096:
            # (one token of 2-bit codes on at most 4096 rows over a longer K: the 16-warp ring of one CTA per SM, as
            # 3-bit codes there; H200, int2 g128, 4096x14336, kernel alone 8.38 us against 9.90 for the eight-warp
            # ring (s44a); H100 through the bench, two rounds, 7.65-7.66 against 8.54-8.55 in groups of 128 and
            # 7.74-7.77 against 8.61 per channel (s44b, fifty-third session))
            fitted = fit_tile(DECODE_INT3, recipe, smem, kp)
        if fitted.stream == 3 and fitted.stages < 4:  # too little shared memory for a useful ring
            fitted = fit_tile(shape_stream_tile(t, layer.n, kp, sms), recipe, smem, kp)
        if moe_rings and fitted.stream and lo <= RING_DECODE_MAX:  # (decode touching tens of experts: one row per
            # block, direct routing's calls; 2-8, the routed ones)
            fitted = fit_tile(MOE_DECODE_INT4 if hi == 1 else MOE_ROUTED_INT4, recipe, smem, kp)
            direct_tile = direct_tile or hi == 1
        # (three slots where four need a stack; the sizing recipe with the layer's MoE and activation scale)
        if four_slots_spill(replace(recipe, moe=layer.is_moe,
                                    act_scale=recipe.act_scale or int(layer.activation.is_quantized)),
                            fitted, caps.has("cp_async")):
            fitted = fit_tile(replace(fitted, stages=3), recipe, smem, kp)
        if layer.is_moe:
            fitted = moe_tile(fitted, recipe, smem, kp)
        cfg = {**fitted.to_dict(), **split}
        if out and dict(out[-1].config) == cfg:  # neighbouring ranges with one tile: one range
            out[-1] = MRange(out[-1].lo, hi, cfg)
        else:
            out.append(MRange(lo, hi, cfg))
    if layer.is_moe and len(out) > 1 and out[0].hi == 1 and not direct_tile:  # (a routed MoE block gets at least
        # two rows, humming.ops.moe.tokens_per_expert: the next range's tile serves from one -- direct routing's calls,
        # one row per block, too -- unless the one-row range has an MoE tile of its own)
        out[:2] = [MRange(1, out[1].hi, out[1].config)]
    return out


_tuning_of = tuning  # (the planner's tuning, for tuning_candidates, whose parameter takes the name)


#: byte operands (int8 activations), from H200 sweeps (scripts/gpu_sweep.py --act int8, 8192x8192):
#: 9-32 tokens: 64-row CTAs (W4A8 M=16 27.0 -> 22.8 us); more than 128 tokens: 128 x 128 CTAs of
#: 2 x 4 warps, BK of 64 units (W4A8 M=256 85.9 -> 82.8 us, M=2048 667 -> 651; W8A8 int8 per
#: channel M=256 139 -> 102)
BYTE_TILE_16 = Tile(16, 64, 256, 1, 4, 2, 4)
#: decode of int4 codes on the int8 MMA over K > 4096 values (shorter K: BYTE_DECODE_INT4_SHORT_K):
#: the lean shared-memory ring, 16 warps of 2 x 8 (H200, gpu_sweep.py --act int8, M=1, kernel
#: alone: 8192x8192 16.0 -> 14.65 us, 1.14x the stream time; 28672x8192 48.7 -> 42.4;
#: 4096x4096 takes the short-K tile: 9.73 -> 6.58)
BYTE_DECODE_INT4 = Tile(8, 32, 512, 1, 2, 8, 8, stream=3, occupancy=2)
BYTE_TILE_LARGE = Tile(128, 128, 64, 2, 4, 1, 4)


def byte_tile(tile: Tile, lo: int | None = None, hi: int | None = None, n: int | None = None) -> Tile:
    """The tile of byte-operand kernels for the M range [lo, hi] whose 16-bit tile is ``tile``
    (layers of ``n`` rows): the swept ones above, else warp tiles of at most 32 tokens (they
    keep int32 partial sums beside the fp32 accumulators: twice the warps along M; 64-token
    warps spill on sm_90). Layers of at most 4096 rows keep 64-token CTAs above 128 tokens
    (128 x 128 CTAs leave SMs idle there: W4A8 4096x14336 M=256 took 146 us)."""
    if tile.stream:
        return tile
    if lo is not None and lo > 128 and (n is None or n > 4096):
        return BYTE_TILE_LARGE
    if (lo, hi) == (9, 32):
        return BYTE_TILE_16
    if tile.bm // tile.wm <= 32:
        return tile
    return replace(tile, wm=tile.wm * 2)


#: byte operands in groups of half a block (half_block_groups) above 128 tokens on mma.sync: 128 x 64 CTAs of 4 x 2
#: warps, 32 tokens by 32 rows each (BYTE_TILE_LARGE's warps hold 64 tokens)
BYTE_TILE_LARGE_HALF = Tile(128, 64, 64, 4, 2, 1, 4)


def half_group_byte_tile(tile: Tile) -> Tile:
    """The byte tile above 128 tokens for group scales over halves of 64-unit blocks (int4 / int2 / int8 codes in
    groups of 32 or 64 values), which keep a second int32 partial set per block. Compiled for sm_80 / sm_89 /
    sm_100a, BYTE_TILE_LARGE then spilled 24-104 bytes (5-24 local accesses a loop turn) in groups of 32, and
    in groups of 64 sat at 254-255 registers (uint4 with zero points x e4m3 on sm_89: 16 bytes, two accesses);
    the 64-token tile of BK = 128 on at most 4096 rows spilled 8-16 bytes (one). BYTE_TILE_LARGE_HALF and BK = 64
    compile to 158-220 registers without local memory. Not timed: chips without warpgroup MMAs only (Hopper takes
    byte_wgmma_tile). (Above 128 tokens: no stream tiles.) Groups of 32 values (a quarter block: two folds a
    block) take BK = 64 from 33 tokens on: the 32- and 64-token tiles of BK = 128 (32-token by 32-row warps) reached
    255 registers on sm_80 and spilled 8-32 bytes, one to six accesses a loop turn for int4 / int2 / uint4 with
    zero points (seventy-ninth session; sm_89 compiled at 230-244 registers). BK = 64 takes one warp along K."""
    if tile == BYTE_TILE_LARGE:
        return BYTE_TILE_LARGE_HALF
    return replace(tile, bk=min(tile.bk, 64), wk=1)


def shape_stream_tile(tile: Tile, n: int, kp: int, sms: int | None) -> Tile:
    """A stream tile over a short K (at most 4096 columns: short runs per warp)
    splits its warps between N and K so that the layer has about two CTAs per SM
    (BN of 16, 32 or 64 rows, the same number of warps): the count nearest that among
    those within it (one wave), where there is one. Longer K, or an unknown
    SM count, keeps the tile. (H200 sweep, int4 g128, M=1: 4096x4096 is fastest
    with BN=16, 14336x4096 with BN=64, 8192x8192 and 28672x8192 with the default 32.
    The nearest count past two per SM left a partial second wave: H100, int4 g128 fp16, M=1,
    through the bench, two rounds alike, us, the nearest -> within (gpu_run.sh s60c): 4608x3584
    288 16-row CTAs for 264 places 6.34 -> 5.21 with 144 of 32 rows, 5120x4096 6.77 -> 5.66,
    9216x3072 288 of 32 rows 8.77 -> 7.39 with 144 of 64, 10240x4096 320 -> 160, 11.35 -> 9.65;
    4096x4096, 6144x4096 and 14336x4096 kept their tiles. 5120x4096 has the A100 4096x4096's
    ratio, 256 CTAs for 216 places, which moves the same way: not measured on an A100.)"""
    if not tile.stream or kp > 4096 or not sms:
        return tile
    warps = tile.wn * tile.wk
    np_ = padded_n(n)
    options = [w for w in (1, 2, 4) if warps % w == 0]
    within = [w for w in options if np_ // (16 * w) <= 2 * sms] or options
    wn = min(within, key=lambda w: (abs(np_ / (16 * w) - 2 * sms), w != tile.wn))
    return split_warps(tile, wn)


def split_warps(tile: Tile, wn: int) -> Tile:
    """A stream tile's warps split ``wn`` along N (16 rows each) and the rest along K (64 columns each)."""
    warps = tile.wn * tile.wk
    return replace(tile, bn=16 * wn, wn=wn, wk=warps // wn, bk=64 * (warps // wn))


#: The short-K ring's slots for its 16-row form with group scales of 128 columns: eight, where DECODE_INT4_SHORT_K
#: has four. In fp16 it spills nothing there (sm_80, sm_86, sm_89, sm_90a, sm_100a, sm_120a, int4 and uint4 with
#: zero points; groups of 256 do), in bf16 on sm_80, sm_90a and sm_120a only (sm_86, sm_89 and sm_100a spilled 2-22
#: accesses in the loop), so bf16 keeps eight on Hopper, where it had them before (not measured). Through the bench
#: (programmatic launches: a launch loads its ring's first blocks before it waits for the previous kernel) eight ran
#: faster (H200, int4 g128 fp16 4096x4096 M=1: 4.06 us with eight slots, 4.36 with four; kernel alone 5.43 and 5.38)
SHORT_K_DEEP_STAGES = 8


def short_k_ring(tile: Tile, recipe: "Recipe", hopper: bool = False) -> Tile:
    """The short-K int4 ring as shape_stream_tile shaped it: eight slots on 16 rows of groups of 128 columns in
    fp16, or in bf16 on Hopper (SHORT_K_DEEP_STAGES); twice the rows (up to 64) for group scales of 16 or 32
    columns, so that each warp runs half as many columns per turn, so half the scale entries (H200,
    gpu_sweep.py i4ch, M=1, kernel alone, four slots, us, shape_stream_tile's rows -> twice: int4 g16
    4096x4096 9.45 -> 6.66, 8192x4096 11.99 -> 10.36, 4096x2048 6.75 -> 4.86; g32 8.21 -> 5.91, 10.25 ->
    9.09, 5.84 -> 4.31; groups of 64 and 128 lose with them: g64 5.38 -> 6.89 and 7.75 -> 9.36)."""
    if tile.wn == 1 and recipe.gscale and recipe.group == 128 and (not recipe.bf16 or hopper):
        return replace(tile, stages=SHORT_K_DEEP_STAGES)
    if not recipe.gscale or recipe.group % 64 == 0 or tile.wn >= 4:
        return tile
    return split_warps(tile, 2 * tile.wn)


#: One token of int4 codes over a long K on Hopper, on layers of at most two 16-row CTAs per SM: the short-K ring
#: of 16 rows and one warp per K run (short_k_ring's form: eight slots for groups of 128 columns, else four), where
#: DECODE_INT4_LONG_K's 32-row CTAs split K twice as many ways. H100, M = 1, through the bench, us, DECODE_INT4_LONG_K
#: before -> this ring with the launches' split rounded down (Launcher.stream_split; gpu_run.sh s59b, s59a): int4 g128
#: fp16 1024x8192 6.0 -> 5.17, 1536x8192 7.42 -> 4.61, 2048x8192 6.46 -> 5.25, 2560x8192 7.03 -> 6.10, 3072x8192
#: 10.7 -> 6.5, 4096x8192 7.9 -> 7.46, 4224x8192 8.0 -> 7.6, 1024x14336 7.1 -> 6.3, 4096x14336 12.1 -> 12.0-12.1
#: (four slots 11.8-11.9); bf16 2048x8192 6.44 -> 5.54, 4096x14336 12.3 -> 12.3 (four slots 12.7); per channel
#: 6.65 -> 5.61, 12.4 -> 12.1. Groups of 64 and 32 lost (uint4 g64 with zero points, 4096x14336: 15.0 -> 18.2; int4
#: g32 13.4 -> 18.9), and so did wider layers (8192x8192 kernel alone, s58w: 14.35 -> 15.72). 2-8 tokens keep their
#: rings (not measured).
LONG_K_ONE_RING_MAX_CTAS_PER_SM = 2
#: ... but on chips of more memory bandwidth per SM than LONG_K_ONE_RING_BW_PER_SM_GBS, at most
#: LONG_K_ONE_RING_HIGH_BW_CTAS_PER_SM such CTAs per SM: there the 16-row ring's one warp per K run holds too few bytes in
#: flight once its CTAs crowd an SM. H200 (36 GB/s an SM against the H100's 25), int4 g128 fp16, M=1, through the
#: bench, two rounds alike, us, two CTAs per SM -> one (gpu_run.sh s67b): 4096x8192 6.76 -> 6.60-6.62, 4224x8192
#: 6.85-6.87 -> 6.66-6.67, 4096x14336 10.3 -> 9.73 (1.19 -> 1.12 x its stream), 3072x14336 9.70-9.71 -> 8.95-8.96;
#: 2560x8192 (160 CTAs on 132 SMs) kept the ring's gain: 5.78-5.79 against 6.27-6.28.
LONG_K_ONE_RING_BW_PER_SM_GBS = 30
LONG_K_ONE_RING_HIGH_BW_CTAS_PER_SM = 1.25


def long_k_one_ring_ctas_per_sm(caps) -> float:
    """The most 16-row CTAs per SM of a layer whose one token over a long K takes the 16-row ring (above): by the
    chip's memory bandwidth per SM where its product table gives both, else LONG_K_ONE_RING_MAX_CTAS_PER_SM."""
    prod = caps.product
    if prod is not None and prod.bandwidth_gbs and prod.sm_count and \
            prod.bandwidth_gbs / prod.sm_count > LONG_K_ONE_RING_BW_PER_SM_GBS:
        return LONG_K_ONE_RING_HIGH_BW_CTAS_PER_SM
    return LONG_K_ONE_RING_MAX_CTAS_PER_SM


#: ... and 2 to RING_LONG_MAX tokens of such layers with at most one 16-row CTA per SM (at most 2048 rows on 132
#: SMs, padded_n), where DECODE_INT4_LONG_K took them before. H100, int4 g128 fp16, K = 8192, through the bench, two
#: rounds alike, us, M = 2 / 4 / 6, DECODE_INT4_LONG_K -> this ring (gpu_run.sh s59e): 1024 rows 6.13 / 6.47 / 6.53 ->
#: 5.50 / 5.94 / 6.38, 1536 6.30 / 6.50 / 6.69 -> 4.72 / 5.11 / 5.56, 2048 6.62 / 6.78 / 6.94 -> 5.51 / 5.90 / 6.39;
#: one round (s60a): 2048x14336 9.00 / 9.19 / 9.45 -> 8.23 / 8.67 / 9.36, 1536x5120 5.39 / 5.54 / 5.60 -> 4.09 / 4.40 /
#: 4.76, bf16 2048x8192 6.68 / 6.81 / 6.97 -> 5.81 / 6.36 / 6.98, per channel 6.88 / 7.03 / 7.21 -> 5.88 / 6.11 /
#: 6.44; 1024x14336 7.31 / 7.62 / 7.75 -> 7.08 / 7.58 / 8.01. Wider layers lost at six tokens (3072 rows 7.61 ->
#: 7.84, 4096 8.40 -> 8.92: each CTA stages all its tokens' K, so the activations read from L2 grow with the CTAs),
#: and 4096x14336 from four (12.6 -> 18.0: four tokens' K outgrew a CTA's share of shared memory, so the launch split
#: K into a second wave). 7-8 tokens on it were mixed (s60a: 2048x8192 7.16 -> 6.61-6.86, 1024x14336 7.98 ->
#: 8.28-8.45): the window ring keeps them.
LONG_K_FEW_RING_MAX_CTAS_PER_SM = 1


def long_k_16_row_ring(layer, recipe: Recipe, kp: int, sms: int | None, tokens: int = 1,
                       one_per_sm: float = LONG_K_ONE_RING_MAX_CTAS_PER_SM) -> bool:
    """Whether ``tokens`` tokens (1, or 2 to RING_LONG_MAX) of this layer take the 16-row ring of one warp per K run
    over its long K on Hopper (above; the caller checks the chip; ``one_per_sm``: the chip's cap for one token,
    long_k_one_ring_ctas_per_sm)."""
    per_sm = one_per_sm if tokens == 1 else LONG_K_FEW_RING_MAX_CTAS_PER_SM
    return (not layer.is_moe and recipe.bits == 4 and raw_codes(recipe) and kp > 4096 and tokens <= RING_LONG_MAX
            and bool(sms) and padded_n(layer.n) // 16 <= per_sm * sms
            and (not recipe.gscale or recipe.group % 128 == 0))


def shape_mid_tile(tile: Tile, n: int, sms: int | None) -> Tile:
    """The 33-64 token tile by the layer's count of 128-row blocks against the SM count
    (H200 sweeps, int4 g128, M=64, 1 CTA per SM before split-K): at most a quarter of
    the SMs' worth (N <= ~4.2k) -> the 16-token tile of the 9-32 range, split along K
    (4096x4096 35.9 -> 23.5 us, 4096x14336 60.6 -> 55.1); at least one per SM
    (N >= ~17k) -> 64 tokens per CTA, each weight tile dequantized once (28672x8192
    171 -> 131 us); in between the 32-token tile with K split over two warps too
    (8192x8192: 62.0 -> 53.3 us). Unknown SM count: kept."""
    if not sms or tile.stream:
        return tile
    blocks = -(-n // 128)
    if 4 * blocks <= sms:
        return TILE_16
    if blocks >= sms:
        return TILE_64
    return TILE_32_WK2


#: the most stages fit_tile gives a warpgroup tile whose tokens it halved (WG_256 of 6-8-bit codes: 128 tokens at
#: three stages took 161.5 / 127.8 us at M=512 on 8192x8192 / 4096x14336 where WG_128's four took 126.2 / 99.3,
#: e4m3 per channel, H200, gpu_run.sh s38n; int8 alike)
WG_FEWER_TOKENS_STAGES = 4


def moe_fp8_rows(layer, recipe: Recipe, lo: int) -> int:
    """The rows whose warpgroup tile an M range starting at ``lo`` takes: ``lo``, but for fp8 operands of MoE
    layers at 9-16 rows per expert, which take the 17-32 range's tile (32 rows: H100, HUMMING_MOE_BYTE_WGMMA=1, fp8
    per channel x e4m3, 128 experts top-8, `humming tune`, us at 9 / 16 rows per expert: Qwen3-30B-A3B's down
    2048x768 125.6 / 135.0 against 161.7 / 214.6 for the 16-row tile, gate/up 1536x2048 193.2 / 203.9 against
    196.2 / 265.8; the 16-row tile's blocks fold every 128 values behind a wait, and experts of more than 16 rows
    take two of them)."""
    return 17 if layer.is_moe and recipe.op8 in (2, 3) and lo == 9 else lo


def moe_tile(tile: Tile, recipe: Recipe, max_smem: int, kp: int = PAD_K) -> Tile:
    """``tile`` as an MoE kernel runs it: its stages load by cp.async and one CTA covers one tile. Stream-K
    cannot run MoE (a CTA's run of the tile x K-step space crosses blocks of different experts); TMA stages
    and N clusters could (the weight copies would take the block's expert as the cp.async ones do), but are
    left to the cp.async twins until measured. The 128-token byte tiles of groups of half a block
    (half_block_groups) take 64 tokens instead: their cp.async twin spills in its loop (255 registers, 24-48
    bytes of stack on sm_90a) and was the slowest of their tiles (dense, H200, W4A8 uint4 g64 zero points,
    kernel alone, M = 256 / 1024 on 8192x8192: 93.3 / 362 us against 72.4 / 283 for the 64-token tile with
    cp.async stages, 65.8 / 258 for the 128-token one with TMA; half_block_groups' figures)."""
    if not (tile.tma or tile.cluster != 1 or tile.sk or tile.kg != 1):  # (groups along K: not tested on MoE)
        return tile
    base = replace(tile, tma=0, cluster=1, sk=0, kg=1)
    if tile.wgmma and tile.bm == 128 and half_block_groups(recipe):
        base = replace(base, bm=64)
    return fit_tile(base, recipe, max_smem, kp)


def fit_tile(tile: Tile, recipe: Recipe, max_smem: int, kp: int = PAD_K) -> Tile:
    """Adapt a tile to a layer: BK must divide the padded K (``kp``, in kernel K units:
    ``PackedWeight.kp // recipe.ku``); then fewer stages (then a narrower BK, then
    fewer tokens) until it fits the shared-memory limit (``max_smem`` per block,
    less the kernel's own static bytes)."""
    max_smem -= STATIC_SMEM_BYTES
    t = tile
    if t.stream:  # K slices of any length: the launcher keeps each launch within smem_bytes
        fp = ring_fold_period(recipe)
        if t.stream == 4:  # register slots: whole fold chunks
            t = replace(t, stages=max(2, -(-t.stages // fp) * fp))
        if t.stream == 3:  # a ring holds about `stages` 4-bit blocks' bytes per warp, in whole fold chunks
            want = max(2, fp, round(t.stages * 4 / recipe.wpl))
            t = replace(t, stages=max(fp, want // fp * fp))

            def per_sm(t):  # `occupancy` CTAs with their rings and partial tiles, or their smallest K slice
                slice_min = t.wk * ring_slice_step(recipe, t)
                head = max(t.bm * slice_min * 128, stream_red_bytes(t)) + 1024 + STATIC_SMEM_BYTES
                return t.occupancy * (head + stream_ring_bytes(t, recipe))
            # (an SM has about the opt-in block limit plus the 1 KB reserved per block)
            while per_sm(t) > max_smem + 1024 + STATIC_SMEM_BYTES and t.stages - fp >= max(2, fp):
                t = replace(t, stages=t.stages - fp)
            while per_sm(t) > max_smem + 1024 + STATIC_SMEM_BYTES and t.occupancy > 1:
                t = replace(t, occupancy=t.occupancy - 1)
        while t.stream == 3 and smem_bytes(recipe, t) > max_smem and t.stages - fp >= max(2, fp):
            t = replace(t, stages=t.stages - fp)  # a shallower ring (whole fold chunks)
        if smem_bytes(recipe, t) > max_smem:
            raise UnsupportedError(f"no mma_sync tile fits {max_smem} bytes of dynamic shared memory",
                                   [f"stream tile {t.to_dict()} needs {smem_bytes(recipe, t)} bytes"])
        return t
    if t.wgmma:  # BK 256 where it divides the padded K, else 128 (K is padded to it); then fewer stages
        # (down to 3), then fewer tokens, at as many stages as they leave room for (up to WG_FEWER_TOKENS_STAGES)
        if kp % t.bk:  # (as many bytes in the ring: twice the stages, TMA's at most 8)
            t = replace(t, bk=128, stages=min(2 * t.stages, 8) if t.tma else 2 * t.stages)
        while smem_bytes(recipe, t) > max_smem and (t.stages > 3 or t.kg > 1 or t.bm > 16):  # (then fewer groups along K)
            t = (replace(t, stages=t.stages - 1) if t.stages > 3 else replace(t, kg=t.kg - 1) if t.kg > 1
                 else replace(t, bm=t.bm // 2))
        while t.bm < tile.bm and t.stages < WG_FEWER_TOKENS_STAGES and smem_bytes(
                recipe, replace(t, stages=t.stages + 1)) <= max_smem:  # (fewer tokens: the stages they leave room for)
            t = replace(t, stages=t.stages + 1)
        if smem_bytes(recipe, t) > max_smem:
            raise UnsupportedError(f"no mma_sync tile fits {max_smem} bytes of dynamic shared memory",
                                   [f"wgmma tile {t.to_dict()} needs {smem_bytes(recipe, t)} bytes"])
        return t
    while kp % t.bk:
        t = replace(t, bk=t.bk // 2, wk=max(1, min(t.wk, t.bk // 128)))
    while smem_bytes(recipe, t) > max_smem:
        if t.stages > 2:
            t = replace(t, stages=t.stages - 1)
        elif t.bk > 64 and (t.bk // 2 // 64) % t.wk == 0 and kp % (t.bk // 2) == 0:
            t = replace(t, bk=t.bk // 2)
        elif t.wk > 1 and t.bk > 64:  # then BK can halve
            t = replace(t, wk=t.wk // 2)
        elif t.bm >= 16 * t.wm:
            t = replace(t, bm=t.bm // 2)
        elif t.bm >= 16 and t.wm > 1:
            t = replace(t, bm=t.bm // 2, wm=t.wm // 2, wn=t.wn * 2 if t.bn % (32 * t.wn) == 0 else t.wn)
        else:
            raise UnsupportedError(f"no mma_sync tile fits {max_smem} bytes of dynamic shared memory",
                                   [f"tile {t.to_dict()} needs {smem_bytes(recipe, t)} bytes"])
    return t


def wgmma_pair(tile: Tile, recipe: Recipe, max_smem: int) -> Tile:
    """A fitted warpgroup tile of 16-bit operands whose weight codes are wider than 4 bits, on a layer whose
    grid has more CTAs than SMs from its range's first M on (tuning): two CTAs per SM where its form for 4-bit
    codes (the width the tiles were sized on) holds two or more, by fewer stages, down to 3 (tiles of BK = 128;
    ``max_smem``: the opt-in limit per block; an SM holds about 1 KB more). 8-bit codes: WG_16_TWO six -> five
    stages, WG_64 four -> three. Measured (H200, per channel, us; gpu_run.sh occ2: the bench, this rule applied
    to every grid against none, two rounds):

    * e4m3 28672x8192 (224 CTAs, two waves at one per SM): M=16 76.5 / 76.5 -> 70.7 / 70.6, M=64 90.4 / 87.0
      -> 83.2 / 86.6 (kernel alone, gpu_sweep.py occ8_64: 88.4 -> 85.9; int8 90.2 -> 84.8); 14336x4096 M=128
      (224 CTAs) 45.9 / 46.4 -> 39.4 / 39.4.
    * Grids of at most one CTA per SM lose the stage: 8192x8192 M=128 (128 CTAs) 40.9 -> 66.3, int8 g128 43.2 ->
      69.7; 4096x14336 M=256 66.4 -> 106 -- one CTA with one stage in flight (LEAD) cannot keep the SM's
      copies going.

    (Applied again, or fitted again, the result does not change.)"""
    if recipe.op8 or recipe.wpl <= 4 or tile.bk != 128 or not tile.wgmma:  # (BK = 256 tiles: not measured so)
        return tile
    if ctas_by_smem(recipe, tile, max_smem) >= 2 or ctas_by_smem(replace(recipe, bits=4), tile, max_smem) < 2:
        return tile
    for stages in range(tile.stages - 1, 2, -1):
        t = replace(tile, stages=stages)
        if ctas_by_smem(recipe, t, max_smem) >= 2:
            return t
    return tile


def ctas_by_smem(recipe: Recipe, tile: Tile, max_smem: int) -> int:
    """CTAs of ``tile`` that an SM's shared memory holds (``max_smem``: the opt-in limit per block; an SM
    holds about 1 KB more, and each CTA takes 1 KB of the driver's besides its own)."""
    return (max_smem + 1024) // (smem_bytes(recipe, tile) + STATIC_SMEM_BYTES + 1024)


#: the fewest stages byte_depth leaves a small byte tile
BYTE_MIN_STAGES = 3


def byte_depth(tile: Tile, recipe: Recipe, max_smem: int) -> Tile:
    """A fitted 8-token warpgroup tile of byte operands (8-bit codes: a 128-unit stage holds 256 values, twice
    the bytes of a 16-bit stage) with fewer stages, down to BYTE_MIN_STAGES, until two CTAs share an SM by shared
    memory; other tiles as they are. With eight stages BYTE_WG_DECODE of 8-bit codes took 145 KB, one CTA per
    SM, so a 14336-row layer's 224 CTAs ran in two waves (H200, gpu_run.sh s42b, the bench, two rounds, us, M =
    1 / 8, six stages against eight: e4m3 x e4m3 per channel 14336x4096 22.0 / 22.1 against 27.3 / 27.7,
    28672x8192 72.4 / 71.0 against 80.1 / 79.7, 8192x8192 24.7 / 25.0 against 25.1 / 25.7, 4096x14336 25.1 /
    25.5 against 24.8 / 25.1; int8 x int8 per channel 21.9 / 22.3 against 27.8 / 28.0, 71.0 / 69.3 against 82.1
    / 80.9). The 16-token tiles gained 2-4 % the same way but lost 8 % on 4096x14336 (30.0 against 27.9 us)."""
    if not recipe.op8 or not tile.wgmma or tile.tma or tile.bm > 8 or ctas_by_smem(recipe, tile, max_smem) >= 2:
        return tile
    t = tile
    while t.stages > BYTE_MIN_STAGES and ctas_by_smem(recipe, t, max_smem) < 2:
        t = replace(t, stages=t.stages - 1)
    return t if ctas_by_smem(recipe, t, max_smem) >= 2 else tile


#: the stages of the 128-row decode tile (WG_DECODE_TWO) with folded group scales on layers of more such tiles
#: than SMs, where its CTAs per SM allow: one more stage of weights in flight per CTA (H200, gpu_run.sh wgdec and
#: depth, the bench, alternated, us, four -> five stages: int4 g128 28672x8192 M=1 34.9 / 34.9 / 35.3 / 35.1 ->
#: 34.4 / 34.5 / 34.8 / 34.8, M=4 32.4 / 32.3 -> 32.0 / 32.0, M=8 32.4 / 32.5 / 32.8 / 32.7 -> 32.3 / 32.3 / 32.5
#: / 32.4; e2m1 g32 on 14336x4096, scales not folded and K split in two, lost: M = 4, 8 14.4 -> 14.8-14.9; the
#: 64-row tile lost too: 35.0 and 46 at M=1 at four and five stages)
DECODE_TWO_STAGES = 5


def decode_depth(tile: Tile, recipe: Recipe, max_smem: int) -> Tile:
    """A fitted 1-8 token warpgroup tile of 128 rows (WG_DECODE_TWO) of 16-bit operands with folded group scales,
    on a layer of more such tiles than SMs (tuning), with DECODE_TWO_STAGES stages where that keeps two or more
    CTAs per SM by shared memory (``max_smem``: the opt-in limit per block; an SM holds about 1 KB more): int4 and
    uint4 g128, not int2 (four CTAs per SM -> three) or int5 (two -> one); other tiles as they are. (Applied
    again, the result does not change.)"""
    if (not tile.wgmma or not tile.fold or recipe.op8 or tile.bm != 8 or tile.bn != 128 or tile.bk != 256
            or tile.stages >= DECODE_TWO_STAGES):
        return tile
    deeper = replace(tile, stages=DECODE_TWO_STAGES)
    return deeper if ctas_by_smem(recipe, deeper, max_smem) >= max(2, ctas_by_smem(recipe, tile, max_smem)) else tile


def tile_from_config(cfg) -> Tile | None:
    keys = ("bm", "bn", "bk", "wm", "wn", "wk", "stages")
    if all(k in cfg for k in keys):
        return Tile(*(int(cfg[k]) for k in keys), l2_prefetch=int(cfg.get("l2_prefetch", 0)),
                    stream=int(cfg.get("stream", 0)), occupancy=int(cfg.get("occupancy", 1)),
                    wgmma=int(cfg.get("wgmma", 0)), tma=int(cfg.get("tma", 0)),
                    chains=int(cfg.get("chains", 1)), fold=int(cfg.get("fold", 0)),
                    cluster=int(cfg.get("cluster", 1)), xwin=int(cfg.get("xwin", 0)),
                    sk=int(cfg.get("sk", 0)), kg=int(cfg.get("kg", 1)))
    return None


def gemm_defines() -> tuple:
    """``HUMMING_GEMM_DEFINES``: preprocessor defines (NAME or NAME=VALUE, separated by commas or spaces) added to
    the build of every mma.sync GEMM kernel of a weight prepared while it is set, for diagnostic variants of the
    kernels that are not planned (e.g. HUMMING_LAZY_CORR, gemm_mma_sync.cuh), timed against the plain build
    by gpu_run.sh's envbench and checked by their GPU tests. Unset or empty: none."""
    import re

    out = []
    for item in os.environ.get("HUMMING_GEMM_DEFINES", "").replace(",", " ").split():
        name, _, value = item.partition("=")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or "\n" in value:
            raise ValueError(f"HUMMING_GEMM_DEFINES: expected NAME or NAME=VALUE items (a C identifier), got {item!r}")
        out.append((name, value or "1"))
    return tuple(out)


def recipe_from_plan(plan, hw) -> Recipe:
    c = plan.compute
    layer = kernel_layer(plan.layer, c)
    op8 = _op8(c)
    if c.a not in ("fp16", "bf16") and not op8:
        raise UnsupportedError(f"the mma_sync GEMM in this version computes in fp16/bf16, int8 or fp8; the plan "
                               f"asks for {c.a} x {c.b} operands", [f"{c.a} x {c.b} MMA is not implemented yet"])
    act = layer.activation
    # (dynamic_group on 16-bit operands: the per-row power of two the group scales are folded over; on byte
    # operands the group scales themselves, folded with each block's sums)
    act_scale = {"dynamic_token": 1, "dynamic_group": 3 if op8 else 1, "static_tensor": 2}.get(act.quant, 0)
    comps = plan.components
    caps = hw.caps
    compiler = "nvrtc" if caps.targets.get("nvrtc") else "nvcc"
    target = hw.compile_target(compiler)
    recipe = recipe_for(layer.weight, bf16=(c.a == "bf16"), out_bf16=(layer.out_dtype == "bf16"),
                        caps_cp_async=str(comps.get("loader", "cp_async")).startswith("cp_async"),
                        k8mma="m16n8k8" in str(comps.get("mma", "")), target=target, act_scale=act_scale,
                        has_bias=layer.bias, op8=op8, fcvt=comps.get("dequantizer") == "native_cvt",
                        agroup=act.group_size or 0, fp8_split=comps.get("dequantizer") == "int_bittrick_split",
                        defines=gemm_defines())
    if layer.is_moe:  # (each expert's output multiplier rides on its channel multipliers: pack_moe_weight)
        recipe = replace(recipe, has_chan=True, moe=True)
        if moe_gathers_rows(plan.layer, c):
            recipe = replace(recipe, xgather=True)
    return recipe


def moe_gathers_rows(layer, compute) -> bool:
    """Whether the MoE GEMM of ``layer`` reads each routed row from its token's row of x (Recipe.xgather): with
    HUMMING_MOE_XGATHER on (moe_xgather_enabled), 16-bit activations that are not quantized, on 16-bit operands,
    in the layer's own columns (no act order, no padded or K-shard groups: their rows are written first, by the
    gather, quantized or in the kernels' columns)."""
    return (layer.is_moe and moe_xgather_enabled() and not _op8(compute) and not layer.activation.is_quantized
            and not layer.weight.act_order and kernel_layer(layer, compute) is layer)


def ranges_from_plan(plan, recipe: Recipe, max_smem: int, kp: int):
    """``[(lo, hi, Tile)]`` from the plan's tuning, fitted to the device (DEFAULT_RANGES
    when the tuning holds no tiles)."""
    return [(lo, hi, tile) for lo, hi, tile, _ in launch_ranges(plan, recipe, max_smem, kp)]


def launch_ranges(plan, recipe: Recipe, max_smem: int, kp: int):
    """``[(lo, hi, Tile, most K slices)]``: the ranges and the split-K cap of each."""
    out = []
    for r in plan.tuning:
        tile = tile_from_config(r.config)
        if tile is None:
            break
        out.append((r.lo, r.hi, fit_tile(tile, recipe, max_smem, kp), int(r.config.get("split_k", 1))))
    else:
        if out:
            return out
    return [(lo, hi, fit_tile(t, recipe, max_smem, kp), split_config(t).get("split_k", 1))
            for lo, hi, t in DEFAULT_RANGES]


def plan_kp(plan, recipe: Recipe) -> int:
    """The prepared weight's K in kernel units under ``plan`` (scale groups padded as the kernels take them)."""
    return padded_k(kernel_layer(plan.layer, plan.compute).k, recipe) // recipe.ku


def prepare(plan, qw, device, hw):
    """Family entry: (PackedWeight, Launcher) for ``qw`` under ``plan`` on ``device``."""
    recipe = recipe_from_plan(plan, hw)
    packed = (pack_moe_weight if recipe.moe else pack_weight)(qw, recipe, device)
    return packed, launcher_for(plan, packed, hw)


def launcher_for(plan, packed, hw) -> Launcher:
    """The Launcher ``prepare`` builds for ``packed`` (a PackedWeight, or anything with its ``recipe`` and ``np_``:
    the Launcher checks the plan's tiles against those before any launch, so the CPU tests build it over a stand-in)
    under ``plan`` on ``hw``. MoE launches sum their K slices through the workspace (no clusters); programmatic ones
    wait first (moe_pdl_enabled)."""
    recipe = packed.recipe
    ranges = launch_ranges(plan, recipe, int(hw.max_smem_per_block or _max_smem(hw.caps)), plan_kp(plan, recipe))
    return Launcher(packed, [r[:3] for r in ranges], hw.sm_count, max_split=[r[3] for r in ranges],
                    smem_per_sm=hw.caps.limit("smem_per_sm"),
                    pdl=(moe_pdl_enabled if recipe.moe else pdl_enabled)(hw.caps),
                    cluster_split=0 if recipe.moe else cluster_split_limit(hw.caps))


def prepare_as(plan, qw, device, here, there):
    """(tests, scripts) (PackedWeight, Launcher) for ``qw`` under ``plan``, made for ``there`` (another GPU): its
    ranges compiled for ``here`` (this GPU), fitted to ``there``'s shared memory, launched as ``there`` would launch
    them (its SM count for the grids; plain launches, no clusters), so that this GPU runs the code and the launches
    ``there`` would."""
    recipe = recipe_from_plan(plan, here)
    ranges = launch_ranges(plan, recipe, int(there.max_smem_per_block), plan_kp(plan, recipe))
    packed = (pack_moe_weight if recipe.moe else pack_weight)(qw, recipe, device)
    return packed, Launcher(packed, [r[:3] for r in ranges], there.sm_count, max_split=[r[3] for r in ranges],
                            smem_per_sm=there.caps.limit("smem_per_sm"), pdl=False, cluster_split=0)


def pdl_enabled(caps) -> bool:
    """Whether GEMM launches use programmatic dependent launch: the capability file says ``pdl``
    (sm_90+) and ``HUMMING_PDL`` is not 0/off. (The kernels read the prepared weights before
    waiting for the previous kernel: a kernel that rewrites a prepared weight in place must be
    followed by a synchronization, or run with HUMMING_PDL=0.)"""
    return bool(caps.has("pdl")) and os.environ.get("HUMMING_PDL", "1").lower() not in ("0", "off", "false", "no")


def moe_xgather_enabled() -> bool:
    """Whether MoE weights of 16-bit activations (not quantized, without act order or padded scale groups) are
    prepared for kernels that read each routed row from its token's row of x (Recipe.xgather: GemmParams.x_rows,
    which the routing kernel writes, moe_route.cuh's XOFF), so that an MoE call launches no gather kernel and
    writes no copy of its rows: on unless ``HUMMING_MOE_XGATHER`` is 0/off, read when a plan is made and a weight
    prepared. (Its GPU tests passed on an H100, and the whole call ran 0.7-9.5 us faster at 1-256 tokens of
    Qwen3-30B-A3B's gate/up: docs/perf-notes.md, fiftieth session.)"""
    return os.environ.get("HUMMING_MOE_XGATHER", "1").lower() not in ("0", "off", "false", "no")


def moe_byte_wgmma_enabled(layer) -> bool:
    """Whether an MoE layer of fp8 operands plans the byte-operand warpgroup tiles on Hopper, as dense layers do,
    instead of 16-bit operands (bf16 wgmma on the weights converted in the kernel): fp8 weights by default, integer
    codes made fp8 operands (W4A8-FP8, DequantBytes::INT_FP8) only with ``HUMMING_MOE_BYTE_WGMMA=1``; ``0`` keeps
    every one on 16-bit operands (read when a plan is made). The kernels are the dense byte warpgroup tiles with
    the MoE loads (the block's expert's weights and scales, cp.async stages: moe_tile), as int8 MoE layers run
    them; GPU-tested (tests/test_moe.py, gpu_run.sh s56a). The whole call against 16-bit operands (H100, the
    bench, gpu_run.sh s56b, us; 128 experts top-8 at M = 1 / 16 / 256 / 4096 tokens, then 8 experts top-2):
    DeepSeek's fp8 blocks x e4m3 groups of 128, Qwen3-30B-A3B's gate/up 21.1 / 119 / 206 / 1037 against 21.6 /
    123 / 223 / 1322, down 18.5 / 81.4 / 135 / 757 against 20.9 / 86.5 / 152 / 955, 8x2x28672x4096 106 / 375 /
    644 / 5392 against 106 / 376 / 665 / 5665; fp8 per channel x e4m3 per token the same within 2 % but Qwen's
    down at 256 tokens, 135 against 126, and 11-15 % faster at 4096. W4A8-FP8 was mixed (down: 61.4 / 820 against
    49.7 / 703 us at 16 / 4096 tokens; 8x2x28672x4096 at 4096: 3888 against 4703), so it stays on 16-bit
    operands unless asked."""
    v = os.environ.get("HUMMING_MOE_BYTE_WGMMA", "").lower()
    if v in ("1", "on", "true", "yes"):
        return True
    if v in ("0", "off", "false", "no"):
        return False
    return layer.weight.is_float


def moe_pdl_enabled(caps) -> bool:
    """Whether an MoE call's launches (routing, gather, GEMM, combine: humming.ops.moe) go programmatically:
    where dense ones do (:func:`pdl_enabled`) unless ``HUMMING_MOE_PDL`` is 0/off. Every one of those kernels
    waits for the previous one before any access to memory (the tests check the machine code); the MoE GPU tests
    pass either way. H100, Qwen3-30B-A3B int4 g128 through the bench, off -> on, two rounds (fifty-third
    session), us, M = 1 / 4 / 16 / 64: gate/up 12.5-12.7 / 28.3 / 71.5-71.7 / 89.2-89.4 -> 11.8 / 27.6-27.7 /
    69.5-69.8 / 87.9-88.3, down 9.90-9.98 / 18.4 / 44.8-45.0 / 57.6 -> 9.16-9.19 / 17.7-17.8 / 41.5 / 54.2-54.3."""
    return pdl_enabled(caps) and os.environ.get("HUMMING_MOE_PDL", "1").lower() not in ("0", "off", "false", "no")


def cluster_split_limit(caps) -> int:
    """The most K slices a split-K launch runs as one thread-block cluster, whose CTAs sum the tile
    through distributed shared memory (GemmMmaSync::cluster_finish) instead of a global workspace,
    a fence, a counter and the last slice's loads: the capability file's portable cluster size
    where it says ``clusters`` (sm_90+), 0 elsewhere or with ``HUMMING_CLUSTER_SPLIT`` 0/off."""
    if not caps.has("clusters") or os.environ.get("HUMMING_CLUSTER_SPLIT", "1").lower() in ("0", "off", "false", "no"):
        return 0
    return int(caps.limit("portable_cluster_size") or 8)


def spec_for_plan(plan, m: int, hw=None):
    """Family entry: the KernelSpec a call with ``m`` tokens would compile (no GPU needed)."""
    from humming.device import get_device

    if hw is None:
        try:
            hw = get_device(plan.device)
        except Exception:  # a detected GPU's marketing name: its capability file will do
            hw = get_device(plan.device_chain[-1])
    recipe = recipe_from_plan(plan, hw)
    max_smem = int(hw.max_smem_per_block or _max_smem(hw.caps))
    kp = plan_kp(plan, recipe)
    for lo, hi, tile in ranges_from_plan(plan, recipe, max_smem, kp):
        if m >= lo and (hi is None or m <= hi):
            return kernel_spec(recipe, tile)
    raise ValueError(f"no M range holds m={m}")


# ---------------------------------------------------------------------------
# measured tuning (humming.tune): what a tuning database entry may hold, and what `humming tune` tries
# ---------------------------------------------------------------------------


def check_tuning(layer, caps, compute, tuning) -> list[str]:
    """Why a tuning (a tuning database entry's) cannot run this layer on this chip: one line per problem,
    none when it can. Each range must hold a tile config (:func:`tile_from_config`) the chip has the
    instructions and loads for, whose BN and cluster divide the padded rows, whose split-K cap is 1 to
    MAX_SPLIT_K, and which fits the chip's shared memory once fitted to the layer's K (fit_tile)."""
    layer = kernel_layer(layer, compute)
    recipe = _sizing_recipe(layer, compute, cp_async=caps.has("cp_async"))
    kp = padded_k(layer.k, recipe) // recipe.ku
    smem = _max_smem(caps)
    np_ = padded_n(layer.n)
    out = []
    for r in tuning:
        where = r.label()
        tile = tile_from_config(r.config)
        if tile is None:
            out.append(f"{where}: not a tile config (keys {', '.join(sorted(r.config))})")
            continue
        split = r.config.get("split_k", 1)
        if not isinstance(split, int) or not 1 <= split <= MAX_SPLIT_K:
            out.append(f"{where}: split_k must be 1 to {MAX_SPLIT_K}, found {split!r}")
        if tile.wgmma and not wgmma_ok(recipe, caps):
            out.append(f"{where}: a warpgroup-MMA tile, and this chip or layer has none")
        if tile.tma and not caps.has("tma"):
            out.append(f"{where}: a TMA tile, and this chip has no TMA")
        if tile.stream and tile.wgmma:
            out.append(f"{where}: a register ring (stream) cannot be a warpgroup tile")
        if tile.fold and not can_fold(recipe):
            out.append(f"{where}: folds group scales, and this layer has none over whole blocks")
        if np_ % tile.bn or (np_ // tile.bn) % tile.cluster:
            out.append(f"{where}: BN {tile.bn} (clusters of {tile.cluster}) does not divide the {np_} padded rows")
        if tile.stream and r.hi is not None and r.hi > max(tile.bm, RING_DECODE_MAX):
            out.append(f"{where}: a register ring of {tile.bm} tokens cannot serve {r.hi}")
        try:
            tile.check()
            fitted = fit_tile(tile, recipe, smem, kp)
            if smem_bytes(recipe, fitted) > smem:
                out.append(f"{where}: needs {smem_bytes(recipe, fitted)} bytes of shared memory, the chip has {smem}")
        except (ValueError, UnsupportedError) as e:
            out.append(f"{where}: {e}")
    return out


#: the K-slice caps `humming tune` tries on tiles that are not register rings
TUNE_SPLITS = (1, 2, 4, 8, 16)
#: the groups along K (Tile.kg) `humming tune` tries on the 16-token warpgroup tiles of dense layers whose CTAs fit one
#: wave (besides the planner's own: wg16_groups_along_k)
TUNE_GROUPS_ALONG_K = (1, 2, 3)


def tuning_candidates(layer, caps, compute, tuning, index: int) -> list[dict]:
    """The configs `humming tune` times for range ``tuning[index]`` of the heuristics' tuning, the range's
    own first: other K-slice caps (TUNE_SPLITS) on the cp.async and warpgroup tiles, and the neighbouring
    ranges' tiles where they are of the same kind (both rings, or both warpgroup tiles, or neither), a
    ring serves every token of the range, and the neighbour is not a one-token range; for an MoE layer's rings,
    the rings dense layers of one expert's rows, eight experts' and every expert's would run. Only tiles the
    planner itself makes for this layer, so every candidate is a kernel the GPU tests cover; each passes
    :func:`check_tuning`. (And the 16-token warpgroup tile with the other counts of groups along K,
    TUNE_GROUPS_ALONG_K, which the planner makes by default or under HUMMING_WG16_KG and the GPU tests cover.)"""
    from humming.planner.family import MRange

    r = tuning[index]
    base = dict(r.config)
    out = [base]
    tile = tile_from_config(base)
    if tile is None:
        return out
    if not tile.stream:
        out += [{**base, "split_k": s} for s in TUNE_SPLITS if s != base.get("split_k", 1)]
    sms = caps.product.sm_count if caps.product is not None else None
    if (tile.wgmma and tile.bm == 16 and not (tile.tma or tile.sk or tile.cluster > 1) and sms
            and -(-padded_n(layer.n) // tile.bn) <= sms and not layer.is_moe):
        # (the 16-token tile with the other counts of groups along K, whose CTAs fit one wave: as HUMMING_WG16_KG plans
        # them)
        out += [{**base, "kg": g} for g in TUNE_GROUPS_ALONG_K if g != tile.kg]
    for j in (index - 1, index + 1):
        if not 0 <= j < len(tuning) or tuning[j].hi == 1:  # (one-token tiles: shaped and GPU-tested for one)
            continue
        cfg = dict(tuning[j].config)
        t = tile_from_config(cfg)
        if t is None or bool(t.stream) != bool(tile.stream) or bool(t.wgmma) != bool(tile.wgmma):
            continue
        out.append(cfg)
    if layer.is_moe and tile.stream:  # (MoE decode: the rings that dense layers of the experts' rows would run at
        # these tokens -- one expert's, eight experts' (one token's, top-8) and every expert's -- shaped for that
        # many rows)
        for active in dict.fromkeys((1, min(8, layer.num_experts), layer.num_experts)):
            for rr in _tuning_of(layer.replace(n=layer.n * active, num_experts=0), caps, compute):
                ring = tile_from_config(rr.config)
                at = max(r.lo, 2)  # (MoE's first range starts at one row, its blocks get two or more)
                if rr.lo <= at and (rr.hi is None or at <= rr.hi) and rr.hi != 1 and ring and ring.stream:
                    out.append({**dict(rr.config), "split_k": base.get("split_k", 1)})
    seen, keep = set(), []
    for cfg in out:
        key = tuple(sorted(cfg.items()))
        if key in seen or check_tuning(layer, caps, compute, [MRange(r.lo, r.hi, cfg)]):
            continue
        seen.add(key)
        keep.append(cfg)
    return keep


_TUNING_VERSION: list = []


#: the family's Python modules a measured tuning depends on (tiles, budgets, packing, launch policy)
FAMILY_MODULES = ("mma_sync_kernel.py", "mma_sync_pack.py", "mma_sync_launch.py", "gemm_mma_sync.py")


def tuning_version() -> str:
    """A digest of what a measured tuning depends on: the kernel headers and the family's modules (tiles,
    launch policy). A tuning database entry measured with other sources is set aside by the planner."""
    if not _TUNING_VERSION:
        import hashlib

        from humming.jit import header_digests

        h = hashlib.sha256()
        for name, digest in header_digests(f'#include "{HEADER}"\n'):
            h.update(f"{name}:{digest}\n".encode())
        here = os.path.dirname(os.path.abspath(__file__))
        for name in FAMILY_MODULES:
            with open(os.path.join(here, name), "rb") as f:
                h.update(f.read())
        _TUNING_VERSION.append(h.hexdigest()[:16])
    return _TUNING_VERSION[0]
