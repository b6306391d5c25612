"""Random layers through the planner on a GPU, against humming.reference.

The structured GPU tests (test_gemm_gpu.py) pin each tile and path on a chosen layer. This module draws
layers the way users meet them instead: a weight format, an activation scheme, a layer of a real model's
size or of a tensor-parallel shard's odd size, a bias or none, an output dtype, and one token, then one token count from
each of the planner's ranges (2-8, 9-16, 17-64, 65-128, 129-512, 513-1100), then runs whatever the
planner gives that layer on this GPU -- decode rings, warpgroup tiles, split K, clusters, the act-quant
kernel -- and checks every output against reference.py with test_gemm_gpu.py's per-element bound (its
docstring gives the tolerance per format and why). Fresh random data, outputs poisoned with NaN before
every launch.

Each case is a seed: the draw is reproducible (``case_for(seed)``), the data is fresh. The suite runs
FUZZ_SEEDS seeds; ``HUMMING_FUZZ_SEEDS=N`` runs N, ``HUMMING_FUZZ_FIRST=S`` starts at seed S
(``scripts/gpu_run.sh fuzz``). Scale groups that are not a multiple of 16 values (which the kernels run padded)
draw from their own seeds (``test_random_padded_group_layers``), so the seeds above keep their draws, and so do
K-shards whose scale groups straddle the tensor-parallel ranks (``test_random_k_shard_layers``), and MoE layers
(``test_random_moe_layers``: experts of real MoE models' sizes, their count and top-k, some held elsewhere,
through ``humming.moe_gemm``, each expert's rows against the reference with the same bound).
"""
from __future__ import annotations

import os
import random

import pytest
import torch

from humming import plan, reference as R
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme
from test_gemm_gpu import bound, run_and_check

FUZZ_SEEDS = 12
FIRST = int(os.environ.get("HUMMING_FUZZ_FIRST", "0"))
SEEDS = list(range(FIRST, FIRST + int(os.environ.get("HUMMING_FUZZ_SEEDS", str(FUZZ_SEEDS)))))

#: weight formats people ship and their kin (group sizes, zero points, act order, 1-8 bits, fp4-fp8)
WEIGHTS = [
    WeightScheme("int4", "group", 128), WeightScheme("int4", "group", 64), WeightScheme("int4", "group", 32),
    WeightScheme("int4", "channel", scale_fmt="fp32"), WeightScheme("uint4", "group", 128, zero_point="int"),
    WeightScheme("uint4", "group", 64, zero_point="int"), WeightScheme("uint4", "group", 128, zero_point="float"),
    WeightScheme("uint4", "group", 128), WeightScheme("int8", "channel", scale_fmt="fp32"),
    WeightScheme("int8", "group", 128), WeightScheme("uint8", "group", 128, zero_point="int"),
    WeightScheme("int3", "group", 128), WeightScheme("uint3", "group", 64, zero_point="int"),
    WeightScheme("int2", "group", 128), WeightScheme("int2", "group", 64), WeightScheme("int2", "channel", scale_fmt="fp32"),
    WeightScheme("uint2", "group", 64, zero_point="int"), WeightScheme("uint1", "group", 64, zero_point="int"),
    WeightScheme("int5", "group", 128), WeightScheme("int6", "group", 128), WeightScheme("int7", "channel", scale_fmt="fp32"),
    WeightScheme("e4m3", "channel", scale_fmt="fp32"), WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"),
    WeightScheme("e4m3", "group", 32, scale_fmt="e8m0"), WeightScheme("e5m2", "tensor", scale_fmt="fp32"),
    WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"),
    WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"),
    WeightScheme("e3m2", "group", 32, scale_fmt="e8m0"), WeightScheme("e2m3", "group", 32, scale_fmt="bf16"),
    WeightScheme("int4", "group", 128, act_order=True), WeightScheme("uint4", "group", 64, zero_point="int", act_order=True),
]

