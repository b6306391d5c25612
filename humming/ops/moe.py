"""MoE GEMM: ``moe_gemm(x, prepared, topk_ids)`` for a weight with an expert dimension.

The kernels run an MoE GEMM as the dense GEMM of the *routed rows*: the (token, expert) pairs sorted by
expert, each expert's run padded to whole blocks of the kernel tile's BM rows. Every block names its
expert (``expert_ids``), and the kernel's CTAs of that block read that expert's weights; unused blocks
(the routing's bound on the block count is static, so a call can be captured in a CUDA graph) return at
once. A call is:

1. the routing: where each pair's row lies among the sorted rows, and the expert of each block;
2. the activations gathered into those rows (zeros in the padding), quantized where the plan says so;
3. the GEMM: one launch;
4. the pairs' rows gathered back to ``[M, topk, N]``, weighted by ``topk_weights`` and summed over
   ``topk`` where asked, in fp32.

On a GPU, steps 1, 2 and 4 are three small kernels (``humming/kernels/moe_route.cuh``: one CTA routes, a
warp per row gathers, a thread per output column combines), so a call is four launches (five with quantized
activations). Weights of 16-bit activations in their own columns are prepared for kernels that read each
routed row from its token's row (``Recipe.xgather``; ``HUMMING_MOE_XGATHER=0`` turns it off): the routing writes
the rows' offsets in x and there is no step 2, three launches. A call of at most E / DIRECT_SHARE pairs (decode)
skips step 1 (direct routing, ``HUMMING_MOE_DIRECT=0`` turns it off): block b of rows is pair b's, under the
caller's id, the row tables fixed by the pair count (made by the first such call, not while a graph captures).
Where the GEMM's launcher launches programmatically (sm_90+; ``HUMMING_MOE_PDL=0`` turns it off), so do they
all: each kernel waits for the one before it before touching memory, and the next starts launching meanwhile.
:func:`moe_route` is the same routing in torch ops (the CPU's, and ``HUMMING_MOE_ROUTE=torch`` on a GPU, or
more than ``ROUTE_MAX_EXPERTS`` experts); it keeps each expert's pairs in token order, where the kernel's order
inside an expert's run is an atomic counter's (rows are independent in the GEMM: the results are the same).
None of them synchronizes with the host, so a CUDA graph captures a call. Act order (a K permutation per
expert): the gather puts each block's rows in its expert's column order (moe_gather's PERM; the torch routing
gathers by each row's expert).

Expert ids below zero name experts this process does not hold (expert parallelism): those pairs' rows
are zeros. Ids of ``num_experts`` or more are an error, checked unless ``check_ids=False`` (which saves
a host synchronization per call; unchecked, such a pair counts as an absent expert's).

Under ``torch.compile`` the three entry points are the custom ops ``torch.ops.humming.moe_gemm``,
``moe_gemm_batched`` and ``moe_mlp`` (the ids unchecked there).

The tile is the plan's tile for the *tokens per expert*, ``ceil(M * topk / E)`` (at least 2:
:func:`tokens_per_expert`): the M ranges of an MoE plan count the rows one expert gets; a directly routed call
runs the tile for one row (DIRECT_TOKENS), or the next range's where that is a wider ring whose CTAs fill the SMs
three times over (direct_rows).
"""
from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass
from typing import Optional

import torch

from .. import reference as R
from ..errors import ShapeError
from .gemm import MOE_MIN_TOKENS, PreparedWeight, _prepare_activations, not_prepared, registered
from .library import register_op

__all__ = ["MoeRoute", "moe_route", "moe_gemm", "moe_gemm_batched", "moe_mlp", "tokens_per_expert"]

#: Fill the kernel's output rows with NaN before each launch (tests: a row the kernel does not write shows).
POISON = False
#: Route with the kernels of moe_route.cuh on a GPU (``HUMMING_MOE_ROUTE=torch``: with moe_route's torch ops).
ROUTE_KERNELS = os.environ.get("HUMMING_MOE_ROUTE", "kernels").lower() != "torch"
#: The most experts the routing kernel takes (its shared memory holds two ints per expert); more route in torch.
ROUTE_MAX_EXPERTS = 4096
ROUTE_THREADS, GATHER_THREADS, COMBINE_THREADS = 1024, 256, 256
#: Direct routing (``HUMMING_MOE_DIRECT=0`` turns it off): a GPU call of at most E / DIRECT_SHARE pairs (decode:
#: few tokens, experts rarely shared) launches no routing kernel. Block b of rows is pair b's, its expert the
#: caller's id (the GEMM and the combine skip ids outside [0, E)), its first row the pair's and the others
#: padding: row tables fixed by the pair count, made once (_direct_tables). An expert two pairs share is read
#: twice (E / 4 pairs: about 1.13 blocks per touched expert, the rereads mostly from L2).
DIRECT_ROUTE = os.environ.get("HUMMING_MOE_DIRECT", "1").lower() not in ("0", "off", "false", "no")
DIRECT_SHARE = 4
#: the rows per block of a directly routed call: the tile it runs is the plan's for one row (an MoE plan's one-row
#: range, where it has one of its own: gemm_mma_sync.MOE_DECODE_INT4) ...
DIRECT_TOKENS = 1
#: ... unless the next range's tile has as many rows per block and is wider, and its CTAs (one block per pair)
#: would number at least this many per SM: then that one (direct_rows). H100, Qwen3-30B-A3B's experts, direct calls,
#: us (scripts/gpu_moe_tiles.py, fifty-second session), the 8 x 64 ring against the 8 x 128 one: gate/up (12 tiles
#: of 128 rows) 13.9 / 19.9 at 1 token (96 CTAs of 128 rows), 30.8 / 31.5 at 4 (384); down (16 tiles) 11.1 / 13.3
#: at 1 (128), 24.2 / 18.9 at 4 (512): 132 SMs, so from 396 CTAs
DIRECT_WIDE_CTAS = 3


