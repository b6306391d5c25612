"""Scale groups that are not a multiple of 16 values (CPU tier).

The 16-bit kernels apply one scale per k16 tile of a row, so the mma_sync family
runs groups of, say, 8, 24 or 200 values padded to the next multiple of 16
(``gemm_mma_sync.kernel_group``): ``pack_weight`` puts zero-weight columns after
each group and each call gathers the activations into that K, a zero column in
the gaps (``humming.ops.gemm._kernel_columns``, as for act order). These tests
check, without a GPU, that

* the packed weight is, byte for byte, the packed weight of a layer whose groups
  are the padded ones (``kernel_layer``), whose kernels the GPU tests run;
* that layer, fed the gathered activations, computes the same GEMM as the
  checkpoint's layer (reference.py, float64);
* the plan runs exactly the kernels of that layer and says what the padding costs.

The GPU tier runs such layers end to end (tests/test_gemm_gpu.py, ``_cases``).
"""
from __future__ import annotations

import dataclasses

import pytest
import torch

import humming
from humming import reference as R
from humming.device import Device
from humming.dtypes import IntFormat
from humming.ops.gemm import _kernel_columns
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme
from humming_nvidia import gemm_mma_sync as G

SCHEMES = [
    (WeightScheme("int4", "group", 8), 576),
    (WeightScheme("uint4", "group", 24, zero_point="int"), 456),
    (WeightScheme("uint3", "group", 40, zero_point="float", act_order=True), 640),
    (WeightScheme("e2m1", "group", 8, scale_fmt="e8m0"), 576),
    (WeightScheme("e4m3", "block", 72, block_n=64, scale_fmt="fp32"), 576),
    (WeightScheme("int8", "group", 200, global_scale="channel"), 600),
    (WeightScheme("int2", "group", 4), 256),
]


def _id(case):
    s, k = case
    return f"{s.describe().replace(' ', '_').replace(',', '')}-K{k}"


def _padded_twin(qw: R.QuantizedWeight, g2: int) -> R.QuantizedWeight:
    """The same weight as a layer whose groups hold ``g2`` columns: the first ``group_size`` of each are
    the weight's (in its stored order), the gaps hold the code the kernels' layout pads with (value 0 of
    the offset-binary codes). No act order: the gathered activations carry the permutation."""
    s = qw.scheme
    g = s.group_size
    n, k = qw.n, qw.k
    k2 = k // g * g2
    fmt = s.format
    gap = (1 << (fmt.bits - 1)) if isinstance(fmt, IntFormat) and fmt.signed else 0
    codes = torch.full((n, k2), gap, dtype=torch.uint8)
    codes[:, G.group_columns(k, g, g2)] = qw.codes
    scheme = dataclasses.replace(s, group_size=g2, act_order=False)
    return R.QuantizedWeight(scheme, codes, qw.scales, qw.zeros, qw.global_scale, None, qw.bias)


