"""K-shards whose scale groups straddle the shards (CPU tier).

A row-parallel layer split over tensor-parallel ranks gives each rank K / ranks columns; where the group
size does not divide that (Qwen2-72B: 29568 columns in groups of 128 over eight ranks, 3696 each), a
rank's first and last groups are partial. ``WeightScheme.group_offset`` describes such a shard,
``QuantizedWeight.k_shard`` cuts one from a whole layer, and the mma_sync family places it in whole
groups (``kernel_layer``: zero-weight columns before and after it, and the activations gathered into
that K with a zero column, as for padded groups). These tests check, without a GPU, that

* a shard dequantizes to exactly the full layer's columns, for every scale kind that shards;
* its packed weight is, byte for byte, that of a whole-group layer the GPU tests run, which fed the
  gathered activations computes the shard's GEMM (float64), and its plan runs that layer's kernels;
* the engine interface plans and converts a rank's shard from the full layer's tensors.

The GPU tier runs every rank of a sharded layer and sums them (tests/test_engine.py).
"""
from __future__ import annotations

import dataclasses

import pytest
import torch

import humming
from humming import reference as R
from humming.device import Device
from humming.dtypes import IntFormat
from humming.engine import LinearConfig, can_implement, convert_weight
from humming.errors import FormatError, ShapeError
from humming.ops.gemm import _kernel_columns
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme
from humming_nvidia import gemm_mma_sync as G

SHARDABLE = [WeightScheme("uint4", "group", 128), WeightScheme("uint4", "group", 128, zero_point="int"),
             WeightScheme("uint3", "group", 40, zero_point="float"), WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"),
             WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"),
             WeightScheme("int8", "channel", scale_fmt="fp32"), WeightScheme("e4m3", "tensor", scale_fmt="fp32")]


