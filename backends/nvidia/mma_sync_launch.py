"""The mma.sync family's launcher: one prepared weight run at any M.

:class:`Launcher` picks the tile of M's range, compiles it on first use, keeps one ``LaunchPlan`` per tile, splits K
(through a workspace, or summed in a cluster), launches programmatically where the plan says so, and keeps the
per-M shapes so that a call only writes pointers and M into the parameter struct.
"""
from __future__ import annotations

import ctypes
import os

import torch

from humming.jit import driver as _drv

from .mma_sync_kernel import (ctas_by_registers, GemmParams, kernel_spec, PAD_N, resident_ctas,
    ring_slice_step, smem_bytes, STATIC_SMEM_BYTES, stream_ring_bytes, stream_smem, stream_x_cap, Tile,
    tma_box_rows, _TMA_ROWS_OFFSET, _TMA_TAIL, TMAP_OFFSET, wg_fold, WG_INT_SLICE)
from .mma_sync_pack import (PackedWeight)


_workspaces: dict[tuple, tuple[torch.Tensor, int, int]] = {}  # (device, stream) -> (buffer, floats, address)


def _workspace(device: torch.device, stream: int, nfloats: int) -> torch.Tensor:
    """A grow-only fp32 scratch buffer per (device, stream) for split-K partials.

    Launches on one stream are ordered, so layers on the same stream can share it.
    """
    key = (device.index, stream)
    ws = _workspaces.get(key)
    if ws is None or ws[1] < nfloats:
        buf = torch.empty(max(nfloats, 1 << 16), dtype=torch.float32, device=device)
        ws = _workspaces[key] = (buf, buf.numel(), buf.data_ptr())
    return ws[0]


def _kernel_registers(lp) -> int | None:
    """The loaded kernel's registers per thread, or None where the driver cannot say (no GPU)."""
    try:
        return lp.kernel.num_regs()
    except Exception:  # (CPU-only runs and stubbed drivers: the static estimate stands)
        return None


#: Split launches sum their K slices in clusters (Launcher.cluster_split) when they average at most this many
#: CTAs per SM and the driver says every cluster is resident at once. The launches split K for one wave:
#: clusters that do not all fit land wave after wave (H200, WG_16_DEEP at M=16 on 8192x8192, three slices
#: per tile, 124 clusters of 3 resident for 128: 15.6 -> 21.1 us, the CTAs landing over 12 us), and at about
#: three CTAs per SM whole clusters per GPC load some SMs with a fourth where the round-robin placement of
#: plain CTAs stops at three (8192x8192 M=4, WG_DECODE: the slowest CTA's loop 13.1 us against 11.4, the call
#: 14.2 -> 15.4 us). At 2.4 per SM and below the clusters win (H200, int4 g128, bench, us, workspace ->
#: clusters: 4096x14336 M=1 11.3 -> 10.4, M=16 16.3 -> 15.2, M=33 27.3 -> 22.5, M=64 28.9 -> 23.5;
#: 4096x4096 M=4 7.77 -> 7.00, M=16 8.64 -> 7.63; 14336x4096 M=4 13.6 -> 12.4). Four per SM (the bench,
#: HUMMING_CLUSTER_MAX_PER_SM=4, gpu_run.sh s37j): 8192x8192 M=32 20.0 -> 22.5 us, 4096x4096 M=64 12.7 -> 13.0,
#: and 8192x8192 at 16 and 64 tokens stays on the workspace (its 128 clusters of 3 are not all resident).
CLUSTER_MAX_CTAS_PER_SM = 2.5


def cluster_max_ctas_per_sm() -> float:
    """CLUSTER_MAX_CTAS_PER_SM, or ``HUMMING_CLUSTER_MAX_PER_SM`` where set (a number: tuning runs)."""
    raw = os.environ.get("HUMMING_CLUSTER_MAX_PER_SM", "")
    try:
        return float(raw) if raw else CLUSTER_MAX_CTAS_PER_SM
    except ValueError:
        raise ValueError(f"HUMMING_CLUSTER_MAX_PER_SM: expected a number of CTAs per SM, got {raw!r}") from None