@pytest.mark.parametrize("device", ["H200", "A100", "T4"])
@pytest.mark.parametrize("case", SCHEMES, ids=_id)
def test_padded_groups_are_a_layer_of_the_kernels_groups(case, device):
    scheme, k = case
    n = 192
    gen = torch.Generator().manual_seed(k + scheme.bits)
    w = torch.randn(n, k, generator=gen) * 0.02
    perm = torch.randperm(k, generator=gen) if scheme.act_order else None
    qw = R.quantize(w, scheme, perm=perm, bias=torch.randn(n, generator=gen))
    act = ActivationScheme("fp16")
    layer = LayerSpec(n, k, scheme, act, bias=True)
    p = humming.plan(layer, device)
    assert p.runnable, p.explain()
    g2 = -(-scheme.group_size // 16) * 16
    assert any(f"scale groups of {scheme.group_size} values" in note and f"K {k} -> {k // scheme.group_size * g2}"
               in note for note in p.notes), p.explain()
    assert p.weight_layout.params["group_padding"] == f"{scheme.group_size} -> {g2}"

    kl = G.kernel_layer(layer, p.compute)
    assert (kl.k, kl.weight.group_size) == (k // scheme.group_size * g2, g2)
    recipe = G.recipe_from_plan(p, Device.named(device))
    assert recipe.group * recipe.ku == g2
    pw = G.pack_weight(qw, recipe, "cpu")
    assert pw.zero_column and pw.k == kl.k and pw.descriptor["group_padding"] == f"{scheme.group_size} -> {g2}"
    assert pw.perm.shape == (kl.k,) and int((pw.perm == k).sum()) == kl.k - k  # the gaps read the zero column

    twin = _padded_twin(qw, g2)
    tw = G.pack_weight(twin, recipe, "cpu")
    assert not tw.zero_column and tw.perm is None and (tw.k, tw.kp, tw.groups) == (pw.k, pw.kp, pw.groups)
    assert torch.equal(pw.w, tw.w)
    for name in ("sz", "chan", "bias"):
        a, b = getattr(pw, name), getattr(tw, name)
        assert (a is None and b is None) or torch.equal(a, b), name
    assert pw.out_mul == tw.out_mul

    # the twin fed the gathered activations computes the checkpoint layer's GEMM
    for m in (1, 5, 33):
        x = torch.randn(m, k, generator=gen, dtype=torch.float32) * 2
        xk = _kernel_columns(x, pw)
        assert xk.shape == (m, kl.k)
        assert torch.equal(xk[:, pw.perm == k], torch.zeros(m, kl.k - k))
        want = R.gemm(x, qw).double()
        got = R.gemm(xk, twin).double()
        err = float(((got - want).abs() / (want.abs() + 1e-3)).max())
        assert err < 1e-5, f"M={m}: relative error {err:.3g}"


@pytest.mark.parametrize("device", ["H200", "A100", "T4"])
def test_padded_groups_run_the_kernels_of_the_padded_layer(device):
    """The plan of groups of 8 over K = 4800 tunes and compiles exactly as a layer of groups of 16 over
    K = 9600: the kernels the GPU tests run on group-16 weights."""
    for act in (ActivationScheme("fp16"), ActivationScheme("bf16")):
        if device == "T4" and act.fmt == "bf16":
            continue
        od = "bf16" if act.fmt == "bf16" else "fp16"
        p8 = humming.plan(LayerSpec(4096, 4800, WeightScheme("uint4", "group", 8, zero_point="int"), act,
                                    out_dtype=od), device)
        p16 = humming.plan(LayerSpec(4096, 9600, WeightScheme("uint4", "group", 16, zero_point="int"), act,
                                     out_dtype=od), device)
        assert p8.runnable and p8.tuning == p16.tuning and p8.components == p16.components
        for m in (1, 7, 16, 100, 1000):
            assert p8.kernel(m) == p16.kernel(m), m


def test_groups_the_kernels_take_are_not_padded():
    """Multiples of 16 values (16-bit operands) and the byte operands' groups stay as they are; byte
    operands refuse what their MMAs cannot split, and the planner walks on to 16-bit operands."""
    for g in (16, 32, 48, 128):
        layer = LayerSpec(1024, 1536, WeightScheme("int4", "group", g))
        p = humming.plan(layer, "H200")
        assert G.kernel_layer(layer, p.compute) is layer
        assert "group_padding" not in p.weight_layout.params
        assert not any("scale groups of" in note for note in p.notes)
    assert G.kernel_group(WeightScheme("int4", "channel")) == 0
    assert G.kernel_group(WeightScheme("int4", "group", 16), op8=1) == 16
    assert G.kernel_group(WeightScheme("int4", "group", 8), op8=1) == 8
    layer = LayerSpec(1024, 1536, WeightScheme("int4", "group", 8), ActivationScheme("int8", "dynamic_token"))
    p = humming.plan(layer, "L40S")
    assert p.runnable and p.compute.a == "fp16" and p.fallbacks[0].src == "int8", p.explain()
    assert any("scale groups of 8 values" in note for note in p.notes)


def test_pack_weight_refuses_groups_its_recipe_cannot_hold():
    scheme = WeightScheme("int4", "group", 24)
    qw = R.quantize(torch.randn(128, 480) * 0.02, scheme)
    small = G.recipe_for(WeightScheme("int4", "group", 16), bf16=False, out_bf16=False, caps_cp_async=True,
                         k8mma=False, target="sm_80")
    with pytest.raises(ValueError, match="groups of 16 values cannot hold the weight's groups of 24"):
        G.pack_weight(qw, small, "cpu")