#: activations: 16-bit, per token, static per tensor, per group (FP8 block, MXFP8-like, NVFP4, MXFP4)
ACTS = [
    ActivationScheme("fp16"), ActivationScheme("bf16"), ActivationScheme("int8", "dynamic_token"),
    ActivationScheme("int8", "static_tensor"), ActivationScheme("e4m3", "dynamic_token"),
    ActivationScheme("e4m3", "static_tensor"), ActivationScheme("e5m2", "dynamic_token"),
    ActivationScheme("int4", "dynamic_token"), ActivationScheme("e4m3", "dynamic_group", 128),
    ActivationScheme("int8", "dynamic_group", 128), ActivationScheme("e2m1", "dynamic_group", 16, "e4m3"),
    ActivationScheme("e2m1", "dynamic_group", 32, "e8m0"),
]
#: the 16-bit activations twice as often: most layers people run are weight-only
ACT_WEIGHTS = [4, 4, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1]

#: rows and columns of real layers (Llama / Qwen / Mistral / DeepSeek sizes) and of their tensor-parallel
#: shards, odd ones included
NS = [256, 1000, 1280, 2048, 2560, 3072 - 64, 3696, 4096, 4096 + 40, 5120, 6144, 7168, 7392, 8192, 11008,
      14336, 16384 + 64, 28672]
KS = [512, 1024, 1536, 2048 + 64, 3584, 3696, 4096, 5120, 7168, 8192, 11008, 14336]
#: one token, then a token count from each of the planner's ranges
M_RANGES = [(1, 1), (2, 8), (9, 16), (17, 64), (65, 128), (129, 512), (513, 1100)]
#: the reference's dense products stay cheap up to about this many weights
MAX_WEIGHTS = 48 << 20


def _fits(w: WeightScheme, n: int, k: int) -> bool:
    if n * k > MAX_WEIGHTS:
        return False
    if w.scale == "group" and k % w.group_size and w.group_offset is None:
        return False
    if w.scale == "block" and (k % w.group_size or n % w.block_n):
        return False
    return True


#: GPUs without warpgroup MMAs whose plans this GPU runs as they are: their mma.sync tiles, grids and operand
#: choices, compiled for this GPU (Ampere, Ada, Turing)
OTHER_GPUS = ["A100", "L40S", "A10", "T4"]


#: scale groups that are not a multiple of 16 values (run padded to one: gemm_mma_sync.kernel_group), drawn by
#: their own seeds (test_random_padded_group_layers), so that the other seeds keep their draws
PADDED = [
    WeightScheme("int4", "group", 8), WeightScheme("uint4", "group", 24, zero_point="int"),
    WeightScheme("int3", "group", 40), WeightScheme("e2m1", "group", 8, scale_fmt="e8m0"),
    WeightScheme("uint4", "group", 8, zero_point="float", act_order=True),
]
PADDED_SEEDS = list(range(8))
#: K-shards of row-parallel layers whose scale groups straddle the ranks (WeightScheme.group_offset: the kernels
#: place them in whole groups), drawn by their own seeds (test_random_k_shard_layers)
SHARDS = [
    WeightScheme("uint4", "group", 128, group_offset=112), WeightScheme("uint4", "group", 128, zero_point="int",
                                                                        group_offset=64),
    WeightScheme("int4", "group", 128, group_offset=0), WeightScheme("e2m1", "group", 32, scale_fmt="e8m0",
                                                                     group_offset=16),
    WeightScheme("int8", "group", 128, group_offset=48), WeightScheme("uint4", "group", 40, group_offset=8),
]
SHARD_SEEDS = list(range(8))
#: the K of tensor-parallel shards of real layers (Qwen2-72B's 29568 over 8 / 4 / 16 ranks, Qwen2-7B's 18944 over
#: 8 / 4), most of them not a whole number of groups of 128
SHARD_KS = [3696, 7392, 1848, 2368, 4736, 3584, 1536]


#: MoE experts (N x K of one expert: Qwen3-30B-A3B's, Qwen1.5-MoE's, DeepSeek-V2-Lite's, OLMoE's, Mixtral's and gpt-oss's
#: gate/up and down projections, and tensor-parallel shards of them), the experts and top-k of such models, and
#: the most weights the reference dequantizes at once
MOE_SHAPES = [(1536, 2048), (2048, 768), (2816, 2048), (2048, 1408), (1408, 2048), (2048, 1024), (1024, 2048),
              (704, 2048), (2048, 352), (3584, 4096), (4096, 1792), (5760, 2880), (2880, 2880), (384, 2048)]