class MoeRouteParams(ctypes.Structure):
    """Mirror of ``humming::MoeRouteParams`` (moe_route.cuh)."""

    _fields_ = [("ids", ctypes.c_void_p), ("rows", ctypes.c_void_p), ("expert_ids", ctypes.c_void_p),
                ("src", ctypes.c_void_p), ("n", ctypes.c_int), ("experts", ctypes.c_int), ("bm", ctypes.c_int),
                ("max_blocks", ctypes.c_int), ("div", ctypes.c_int), ("ldx", ctypes.c_int)]


class MoeGatherParams(ctypes.Structure):
    """Mirror of ``humming::MoeGatherParams``."""

    _fields_ = [("x", ctypes.c_void_p), ("xs", ctypes.c_void_p), ("src", ctypes.c_void_p), ("map", ctypes.c_void_p),
                ("num_rows", ctypes.c_int), ("k", ctypes.c_int), ("ldx", ctypes.c_int), ("ldxs", ctypes.c_int),
                ("div", ctypes.c_int), ("perm", ctypes.c_void_p), ("expert_ids", ctypes.c_void_p),
                ("bm", ctypes.c_int), ("kx", ctypes.c_int)]


class MoeActParams(ctypes.Structure):
    """Mirror of ``humming::MoeActParams``."""

    _fields_ = [("y", ctypes.c_void_p), ("a", ctypes.c_void_p), ("rows", ctypes.c_int), ("inter", ctypes.c_int),
                ("ldy", ctypes.c_int), ("alpha", ctypes.c_float), ("limit", ctypes.c_float)]


class MoeCombineParams(ctypes.Structure):
    """Mirror of ``humming::MoeCombineParams``."""

    _fields_ = [("ys", ctypes.c_void_p), ("rows", ctypes.c_void_p), ("w", ctypes.c_void_p), ("y", ctypes.c_void_p),
                ("m", ctypes.c_int), ("topk", ctypes.c_int), ("n", ctypes.c_int), ("ldy", ctypes.c_int),
                ("num_rows", ctypes.c_int), ("ids", ctypes.c_void_p), ("experts", ctypes.c_int)]


_PARAMS = {"moe_route": MoeRouteParams, "moe_gather": MoeGatherParams, "moe_act": MoeActParams,
           "moe_combine": MoeCombineParams}
_THREADS = {"moe_route": ROUTE_THREADS, "moe_gather": GATHER_THREADS, "moe_act": COMBINE_THREADS,
            "moe_combine": COMBINE_THREADS}


def moe_kernel_spec(kind: str, target: str, **config):
    """The KernelSpec of one of moe_route.cuh's kernels: ``kind`` moe_route (config IDS64, XOFF), moe_gather (VEC, PERM),
    moe_act (OUT_BF16, ACT: an index of MOE_ACTIVATIONS, INTERLEAVED) or moe_combine (OUT_BF16, WEIGHTED,
    REDUCE)."""
    from ..jit import KernelSpec

    want = {"moe_route": ("IDS64", "XOFF"), "moe_gather": ("VEC", "PERM"), "moe_act": ("OUT_BF16", "ACT", "INTERLEAVED"),
            "moe_combine": ("OUT_BF16", "WEIGHTED", "REDUCE")}
    if kind not in want or set(config) != set(want[kind]):
        raise ValueError(f"moe_kernel_spec: {kind!r} takes {want.get(kind, 'no such kernel')}, got {sorted(config)}")
    return KernelSpec(family=kind, header="humming/kernels/moe_route.cuh", entry=f"humming::{kind}",
                      params=f"humming::{_PARAMS[kind].__name__}",
                      config={k: v if isinstance(v, bool) or k == "ACT" else bool(v) for k, v in config.items()},
                      target=target, threads=_THREADS[kind], params_size=ctypes.sizeof(_PARAMS[kind]))


_local = threading.local()  # each thread its own parameter structs


def _launch_plan(kind: str, device: int, **config):
    plans = getattr(_local, "plans", None)
    if plans is None:
        plans = _local.plans = {}
    key = (kind, device) + tuple(sorted(config.items()))
    lp = plans.get(key)
    if lp is None:
        from ..jit import get_kernel
        from .act_quant import device_target

        lp = plans[key] = get_kernel(moe_kernel_spec(kind, device_target(device), **config)).plan(_PARAMS[kind]())
        # (programmatic where a call asks for it, _pdl: its GEMM's launcher, from the capability file; each kernel
        # waits first, moe_route.cuh's moe_pdl_enter)
        lp.pdl = True
    return lp


def _pdl(w: PreparedWeight) -> bool:
    """Whether a call's small kernels launch programmatically: where its GEMM's launcher does."""
    return bool(getattr(w.launcher, "pdl", False))


@dataclass(frozen=True)
class MoeRoute:
    """Where the routed rows go: ``rows`` (int64 ``[M * topk]``) is each pair's row among the sorted rows
    (``blocks * block_m`` of them; a pair of an absent expert gets row ``blocks * block_m``, one past them),
    ``expert_ids`` (int32 ``[blocks]``) the expert of each block, -1 for the unused ones; ``src`` (int32
    ``[blocks * block_m]``, the routing kernel's only) each row's pair, -1 for a padding row (XOFF: the row's
    element offset in x, and -1 - o for a padding row, o the offset of some row of x)."""

    rows: torch.Tensor
    expert_ids: torch.Tensor
    blocks: int
    block_m: int
    src: Optional[torch.Tensor] = None
    #: direct routing (_direct_route): block b is pair b's, expert_ids the caller's ids (any value: the kernels
    #: skip those outside [0, E)), rows fixed (pair b at row b x block_m) whatever the ids
    direct: bool = False
    experts: int = 0  # (direct routing: E)

    @property
    def num_rows(self) -> int:
        return self.blocks * self.block_m


def max_blocks(pairs: int, num_experts: int, block_m: int) -> int:
    """A bound on the blocks of ``block_m`` rows that ``pairs`` routed pairs fill: each expert that gets any
    fills ceil(count / block_m) <= count / block_m + 1, and at most min(E, pairs) experts get any."""
    return pairs // block_m + min(num_experts, pairs)


