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
(``scripts/gpu_run.sh fuzz``).
"""
from __future__ import annotations

import os
import random

import pytest
import torch

from humming import plan, reference as R
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme
from test_gemm_gpu import run_and_check

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
    if w.scale == "group" and k % w.group_size:
        return False
    if w.scale == "block" and (k % w.group_size or n % w.block_n):
        return False
    return True


def case_for(seed: int):
    """The layer of one seed: (weight scheme, activation scheme, N, K, bias, out dtype, token counts), the first
    draw the planner can run on an H200."""
    rng = random.Random(seed)
    for _ in range(200):
        w = rng.choice(WEIGHTS)
        a = rng.choices(ACTS, weights=ACT_WEIGHTS)[0]
        n, k = rng.choice(NS), rng.choice(KS)
        if not _fits(w, n, k):
            continue
        if a.is_quantized and a.quant == "dynamic_group" and k % a.group_size:
            continue
        out = a.fmt if a.fmt in ("fp16", "bf16") else rng.choice(["fp16", "bf16"])
        bias = rng.random() < 0.5
        p = plan(LayerSpec(n, k, w, a, out_dtype=out, bias=bias), "h200")
        if not p.runnable:
            continue
        ms = tuple(rng.randint(lo, hi) for lo, hi in M_RANGES)
        return w, a, n, k, bias, out, ms
    raise AssertionError(f"seed {seed}: no runnable draw in 200 tries")


def _id(seed):
    w, a, n, k, bias, out, ms = case_for(seed)
    return f"{seed}-{w.describe()}-{a.describe()}-{n}x{k}".replace(" ", "_").replace(",", "")


@pytest.fixture(scope="module")
def compiled_ahead():
    """Compile the seeds' kernels in parallel first (the lazy path would compile them one by one)."""
    import humming
    from humming.jit import warmup

    specs = []
    for seed in SEEDS:
        w, a, n, k, bias, out, ms = case_for(seed)
        p = humming.plan(LayerSpec(n, k, w, a, out_dtype=out, bias=bias))
        if p.runnable:
            specs += [p.kernel(m) for m in ms]
    warmup(list(dict.fromkeys(specs)))


def test_the_draws_are_reproducible_and_varied():
    """The draw is the seed's alone, and the suite's seeds cover several formats and both kinds of activations."""
    draws = [case_for(s) for s in range(FUZZ_SEEDS)]
    assert draws == [case_for(s) for s in range(FUZZ_SEEDS)]
    assert len({d[0] for d in draws}) >= FUZZ_SEEDS // 2
    assert any(d[1].is_quantized for d in draws) and any(not d[1].is_quantized for d in draws)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", SEEDS, ids=_id)
def test_random_layers_through_the_planner(seed, compiled_ahead):
    w, a, n, k, bias, out, ms = case_for(seed)
    g = torch.Generator(device="cuda").manual_seed(torch.randint(0, 2**31, (1,)).item())
    perm = torch.randperm(k, device="cuda", generator=g) if w.act_order else None
    qw = R.quantize(torch.randn(n, k, device="cuda", generator=g) * 0.02, w, perm=perm,
                    bias=torch.randn(n, device="cuda", generator=g) if bias else None)
    scale = None
    if a.is_quantized and a.quant == "static_tensor":  # (about the largest |x| of randn * 2 over the format's range)
        scale = torch.tensor([10.0 / {"int8": 127, "int4": 7, "e4m3": 448, "e5m2": 57344}[a.fmt]], device="cuda")
    run_and_check(qw, a, ms=ms, out_dtype=out, act_scale=scale)
