"""MoE GEMM (humming.ops.moe): routing, packing, plans, machine code on the CPU; the kernels on a GPU.

An MoE call is the dense GEMM of the routed rows (the (token, expert) pairs sorted by expert, each expert's
run padded to whole blocks of the tile's BM rows), each block against its expert's weights. What a CPU can
prove, it does here:

* the routing (``moe_route``): every routed pair has a row of its own inside a block of its expert, the
  blocks of each expert follow one another, the unused blocks say -1, and the static block bound holds; and
  direct routing (few pairs: a block per pair, no routing kernel), its tables and the tile it runs;
* the call around the kernel (``moe_gemm``: routing, gathering the activations, gathering the outputs back,
  the weighting and the sum over the chosen experts, experts held elsewhere) with the launch replaced by an
  emulation that computes each block with ``reference.gemm`` against the expert the block names -- and
  writes nothing for the unused blocks, into NaN-poisoned rows, so a pair that read such a row would show;
* the packing: each expert's slice of the stacked weight is byte-equal to its dense packing, and its output
  multiplier rides on its channel multipliers;
* the plans (runnable on Turing to Hopper, the scheduler slot, no TMA / cluster / stream-K tiles) and the
  machine code of the MoE kernels for sm_75-sm_90 (the MMAs their dense twins issue, no local memory).

The GPU tests run the kernels against ``reference.moe_gemm`` with the dense tests' per-element bound
(tests/test_gemm_gpu.py: the weight's two roundings, the output's, the raw codes' cancellation on stream
tiles), pair by pair against the pair's expert.
"""
from __future__ import annotations

from dataclasses import replace
import math
import re

import pytest
import torch

import humming
from humming import reference as R
from humming.errors import ShapeError
from humming.planner import clear_cache as clear_plans
from humming.ops import moe as MOE
from humming.ops.gemm import PreparedWeight
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme

FP16 = ActivationScheme("fp16")
BF16 = ActivationScheme("bf16")
W4 = WeightScheme("int4", "group", 128)
AO = WeightScheme("uint4", "group", 64, zero_point="int", act_order=True)  # (GPTQ desc_act)


def _ids(m: int, e: int, topk: int, gen: torch.Generator, absent: float = 0.0) -> torch.Tensor:
    """Distinct experts per token (as a router's top-k gives), some of them held elsewhere (-1)."""
    ids = torch.rand(m, e, generator=gen).argsort(1)[:, :topk].to(torch.int32)
    if absent:
        ids[torch.rand(m, topk, generator=gen) < absent] = -1
    return ids


def _weight(scheme: WeightScheme, e: int, n: int, k: int, gen: torch.Generator, bias: bool = False):
    """E experts of random weights; with act order, each its own random K permutation (as GPTQ's g_idx gives)."""
    w = torch.randn(e, n, k, generator=gen) * 0.05
    b = torch.randn(e, n, generator=gen) if bias else None
    perms = [torch.randperm(k, generator=gen) if scheme.act_order else None for _ in range(e)]
    return R.QuantizedWeight.stack([R.quantize(w[i], scheme, perm=perms[i], bias=None if b is None else b[i])
                                    for i in range(e)])


# ---------------------------------------------------------------------------
# routing
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("m,e,topk,bm,absent", [(1, 8, 2, 8, 0.0), (1, 128, 8, 8, 0.0), (5, 8, 2, 16, 0.0),
                                                 (33, 64, 8, 16, 0.2), (128, 8, 2, 64, 0.0), (1000, 128, 8, 32, 0.1),
                                                 (7, 3, 3, 8, 0.5), (64, 16, 1, 256, 0.0)])