def tokens_per_expert(m: int, topk: int, num_experts: int) -> int:
    """The token count whose M range's tile an MoE call routed by kernel runs: the rows an expert gets on average,
    ``ceil(M * topk / E)``, and at least 2. (A block runs all of the tile's BM rows whatever the tokens, so the
    one-token tiles, tuned for one row, are not taken: a call routed directly, one row per block, runs the one-row
    range's tile, DIRECT_TOKENS.)"""
    return max(MOE_MIN_TOKENS, -(-m * topk // num_experts))


def moe_route(topk_ids: torch.Tensor, num_experts: int, block_m: int) -> MoeRoute:
    """Sort the (token, expert) pairs of ``topk_ids`` (``[M, topk]``) by expert, each expert's pairs padded
    to whole blocks of ``block_m`` rows: on a GPU by the routing kernel (see the module docstring), else
    (or with ``HUMMING_MOE_ROUTE=torch``) by torch ops, each expert's pairs in token order. Shapes known
    before the call, no host synchronization: a CUDA graph can capture it."""
    if topk_ids.dim() != 2:
        raise ShapeError(f"moe_route: topk_ids must be [M, topk], got {list(topk_ids.shape)}")
    if topk_ids.is_cuda and ROUTE_KERNELS and num_experts <= ROUTE_MAX_EXPERTS and topk_ids.numel():
        return _route_kernel(topk_ids, int(num_experts), int(block_m))
    dev = topk_ids.device
    n = topk_ids.numel()
    e = int(num_experts)
    i64 = torch.int64
    flat = topk_ids.reshape(-1).to(i64)
    key = torch.where((flat >= 0) & (flat < e), flat, torch.full_like(flat, e))  # absent experts sort last
    counts = torch.zeros(e + 1, dtype=i64, device=dev).scatter_add_(0, key, torch.ones_like(key))
    blocks_e = (counts[:e] + block_m - 1) // block_m
    bend = torch.cumsum(blocks_e, 0)
    nb = max_blocks(n, e, block_m)
    owner = torch.searchsorted(bend, torch.arange(nb, dtype=i64, device=dev), right=True)
    expert_ids = torch.where(owner < e, owner, torch.full_like(owner, -1)).to(torch.int32)
    order = torch.argsort(key, stable=True)
    skey = key[order]
    cstart = torch.cumsum(counts, 0) - counts  # each expert's first pair among the sorted pairs
    rank = torch.arange(n, dtype=i64, device=dev) - cstart[skey]
    first_row = torch.cat([(bend - blocks_e) * block_m, torch.full((1,), nb * block_m, dtype=i64, device=dev)])
    pos = first_row[skey] + torch.where(skey < e, rank, torch.zeros_like(rank))
    rows = torch.empty(n, dtype=i64, device=dev).scatter_(0, order, pos)
    return MoeRoute(rows, expert_ids, nb, block_m)


def _check(x, w: PreparedWeight, topk_ids, topk_weights, check_ids: bool):
    if not w.layer.is_moe:
        raise ShapeError("moe_gemm: this prepared weight is dense (no expert dimension); use gemm")
    k, e = w.layer.k, w.layer.num_experts
    R.check_moe_call("moe_gemm", x, k, topk_ids, topk_weights)
    for name, t in (("x", x), ("topk_ids", topk_ids), ("topk_weights", topk_weights)):
        if t is not None and t.device != w.device:
            raise ShapeError(f"moe_gemm: {name} is on {t.device}, the prepared weight on {w.device}")
    if check_ids and topk_ids.numel() and not torch.compiler.is_compiling() and not (
            topk_ids.is_cuda and torch.cuda.is_current_stream_capturing()):
        hi = int(topk_ids.max())
        if hi >= e:
            raise ShapeError(f"moe_gemm: topk_ids must be below num_experts = {e} (negative: an expert this "
                             f"process does not hold), found {hi}")


def moe_gemm(x: torch.Tensor, w: PreparedWeight, topk_ids: torch.Tensor, topk_weights: torch.Tensor | None = None,
             reduce: bool = False, act_scale: torch.Tensor | None = None, check_ids: bool = True) -> torch.Tensor:
    """MoE GEMM with a prepared MoE weight (``prepare_weight`` of a ``[E, N, K]`` QuantizedWeight).

    ``x``: fp16/bf16 ``[M, K]`` (each chosen expert sees the token's row: gate/up projections) or
    ``[M, topk, K]`` (one row per pair: down projections). ``topk_ids``: int ``[M, topk]`` (int32 saves a
    conversion launch where the call routes directly, :func:`direct_routing`). Returns
    ``[M, topk, N]`` in the layer's output dtype, the rows multiplied by ``topk_weights`` when given and
    summed over ``topk`` to ``[M, N]`` when ``reduce`` (in fp32, then rounded once). The prepared bias, one
    per expert, is added to each pair's row before the weighting. ``act_scale``: the calibrated scale of a
    ``static_tensor`` activation scheme. Under ``torch.compile`` this is ``torch.ops.humming.moe_gemm``.
    """
    if not isinstance(w, PreparedWeight):
        raise not_prepared(w, "moe_gemm")
    if torch.compiler.is_compiling():
        return _moe_op.op(x, w.handle, topk_ids, topk_weights, bool(reduce), act_scale)
    return _moe_gemm(x, w, topk_ids, topk_weights, reduce, act_scale, check_ids)


def _moe_gemm(x, w, topk_ids, topk_weights=None, reduce=False, act_scale=None, check_ids=True):
    _check(x, w, topk_ids, topk_weights, check_ids)
    m, topk = topk_ids.shape
    n, k, e = w.layer.n, w.layer.k, w.layer.num_experts
    od = w.out_dtype
    if w.layer.activation.quant == "static_tensor" and act_scale is None:
        raise ShapeError("moe_gemm: static_tensor activations need act_scale (the calibrated fp32 scale)")
    if m == 0:
        return x.new_empty((0, n) if reduce else (0, topk, n), dtype=od)
    if x.is_cuda and ROUTE_KERNELS and e <= ROUTE_MAX_EXPERTS:
        direct = direct_routing(m * topk, w)
        tile_m = _tile_rows(m, topk, w, direct)
        return _moe_gemm_kernels(x, w, topk_ids, topk_weights, reduce, act_scale, tile_m,
                                 w.launcher.tile_for(tile_m).bm, direct)
    tile_m = tokens_per_expert(m, topk, e)
    bm = w.launcher.tile_for(tile_m).bm
    route = moe_route(topk_ids, e, bm)
    rows = route.num_rows
    pairs = x.reshape(m * topk, k) if x.dim() == 3 else x[:, None, :].expand(m, topk, k).reshape(m * topk, k)
    xs = x.new_zeros(rows + 1, k)  # (row `rows`: where the pairs of absent experts go)
    xs.index_copy_(0, route.rows, pairs)
    xs = xs[:rows]
    perm = _expert_perm(w)
    if perm is not None:  # (each block's rows in its expert's column order; index k: the zero column)
        owner = route.expert_ids.repeat_interleave(bm).clamp(min=0).to(torch.int64)
        xs = torch.gather(torch.nn.functional.pad(xs, (0, 1)), 1, perm.to(torch.int64).index_select(0, owner))
    ys = _routed_gemm(xs, w, route.expert_ids, tile_m, act_scale, zero_rows=1)  # (its last row: zeros)
    y = ys.index_select(0, route.rows).view(m, topk, n)
    if topk_weights is None and not reduce:
        return y
    y = y.float()
    if topk_weights is not None:
        y = y * topk_weights.float()[..., None]
    return (y.sum(1) if reduce else y).to(od)


def _route_kernel(topk_ids: torch.Tensor, e: int, bm: int, pdl: bool = False,
                  xoff: tuple[int, int] | None = None) -> MoeRoute:
    """moe_route by moe_route.cuh's one-CTA kernel, on topk_ids's device (``pdl``: programmatically). ``xoff``
    (div, ldx): ``src`` holds each row's element offset in x, (pair / div) x ldx, instead of its pair (XOFF)."""
    dev = topk_ids.device
    if dev.index != torch.cuda.current_device():
        with torch.cuda.device(dev.index):
            return _route_kernel(topk_ids, e, bm, pdl, xoff)
    pairs = topk_ids.numel()
    nb = max_blocks(pairs, e, bm)
    ids = topk_ids.reshape(-1)
    if ids.dtype not in (torch.int32, torch.int64):
        ids = ids.to(torch.int64)
    if not ids.is_contiguous():
        ids = ids.contiguous()
    rows = torch.empty(pairs, dtype=torch.int64, device=dev)
    expert_ids = torch.empty(nb, dtype=torch.int32, device=dev)
    src = torch.empty(nb * bm, dtype=torch.int32, device=dev)
    lp = _launch_plan("moe_route", dev.index, IDS64=ids.dtype == torch.int64, XOFF=xoff is not None)
    p = lp.params
    p.ids, p.rows, p.expert_ids, p.src = ids.data_ptr(), rows.data_ptr(), expert_ids.data_ptr(), src.data_ptr()
    p.n, p.experts, p.bm, p.max_blocks = pairs, e, bm, nb
    p.div, p.ldx = xoff if xoff is not None else (1, 0)
    lp.smem_bytes = 8 * e
    lp.launch(1, pdl=pdl)
    return MoeRoute(rows, expert_ids, nb, bm, src)


_direct_cache: dict = {}


def _direct_tables(dev: torch.device, pairs: int, bm: int, xoff: tuple[int, int] | None):
    """Direct routing's fixed tables on ``dev``: rows (int64 [pairs], pair b at row b x bm) and src (int32
    [pairs x bm]: row b x bm is pair b's, the others padding -- as moe_route's, XOFF's offsets with ``xoff``
    (div, ldx), the padding rows -1 - their pair's offset). Made once per key, on the host and copied (a blocking
    copy: in place for every stream when it returns); None while a graph is being captured and they are not made
    yet (a capture holds copies, not values)."""
    key = (dev.index, pairs, bm, xoff)
    got = _direct_cache.get(key)
    if got is None:
        if dev.type == "cuda" and torch.cuda.is_current_stream_capturing():
            return None
        b = torch.arange(pairs, dtype=torch.int64)
        rows = b * bm
        if xoff is None:
            first, pad = b, torch.full_like(b, -1)
        else:
            first = (b // xoff[0]) * xoff[1]
            pad = -1 - first
        src = torch.cat([first[:, None], pad[:, None].expand(pairs, bm - 1)], 1).reshape(-1).to(torch.int32)
        got = _direct_cache[key] = (rows.to(dev), src.to(dev))
    return got


def direct_routing(pairs: int, w: PreparedWeight) -> bool:
    """Whether a GPU call of ``pairs`` (token, expert) pairs routes directly (DIRECT_ROUTE): at most
    E / DIRECT_SHARE of them, and no act order (the gather reads each block's expert's column map). Such a call
    has one row per block; its tile: _tile_rows."""
    return DIRECT_ROUTE and 0 < pairs * DIRECT_SHARE <= w.layer.num_experts and _expert_perm(w) is None


def direct_rows(pairs: int, n: int, one: tuple[int, int], wide: tuple[int, int], sms: int) -> int:
    """The rows per block whose M range's tile a directly routed call of ``pairs`` pairs on ``n`` output rows
    runs, given the (BM, BN) of the one-row range's tile (``one``) and of the next's (``wide``) and the SMs:
    DIRECT_TOKENS, or MOE_MIN_TOKENS where the next tile is wider with as many rows per block and its CTAs fill
    DIRECT_WIDE_CTAS per SM."""
    if wide[0] == one[0] and wide[1] > one[1] and sms and pairs * -(-n // wide[1]) >= DIRECT_WIDE_CTAS * sms:
        return MOE_MIN_TOKENS
    return DIRECT_TOKENS


def _tile_rows(m: int, topk: int, w: PreparedWeight, direct: bool) -> int:
    """The rows per block whose M range's tile a GPU call of ``m`` tokens runs: direct_rows' where it routes
    directly, else the tokens per expert."""
    if not direct:
        return tokens_per_expert(m, topk, w.layer.num_experts)
    one, wide = (w.launcher.tile_for(r) for r in (DIRECT_TOKENS, MOE_MIN_TOKENS))
    return direct_rows(m * topk, w.layer.n, (one.bm, one.bn), (wide.bm, wide.bn),
                       int(getattr(w.launcher, "sm_count", 0)))


def direct_tokens(layer, topk: int) -> int:
    """The most tokens a GPU call of ``layer`` (an MoE layer) at ``topk`` routes directly: 0 for none."""
    if not DIRECT_ROUTE or layer.weight.act_order:
        return 0
    return layer.num_experts // (DIRECT_SHARE * topk)


def _direct_route(topk_ids: torch.Tensor, w: PreparedWeight, bm: int,
                  xoff: tuple[int, int] | None = None) -> MoeRoute | None:
    """The routing of a call of few pairs without the routing kernel (direct_routing's), or None while a graph
    is being captured and its tables are not made yet. int64 ids are converted (one small kernel)."""
    pairs, e = topk_ids.numel(), w.layer.num_experts
    tables = _direct_tables(topk_ids.device, pairs, bm, xoff)
    if tables is None:
        return None
    ids = topk_ids.reshape(-1)
    if ids.dtype != torch.int32 or not ids.is_contiguous():
        ids = ids.to(torch.int32).contiguous()
    return MoeRoute(tables[0], ids, pairs, bm, tables[1], direct=True, experts=e)


def _routing(topk_ids: torch.Tensor, w: PreparedWeight, bm: int, pdl: bool,
             xoff: tuple[int, int] | None = None, direct: bool = False) -> MoeRoute:
    """A GPU call's routing: direct where the call routes directly (``direct``: direct_routing's) and its
    tables are made, else the routing kernel."""
    route = _direct_route(topk_ids, w, bm, xoff) if direct else None
    return route if route is not None else _route_kernel(topk_ids, w.layer.num_experts, bm, pdl, xoff)


def _moe_gemm_kernels(x, w, topk_ids, topk_weights, reduce, act_scale, tile_m: int, bm: int, direct: bool = False):
    """_moe_gemm on a GPU: route, gather, GEMM and combine as four launches (moe_route.cuh, the family's); three
    where the GEMM reads the routed rows from x itself (_gathering)."""
    if x.device.index != torch.cuda.current_device():  # (launch in the context of x's device)
        with torch.cuda.device(x.device.index):
            return _moe_gemm_kernels(x, w, topk_ids, topk_weights, reduce, act_scale, tile_m, bm, direct)
    m, topk = topk_ids.shape
    pdl = _pdl(w)
    x2, div = x.reshape(-1, w.layer.k), topk if x.dim() == 2 else 1
    xk = _gathering(w, x2)
    if xk is not None:
        route = _routing(topk_ids, w, bm, pdl, xoff=(div, xk.stride(0)), direct=direct)
        ys = _routed_gemm(xk, w, route.expert_ids, tile_m, act_scale, x_rows=route.src)
    else:
        route = _routing(topk_ids, w, bm, pdl, direct=direct)
        xs = _gather(x2, route.src, route.num_rows, div, pdl=pdl, perm=_expert_perm(w), route=route)
        ys = _routed_gemm(xs, w, route.expert_ids, tile_m, act_scale)
    return _combine(ys, route, m, topk, topk_weights, reduce, pdl)


def _gathering(w: PreparedWeight, x2: torch.Tensor) -> torch.Tensor | None:
    """The token rows x2 as the GEMM reads them when it reads the routed rows from them itself: weights packed with
    ``recipe.xgather`` (16-bit activations, no act order or padded groups; HUMMING_MOE_XGATHER), x2 converted
    where the plan says and aligned (rows on 16 bytes, a multiple of 8 values), its elements addressable in
    int32 (the routing writes each row's offset, moe_route's XOFF). None: gather first (moe_gather)."""
    if not getattr(w.packed.recipe, "xgather", False):
        return None
    xk, _ = _prepare_activations(x2 if x2.shape[1] < 2 or x2.stride(1) == 1 else x2.contiguous(), w, None)
    return xk if xk.shape[0] * xk.stride(0) < 2 ** 31 else None


def _expert_perm(w: PreparedWeight) -> torch.Tensor | None:
    """An MoE weight's act order: int32 ``[E, K']``, each expert's kernel columns (pack_moe_weight), else None."""
    perm = w.packed.perm
    return perm if perm is not None and perm.dim() == 2 else None


def _routed_gemm(xs: torch.Tensor, w: PreparedWeight, expert_ids: torch.Tensor, tile_m: int, act_scale,
                 zero_rows: int = 0, x_rows: torch.Tensor | None = None):
    """The GEMM of the routed rows xs (whole blocks, each against expert_ids' expert): [rows, N], and
    ``zero_rows`` rows of zeros after them. With act order, xs's columns are each block's expert's already.
    ``x_rows`` (_gathering): xs holds the token rows, prepared, and routed row r is at element offset x_rows[r]
    (negative: a padding row, whose results are not to be read)."""
    if x_rows is None:
        xk, s = _prepare_activations(xs, w, act_scale, columns=_expert_perm(w) is None)
        rows = xs.shape[0]
    else:
        xk, s, rows = xs, None, x_rows.numel()
    ys = torch.empty(rows + zero_rows, w.layer.n, dtype=w.out_dtype, device=xs.device)
    if POISON:
        ys.fill_(float("nan"))
    if zero_rows:
        ys[rows:].zero_()
    w.launcher(xk, ys, s, None, None, expert_ids, tile_m, **({} if x_rows is None else {"x_rows": x_rows}))
    return ys


def _gather(x2: torch.Tensor, src: torch.Tensor, rows_n: int, div: int, row_map: torch.Tensor | None = None,
            pdl: bool = False, perm: torch.Tensor | None = None, route: MoeRoute | None = None):
    """The routed rows [rows_n, K] of the 16-bit rows ``x2`` (moe_gather: row r holds x2's row src[r] // div,
    or row_map[src[r]]; zeros where src[r] < 0). ``perm`` (int32 [E, K'], act order): row r's columns are
    x2's in the order of its block's expert (``route``'s expert_ids), [rows_n, K']; K (x2's columns) or more
    reads a zero."""
    k = x2.shape[1]
    if k > 1 and x2.stride(1) != 1:
        x2 = x2.contiguous()
    kout = k if perm is None else perm.shape[1]
    xs = torch.empty(rows_n, kout, dtype=x2.dtype, device=x2.device)
    vec = perm is None and k % 8 == 0 and x2.stride(0) % 8 == 0 and x2.data_ptr() % 16 == 0
    lp = _launch_plan("moe_gather", x2.device.index, VEC=vec, PERM=perm is not None)
    p = lp.params
    p.x, p.xs, p.src = x2.data_ptr(), xs.data_ptr(), src.data_ptr()
    p.map = row_map.data_ptr() if row_map is not None else 0
    p.num_rows, p.k, p.ldx, p.ldxs, p.div = rows_n, kout, x2.stride(0), kout, div
    p.perm = perm.data_ptr() if perm is not None else 0
    p.expert_ids = route.expert_ids.data_ptr() if perm is not None else 0
    p.bm, p.kx = (route.block_m, k) if perm is not None else (0, 0)
    lp.launch(-(-rows_n // (GATHER_THREADS // 32)), pdl=pdl)
    return xs


def _combine(ys: torch.Tensor, route: MoeRoute, m: int, topk: int, topk_weights, reduce: bool, pdl: bool = False):
    """The pairs' rows of ys gathered back (moe_combine) at ``route``'s rows: [M, topk, N], or [M, N] summed with
    ``reduce``, times ``topk_weights`` where given. (Direct routing: a pair of an id outside [0, E) is zeros.)"""
    n = ys.shape[1]
    rows, rows_n = route.rows, route.num_rows
    y = torch.empty((m, n) if reduce else (m, topk, n), dtype=ys.dtype, device=ys.device)
    wts = None
    if topk_weights is not None:
        wts = topk_weights.reshape(-1).to(torch.float32)
        if not wts.is_contiguous():
            wts = wts.contiguous()
    lp = _launch_plan("moe_combine", ys.device.index, OUT_BF16=ys.dtype == torch.bfloat16, WEIGHTED=wts is not None,
                      REDUCE=bool(reduce))
    p = lp.params
    p.ys, p.rows, p.w, p.y = ys.data_ptr(), rows.data_ptr(), wts.data_ptr() if wts is not None else 0, y.data_ptr()
    p.m, p.topk, p.n, p.ldy, p.num_rows = m, topk, n, ys.stride(0), rows_n
    p.ids = route.expert_ids.data_ptr() if route.direct else 0
    p.experts = route.experts
    lp.grid = (-(-n // COMBINE_THREADS), min(m, 65535), 1)
    lp.launch(pdl=pdl)
    return y


def _activate(ys: torch.Tensor, activation: str, interleaved: bool, alpha: float, limit: float,
              pdl: bool = False) -> torch.Tensor:
    """moe_act: the gated activation of the gate/up rows ys [rows, 2I] -> [rows, I] (16-bit)."""
    from ..reference import MOE_ACTIVATIONS

    rows, inter = ys.shape[0], ys.shape[1] // 2
    a = torch.empty(rows, inter, dtype=ys.dtype, device=ys.device)
    lp = _launch_plan("moe_act", ys.device.index, OUT_BF16=ys.dtype == torch.bfloat16,
                      ACT=MOE_ACTIVATIONS.index(activation), INTERLEAVED=bool(interleaved))
    p = lp.params
    p.y, p.a, p.rows, p.inter, p.ldy, p.alpha, p.limit = ys.data_ptr(), a.data_ptr(), rows, inter, ys.stride(0), \
        float(alpha), float(limit)
    lp.grid = (-(-inter // COMBINE_THREADS), max(1, min(rows, 65535)), 1)
    lp.launch(pdl=pdl)
    return a


def moe_gemm_batched(x: torch.Tensor, w: PreparedWeight, expert_num_tokens: torch.Tensor,
                     act_scale: torch.Tensor | None = None, tokens_per_expert: int | None = None) -> torch.Tensor:
    """MoE GEMM on activations already grouped by expert (engines' "batched experts" format, as expert
    parallelism's all-to-all delivers them): ``x`` ``[E, T, K]`` holds expert ``e``'s tokens in its first
    ``expert_num_tokens[e]`` rows (int ``[E]`` on the device). Returns ``[E, T, N]``: row ``t`` of expert
    ``e`` is ``x[e, t] @ W[e].T (+ bias[e])`` for ``t < expert_num_tokens[e]``; the rows past an expert's count
    are not results (those in a block the expert's tokens reach hold the GEMM of whatever ``x`` holds there,
    the others are left unwritten), as the format's consumers ignore them.

    The tile is the plan's for ``tokens_per_expert`` rows (the caller's expectation, e.g. tokens x topk / E;
    default: half of ``T``, the counts being on the device). Where ``T`` is a multiple of the tile's rows the
    GEMM reads ``x`` and writes the output in place (one launch, its blocks' experts from the counts by a few
    torch ops); otherwise ``x`` is first copied into rows padded to whole blocks."""
    if not isinstance(w, PreparedWeight):
        raise not_prepared(w, "moe_gemm_batched")
    if torch.compiler.is_compiling():
        return _batched_op.op(x, w.handle, expert_num_tokens, act_scale, int(tokens_per_expert or 0))
    return _moe_gemm_batched(x, w, expert_num_tokens, act_scale, tokens_per_expert)


def _moe_gemm_batched(x, w, expert_num_tokens, act_scale=None, tokens_per_expert=None):
    if not w.layer.is_moe:
        raise ShapeError("moe_gemm_batched: this prepared weight is dense (no expert dimension); use gemm")
    e, n, k = w.layer.num_experts, w.layer.n, w.layer.k
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or tuple(x.shape[::2]) != (e, k) or x.dtype not in (
            torch.float16, torch.bfloat16):
        raise ShapeError(f"moe_gemm_batched: x must be float16 or bfloat16 [E, T, K] = [{e}, T, {k}], got "
                         f"{getattr(x, 'dtype', type(x).__name__)} {list(getattr(x, 'shape', []))}")
    if (not isinstance(expert_num_tokens, torch.Tensor) or expert_num_tokens.shape != (e,)
            or expert_num_tokens.dtype not in (torch.int32, torch.int64)):
        raise ShapeError(f"moe_gemm_batched: expert_num_tokens must be an int32 or int64 tensor [{e}], got "
                         f"{getattr(expert_num_tokens, 'dtype', type(expert_num_tokens).__name__)} "
                         f"{list(getattr(expert_num_tokens, 'shape', []))}")
    for name, t in (("x", x), ("expert_num_tokens", expert_num_tokens)):
        if t.device != w.device:
            raise ShapeError(f"moe_gemm_batched: {name} is on {t.device}, the prepared weight on {w.device}")
    if w.layer.activation.quant == "static_tensor" and act_scale is None:
        raise ShapeError("moe_gemm_batched: static_tensor activations need act_scale (the calibrated fp32 scale)")
    t = x.shape[1]
    if t == 0:
        return x.new_empty((e, 0, n), dtype=w.out_dtype)
    tile_m = max(MOE_MIN_TOKENS, int(tokens_per_expert) if tokens_per_expert else -(-t // 2))
    bm = w.launcher.tile_for(tile_m).bm
    tp = -(-t // bm) * bm
    per = tp // bm  # blocks per expert
    xs = x if tp == t else torch.nn.functional.pad(x, (0, 0, 0, tp - t))
    b = torch.arange(e * per, device=x.device)
    owner = b // per
    used = (b % per) * bm < expert_num_tokens.to(torch.int64).index_select(0, owner)
    expert_ids = torch.where(used, owner, torch.full_like(owner, -1)).to(torch.int32)
    perm = _expert_perm(w)
    if perm is not None:  # (each expert's rows in its column order; index k: a zero column)
        xs = torch.gather(torch.nn.functional.pad(xs, (0, 1)), 2,
                          perm.to(torch.int64)[:, None, :].expand(e, tp, perm.shape[1]))
    xk, s = _prepare_activations(xs.reshape(e * tp, xs.shape[2]), w, act_scale, columns=perm is None)
    ys = torch.empty(e * tp, n, dtype=w.out_dtype, device=x.device)
    if POISON:
        ys.fill_(float("nan"))
    w.launcher(xk, ys, s, None, None, expert_ids, tile_m)
    y = ys.view(e, tp, n)
    return y if tp == t else y[:, :t]


def moe_mlp(x: torch.Tensor, w13: PreparedWeight, w2: PreparedWeight, topk_ids: torch.Tensor,
            topk_weights: torch.Tensor | None = None, activation: str = "silu", interleaved: bool = False,
            alpha: float = 1.702, limit: float = 7.0, act_scales: tuple = (None, None),
            check_ids: bool = True) -> torch.Tensor:
    """An MoE layer's experts whole: ``sum_j topk_weights[:, j] * down_j(act(gate_up_j(x)))`` -> ``[M, H]``.

    ``w13``: the experts' gate/up projection (``[E, 2I, H]``, the gate the first ``I`` rows of each expert, or
    with ``interleaved`` the even rows, as gpt-oss stores them), ``w2``: their down projection (``[E, H', I]``);
    ``w13``'s output dtype is ``w2``'s activation dtype. ``activation``: one of
    :data:`humming.reference.MOE_ACTIVATIONS` (``silu``, ``gelu``, ``swigluoai`` with ``alpha`` and ``limit``).
    ``act_scales``: the static activation scales of the two projections, where their schemes have them.

    On a GPU the routed rows stay in expert order between the two GEMMs: route, gather, gate/up GEMM, the
    activation (fp32, rounded once to 16 bits), the down GEMM on the same blocks (where its tile has the
    gate/up tile's rows; else routed again and gathered from the activation's rows), and the weighted sum:
    six launches (eight where the tiles differ). Elsewhere (or with ``HUMMING_MOE_ROUTE=torch``) it is
    :func:`moe_gemm`, the activation in torch, and :func:`moe_gemm` again.
    """
    if torch.compiler.is_compiling():
        _check_mlp_weights(w13, w2)
        return _mlp_op.op(x, w13.handle, w2.handle, topk_ids, topk_weights, activation, bool(interleaved),
                          float(alpha), float(limit), act_scales[0], act_scales[1])
    return _moe_mlp(x, w13, w2, topk_ids, topk_weights, activation, interleaved, alpha, limit, act_scales, check_ids)


def _check_mlp_weights(w13, w2) -> None:
    for name, w in (("w13", w13), ("w2", w2)):
        if not isinstance(w, PreparedWeight) or not w.layer.is_moe:
            raise ShapeError(f"moe_mlp: {name} must be a prepared MoE weight (an expert dimension), got "
                             f"{w.layer.describe() if isinstance(w, PreparedWeight) else type(w).__name__}")


def _moe_mlp(x, w13, w2, topk_ids, topk_weights=None, activation="silu", interleaved=False, alpha=1.702, limit=7.0,
             act_scales=(None, None), check_ids=True):
    from ..reference import MOE_ACTIVATIONS, moe_activation

    _check_mlp_weights(w13, w2)
    l1, l2 = w13.layer, w2.layer
    if l1.num_experts != l2.num_experts or l1.n != 2 * l2.k or l1.n % 2:
        raise ShapeError(f"moe_mlp: w13 is {l1.num_experts} experts of N x K = {l1.n} x {l1.k} and w2 "
                         f"{l2.num_experts} of {l2.n} x {l2.k}; expected the same experts and w13's N = 2 x w2's K "
                         f"(gate and up)")
    if w13.out_dtype != w2.compute_dtype and not (l2.activation.is_quantized and w13.out_dtype in (
            torch.float16, torch.bfloat16)):
        raise ShapeError(f"moe_mlp: w13 writes {w13.out_dtype}, but w2 takes {l2.activation.describe()} activations "
                         f"({w2.compute_dtype}); prepare them so one feeds the other")
    if activation not in MOE_ACTIVATIONS:
        raise ShapeError(f"moe_mlp: activation must be one of {', '.join(MOE_ACTIVATIONS)}, got {activation!r}")
    _check(x, w13, topk_ids, topk_weights, check_ids)
    if x.dim() != 2:
        raise ShapeError(f"moe_mlp: x must be [M, K] (each token's row goes to its experts), got {list(x.shape)}")
    m, topk = topk_ids.shape
    if m == 0:
        return x.new_empty((0, l2.n), dtype=w2.out_dtype)
    e = l1.num_experts
    if not (x.is_cuda and ROUTE_KERNELS and e <= ROUTE_MAX_EXPERTS):
        y1 = _moe_gemm(x, w13, topk_ids, None, False, act_scales[0], False)
        a = moe_activation(y1.float(), activation, interleaved, alpha, limit).to(w13.out_dtype)
        return _moe_gemm(a, w2, topk_ids, topk_weights, True, act_scales[1], False)
    if x.device.index != torch.cuda.current_device():
        with torch.cuda.device(x.device.index):
            return _moe_mlp(x, w13, w2, topk_ids, topk_weights, activation, interleaved, alpha, limit, act_scales,
                            False)
    pdl = _pdl(w13) and _pdl(w2)
    p1, p2 = _expert_perm(w13), _expert_perm(w2)
    direct = direct_routing(m * topk, w13) and p2 is None
    tm1, tm2 = _tile_rows(m, topk, w13, direct), _tile_rows(m, topk, w2, direct)
    bm1, bm2 = w13.launcher.tile_for(tm1).bm, w2.launcher.tile_for(tm2).bm
    if direct and bm2 != bm1 and (topk_ids.dtype != torch.int32 or not topk_ids.is_contiguous()):
        topk_ids = topk_ids.to(torch.int32).contiguous()  # (once: both routings below would convert it)
    # (the gate/up GEMM reads the token rows itself where it can, _gathering; the routing's rows then hold offsets
    # in x, so where the down projection gathers by r1's pairs, r1 keeps them)
    xk = _gathering(w13, x) if bm2 != bm1 or p2 is None else None
    if xk is not None:
        r1 = _routing(topk_ids, w13, bm1, pdl, xoff=(topk, xk.stride(0)), direct=direct)
        ys1 = _routed_gemm(xk, w13, r1.expert_ids, tm1, act_scales[0], x_rows=r1.src)
    else:
        r1 = _routing(topk_ids, w13, bm1, pdl, direct=direct)
        ys1 = _routed_gemm(_gather(x, r1.src, r1.num_rows, topk, pdl=pdl, perm=p1, route=r1), w13, r1.expert_ids,
                           tm1, act_scales[0])
    a = _activate(ys1, activation, interleaved, alpha, limit, pdl)
    r2 = r1
    if bm2 != bm1:  # (the down tile's blocks: routed again, the activation's rows gathered by pair)
        r2 = _routing(topk_ids, w2, bm2, pdl, direct=direct)
    if r2 is not r1 or p2 is not None:  # (with act order, in each expert's column order: row r of a is its own)
        a = _gather(a, r2.src, r2.num_rows, 1, row_map=r1.rows, pdl=pdl, perm=p2, route=r2)
    ys2 = _routed_gemm(a, w2, r2.expert_ids, tm2, act_scales[1])
    return _combine(ys2, r2, m, topk, topk_weights, True, pdl)


def _moe_impl(x: torch.Tensor, handle: int, topk_ids: torch.Tensor, topk_weights: Optional[torch.Tensor],
              reduce: bool, act_scale: Optional[torch.Tensor]) -> torch.Tensor:
    return _moe_gemm(x, registered(handle), topk_ids, topk_weights, reduce, act_scale, check_ids=False)


def _moe_fake(x, handle, topk_ids, topk_weights, reduce, act_scale):
    w = registered(handle)
    m, topk = topk_ids.shape
    return x.new_empty((m, w.layer.n) if reduce else (m, topk, w.layer.n), dtype=w.out_dtype)


_moe_op = register_op("moe_gemm", _moe_impl, _moe_fake)


def _batched_impl(x: torch.Tensor, handle: int, expert_num_tokens: torch.Tensor, act_scale: Optional[torch.Tensor],
                  tokens_per_expert: int) -> torch.Tensor:
    return _moe_gemm_batched(x, registered(handle), expert_num_tokens, act_scale, tokens_per_expert or None)


def _batched_fake(x, handle, expert_num_tokens, act_scale, tokens_per_expert):
    w = registered(handle)
    return x.new_empty((x.shape[0], x.shape[1], w.layer.n), dtype=w.out_dtype)


_batched_op = register_op("moe_gemm_batched", _batched_impl, _batched_fake)


def _mlp_impl(x: torch.Tensor, h13: int, h2: int, topk_ids: torch.Tensor, topk_weights: Optional[torch.Tensor],
              activation: str, interleaved: bool, alpha: float, limit: float, act_scale13: Optional[torch.Tensor],
              act_scale2: Optional[torch.Tensor]) -> torch.Tensor:
    return _moe_mlp(x, registered(h13), registered(h2), topk_ids, topk_weights, activation, interleaved, alpha, limit,
                    (act_scale13, act_scale2), False)


def _mlp_fake(x, h13, h2, topk_ids, topk_weights, activation, interleaved, alpha, limit, act_scale13, act_scale2):
    w2 = registered(h2)
    return x.new_empty((topk_ids.shape[0], w2.layer.n), dtype=w2.out_dtype)


_mlp_op = register_op("moe_mlp", _mlp_impl, _mlp_fake)

