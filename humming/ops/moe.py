"""MoE GEMM: ``moe_gemm(x, prepared, topk_ids)`` for a weight with an expert dimension.

The kernels run an MoE GEMM as the dense GEMM of the *routed rows*: the (token, expert) pairs sorted by
expert, each expert's run padded to whole blocks of the kernel tile's BM rows. Every block names its
expert (``expert_ids``), and the kernel's CTAs of that block read that expert's weights; unused blocks
(the routing's bound on the block count is static, so a call can be captured in a CUDA graph) return at
once. A call is:

1. :func:`moe_route` (torch ops on the device, no host synchronization): where each pair's row lies in
   the sorted rows, and the expert of each block;
2. the activations gathered into those rows (zeros in the padding), quantized where the plan says so;
3. one kernel launch;
4. the pairs' rows gathered back to ``[M, topk, N]``, weighted by ``topk_weights`` and summed over
   ``topk`` where asked, in fp32.

Expert ids below zero name experts this process does not hold (expert parallelism): those pairs' rows
are zeros. Ids of ``num_experts`` or more are an error (checked unless ``check_ids=False``, which saves
a host synchronization per call).

The tile is the plan's tile for the *tokens per expert*, ``ceil(M * topk / E)`` (at most M): the M
ranges of an MoE plan count the rows one expert gets.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from ..errors import ShapeError
from .gemm import PreparedWeight, _prepare_activations, registered
from .library import register_op

__all__ = ["MoeRoute", "moe_route", "moe_gemm", "tokens_per_expert"]

#: Fill the kernel's output rows with NaN before each launch (tests: a row the kernel does not write shows).
POISON = False


@dataclass(frozen=True)
class MoeRoute:
    """Where the routed rows go: ``rows`` (int64 ``[M * topk]``) is each pair's row among the sorted rows
    (``blocks * block_m`` of them; a pair of an absent expert gets row ``blocks * block_m``, one past them),
    ``expert_ids`` (int32 ``[blocks]``) the expert of each block, -1 for the unused ones."""

    rows: torch.Tensor
    expert_ids: torch.Tensor
    blocks: int
    block_m: int

    @property
    def num_rows(self) -> int:
        return self.blocks * self.block_m


def max_blocks(pairs: int, num_experts: int, block_m: int) -> int:
    """A bound on the blocks of ``block_m`` rows that ``pairs`` routed pairs fill: each expert that gets any
    fills ceil(count / block_m) <= count / block_m + 1, and at most min(E, pairs) experts get any."""
    return pairs // block_m + min(num_experts, pairs)


def tokens_per_expert(m: int, topk: int, num_experts: int) -> int:
    """The rows an expert gets on average, ``ceil(M * topk / E)``, at least 1 and at most M: the token count
    whose M range's tile an MoE call runs."""
    return max(1, min(m, -(-m * topk // num_experts)))


def moe_route(topk_ids: torch.Tensor, num_experts: int, block_m: int) -> MoeRoute:
    """Sort the (token, expert) pairs of ``topk_ids`` (``[M, topk]``) by expert, each expert's pairs padded
    to whole blocks of ``block_m`` rows. Torch ops on ``topk_ids``'s device only, with shapes known before
    the call (no host synchronization): a CUDA graph can capture it."""
    if topk_ids.dim() != 2:
        raise ShapeError(f"moe_route: topk_ids must be [M, topk], got {list(topk_ids.shape)}")
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
    if not isinstance(topk_ids, torch.Tensor) or topk_ids.dim() != 2 or topk_ids.dtype not in (
            torch.int32, torch.int64):
        raise ShapeError(f"moe_gemm: topk_ids must be an int32 or int64 tensor [M, topk], got "
                         f"{getattr(topk_ids, 'dtype', type(topk_ids).__name__)} "
                         f"{list(getattr(topk_ids, 'shape', []))}")
    m, topk = topk_ids.shape
    if not isinstance(x, torch.Tensor) or x.dtype not in (torch.float16, torch.bfloat16):
        raise ShapeError(f"moe_gemm: x must be a float16 or bfloat16 tensor, got "
                         f"{getattr(x, 'dtype', type(x).__name__)}")
    if tuple(x.shape) not in ((m, k), (m, topk, k)):
        raise ShapeError(f"moe_gemm: x must be [M, K] = [{m}, {k}] or [M, topk, K] = [{m}, {topk}, {k}] "
                         f"(M, topk from topk_ids), got {list(x.shape)}")
    for name, t in (("x", x), ("topk_ids", topk_ids), ("topk_weights", topk_weights)):
        if t is not None and t.device != w.device:
            raise ShapeError(f"moe_gemm: {name} is on {t.device}, the prepared weight on {w.device}")
    if topk_weights is not None and (topk_weights.shape != topk_ids.shape or not topk_weights.is_floating_point()):
        raise ShapeError(f"moe_gemm: topk_weights must be a float tensor [M, topk] = {list(topk_ids.shape)}, got "
                         f"{topk_weights.dtype} {list(topk_weights.shape)}")
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
    ``[M, topk, K]`` (one row per pair: down projections). ``topk_ids``: int ``[M, topk]``. Returns
    ``[M, topk, N]`` in the layer's output dtype, the rows multiplied by ``topk_weights`` when given and
    summed over ``topk`` to ``[M, N]`` when ``reduce`` (in fp32, then rounded once). The prepared bias, one
    per expert, is added to each pair's row before the weighting. ``act_scale``: the calibrated scale of a
    ``static_tensor`` activation scheme. Under ``torch.compile`` this is ``torch.ops.humming.moe_gemm``.
    """
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
    tile_m = tokens_per_expert(m, topk, e)
    route = moe_route(topk_ids, e, w.launcher.tile_for(tile_m).bm)
    rows = route.num_rows
    pairs = x.reshape(m * topk, k) if x.dim() == 3 else x[:, None, :].expand(m, topk, k).reshape(m * topk, k)
    xs = x.new_zeros(rows + 1, k)  # (row `rows`: where the pairs of absent experts go; the kernel stops before it)
    xs.index_copy_(0, route.rows, pairs)
    xk, s = _prepare_activations(xs[:rows], w, act_scale)
    ys = torch.empty(rows + 1, n, dtype=od, device=x.device)
    if POISON:
        ys.fill_(float("nan"))
    ys[rows].zero_()
    w.launcher(xk, ys, s, None, None, route.expert_ids, tile_m)
    y = ys.index_select(0, route.rows).view(m, topk, n)
    if topk_weights is None and not reduce:
        return y
    y = y.float()
    if topk_weights is not None:
        y = y * topk_weights.float()[..., None]
    return (y.sum(1) if reduce else y).to(od)


def _moe_impl(x: torch.Tensor, handle: int, topk_ids: torch.Tensor, topk_weights: Optional[torch.Tensor],
              reduce: bool, act_scale: Optional[torch.Tensor]) -> torch.Tensor:
    return _moe_gemm(x, registered(handle), topk_ids, topk_weights, reduce, act_scale, check_ids=False)


def _moe_fake(x, handle, topk_ids, topk_weights, reduce, act_scale):
    w = registered(handle)
    m, topk = topk_ids.shape
    return x.new_empty((m, w.layer.n) if reduce else (m, topk, w.layer.n), dtype=w.out_dtype)


_moe_op = register_op("moe_gemm", _moe_impl, _moe_fake)
