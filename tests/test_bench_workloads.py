"""Workloads, presets, CLI parsing and the baselines' operand encodings (CPU)."""
from __future__ import annotations

import argparse

import pytest
import torch

from humming import reference as ref
from humming.bench.cli import add_arguments, build_workloads, cli_main, parse_external, select_methods
from humming.bench.methods import TinyGemmMethod, WorkloadData, moe_subset
from humming.bench.workloads import (PRESETS, Workload, activation_scheme_from, parse_m_list, parse_moe_shapes,
                                     parse_shapes, preset_workloads, weight_scheme_from)
from humming.errors import ShapeError

W4 = weight_scheme_from("int4", 128)
A16 = activation_scheme_from("fp16")


def test_llama3_8b_preset_shapes():
    wls = preset_workloads("llama3-8b", W4, A16)
    assert [(w.name, w.n, w.k) for w in wls] == [
        ("llama3-8b/qkv", 6144, 4096), ("llama3-8b/o", 4096, 4096),
        ("llama3-8b/gate_up", 28672, 4096), ("llama3-8b/down", 4096, 14336)]
    assert all(w.kind == "dense" for w in wls)


def test_every_preset_builds_and_filters_by_kind():
    for name in PRESETS:
        all_ = preset_workloads(name, W4, A16)
        dense = preset_workloads(name, W4, A16, "dense")
        moe = preset_workloads(name, W4, A16, "moe")
        assert len(all_) == len(dense) + len(moe) and dense
    moe = preset_workloads("qwen3-30b-a3b", W4, A16, "moe")
    assert [(w.num_experts, w.topk, w.n, w.k) for w in moe] == [(128, 8, 1536, 2048), (128, 8, 2048, 768)]
    ds = {w.name: w for w in preset_workloads("deepseek-v3", W4, A16)}
    assert (ds["deepseek-v3/moe_gate_up"].num_experts, ds["deepseek-v3/moe_gate_up"].k) == (256, 7168)
    with pytest.raises(ValueError, match="unknown preset 'llama9'; expected one of"):
        preset_workloads("llama9", W4, A16)


def test_workload_figures():
    w = Workload("x", "x", 1024, 512, W4, A16, num_experts=8, topk=2)
    assert w.rows(3) == 6 and w.flops(3) == 2.0 * 6 * 1024 * 512
    assert w.io_bytes(3, 1000) == 1000 + 3 * 512 * 2 + 6 * 1024 * 2
    assert w.layer.num_experts == 8 and w.layer.out_dtype == "fp16"
    assert Workload("y", "y", 64, 128, W4, activation_scheme_from("bf16")).out_dtype == "bf16"
    with pytest.raises(ValueError, match="topk must be in 1..num_experts=8, found 9"):
        Workload("x", "x", 64, 128, W4, A16, num_experts=8, topk=9)
    with pytest.raises(ShapeError, match="group_size=128 does not divide K=100"):
        Workload("x", "x", 64, 100, W4, A16)


def test_parsing():
    assert [(w.n, w.k) for w in parse_shapes("4096x4096, 14336X4096", W4, A16)] == [(4096, 4096), (14336, 4096)]
    moe = parse_moe_shapes("128x8x1536x2048", W4, A16)[0]
    assert (moe.num_experts, moe.topk, moe.n, moe.k) == (128, 8, 1536, 2048)
    assert parse_m_list("16,1, 256,16") == (1, 16, 256)
    with pytest.raises(ValueError, match=r"--shapes: expected N x K pairs .*found '4096'"):
        parse_shapes("4096", W4, A16)
    with pytest.raises(ValueError, match="--m: expected positive integers"):
        parse_m_list("1,0")
    assert weight_scheme_from("e4m3", 0, "fp32").scale == "channel"
    assert activation_scheme_from("e4m3").quant == "dynamic_token"
    assert activation_scheme_from("int8", group_size=64).quant == "dynamic_group"
    nvfp4 = activation_scheme_from("e2m1", "dynamic_group", 16, "e4m3")  # --act-scale-fmt
    assert (nvfp4.group_size, nvfp4.scale_fmt) == (16, "e4m3")


def _args(*argv):
    return add_arguments(argparse.ArgumentParser()).parse_args(list(argv))


def test_cli_options_to_workloads_and_methods():
    wls = build_workloads(_args("--preset", "llama3-8b,qwen3-30b-a3b", "--kind", "dense", "--weight", "uint4",
                                "--zero-point", "int", "--group-size", "64", "--act", "bf16"))
    assert len(wls) == 6 and wls[0].weight.zero_point == "int" and wls[0].weight.group_size == 64
    assert wls[0].activation.fmt == "bf16"
    with pytest.raises(ValueError, match="no workloads"):
        build_workloads(_args())
    assert [m.name for m in select_methods("humming,cublas-fp16")] == ["humming", "cublas-fp16"]
    with pytest.raises(ValueError, match="--methods: unknown cutlass"):
        select_methods("humming,cutlass")
    ext = parse_external(["humming-kernels=/tmp/somewhere"], "python3")[0]
    assert ext.adapter.endswith("scripts/external/humming_kernels_adapter.py") and ext.pythonpath == "/tmp/somewhere"
    with pytest.raises(ValueError, match="--external: expected NAME=PYTHONPATH"):
        parse_external(["marlin=/x"], "python3")