MOE_ROUTING = [(8, 2), (16, 4), (32, 4), (60, 4), (64, 6), (64, 8), (128, 8)]
MOE_MAX_WEIGHTS = 96 << 20
#: token counts: one, then a few from the ranges the experts' share lands in (tokens x top-k / experts)
MOE_M_RANGES = [(1, 1), (2, 16), (17, 128), (129, 700)]
MOE_SEEDS = list(range(16))


def moe_case_for(seed: int):
    """The MoE layer of one seed: (weight scheme, activation scheme, N, K, experts, top-k, bias, share of pairs held
    elsewhere, token counts), the first draw this GPU's planner (an H200's) can run."""
    rng = random.Random(f"moe-{seed}")
    acts = [(a, wt) for a, wt in zip(ACTS, ACT_WEIGHTS) if a.quant != "static_tensor"]  # (moe_gemm's act_scale aside)
    for _ in range(200):
        w = rng.choice(WEIGHTS + PADDED[:2])
        a = rng.choices([a for a, _ in acts], weights=[wt for _, wt in acts])[0]
        (n, k), (e, topk) = rng.choice(MOE_SHAPES), rng.choice(MOE_ROUTING)
        if e * n * k > MOE_MAX_WEIGHTS or not _fits(w, n, k):
            continue
        if a.is_quantized and a.quant == "dynamic_group" and k % a.group_size:
            continue
        bias = rng.random() < 0.3
        out = "bf16" if a.fmt == "bf16" else "fp16"
        if not plan(LayerSpec(n, k, w, a, out_dtype=out, bias=bias, num_experts=e), "h200").runnable:
            continue
        ms = tuple(rng.randint(lo, hi) for lo, hi in MOE_M_RANGES)
        return w, a, n, k, e, topk, bias, rng.choice([0.0, 0.0, 0.1]), ms
    raise AssertionError(f"MoE seed {seed}: no runnable draw in 200 tries")


def case_for(seed: int, device: str = "h200", weights=None):
    """The layer of one seed: (weight scheme, activation scheme, N, K, bias, out dtype, token counts), the first
    draw the planner can run on ``device`` (weight schemes from ``weights``, default WEIGHTS)."""
    rng = random.Random(f"{'shard' if weights is SHARDS else 'padded'}-{device}-{seed}" if weights is not None
                        else seed if device == "h200" else f"{device}-{seed}")
    for _ in range(200):
        w = rng.choice(weights or WEIGHTS)
        a = rng.choices(ACTS, weights=ACT_WEIGHTS)[0]
        n, k = rng.choice(NS), rng.choice(SHARD_KS if weights is SHARDS else KS)
        if not _fits(w, n, k):
            continue
        if a.is_quantized and a.quant == "dynamic_group" and k % a.group_size:
            continue
        out = a.fmt if a.fmt in ("fp16", "bf16") else rng.choice(["fp16", "bf16"])
        bias = rng.random() < 0.5
        p = plan(LayerSpec(n, k, w, a, out_dtype=out, bias=bias), device)
        if not p.runnable:
            continue
        ms = tuple(rng.randint(lo, hi) for lo, hi in M_RANGES)
        return w, a, n, k, bias, out, ms
    raise AssertionError(f"seed {seed}: no runnable draw for {device} in 200 tries")


def _other(seed: int) -> str:
    return OTHER_GPUS[seed % len(OTHER_GPUS)]


def _id(seed, device="h200"):
    w, a, n, k, bias, out, ms = case_for(seed, device)
    return f"{seed}-{w.describe()}-{a.describe()}-{n}x{k}".replace(" ", "_").replace(",", "")