def test_route_puts_each_pair_in_a_block_of_its_expert(m, e, topk, bm, absent):
    gen = torch.Generator().manual_seed(m * 1000 + e)
    ids = _ids(m, e, topk, gen, absent)
    r = MOE.moe_route(ids, e, bm)
    flat = ids.reshape(-1).long()
    live = flat >= 0
    assert r.blocks == MOE.max_blocks(m * topk, e, bm) and r.expert_ids.shape == (r.blocks,)
    assert r.expert_ids.dtype == torch.int32 and r.rows.dtype == torch.int64
    rows = r.rows[live]
    assert rows.unique().numel() == rows.numel(), "two pairs share a row"
    assert bool((rows < r.num_rows).all()) and bool((r.rows[~live] == r.num_rows).all())
    assert torch.equal(r.expert_ids[rows // bm].long(), flat[live]), "a pair lies in another expert's block"
    counts = torch.bincount(flat[live], minlength=e)
    used = int((-(-counts // bm)).sum())
    assert bool((r.expert_ids[:used] >= 0).all()) and bool((r.expert_ids[used:] == -1).all())
    assert used <= r.blocks  # (the static bound)
    # each expert's pairs fill its first rows, in token order (stable), its blocks one run in expert order
    for x in range(e):
        mine = rows[flat[live] == x]
        if mine.numel():
            first = int(mine[0]) // bm * bm
            assert torch.equal(mine, torch.arange(first, first + mine.numel()))
    assert torch.equal(r.expert_ids[:used], r.expert_ids[:used].sort().values)


def test_route_edge_cases():
    r = MOE.moe_route(torch.zeros(0, 2, dtype=torch.int32), 8, 16)
    assert r.blocks == 0 and r.rows.numel() == 0
    r = MOE.moe_route(torch.full((4, 2), -1, dtype=torch.int64), 8, 16)  # every expert held elsewhere
    assert bool((r.expert_ids == -1).all()) and bool((r.rows == r.num_rows).all())
    r = MOE.moe_route(torch.full((40, 1), 3, dtype=torch.int32), 8, 16)  # one expert gets everything
    assert r.expert_ids.tolist()[:3] == [3, 3, 3] and torch.equal(r.rows, torch.arange(40))
    with pytest.raises(ShapeError, match="topk_ids must be"):
        MOE.moe_route(torch.zeros(4, dtype=torch.int32), 8, 16)


@pytest.mark.parametrize("m,topk,e,want", [(1, 8, 128, 2), (16, 8, 128, 2), (64, 8, 128, 4), (1000, 8, 8, 1000),
                                           (4096, 8, 128, 256), (3, 2, 2, 3), (1, 1, 8, 2)])
def test_tokens_per_expert(m, topk, e, want):
    assert MOE.tokens_per_expert(m, topk, e) == want


# ---------------------------------------------------------------------------
# the call around the kernel, with an emulated launch
# ---------------------------------------------------------------------------


class EmulatedLauncher:
    """The family's launcher with the launch emulated: each block of the routed rows computed by
    reference.gemm against the expert it names; unused blocks left as they are. Act order (``perm``, the
    packing's [E, K'] kernel columns): a block's rows come in its expert's column order, put back here."""

    def __init__(self, qw, launcher, perm=None):
        self.qw, self.inner, self.calls, self.perm = qw, launcher, [], perm

    def tile_for(self, m):
        return self.inner.tile_for(m)

    def __call__(self, x, y, act_scale, bias, stream, expert_ids, tile_m, x_rows=None):
        bm = self.tile_for(tile_m).bm
        if x_rows is not None:  # (the kernels' XGATHER: routed row r at element offset x_rows[r] of x)
            assert self.inner.packed.recipe.xgather and x_rows.dtype == torch.int32 and x.stride(1) == 1
            flat = x.as_strided((x.shape[0] * x.stride(0),), (1,))
            # (a padding row, -1 - o: what the kernels hold there is not read; here, row o's values)
            x = torch.stack([flat[(o if o >= 0 else -1 - o):(o if o >= 0 else -1 - o) + x.shape[1]]
                             for o in x_rows.tolist()])
        rows = x.shape[0]
        assert rows % bm == 0 and expert_ids.dtype == torch.int32 and expert_ids.numel() == rows // bm
        assert y.shape[0] >= rows and bias is None
        self.calls.append((rows, tile_m, bm))
        for b, e in enumerate(expert_ids.tolist()):
            if 0 <= e < self.qw.num_experts:  # (as the kernel's entry: other ids' blocks return at once)
                xb = x[b * bm:(b + 1) * bm]
                if self.perm is not None:  # (kernel column j holds the layer's column perm[e, j]; K: a zero)
                    cols = self.perm[e].long()
                    xo = torch.zeros(bm, self.qw.k + 1, dtype=x.dtype)
                    xo[:, cols] = xb[:, :cols.numel()]
                    xb = xo
                y[b * bm:(b + 1) * bm] = R.gemm(xb[:, :self.qw.k].float(), self.qw.expert(e)).to(y.dtype)


def cpu_prepared(qw, act=FP16, device="H200", out_dtype=None) -> PreparedWeight:
    """What prepare_weight builds, on the CPU: the plan for ``device``, the family's packing and launcher
    (with the launch emulated)."""
    from humming.device import get_device
    from humming_nvidia import gemm_mma_sync as G

    hw = get_device(device)
    layer = LayerSpec(qw.n, qw.k, qw.scheme, act, num_experts=qw.num_experts,
                      out_dtype=out_dtype or ("bf16" if act.fmt == "bf16" else "fp16"), bias=qw.bias is not None)
    p = humming.plan(layer, hw)
    assert p.runnable and p.family == "mma_sync", p.explain()
    packed, launcher = G.prepare(p, qw, "cpu", hw)
    perm = packed.perm if packed.perm is not None and packed.perm.dim() == 2 else None
    return PreparedWeight(layer, p, packed, EmulatedLauncher(qw, launcher, perm), torch.device("cpu"))


@pytest.fixture
def poisoned(monkeypatch):
    monkeypatch.setattr(MOE, "POISON", True)


@pytest.mark.parametrize("m,e,topk,absent", [(1, 8, 2, 0.0), (5, 8, 2, 0.0), (16, 64, 8, 0.1), (33, 16, 4, 0.0),
                                             (130, 8, 2, 0.3)])
@pytest.mark.parametrize("act", [FP16, BF16], ids=["fp16", "bf16"])
def test_moe_gemm_around_an_emulated_kernel(m, e, topk, absent, act, poisoned):
    gen = torch.Generator().manual_seed(7 * m + e)
    n, k = 72, 256
    qw = _weight(W4, e, n, k, gen, bias=True)
    pw = cpu_prepared(qw, act)
    dt = torch.bfloat16 if act.fmt == "bf16" else torch.float16
    eps = 2.0 ** (-8 if act.fmt == "bf16" else -11)
    ids = _ids(m, e, topk, gen, absent)
    wts = torch.rand(m, topk, generator=gen)
    x2 = torch.randn(m, k, generator=gen).to(dt)
    x3 = torch.randn(m, topk, k, generator=gen).to(dt)
    for x in (x2, x3):
        ref = R.moe_gemm(x.float(), qw, ids)
        y = MOE.moe_gemm(x, pw, ids)
        assert y.shape == (m, topk, n) and y.dtype == dt and not torch.isnan(y).any()
        assert torch.allclose(y.float(), ref, rtol=2 * eps, atol=1e-5)
        assert bool((y[ids < 0] == 0).all())  # (experts held elsewhere: zero rows, no bias)
        yr = MOE.moe_gemm(x, pw, ids, wts, reduce=True)
        refr = R.moe_gemm(x.float(), qw, ids, wts, reduce=True)
        tol = 2 * eps * (ref.abs() * wts[..., None]).sum(1) + 1e-5
        assert yr.shape == (m, n) and bool(((yr.float() - refr).abs() <= tol).all())
        yw = MOE.moe_gemm(x, pw, ids, wts)
        assert yw.shape == (m, topk, n) and torch.allclose(yw.float(), ref * wts[..., None], rtol=4 * eps, atol=1e-5)
    rows, tile_m, bm = pw.launcher.calls[-1]
    assert tile_m == MOE.tokens_per_expert(m, topk, e) and rows == MOE.max_blocks(m * topk, e, bm) * bm
    assert bm == pw.launcher.tile_for(tile_m).bm


@pytest.mark.parametrize("t,hint", [(1, None), (16, None), (37, 4), (64, 64)])
def test_batched_experts_around_an_emulated_kernel(t, hint, poisoned):
    gen = torch.Generator().manual_seed(t)
    e, n, k = 6, 40, 256
    qw = _weight(W4, e, n, k, gen, bias=True)
    pw = cpu_prepared(qw)
    x = torch.randn(e, t, k, generator=gen).half()
    counts = torch.randint(0, t + 1, (e,), generator=gen)
    counts[0] = 0
    y = MOE.moe_gemm_batched(x, pw, counts.to(torch.int32), tokens_per_expert=hint)
    assert y.shape == (e, t, n) and y.dtype == torch.float16
    for i in range(e):
        c = int(counts[i])
        ref = R.gemm(x[i, :c].float(), qw.expert(i))
        assert torch.allclose(y[i, :c].float(), ref, rtol=2 ** -10, atol=1e-5) and not torch.isnan(y[i, :c]).any()
    rows, tile_m, bm = pw.launcher.calls[-1]
    assert rows == e * (-(-t // bm) * bm) and tile_m == max(2, hint or -(-t // 2))
    with pytest.raises(ShapeError, match=r"x must be float16 or bfloat16 \[E, T, K\] = \[6, T, 256\]"):
        MOE.moe_gemm_batched(x[:, :, :128], pw, counts)
    with pytest.raises(ShapeError, match=r"expert_num_tokens must be an int32 or int64 tensor \[6\]"):
        MOE.moe_gemm_batched(x, pw, counts[:3])


@pytest.mark.parametrize("interleaved", [False, True], ids=["halves", "interleaved"])
def test_gated_activations(interleaved):
    y = torch.randn(3, 5, 16) * 6
    g, u = (y[..., 0::2], y[..., 1::2]) if interleaved else (y[..., :8], y[..., 8:])
    g, u = g.double(), u.double()
    want = {"silu": torch.nn.functional.silu(g) * u,
            "gelu": 0.5 * g * (1 + torch.tanh(math.sqrt(2 / math.pi) * (g + 0.044715 * g ** 3))) * u,
            "swigluoai": (u.clamp(-7, 7) + 1) * g.clamp(max=7) * torch.sigmoid(1.702 * g.clamp(max=7))}
    for act, w in want.items():
        got = R.moe_activation(y, act, interleaved)
        assert got.shape == (3, 5, 8) and got.dtype == torch.float32
        assert torch.allclose(got.double(), w, rtol=1e-6, atol=1e-6), act
    with pytest.raises(ShapeError, match="activation must be one of silu, gelu, swigluoai"):
        R.moe_activation(y, "relu")
    with pytest.raises(ShapeError, match="even width"):
        R.moe_activation(y[..., :5])


@pytest.mark.parametrize("act", [FP16, BF16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("activation,interleaved", [("silu", False), ("swigluoai", True)])
def test_moe_mlp_around_an_emulated_kernel(act, activation, interleaved, poisoned):
    gen = torch.Generator().manual_seed(13)
    e, h, inter, m, topk = 8, 256, 128, 11, 2
    dt = torch.bfloat16 if act.fmt == "bf16" else torch.float16
    eps = 2.0 ** (-8 if act.fmt == "bf16" else -11)
    w13 = _weight(W4, e, 2 * inter, h, gen, bias=True)
    w2 = _weight(W4, e, h, inter, gen)
    p13, p2 = cpu_prepared(w13, act), cpu_prepared(w2, act)
    x = torch.randn(m, h, generator=gen).to(dt)
    ids = _ids(m, e, topk, gen, 0.1)
    wts = torch.rand(m, topk, generator=gen)
    y = MOE.moe_mlp(x, p13, p2, ids, wts, activation=activation, interleaved=interleaved)
    assert y.shape == (m, h) and y.dtype == dt and not torch.isnan(y).any()
    ref = R.moe_mlp(x.float(), w13, w2, ids, wts, activation, interleaved, round_to=dt)
    a = R.moe_activation(R.moe_gemm(x.float(), w13, ids).to(dt).float(), activation, interleaved).to(dt).float()
    scale = (R.moe_gemm(a, w2, ids).abs() * wts[..., None]).sum(1)
    assert bool(((y.float() - ref).abs() <= 2 * eps * scale + 2 * eps * ref.abs() + 1e-5).all())
    with pytest.raises(ShapeError, match="w13 writes|N = 2 x w2's K"):
        MOE.moe_mlp(x, p2, p13, ids)
    with pytest.raises(ShapeError, match="activation must be one of"):
        MOE.moe_mlp(x, p13, p2, ids, activation="relu")


@pytest.mark.parametrize("m,e,topk", [(1, 8, 2), (5, 8, 2), (33, 16, 4)])
def test_act_order_around_an_emulated_kernel(m, e, topk, poisoned):
    """MoE weights with act order: each block's rows gathered in its expert's column order (the torch routing
    here: a gather by each row's expert), the GEMM, the batched format and the MLP against the reference."""
    gen = torch.Generator().manual_seed(m + e)
    n, k, inter = 72, 256, 64
    qw = _weight(AO, e, n, k, gen, bias=True)
    pw = cpu_prepared(qw, BF16)
    assert pw.packed.perm.shape == (e, k) and pw.packed.perm.dtype == torch.int32
    assert any("each expert's own" in note for note in pw.plan.notes)
    ids = _ids(m, e, topk, gen, 0.1)
    wts = torch.rand(m, topk, generator=gen)
    eps = 2.0 ** -8
    for x in (torch.randn(m, k, generator=gen), torch.randn(m, topk, k, generator=gen)):
        x = x.to(torch.bfloat16)
        ref = R.moe_gemm(x.float(), qw, ids)
        y = MOE.moe_gemm(x, pw, ids)
        assert not torch.isnan(y).any() and torch.allclose(y.float(), ref, rtol=2 * eps, atol=1e-5)
        yr = MOE.moe_gemm(x, pw, ids, wts, reduce=True)
        tol = 2 * eps * (ref.abs() * wts[..., None]).sum(1) + 1e-5
        assert bool(((yr.float() - R.moe_gemm(x.float(), qw, ids, wts, reduce=True)).abs() <= tol).all())
    xb = torch.randn(e, 7, k, generator=gen).to(torch.bfloat16)
    counts = torch.randint(0, 8, (e,), generator=gen).to(torch.int32)
    yb = MOE.moe_gemm_batched(xb, pw, counts)
    for i in range(e):
        c = int(counts[i])
        assert torch.allclose(yb[i, :c].float(), R.gemm(xb[i, :c].float(), qw.expert(i)), rtol=2 * eps, atol=1e-5)
    w13, w2 = _weight(AO, e, 2 * inter, k, gen), _weight(AO, e, k, inter, gen)
    p13, p2 = cpu_prepared(w13, BF16), cpu_prepared(w2, BF16)
    x = torch.randn(m, k, generator=gen).to(torch.bfloat16)
    y = MOE.moe_mlp(x, p13, p2, ids, wts)
    ref = R.moe_mlp(x.float(), w13, w2, ids, wts, round_to=torch.bfloat16)
    a = R.moe_activation(R.moe_gemm(x.float(), w13, ids).to(torch.bfloat16).float(), "silu").to(torch.bfloat16)
    scale = (R.moe_gemm(a.float(), w2, ids).abs() * wts[..., None]).sum(1)
    assert bool(((y.float() - ref).abs() <= 2 * eps * scale + 2 * eps * ref.abs() + 1e-5).all())


def test_the_ops_trace_with_their_shapes():
    """torch.ops.humming.moe_gemm / moe_gemm_batched / moe_mlp: what torch.compile sees (fake tensors)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from humming.ops.gemm import _register

    gen = torch.Generator().manual_seed(1)
    w13, w2 = _weight(W4, 4, 256, 128, gen), _weight(W4, 4, 128, 128, gen)
    p13, p2 = cpu_prepared(w13), cpu_prepared(w2)
    h13, h2 = _register(p13), _register(p2)
    with FakeTensorMode():
        x = torch.empty(5, 128, dtype=torch.float16)
        ids = torch.empty(5, 2, dtype=torch.int32)
        assert torch.ops.humming.moe_gemm(x, h13, ids, None, False, None).shape == (5, 2, 256)
        assert torch.ops.humming.moe_gemm(x, h13, ids, None, True, None).shape == (5, 256)
        xb = torch.empty(4, 16, 128, dtype=torch.float16)
        assert torch.ops.humming.moe_gemm_batched(xb, h13, torch.empty(4, dtype=torch.int32), None, 0).shape == (
            4, 16, 256)
        y = torch.ops.humming.moe_mlp(x, h13, h2, ids, None, "silu", False, 1.702, 7.0, None, None)
        assert y.shape == (5, 128) and y.dtype == torch.float16


def test_moe_gemm_checks_its_inputs():
    gen = torch.Generator().manual_seed(3)
    qw = _weight(W4, 4, 32, 128, gen)
    pw = cpu_prepared(qw)
    x = torch.randn(3, 128).half()
    ids = _ids(3, 4, 2, gen)
    cases = [((x.float(), pw, ids), "x must be a float16 or bfloat16"),
             ((x[:, :64], pw, ids), r"x must be \[M, K\] = \[3, 128\]"),
             ((x, pw, ids.float()), "topk_ids must be an int32 or int64"),
             ((x, pw, ids[0]), "topk_ids must be an int32 or int64 tensor \\[M, topk\\]"),
             ((x, pw, ids + 4), "topk_ids must be below num_experts = 4"),
             ((x, pw, ids, torch.rand(3, 3)), r"topk_weights must be a float tensor \[M, topk\]")]
    for args, msg in cases:
        with pytest.raises(ShapeError, match=msg):
            MOE.moe_gemm(*args)
    dense = PreparedWeight(LayerSpec(32, 128, W4), None, None, None, torch.device("cpu"))
    with pytest.raises(ShapeError, match="dense"):
        MOE.moe_gemm(x, dense, ids)
    from humming.ops.gemm import _check_x

    with pytest.raises(ShapeError, match="MoE weight .*use humming.moe_gemm"):
        _check_x(x, pw)
    assert MOE.moe_gemm(x[:0], pw, ids[:0]).shape == (0, 2, 32)
    assert MOE.moe_gemm(x[:0], pw, ids[:0], reduce=True).shape == (0, 32)


def test_an_engines_moe_kernel_may_skip_the_ids_check():
    """MoEKernel.apply checks the ids by default (a host synchronization per eager call); ``check_ids=False``
    skips that, and an id past the experts then counts as one held elsewhere: its pair's row is zeros."""
    from humming.engine import MoEKernel

    gen = torch.Generator().manual_seed(11)
    qw = _weight(W4, 4, 32, 128, gen)
    kern = object.__new__(MoEKernel)  # (its weight prepared on the CPU, the launch emulated)
    kern.weight = cpu_prepared(qw)
    x = torch.randn(5, 128, generator=gen).half()
    ids = _ids(5, 4, 2, gen)
    ids[1, 0] = 4
    with pytest.raises(ShapeError, match="topk_ids must be below num_experts = 4"):
        kern.apply(x, ids)
    y = kern.apply(x, ids, check_ids=False)
    held = ids.clone()
    held[1, 0] = -1
    assert torch.equal(y[1, 0], torch.zeros_like(y[1, 0]))
    assert torch.equal(y, kern.apply(x, held))


def test_reference_takes_experts_held_elsewhere():
    gen = torch.Generator().manual_seed(5)
    qw = _weight(W4, 4, 16, 128, gen, bias=True)
    x = torch.randn(3, 128, generator=gen)
    ids = torch.tensor([[0, -1], [3, 1], [-1, -1]])
    y = R.moe_gemm(x, qw, ids)
    assert bool((y[ids < 0] == 0).all())
    assert torch.allclose(y[1, 0], R.gemm(x[1:2], qw.expert(3))[0], atol=1e-6)
    with pytest.raises(ShapeError, match="below 4"):
        R.moe_gemm(x, qw, ids + 4)


# ---------------------------------------------------------------------------
# packing
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("scheme,act", [
    (W4, FP16), (WeightScheme("uint4", "group", 64, zero_point="int"), BF16),
    (WeightScheme("e4m3", "channel", scale_fmt="fp32"), BF16),
    (WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"), FP16),
    (WeightScheme("int8", "channel", scale_fmt="fp32"), ActivationScheme("int8", "dynamic_token")),
    (WeightScheme("uint3", "group", 40, zero_point="float"), FP16), (AO, BF16),
    (WeightScheme("int4", "group", 40, act_order=True), FP16)], ids=lambda v: getattr(v, "describe", str)())
def test_moe_packing_stacks_the_dense_packings(scheme, act):
    from humming_nvidia import gemm_mma_sync as G

    gen = torch.Generator().manual_seed(11)
    qw = _weight(scheme, 3, 40, 640, gen, bias=True)
    pw = cpu_prepared(qw, act)
    pk, r = pw.packed, pw.packed.recipe
    # (the launch's out_mul: a power of two, at most each expert's own; the channel multipliers hold the rest)
    outs = [abs(G.pack_weight(qw.expert(e), r, "cpu").out_mul) for e in range(3)]
    assert r.moe and r.has_chan and pk.experts == 3 and math.frexp(pk.out_mul)[0] == 0.5
    assert min(outs) / 2 < pk.out_mul <= min(outs)
    ws, ss, cs, bs = pk.estrides
    assert pk.w.numel() == 3 * ws and pk.chan.numel() == 3 * cs == 3 * pk.np_ and pk.bias.numel() == 3 * bs
    for e in range(3):
        d = G.pack_weight(qw.expert(e), r, "cpu")
        assert torch.equal(pk.w[e * ws:(e + 1) * ws], d.w)
        if d.sz is not None:
            assert torch.equal(pk.sz.reshape(3, -1)[e].view(torch.uint8),
                               d.sz.reshape(-1).view(torch.uint8)) and ss == d.sz.numel() * d.sz.element_size()
        c = d.chan if d.chan is not None else torch.ones(d.np_)
        assert torch.allclose(pk.chan[e * cs:(e + 1) * cs].double() * pk.out_mul, c.double() * d.out_mul, rtol=1e-7)
        assert torch.equal(pk.bias[e * bs:(e + 1) * bs], d.bias)
        if scheme.act_order:  # (each expert's kernel columns, int32 for the gather; K: padded groups' zeros)
            assert pk.perm.dtype == torch.int32 and torch.equal(pk.perm[e].long(), d.perm)
            assert pk.descriptor["act_order"] == "per expert"
        else:
            assert torch.equal(pk.perm, d.perm) if d.perm is not None else pk.perm is None
    if scheme.act_order and scheme.group_size == 40:  # (groups of 40 padded to 48: the zero column in the gaps)
        assert pk.perm.shape == (3, 640 // 40 * 48) and int((pk.perm == 640).sum()) == 3 * 16 * 8


# ---------------------------------------------------------------------------
# plans and machine code
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("moe_pdl,xgather", [("0", None), ("1", None), (None, None), ("0", "0")])
@pytest.mark.parametrize("device", ["T4", "A100", "L40S", "H200", "B200"])
def test_moe_plans(device, moe_pdl, xgather, monkeypatch):
    if moe_pdl is None:  # (the default: on)
        monkeypatch.delenv("HUMMING_MOE_PDL", raising=False)
    else:
        monkeypatch.setenv("HUMMING_MOE_PDL", moe_pdl)
    if xgather is None:  # (the default: on)
        monkeypatch.delenv("HUMMING_MOE_XGATHER", raising=False)
    else:
        monkeypatch.setenv("HUMMING_MOE_XGATHER", xgather)
    clear_plans()  # (plans are cached; the variables are read when one is made)
    p = humming.plan(LayerSpec(1536, 2048, W4, FP16, num_experts=128), device)
    assert p.runnable and p.family == "mma_sync", p.explain()
    pdl = " + programmatic_launch (every launch of a call)" if device in ("H200", "B200") and moe_pdl != "0" else ""
    assert p.components["scheduler"] == "moe_grouped" + pdl and p.components["epilogue"] == "moe_topk"
    assert ("+ token_rows (each routed row read from its token's row of x" in p.components["loader"]) == (
        xgather is None), p.components["loader"]
    clear_plans()
    assert any("the M ranges count the rows one expert gets" in note for note in p.notes)
    # (a routed MoE block gets two rows or more, so the first routed range's tile serves from one row -- directly
    # routed calls, one row per block, too -- unless the one-row range has an MoE tile of its own: int4 decode of
    # 32 or more experts on chips with cp.async, MOE_DECODE_INT4 for direct calls and MOE_ROUTED_INT4 from two rows)
    first = p.tuning[0]
    assert first.lo == 1 and first.config.get("stream"), first
    if device != "T4":
        assert (first.hi, first.config["bn"], p.tuning[1].lo, p.tuning[1].hi, p.tuning[1].config["bn"]) == (
            1, 64, 2, 8, 128), p.tuning[:2]
        assert (first.config["wk"], p.tuning[1].config["wk"]) == (2, 1), p.tuning[:2]
    else:
        assert first.hi != 1, first
    few = humming.plan(LayerSpec(1536, 2048, W4, FP16, num_experts=8), device)
    assert few.tuning[0].lo == 1 and few.tuning[0].hi != 1, few.tuning[0]
    for r in p.tuning:
        assert not (r.config.get("tma") or r.config.get("sk") or r.config.get("cluster", 1) != 1), r
    spec = p.kernel(1)
    assert dict(spec.config)["MOE"] == 1 and dict(spec.config)["HAS_CHAN"]
    dense = humming.plan(LayerSpec(1536, 2048, W4, FP16), device)
    assert "MOE" not in dict(dense.kernel(1).config)
    ao = humming.plan(LayerSpec(1536, 2048, AO, FP16, num_experts=8), device)
    assert ao.runnable and any("each expert's own" in note for note in ao.notes), ao.explain()
    if device != "T4":  # (int8 activations in groups: refused with act order, the gather permuting first)
        with pytest.raises(humming.UnsupportedError, match=r"act order take no per-group activation scales"):
            humming.plan(LayerSpec(1536, 2048, AO, ActivationScheme("int8", "dynamic_group", 128),
                                   num_experts=8), device)


@pytest.mark.parametrize("act", [FP16, BF16])
def test_moe_decode_rings_compile_without_loop_spills(tmp_path, act):
    """The two decode rings of MoE layers of many experts (MOE_DECODE_INT4: 64 rows, direct calls; MOE_ROUTED_INT4:
    128 rows, one warp along K, 2-8 rows per expert), as Ampere, Ada, Hopper and Blackwell plan them, reading the
    routed rows from the tokens' rows (XGATHER), compile without local memory in their loops and stack: the routed
    ring spilled x_rows + m0 on sm_80 and sm_89 (8 bytes, a stack load every turn) until those targets formed it
    again each turn."""
    from humming.device import get_device
    from humming.jit import Runtime
    from humming.jit import inspect as I
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    specs = {}
    for device in ("A100", "L40S", "H200", "B200", "RTX-5090"):
        hw = get_device(device)
        p = humming.plan(LayerSpec(1536, 2048, W4, act, num_experts=128, out_dtype=act.fmt), hw)
        r = G.recipe_from_plan(p, hw)
        assert r.xgather, device
        for m, tile in ((1, G.MOE_DECODE_INT4), (2, G.MOE_ROUTED_INT4)):
            cfg = dict(p.tuning_for(m).config)
            assert {k: cfg[k] for k in ("bm", "bn", "bk", "wn", "wk")} == {
                "bm": tile.bm, "bn": tile.bn, "bk": tile.bk, "wn": tile.wn, "wk": tile.wk}, (device, m, cfg)
            specs[p.kernel(m)] = (device, m)
    assert len(specs) == 10
    rt.warmup(list(specs), executor="thread")
    for spec, what in specs.items():
        cubin = rt.kernel(spec).cubin
        usage = I.resource_usage(cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (what, usage)
        assert I.local_in_loops(I.disassemble(cubin)) == 0, what


#: MoE decode tiles of 5-7-bit codes that take three ring slots (four_slots_spill), and one that keeps four:
#: (planning device, format, group, zero points, activation, the GPU test's K, stream, slots); the streaming tiles
#: (stream 1) of 6- and 7-bit codes, and the sixteen-warp long-K ring (stream 4) of 3- and 5-7-bit codes in groups
#: of 64
MOE_THREE_SLOTS = [("A100", "int6", 128, "none", "int8", 2176, 1, 3),
                   ("L40S", "int7", 128, "none", "fp16", 2176, 1, 3),
                   ("L40S", "int7", 32, "none", "fp16", 2176, 1, 3),
                   ("A100", "uint6", 16, "int", "fp16", 2176, 1, 3),
                   ("A100", "int7", 128, "none", "int8", 2176, 1, 4),
                   ("A100", "uint7", 64, "int", "e4m3", 14336, 4, 3),
                   ("L40S", "int5", 64, "none", "int8", 14336, 4, 3),
                   ("A100", "int3", 64, "none", "int8", 14336, 4, 3)]


def _moe_slots_plan(device, fmt, g, zp, act, n, k):
    a = ActivationScheme(act) if act in ("fp16", "bf16") else ActivationScheme(act, "dynamic_token")
    return humming.plan(LayerSpec(n, k, WeightScheme(fmt, "group", g, zero_point=zp), a, out_dtype="fp16",
                                  num_experts=64, bias=True), device), a


def test_moe_decode_tiles_of_3_and_5_to_7_bit_codes_compile_without_a_stack(tmp_path):
    """MoE decode tiles of 3- and 5-7-bit codes on sm_80 to sm_89. The streaming tiles (stream 1): in groups of 128
    at the floor of two CTAs, int6 with quantized activations kept 24 bytes of stack and five local accesses in the
    loop at four ring slots, int7 with 16-bit ones 16 and four; int7 / uint7 in groups of 32 and uint6 in groups of
    16 kept 8 bytes outside the loops at 255 registers. The sixteen-warp long-K ring, groups of 64: uint7 with
    quantized activations 32-48 bytes and five to seven accesses in the loop, int5 and int3 8 bytes and one. They
    take three slots and compile without a stack; int7 in groups of 128 with quantized activations keeps four (three
    spilled there)."""
    from humming.jit import Runtime
    from test_gemm_compile import _compile_without_stack

    specs = {}
    for device, fmt, g, zp, act, long_k, stream, slots in MOE_THREE_SLOTS:
        for n, k in (((2048, 4096), (7168, 2048)) if stream == 1 else ((4096, long_k),)):
            p, _ = _moe_slots_plan(device, fmt, g, zp, act, n, k)
            spec = p.kernel(1)
            cfg = dict(spec.config)
            assert (cfg["STREAM"], cfg["STAGES"]) == (stream, slots), (device, fmt, g, act, cfg)
            specs[spec] = (device, fmt, g, act, f"{n}x{k}")
    _compile_without_stack(Runtime(cache_dir=tmp_path), specs)


def test_prepare_as_another_gpu_compiles_for_this_one():
    """gemm_mma_sync.prepare_as (the GPU fuzz's older-GPU plans, scripts/gpu_moe_tiles.py --as): an A100's plan of
    an MoE layer packed with the recipe of this GPU (an H200's target) and launched as the A100 would (its SM count
    and shared memory, plain launches): its ranges are the A100 plan's, MoE packing (every expert) included."""
    from humming.device import get_device
    from humming_nvidia import gemm_mma_sync as G

    qw = _weight(W4, 32, 128, 256, torch.Generator().manual_seed(5))
    layer = LayerSpec(128, 256, W4, FP16, num_experts=32, out_dtype="fp16")
    a100, h200 = get_device("A100"), get_device("H200")
    p = humming.plan(layer, a100)
    packed, launcher = G.prepare_as(p, qw, torch.device("cpu"), h200, a100)
    assert packed.recipe.target == "sm_90a" and packed.recipe.moe and packed.experts == 32
    assert launcher.sm_count == a100.sm_count and not launcher.pdl and launcher.cluster_split == 0
    assert [(lo, hi, t.bm, t.bn, t.bk) for lo, hi, t in launcher.ranges] == [
        (r.lo, r.hi, r.config["bm"], r.config["bn"], r.config["bk"]) for r in p.tuning]


def test_moe_tiles_drop_what_needs_one_matrix_per_launch():
    from humming_nvidia import gemm_mma_sync as G

    recipe = G.Recipe(bits=4, wfloat=False, group=128, moe=True, target="sm_90a")
    tma = G.Tile(64, 128, 128, 1, 8, 1, 4, wgmma=1, tma=1, cluster=2)
    t = G.moe_tile(tma, recipe, 227 * 1024, 4096)
    assert (t.tma, t.cluster, t.sk, t.wgmma) == (0, 1, 0, 1)
    with pytest.raises(humming.UnsupportedError, match="cannot run an MoE kernel"):
        G.kernel_spec(recipe, tma)
    plain = G.Tile(16, 64, 256, 1, 4, 1, 4)
    assert G.moe_tile(plain, recipe, 227 * 1024) is plain
    groups = replace(G.WG_16_DEEP, fold=1, kg=3)  # (groups along K: not tested on MoE)
    assert G.moe_tile(groups, recipe, 227 * 1024, 4096).kg == 1
    with pytest.raises(humming.UnsupportedError, match="cannot run an MoE kernel"):
        G.kernel_spec(recipe, groups)


def test_moe_byte_tiles_of_half_block_groups_take_64_tokens(tmp_path):
    """W4A8 in groups of 64 values (two partial sets per block): dense layers run 128 tokens on TMA stages; the MoE
    twin with cp.async stages spilled in its loop (uint4 g64 with zero points 48 bytes of stack, int4 g64 24 on
    sm_90a) and was the slowest of the tiles measured, so MoE takes 64 tokens there, which compile clean."""
    from humming.jit import Runtime
    from humming.jit import inspect as I
    from humming_nvidia import gemm_mma_sync as G

    tok8 = ActivationScheme("int8", "dynamic_token")
    specs = {}
    for scheme in (WeightScheme("uint4", "group", 64, zero_point="int"), WeightScheme("int4", "group", 64)):
        for device in ("H200", "H20"):
            dense = humming.plan(LayerSpec(4096, 7168, scheme, tok8), device)
            moe = humming.plan(LayerSpec(4096, 7168, scheme, tok8, num_experts=64), device)
            for m in (300, 1000):
                dt, mt = (G.tile_from_config(p.tuning_for(m).config) for p in (dense, moe))
                if dt.wgmma and dt.bm == 128:
                    assert dt.tma and (mt.bm, mt.tma, mt.wgmma) == (64, 0, 1), (device, m, dt, mt)
                    specs[moe.kernel(m)] = (scheme.describe(), device, m)
    assert len(specs) >= 2
    rt = Runtime(cache_dir=tmp_path)
    rt.warmup(list(specs), executor="thread")
    for spec, what in specs.items():
        usage = I.resource_usage(rt.kernel(spec).cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (what, usage)


MOE_VARIANTS = [
    ("int4-g128", W4, FP16, ("sm_75", "sm_80", "sm_89", "sm_90")),
    ("uint4-zp-g64-bf16", WeightScheme("uint4", "group", 64, zero_point="int"), BF16, ("sm_80", "sm_90")),
    ("mxfp4-bf16", WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), BF16, ("sm_80", "sm_90")),
    ("w4a8", W4, ActivationScheme("int8", "dynamic_token"), ("sm_80", "sm_90")),
    ("fp8-channel-a8", WeightScheme("e4m3", "channel", scale_fmt="fp32"), ActivationScheme("e4m3", "dynamic_token"),
     ("sm_89", "sm_90")),
    # int4 codes made e4m3 operands where fp8 mma.sync is native (Ada, consumer Blackwell); bf16 on Hopper's MoE tiles
    ("w4a8-fp8", W4, ActivationScheme("e4m3", "dynamic_token"), ("sm_89", "sm_120", "sm_90")),
]


@pytest.fixture(scope="module")
def moe_kernels(tmp_path_factory):
    from humming.jit import Runtime

    rt = Runtime(cache_dir=tmp_path_factory.mktemp("moe-compile"))
    picks = {}
    for name, scheme, act, devs in MOE_VARIANTS:
        for dev in devs:
            out = "bf16" if act.fmt == "bf16" else "fp16"
            p = humming.plan(LayerSpec(1536, 2048, scheme, act, num_experts=64, out_dtype=out, bias=True), dev)
            assert p.runnable, p.explain()
            for m in (1, 8, 16, 64, 600):
                picks.setdefault((name, dev, p.kernel(m)), p)
    rt.warmup(list(dict.fromkeys(spec for _, _, spec in picks)), executor="thread")
    return {key: (p, rt.kernel(key[2])) for key, p in picks.items()}


def test_moe_kernels_compile_with_the_machine_code_of_their_plans(moe_kernels):
    from humming.jit import inspect as I
    from humming.jit.inspect import main_loop

    assert len(moe_kernels) >= 20
    for (name, dev, spec), (plan, kern) in moe_kernels.items():
        cfg = dict(spec.config)
        assert cfg["MOE"] == 1 and cfg["TMA"] == 0 and cfg["CLUSTER"] == 1 and cfg["SK"] == 0, (name, dev, cfg)
        sass = I.disassemble(kern.cubin)
        op8 = cfg["OP8"]
        if cfg["WG"]:  # (warpgroup MMAs: HGMMA on 16-bit operands, IGMMA on int8, QGMMA on fp8)
            mma = r"[HIQ]GMMA\.64x"
        else:
            mma = (r"IMMA" if op8 in (1, 4) else r"QMMA" if op8 in (2, 3) else r"HMMA\.1688" if dev == "sm_75"
                   else r"HMMA\.16816")
        loop = main_loop(sass)
        assert I.count(loop, mma) > 0, (name, dev, cfg)
        if name == "w4a8-fp8":  # (fp16 pairs into fp8 pairs where the MMA is e4m3; bf16 operands on Hopper)
            assert (op8 == 2) == (dev != "sm_90") and (I.count(loop, r"^F2FP\.SATFINITE\.E4M3") > 0) == (op8 == 2)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] <= 8, (name, dev, usage)
        assert I.count(loop, r"^(LDL|STL)") == 0, (name, dev)


#: MoE layers of fp8 operands that Hopper's byte warpgroup tiles take (fp8 weights per channel, and DeepSeek-V3's
#: 128 x 128 blocks with activations in groups of 128, by default; int4 and AWQ's uint4 codes made e4m3 with
#: HUMMING_MOE_BYTE_WGMMA=1)
MOE_FP8 = [
    ("fp8-channel", WeightScheme("e4m3", "channel", scale_fmt="fp32"), ActivationScheme("e4m3", "dynamic_token")),
    ("fp8-block", WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"),
     ActivationScheme("e4m3", "dynamic_group", 128)),
    ("w4a8-fp8", W4, ActivationScheme("e4m3", "dynamic_token")),
    ("awq4-fp8", WeightScheme("uint4", "group", 128, zero_point="int"), ActivationScheme("e4m3", "dynamic_token")),
]


@pytest.fixture
def moe_byte_wgmma(monkeypatch):
    monkeypatch.setenv("HUMMING_MOE_BYTE_WGMMA", "1")
    clear_plans()  # (plans are cached; the variable is read when one is made)
    yield
    clear_plans()


@pytest.mark.parametrize("name,scheme,act", MOE_FP8, ids=[c[0] for c in MOE_FP8])
def test_moe_fp8_on_hopper_warpgroup_tiles(name, scheme, act, monkeypatch):
    """An fp8 MoE layer on Hopper: fp8 weights take e4m3 operands by default, integer codes made fp8 operands
    (W4A8-FP8) only with HUMMING_MOE_BYTE_WGMMA=1, and 0 keeps both on bf16 operands, the fallback naming the
    switch. e4m3 plans run e4m3 at every M, on warpgroup tiles with cp.async stages (moe_tile), the plan native (no
    emulated mma.sync is issued), the integer codes made e4m3 where the weights are integers, and the 9-16-row
    range on the 32-row tile (moe_fp8_rows). Ada keeps its e4m3 mma.sync plan either way; dense layers do not
    depend on the switch."""
    from humming.device import get_device

    hw = get_device("H200")
    layer = LayerSpec(4096, 7168, scheme, act, num_experts=64, out_dtype="bf16")
    plans = {}
    for env in ("0", None, "1"):
        if env is None:
            monkeypatch.delenv("HUMMING_MOE_BYTE_WGMMA", raising=False)
        else:
            monkeypatch.setenv("HUMMING_MOE_BYTE_WGMMA", env)
        clear_plans()
        plans[env] = (humming.plan(layer, hw), humming.plan(layer.replace(num_experts=0), hw),
                      humming.plan(layer, "L40S"))
    clear_plans()
    off, default, on = plans["0"][0], plans[None][0], plans["1"][0]
    assert off.runnable and off.compute.a == "bf16", off.explain()
    switch = "HUMMING_MOE_BYTE_WGMMA=0" if scheme.is_float else "HUMMING_MOE_BYTE_WGMMA=1"
    assert switch in off.explain(), off.explain()
    assert default.fingerprint() == (on if scheme.is_float else off).fingerprint(), default.explain()
    assert on.runnable and (on.compute.a, on.compute.b, on.compute.emulated) == ("e4m3", "e4m3", False), on.explain()
    assert any("issue the native wgmma form at every M" in n for n in on.notes), on.notes
    for r in on.tuning:
        assert r.config.get("wgmma") and not (r.config.get("tma") or r.config.get("sk")), r
        assert r.config.get("cluster", 1) == 1, r
    assert on.tuning_for(9).config["bm"] == on.tuning_for(17).config["bm"] == 32, on.tuning
    assert on.components["mma"].endswith("wgmma.m64nNk32.e4m3 (M >= 1)"), on.components
    assert on.components["dequantizer"] == ("passthrough" if scheme.is_float else "int_bittrick_cvt")
    assert dict(on.kernel(1).config)["MOE"] == 1 and dict(on.kernel(1).config)["OP8"] == 2
    dense = {plans[env][1].fingerprint() for env in plans}
    assert len(dense) == 1 and plans["1"][1].compute.a == "e4m3"
    # (Ada: activation groups on byte operands need the warpgroup tiles' fold, so bf16 there)
    ada = {plans[env][2].fingerprint() for env in plans}
    assert len(ada) == 1
    ada_on = plans["1"][2]
    assert ada_on.compute.a == ("bf16" if act.quant == "dynamic_group" else "e4m3"), ada_on.explain()


def test_moe_plans_say_from_which_rows_they_issue_wgmma():
    """An MoE plan on Hopper names the rows per expert from which its kernels issue wgmma (its tuning's first
    range from which every range is a warpgroup tile), as dense plans do; before, MoE plans said wgmma was not
    issued at all."""
    for experts, first in ((8, 9), (128, 9)):
        p = humming.plan(LayerSpec(4096, 7168, W4, BF16, num_experts=experts), "H200")
        wg = [r.lo for r in p.tuning if r.config.get("wgmma")]
        assert wg[0] == first, p.tuning
        assert any(n.startswith("the hardware would prefer wgmma") and n.endswith(f"from M >= {first}")
                   for n in p.notes), p.notes
    p = humming.plan(LayerSpec(4096, 7168, WeightScheme("int8", "channel", scale_fmt="fp32"),
                               ActivationScheme("int8", "dynamic_token"), num_experts=64), "H200")
    assert any(n.endswith("from M >= 1") for n in p.notes), p.notes


def test_moe_fp8_warpgroup_kernels_compile_to_qgmma(tmp_path, moe_byte_wgmma):
    """With HUMMING_MOE_BYTE_WGMMA=1 every range's kernel of the fp8 MoE layers above compiles for sm_90a to e4m3
    warpgroup MMAs (QGMMA) in its main loop, no HMMA / HGMMA, the integer codes' F2FP conversions where the
    weights are integers, and no local memory (the whole set, 1-4096 tokens and three shapes, was scanned so too:
    scripts/spill_scan.py, fifty-sixth session)."""
    from humming.jit import Runtime
    from humming.jit import inspect as I
    from humming.jit.inspect import main_loop

    specs = {}
    for name, scheme, act in MOE_FP8:
        p = humming.plan(LayerSpec(1536, 2048, scheme, act, num_experts=64, out_dtype="bf16", bias=True), "H200")
        for r in p.tuning:
            specs.setdefault(p.kernel(max(r.lo, 2)), (name, r.lo, scheme.is_float))
    assert len(specs) >= 16
    rt = Runtime(cache_dir=tmp_path)
    rt.warmup(list(specs), executor="thread")
    for spec, (name, lo, flt) in specs.items():
        kern = rt.kernel(spec)
        loop = main_loop(I.disassemble(kern.cubin))
        assert I.count(loop, r"QGMMA\.64x") > 0 and I.count(loop, r"HGMMA|HMMA") == 0, (name, lo)
        assert (I.count(loop, r"^F2FP\.SATFINITE\.E4M3") > 0) == (not flt), (name, lo)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0 and I.count(loop, r"^(LDL|STL)") == 0, (name, lo, usage)


#: (the lean rings at 2-8 rows per expert on the first, warpgroup or mma.sync tiles above; zero points and float
#: codes on the second)
XGATHER_LAYERS = [(W4, FP16, 1536, 2048), (WeightScheme("uint4", "group", 64, zero_point="int"), BF16, 14336, 4096)]


@pytest.fixture
def xgather(monkeypatch):
    monkeypatch.setenv("HUMMING_MOE_XGATHER", "1")


def test_only_16_bit_activations_in_the_layers_columns_gather_in_the_gemm(xgather):
    """HUMMING_MOE_XGATHER=1 prepares MoE weights of 16-bit activations for kernels that read the routed rows
    from the tokens' rows (Recipe.xgather, the kernels' XGATHER); quantized activations, act order and padded
    groups keep the gather kernel (their rows are written, quantized or in other columns, before the GEMM)."""
    from humming.device import get_device
    from humming_nvidia import gemm_mma_sync as G

    hw = get_device("H200")

    def recipe(scheme, act, k=2048):
        return G.recipe_from_plan(humming.plan(LayerSpec(1536, k, scheme, act, num_experts=8), hw), hw)

    assert recipe(W4, FP16).xgather and recipe(W4, BF16).xgather
    assert not recipe(W4, ActivationScheme("int8", "dynamic_token")).xgather
    assert not recipe(AO, FP16).xgather and not recipe(WeightScheme("int4", "group", 24), FP16, 2040).xgather
    assert not G.recipe_from_plan(humming.plan(LayerSpec(1536, 2048, W4, FP16), hw), hw).xgather  # (dense)
    r = recipe(W4, FP16)
    tiles = [t for _, _, t in G.ranges_from_plan(humming.plan(LayerSpec(1536, 2048, W4, FP16, num_experts=8), hw),
                                                  r, 227 * 1024, 2048)]
    assert all(dict(G.kernel_spec(r, t).config)["XGATHER"] == 1 for t in tiles)
    with pytest.raises(humming.UnsupportedError, match="16-bit activations"):
        G.kernel_spec(replace(r, moe=False), tiles[0])


@pytest.mark.parametrize("target_device", ["T4", "A100", "H200"])
def test_gathering_moe_kernels_compile_without_loop_spills(tmp_path, xgather, target_device):
    """The XGATHER kernels of two MoE layers' plans (lean rings, mma.sync and warpgroup tiles; plain loads on
    Turing) compile with no local memory in their loops and at most 8 bytes of stack, their main loops within a
    fifth of the kernels that read routed rows in order (the rings read each row's offset every turn: the uint4
    g64 ring of four warps along N, 345-354 instructions against 304-307; a tenth until the rows in order lost their
    copy loop's overhead, fifty-eighth session). (sm_89 and sm_100a compile as sm_80 and sm_90a do here: checked
    once, not kept in the suite for its time.)"""
    from humming.device import get_device
    from humming.jit import Runtime, inspect as I
    from humming_nvidia import gemm_mma_sync as G

    hw = get_device(target_device)
    rt = Runtime(cache_dir=tmp_path)
    pairs = {}
    for scheme, act, n, k in XGATHER_LAYERS:
        p = humming.plan(LayerSpec(n, k, scheme, act, num_experts=8, out_dtype=act.fmt), hw)
        if not p.runnable:
            continue
        r = G.recipe_from_plan(p, hw)
        assert r.xgather, (target_device, scheme.describe())
        ranges = G.ranges_from_plan(p, r, int(hw.max_smem_per_block), G.plan_kp(p, r))
        assert ranges[0][1] != 1, ranges  # (no one-token tile: MoE blocks get two rows or more)
        for _, _, tile in ranges:
            pairs[G.kernel_spec(r, tile)] = G.kernel_spec(replace(r, xgather=False), tile)
    assert len(pairs) >= 4
    rt.warmup(list(pairs) + list(pairs.values()), executor="thread")
    for spec, plain in pairs.items():
        kern = rt.kernel(spec)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        loop, loop0 = (I.main_loop(I.disassemble(rt.kernel(s).cubin)) for s in (spec, plain))
        assert usage["LOCAL"] == 0 and usage["STACK"] <= 8, (spec.name, usage)
        assert I.count(loop, r"^(LDL|STL)") == 0, spec.name
        assert len(loop.splitlines()) <= 1.2 * len(loop0.splitlines()) + 8, (spec.name, len(loop.splitlines()),
                                                                               len(loop0.splitlines()))


def test_routed_rows_read_from_the_tokens_rows_around_an_emulated_kernel(xgather, poisoned, monkeypatch):
    """The GEMM of routed rows given as offsets in the token rows (x_rows, moe_route's XOFF: (pair / div) x ldx,
    -1 - (r mod x's rows) x ldx for padding) computes what it computes on the rows gathered first, for [M, K] and
    [M, topk, K] inputs (the real rows: padding rows' results are not read);
    weights packed without xgather gather first (_gathering: None), and their launcher refuses x_rows."""
    gen = torch.Generator().manual_seed(23)
    m, e, topk, n, k = 9, 8, 2, 40, 256
    qw = _weight(W4, e, n, k, gen)
    pw = cpu_prepared(qw)
    assert pw.packed.recipe.xgather
    ids = _ids(m, e, topk, gen, 0.2)
    tile_m = MOE.tokens_per_expert(m, topk, e)
    bm = pw.launcher.tile_for(tile_m).bm
    route = MOE.moe_route(ids, e, bm)
    for x in (torch.randn(m, k, generator=gen).half(), torch.randn(m, topk, k, generator=gen).half()):
        x2, div = x.reshape(-1, k), topk if x.dim() == 2 else 1
        xk = MOE._gathering(pw, x2)
        assert xk is x2
        pairs = torch.arange(m * topk)
        held = route.rows < route.num_rows
        offsets = (-1 - torch.arange(route.num_rows) % x2.shape[0] * x2.stride(0)).to(torch.int32)
        offsets[route.rows[held]] = (pairs[held] // div * x2.stride(0)).to(torch.int32)
        xs = torch.zeros(route.num_rows, k, dtype=x.dtype)
        xs[route.rows[held]] = x2[pairs[held] // div]
        want = MOE._routed_gemm(xs, pw, route.expert_ids, tile_m, None)
        got = MOE._routed_gemm(xk, pw, route.expert_ids, tile_m, None, x_rows=offsets)
        used = route.expert_ids.repeat_interleave(bm) >= 0
        real = torch.zeros(route.num_rows, dtype=torch.bool)
        real[route.rows[held]] = True
        assert torch.equal(got[real], want[real]) and not torch.isnan(got[used]).any()
    xt = torch.randn(k, m, generator=gen).half().T  # (columns not contiguous: copied first)
    assert MOE._gathering(pw, xt).stride() == (k, 1)
    monkeypatch.setenv("HUMMING_MOE_XGATHER", "0")
    plain = cpu_prepared(qw)
    assert not plain.packed.recipe.xgather and MOE._gathering(plain, x2) is None
    with pytest.raises(ValueError, match="x_rows needs kernels that gather"):
        plain.launcher.inner(x2, torch.empty(route.num_rows, n), None, None, None, route.expert_ids, tile_m,
                             x_rows=offsets)


def _combined(ys, route, topk_weights=None, reduce=False):
    """moe_combine emulated: each pair's row of ys at route.rows, zeros for a pair of an absent expert (past the
    rows, or with direct routing an id outside [0, E)), weighted and summed in fp32 as asked."""
    if route.direct:
        held = (route.expert_ids >= 0) & (route.expert_ids < route.experts)
    else:
        held = route.rows < route.num_rows
    y = torch.where(held[:, None], ys[route.rows.clamp(max=ys.shape[0] - 1)].float(), 0.0)
    m, topk = topk_weights.shape if topk_weights is not None else (route.rows.numel(), 1)
    y = y.view(m, topk, -1)
    if topk_weights is not None:
        y = y * topk_weights.float()[..., None]
    return y.sum(1) if reduce else y


@pytest.mark.parametrize("m,e,topk,absent", [(1, 8, 2, 0.0), (2, 64, 8, 0.3), (4, 128, 8, 0.0), (1, 16, 4, 0.5)])
def test_direct_routing_around_an_emulated_kernel(m, e, topk, absent, poisoned, monkeypatch):
    """Calls of at most E / 4 pairs route directly (no routing kernel): block b of rows is pair b's, its expert the
    caller's id, its first row the pair's (an offset in x, XOFF's, or its pair for the gather) and the others
    padding; the combine reads pair b at row b x BM and zeros for ids outside [0, E) (held elsewhere, or past E
    unchecked). Through the emulated GEMM: reference.moe_gemm's rows, for [M, K] and [M, topk, K] inputs, int32
    and int64 ids. More pairs, act order, or HUMMING_MOE_DIRECT=0: the routing kernel (direct_routing)."""
    gen = torch.Generator().manual_seed(31 * m + e)
    n, k = 40, 256
    qw = _weight(W4, e, n, k, gen, bias=True)
    pw = cpu_prepared(qw)
    ids = _ids(m, e, topk, gen, absent)
    ids[-1, -1] = e + 5  # (an id past E, as an unchecked call may get: a pair of an absent expert)
    held = ids.masked_fill(ids >= e, -1)
    wts = torch.rand(m, topk, generator=gen)
    tile_m = MOE.tokens_per_expert(m, topk, e)
    bm = pw.launcher.tile_for(tile_m).bm
    for x in (torch.randn(m, k, generator=gen).half(), torch.randn(m, topk, k, generator=gen).half()):
        x2, div = x.reshape(-1, k), topk if x.dim() == 2 else 1
        ref = R.moe_gemm(x.float(), qw, held)
        for dt in (torch.int32, torch.int64):
            route = MOE._direct_route(ids.to(dt), pw, bm, xoff=(div, x2.stride(0)))
            assert route.direct and route.blocks == m * topk and route.expert_ids.dtype == torch.int32
            assert torch.equal(route.expert_ids, ids.reshape(-1).to(torch.int32))
            ys = MOE._routed_gemm(x2, pw, route.expert_ids, tile_m, None, x_rows=route.src)
            got = _combined(ys, route, wts)
            assert torch.allclose(got, ref * wts[..., None], rtol=2 ** -9, atol=1e-5)
            assert bool((got[held < 0] == 0).all())
            summed = _combined(ys, route, wts, reduce=True)
            tol = 2 ** -10 * (ref.abs() * wts[..., None]).sum(1) + 1e-5  # (each row rounded to fp16 once)
            assert bool(((summed - (ref * wts[..., None]).sum(1)).abs() <= tol).all())
        plain = MOE._direct_route(ids, pw, bm)  # (the gather's tables: each block's first row its pair)
        assert torch.equal(plain.src.view(-1, bm)[:, 0], torch.arange(m * topk, dtype=torch.int32))
        assert bool((plain.src.view(-1, bm)[:, 1:] == -1).all())
        xs = torch.zeros(plain.num_rows, k, dtype=x.dtype)
        live = plain.src >= 0
        xs[live] = x2[plain.src[live].long() // div]
        ys = MOE._routed_gemm(xs, pw, plain.expert_ids, tile_m, None)
        assert torch.allclose(_combined(ys, plain, wts), ref * wts[..., None], rtol=2 ** -9, atol=1e-5)
    assert MOE.direct_routing(m * topk, pw) and MOE.direct_tokens(pw.layer, topk) == e // (4 * topk) >= m
    # (the tile: the one-row range's, or the next one's where that is wider and its CTAs fill the SMs 3 times)
    assert MOE.direct_rows(8, 1536, (8, 64), (8, 128), 132) == MOE.direct_rows(32, 1536, (8, 64), (8, 128), 132) == 1
    assert MOE.direct_rows(32, 2048, (8, 64), (8, 128), 132) == 2
    assert MOE.direct_rows(32, 2048, (8, 64), (8, 64), 132) == MOE.direct_rows(32, 2048, (8, 64), (16, 128), 132) == 1
    assert MOE.direct_rows(32, 2048, (8, 64), (8, 128), 0) == 1
    assert MOE._tile_rows(m, topk, pw, True) == MOE.direct_rows(m * topk, n, *[
        (t.bm, t.bn) for t in (pw.launcher.tile_for(1), pw.launcher.tile_for(2))], 0)
    assert not MOE.direct_routing(e // 4 + 1, pw)  # (more than E / 4 pairs)
    ao = cpu_prepared(_weight(AO, 8, 40, 256, gen))
    assert not MOE.direct_routing(1, ao) and MOE.direct_tokens(ao.layer, 1) == 0
    monkeypatch.setattr(MOE, "DIRECT_ROUTE", False)
    assert not MOE.direct_routing(m * topk, pw) and MOE.direct_tokens(pw.layer, topk) == 0


def test_moe_and_dense_params_share_one_struct():
    import ctypes

    from humming_nvidia import mma_sync_kernel as G

    # (the tensor map at byte 128, the MoE fields after it, the struct a multiple of TensorMap's 64-byte alignment)
    assert G.GemmParams.tmap.offset == 128 and G.GemmParams.expert_ids.offset == 256
    assert ctypes.sizeof(G.GemmParams) == 320 and G._TMA_TAIL == 256 - G.GemmParams.tma_rows.offset


@pytest.mark.parametrize("target", ["sm_75", "sm_80", "sm_89", "sm_90a", "sm_100a", "sm_120a"])
def test_routing_kernels_compile(tmp_path, target):
    """moe_route.cuh's kernels: the one-CTA routing (shared-memory atomics, a warp-shuffle scan), the gather
    (16-byte copies where VEC), the combine (fp32 sums of 16-bit values), the activation; no local memory. From
    sm_90 each lets the next kernel launch (PREEXIT) and waits for the previous one (ACQBULK) before any access
    to global memory; older targets have neither."""
    from humming.jit import Runtime, inspect as I

    rt = Runtime(cache_dir=tmp_path)
    specs = [MOE.moe_kernel_spec("moe_route", target, IDS64=i, XOFF=o) for i in (False, True) for o in (False, True)]
    specs += [MOE.moe_kernel_spec("moe_gather", target, VEC=v, PERM=False) for v in (False, True)]
    specs += [MOE.moe_kernel_spec("moe_gather", target, VEC=False, PERM=True)]
    specs += [MOE.moe_kernel_spec("moe_combine", target, OUT_BF16=b, WEIGHTED=w, REDUCE=r)
              for b in (False, True) for w in (False, True) for r in (False, True)]
    specs += [MOE.moe_kernel_spec("moe_act", target, OUT_BF16=b, ACT=a, INTERLEAVED=i)
              for b in (False, True) for a in (0, 1, 2) for i in (False, True)]
    rt.warmup(specs, executor="thread")
    for spec in specs:
        kern = rt.kernel(spec)
        sass = I.disassemble(kern.cubin)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (spec.name, usage)
        _waits_first(sass, int(target[3:].rstrip("af")) >= 90, spec.name)
        if spec.family == "moe_route":
            assert I.count(sass, r"^ATOMS\.") >= 2 and I.count(sass, r"^SHFL\.UP") >= 5, spec.name
        elif spec.family == "moe_gather" and spec.get("VEC"):
            assert I.count(sass, r"^LDG\.E\.128") > 0 and I.count(sass, r"^STG\.E\.128") > 0, spec.name
        elif spec.family == "moe_combine" and (spec.get("WEIGHTED") or spec.get("REDUCE")):
            assert I.count(sass, r"^FADD|^FFMA|^FMUL") > 0, spec.name
        elif spec.family == "moe_act":  # (the exponential on the SFU; tanh as the chip computes it)
            assert I.count(sass, r"^MUFU\.(EX2|TANH|RCP)") > 0, spec.name
    with pytest.raises(ValueError, match="moe_gather"):
        MOE.moe_kernel_spec("moe_gather", target, VEC=True, PERM=False, REDUCE=True)
    with pytest.raises(ValueError, match="moe_route"):
        MOE.moe_kernel_spec("moe_route", target, IDS64=True)


def _waits_first(sass: str, pdl: bool, name: str) -> None:
    """The kernel's launch trigger and wait come before its first global load, store or atomic (pdl), or it
    has neither."""
    lines = sass.splitlines()
    if not pdl:
        assert not any(re.search(r"\b(ACQBULK|PREEXIT)\b", line) for line in lines), name
        return
    at = {op: next(i for i, line in enumerate(lines) if re.search(rf"\b{op}\b", line)) for op in ("PREEXIT", "ACQBULK")}
    first = next(i for i, line in enumerate(lines) if re.search(r"\b(LDG|STG|LDGSTS|ATOMG|RED|ATOM)\b", line))
    assert at["PREEXIT"] < first and at["ACQBULK"] < first, (name, at, lines[first])


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_moe_gemm_waits_before_reading_its_expert(tmp_path, target, monkeypatch):
    """An MoE GEMM launch may go programmatically on sm_90+ (the MoE launcher's pdl, unless HUMMING_MOE_PDL=0): its
    kernel waits for the previous one before its first global access, the block's expert included (the routing
    wrote it); the MoE launcher asks for programmatic launches where the dense one does, if that is on."""
    from humming.device import get_device
    from humming.jit import Runtime, inspect as I
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    device = {"sm_80": "A100", "sm_90a": "H200"}[target]
    plan = humming.plan(LayerSpec(1536, 2048, W4, FP16, num_experts=8), device)
    for m in (1, 16, 200):
        _waits_first(I.disassemble(rt.kernel(plan.kernel(m)).cubin), target == "sm_90a", (target, m))
    hw = get_device(device)
    qw = R.quantize(torch.randn(8, 256, 512) * 0.02, W4)
    plan = humming.plan(LayerSpec(256, 512, W4, FP16, num_experts=8), device)
    for on in ("0", "1", None):  # (None: the default, on)
        if on is None:
            monkeypatch.delenv("HUMMING_MOE_PDL", raising=False)
        else:
            monkeypatch.setenv("HUMMING_MOE_PDL", on)
        _, launcher = G.prepare(plan, qw, "cpu", hw)
        assert launcher.pdl == G.moe_pdl_enabled(hw.caps) == (target == "sm_90a" and on != "0")
        assert G.pdl_enabled(hw.caps) == (target == "sm_90a")


# ---------------------------------------------------------------------------
# the module
# ---------------------------------------------------------------------------


def test_quant_moe_on_the_cpu_runs_the_reference():
    gen = torch.Generator().manual_seed(2)
    w = torch.randn(4, 24, 128, generator=gen) * 0.05
    mod = humming.QuantMoE.from_float(w, W4, device="cpu")
    assert mod.prepared is None and "experts=4" in repr(mod)
    x = torch.randn(5, 128, generator=gen).half()
    ids = _ids(5, 4, 2, gen)
    wts = torch.rand(5, 2, generator=gen)
    y = mod(x, ids, wts, reduce=True)
    assert y.shape == (5, 24) and y.dtype == torch.float16
    assert torch.allclose(y.float(), R.moe_gemm(x.float(), mod.qweight, ids, wts, reduce=True), atol=1e-2)
    with pytest.raises(ShapeError, match="expected an MoE weight"):
        humming.QuantMoE(mod.qweight.expert(0), device="cpu")
    with pytest.raises(ShapeError, match="must be \\[E, N, K\\]"):
        humming.QuantMoE.from_float(w[0], W4, device="cpu")


def _gpt_oss_checkpoint(tmp_path, e=4, hidden=128, inter=64):
    """A gpt-oss-shaped MXFP4 checkpoint (tests/test_formats_spec.py's): the prefix of its gate/up experts."""
    from test_formats_spec import _gpt_oss

    pre, _ = _gpt_oss(tmp_path, e=e, hidden=hidden, inter=inter)
    return pre + "gate_up_proj"


def test_quant_moe_from_a_gpt_oss_checkpoint(tmp_path):
    prefix = _gpt_oss_checkpoint(tmp_path)
    mod = humming.QuantMoE.from_checkpoint(str(tmp_path), prefix, BF16, device="cpu")
    assert mod.num_experts == 4 and (mod.out_features, mod.in_features) == (128, 128)
    assert mod.layer.weight.describe() == "e2m1 g32 e8m0 scales" and mod.qweight.bias is not None
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(6, 128, generator=gen).bfloat16()
    ids = _ids(6, 4, 2, gen)
    y = mod(x, ids)
    assert torch.allclose(y.float(), R.moe_gemm(x.float(), mod.qweight, ids).bfloat16().float())
    p = humming.plan(mod.layer, "H200")
    assert p.runnable and p.components["scheduler"].startswith("moe_grouped")
    with pytest.raises(ShapeError, match="no quantized layer model.nope"):
        humming.QuantMoE.from_checkpoint(str(tmp_path), ["model.nope"], device="cpu")


# ---------------------------------------------------------------------------
# on the GPU
# ---------------------------------------------------------------------------

GPU_CASES = [
    (W4, FP16, 3456),  # (27 groups of 128: not a multiple of a 256- or 512-column block)
    (WeightScheme("uint4", "group", 64, zero_point="int"), BF16, 1088),
    (WeightScheme("e4m3", "channel", scale_fmt="fp32"), BF16, 1024 + 64),
    (WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), BF16, 2048 + 96),
    (WeightScheme("int3", "group", 128), FP16, 1024),
    (W4, ActivationScheme("int8", "dynamic_token"), 2048),
    (WeightScheme("e4m3", "channel", scale_fmt="fp32"), ActivationScheme("e4m3", "dynamic_token"), 1024),
    # W4A8-FP8: int4 codes made e4m3 operands where fp8 mma.sync is native (Ada, consumer Blackwell); bf16 on Hopper
    (W4, ActivationScheme("e4m3", "dynamic_token"), 2048),
    # W4A8 in groups of 64 (two partial sets per block; from 129 tokens per expert on 64-token tiles, not the dense
    # layers' 128 with TMA stages: test_moe_byte_tiles_of_half_block_groups_take_64_tokens)
    (WeightScheme("uint4", "group", 64, zero_point="int"), ActivationScheme("int8", "dynamic_token"), 2048),
    # act order: each expert's own column order, applied by the gather (GPTQ desc_act; the last in groups of 24,
    # padded to 32: the gather's zero column in the gaps)
    (AO, FP16, 3456),
    (WeightScheme("int4", "group", 128, act_order=True), ActivationScheme("int8", "dynamic_token"), 2048),
    (WeightScheme("uint4", "group", 24, zero_point="int", act_order=True), BF16, 1032),
]
GPU_MS = (1, 5, 16, 33, 128, 1000)


def _gpu_check(qw, act, ms=GPU_MS, topk=2, absent=0.0, seed=0, prepare=None):
    """``prepare(qw, layer, device)``: how the weight is prepared (humming.prepare_weight, for this GPU, by
    default; test_gemm_fuzz_gpu.prepare_as for another GPU's plan)."""
    from humming_nvidia import gemm_mma_sync as G
    from test_gemm_gpu import bound

    dev = torch.device("cuda")
    out = "bf16" if act.fmt == "bf16" else "fp16"
    layer = LayerSpec(qw.n, qw.k, qw.scheme, act, num_experts=qw.num_experts, out_dtype=out, bias=qw.bias is not None)
    pw = (prepare or (lambda q, lay, d: humming.prepare_weight(q, layer=lay, device=d)))(qw, layer, dev)
    assert pw.plan.family == "mma_sync" and pw.packed.experts == qw.num_experts
    eps = 2.0 ** (-8 if pw.compute_dtype == torch.bfloat16 or out == "bf16" else -11)
    out_mul = max(G.pack_weight(qw.expert(e), pw.packed.recipe, dev).out_mul for e in range(qw.num_experts))
    gen = torch.Generator().manual_seed(seed)
    xdt = torch.bfloat16 if out == "bf16" else torch.float16
    worst = 0.0
    for m in ms:
        ids = _ids(m, qw.num_experts, topk, gen, absent).to(dev)
        x = (torch.randn(m, qw.k, generator=gen) * 2).to(dev, xdt)
        y = MOE.moe_gemm(x, pw, ids)
        torch.cuda.synchronize()
        assert not torch.isnan(y).any(), f"M={m}: {int(torch.isnan(y).sum())} outputs not written (or NaN)"
        ref = R.moe_gemm(x.float(), qw, ids, activation=act if act.is_quantized else None)
        if act.is_quantized:
            q, sc = R.quantize_activation(x.float(), act)
            x_eff = R.dequantize_activation(q, sc, act)
        else:
            x_eff = x.float()
        direct = MOE.direct_routing(m * topk, pw)
        tile_m = MOE.DIRECT_TOKENS if direct else MOE.tokens_per_expert(m, topk, qw.num_experts)
        stream = bool(pw.plan.tuning_for(tile_m).config.get("stream")) and not act.is_quantized
        magic = (128.0 if pw.compute_dtype == torch.bfloat16 else 1024.0) if stream else 0.0
        for e in range(qw.num_experts):
            sel = ids == e
            if not bool(sel.any()):
                continue
            tok = sel.nonzero()[:, 0]
            b = bound(x_eff[tok], qw.expert(e), ref[sel], eps, out_mul, raw=magic,
                      bf16_ops=pw.compute_dtype == torch.bfloat16)
            ratio = float(((y[sel].double() - ref[sel].double()).abs() / b).max())
            assert ratio <= 1.0, f"M={m}, expert {e}: error {ratio:.3g} x the bound"
            worst = max(worst, ratio)
        assert bool((y[ids < 0] == 0).all())
    return worst


@pytest.mark.gpu
@pytest.mark.parametrize("experts,topk", [(8, 2), (64, 8)], ids=["8x2", "64x8"])
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: f"{c[0].describe()}-{c[1].describe()}-K{c[2]}"
                         .replace(" ", "_").replace(",", ""))
def test_moe_kernels_against_the_reference(case, experts, topk, poisoned):
    scheme, act, k = case
    gen = torch.Generator().manual_seed(k + experts)
    qw = _weight(scheme, experts, 203, k, gen, bias=True)
    _gpu_check(qw.to("cuda"), act, topk=topk, absent=0.1 if experts == 64 else 0.0)


@pytest.mark.gpu
@pytest.mark.parametrize("experts,topk", [(8, 2), (64, 8)], ids=["8x2", "64x8"])
@pytest.mark.parametrize("name,scheme,act", MOE_FP8, ids=[c[0] for c in MOE_FP8])
def test_moe_fp8_warpgroup_tiles_against_the_reference(name, scheme, act, experts, topk, poisoned, moe_byte_wgmma):
    """HUMMING_MOE_BYTE_WGMMA=1 on Hopper: the fp8 MoE layers above on e4m3 warpgroup MMAs (every range: 8-token
    decode tiles to 128-token ones, split K at few rows per expert), against the reference at 1 to 1000 tokens.
    The bound is the dense byte tiles' (test_gemm_gpu.run_bytes_directly): the operands are exact e4m3 values,
    each block's wgmma sum is promoted to fp32."""
    props = torch.cuda.get_device_properties(0)
    if (props.major, props.minor) != (9, 0):
        pytest.skip("warpgroup MMAs: sm_90 only")
    n, k = (256 if scheme.scale == "block" else 203), 2048 + 128
    from humming.device import get_device

    plan = humming.plan(LayerSpec(n, k, scheme, act, num_experts=experts, out_dtype="fp16", bias=True), get_device())
    assert plan.compute.a == "e4m3" and all(r.config.get("wgmma") for r in plan.tuning), plan.explain()
    gen = torch.Generator().manual_seed(k + experts)
    qw = _weight(scheme, experts, n, k, gen, bias=True)
    _gpu_check(qw.to("cuda"), act, topk=topk, absent=0.1 if experts == 64 else 0.0)


@pytest.mark.gpu
@pytest.mark.parametrize("experts,topk", [(8, 2), (64, 8)], ids=["8x2", "64x8"])
def test_moe_int4_split_into_e4m3_operands_against_the_reference(experts, topk, poisoned, moe_byte_wgmma,
                                                                    monkeypatch):
    """Both switches (HUMMING_MOE_BYTE_WGMMA=1, HUMMING_INT_FP8_SPLIT=1) on Hopper: an int4 MoE layer's codes as
    two e4m3 operands per register on the warpgroup tiles of at most 64 rows, F2FP above, against the
    reference."""
    props = torch.cuda.get_device_properties(0)
    if (props.major, props.minor) != (9, 0):
        pytest.skip("warpgroup MMAs: sm_90 only")
    monkeypatch.setenv("HUMMING_INT_FP8_SPLIT", "1")
    clear_plans()
    from humming.device import get_device

    act = ActivationScheme("e4m3", "dynamic_token")
    n, k = 203, 2048 + 128
    plan = humming.plan(LayerSpec(n, k, W4, act, num_experts=experts, out_dtype="fp16", bias=True), get_device())
    assert plan.components["dequantizer"] == "int_bittrick_split", plan.explain()
    qw = _weight(W4, experts, n, k, torch.Generator().manual_seed(k + experts + 1), bias=True)
    _gpu_check(qw.to("cuda"), act, topk=topk, absent=0.1 if experts == 64 else 0.0)


@pytest.mark.gpu
@pytest.mark.parametrize("name,scheme,act", [c for c in MOE_FP8 if c[2].quant == "dynamic_token"],
                         ids=[c[0] for c in MOE_FP8 if c[2].quant == "dynamic_token"])
def test_moe_fp8_as_ada_plans_it(name, scheme, act, poisoned):
    """The fp8 MoE layers above as Ada (L40S) plans them: e4m3 mma.sync m16n8k32 tiles (QMMA there), the integer
    codes made e4m3 where the weights are integers; prepared as the GPU fuzz prepares older GPUs' plans (their
    ranges, SM count and shared memory) and run on this GPU, which executes the same source (on Hopper, the
    compiler's emulation of the fp8 mma.sync), against the reference at 1 to 1000 tokens, 64 experts top-8."""
    from test_gemm_fuzz_gpu import prepare_as

    n, k = 203, 2048 + 128
    plan = humming.plan(LayerSpec(n, k, scheme, act, num_experts=64, out_dtype="fp16", bias=True), "L40S")
    assert plan.compute.a == "e4m3" and not any(r.config.get("wgmma") for r in plan.tuning), plan.explain()
    gen = torch.Generator().manual_seed(k + 7)
    qw = _weight(scheme, 64, n, k, gen, bias=True)
    _gpu_check(qw.to("cuda"), act, topk=8, absent=0.1, prepare=prepare_as("L40S"))


@pytest.mark.gpu
@pytest.mark.parametrize("case", MOE_THREE_SLOTS, ids=lambda c: f"{c[0]}-{c[1]}-g{c[2]}-{c[4]}-s{c[6]}")
def test_moe_decode_tiles_at_three_slots_as_older_gpus_plan_them(case, poisoned):
    """The MoE decode tiles of 3- and 5-7-bit codes at three ring slots (and the one kept at four), as the A100 /
    L40S plan them (test_moe_decode_tiles_of_3_and_5_to_7_bit_codes_compile_without_a_stack), prepared as the GPU
    fuzz prepares older GPUs' plans and run on this GPU, against the reference at 1-8 tokens and beyond, 64 experts
    top-8, odd N."""
    from test_gemm_fuzz_gpu import prepare_as

    device, fmt, g, zp, act, k, stream, slots = case
    n = 203
    p, a = _moe_slots_plan(device, fmt, g, zp, act, n, k)
    cfg = p.tuning_for(1).config
    assert (cfg.get("stream"), cfg["stages"]) == (stream, slots), cfg
    gen = torch.Generator().manual_seed(k + g)
    qw = _weight(p.layer.weight, 64, n, k, gen, bias=True)
    _gpu_check(qw.to("cuda"), a, ms=(1, 2, 5, 8, 33), topk=8, absent=0.1, prepare=prepare_as(device))


@pytest.mark.gpu
@pytest.mark.parametrize("m,e,topk,bm,absent", [(1, 8, 2, 8, 0.0), (1, 128, 8, 8, 0.0), (33, 64, 8, 16, 0.2),
                                                 (1000, 128, 8, 32, 0.1), (7, 3, 3, 8, 0.5), (4096, 256, 8, 64, 0.0)])
@pytest.mark.parametrize("ids64", [False, True], ids=["int32", "int64"])
def test_routing_kernel_against_the_torch_routing(m, e, topk, bm, absent, ids64, monkeypatch):
    """The kernel's routing has the torch routing's blocks and, per expert, the same rows (in an order of its
    own inside the expert's run); its inverse map names each row's pair."""
    gen = torch.Generator().manual_seed(m + e)
    ids = _ids(m, e, topk, gen, absent).to("cuda", torch.int64 if ids64 else torch.int32)
    k = MOE.moe_route(ids, e, bm)
    monkeypatch.setattr(MOE, "ROUTE_KERNELS", False)
    t = MOE.moe_route(ids, e, bm)
    assert k.src is not None and t.src is None and k.blocks == t.blocks
    assert torch.equal(k.expert_ids, t.expert_ids)
    flat = ids.reshape(-1).long()
    for x in range(e):
        sel = flat == x
        assert torch.equal(k.rows[sel].sort().values, t.rows[sel])
    assert torch.equal(k.rows[flat < 0], t.rows[flat < 0])
    live = (flat >= 0).nonzero()[:, 0]
    assert torch.equal(k.src[k.rows[live]].long(), live)
    pad = torch.ones(k.num_rows, dtype=torch.bool, device="cuda")
    pad[k.rows[live]] = False
    assert bool((k.src[pad] == -1).all())


@pytest.mark.gpu
@pytest.mark.parametrize("reduce,weighted", [(False, False), (False, True), (True, False), (True, True)])
def test_routing_kernels_and_torch_routing_compute_the_same(reduce, weighted, monkeypatch):
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(9)
    qw = _weight(WeightScheme("uint4", "group", 64, zero_point="int"), 16, 200, 1000 + 24, gen, bias=True).to(dev)
    layer = LayerSpec(200, 1024, qw.scheme, BF16, num_experts=16, out_dtype="bf16", bias=True)
    pw = humming.prepare_weight(qw, layer=layer, device=dev)
    for m, x3 in ((3, False), (77, True)):
        ids = _ids(m, 16, 4, gen, 0.1).to(dev)
        x = torch.randn(*((m, 4, 1024) if x3 else (m, 1024)), generator=gen).to(dev, torch.bfloat16)
        wts = torch.rand(m, 4, generator=gen).to(dev) if weighted else None
        a = MOE.moe_gemm(x, pw, ids, wts, reduce=reduce)
        monkeypatch.setattr(MOE, "ROUTE_KERNELS", False)
        b = MOE.moe_gemm(x, pw, ids, wts, reduce=reduce)
        monkeypatch.setattr(MOE, "ROUTE_KERNELS", True)
        assert a.shape == b.shape and torch.equal(a, b), (m, float((a.float() - b.float()).abs().max()))


@pytest.mark.gpu
def test_moe_gemm_weighting_sum_and_graph_capture(poisoned):
    """The weighted sum over the chosen experts is the unreduced rows' in fp32; a CUDA graph captures a call
    (the routing synchronizes nothing) and replays it for new routes of the same shape."""
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(1)
    qw = _weight(W4, 16, 512, 1024, gen, bias=True).to(dev)
    pw = humming.prepare_weight(qw, layer=LayerSpec(512, 1024, W4, FP16, num_experts=16, bias=True), device=dev)
    m, topk = 24, 4
    x = torch.randn(m, 1024, generator=gen).half().to(dev)
    ids = _ids(m, 16, topk, gen).to(dev)
    wts = torch.rand(m, topk, generator=gen).to(dev)
    y = MOE.moe_gemm(x, pw, ids)
    yr = MOE.moe_gemm(x, pw, ids, wts, reduce=True)
    assert torch.allclose(yr.float(), (y.float() * wts[..., None]).sum(1), rtol=2 ** -10, atol=1e-3)
    MOE.moe_gemm(x, pw, ids, wts, reduce=True)  # (warm: compiled, workspace allocated)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = MOE.moe_gemm(x, pw, ids, wts, reduce=True)
    for seed in range(3):
        ids.copy_(_ids(m, 16, topk, torch.Generator().manual_seed(100 + seed)).to(dev))
        g.replay()
        torch.cuda.synchronize()
        ref = R.moe_gemm(x.float(), qw, ids, wts, reduce=True)
        assert torch.allclose(out.float(), ref, rtol=2 ** -8, atol=2e-2), float((out.float() - ref).abs().max())


@pytest.mark.gpu
@pytest.mark.parametrize("scheme,act", [(W4, FP16), (WeightScheme("uint4", "group", 64, zero_point="int"), BF16),
                                        (W4, ActivationScheme("int8", "dynamic_token"))],
                         ids=["int4", "uint4-zp", "w4a8"])
def test_direct_routing_and_the_routing_kernel_compute_the_same(scheme, act, monkeypatch, poisoned):
    """Few pairs (at most E / 4) route directly: no routing kernel, block b pair b's, its expert the caller's id.
    On the routed calls' tile (DIRECT_TOKENS set to 2 here: direct calls run the one-row range's tile, a ring of
    other K slices on Hopper's int4 layers of many experts; test_moe_kernels_against_the_reference checks that
    one), the same results as the routing kernel's up to the order of the fp32 sums: the launcher splits K by
    the grid (Launcher.split_for: blocks x N tiles), and the two routings make different block counts (8 and 9
    at one token, top-8), so a row's K slices differ: an ulp of the output apart, a little more where the sum
    cancels (seen on an H100, scripts/gpu_moe_repeat.py; allowed: an ulp of the value and one of a sixteenth of
    the largest), where a row of another pair would be O(1) off.
    [M, K] and [M, topk, K] inputs, int32 and int64 ids, experts held elsewhere (-1) and an id past E
    (unchecked: both give zeros), reduced and weighted (test_moe_mlp_kernels' one token routes directly too). A
    CUDA graph captures a direct call whose tables an earlier call made and replays it for new ids, bit for bit
    as the call; a capture of a pair count whose tables are not made routes by kernel."""
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(12)
    e, topk, n, k = 128, 8, 264, 1024
    out = "bf16" if act.fmt == "bf16" else "fp16"
    qw = _weight(scheme, e, n, k, gen, bias=True).to(dev)
    pw = humming.prepare_weight(qw, layer=LayerSpec(n, k, scheme, act, num_experts=e, out_dtype=out, bias=True),
                                device=dev)
    xdt = torch.bfloat16 if out == "bf16" else torch.float16
    ulp = 2.0 ** (-7 if xdt == torch.bfloat16 else -10)  # (an ulp of the output over the value, at most)
    monkeypatch.setattr(MOE, "DIRECT_TOKENS", 2)
    calls = []
    real = MOE._route_kernel
    monkeypatch.setattr(MOE, "_route_kernel", lambda *a, **kw: calls.append(a[2]) or real(*a, **kw))
    for m in (1, 3, 4):
        ids = _ids(m, e, topk, gen, 0.2).to(dev)
        ids[-1, 0] = e + 7
        wts = torch.rand(m, topk, generator=gen).to(dev)
        for x in (torch.randn(m, k, generator=gen).to(dev, xdt), torch.randn(m, topk, k, generator=gen).to(dev, xdt)):
            for dt in (torch.int32, torch.int64):
                for w, red in ((None, False), (wts, False), (wts, True)):
                    monkeypatch.setattr(MOE, "DIRECT_ROUTE", True)
                    calls.clear()
                    a = MOE.moe_gemm(x, pw, ids.to(dt), w, reduce=red, check_ids=False)
                    assert not calls, "direct routing launched the routing kernel"
                    monkeypatch.setattr(MOE, "DIRECT_ROUTE", False)
                    b = MOE.moe_gemm(x, pw, ids.to(dt), w, reduce=red, check_ids=False)
                    assert calls and a.shape == b.shape and not torch.isnan(a).any()
                    diff, ref = (a.float() - b.float()).abs(), b.float().abs()
                    assert bool((diff <= ulp * (ref + ref.max() / 16)).all()), (m, float(diff.max()))
                    if not red:
                        assert bool((a[(ids < 0) | (ids >= e)] == 0).all())
    monkeypatch.setattr(MOE, "DIRECT_ROUTE", True)
    for m, tables in ((2, True), (3, False)):
        x = torch.randn(m, k, generator=gen).to(dev, xdt)
        ids = _ids(m, e, topk, gen).to(dev)
        wts = torch.rand(m, topk, generator=gen).to(dev)
        MOE.moe_gemm(x, pw, ids, wts, reduce=True)  # (warm: compiled, workspace allocated, the tables made)
        if not tables:
            MOE._direct_cache.clear()
        g = torch.cuda.CUDAGraph()
        calls.clear()
        with torch.cuda.graph(g):
            got = MOE.moe_gemm(x, pw, ids, wts, reduce=True)
        assert bool(calls) != tables  # (no tables: the capture routes by kernel, and makes none)
        assert tables == any(key[1] == m * topk for key in MOE._direct_cache)
        for seed in range(3):
            ids.copy_(_ids(m, e, topk, torch.Generator().manual_seed(200 + seed)).to(dev))
            g.replay()
            want = MOE.moe_gemm(x, pw, ids, wts, reduce=True)
            torch.cuda.synchronize()
            if tables:  # (the same launches)
                assert torch.equal(got, want), (m, seed)
            else:
                ref = want.float().abs()
                assert bool(((got.float() - want.float()).abs() <= ulp * (ref + ref.max() / 16)).all()), (m, seed)


@pytest.mark.gpu
def test_quant_moe_module_and_torch_compile():
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(4)
    w = torch.randn(8, 256, 512, generator=gen) * 0.05
    mod = humming.QuantMoE.from_float(w, W4, device=dev)
    assert mod.prepared is not None
    x = torch.randn(6, 512, generator=gen).half().to(dev)
    ids = _ids(6, 8, 2, gen).to(dev)
    wts = torch.rand(6, 2, generator=gen).to(dev)
    ref = R.moe_gemm(x.float(), mod.qweight, ids, wts, reduce=True)
    y = mod(x, ids, wts, reduce=True)
    assert torch.allclose(y.float(), ref, rtol=2 ** -8, atol=2e-2)
    yc = torch.compile(lambda a, b, c: mod(a, b, c, reduce=True), fullgraph=True)(x, ids, wts)
    assert torch.allclose(yc.float(), y.float(), rtol=2 ** -10, atol=1e-3)
    assert math.isfinite(float(yc.float().abs().max()))


@pytest.mark.gpu
@pytest.mark.parametrize("scheme", [W4, AO], ids=["int4", "act_order"])
@pytest.mark.parametrize("t", [1, 8, 40, 256])
def test_batched_experts_on_the_gpu(t, scheme, poisoned):
    """The batched format (act order: one gather per expert, in its column order)."""
    from test_gemm_gpu import bound

    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(t)
    e = 8
    qw = _weight(scheme, e, 203, 1024, gen, bias=True).to(dev)
    pw = humming.prepare_weight(qw, layer=LayerSpec(203, 1024, scheme, FP16, num_experts=e, bias=True), device=dev)
    x = (torch.randn(e, t, 1024, generator=gen) * 2).half().to(dev)
    counts = torch.randint(0, t + 1, (e,), generator=gen).to(dev, torch.int32)
    y = MOE.moe_gemm_batched(x, pw, counts)
    torch.cuda.synchronize()
    from humming_nvidia import gemm_mma_sync as G

    stream = bool(pw.plan.tuning_for(max(2, -(-t // 2))).config.get("stream"))
    for i in range(e):
        c = int(counts[i])
        if c:
            ref = R.gemm(x[i, :c].float(), qw.expert(i))
            out_mul = G.pack_weight(qw.expert(i), pw.packed.recipe, dev).out_mul
            b = bound(x[i, :c].float(), qw.expert(i), ref, 2.0 ** -11, out_mul, raw=1024.0 if stream else 0.0)
            assert not torch.isnan(y[i, :c]).any() and float(((y[i, :c].double() - ref).abs() / b).max()) <= 1.0


@pytest.mark.gpu
@pytest.mark.parametrize("activation,interleaved,down_k,scheme", [
    ("silu", False, 1024, W4), ("gelu", False, 1024, W4), ("swigluoai", True, 1024, W4), ("silu", False, 384, W4),
    ("silu", False, 384, AO)], ids=["silu", "gelu", "swigluoai", "silu-384", "act_order-384"])
@pytest.mark.parametrize("m", [1, 7, 64, 500])
def test_moe_mlp_kernels(activation, interleaved, down_k, scheme, m, poisoned, monkeypatch):
    """The MLP with the rows kept in expert order between the GEMMs, against the same MLP through moe_gemm and
    torch (HUMMING_MOE_ROUTE=torch) and the reference. down_k 384: a down projection whose tile may have other
    rows than the gate/up one (routed again, gathered from the activation's rows). Act order in both projections:
    the down projection's rows gathered again in its experts' column order, even where the tiles match (and the
    torch routing's gather by each row's expert)."""
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(m)
    e, h, topk = 16, 512, 4
    w13 = _weight(scheme, e, 2 * down_k, h, gen, bias=True).to(dev)
    w2 = _weight(scheme, e, h, down_k, gen).to(dev)
    p13 = humming.prepare_weight(w13, layer=LayerSpec(2 * down_k, h, scheme, BF16, num_experts=e, out_dtype="bf16",
                                                      bias=True), device=dev)
    p2 = humming.prepare_weight(w2, layer=LayerSpec(h, down_k, scheme, BF16, num_experts=e, out_dtype="bf16"),
                                device=dev)
    x = torch.randn(m, h, generator=gen).to(dev, torch.bfloat16)
    ids = _ids(m, e, topk, gen, 0.1).to(dev)
    wts = torch.rand(m, topk, generator=gen).to(dev)
    y = MOE.moe_mlp(x, p13, p2, ids, wts, activation=activation, interleaved=interleaved)
    torch.cuda.synchronize()
    monkeypatch.setattr(MOE, "ROUTE_KERNELS", False)
    yt = MOE.moe_mlp(x, p13, p2, ids, wts, activation=activation, interleaved=interleaved)
    ref = R.moe_mlp(x.float(), w13, w2, ids, wts, activation, interleaved, round_to=torch.bfloat16)
    assert not torch.isnan(y).any()
    scale = float(ref.abs().max()) + 1e-3
    # (bf16: the gate/up outputs, the activation and the result each rounded once: a few 2^-8 of the largest)
    assert float((y.float() - ref).abs().max()) <= 2 ** -5 * scale
    assert float((y.float() - yt.float()).abs().max()) <= 2 ** -5 * scale


@pytest.mark.gpu
def test_gpt_oss_experts_on_the_gpu(tmp_path, poisoned):
    """gpt-oss's MXFP4 experts as the checkpoint stores them (bf16 activations, a bias per expert)."""
    from humming.formats import load_checkpoint

    prefix = _gpt_oss_checkpoint(tmp_path, e=8, hidden=256, inter=128)
    qw = load_checkpoint(str(tmp_path)).layers[prefix]
    _gpu_check(qw.to("cuda"), BF16, ms=(1, 5, 33, 300), topk=4)


def test_gpt_oss_scales_keep_the_multipliers_finite(tmp_path):
    """gpt-oss's e8m0 scales span 2^-9 to 2^6; e2m1 codes re-biased into bf16 are 2^-126 times their values. The
    re-bias rides on the stored scales, so the output multipliers stay finite (2^7 here, the largest scale's
    power of two) and the dequantized weights are the weight's own values over them: no 2^133 in fp32 (inf)."""
    from humming.formats import load_checkpoint
    from humming_nvidia import gemm_mma_sync as G

    prefix = _gpt_oss_checkpoint(tmp_path, e=4, hidden=128, inter=64)
    qw = load_checkpoint(str(tmp_path)).layers[prefix]
    pw = cpu_prepared(qw, BF16)
    pk = pw.packed
    assert pk.recipe.bf16 and pk.recipe.wfloat and math.isfinite(pk.out_mul)
    assert bool(torch.isfinite(pk.chan).all())
    for e in range(4):
        d = G.pack_weight(qw.expert(e), pk.recipe, "cpu")
        top = math.frexp(float(qw.expert(e).scales.max()))[1]
        assert d.out_mul == 2.0 ** top and d.chan is None
        s16 = d.sz.view(torch.bfloat16).double()  # (the stored scales: the scale / 2^top x 2^126)
        assert float(s16.max()) == 2.0 ** 125
        got = torch.unique(s16[s16 != 0] * d.out_mul / 2.0 ** 126)
        assert torch.equal(got, torch.unique(qw.expert(e).scales.double()))


def test_the_moe_tile_script_offers_the_planned_ring_first(monkeypatch):
    """scripts/gpu_moe_tiles.py's candidates (what gpu_run.sh s51c checks and times on a GPU): the plan's own ring
    first, every candidate a tuning the family accepts, the rings it compares among them, and each one's kernel
    spec built as the launcher builds it -- so a device call does not fail before its first kernel."""
    from _scripts import SCRIPTS, load_script

    from humming.device import get_device
    from humming.planner.family import MRange
    from humming.planner.planner import resolve_device
    from humming_nvidia import gemm_mma_sync as G

    monkeypatch.syspath_prepend(str(SCRIPTS))  # (as when run: it imports gpu_moe_parts' timing)
    T = load_script("gpu_moe_tiles")
    hw = get_device("H200")
    _, caps, _ = resolve_device("H200")
    layer = LayerSpec(1536, 2048, W4, FP16, num_experts=128, out_dtype="fp16")
    base = humming.plan(layer, hw, tuning_db=False)
    rows = [T.tile_rows(base, layer, m, 8, 132) for m in (1, 4, 16, 64)]
    assert rows == [1, 1, 2, 4]  # (up to 4 tokens routed directly: one row per block)
    down = LayerSpec(2048, 768, W4, FP16, num_experts=128, out_dtype="fp16")
    # (down's 4 tokens: 32 blocks x 16 tiles of 128 rows fill 132 SMs three times over: the 128-row ring)
    assert [T.tile_rows(humming.plan(down, hw, tuning_db=False), down, m, 8, 132) for m in (1, 4)] == [1, 2]
    cands = T.candidates(base, caps, layer, rows)
    assert cands[0] == dict(base.tuning[0].config) and dict(cands[0])["bn"] == 64 and cands[0]["stream"]
    assert cands[1] == dict(base.tuning[1].config) and dict(cands[1])["bn"] == 128 and cands[1]["wk"] == 1
    shapes = {f"{c['bn']}x{c['wk']}" for c in cands if c.get("stream")}
    assert {"64x2", "32x4", "128x1"} <= shapes, shapes
    for cfg in cands:
        assert not G.check_tuning(layer, caps, base.compute, [MRange(1, None, cfg)]), cfg
        p = replace(base, tuning=(MRange(1, None, cfg),))
        r = G.recipe_from_plan(p, hw)
        (_, _, tile), = G.ranges_from_plan(p, r, int(hw.max_smem_per_block), G.plan_kp(p, r))
        assert G.kernel_spec(r, tile).name