# Warpgroup launches of 16-bit operands and 32-64 tokens per tile whose K split would put more CTAs on the GPU
# than clusters may hold (above CLUSTER_MAX_CTAS_PER_SM, so summed through the workspace) split fewer ways instead,
# as many as clusters hold, where that is two or more, each slice spans at most FIT_MAX_SLICE_K columns and every
# cluster is resident (Launcher.cluster_fit_split): there the workspace's fence, counter and reloads cost more than
# the extra slice gains. H100, through the bench, HUMMING_CLUSTER_FIT off -> on, two rounds agreeing within 2 %
# (fifty-fourth session, gpu_run.sh s54a), us: int4 g128 8192x8192 M=32 20.9-21.1 -> 20.5-20.6, M=64
# 26.9-27.1 -> 25.4-25.8; 7168x4096 M=32 13.1 -> 11.7-11.9, M=64 17.8-18.0 -> 14.8-15.0; 5376x4096 M=32
# 11.8 -> 10.9-11.0, M=64 16.6 -> 13.0; e4m3 per channel 8192x8192 M=48 34.3-34.4 -> 29.5-29.6, M=64 35.7-35.8
# -> 30.0. Not taken where it lost: 16-token tiles launched plainly (5376x4096 M = 9 / 16 8.35 / 8.48 -> 8.8 /
# 8.9, 7168x4096 9.6 -> 9.8, 8192x8192 even) and slices of 14336 columns (8192x28672, every M, 6-10 % slower);
# larger tiles and byte operands were not measured. ``HUMMING_CLUSTER_FIT=0`` turns it off.
FIT_MIN_TOKENS, FIT_MAX_TOKENS = 32, 64
FIT_MAX_SLICE_K = 4096
# 16-token tiles fit too where their slices span at most FIT_16_MAX_SLICE_K columns, and such a launch goes
# programmatically (the crowded rule waived: Launcher._shape). H100, through the bench, HUMMING_CLUSTER_FIT off
# -> on, two rounds agreeing within 1 % (gpu_run.sh s54d), us, M = 9 / 16: int4 g128 8192x4096 9.80 / 9.95 ->
# 9.35 / 9.35, 8192x3584 9.10 / 9.25 -> 8.50 / 8.54, 7168x4096 9.44 / 9.58 -> 9.06 / 9.19, 5376x4096 8.31 / 8.38
# -> 7.49 / 7.55; e4m3 per channel 8192x4096 15.2 / 15.5 -> 14.8 / 14.85. Over slices of 4096 columns (8192x8192,
# s54c) it lost 1-2 %; fitted but launched plainly, 5376x4096 lost 5 %; programmatic fitted launches of 32
# tokens lost 7-19 %.
FIT_16_MAX_SLICE_K = 2048


# Dense warpgroup launches of 16-token tiles (9-16 tokens) of 16-bit operands go programmatically even where their
# CTAs could crowd an SM (Launcher.crowded): the crowding cost the 8-token decode tiles and the 64-256-token ones
# (Launcher.crowded's figures), and the 16-token ones lost more by the plain launch. H100, int4 g128 fp16, through
# the bench, two rounds alike, us, M = 9 / 16, plain -> programmatic (gpu_run.sh s61c): 4096x4096 7.91 / 7.92-8.01
# -> 6.22 / 6.26-6.35 (four K slices of 64 tiles, 256 CTAs, three resident per SM), 2048x8192 8.18-8.23 / 8.29-8.30
# -> 6.42 / 6.55, 2048x4096 6.41 / 6.57 -> 4.57 / 4.75; the uncrowded launches alike (3584x3584, 3072x4096,
# 1024x8192, 4096x8192, 4096x14336, 4608x3584, 5120x5120, and the 14336x4096, 8192x8192, 28672x8192). Other
# codes, one round (s61d), M = 16 on 4096x4096 / 2048x8192 / 2048x4096: bf16 8.19 / 8.54 / 6.68 -> 6.39 / 6.67 /
# 4.77, int4 per channel 7.43 / 8.13 / 6.36 -> 6.55 / 7.65 / 5.55, uint4 g64 with zero points 8.91 / 9.28 / 6.98 ->
# 7.01 / 7.31 / 5.07, int3 g128 7.87 / 8.10 / 6.34 -> 6.10 / 6.42 / 4.70, MXFP4 8.31 / 8.94 / 6.66 -> 7.37 / 8.40 /
# 5.83; on 2048x8192 / 2048x4096 (4096x4096 uncrowded) e4m3 per channel 10.5 / 7.64 -> 8.92 / 5.91, int8 per
# channel 10.4 / 7.67 -> 8.96 / 5.98. Byte operands' 16-token tiles launched so were alike (s61e: W4A8, W8A8, fp8;
# not taken), 32-token tiles lost 2-30 % (s61e: 2048x8192 M = 48 / 64 11.9 / 12.1 -> 12.9 / 13.1, 3584x3584 10.0 /
# 10.3 -> 13.1 / 13.0, 8192x8192 M = 17 / 32 20.0 / 20.3 -> 21.8 / 22.0); MoE launches: not measured, kept.
PDL_CROWDED_BM = 16


# Where the driver cannot hold every cluster of a split launch's slices at once (clusters of eight 100 KB CTAs: 30 on
# the H100, so 32 tiles of 64 rows split eight ways summed through the workspace), the most slices, at least
# CLUSTER_FALLBACK_MIN_SLICES, whose clusters it holds (Launcher.cluster_fallback_split). H100, int4 g128 fp16,
# through the bench, us, M = 17 / 32, workspace -> fewer slices in clusters (gpu_run.sh s61j, gpu_pdl_probe.py for
# the clusters): 2048x4096 (8 -> 6) 8.30 / 8.88 -> 5.18 / 5.59, 2048x8192 (8 -> 7) 9.87 / 10.5 -> 7.37 / 7.94, 2560x8192
# (6 -> 5) 10.4 / 10.9 -> 8.13 / 8.59, 4096x4096 (4 -> 3) 8.49 / 8.86 -> 7.16 / 7.78; the launches whose clusters fit
# alike (1280x8192, 1536x4096, 3072x4096, 8192x8192). Two slices lost: 2560x8192 at 48 / 64 tokens (3 -> 2) 13.5 /
# 13.6 -> 15.2 / 15.4; and so did long slices: 4096x14336 M=32 (4 -> 3 slices of 19 steps, 4864 columns) 17.7 -> 19.4
# (s61k). The slices of the wins spanned 768-1792 columns (2048x4096: six of 768); so at most
# CLUSTER_FALLBACK_MAX_SLICE_K (4096x8192's three of 2816 columns, between the two, keep the workspace: not measured).
CLUSTER_FALLBACK_MIN_SLICES = 3
CLUSTER_FALLBACK_MAX_SLICE_K = 2048