def _launch_plan(device: str, layer: LayerSpec, here):
    """``device``'s plan of ``layer``, the recipe that compiles its choices for ``here`` (this GPU), and its launch
    ranges fitted to ``device``'s shared memory."""
    from humming.device import get_device
    from humming_nvidia import gemm_mma_sync as G

    there = get_device(device)
    p = plan(layer, there)
    recipe = G.recipe_from_plan(p, here)
    kp = G.plan_kp(p, recipe)
    return there, p, recipe, G.launch_ranges(p, recipe, int(there.max_smem_per_block), kp)


def prepare_as(device: str):
    """A ``prepare`` for run_and_check: the weight prepared under ``device``'s plan, launched on this GPU as that
    device would launch it (its SM count and shared memory for the grids; plain launches, no clusters)."""
    def prepare(qw, layer, dev):
        from humming.device import get_device
        from humming.ops.gemm import PreparedWeight, _detect_cuda, _register
        from humming_nvidia import gemm_mma_sync as G

        dev = _detect_cuda(dev)  # (cuda:N, as ops.prepare_weight keeps it)
        there = get_device(device)
        p = plan(layer, there)
        packed, launcher = G.prepare_as(p, qw, dev, get_device(dev.index), there)
        w = PreparedWeight(layer, p, packed, launcher, dev, dict(packed.descriptor))
        w.handle = _register(w)
        return w
    return prepare


def _compile(draws) -> None:
    """Compile the kernels of ``draws`` ((seed, device, weights) each) in parallel (the lazy path would compile them
    one by one): this GPU's plan where the device is "h200", else the other device's ranges compiled for this GPU."""
    import humming
    from humming.device import get_device
    from humming.jit import warmup
    from humming_nvidia import gemm_mma_sync as G

    here = get_device(torch.cuda.current_device())
    specs = []
    for seed, device, weights in draws:
        w, a, n, k, bias, out, ms = case_for(seed, device, weights)
        layer = LayerSpec(n, k, w, a, out_dtype=out, bias=bias)
        if device == "h200":
            p = humming.plan(layer)
            if p.runnable:
                specs += [p.kernel(m) for m in ms]
        else:
            _, _, recipe, ranges = _launch_plan(device, layer, here)
            specs += [G.kernel_spec(recipe, r[2]) for r in ranges]
    warmup(list(dict.fromkeys(specs)))


@pytest.fixture(scope="module")
def compiled_ahead():
    """The seeds' kernels, compiled first."""
    _compile([(s, "h200", None) for s in SEEDS] + [(s, _other(s), None) for s in SEEDS])


@pytest.fixture(scope="module")
def padded_ahead():
    """The padded draws' kernels, compiled first."""
    _compile([(s, _padded_device(s), PADDED) for s in PADDED_SEEDS])


@pytest.fixture(scope="module")
def shards_ahead():
    """The K-shard draws' kernels, compiled first."""
    _compile([(s, _padded_device(s), SHARDS) for s in SHARD_SEEDS])


def test_the_draws_are_reproducible_and_varied():
    """The draw is the seed's alone, and the suite's seeds cover several formats and both kinds of activations."""
    draws = [case_for(s) for s in range(FUZZ_SEEDS)]
    assert draws == [case_for(s) for s in range(FUZZ_SEEDS)]
    assert len({d[0] for d in draws}) >= FUZZ_SEEDS // 2
    assert any(d[1].is_quantized for d in draws) and any(not d[1].is_quantized for d in draws)


def _check(seed: int, device: str = "h200", prepare=None, weights=None):
    """Draw the seed's layer for ``device``, quantize fresh weights, check every token count (run_and_check)."""
    w, a, n, k, bias, out, ms = case_for(seed, device, weights)
    g = torch.Generator(device="cuda").manual_seed(torch.randint(0, 2**31, (1,)).item())
    perm = torch.randperm(k, device="cuda", generator=g) if w.act_order else None
    qw = R.quantize(torch.randn(n, k, device="cuda", generator=g) * 0.02, w, perm=perm,
                    bias=torch.randn(n, device="cuda", generator=g) if bias else None)
    scale = None
    if a.is_quantized and a.quant == "static_tensor":  # (about the largest |x| of randn * 2 over the format's range)
        scale = torch.tensor([10.0 / {"int8": 127, "int4": 7, "e4m3": 448, "e5m2": 57344}[a.fmt]], device="cuda")
    run_and_check(qw, a, ms=ms, out_dtype=out, act_scale=scale, prepare=prepare)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", SEEDS, ids=_id)