@pytest.mark.parametrize("scheme", SHARDABLE, ids=lambda s: s.describe().replace(" ", "_").replace(",", ""))
def test_a_shard_dequantizes_to_the_full_layers_columns(scheme):
    gen = torch.Generator().manual_seed(scheme.bits)
    qw = R.quantize(torch.randn(40, 3840, generator=gen) * 0.02, scheme)
    full = R.dequantize(qw)
    for start, size in ((0, 1280), (1280, 1280), (2560, 1280), (7, 100), (3000, 840), (0, 3840), (64, 3696 - 64)):
        sh = qw.k_shard(start, size)
        assert torch.equal(R.dequantize(sh), full[:, start:start + size]), (start, size)
        if scheme.scale == "group":
            g = scheme.group_size
            whole = start % g == 0 and size % g == 0
            assert sh.scheme.group_offset == (None if whole else start % g)
            assert sh.scales.shape == (40, -(-(start % g + size) // g))
        assert sh.meta["k_shard"] == [start, size]
        inner = sh.k_shard(3, size - 10)  # (a shard of a shard: the offsets add up)
        assert torch.equal(R.dequantize(inner), full[:, start + 3:start + size - 7])


def test_block_scales_shard_on_whole_blocks_and_act_order_not_at_all():
    blk = R.quantize(torch.randn(64, 512) * 0.02, WeightScheme("e4m3", "block", 128, block_n=32, scale_fmt="fp32"))
    sh = blk.k_shard(128, 256)
    assert sh.scheme == blk.scheme and torch.equal(R.dequantize(sh), R.dequantize(blk)[:, 128:384])
    with pytest.raises(ShapeError, match=r"block scales of 32x128 shard on whole blocks; columns \[64, 320\)"):
        blk.k_shard(64, 256)
    ao = WeightScheme("uint4", "group", 128, act_order=True)
    qa = R.quantize(torch.randn(16, 512) * 0.02, ao, perm=torch.randperm(512))
    with pytest.raises(FormatError, match=r"act-order weights shard by g_idx"):
        qa.k_shard(0, 256)
    qw = R.quantize(torch.randn(16, 512) * 0.02, WeightScheme("uint4", "group", 128))
    with pytest.raises(ShapeError, match=r"start \+ size <= K = 512, got start=500, size=100"):
        qw.k_shard(500, 100)


def test_the_scheme_says_what_a_group_offset_may_be():
    s = WeightScheme("uint4", "group", 128, group_offset=64)
    assert s.num_groups(3696) == 30 and WeightScheme("uint4", "group", 128).num_groups(3840) == 30
    assert s.to_dict()["group_offset"] == 64 and WeightScheme.from_dict(s.to_dict()) == s
    assert "group_offset" not in WeightScheme("uint4", "group", 128).to_dict()  # (old dicts, old fingerprints)
    assert "K-shard 64 columns into its first group" in s.describe()
    LayerSpec(8192, 3696, s)  # (partial groups at both ends: no divisibility asked)
    with pytest.raises(ShapeError, match=r"group_size=128 does not divide K=3696"):
        LayerSpec(8192, 3696, WeightScheme("uint4", "group", 128))
    for kw, match in ((dict(group_offset=128), r"group_offset.*\[0, group_size=128\)"),
                      (dict(group_offset=-1), r"group_offset"),
                      (dict(group_offset=8, act_order=True), r"None with act_order"),
                      (dict(scale="channel", group_offset=0), r"None with scale='channel'")):
        with pytest.raises(FormatError, match=match):
            WeightScheme("uint4", **{"scale": "group", "group_size": 128, **kw})


def test_quantizing_a_shard_scheme_directly():
    s = WeightScheme("uint4", "group", 128, zero_point="int", group_offset=100)
    w = torch.randn(32, 600) * 0.02
    qw = R.quantize(w, s)
    assert qw.scales.shape == (32, 6) and qw.zeros.shape == (32, 6)
    err = float((R.dequantize(qw) - w).abs().max() / w.abs().max())
    assert err < 0.1  # (4-bit round to nearest: each group's own range, partial groups included)


def _twin(qw: R.QuantizedWeight, g2: int) -> R.QuantizedWeight:
    """The shard as a whole-group layer of groups of ``g2``: its columns where the kernels place them,
    the code the kernels' layout pads with elsewhere."""
    s = qw.scheme
    g, off = s.group_size, s.group_offset or 0
    groups = s.num_groups(qw.k)
    fmt = s.format
    gap = (1 << (fmt.bits - 1)) if isinstance(fmt, IntFormat) and fmt.signed else 0
    codes = torch.full((qw.n, groups * g2), gap, dtype=torch.uint8)
    codes[:, G.group_columns(qw.k, g, g2, None, off)] = qw.codes
    scheme = dataclasses.replace(s, group_size=g2, group_offset=None)
    return R.QuantizedWeight(scheme, codes, qw.scales, qw.zeros, qw.global_scale, None, qw.bias)


CASES = [  # (scheme, full K, shard start, shard size, activations)
    (WeightScheme("uint4", "group", 128), 29568, 3696, 3696, ActivationScheme("fp16")),
    (WeightScheme("uint4", "group", 128, zero_point="int"), 7424, 0, 3696, ActivationScheme("bf16")),
    (WeightScheme("uint3", "group", 40, zero_point="float"), 1200, 8, 600, ActivationScheme("fp16")),
    (WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), 960, 16, 480, ActivationScheme("bf16")),
    (WeightScheme("uint4", "group", 128), 1536, 320, 384, ActivationScheme("int8", "dynamic_token")),
]


@pytest.mark.parametrize("device", ["H200", "A100", "T4"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].describe().split(' scales')[0].replace(' ', '_')}"
                                                      f"-{c[2]}+{c[3]}-{c[4].fmt}")
def test_a_shard_is_a_whole_group_layer_of_the_kernels(case, device):
    scheme, full_k, start, size, act = case
    n = 192
    gen = torch.Generator().manual_seed(full_k + start)
    full = R.quantize(torch.randn(n, full_k, generator=gen) * 0.02, scheme, bias=torch.randn(n, generator=gen))
    qw = full.k_shard(start, size)
    off = qw.scheme.group_offset
    assert off == start % scheme.group_size or (off is None and start % scheme.group_size == 0
                                                and size % scheme.group_size == 0)
    od = "bf16" if act.fmt == "bf16" else "fp16"
    layer = LayerSpec(n, size, qw.scheme, act, out_dtype=od, bias=qw.bias is not None)
    p = humming.plan(layer, device)
    assert p.runnable, p.explain()
    kl = G.kernel_layer(layer, p.compute)
    g2 = kl.weight.group_size
    assert kl.weight.group_offset is None and kl.k == qw.scheme.num_groups(size) * g2
    assert p.weight_layout.params["group_offset"] == off
    assert any(f"K {size} -> {kl.k}" in note and f"{off} columns into its first" in note for note in p.notes)
    # its kernels are those of the whole-group layer
    pk = humming.plan(kl, device)
    assert p.tuning == pk.tuning
    for m in (1, 7, 16, 100, 1000):
        assert p.kernel(m) == pk.kernel(m), m

    recipe = G.recipe_from_plan(p, Device.named(device))
    pw = G.pack_weight(qw, recipe, "cpu")
    assert pw.zero_column and pw.k == kl.k and pw.descriptor["group_offset"] == off
    assert int((pw.perm == size).sum()) == kl.k - size and int(pw.perm[G.group_columns(size, scheme.group_size, g2,
                                                                                       None, off)].min()) == 0
    twin = _twin(qw, g2)
    tw = G.pack_weight(twin, recipe, "cpu")
    assert not tw.zero_column and (tw.k, tw.kp, tw.groups) == (pw.k, pw.kp, pw.groups)
    assert torch.equal(pw.w, tw.w)
    for name in ("sz", "chan", "bias"):
        a, b = getattr(pw, name), getattr(tw, name)
        assert (a is None and b is None) or torch.equal(a, b), name
    assert pw.out_mul == tw.out_mul
    for m in (1, 5, 33):  # the twin fed the gathered activations computes the shard's GEMM
        x = torch.randn(m, size, generator=gen) * 2
        xk = _kernel_columns(x, pw)
        assert torch.equal(xk[:, pw.perm == size], torch.zeros(m, kl.k - size))
        want = R.gemm(x, qw).double()
        got = R.gemm(xk, twin).double()
        assert float(((got - want).abs() / (want.abs() + 1e-3)).max()) < 1e-5