def test_cli_weight_and_activation_presets():
    """The plan command's presets (nvfp4, mxfp4, mxfp8) work in the bench too: the preset's scales unless a flag
    gives them; plain formats keep the bench's defaults (group 128, fp16 scales, fp32 activation scales)."""
    wl = build_workloads(_args("--shapes", "4096x4096", "--weight", "nvfp4", "--act", "nvfp4"))[0]
    assert (wl.weight.fmt, wl.weight.group_size, wl.weight.scale_fmt, wl.weight.global_scale) == ("e2m1", 16, "e4m3",
                                                                                                  "tensor")
    assert (wl.activation.fmt, wl.activation.quant, wl.activation.group_size, wl.activation.scale_fmt) == (
        "e2m1", "dynamic_group", 16, "e4m3")
    wl = build_workloads(_args("--shapes", "4096x4096", "--weight", "mxfp4", "--group-size", "64", "--act", "mxfp8",
                               "--act-scale-fmt", "fp32"))[0]
    assert (wl.weight.group_size, wl.weight.scale_fmt) == (64, "e8m0")
    assert (wl.activation.fmt, wl.activation.group_size, wl.activation.scale_fmt) == ("e4m3", 32, "fp32")
    wl = build_workloads(_args("--shapes", "4096x4096", "--act", "int8"))[0]
    assert (wl.weight.group_size, wl.weight.scale_fmt, wl.activation.scale_fmt) == (128, "fp16", "fp32")
    assert build_workloads(_args("--shapes", "4096x4096", "--group-size", "0"))[0].weight.scale == "channel"
    wl = build_workloads(_args("--moe-shapes", "8x2x256x512", "--weight", "uint4", "--zero-point", "int",
                               "--act-order"))[0]
    assert wl.weight.act_order and wl.weight.zero_point == "int" and wl.num_experts == 8


def test_cli_without_gpu_says_so(capsys):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert cli_main(["--shapes", "256x256"]) == 2
    assert "needs a CUDA device" in capsys.readouterr().err
    assert cli_main(["--shapes", "256x256", "--repeats", "2"]) == 2
    assert "--repeats: expected at least 3, found 2" in capsys.readouterr().err


def test_workload_data_is_deterministic_and_chunked():
    wl = Workload("m", "m", 32, 128, W4, A16, num_experts=5, topk=2)
    a = WorkloadData(wl, "cpu", seed=3, chunk_elems=32 * 128 * 2)  # quantized two experts at a time
    b = WorkloadData(wl, "cpu", seed=3)
    assert torch.equal(a.w16, b.w16) and torch.equal(a.x(4), b.x(4)) and torch.equal(a.topk_ids(4), b.topk_ids(4))
    qa, qb = a.quantized(W4), b.quantized(W4)
    assert torch.equal(qa.codes, qb.codes) and torch.equal(qa.scales, qb.scales)
    assert a.w16.std().item() == pytest.approx(0.02, rel=0.1)
    ids = a.topk_ids(9)
    assert ids.shape == (9, 2) and ids.dtype == torch.int32 and (ids[:, 0] != ids[:, 1]).all()
    sub, local = moe_subset(qa, ids[:2])
    full = ref.moe_gemm(a.x(9)[:2], qa, ids[:2])
    assert torch.allclose(ref.moe_gemm(a.x(9)[:2], sub, local), full)
    # act order (--act-order): each expert its own permutation, chunked or not the same
    ao = W4.replace(act_order=True)
    pa, pb = a.quantized(ao), b.quantized(ao)
    assert pa.perm.shape == (5, 128) and torch.equal(pa.perm, pb.perm) and not torch.equal(pa.perm[0], pa.perm[1])
    assert torch.allclose(ref.dequantize(pa), a.w16.float(), atol=0.02)


def test_tinygemm_operands_encode_the_reference_weight():
    codes = torch.randint(0, 16, (8, 256), dtype=torch.uint8)
    packed = TinyGemmMethod.pack_codes(codes)  # the CUDA packing: even column in the high nibble
    assert packed.shape == (8, 128)
    assert torch.equal(packed >> 4, codes[:, ::2]) and torch.equal(packed & 15, codes[:, 1::2])
    scales = torch.rand(8, 2)
    sz = TinyGemmMethod.scales_and_zeros(scales)
    assert sz.shape == (2, 8, 2) and sz.dtype == torch.bfloat16
    assert torch.equal(sz[..., 0].float(), scales.T.to(torch.bfloat16).float()) and not sz[..., 1].any()
    # tinygemm computes (q - 8) * scale + zero; with zero = 0 that is the reference's uint4 with offset 8
    # (checked through torch's CPU twin, which shares the arithmetic)
    wl = Workload("t", "t", 64, 256, W4, A16)
    scheme = TinyGemmMethod()._scheme(wl)
    assert scheme.implicit_offset == 8 and scheme.scale_fmt == "bf16" and scheme.group_size == 128
    qw = ref.quantize(torch.randn(64, 256) * 0.02, scheme)
    x = torch.randn(5, 256).to(torch.bfloat16)
    w_cpu = torch._convert_weight_to_int4pack_for_cpu(qw.codes.to(torch.int32), 8)
    y = torch._weight_int4pack_mm_for_cpu(x, w_cpu, 128, TinyGemmMethod.scales_and_zeros(qw.scales))
    expected = ref.gemm(x, qw)
    assert float((y.float() - expected).norm() / expected.norm()) < 5e-3