def test_random_layers_through_the_planner(seed, compiled_ahead):
    _check(seed)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"{_other(s)}-{_id(s, _other(s))}")
def test_random_layers_as_older_gpus_plan_them(seed, compiled_ahead):
    """The same draws as Ampere, Ada and Turing plan them (mma.sync tiles, cp.async or plain loads, m16n8k8 on
    Turing, their operand fallbacks and K splits), compiled for and run on this GPU: the code those GPUs run, on
    layers of real sizes."""
    _check(seed, _other(seed), prepare_as(_other(seed)))


def _padded_device(seed: int) -> str:
    return "h200" if seed % 2 == 0 else _other(seed // 2)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", PADDED_SEEDS, ids=lambda s: f"{_padded_device(s)}-{s}")
def test_random_padded_group_layers(seed, padded_ahead):
    """Scale groups of 8, 24 or 40 values on layers of real sizes, as this GPU plans them (even seeds) and as an
    older GPU would (odd ones): the kernels of their padded groups, the activation gather and its zero column."""
    device = _padded_device(seed)
    _check(seed, device, None if device == "h200" else prepare_as(device), weights=PADDED)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", SHARD_SEEDS, ids=lambda s: f"{_padded_device(s)}-{s}")
def test_random_k_shard_layers(seed, shards_ahead):
    """K-shards of real sizes whose scale groups straddle the shards (partial first and last groups), as this GPU
    plans them (even seeds) and as an older GPU would (odd ones): placed in whole groups, the activations
    gathered with a zero column around them."""
    device = _padded_device(seed)
    _check(seed, device, None if device == "h200" else prepare_as(device), weights=SHARDS)


def _moe_id(seed: int) -> str:
    w, a, n, k, e, topk, *_ = moe_case_for(seed)
    return f"{seed}-{w.describe()}-{a.describe()}-{e}x{topk}-{n}x{k}".replace(" ", "_").replace(",", "")


@pytest.mark.gpu
@pytest.mark.parametrize("seed", MOE_SEEDS, ids=_moe_id)
def test_random_moe_layers(seed, monkeypatch):
    """An MoE layer of real experts' sizes and routing, as this GPU plans it: the routing kernel, the gather (with
    each expert's column order for act order), the GEMM over the routed rows and the combine, every pair's row
    against the reference with test_gemm_gpu's bound, expert by expert (test_moe._gpu_check)."""
    from humming.ops import moe as MOE
    from test_moe import _gpu_check, _weight

    monkeypatch.setattr(MOE, "POISON", True)
    w, a, n, k, e, topk, bias, absent, ms = moe_case_for(seed)
    gen = torch.Generator().manual_seed(torch.randint(0, 2**31, (1,)).item())
    qw = _weight(w, e, n, k, gen, bias=bias).to("cuda")
    _gpu_check(qw, a, ms=ms, topk=topk, absent=absent, seed=seed)


def test_moe_draws_are_reproducible_and_varied():
    """(CPU) The MoE draws are the seed's alone and cover several formats, both kinds of activations and several
    expert counts, within the reference's budget."""
    draws = [moe_case_for(s) for s in MOE_SEEDS]
    assert draws == [moe_case_for(s) for s in MOE_SEEDS]
    assert len({d[0] for d in draws}) >= len(MOE_SEEDS) // 2 and len({d[4] for d in draws}) >= 3
    assert any(d[1].is_quantized for d in draws) and any(not d[1].is_quantized for d in draws)
    for w, a, n, k, e, topk, bias, absent, ms in draws:
        assert e * n * k <= MOE_MAX_WEIGHTS and topk <= e and ms[0] == 1


def test_k_shard_draws_run_as_shards():
    """(CPU) The K-shard draws are runnable plans of shards the kernels place in whole groups, some of them of a K
    that no group size divides, and their draws are not the padded ones'."""
    from humming_nvidia import gemm_mma_sync as G

    odd = 0
    for seed in SHARD_SEEDS:
        device = _padded_device(seed)
        w, a, n, k, bias, out, ms = case_for(seed, device, SHARDS)
        assert w.group_offset is not None
        p = plan(LayerSpec(n, k, w, a, out_dtype=out, bias=bias), device)
        kl = G.kernel_layer(p.layer, p.compute)
        assert p.runnable and kl.weight.group_offset is None and kl.k > k - (k % w.group_size == 0), p.explain()
        odd += k % w.group_size != 0
    assert odd >= 2
    assert [case_for(s, _padded_device(s), PADDED) for s in PADDED_SEEDS[:2]] != [
        case_for(s, _padded_device(s), SHARDS) for s in SHARD_SEEDS[:2]]


def test_padded_group_draws_run_padded():
    """(CPU) The padded draws are runnable plans whose groups the kernels pad."""
    from humming_nvidia import gemm_mma_sync as G

    for seed in PADDED_SEEDS:
        device = _padded_device(seed)
        w, a, n, k, bias, out, ms = case_for(seed, device, PADDED)
        p = plan(LayerSpec(n, k, w, a, out_dtype=out, bias=bias), device)
        assert p.runnable and G.kernel_layer(p.layer, p.compute) is not p.layer, p.explain()


def test_gemm_converts_bf16_activations_only_where_the_plan_says():
    """(CPU) gemm's activation step: bf16 x for a plan that converts bf16 -> fp16 (Turing) becomes fp16, saturating at
    +-65504 and keeping NaN; where the plan converts nothing, a dtype other than the compute type is refused."""
    from types import SimpleNamespace

    from humming.errors import ShapeError
    from humming.ops.gemm import _prepare_activations

    def weight(convert, compute):
        layer = LayerSpec(64, 8, WeightScheme("int4", "group", 8), ActivationScheme("bf16"), out_dtype="bf16")
        return SimpleNamespace(layer=layer, packed=SimpleNamespace(perm=None), compute_dtype=compute,
                               plan=SimpleNamespace(activation=SimpleNamespace(convert=convert)))

    x = torch.tensor([[1e6, -3e5, 7e4, 65280, float("nan"), 1.5, -2.25, 0.0]], dtype=torch.bfloat16)
    v, s = _prepare_activations(x, weight("bf16 -> fp16", torch.float16), None)
    assert s is None and v.dtype == torch.float16
    assert v[0, :4].tolist() == [65504.0, -65504.0, 65504.0, 65280.0] and torch.isnan(v[0, 4])
    assert v[0, 5:].tolist() == [1.5, -2.25, 0.0]
    with pytest.raises(ShapeError, match="the plan computes in torch.float16"):
        _prepare_activations(x, weight("none", torch.float16), None)
    with pytest.raises(ShapeError, match="the plan computes in torch.bfloat16"):
        _prepare_activations(x.half(), weight("none", torch.bfloat16), None)


@pytest.mark.gpu
def test_bf16_activations_where_the_plan_computes_in_fp16():
    """A chip without bf16 MMAs (Turing) plans bf16 activations on fp16 operands: gemm takes the bf16 x and
    converts it, saturating at fp16's range as the plan's fallback note says (the random draws found gemm
    refusing such x). Values beyond 65504 included; the reference multiplies the saturated activations."""
    from humming.ops import gemm

    n, k = 1000, 1024
    scheme, act = WeightScheme("int4", "group", 128), ActivationScheme("bf16")
    layer = LayerSpec(n, k, scheme, act, out_dtype="bf16")
    assert plan(layer, "T4").activation.convert == "bf16 -> fp16"
    qw = R.quantize(torch.randn(n, k, device="cuda") * 0.02, scheme)
    pw = prepare_as("T4")(qw, layer, torch.device("cuda"))
    for m in (1, 16, 100):
        x = (torch.randn(m, k, device="cuda") * 2).to(torch.bfloat16)
        x[0, :3] = torch.tensor([1e6, -3e5, 7e4])
        y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        gemm(x, pw, out=y)
        torch.cuda.synchronize()
        x_eff = x.float().clamp(-65504, 65504).half().float()
        ref = R.gemm(x_eff, qw)
        magic = 1024.0 if pw.plan.tuning_for(m).config.get("stream") else 0.0  # (fp16 raw codes on a stream tile)
        b = bound(x_eff, qw, ref, 2.0 ** -8, pw.packed.out_mul, raw=magic)  # (bf16 output)
        assert not torch.isnan(y).any(), f"M={m}: outputs not written (or NaN)"
        ratio = float(((y.double() - ref.double()).abs() / b).max())
        assert ratio <= 1.0, f"M={m}: error {ratio:.3g} x the bound"


@pytest.mark.gpu
@pytest.mark.parametrize("scheme,n,k", [
    (WeightScheme("uint8", "group", 16, zero_point="int"), 1000, 4096),
    (WeightScheme("e4m3", "group", 64, scale_fmt="fp32"), 1000, 14336),
    (WeightScheme("int8", "group", 32), 1032, 4096),
    (WeightScheme("int4", "group", 64), 2040, 1024),
    (WeightScheme("int3", "group", 64), 1000, 4096),
    (WeightScheme("int8", "group", 64), 4104, 4096),
], ids=["uint8-g16-zp", "e4m3-g64-long-k", "int8-g32", "int4-g64", "int3-g64", "int8-g64"])
def test_turing_decode_tiles_at_three_slots(scheme, n, k):
    """Turing's stream tiles that hold three register slots (four spilled: test_gemm_compile's Turing tests): 8-bit
    codes that min_blocks does not budget, and integer codes in groups of 64 on the register-streaming tiles (of
    layers of about 2048 rows or fewer for sub-byte codes; every layer for int8). The T4's plan, its tiles compiled
    for this GPU, against the reference at the decode token counts and beyond, outputs poisoned, odd N."""
    act = ActivationScheme("fp16")
    p = plan(LayerSpec(n, k, scheme, act, out_dtype="fp16"), "T4")
    cfg = p.tuning_for(1).config
    assert cfg.get("stream") and cfg["stages"] == 3, cfg
    qw = R.quantize(torch.randn(n, k, device="cuda") * 0.02, scheme)
    run_and_check(qw, act, ms=(1, 5, 8, 16), prepare=prepare_as("T4"))


@pytest.mark.gpu
@pytest.mark.parametrize("device,scheme,n,k,stream", [
    ("H200", WeightScheme("uint7", "group", 64, zero_point="int"), 1000, 14336, 4),
    ("L40S", WeightScheme("uint7", "group", 64, zero_point="int"), 2040, 8192, 4),
    ("A100", WeightScheme("uint5", "group", 16, zero_point="int"), 1000, 3584, 1),
    ("L40S", WeightScheme("uint7", "group", 16, zero_point="int"), 4104, 4096, 1),
    ("H200", WeightScheme("int7", "group", 64), 7160, 2048, 1),
], ids=["h200-uint7-g64", "l40s-uint7-g64", "a100-uint5-g16", "l40s-uint7-g16", "h200-int7-g64"])
def test_stream_tiles_at_three_slots_where_four_spilled(device, scheme, n, k, stream):
    """Stream tiles at three register slots where four spilled (four_slots_spill; test_gemm_compile's uint7 and
    odd-width tests): uint7 with zero points in groups of 64 on the sixteen-warp long-K ring, 5- / 7-bit codes
    with zero points in groups of 16 and int7 in groups of 64 on the register-streaming tiles, as the device plans
    them, compiled for this GPU, against the reference at the decode token counts; outputs poisoned, odd N."""
    act = ActivationScheme("fp16")
    cfg = plan(LayerSpec(n, k, scheme, act, out_dtype="fp16"), device).tuning_for(1).config
    assert cfg.get("stream") == stream and cfg["stages"] == 3, cfg
    qw = R.quantize(torch.randn(n, k, device="cuda") * 0.02, scheme)
    run_and_check(qw, act, ms=(1, 5, 8), prepare=prepare_as(device))


@pytest.mark.gpu
@pytest.mark.parametrize("device,scheme,act,n", [
    ("A100", WeightScheme("int4", "group", 32), "int8", 1000),
    ("A100", WeightScheme("uint4", "group", 32, zero_point="int"), "int8", 4104),
    ("L40S", WeightScheme("uint4", "group", 64, zero_point="int"), "e4m3", 4104),
], ids=["a100-int4-g32", "a100-uint4-g32-zp", "l40s-uint4-g64-zp-e4m3"])
def test_half_group_byte_tiles_above_128_tokens(device, scheme, act, n):
    """Byte operands in groups of half a block above 128 tokens on chips without warpgroup MMAs: the 32-token
    warps of BYTE_TILE_LARGE_HALF (more than 4096 rows) and BK = 64 (at most 4096; test_gemm_compile's spill
    test), as the A100 / L40S plans them, compiled for this GPU, against the reference; outputs poisoned, odd N."""
    a = ActivationScheme(act, "dynamic_token")
    k = 2048
    p = plan(LayerSpec(n, k, scheme, a, out_dtype="bf16"), device)
    cfg = p.tuning_for(300).config
    assert cfg["bk"] == 64 and cfg["bm"] // cfg["wm"] == 32, cfg
    qw = R.quantize(torch.randn(n, k, device="cuda") * 0.02, scheme)
    run_and_check(qw, a, ms=(129, 300, 517), out_dtype="bf16", prepare=prepare_as(device))


@pytest.mark.gpu
@pytest.mark.parametrize("scheme,n,k", [
    (WeightScheme("uint4", "group", 32, zero_point="int"), 4104, 4096),
    (WeightScheme("int2", "group", 32), 1000, 8192),
], ids=["uint4-g32-zp", "int2-g32"])
def test_quarter_group_byte_tiles_at_33_to_128_tokens(scheme, n, k):
    """Byte operands in groups of 32 values at 33-128 tokens as the A100 plans them: BK = 64, one warp along K
    (test_gemm_compile's spill test: BK = 128 spilled in the loop on sm_80), compiled for this GPU, against the
    reference; outputs poisoned, odd N."""
    a = ActivationScheme("int8", "dynamic_token")
    p = plan(LayerSpec(n, k, scheme, a, out_dtype="fp16"), "A100")
    for m in (33, 128):
        cfg = p.tuning_for(m).config
        assert (cfg["bk"], cfg["wk"]) == (64, 1), (m, cfg)
    qw = R.quantize(torch.randn(n, k, device="cuda") * 0.02, scheme)
    run_and_check(qw, a, ms=(33, 64, 100, 128), prepare=prepare_as("A100"))


@pytest.mark.gpu
@pytest.mark.parametrize("scheme,act,n,k", [
    (WeightScheme("int2", "group", 128), "fp16", 4104, 8192),
    (WeightScheme("int2", "channel", scale_fmt="fp32"), "bf16", 1000, 14336),
    (WeightScheme("uint2", "group", 128, zero_point="int"), "fp16", 2040, 4096),
    (WeightScheme("int1", "group", 128), "bf16", 4104, 4096),
], ids=["int2-g128-fp16", "int2-channel-bf16", "uint2-g128-zp", "int1-g128-bf16"])
def test_lazy_correction_build_against_the_reference(scheme, act, n, k, monkeypatch):
    """The HUMMING_LAZY_CORR build (HUMMING_GEMM_DEFINES; a diagnostic variant, not planned: the one-token loops of
    1- and 2-bit codes sum the correction's quads once, after the loop; test_gemm_compile's lazy test) of this GPU's
    plan, against the reference at one token (the loop it changes) and a few more; outputs poisoned, odd N."""
    monkeypatch.setenv("HUMMING_GEMM_DEFINES", "HUMMING_LAZY_CORR")
    a = ActivationScheme(act)
    qw = R.quantize(torch.randn(n, k, device="cuda") * 0.02, scheme)

    def prepare(q, layer, dev):
        from humming.ops import prepare_weight

        pw = prepare_weight(q, layer=layer, device=dev)
        assert ("HUMMING_LAZY_CORR", "1") in pw.packed.recipe.defines, pw.packed.recipe.defines
        return pw

    run_and_check(qw, a, ms=(1, 2, 5), prepare=prepare)