@pytest.mark.parametrize("scheme", SHARDABLE[:5], ids=lambda s: s.describe().replace(" ", "_").replace(",", ""))
def test_the_ranks_shards_sum_to_the_full_layer(scheme):
    """Four ranks of 320 columns of a layer in groups that straddle them (offsets 0, 64, 0, 64 for groups of
    128): their GEMMs, each on its shard, add up to the full layer's (the bias once)."""
    n, k, ranks = 96, 1280, 4
    gen = torch.Generator().manual_seed(scheme.bits + scheme.group_size)
    full = R.quantize(torch.randn(n, k, generator=gen) * 0.02, scheme, bias=torch.randn(n, generator=gen))
    x = torch.randn(5, k, generator=gen)
    size = k // ranks
    shards = [full.k_shard(r * size, size) for r in range(ranks)]
    assert torch.equal(shards[0].bias, full.bias) and all(s.bias is None for s in shards[1:])  # (the bias once)
    parts = [R.gemm(x[:, r * size:(r + 1) * size], s).double() for r, s in enumerate(shards)]
    want = R.gemm(x, full).double()
    assert torch.allclose(sum(parts), want, rtol=1e-5, atol=1e-5)


def test_an_engine_runs_every_rank_of_a_straddling_layer():
    """Qwen2-72B's down_proj over eight ranks (scaled down 8x in N): each rank's shard plans on every chip,
    and converts from the full layer's GPTQ tensors into exactly its columns."""
    from humming.demo import _pack_along

    n, k, ranks, g = 256, 29568, 8, 128
    gen = torch.Generator().manual_seed(72)
    full = R.quantize(torch.randn(n, k, generator=gen) * 0.02, WeightScheme("uint4", "group", g))
    tensors = {"qweight": _pack_along(full.codes.t(), 0), "qzeros": _pack_along(torch.full((k // g, n), 7), 1),
               "scales": full.scales.t().contiguous().half(), "g_idx": (torch.arange(k) // g).to(torch.int32)}
    qc = {"quant_method": "gptq", "bits": 4, "group_size": g, "sym": True, "desc_act": False}
    size = k // ranks
    offsets = []
    for r in range(ranks):
        cfg = LinearConfig("uint4b8", (size, n), torch.float16, g, k_offset=r * size)
        for device in ("H200", "A100", "T4"):
            assert can_implement(cfg, device) == (True, None)
        qw = convert_weight(cfg, tensors, qc)
        offsets.append(qw.scheme.group_offset)
        assert torch.equal(R.dequantize(qw), R.dequantize(full)[:, r * size:(r + 1) * size])
    assert offsets == [(r * size) % g for r in range(ranks)] and offsets[1] == 112
    with pytest.raises(ShapeError, match=r"the config's shard is N x K = 256 x 3696 from column 27000"):
        convert_weight(LinearConfig("uint4b8", (size, n), torch.float16, g, k_offset=27000), tensors, qc)
    with pytest.raises(FormatError, match=r"k_offset: expected None or the shard's first column"):
        LinearConfig("uint4b8", (size, n), torch.float16, g, k_offset=-3).layer_spec()
    ok, why = can_implement(LinearConfig("uint4b8", (size, n), torch.float16, g, has_g_idx=True, k_offset=size), "H200")
    assert not ok and "k_offset: an act-order layer shards by its g_idx" in why


GROUP_ACT_CASES = [  # (scheme, full K, shard start, shard size, activations in groups)
    # groups of 40 padded to 48: the kernels' K (17 groups, 816) holds no whole number of the activations' 32s
    (WeightScheme("uint4", "group", 40), 1200, 8, 640, ActivationScheme("e2m1", "dynamic_group", 32, "e8m0")),
    (WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), 3072, 16, 1536, ActivationScheme("e4m3", "dynamic_group", 128)),
    # fp8 weights and activations in groups of 128, which whole layers fold on fp8 warpgroup MMAs: a shard placed
    # 64 columns into its groups would put the activations' groups across the kernels' blocks
    (WeightScheme("e4m3", "group", 128, scale_fmt="fp32"), 1536, 320, 384, ActivationScheme("e4m3", "dynamic_group", 128)),
]


@pytest.mark.parametrize("device", ["H200", "A100", "L40S", "sm_120"])
@pytest.mark.parametrize("case", GROUP_ACT_CASES, ids=lambda c: f"{c[0].fmt}_g{c[0].group_size}-{c[4].fmt}_g{c[4].group_size}")
def test_a_shard_with_activations_in_groups_runs_them_on_16_bit_operands(case, device):
    """Per-group activation scales are computed over the shard's own columns, before the call places them in the
    kernels' K: 16-bit operands take the values (one power of two per row), whatever that K; the plan does not
    fold them on byte operands. (The planner used to raise ShapeError for the kernels' K, a K the caller never
    gave, and H200 planned the fp8 shard on e4m3 operands that the call then refused.)"""
    scheme, full_k, start, size, act = case
    n = 64
    gen = torch.Generator().manual_seed(size + start)
    full = R.quantize(torch.randn(n, full_k, generator=gen) * 0.02, scheme)
    qw = full.k_shard(start, size)
    assert qw.scheme.group_offset == start % scheme.group_size
    layer = LayerSpec(n, size, qw.scheme, act, out_dtype="bf16")
    p = humming.plan(layer, device)
    assert p.runnable and p.compute.a in ("fp16", "bf16") and p.compute.b == p.compute.a, p.explain()
    kl = G.kernel_layer(layer, p.compute)
    g2 = kl.weight.group_size
    assert kl.k == qw.scheme.num_groups(size) * g2 and kl.activation.quant == (
        "dynamic_group" if kl.k % act.group_size == 0 else "dynamic_token")
    recipe = G.recipe_from_plan(p, Device.named(device))
    assert recipe.act_scale == 1  # (one scale per row, the groups' folded into the values)
    pw = G.pack_weight(qw, recipe, "cpu")
    twin = _twin(qw, g2)
    x = torch.randn(5, size, generator=gen)
    q, s = R.quantize_activation(x, act)  # (in the shard's columns, as the call quantizes them)
    xk = _kernel_columns(R.dequantize_activation(q, s, act), pw)
    want = R.gemm(x, qw, act).double()
    got = R.gemm(xk, twin).double()
    assert float(((got - want).abs() / (want.abs() + 1e-3)).max()) < 1e-5


def test_fp8_group_activations_fold_on_fp8_operands_only_for_whole_groups():
    """H200: e4m3 weights and activations in groups of 128 run on e4m3 warpgroup MMAs as a whole layer (or a shard
    on group boundaries), on bf16 operands as a shard 64 columns into its groups, and the plan says why."""
    w, act = WeightScheme("e4m3", "group", 128, scale_fmt="fp32"), ActivationScheme("e4m3", "dynamic_group", 128)
    assert humming.plan(LayerSpec(512, 1536, w, act, out_dtype="bf16"), "H200").compute.a == "e4m3"
    shard = dataclasses.replace(w, group_offset=64)
    p = humming.plan(LayerSpec(512, 384, shard, act, out_dtype="bf16"), "H200")
    assert p.runnable and p.compute.a == "bf16"
    assert "but not with a K-shard starting 64 columns into its first group" in p.explain()


@pytest.mark.gpu
@pytest.mark.parametrize("case", GROUP_ACT_CASES, ids=lambda c: f"{c[0].fmt}_g{c[0].group_size}-{c[4].fmt}_g{c[4].group_size}")
def test_a_shard_with_activations_in_groups_on_the_gpu(case):
    """The cases above through ops.gemm on this GPU (the activations quantized in the shard's columns, then
    gathered into the kernels' K), against the reference with test_gemm_gpu's bound, at one token and on
    the mma.sync and warpgroup tiles."""
    from test_gemm_gpu import run_and_check

    scheme, full_k, start, size, act = case
    gen = torch.Generator(device="cuda").manual_seed(torch.randint(0, 2**31, (1,)).item())
    full = R.quantize(torch.randn(320, full_k, device="cuda", generator=gen) * 0.02, scheme,
                      bias=torch.randn(320, device="cuda", generator=gen))
    run_and_check(full.k_shard(start, size), act, ms=(1, 7, 16, 100, 300), out_dtype="bf16")