def cluster_fit_enabled() -> bool:
    """Whether launchers take Launcher.cluster_fit_split's and cluster_fallback_split's slices (``HUMMING_CLUSTER_FIT``, on
    unless 0/off)."""
    return os.environ.get("HUMMING_CLUSTER_FIT", "1").lower() not in ("0", "off", "false", "no")


def _resident_clusters(lp, smem: int, cz: int) -> int:
    """Clusters of 1 x 1 x ``cz`` CTAs of the plan's kernel that the GPU holds at once (the driver's
    occupancy count), or 0 where the driver cannot say (no GPU: no clusters)."""
    try:
        return _drv.max_active_clusters(lp.kernel.function(), lp.block, smem, cz)
    except Exception:  # (CPU-only runs and stubbed drivers)
        return 0


def _resident_blocks(lp, threads: int) -> int:
    """CTAs of the plan's kernel one SM holds at once (the driver's occupancy count, with the kernel's
    dynamic shared memory), or 0 where the driver cannot say (no GPU)."""
    try:
        return _drv.max_active_blocks(lp.kernel.function(), threads, lp.kernel.spec.smem_bytes)
    except Exception:  # (CPU-only runs and stubbed drivers)
        return 0


def ring_wave_slices(ctas_per_sm: int, sm_count: int, tiles: int) -> int:
    """K slices of a ring launch of ``tiles`` tiles: as many as ``ctas_per_sm`` CTAs per SM hold in one wave,
    rounded down (Launcher.stream_split; the planner's ring_needs_window asks the same)."""
    return max(1, ctas_per_sm * sm_count // tiles)


class Launcher:
    """Runs one prepared weight: picks the tile for M, compiles it on first use,
    keeps one LaunchPlan per tile, and splits K when the tiles alone cannot
    fill the GPU.

    ``max_split`` caps the K slices of a launch: one int for every range, or
    one per range (the plan's ``split_k`` of each M range; 1 never splits).

    ``pdl``: launch the decode (stream) tiles with programmatic dependent launch (sm_90+
    kernels only; see :func:`pdl_enabled`) from each tile's second launch on: the kernel then
    starts while the previous kernel of the stream drains, issues its first weight loads (the
    register rings) and waits for that kernel before reading activations or writing anything.
    The first launch of each tile is a plain one, so the kernels that prepared the weights have
    finished before any launch reads them early. (H200, int4 g128, bench M=1: 4096x4096 7.73 ->
    6.89 us, 14336x4096 13.0 -> 12.0, 4096x14336 14.4 -> 12.8, 8192x8192 13.8 -> 12.2.) The
    cp.async warpgroup tiles (not TMA) launch so too (issuing their first stages' weight copies
    before the wait where the launch does not split K), unless an SM could hold more than its even
    share of their CTAs (``crowded``; grids of no more CTAs than SMs included, wherever two fit on an
    SM): launched early, such CTAs land on the SMs as the previous kernel's leave, unevenly -- except the dense
    16-token tiles of 16-bit operands, which lost more by the plain launch (PDL_CROWDED_BM). (Split
    launches went plainly until the twenty-seventh session, after the twenty-first measured losses of
    up to 13 %; measured again through the bench's units of five calls, the uncrowded ones gain: int4
    g128 M=16 14336x4096 13.9 -> 12.9 us, 4096x14336 15.5 -> 14.6, 8192x8192 16.0 -> 15.6; e4m3 per channel M=1
    8192x8192 21.0 -> 19.9.) MoE kernels (``packed.experts``) wait for the previous kernel before reading
    anything, their block's expert included, so for them an early launch only overlaps the launches.
    """

    def __init__(self, packed: PackedWeight, ranges, sm_count: int, runtime=None, max_split: int = 16,
                 smem_per_sm: int | None = None, pdl: bool = False, cluster_split: int = 0):
        self.packed = packed
        sm90 = packed is not None and int(packed.recipe.target[3:].rstrip("af")) >= 90
        self.pdl = bool(pdl) and sm90
        # the most K slices a launch runs as one thread-block cluster (summed through distributed shared
        # memory: GemmMmaSync::cluster_finish); 0 or 1: the workspace and counter (sm_90+ kernels only)
        self.cluster_split = int(cluster_split) if sm90 else 0
        self.cluster_max_per_sm = cluster_max_ctas_per_sm()  # (and up to this many CTAs per SM)
        self.cluster_fit = cluster_fit_enabled() and self.cluster_split > 1  # (cluster_fit_split)
        self.smem_per_sm = smem_per_sm  # shared memory of one SM (ring tiles size their K slices by it)
        self.ranges = list(ranges)  # [(lo, hi or None, Tile)], ascending
        self.sm_count = int(sm_count)
        self.runtime = runtime
        splits = [max_split] * len(self.ranges) if isinstance(max_split, int) else [int(s) for s in max_split]
        if len(splits) != len(self.ranges) or min(splits, default=1) < 1:
            raise ValueError(f"Launcher: max_split must be an int >= 1 or one per range "
                             f"({len(self.ranges)} ranges), found {max_split!r}")
        self.max_split = max(splits, default=1)
        for lo, hi, tile in self.ranges:  # (a CTA reads BN rows of packed weights: none past Np)
            if packed is not None and packed.np_ % tile.bn:
                raise ValueError(f"Launcher: the tile of M {lo}-{hi if hi is not None else 'up'} has BN = "
                                 f"{tile.bn}, which does not divide the packed weight's {packed.np_} rows "
                                 f"(padded to {PAD_N}): its last CTAs would read past the weights")
            if packed is not None and (packed.np_ // tile.bn) % tile.cluster:
                raise ValueError(f"Launcher: the tile of M {lo}-{hi if hi is not None else 'up'} runs clusters of "
                                 f"{tile.cluster} CTAs along N, which do not divide the packed weight's "
                                 f"{packed.np_ // tile.bn} row blocks of {tile.bn}")
        # split K until about this many CTAs per SM; None: ctas_for(tile) (H200, mma.sync tiles
        # at M 16-64: 1 beats 2 on every issue-6 shape, by up to 25 %)
        self.ctas_per_sm: int | None = None
        self.stream_ctas_per_sm = 1  # the same for stream tiles (their CTAs are wider)
        self._plans: dict[Tile, object] = {}
        self._pdl_plans: set[int] = set()  # id(LaunchPlan) of the stream tiles, which launch programmatically
        self._by_m: dict = {}  # M (MoE: (rows, tokens per expert)) -> _shape(...)
        self._counters: dict[Tile, torch.Tensor] = {}
        self._tmaps: dict[tuple, object] = {}  # (x address, M, lda, box rows) -> encoded tensor map
        self._tmap_cur: dict[int, tuple] = {}  # id(LaunchPlan) -> the key of the map its parameters hold
        # (largest M, tile, most K slices) per range, ascending
        self._entries = [(hi if hi is not None else 1 << 62, tile, s)
                         for (_, hi, tile), s in zip(self.ranges, splits)]

    def _entry(self, m: int):
        for e in self._entries:
            if m <= e[0]:
                return e
        return self._entries[-1]

    def tile_for(self, m: int) -> Tile:
        return self._entry(m)[1]

    def max_split_for(self, m: int) -> int:
        return self._entry(m)[2]

    def spec_for(self, m: int):
        return kernel_spec(self.packed.recipe, self.tile_for(m))

    def _plan(self, tile: Tile):
        lp = self._plans.get(tile)
        if lp is None:
            from humming.jit import get_kernel

            spec = kernel_spec(self.packed.recipe, tile)
            kern = self.runtime.kernel(spec) if self.runtime is not None else get_kernel(spec)
            p = GemmParams()
            pw = self.packed
            p.w = pw.w.data_ptr()
            p.sz = pw.sz.data_ptr() if pw.sz is not None else 0
            p.chan = pw.chan.data_ptr() if pw.chan is not None else 0
            p.bias = pw.bias.data_ptr() if pw.bias is not None else 0
            # activations are padded to a multiple of 16 bytes (zeros), so loads may run to there
            # (K, Kp in the kernel's K units: bytes / 2 for byte operands)
            ku = pw.recipe.ku
            p.N, p.K, p.Np, p.Kp = pw.n, -(-pw.k // (8 * ku)) * 8, pw.np_, pw.kp // ku
            p.groups = pw.groups
            p.out_mul = pw.out_mul
            if pw.experts:  # (MoE: each call sets expert_ids, the routing's)
                p.w_estride, p.sz_estride, p.chan_estride, p.bias_estride = pw.estrides
                p.experts = pw.experts
            lp = kern.plan(p, grid=(1, 1, 1))
            self._plans[tile] = lp
            if self.pdl and (tile.stream or (tile.wgmma and not tile.tma)):
                self._pdl_plans.add(id(lp))
        return lp

    @staticmethod
    def ctas_for(tile: Tile) -> int:
        """CTAs per SM a prefill tile's launch splits K for: two for the four-warp warpgroup
        tiles of at most 32 tokens, one otherwise. (H200, int4 g128, gpu_sweep.py --ctas,
        after the split-K sum was made parallel: WG_16_NARROW at M=16 on 8192x8192 17.3 us
        against 18.5 with one, 4096x14336 18.1 against 20.6, 14336x4096 17.0 against 16.5;
        32 tokens on 64 rows, M=32: 8192x8192 20.1 against 21.5, 4096x14336 21.1 against 24.0;
        the eight-warp tiles and 64 tokens lose with two, up to 30 %.)"""
        return 2 if tile.wgmma and tile.threads <= 128 and (tile.bm <= 32 or tile.tma) else 1

    def split_for(self, tile: Tile, m_tiles: int, n_tiles: int, ksteps: int, max_split: int | None = None) -> int:
        """K slices of a prefill launch: about ``ctas_for(tile)`` CTAs per SM, but (when the
        SM's shared memory is known) no more CTAs than fit on the GPU at once: a second wave
        of split tiles costs more than the split gains (H200, WG_64_TMA at M=64 on 14336x4096:
        448 CTAs where 396 fit, 32.3 us, against 224 unsplit, 22.7). That holds for warpgroup tiles
        of one CTA per SM too: their split is the SMs over the tiles rounded down (H100, int4 g128, the
        256-token tile on 1536x7168 at M=1024: 48 tiles in two K slices 44.3 us, in three -- 144 CTAs
        where 132 fit -- 78.5; sixty-second session, gpu_run.sh s62k)."""
        tiles = m_tiles * n_tiles
        ctas = self.ctas_per_sm if self.ctas_per_sm is not None else self.ctas_for(tile)
        want = -(-ctas * self.sm_count // tiles)
        if self.smem_per_sm and (ctas > 1 or tile.wgmma):
            resident = max(1, self.smem_per_sm // (smem_bytes(self.packed.recipe, tile) + 1024)) * self.sm_count
            want = max(1, min(want, resident // tiles))
        s = max(1, min(want, self.max_split if max_split is None else max_split, ksteps))
        if s > 1:
            per = -(-ksteps // s)
            s = -(-ksteps // per)  # no empty slices
        return s

    def _shape(self, m: int, tile_m: int | None = None):
        """Everything a launch with ``m`` tokens needs but the pointers, computed
        once per M (compiles the tile's kernel on first use): (LaunchPlan, grid,
        shared memory, K steps per slice, workspace floats, counters, TMA box rows,
        CTAs per cluster along z: the K slices summed in a cluster, else 1, whether
        the launch may go programmatically: not a crowded warpgroup launch).
        ``tile_m``: the token count whose range's tile runs (MoE: the tokens per expert; the ``m`` rows are
        the routed ones, whole blocks of that tile's BM), else ``m``'s."""
        _, tile, max_split = self._entry(m if tile_m is None else tile_m)
        lp = self._plan(tile)
        pw = self.packed
        n_tiles = -(-pw.np_ // tile.bn)
        m_tiles = -(-m // tile.bm)
        ksteps = -(-(pw.kp // pw.recipe.ku) // tile.bk)
        if tile.sk:
            return self.stream_k_shape(lp, tile, m, m_tiles, n_tiles, ksteps)
        if tile.stream:
            kps = self.stream_split(tile, m, m_tiles, n_tiles, ksteps, max_split, _kernel_registers(lp))
            split = -(-ksteps // kps)
            smem = stream_smem(tile, m, kps * tile.wk, pw.recipe)
        else:
            split = self.split_for(tile, m_tiles, n_tiles, ksteps, max_split) if max_split > 1 else 1
            kps = -(-ksteps // split)
            most = WG_INT_SLICE // tile.bk
            if tile.wgmma and pw.recipe.op8 == 1 and not wg_fold(pw.recipe) and kps > most:
                split = -(-ksteps // most)  # (int32 sums: slices of at most WG_INT_SLICE units)
                kps = -(-ksteps // split)
            smem = lp.kernel.spec.smem_bytes
        ctr = None
        # (groups along K, Tile.kg: only group 0 finishes a tile, the others have exited, which releases the cluster
        # barriers they would hold up -- PTX `exit`; not refitted to clusters below: _refits_clusters)
        cz = split if 1 < split <= self.cluster_split and tile.cluster == 1 else 1
        if cz > 1 and m_tiles * n_tiles * split > self.cluster_max_per_sm * self.sm_count:
            cz = 1  # (the workspace, or cluster_fit_split's slices below)
        elif cz > 1 and _resident_clusters(lp, smem, cz) < m_tiles * n_tiles:
            cz = 1  # (the workspace, unless fewer slices' clusters all fit: cluster_fallback_split)
            fall = self.cluster_fallback_split(lp, tile, m_tiles * n_tiles, ksteps, split, smem)
            if fall:
                split = cz = fall
                kps = -(-ksteps // split)
        fit = 0
        if split > 1 and cz == 1 and not tile.stream:
            fit = self.cluster_fit_split(lp, tile, m_tiles * n_tiles, ksteps, split, smem)
            if fit:
                split = cz = fit
                kps = -(-ksteps // split)
        if split > 1 and cz == 1:
            ctr = self._counters.get(tile)
            if ctr is None or ctr.numel() < m_tiles * n_tiles:
                ctr = torch.zeros(max(m_tiles * n_tiles, 256), dtype=torch.int32, device=pw.w.device)
                self._counters[tile] = ctr
        # (a fitted launch of 16-token tiles goes programmatically however its CTAs could crowd: FIT_16; so does
        # any dense launch of 16-token tiles of 16-bit operands: PDL_CROWDED_BM)
        pdl_ok = not (tile.wgmma and self.crowded(tile, lp, n_tiles * m_tiles * split)) or (
            fit > 0 and tile.bm < FIT_MIN_TOKENS) or (
            tile.bm == PDL_CROWDED_BM and not pw.recipe.op8 and not pw.experts)
        return (lp, (n_tiles, m_tiles, split), smem, kps, split * m * pw.np_ if ctr is not None else 0, ctr,
                tma_box_rows(tile, m) if tile.tma else 0, cz, pdl_ok)

    def _refits_clusters(self, tile: Tile, tiles: int) -> bool:
        """Whether a split launch of ``tiles`` tiles may change its K slices to sum them in clusters
        (cluster_fit_split, cluster_fallback_split): warpgroup tiles of at most FIT_MAX_TOKENS tokens and 16-bit
        operands (byte operands: not measured so), with HUMMING_CLUSTER_FIT on."""
        return bool(self.cluster_fit and tile.wgmma and tile.cluster == 1 and tile.kg == 1 and tiles
                    and tile.bm <= FIT_MAX_TOKENS and self.packed.recipe.op8 == 0)

    def cluster_fit_split(self, lp, tile: Tile, tiles: int, ksteps: int, split: int, smem: int) -> int:
        """The K slices a warpgroup launch of ``tiles`` tiles splitting ``split`` ways through the
        workspace takes instead -- as many as clusters may hold (at most ``cluster_max_per_sm`` CTAs per SM and
        ``cluster_split`` slices), summed in clusters -- or 0 to keep ``split``: tiles of more than FIT_MAX_TOKENS
        tokens or of byte operands, fewer than two such slices, no fewer than now, slices of more than
        FIT_MAX_SLICE_K columns (FIT_16_MAX_SLICE_K below FIT_MIN_TOKENS tokens), or clusters the GPU does not
        hold at once."""
        if not self._refits_clusters(tile, tiles):
            return 0
        most = FIT_MAX_SLICE_K if tile.bm >= FIT_MIN_TOKENS else FIT_16_MAX_SLICE_K
        s = min(int(self.cluster_max_per_sm * self.sm_count) // tiles, self.cluster_split, ksteps)
        if s < 2 or s >= split:
            return 0
        kps = -(-ksteps // s)
        s = -(-ksteps // kps)  # (no empty slices)
        pw = self.packed
        if kps * tile.bk * pw.recipe.ku > most:
            return 0
        return s if _resident_clusters(lp, smem, s) >= tiles else 0

    def cluster_fallback_split(self, lp, tile: Tile, tiles: int, ksteps: int, split: int, smem: int) -> int:
        """The K slices a warpgroup launch of 16-bit operands and at most FIT_MAX_TOKENS tokens per tile takes where
        the driver cannot hold all the clusters of its ``split`` slices at once (so they would sum through the
        workspace): the most slices, fewer than ``split`` and at least CLUSTER_FALLBACK_MIN_SLICES, whose clusters it
        holds (within the clusters' CTAs per SM), summed in them, each of at most CLUSTER_FALLBACK_MAX_SLICE_K
        columns; 0 where none (or not such a launch)."""
        if not self._refits_clusters(tile, tiles):
            return 0
        for c in range(split - 1, CLUSTER_FALLBACK_MIN_SLICES - 1, -1):
            kps = -(-ksteps // c)
            s = -(-ksteps // kps)  # (no empty slices)
            if kps * tile.bk * self.packed.recipe.ku > CLUSTER_FALLBACK_MAX_SLICE_K:
                return 0  # (fewer slices are longer still)
            if (s >= CLUSTER_FALLBACK_MIN_SLICES and tiles * s <= self.cluster_max_per_sm * self.sm_count
                    and _resident_clusters(lp, smem, s) >= tiles):
                return s
        return 0

    def crowded(self, tile: Tile, lp, ctas: int) -> bool:
        """Whether a warpgroup launch of ``ctas`` CTAs (K slices included) would let an SM hold more of them at
        once than its even share (ceil(ctas / SMs)). Such launches go plainly: launched early, their CTAs land
        in the slots the previous kernel leaves, up to the SM's limit, so some SMs take more than their share
        and others none (H200, int3 g128 at M = 5-8 on 28672x8192, 224 CTAs of the warpgroup tile, three
        resident per SM: 47.0 us through the bench, 37.8 launched plainly). That holds for grids of no more
        CTAs than SMs too, wherever two fit on an SM: int4 g128 on 4096x14336, 128 CTAs, M=128 67.4 us
        launched early against 54.9 plainly, M=256 98.2 against 67.0; 4096x4096 M=128 22.2 against 18.2,
        M=256 32.1 against 21.9 (thirty-eighth session, HUMMING_PDL=0 / 1 through the bench)."""
        return self.stream_k_ctas(tile, lp) > -(-ctas // self.sm_count)

    def stream_k_ctas(self, tile: Tile, lp=None) -> int:
        """CTAs per SM of a stream-K launch: as many as are resident at once, or ``ctas_per_sm`` where
        set (sweeps) and no more than that. Every CTA must be resident from the start -- a tile's first
        CTA waits at its last piece for the parts of the CTAs after it (GemmMmaSync::finish_tile) -- so
        the count is the driver's occupancy of the loaded kernel where there is one, else the static
        bound: shared memory where the SM's is known, the kernel's registers where known, 2048 threads."""
        n = _resident_blocks(lp, tile.threads) if lp is not None else 0
        if not n:
            n = 2048 // tile.threads
            if self.smem_per_sm:
                n = min(n, self.smem_per_sm // (smem_bytes(self.packed.recipe, tile) + 1024))
            regs = _kernel_registers(lp) if lp is not None else None
            if regs:
                n = min(n, ctas_by_registers(regs, tile.threads))
        if self.ctas_per_sm is not None:
            n = min(n, int(self.ctas_per_sm))
        return max(1, n)

    def stream_k_shape(self, lp, tile: Tile, m: int, m_tiles: int, n_tiles: int, ksteps: int):
        """_shape for a stream-K tile (GemmMmaSync::run_wg_sk): G = stream_k_ctas x SMs CTAs along x (at
        most one per (tile, K step) unit), each taking units floor(c T / G) .. floor((c + 1) T / G) of the
        T = tiles x K steps; the workspace holds as many partial tiles per tile as the most CTAs any
        tile is cut between."""
        total = m_tiles * n_tiles * ksteps
        g = max(1, min(self.stream_k_ctas(tile, lp) * self.sm_count, total))
        owner = lambda u: ((u + 1) * g - 1) // total  # noqa: E731  (the CTA of unit u, as the kernel's)
        parts = max(owner(t * ksteps + ksteps - 1) - owner(t * ksteps) + 1 for t in range(m_tiles * n_tiles))
        ctr = None
        if parts > 1:
            ctr = self._counters.get(tile)
            if ctr is None or ctr.numel() < m_tiles * n_tiles:
                ctr = torch.zeros(max(m_tiles * n_tiles, 256), dtype=torch.int32, device=self.packed.w.device)
                self._counters[tile] = ctr
        return (lp, (g, 1, 1), lp.kernel.spec.smem_bytes, ksteps, parts * m * self.packed.np_ if ctr is not None else 0,
                ctr, 0, 1, True)

    def _tensor_map(self, lp, box_rows: int, xp: int, m: int, lda: int) -> None:
        """Put the tensor map of the activations (``m`` rows of ``lda`` 16-bit units at ``xp``,
        boxes of 64 x ``box_rows``: tma_box_rows) into the plan's parameters: encoded once per (address, M,
        row stride) and kept (a serving loop's few activation buffers), at most 256; nothing is
        written when the plan's parameters already hold it (the same buffer again)."""
        key = (xp, m, lda, box_rows)
        if self._tmap_cur.get(id(lp)) == key:
            return
        buf = self._tmaps.get(key)
        if buf is None:  # the bytes from GemmParams.tma_rows to the end: the box rows, then the map
            if len(self._tmaps) >= 256:
                self._tmaps.clear()
            buf = (ctypes.c_uint64 * (_TMA_TAIL // 8))()
            ctypes.c_int.from_buffer(buf).value = box_rows
            _drv.encode_tensor_map_2d(ctypes.addressof(buf) + TMAP_OFFSET - _TMA_ROWS_OFFSET, xp, lp.params.K, m,
                                      lda * 2, 64, box_rows)
            self._tmaps[key] = buf
        ctypes.memmove(ctypes.addressof(lp.params) + _TMA_ROWS_OFFSET, buf, _TMA_TAIL)
        self._tmap_cur[id(lp)] = key

    def stream_split(self, tile: Tile, m: int, m_tiles: int, n_tiles: int, ksteps: int, max_split: int,
                     regs: int | None = None) -> int:
        """K steps per slice of a stream-tile launch: enough CTAs for ``stream_ctas_per_sm``
        per SM (``occupancy`` for ring tiles), and slices whose activations fit
        ``STREAM_SMEM_CAP`` (ring tiles: their share of the SM's shared memory, in
        whole fold chunks). The launch has ceil(ksteps / this) slices, none empty."""
        rows = min(tile.bm, m)
        cap = stream_x_cap(self.packed.recipe, tile)
        ctas = self.stream_ctas_per_sm
        if tile.stream >= 3:  # `occupancy` CTAs per SM, each with its activations and rings
            ctas = resident_ctas(self.packed.recipe, tile, regs)
            if self.smem_per_sm:
                per_cta = self.smem_per_sm // ctas - 1024 - STATIC_SMEM_BYTES - stream_ring_bytes(tile, self.packed.recipe)
                cap = min(cap, per_cta)
        # K steps whose activations fit (a window: any)
        most = ksteps if tile.xwin else max(1, cap // (rows * tile.wk * 128))
        step = 1
        if tile.stream >= 3:  # slices of whole fold chunks
            step = ring_slice_step(self.packed.recipe, tile)
            most = max(step, most // step * step)
        fit = -(-ksteps // most)
        tiles = m_tiles * n_tiles
        if tile.stream < 3:
            want = -(-ctas * self.sm_count // tiles)
        else:  # at most `occupancy` CTAs per SM, rounded down: every slice pays the activation staging and the
            # ring prologue, so a split for fewer wasted waves loses (H200, M=1: 28672x8192 split 5 ways
            # 45 -> 75 us, 14336x4096 split 7 ways 15 -> 26 us), and the few CTAs of a second wave cannot draw the
            # bandwidth the first did (H100, int4 g128, through the bench, rounded to the nearest -> down, us:
            # 3072x8192 on DECODE_INT4_LONG_K, 96 tiles split three ways for 264 places, M = 1 / 4 / 8 10.7 /
            # 11.2 / 12.0 -> 6.5 / 7.4 / 7.8; 5120x8192, 160 tiles two ways, 13.8 / 14.4 / 15.4 -> 9.8 / 10.5 /
            # 11.8; 1536x8192 on the 16-row ring, 96 tiles, 7.6 -> 4.6; gpu_run.sh s59b)
            want = ring_wave_slices(ctas, self.sm_count, tiles)
        s = max(1, min(max(want, fit), ksteps))
        if max_split > 1:
            s = min(s, max(max_split, fit))
        else:
            s = min(fit, ksteps)
        per = -(-ksteps // s)  # <= most, as s >= fit
        per = -(-per // step) * step  # (most is a multiple of step)
        if tile.stream >= 3 and self.smem_per_sm and not tile.xwin:  # the partial tiles may outgrow small slices
            share = self.smem_per_sm // ctas - 1024 - STATIC_SMEM_BYTES
            while per > step and stream_smem(tile, m, per * tile.wk, self.packed.recipe) > share:
                per -= step
        return per

    def __call__(self, x: torch.Tensor, y: torch.Tensor, act_scale: torch.Tensor | None = None,
                 bias: torch.Tensor | None = None, stream: int | None = None, expert_ids: torch.Tensor | None = None,
                 tile_m: int | None = None, x_rows: torch.Tensor | None = None) -> None:
        """One launch: ``y = x @ W.T``. MoE weights (``packed.experts``): ``x`` holds the routed rows, whole
        blocks of ``tile_for(tile_m).bm`` rows, and ``expert_ids`` (int32, one per block, -1 for an unused one)
        names each block's expert (humming.ops.moe routes them). ``x_rows`` (weights packed with
        ``recipe.xgather``): int32, one per routed row, its element offset in ``x`` (the token rows), or -1 - o for
        a padding row (o: some row's offset; its results are not to be read); the routed rows are then
        ``x_rows``'s, not ``x``'s."""
        if (expert_ids is None) != (not self.packed.experts):
            raise ValueError("Launcher: MoE weights launch with expert_ids and tile_m, dense ones without")
        if x_rows is not None and not self.packed.recipe.xgather:
            raise ValueError("Launcher: x_rows needs kernels that gather their rows (a weight packed with xgather)")
        dev = x.get_device()
        if dev >= 0 and dev != _drv.current_device_index():  # launch in the context of x's device
            with torch.cuda.device(dev):
                return self._call(x, y, act_scale, bias, stream, expert_ids, tile_m, x_rows)
        return self._call(x, y, act_scale, bias, stream, expert_ids, tile_m, x_rows)

    def _call(self, x, y, act_scale, bias, stream, expert_ids=None, tile_m=None, x_rows=None) -> None:
        m = x.shape[0] if x_rows is None else x_rows.numel()
        key = m if tile_m is None else (m, tile_m)
        shape = self._by_m.get(key)
        if shape is None:
            shape = self._by_m[key] = self._shape(m, tile_m)
        lp, grid, smem, kps, ws_floats, ctr, tma_rows, cz, pdl_ok = shape
        p = lp.params
        if expert_ids is not None:
            if expert_ids.numel() != grid[1] or expert_ids.dtype != torch.int32:
                raise ValueError(f"Launcher: expert_ids must be int32 [{grid[1]}] (one per block of "
                                 f"{self.tile_for(tile_m).bm} rows), got {expert_ids.dtype} {list(expert_ids.shape)}")
            p.expert_ids = expert_ids.data_ptr()
        xp, lda = x.data_ptr(), x.stride(0) * x.element_size() // 2  # (lda in 16-bit units)
        if self.packed.recipe.xgather:
            p.x_rows = x_rows.data_ptr() if x_rows is not None else 0
        p.x = xp
        p.y = y.data_ptr()
        p.M = m
        p.lda = lda
        if tma_rows:
            self._tensor_map(lp, tma_rows, xp, m, lda)
        p.ldy = y.stride(0)
        p.act_scale = act_scale.data_ptr() if act_scale is not None else 0
        if bias is not None:
            p.bias = bias.data_ptr()
        p.k_steps_per_split = kps
        if stream is None:
            stream = _drv.raw_stream()
        if ws_floats:
            p.ws = _workspace(x.device, stream, ws_floats).data_ptr()
            p.counters = ctr.data_ptr()
        lp.grid = grid
        lp.smem_bytes = smem
        lp.cluster_z = cz
        p.early_w = int(lp.pdl and pdl_ok)
        lp.launch(stream=stream, pdl=pdl_ok)
        if not lp.pdl and id(lp) in self._pdl_plans:
            lp.pdl = True  # (from the second launch on)
        if bias is not None:
            pb = self.packed.bias
            p.bias = pb.data_ptr() if pb is not None else 0

    def run(self, x: torch.Tensor, xp: int, y: torch.Tensor, m: int, lda: int) -> None:
        """The eager hot path (``humming.ops.gemm``'s fast call): ``x`` [m, K] and
        ``y`` [m, N] already checked and row-contiguous (``xp``, ``lda``: x's address and row stride),
        no activation scale and no bias of the call's own, the current stream.
        Anything unusual (first launch, another device, a workspace still to
        allocate) takes the general path."""
        shape = self._by_m.get(m)
        if shape is None:
            shape = self._by_m[m] = self._shape(m)
        lp, grid, smem, kps, ws_floats, ctr, tma_rows, cz, pdl_ok = shape
        dev = _drv.current_device_index()
        if lp._dev != dev:  # first launch, or another device is current
            return self(x, y)
        stream = _drv.stream_of(dev)
        p = lp.params
        if ws_floats:
            ws = _workspaces.get((dev, stream))
            if ws is None or ws[1] < ws_floats:
                return self(x, y, stream=stream)
            p.ws = ws[2]
            p.counters = ctr.data_ptr()
        p.x = xp
        p.y = y.data_ptr()
        p.M = m
        p.lda = lda
        if tma_rows:
            self._tensor_map(lp, tma_rows, xp, m, lda)
        p.ldy = self.packed.n
        p.act_scale = 0
        p.k_steps_per_split = kps
        b = lp.block
        early = lp.pdl and pdl_ok
        p.early_w = early
        if _drv.launch_any(lp._fn, grid[0], grid[1], grid[2], b[0], b[1], b[2], smem, stream, lp._args_ptr,
                           early, cz):
            lp.grid = grid
            lp.smem_bytes = smem
            lp.cluster_z = cz
            lp.launch(stream=stream, pdl=pdl_ok)  # resolves the function again, or raises with the driver's reason
