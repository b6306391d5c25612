"""The mma_sync GEMM compiles for every target its plans name, with the machine code they promise.

On the CPU (NVRTC + cuobjdump/nvdisasm from pip): each planned kernel variant --
integer bit-trick and float re-bias dequantizers, zero points, scale kinds, fp16
and bf16, the decode and the prefill tiles -- compiles for Turing, Ampere, Ada,
Hopper and Blackwell targets; its SASS holds the tensor-core MMA the plan names
(HMMA.16816, or HMMA.1688 pairs on sm_75; HGMMA.64xBMx16 above 32 tokens on sm_90),
the LOP3 bit tricks of the
dequantizer, cp.async copies where the loader is cp_async (none on sm_75), and no
local memory (no spills, no stack).
"""
from __future__ import annotations

import dataclasses
import re
import types

import pytest

import humming
from humming.jit import Runtime, inspect as I
from humming.jit.inspect import loop_bodies, main_loop
from humming.jit.codegen import render
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme

DEVICES = ["sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120"]
VARIANTS = [
    ("int4-g128", WeightScheme("int4", "group", 128), "fp16"),
    ("uint4-zp-g64-bf16", WeightScheme("uint4", "group", 64, zero_point="int"), "bf16"),
    ("uint3-floatzp-g32", WeightScheme("uint3", "group", 32, zero_point="float"), "fp16"),
    ("int8-channel", WeightScheme("int8", "channel", scale_fmt="fp32"), "bf16"),
    ("mxfp4", WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), "bf16"),
    ("fp8-block", WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"), "fp16"),
    ("int4-g128-longk", WeightScheme("int4", "group", 128), "fp16"),  # K = 8192: the lean register ring decode
    # per-group activation scales: 16-bit operands, the scales folded into the activation values
    ("nvfp4-w4a4", WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"),
     ActivationScheme("e2m1", "dynamic_group", 16, "e4m3")),
    ("fp8-block-a8g128", WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"),
     ActivationScheme("e4m3", "dynamic_group", 128)),
]
K_OF = {"int4-g128-longk": 8192}
N_OF = {"int4-g128-longk": 8192}  # (and more than 4096 rows: Hopper's 16-token warpgroup tile)


#: the H200 plan's scheduler slot for an int4 g128 layer of 8192 x 8192
SCHED_H200 = ("split_k + cluster_sum (<= 8 slices) + programmatic_launch (M 1-6, M 7-8, "
              "warpgroup tiles whose CTAs spread evenly) + tile_by_waves (fewer tokens per M tile where the "
              "256-token grid would end in a short wave or a part-empty M tile: 160 at M 257-320, 513-640, 1537-1600; "
              "192 at M 321-384, 641-768, 1025-1152; 224 at M 385-448, 769-896, 1153-1344, 1601-1792, 2049-2240, "
              "2561-2688, 3073-3136)")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """Every (device, variant, M range) kernel, compiled once, in parallel. (16-bit and byte operands of mma.sync and
    16-bit warpgroup tiles: HUMMING_BYTE_GROUP_ACTS=0 keeps the fp8 block variant on bf16 operands on Hopper, as
    other GPUs run it; test_fp8_group_activation_kernels_and_their_switch checks its fp8 warpgroup kernels.)"""
    from humming.planner import clear_cache

    rt = Runtime(cache_dir=tmp_path_factory.mktemp("gemm-compile"))
    plans, specs = {}, []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HUMMING_BYTE_GROUP_ACTS", "0")
        clear_cache()
        try:
            _plan_variants(plans, specs)
        finally:
            clear_cache()
    rt.warmup(list(dict.fromkeys(specs)), executor="thread")
    return {key: (p, rt.kernel(spec)) for key, (p, spec) in plans.items()}


def _plan_variants(plans, specs):
    for dev in DEVICES:
        for name, scheme, act in VARIANTS:
            act_s = act if isinstance(act, ActivationScheme) else ActivationScheme(act)
            if act == "bf16" and dev == "sm_75":
                act_s = ActivationScheme("fp16")  # Turing has no bf16 MMA (the planner says so)
            out = act_s.fmt if not act_s.is_quantized else "fp16"
            p = humming.plan(LayerSpec(N_OF.get(name, 4096), K_OF.get(name, 4096), scheme, act_s, out_dtype=out), dev)
            assert p.runnable and p.family == "mma_sync", p.explain()
            for m in (1, 1024) + ((8, 16, 64) if dev == "sm_90" else ()):
                spec = p.kernel(m)
                plans[(dev, name, m)] = (p, spec)
                specs.append(spec)


@pytest.mark.parametrize("dev,m", [(d, m) for d in DEVICES for m in (1, 1024)] + [("sm_90", 8), ("sm_90", 16), ("sm_90", 64)])
@pytest.mark.parametrize("variant", [v[0] for v in VARIANTS])
def test_machine_code_matches_the_plan(compiled, dev, variant, m):
    from humming_nvidia import gemm_mma_sync as G

    plan, kernel = compiled[(dev, variant, m)]
    sass = I.disassemble(kernel.cubin)
    mma = plan.components["mma"]
    tile = G.tile_from_config(next(r for r in plan.tuning if r.lo <= m and (r.hi is None or m <= r.hi)).config)
    if tile.wgmma:  # Hopper above 32 tokens: warpgroup MMAs, the activations read by the MMA itself
        assert dev == "sm_90" and "wgmma.m64nNk16" in mma, mma
        bf = r"\.BF16" if plan.compute.a == "bf16" else ""
        assert I.count(sass, rf"HGMMA\.64x{tile.bm}x16\.F32{bf}") > 0 and I.count(sass, r"HMMA") == 0
        assert I.count(sass, r"^LDSM") == 0
        if tile.tma:  # stages filled by one thread's bulk copies on mbarriers, none by cp.async
            assert "tma_bulk" in plan.components["loader"], plan.components
            assert I.count(sass, r"^UTMALDG\.2D") > 0 and I.count(sass, r"^UBLKCP") > 0
            assert I.count(sass, r"^SYNCS\.ARRIVE\.TRANS64") > 0 and I.count(sass, r"^LDGSTS") == 0
        else:
            assert I.count(sass, r"^LDGSTS") > 0
        loop = main_loop(sass)
        # one per k16 step of a stage and 64 rows of a warpgroup (one or two 16-row blocks per warp)
        assert I.count(loop, r"HGMMA") == 4 * tile.bk // 64 * (tile.bn // (16 * tile.wn))
        if tile.fold:  # group scales folded: the blocks of a group retired before their fold (a fold per two
            # blocks where a four-block stage holds whole groups of two, FOLD_SPAN), and the dequantizer without
            # the packed multiply by the scale
            cfg = dict(kernel.spec.config)
            span = 2 if (tile.bk == 256 and tile.wn == 4 and cfg["BITS"] >= 3 and cfg["GROUP"] % 128 == 0
                         and not cfg["OP8"]) else 1
            folds = tile.bk // 64 // span
            assert I.count(loop, r"WARPGROUP\.DEPBAR\.LE gsb0, 0x0") == folds, loop
            assert I.count(loop, r"^HMUL2") == 0 and I.count(loop, r"^FFMA") >= 4 * tile.bm // 8 * folds
        else:  # one group in flight while the next block is dequantized (ptxas did not serialize them)
            assert I.count(loop, r"WARPGROUP\.DEPBAR\.LE gsb0, 0x1") == tile.bk // 64, loop
    elif "m16n8k8" in mma or plan.components["loader"] == "ldg" and dev == "sm_75":
        assert I.count(sass, r"HMMA\.1688\.F32") > 0
    else:
        assert I.count(sass, r"HMMA\.16816\.F32" + (r"\.BF16" if plan.compute.a == "bf16" else "")) > 0
    assert I.count(sass, r"^LOP3\.LUT") >= 8  # the bit-trick / re-bias dequantizer
    if tile.tma:
        pass
    elif plan.components["loader"].startswith("cp_async"):
        assert I.count(sass, r"^LDGSTS") > 0
    else:
        assert I.count(sass, r"^LDGSTS") == 0
    if not tile.wgmma:
        assert I.count(sass, r"^LDSM") > 0  # activations through ldmatrix
    loop = main_loop(sass)
    assert I.count(loop, r"HG?MMA") > 0, "the main loop was not found"
    assert I.count(loop, r"^(LDL|STL)") == 0, "local-memory traffic in the main loop"
    unpack = I.count(loop, r"^F2FP\.F16\.E4M3\.UNPACK_B")
    if plan.components["dequantizer"] == "native_cvt":  # e4m3 codes into fp16 by the chip's cvt (sm_89 on):
        # one per pair of codes, after the PRMT that puts the pair's bytes side by side
        assert dev in ("sm_89", "sm_90", "sm_100", "sm_120") and plan.layer.weight.fmt == "e4m3"
        assert unpack > 0 and I.count(loop, r"^PRMT") >= unpack, loop
    else:
        assert unpack == 0
    usage = I.resource_usage(kernel.cubin)["humming_entry"]
    # no local arrays; at most a register or two spilled once outside the loop
    assert usage["LOCAL"] == 0 and usage["STACK"] <= 16, usage
    assert kernel.spec.target == plan.kernel(m).target


#: byte-operand kernels (mma.sync m16n8k32): int8 x int8 from 1/2/4/8-bit integer codes, fp8 x fp8
BYTE_VARIANTS = [
    ("w4a8-int8-g128", WeightScheme("int4", "group", 128), ActivationScheme("int8", "dynamic_token"), "IMMA"),
    ("w8a8-int8-channel", WeightScheme("int8", "channel", scale_fmt="fp32"), ActivationScheme("int8", "dynamic_token"),
     "IMMA"),
    ("awq4-zp-g64-a8", WeightScheme("uint4", "group", 64, zero_point="int"), ActivationScheme("int8", "static_tensor"),
     "IMMA"),
    ("w2a8-g64", WeightScheme("int2", "group", 64), ActivationScheme("int8", "dynamic_token"), "IMMA"),
    ("w8a8-fp8-channel", WeightScheme("e4m3", "channel", scale_fmt="fp32"), ActivationScheme("e4m3", "dynamic_token"),
     "QMMA"),
    ("w4a8-fp8-g128", WeightScheme("int4", "group", 128), ActivationScheme("e4m3", "dynamic_token"), "QMMA-INT"),
    ("awq4-zp-fp8", WeightScheme("uint4", "group", 128, zero_point="int"), ActivationScheme("e4m3", "dynamic_token"),
     "QMMA-INT"),
    ("w4a4-g128", WeightScheme("int4", "group", 128), ActivationScheme("int4", "dynamic_token"), "IMMA4"),
    ("w4a4-gptq-channel", WeightScheme("uint4", "channel", scale_fmt="fp32"), ActivationScheme("int4", "static_tensor"),
     "IMMA4"),
]
BYTE_DEVICES = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_120"]


@pytest.fixture(scope="module")
def compiled_bytes(tmp_path_factory):
    rt = Runtime(cache_dir=tmp_path_factory.mktemp("gemm-bytes"))
    plans, specs = {}, []
    for dev in BYTE_DEVICES:
        for name, scheme, act, _ in BYTE_VARIANTS:
            p = humming.plan(LayerSpec(4096, 4096, scheme, act, out_dtype="bf16"), dev)
            for m in (1, 16, 1024):
                plans[(dev, name, m)] = (p, p.kernel(m))
                specs.append(plans[(dev, name, m)][1])
    rt.warmup(list(dict.fromkeys(specs)), executor="thread")
    return {key: (p, rt.kernel(spec)) for key, (p, spec) in plans.items()}


@pytest.mark.parametrize("m", [1, 16, 1024])
@pytest.mark.parametrize("variant", [v[0] for v in BYTE_VARIANTS])
@pytest.mark.parametrize("dev", BYTE_DEVICES)
def test_byte_operand_machine_code(compiled_bytes, dev, variant, m):
    """int8 weights-and-activations plans issue IMMA.16832.S8.S8 (integer codes made into
    int8 operands by LOP3s, no 16-bit conversions), on sm_90 the warpgroup form IGMMA.64xNx32.S8.S8
    at every M (groups of whole 128-value blocks); int4 ones IMMA.16864.S4.S4 where int4 MMA is
    native (sm_80-sm_89; on sm_90 and sm_120 int8 operands); fp8 plans QMMA.16832 where fp8
    mma.sync is native (sm_89, sm_120), on sm_90 (where it is emulated) QGMMA.64xNx32 at every M
    and no conversion; int4 weights with fp8 activations the same fp8 MMAs, each pair of codes made
    an fp16 pair by the magic number and converted by one F2FP (DequantBytes::INT_FP8); no local
    memory."""
    plan, kernel = compiled_bytes[(dev, variant, m)]
    kind = next(v[3] for v in BYTE_VARIANTS if v[0] == variant)
    if kind == "QMMA-INT":
        if dev in ("sm_80", "sm_86"):  # no fp8 MMA: bf16, saying so
            assert plan.compute.a == "bf16" and "no e4m3 x e4m3 MMA" in plan.fallbacks[0].reason
            return
        assert plan.runnable and plan.compute.a == plan.compute.b == "e4m3" and not plan.fallbacks, plan.explain()
        loop = main_loop(I.disassemble(kernel.cubin))
        mma = r"^QGMMA\.64x\d+x32\.F32\.E4M3\.E4M3" if dev == "sm_90" else r"^QMMA\.16832\.F32\.E4M3\.E4M3"
        assert I.count(loop, mma) > 0, "no fp8 MMA in the main loop"
        # two conversions per four codes (fp16 pairs into fp8 pairs), no 16-bit MMA, no fp8 -> fp16 conversion
        cvt = I.count(loop, r"^F2FP\.SATFINITE\.E4M3\.F16")
        assert cvt > 0 and I.count(loop, r"^(HMMA|HGMMA|F2FP\.F16\.E4M3)") == 0
        assert I.count(loop, r"^(LDL|STL)") == 0, "local-memory traffic in the main loop"
        usage = I.resource_usage(kernel.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] <= 16, usage
        return
    if kind == "QMMA" and dev in ("sm_80", "sm_86"):  # no fp8 MMA: bf16, saying so
        assert plan.compute.a == "bf16" and "no e4m3 x e4m3 MMA" in plan.fallbacks[0].reason
        return
    if kind == "QMMA" and dev == "sm_90":  # fp8 mma.sync is emulated on Hopper: fp8 wgmma at every M instead
        assert plan.compute.a == "e4m3" and not plan.compute.emulated, plan.explain()
        assert plan.components["mma"].endswith(" + wgmma.m64nNk32.e4m3 (M >= 1)"), plan.components["mma"]
        loop = main_loop(I.disassemble(kernel.cubin))
        assert I.count(loop, r"^QGMMA\.64x\d+x32\.F32\.E4M3\.E4M3") > 0, "no fp8 warpgroup MMA in the main loop"
        assert I.count(loop, r"^(HMMA|HGMMA|QMMA|F2FP\.F16\.E4M3)") == 0, "an emulated fp8 MMA"
        usage = I.resource_usage(kernel.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] <= 16, usage
        return
    if kind == "IMMA4" and dev in ("sm_90", "sm_120"):  # no int4 tensor cores: int8 operands, exact
        assert plan.compute.a == "int8" and "compiler emulation" in plan.fallbacks[0].reason
        kind = "IMMA"
    assert plan.runnable and plan.compute.a == plan.compute.b != "fp16", plan.explain()
    assert plan.components["mma"].startswith("mma_sync.m16n8k64" if kind == "IMMA4" else "mma_sync.m16n8k32")
    sass = I.disassemble(kernel.cubin)
    loop = main_loop(sass)
    if kind == "IMMA4":  # the packed codes go to the MMA as they are: not even a LOP3 on them
        assert I.count(loop, r"^IMMA\.16864\.S4\.S4") > 0, "no int4 MMA in the main loop"
        assert I.count(loop, r"^(HMMA|HFMA2|HMUL2|HADD2\s|IMMA\.16832)") == 0
    elif kind == "IMMA" and dev == "sm_90" and "wgmma" in plan.components["mma"]:
        # the warpgroup tiles at every M (GemmMmaSync::run_wg; not for groups of fewer than 128 values)
        assert plan.components["mma"].endswith(" + wgmma.m64nNk32.s8 (M >= 1)"), plan.components["mma"]
        assert I.count(loop, r"^IGMMA\.64x\d+x32\.S8\.S8") > 0, "no int8 warpgroup MMA in the main loop"
        assert I.count(loop, r"^(HMMA|HGMMA|HFMA2|HMUL2|HADD2\s|IMMA)") == 0
    elif kind == "IMMA":
        assert I.count(loop, r"^IMMA\.16832\.S8\.S8") > 0, "no int8 MMA in the main loop"
        # nothing goes through 16-bit floats (HADD2.F32: the fp16 group scales into fp32)
        assert I.count(loop, r"^(HMMA|HFMA2|HMUL2|HADD2\s)") == 0
    else:
        assert I.count(loop, r"^QMMA\.16832\.F32\.E4M3\.E4M3") > 0, "no fp8 MMA in the main loop"
    assert I.count(loop, r"^(LDL|STL)") == 0, "local-memory traffic in the main loop"
    usage = I.resource_usage(kernel.cubin)["humming_entry"]
    assert usage["LOCAL"] == 0 and usage["STACK"] <= 16, usage


def test_int4_split_into_e4m3_operands_machine_code(tmp_path, monkeypatch):
    """HUMMING_INT_FP8_SPLIT=1 on sm_90 (int4 g128 and per channel, e4m3 per token): the tiles of at most
    FP8_SPLIT_MAX_BM tokens (INT_FP8_MODE 2) hold twice the e4m3 warpgroup MMAs of the default's same tile and
    no conversion (F2FP) nor packed fp16 arithmetic on the codes, far fewer instructions in the loop; the larger
    tiles (mode 1) convert by F2FP after a PRMT per word; no local memory anywhere."""
    from humming.planner import clear_cache
    from humming_nvidia.gemm_mma_sync import FP8_SPLIT_MAX_BM

    act = ActivationScheme("e4m3", "dynamic_token")
    pairs = []
    for scheme in (WeightScheme("int4", "group", 128), WeightScheme("int4", "channel")):
        layer = LayerSpec(8192, 8192, scheme, act, out_dtype="bf16")
        for env in ("0", "1"):
            monkeypatch.setenv("HUMMING_INT_FP8_SPLIT", env)
            clear_cache()
            p = humming.plan(layer, "H200")
            assert p.components["dequantizer"] == ("int_bittrick_split" if env == "1" else "int_bittrick_cvt")
            pairs.append([(scheme.describe(), env, m, p.kernel(m)) for m in (1, 16, 64, 1024)])
    clear_cache()
    rt = Runtime(cache_dir=tmp_path)
    rt.warmup([spec for row in pairs for *_, spec in row], executor="thread")
    for base, split in zip(pairs[0::2], pairs[1::2]):
        for (what, _, m, s0), (_, _, _, s1) in zip(base, split):
            cfg0, cfg1 = dict(s0.config), dict(s1.config)
            assert {k: v for k, v in cfg1.items() if k != "INT_FP8_MODE"} == cfg0, (what, m)  # (the same tiles)
            loops = [main_loop(I.disassemble(rt.kernel(s).cubin)) for s in (s0, s1)]
            q0, q1 = (I.count(lp, r"^QGMMA\.64x\d+x32\.F32\.E4M3\.E4M3") for lp in loops)
            if cfg1["INT_FP8_MODE"] == 2:
                assert cfg1["BM"] <= FP8_SPLIT_MAX_BM and q0 > 0 and q1 == 2 * q0, (what, m, q0, q1)
                assert I.count(loops[1], r"^F2FP") == 0 and I.count(loops[1], r"^HFMA2|^HADD2\s") == 0, (what, m)
                n0, n1 = (len(lp.strip().splitlines()) for lp in loops)
                assert n1 < 0.8 * n0, (what, m, n0, n1)  # (instructions in the loop)
            else:
                assert cfg1["BM"] > FP8_SPLIT_MAX_BM and q1 == q0 > 0, (what, m)
                assert I.count(loops[1], r"^F2FP\.SATFINITE\.E4M3") == I.count(loops[0], r"^F2FP\.SATFINITE\.E4M3")
                assert I.count(loops[1], r"^PRMT") > I.count(loops[0], r"^PRMT"), (what, m)
            for s in (s0, s1):
                usage = I.resource_usage(rt.kernel(s).cubin)["humming_entry"]
                assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (what, m, usage)


def test_targets_come_from_the_capability_files(compiled):
    targets = {dev: compiled[(dev, "int4-g128", 1)][1].spec.target for dev in DEVICES}
    assert targets["sm_75"] == "sm_75" and targets["sm_90"] == "sm_90a" and targets["sm_100"] == "sm_100a"
    for dev, target in targets.items():
        assert re.fullmatch(r"sm_\d+a?", target)


@pytest.mark.parametrize("dev", DEVICES)
def test_every_planned_kernel_fits_the_targets_shared_memory(dev):
    """The opt-in size a kernel asks for at load time never exceeds what its target
    grants (a larger request fails cuFuncSetAttribute): decode and prefill tiles."""
    from humming.capabilities import load

    caps = load(dev)
    limit = caps.limit("smem_per_block_optin") or caps.limit("smem_per_block")
    for name, scheme, act in VARIANTS:
        if isinstance(act, ActivationScheme):
            act_s, out = act, "fp16"
        else:
            act_s = ActivationScheme("fp16" if dev == "sm_75" else act)
            out = act_s.fmt
        for k in (4096, 14336):
            p = humming.plan(LayerSpec(4096, k, scheme, act_s, out_dtype=out), dev)
            for m in (1, 16, 64, 1024):
                spec = p.kernel(m)
                assert spec.smem_bytes + 16 <= limit, (name, k, m, spec.smem_bytes, limit)


def test_integer_dequantizer_uses_the_magic_number_in_place():
    """int4 -> fp16: one LOP3 (and-or with 0x6400) per pair. The decode (stream)
    kernel gives those raw codes to the MMA -- no packed subtract or fma in its K
    loop; a second MMA per k16 tile on a constant operand takes MAGIC + offset out
    in fp32 -- while the prefill kernel subtracts / fmas per pair."""
    rt = Runtime(disk=False)
    p = humming.plan(LayerSpec(4096, 4096, WeightScheme("int4", "group", 128), ActivationScheme("fp16")), "sm_80")
    loop = main_loop(I.disassemble(rt.kernel(p.kernel(1)).cubin))
    assert re.search(r"LOP3\.LUT R\d+, R\d+, 0xf000f, R\d+, 0xea", loop)
    assert I.count(loop, r"^HADD2\s") == 0 and I.count(loop, r"^HFMA2\s") == 0
    assert I.count(loop, r"^HMMA") % 8 == 0  # 4 k16 tiles x (codes + correction) per 64-column block
    sass = I.disassemble(rt.kernel(p.kernel(1024)).cubin)
    assert re.search(r"LOP3\.LUT R\d+, R\d+, 0xf000f, R\d+, 0xea", sass)
    assert I.count(sass, r"^HADD2") > 0 and I.count(sass, r"^HFMA2") > 0


def test_prefill_split_counts_for_the_planners_tiles():
    """The K split of every prefill range the H200 plan gives the issue-6 layers: the launcher's
    CTAs per SM (two for four-warp warpgroup tiles of at most 32 tokens), no empty slice, at
    most the range's cap. (Launcher.split_for runs at the first launch of each M: a GPU-only
    path otherwise.)"""
    from humming_nvidia import gemm_mma_sync as G

    assert G.Launcher.ctas_for(G.WG_16_NARROW) == G.Launcher.ctas_for(G.WG_32_NARROW) == 2
    assert G.Launcher.ctas_for(G.WG_64_TMA) == 2
    assert G.Launcher.ctas_for(G.WG_16) == G.Launcher.ctas_for(G.WG_64_NARROW) == G.Launcher.ctas_for(G.TILE_16) == 1
    L = G.Launcher.__new__(G.Launcher)
    L.sm_count, L.ctas_per_sm, L.max_split, L.smem_per_sm = 132, None, 16, 228 * 1024
    rec = G.recipe_for(WeightScheme("int4", "group", 128), bf16=False, out_bf16=False, caps_cp_async=True,
                       k8mma=False, target="sm_90a")
    L.packed = types.SimpleNamespace(recipe=rec)
    # no more CTAs than fit at once (three 66 KB CTAs of WG_64_TMA per SM): 14336x4096 at 64 tokens
    # stays unsplit (224 tiles; two slices would be 448 CTAs for 396 places), 8192x8192 splits 3 ways
    assert L.split_for(G.WG_64_TMA, 1, 224, 32, 16) == 1 and L.split_for(G.WG_64_TMA, 1, 128, 64, 16) == 3
    for n, k in ((4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192)):
        p = humming.plan(LayerSpec(n, k, WeightScheme("int4", "group", 128)), "h200")
        for r in p.tuning:
            t = G.tile_from_config(r.config)
            if t.stream:
                continue
            for m in {r.lo, r.hi or 4 * r.lo}:
                n_tiles, m_tiles, ks = -(-n // t.bn), -(-m // t.bm), -(-k // t.bk)
                s = L.split_for(t, m_tiles, n_tiles, ks, r.config.get("split_k", 1))
                assert 1 <= s <= max(1, r.config.get("split_k", 1)) and (s - 1) * -(-ks // s) < ks, (n, k, m, t, s)
                if t.wgmma and m <= 64 and n * m_tiles <= 8192:  # few tiles: K split for 1-2 CTAs per SM
                    assert m_tiles * n_tiles * s >= 128 * G.Launcher.ctas_for(t) // 2, (n, k, m, t, s)
    L.ctas_per_sm = 1  # an explicit count overrides
    assert L.split_for(G.WG_16_NARROW, 1, 128, 64, 16) == 2 and L.split_for(G.WG_16_NARROW, 1, 256, 64, 16) == 1


def test_groups_along_k_are_planned_for_the_launchers_one_or_two_slices(monkeypatch):
    """The planner gives the 16-token tile groups along K (wg16_groups_along_k) where the launcher runs its tiles in
    one K slice filling 2/3 of the SMs or more, or in two slices (summed in a cluster) that fill as much; three or
    four slices lost (docs/perf-notes.md, seventy-third session). The plan assumes that; the launcher decides it
    (Launcher.split_for, at the first launch: a GPU-only path otherwise). Here both on the H200's plans of layers
    of 32-132 tiles of 64 rows, for the formats that take the groups by default: one CTA per SM, and one or two
    slices filling 2/3 of the SMs wherever the groups are planned (both kinds among these layers)."""
    from humming.planner import clear_cache
    from humming_nvidia import gemm_mma_sync as G
    from humming_nvidia.mma_sync_kernel import smem_bytes

    monkeypatch.delenv("HUMMING_WG16_KG", raising=False)
    clear_cache()
    L = G.Launcher.__new__(G.Launcher)
    L.sm_count, L.ctas_per_sm, L.max_split, L.smem_per_sm = 132, None, 16, 228 * 1024
    seen = set()
    for scheme, act in ((WeightScheme("int4", "group", 128), ActivationScheme("fp16")),
                        (WeightScheme("uint4", "group", 128, zero_point="int"), ActivationScheme("fp16")),
                        (WeightScheme("int4", "group", 128), ActivationScheme("bf16"))):
        for n in (2048, 2560, 2816, 2880, 3072, 3584, 4096, 4224, 5120, 5632, 7168, 8192, 8448):
            for k in (4096, 8192, 14336):
                p = humming.plan(LayerSpec(n, k, scheme, act, out_dtype=act.fmt), "H200")
                r = p.tuning_for(16)
                t = G.tile_from_config(r.config)
                if t.bm != 16 or t.kg == 1:
                    continue
                L.packed = types.SimpleNamespace(recipe=G.recipe_for(
                    scheme, bf16=act.fmt == "bf16", out_bf16=act.fmt == "bf16", caps_cp_async=True, k8mma=False,
                    target="sm_90a"))
                assert 2 * (smem_bytes(L.packed.recipe, t) + 1024) > L.smem_per_sm, (n, k, t)  # (one CTA per SM)
                tiles = -(-n // t.bn)
                split = L.split_for(t, 1, tiles, -(-k // t.bk), r.config.get("split_k", 16))
                assert split in (1, 2) and 3 * tiles * split >= 2 * 132, (n, k, tiles, split)
                seen.add(split)
    assert seen == {1, 2}
    clear_cache()


def test_narrow_layers_split_k_above_64_tokens_within_one_wave():
    """Dense layers of 16-bit operands whose grid leaves half the SMs idle at a range's first M split K above 64
    tokens too (IDLE_SPLIT_16: split_k = SMs // tiles at the range's first M); the launcher splits a warpgroup tile of
    one CTA per SM into the SMs over the tiles rounded down, never past one wave; byte operands, MoE layers and
    layers whose grid fills keep their ranges."""
    from humming_nvidia import gemm_mma_sync as G

    int4 = WeightScheme("int4", "group", 128)

    def big(n, k, scheme=int4, act=ActivationScheme("fp16"), e=0):
        p = humming.plan(LayerSpec(n, k, scheme, act, num_experts=e), "h100")
        return {r.lo: (G.tile_from_config(r.config), r.config.get("split_k")) for r in p.tuning if r.lo > 64}

    r = big(1536, 7168)  # (deepseek-v3's q_a: 12 tiles of 128 rows, 3 M tiles at the ranges' first M)
    assert r[129] == (G.WG_64, 3) and r[257] == (G.WG_64, 2) and r[513][0].bm == 256 and r[513][1] == 3, r
    assert big(2048, 4096)[513][1] == 2 and big(1024, 4096)[513][1] == 5
    assert all(s is None for lo, (t, s) in big(4096, 4096).items() if lo > 256)  # (a grid that fills)
    assert all(s is None for lo, (t, s) in big(1536, 7168, e=8).items() if lo > 128)  # (MoE)
    w4a8 = big(1536, 7168, act=ActivationScheme("int8", "dynamic_token"))
    assert all(s is None for lo, (t, s) in w4a8.items() if lo > 256), w4a8
    old, G.IDLE_SPLIT_16 = G.IDLE_SPLIT_16, False
    try:  # (another K than above: plans are cached)
        assert big(1536, 7040)[513][1] is None
    finally:
        G.IDLE_SPLIT_16 = old
    assert big(1536, 7040 - 128)[513][1] == 3
    L = G.Launcher.__new__(G.Launcher)
    L.sm_count, L.ctas_per_sm, L.max_split, L.smem_per_sm = 132, None, 16, 228 * 1024
    L.packed = types.SimpleNamespace(recipe=G.recipe_for(int4, bf16=False, out_bf16=False, caps_cp_async=True,
                                                          k8mma=False, target="sm_90a"))
    t256 = r[513][0]
    assert 228 * 1024 // (G.smem_bytes(L.packed.recipe, t256) + 1024) == 1  # (one CTA per SM)
    # 48 tiles (M=1024): two slices, not three (144 CTAs where 132 fit); 36 (M=513): three; 100: none
    assert [L.split_for(t256, mt, 12, 56, 3) for mt in (4, 3)] == [2, 3]
    assert L.split_for(t256, 1, 100, 56, 3) == 1
    # a tile of two CTAs per SM keeps the rounding up: 48 tiles of WG_64 in three slices (144 CTAs, 264 fit)
    assert L.split_for(G.WG_64, 4, 12, 56, 3) == 3


def test_large_m_steps_take_the_tile_of_the_fewest_waves():
    """Above 256 tokens a dense 16-bit layer's 256-token ranges are cut into 32-token steps, each taking the tile of
    128-256 tokens whose waves cost least (wave_steps): the plans for the H100 never pick the slower tile of a pair
    measured more than 5 % apart -- WG_128 against WG_256 (the sixty-second session's fit, s62m, and the sixty-third's
    checks, s63a / s63b), and the tiles of 160-224 tokens against WG_256 (s64b, s64c) -- and keep the 256-token tile
    for MoE layers, zero-point codes, 8-bit codes, grids narrower than half the SMs (they split K) and with the switch
    off."""
    from humming_nvidia import gemm_mma_sync as G

    int4 = WeightScheme("int4", "group", 128)

    def tile(n, k, m, scheme=int4, e=0, act=ActivationScheme("fp16")):
        p = humming.plan(LayerSpec(n, k, scheme, act, num_experts=e), "h100")
        return G.tile_from_config(p.tuning_for(m).config)

    # (N, K): {M: (WG_128's us, WG_256's us)}, H100, int4 g128 through the bench
    measured = {(5120, 2048): {300: (17.0, 26.6), 450: (32.0, 27.0), 1000: (50.8, 55.0), 1024: (49.7, 55.9),
                               1600: (69.1, 80.7), 2000: (85.1, 85.7), 2048: (84.1, 87.3), 4096: (170, 152)},
                (6144, 4096): {300: (56.5, 47.5), 450: (59.5, 47.9), 600: (59.1, 92.9), 1000: (91.3, 100),
                               1024: (96.1, 106), 1300: (133, 150), 1600: (162, 156), 2048: (187, 160),
                               4096: (360, 331)},
                (5120, 5120): {1024: (112, 126), 2048: (187, 192), 4096: (384, 327)},
                (8192, 8192): {600: (184, 196), 1024: (258, 217), 1100: (310, 306), 2048: (489, 435), 4096: (917, 831)},
                (7168, 16384): {1024: (466, 409), 2048: (835, 803)},
                (14336, 4096): {300: (91.3, 104), 600: (157, 158), 1100: (261, 266), 1300: (322, 315)},
                (28672, 8192): {300: (368, 386), 600: (533, 581)},
                (3072, 4096): {600: (29.3, 46.5), 1300: (63.7, 94.2), 2000: (90.9, 101)},
                (4096, 4096): {1100: (94.7, 100), 1300: (93.0, 100)},
                (8192, 4096): {300: (57.4, 51.0), 450: (59.7, 52.4)}}
    apart = 0
    for (n, k), by_m in measured.items():
        for m, (us128, us256) in by_m.items():
            if max(us128, us256) > 1.05 * min(us128, us256):
                apart += 1
                assert tile(n, k, m) != (G.WG_256 if us128 < us256 else G.WG_128), (n, k, m)
    assert apart == 30
    # the tiles of 160-224 tokens where WG_256's M tiles are part empty, at WG_256's waves ((N, K): {M: (the fitted
    # tile's us, WG_256's us)}, s64b / s64c): they are picked, and so is the tile of the tokens M needs
    fitted = {(6144, 4096): {288: (33.0, 46.8), 320: (33.5, 46.9), 352: (40.4, 47.0), 416: (44.0, 47.3),
                             448: (44.4, 48.0)},
              (8192, 8192): {288: (72.0, 97.7), 320: (70.3, 98.5), 352: (84.7, 99.0), 416: (94.6, 100.5),
                             448: (94.2, 100.4)},
              (8192, 4096): {288: (36.3, 52.0), 320: (37.0, 52.1), 352: (44.8, 51.2), 416: (48.6, 52.7)},
              (14336, 4096): {416: (97.1, 103), 448: (99.0, 107)}}
    for (n, k), by_m in fitted.items():
        for m, (us_fit, us256) in by_m.items():
            assert us_fit < us256 / 1.05 and tile(n, k, m).bm == -(-m // 64) * 32, (n, k, m)
    # within a 32-token step the tile holds; qwen3's qkv (40 tiles of 128 rows) by its waves and its last M tile (its
    # short K: the 256-token steps on WG_256_WIDE, 128 tokens x 256 rows, wide_256)
    w = G.WG_256_WIDE.bm
    assert [tile(5120, 2048, m).bm for m in (257, 384, 385, 480, 481, 577, 673, 768, 769, 960, 1537, 1664)] == [
        128, 128, 160, 160, 192, 224, w, w, 160, 160, 128, 128]
    assert tile(5120, 2048, 673) == G.WG_256_WIDE == tile(5120, 2048, 100000)  # (past WAVE_MAX_WAVES: one range)
    assert tile(5120, 2048 + 256, 100000) == G.WG_256  # (a longer K)
    qkv = humming.plan(LayerSpec(5120, 2048, int4, ActivationScheme("fp16")), "h100")
    assert "128 at M 257-384; 160 at M 385-480, 769-960" in qkv.components["scheduler"]
    assert tile(5120, 2048, 1600) == G.WG_256_WIDE  # (two waves of it against WG_128's four: s76w 69.3 -> 54.7 us)
    moe = humming.plan(LayerSpec(5120, 2048, int4, ActivationScheme("fp16"), num_experts=8), "h100")
    assert max(r.lo for r in moe.tuning) <= 513, moe.tuning  # (MoE: the default ranges, not cut)
    assert "tile_by_waves" not in moe.components["scheduler"]
    zp = WeightScheme("uint4", "group", 128, zero_point="int")
    assert {tile(5120, 2048, m, zp) for m in (300, 700, 1024)} == {G.WG_128}  # (heavy dequantizers: 128 throughout)
    assert tile(2048, 4096, 1024).bm == 256  # (16 tiles of 128 rows: K split instead, IDLE_SPLIT_16)
    e4m3 = humming.plan(LayerSpec(5120, 2048, WeightScheme("e4m3", "channel", scale_fmt="fp32"),
                                  ActivationScheme("fp16")), "h100")
    assert "tile_by_waves" not in e4m3.components["scheduler"]  # (8-bit codes: fitted to 128 tokens throughout)
    old, G.WAVE_TILES = G.WAVE_TILES, False
    try:  # (another K than above: plans are cached)
        assert tile(5120, 2048 + 128, 1024) == G.WG_256
    finally:
        G.WAVE_TILES = old
    assert tile(5120, 2048 + 256, 1024).bm == 192


def _plan_env(monkeypatch, name: str, value: str | None) -> None:
    """Set (None: unset) an environment switch the planner reads when it makes a plan, and drop the cached plans."""
    from humming.planner import clear_cache

    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)
    clear_cache()

def test_short_k_layers_take_the_sixteen_warp_tile(tmp_path, monkeypatch):
    """Where the planner takes the 256-token warpgroup tile (WG_256), dense layers of more than 4096 rows over a K of at
    most WIDE_256_MAX_K take 128 tokens x 256 rows on sixteen warps (WG_256_WIDE, wide_256: deepseek-v3's kv_b and q_b,
    qwen3's qkv), for 16-bit operands and codes of at most 4 bits; longer K, at most 4096 rows, 8-bit codes,
    zero-point codes (WG_128 there), integer codes in groups of 32 (WG_256: wide_256_spills), and MoE layers keep
    theirs. HUMMING_WG256_WIDE: 0 never, 3 or 4 (its stages)
    wherever WG_256 is taken, anything else refused by name. Its kernels compile for sm_90a to four warpgroups of
    m64n128k16 wgmmas within 128 registers (512 threads), without a stack or local memory, at three stages."""
    from humming_nvidia import gemm_mma_sync as G

    int4 = WeightScheme("int4", "group", 128)

    def tile(n, k, m, scheme=int4, act="fp16", e=0):
        p = humming.plan(LayerSpec(n, k, scheme, ActivationScheme(act), out_dtype=act, num_experts=e), "h200")
        return G.tile_from_config(p.tuning_for(m).config)

    _plan_env(monkeypatch, "HUMMING_WG256_WIDE", None)
    try:
        wide = G.WG_256_WIDE
        assert (wide.bm, wide.bn, wide.threads, wide.stages) == (128, 256, 512, 3)
        for n, k in ((32768, 512), (24576, 1536), (5120, 2048)):  # (5120x2048 at 1024 tokens: 192, wave_steps)
            assert tile(n, k, 4096) == wide == tile(n, k, 4096, act="bf16") == tile(n, k, 100000), (n, k)
        assert tile(32768, 512, 1024) == wide == tile(24576, 1536, 1024)
        assert tile(32768, 512, 200) == wide  # (129-256 tokens: WG_256 on more than 8192 rows)
        for scheme in (WeightScheme("int3", "group", 128), WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"),
                       WeightScheme("int4", "channel", scale_fmt="fp32")):
            assert tile(32768, 512, 1024, scheme) == wide, scheme.describe()
        assert tile(5120, 2048 + 256, 4096) == G.WG_256 == tile(8192, 8192, 4096) == tile(36864, 7168, 4096)
        assert tile(4096, 2048, 1024).bm == 256  # (at most 4096 rows)
        assert tile(32768, 512, 1024, WeightScheme("uint4", "group", 128, zero_point="int")) == G.WG_128
        assert tile(32768, 512, 1024, WeightScheme("e4m3", "channel", scale_fmt="fp32")) != wide
        assert tile(32768, 512, 1024, e=8) != wide
        # integer codes in groups of 32 keep WG_256: 8 bytes of stack at the tile's 128 registers (wide_256_spills)
        for bits, act in ((4, "bf16"), (3, "fp16"), (2, "bf16")):
            assert tile(32768, 512, 1024, WeightScheme(f"int{bits}", "group", 32), act) == G.WG_256, (bits, act)
        for g in (16, 64):
            assert tile(32768, 512, 1024, WeightScheme("int4", "group", g), "bf16") == wide, g
        _plan_env(monkeypatch, "HUMMING_WG256_WIDE", "0")
        assert tile(32768, 512, 1024) == G.WG_256
        _plan_env(monkeypatch, "HUMMING_WG256_WIDE", "4")
        assert tile(8192, 8192, 4096) == dataclasses.replace(wide, stages=4)
        _plan_env(monkeypatch, "HUMMING_WG256_WIDE", "2")
        with pytest.raises(ValueError, match="HUMMING_WG256_WIDE.*'2'"):
            tile(8192, 8192, 4096)
    finally:
        _plan_env(monkeypatch, "HUMMING_WG256_WIDE", None)
    rt = Runtime(cache_dir=str(tmp_path))
    for scheme, act in ((int4, "fp16"), (WeightScheme("int3", "group", 128), "bf16"),
                        (WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), "fp16"),
                        (WeightScheme("int4", "group", 16), "bf16")):
        p = humming.plan(LayerSpec(32768, 512, scheme, ActivationScheme(act), out_dtype=act), "h200")
        assert G.tile_from_config(p.tuning_for(1024).config) == G.WG_256_WIDE
        kern = rt.kernel(p.kernel(1024))
        sass = I.disassemble(kern.cubin)
        assert set(re.findall(r"HGMMA\.(\d+x\d+x\d+)", sass)) == {"64x128x16"}, (scheme.describe(), act)
        u = I.resource_usage(kern.cubin)["humming_entry"]
        assert u["REG"] <= 128 and not u["STACK"] and not u["LOCAL"], (scheme.describe(), act, u)


def test_wave_steps_cost_the_sixteen_warp_tile(monkeypatch):
    """Where wide_256 gives a layer WG_256_WIDE, wave_steps costs its 256-token steps as that tile -- 128-token M
    tiles, 256-row N tiles, WAVE_WIDE_COST a CTA (WAVE_WIDE_SHORT_COST over a K of 512) -- so its steps above 256
    tokens take it where its waves cost less than the fitted tiles' (s76w, H100): on kv_b (32768x512) at 300-850
    tokens (e.g. 600: 5 waves against the 224-token tile's 6, 64.1 -> 53.4 us), on 12288x1024 at 550 (two waves
    against the 160-token tile's three, 34.2 -> 30.5), not at the same waves (24576x1536 at 400 / 850: 3 / 6 waves
    either way, 65.5 / 130 on the 224-token tile against 68.7 / 138). A long K keeps its steps; HUMMING_WAVE_WIDE=0
    costs them as WG_256's (the seventy-fifth session's steps), and other values are refused."""
    from humming_nvidia import gemm_mma_sync as G

    int4 = WeightScheme("int4", "group", 128)

    def tile(n, k, m):
        p = humming.plan(LayerSpec(n, k, int4, ActivationScheme("fp16")), "h200")
        return G.tile_from_config(p.tuning_for(m).config)

    _plan_env(monkeypatch, "HUMMING_WG256_WIDE", None)
    try:
        for raw in (None, "1"):
            _plan_env(monkeypatch, "HUMMING_WAVE_WIDE", raw)
            assert {tile(32768, 512, m) for m in (300, 400, 550, 600, 650, 850)} == {G.WG_256_WIDE}
            assert tile(12288, 1024, 550) == G.WG_256_WIDE == tile(12288, 1024, 1300) == tile(24576, 1536, 1100)
            assert tile(24576, 1536, 400).bm == 224 == tile(24576, 1536, 850).bm == tile(5120, 2048, 1300).bm
            assert tile(5120, 2048, 300) == G.WG_128 and tile(5120, 2048, 1600) == G.WG_256_WIDE
            assert tile(8192, 8192, 300).bm == 160  # (a long K: no WG_256_WIDE, the fitted tile)
        plan = humming.plan(LayerSpec(32768, 512, int4, ActivationScheme("fp16")), "h200")
        assert "tile_by_waves" not in plan.components["scheduler"]  # (no step of fewer than 256 tokens left)
        _plan_env(monkeypatch, "HUMMING_WAVE_WIDE", "0")
        assert [tile(32768, 512, m).bm for m in (300, 350, 400, 600, 800)] == [160, 192, 224, 224, 160]
        _plan_env(monkeypatch, "HUMMING_WAVE_WIDE", "yes")
        with pytest.raises(ValueError, match="HUMMING_WAVE_WIDE.*'yes'"):
            tile(32768, 512, 300)
    finally:
        _plan_env(monkeypatch, "HUMMING_WAVE_WIDE", None)


def test_token_fitted_warpgroup_tiles_machine_code(tmp_path):
    """The warpgroup tiles of 160, 192 and 224 tokens that wave_steps picks (WG_FITTED) compile for sm_90a to one
    m64nBMk16 wgmma per k16 step of their width, without a stack or local memory, in fp16 and bf16; tiles of other
    widths are refused before compiling."""
    from humming_nvidia.mma_sync_kernel import Tile

    with pytest.raises(ValueError, match="BM of 8, 16, 32, 64, 128, 160, 192, 224 or 256"):
        Tile(96, 128, 128, 1, 8, 1, 3, wgmma=1).check()
    rt = Runtime(cache_dir=str(tmp_path))
    for scheme in (WeightScheme("int4", "group", 128), WeightScheme("e2m1", "group", 32, scale_fmt="e8m0")):
        for act in ("fp16", "bf16"):
            p = humming.plan(LayerSpec(6144, 4096, scheme, ActivationScheme(act), out_dtype=act), "h100")
            for m, bm in ((300, 160), (350, 192), (400, 224)):
                assert p.tuning_for(m).config["bm"] == bm, (m, p.tuning)
                kern = rt.kernel(p.kernel(m))
                sass = I.disassemble(kern.cubin)
                assert set(re.findall(r"HGMMA\.(\d+x\d+x\d+)", sass)) == {f"64x{bm}x16"}, (act, m)
                u = I.resource_usage(kern.cubin)["humming_entry"]
                assert not u["STACK"] and not u["LOCAL"], (scheme.describe(), act, m, u)


def test_ring_launches_split_k_within_one_wave():
    """A register ring's launch splits K for at most ``occupancy`` CTAs per SM in all, as many slices as fit
    (rounded down, Launcher.stream_split): a rounding up past one wave left a few CTAs of a second wave that could
    not draw the bandwidth the first did (H100, M = 1: 3072x8192, 96 tiles of 32 rows split three ways for 264
    places, 10.7 us; two ways 6.5)."""
    import types

    from humming_nvidia import gemm_mma_sync as G
    from humming_nvidia.mma_sync_kernel import resident_ctas

    L = G.Launcher.__new__(G.Launcher)
    L.sm_count, L.stream_ctas_per_sm, L.smem_per_sm = 132, 1, 233472
    rec = G.Recipe(bits=4, wfloat=False, offset=8)
    L.packed = types.SimpleNamespace(recipe=rec)
    for t0 in (G.DECODE_INT4_LONG_K, G.DECODE_INT4_SHORT_K, G.replace(G.DECODE_INT4_SHORT_K, stages=8),
               G.DECODE_INT4_WIDE):
        t = G.fit_tile(t0, rec, 232448, 8192)
        places = resident_ctas(rec, t, None) * L.sm_count
        assert places == 264, t
        ks = 8192 // t.bk
        for n_tiles in range(1, 600):
            s = -(-ks // L.stream_split(t, 1, 1, n_tiles, ks, 16))
            assert n_tiles * s <= max(places, n_tiles), (t, n_tiles, s)
            # (a slice more would not fit, but where slices of whole fold chunks or the cap of 16 stop it)
            assert n_tiles * (s + 1) > places or s == 16 or -(-ks // (s + 1)) == -(-ks // s), (t, n_tiles, s)
        split = {n: -(-ks // L.stream_split(t, 1, 1, n, ks, 16)) for n in (96, 160, 256)}
        assert split == {96: 2, 160: 1, 256: 1}, (t, split)


def test_stream_split_keeps_every_slice_within_the_activation_cap():
    """A stream launch's K slices: none empty, and each slice's activations within
    STREAM_SMEM_CAP (rounding the slice count must not push a slice over it; seen
    as CUDA_ERROR_INVALID_VALUE for BM=16, WK=8 at K=8192). Ring tiles: slices of
    whole fold chunks, within the kernel's shared memory, and ``occupancy`` CTAs of
    them fit an SM (H200: 228 KB); register rings on cp.async targets take up to
    RING_XTURN_CAP, so that up to 6 tokens over K <= 8192 split K no further than one token; with a
    window of activations (Tile.xwin) no batch of up to 16 tokens over any K splits it further, and the
    shared memory does not grow with the slice."""
    import types

    from humming_nvidia import gemm_mma_sync as G

    T = G.Tile
    L = G.Launcher.__new__(G.Launcher)
    L.sm_count, L.stream_ctas_per_sm, L.smem_per_sm = 132, 1, 233472
    recipes = [G.Recipe(bits=4, wfloat=False, offset=8), G.Recipe(bits=4, wfloat=False, gscale=False, offset=8),
               G.Recipe(bits=4, wfloat=False, group=32, offset=8), G.Recipe(bits=8, wfloat=False, group=512),
               G.Recipe(bits=3, wfloat=False, group=48, zp=1)]
    for t0 in (T(16, 32, 512, 1, 2, 8, 4, stream=1), T(8, 32, 256, 1, 2, 4, 4, stream=1),
               T(8, 16, 512, 1, 1, 8, 8, stream=3, occupancy=4), T(16, 32, 256, 1, 2, 4, 8, stream=3, occupancy=3),
               T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2), G.DECODE_INT4_LONG_K_WINDOW,
               T(16, 64, 128, 1, 4, 2, 4, stream=4, occupancy=2, xwin=3)):
        for rec in recipes if t0.stream >= 3 else recipes[:1]:
            t = G.fit_tile(t0, rec, 232448, 8192)
            L.packed = types.SimpleNamespace(recipe=rec)
            fp = G.ring_fold_period(rec) if t.stream >= 3 else 1
            for kp in range(128, 65537, 384):
                ks = -(-kp // t.bk)
                for m in (1, 3, 6, 8, 16):
                    for n_tiles in (8, 256, 1024):
                        for cap in (1, 16):
                            per = L.stream_split(t, m, 1, n_tiles, ks, cap)
                            s = -(-ks // per)
                            assert (s - 1) * per < ks, (t, kp, m, s)
                            assert (per * t.wk) % fp == 0, (t, rec, kp, m, per)
                            smem = G.stream_smem(t, m, per * t.wk, rec)
                            assert smem <= G.smem_bytes(rec, t), (t, kp, m, s)
                            if G.x_turns(rec, t) and ((m <= 6 and kp <= 8192 and n_tiles >= 256) or t.xwin):
                                assert s == -(-ks // L.stream_split(t, 1, 1, n_tiles, ks, cap)), (t, rec, kp, m, s)
                            if t.xwin:
                                assert smem == G.stream_smem(t, m, t.wk, rec), (t, kp, m)
                            if t.stream >= 3:  # (register rings: their activations within the share too)
                                assert (smem + 1024 + 16) * t.occupancy <= L.smem_per_sm, (t, rec, kp, m, smem)


def test_wgmma_wrappers_match_their_generator():
    """gemm/wgmma.cuh's per-N wrappers are what scripts/gen_wgmma.py writes (one asm per N and
    operand kind: fp16, bf16, int8, e4m3, e5m2)."""
    from _scripts import load_script

    gen = load_script("gen_wgmma")
    text = gen.HEADER.read_text()
    assert gen.render(text) == text, "run python scripts/gen_wgmma.py"
    assert text.count("wgmma.mma_async.sync.aligned.m64n") == len(gen.KINDS) * len(gen.NS)
    from humming_nvidia.mma_sync_kernel import WGMMA_BM

    assert tuple(gen.NS) == WGMMA_BM  # (every tile width the planner may pick has its wrappers)
    assert "m64n8k32.s32.s8.s8" in text and "m64n256k32.f32.e5m2.e5m2" in text and "m64n8k16.f32.bf16" in text


def test_two_block_warpgroup_tile_machine_code(tmp_path):
    """The H200 plan's 9-16 token tiles: with group scales folded per block (Tile.fold), four 64-column
    blocks per stage (BK = 256: WG_16_DEEP, and WG_16_DEEP_TWO of two 16-row blocks per warp, 128 rows
    per warpgroup, on a layer of more than 8192 rows), the wgmmas of a scale group's two blocks chained
    into one partial set, retired and folded before the next group's (FOLD_SPAN); per channel (nothing
    to fold) WG_16_TWO on a layer of more than 8192 rows, two blocks per stage, one group in flight
    across the next block's dequantization. No serialized wgmmas, no local memory."""
    from dataclasses import replace

    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    for n, tile, per_stage, scheme in ((8192, replace(G.WG_16_DEEP, kg=3), 16, WeightScheme("int4", "group", 128)),
                                       (14336, G.WG_16_DEEP_TWO, 32, WeightScheme("int4", "group", 128)),
                                       (14336, G.WG_16_TWO, 16, WeightScheme("int4", "channel", scale_fmt="fp32"))):
        p = humming.plan(LayerSpec(n, 4096, scheme), "H200")  # (8192 rows: three groups along K, wg16_groups_along_k)
        r = p.tuning_for(16)
        folds = scheme.scale == "group"
        assert G.tile_from_config(r.config) == replace(tile, fold=int(folds)), r.config
        kernel = rt.kernel(p.kernel(16))
        assert "C7513" not in kernel.meta["log"] and "C7514" not in kernel.meta["log"], kernel.meta["log"]
        sass = I.disassemble(kernel.cubin)
        loop = main_loop(sass)
        assert I.count(loop, r"HGMMA\.64x16x16\.F32") == per_stage
        blocks = tile.bk // 64
        # folded: one wait for all in flight per group of two blocks (BK = 256, groups of 128); else one per
        # block, for all but the newest group
        waits = blocks // 2 if folds else blocks
        assert I.count(loop, r"WARPGROUP\.DEPBAR\.LE gsb0, 0x%d" % (0 if folds else 1)) == waits, loop
        assert I.count(loop, r"WARPGROUP\.ARRIVE") == blocks  # (one fence per block: nothing serialized)
        assert I.count(sass, r"^LDGSTS") > 0 and I.count(loop, r"^(LDL|STL)") == 0
        assert I.resource_usage(kernel.cubin)["humming_entry"]["LOCAL"] == 0


def test_groups_along_k_machine_code(tmp_path, monkeypatch):
    """Tile.kg: groups of four warps along K in one CTA of the 16-token warpgroup tile, each with its own stages.
    The main loop is the one-group tile's (the groups' shared-memory regions are warp-uniform addresses, so the
    wgmmas' descriptors stay in uniform registers: no R2UR moves in the loop, and within 2 % of its instructions),
    no local memory, registers within 65536 / 384 threads; shared memory is the groups' regions and 1 KB, within
    the H200's 227 KB per block; only cp.async warpgroup tiles take groups. With HUMMING_WG16_KG the H200 plan's
    9-16 token tile takes them where its CTAs fit one wave (8192x8192: 128 of 64 rows), not where they do not
    (28672x8192: 224 of 128 rows); by default three groups where they fill 2/3 of the SMs to all of them. The
    64-token tile's cp.async twin with three groups (WG_64_KG) under HUMMING_WG64_KG."""
    from dataclasses import replace

    from humming.planner import clear_cache
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    rec = G.recipe_for(WeightScheme("int4", "group", 128), bf16=False, out_bf16=False, caps_cp_async=True,
                       k8mma=False, target="sm_90a")
    loops = {}
    for kg in (1, 3):
        tile = replace(G.WG_16_DEEP, fold=1, kg=kg)
        spec = G.kernel_spec(rec, tile)
        assert spec.threads == 128 * kg
        one = G.smem_bytes(rec, replace(tile, kg=1)) - 1024
        assert spec.smem_bytes == (kg * -(-one // 1024) * 1024 if kg > 1 else one) + 1024 <= 227 * 1024
        kernel = rt.kernel(spec)
        use = I.resource_usage(kernel.cubin)["humming_entry"]
        assert use["LOCAL"] == 0 and use["REG"] <= 65536 // (128 * kg) // 8 * 8, use
        loops[kg] = main_loop(I.disassemble(kernel.cubin))
        assert I.count(loops[kg], r"HGMMA\.64x16x16\.F32") == 16 and I.count(loops[kg], r"^R2UR") == 0
    n1, n3 = len(I.instructions(loops[1])), len(I.instructions(loops[3]))
    assert n3 <= n1 * 1.02, (n1, n3)
    for bad in (dict(kg=2, tma=1), dict(kg=2, sk=1), dict(kg=5), dict(kg=2, wgmma=0, bk=64)):
        with pytest.raises(ValueError, match="groups along K"):
            replace(G.WG_16_DEEP, **bad).check()
    # the planner: by default three groups for 4-bit integer codes on the 64-row tile where its tiles fill 2/3 of the
    # SMs to all of them (wg16_groups_along_k); HUMMING_WG16_KG sets the count wherever the tiles fit one wave
    def kg_of(n, k, scheme=WeightScheme("int4", "group", 128), act=ActivationScheme("fp16")):
        clear_cache()
        tile = G.tile_from_config(humming.plan(LayerSpec(n, k, scheme, act, out_dtype=act.fmt), "H200")
                                  .tuning_for(16).config)
        assert tile.bm == 16, (n, k, tile)
        return tile.kg

    monkeypatch.delenv("HUMMING_WG16_KG", raising=False)
    uint4 = WeightScheme("uint4", "group", 128, zero_point="int")
    assert kg_of(8192, 8192) == kg_of(7168, 8192) == kg_of(5632, 4096) == kg_of(8192, 8192, uint4) == 3
    assert kg_of(8192, 8192, act=ActivationScheme("bf16")) == 3
    # (64 tiles: the launch splits K in two, summed in clusters, 128 CTAs; not 32 or 40 tiles in four or three
    # slices, nor 80 tiles in one slice, 61 % of the SMs)
    assert kg_of(4096, 4096) == kg_of(4096, 14336) == 3
    assert kg_of(5120, 8192) == kg_of(2048, 8192) == kg_of(2560, 8192) == kg_of(28672, 8192) == kg_of(14336, 4096) == 1
    assert kg_of(8192, 2048) == 1  # (a short K: not measured)
    assert kg_of(8192, 8192, WeightScheme("int3", "group", 128)) == 1  # (not measured)
    for env, kgs in (("3", (3, 3, 1)), ("2", (2, 2, 1)), ("1", (1, 1, 1))):
        monkeypatch.setenv("HUMMING_WG16_KG", env)
        assert (kg_of(8192, 8192), kg_of(2048, 8192), kg_of(28672, 8192)) == kgs, env
    monkeypatch.setenv("HUMMING_WG16_KG", "5")
    with pytest.raises(ValueError, match="HUMMING_WG16_KG"):
        kg_of(8192, 8192)
    monkeypatch.delenv("HUMMING_WG16_KG")
    # 33-64 tokens: WG_64_TMA's cp.async twin with three groups under HUMMING_WG64_KG only (it lost on an H100), where
    # its 64-row tiles fill 2/3 of the SMs to all of them; registers within 65536 / 384, no R2UR in its loop
    kernel = rt.kernel(G.kernel_spec(rec, G.WG_64_KG))
    use = I.resource_usage(kernel.cubin)["humming_entry"]
    assert use["LOCAL"] == 0 and use["REG"] <= 168 and kernel.spec.threads == 384, use
    assert I.count(main_loop(I.disassemble(kernel.cubin)), r"^R2UR") == 0

    def tile64(n, k):
        clear_cache()
        return G.tile_from_config(humming.plan(LayerSpec(n, k, WeightScheme("int4", "group", 128)), "H200")
                                  .tuning_for(64).config)

    assert tile64(8192, 8192) == G.WG_64_TMA
    monkeypatch.setenv("HUMMING_WG64_KG", "3")
    assert tile64(8192, 8192) == G.WG_64_KG == tile64(6144, 4096) and G.WG_64_KG.kg == 3
    assert tile64(14336, 4096) == G.WG_64_TMA and tile64(28672, 8192) == G.WG_64
    clear_cache()


def test_fold_per_group_keeps_ctas_per_sm(tmp_path):
    """FOLD_SPAN (a fold per scale group of two blocks) costs registers. It is taken by one-warpgroup tiles
    of 3-8-bit codes, where those registers cost no CTA per SM; eight-warp tiles (WG_32_DEEP_TWO: one CTA
    per SM instead of two, 28672x8192 M=32 50 -> 76 us on the H200) and 1-2-bit codes (small stages,
    CTAs bound by registers) fold per block. Against the HUMMING_FOLD_SPAN=1 build of the same tile: the
    waits per stage, and the CTAs per SM that registers and shared memory allow."""
    from humming_nvidia import gemm_mma_sync as G

    def ctas_per_sm(kernel, tile, rec):  # (the H200's 228 KB of shared memory per SM)
        regs = I.resource_usage(kernel.cubin)["humming_entry"]
        assert regs["LOCAL"] == 0
        return min(G.ctas_by_registers(regs["REG"], tile.threads), (228 * 1024) // (G.smem_bytes(rec, tile) + 1024))

    rt = Runtime(cache_dir=tmp_path)
    cases = [(WeightScheme("int4", "group", 128), G.WG_16_DEEP_TWO, 2), (WeightScheme("int3", "group", 128), G.WG_DECODE_TWO, 2),
             (WeightScheme("int4", "group", 128), G.WG_32_DEEP_TWO, 1), (WeightScheme("int2", "group", 128), G.WG_16_DEEP_TWO, 1),
             (WeightScheme("int2", "group", 128), G.WG_DECODE, 1), (WeightScheme("uint4", "group", 64, zero_point="int"), G.WG_16_DEEP, 1)]
    builds = []
    for scheme, tile, span in cases:
        rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_90a")
        tile = G.fit_tile(G.replace(tile, fold=1), rec, 227 * 1024, 8192)
        per_block = dataclasses.replace(rec, defines=tuple(rec.defines) + (("HUMMING_FOLD_SPAN", "1"),))
        builds.append((rec, tile, span, G.kernel_spec(rec, tile), G.kernel_spec(per_block, tile)))
    rt.warmup([b[3] for b in builds] + [b[4] for b in builds], executor="thread")
    for rec, tile, span, spec, per_block in builds:
        k, k1 = rt.kernel(spec), rt.kernel(per_block)
        assert "C751" not in k.meta["log"], k.meta["log"]
        waits = I.count(main_loop(I.disassemble(k.cubin)), r"WARPGROUP\.DEPBAR\.LE gsb0, 0x0")
        assert waits == tile.bk // 64 // span, (rec.bits, tile, waits)
        assert ctas_per_sm(k, tile, rec) >= ctas_per_sm(k1, tile, rec), (rec.bits, tile)


def test_four_block_decode_tiles_machine_code(tmp_path):
    """The H200 plan's decode tiles: the lean rings up to 8 tokens on an 8192-row layer, the four-block
    warpgroup tile (m64n8k16, BK = 256, group scales folded) from one token on a layer of more than
    16384 rows (two 64-row wgmmas per k16 step), and the one-wgmma tile (other formats' decode); 16 or 32
    wgmmas per stage, no serialized wgmmas (ptxas C7513), no packed multiply by the scales in the loop."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    scheme = WeightScheme("int4", "group", 128)
    ring = humming.plan(LayerSpec(8192, 8192, scheme), "H200")
    assert all(G.tile_from_config(ring.tuning_for(m).config).stream for m in (1, 2, 8))
    rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_90a")
    for n, m, per_stage in ((28672, 1, 32), (28672, 8, 32), (8192, None, 16)):
        p = humming.plan(LayerSpec(n, 8192, scheme), "H200")
        t = G.tile_from_config(p.tuning_for(m).config) if m else G.replace(G.WG_DECODE, fold=1)
        assert t.wgmma and t.fold and t.bk == 256 and t.bm == 8, t
        kernel = rt.kernel(p.kernel(m) if m else G.kernel_spec(rec, t))
        assert "C751" not in kernel.meta["log"], kernel.meta["log"]
        loop = main_loop(I.disassemble(kernel.cubin))
        assert I.count(loop, r"HGMMA\.64x8x16\.F32") == per_stage
        assert I.count(loop, r"WARPGROUP\.ARRIVE") == 4 and I.count(loop, r"HMUL2") == 0
        assert I.resource_usage(kernel.cubin)["humming_entry"]["LOCAL"] == 0


def test_three_bit_codes_gather_in_place(tmp_path):
    """3-bit codes (layout v4: whole fields, five per 16-bit half) are taken in place. Per block of 16
    pairs: one LOP3 per pair (three for pair 15, spread over the spare bits) and eight shifts (two per
    word and two for pair 15; left shifts compile to IMAD.SHL), 26 instructions where v3's two planes
    took 32 LOP3s and 6 shifts. Dequantized (the warpgroup tile the H200 plan decodes 5-8 tokens of 28672
    rows on): then one packed fma per pair. Raw (the one-token ring of 8192 rows): nothing else on the
    codes, and no factor on the activations (v3's k-half factor: one HMUL2 per k16 tile); a correction MMA
    joins each code MMA. The rings of codes gathered from planes (7 bits) and the H200's 3-bit one-token
    rings of 32-224 rows keep their registers: no local memory on Ampere, Ada or Hopper."""
    rt = Runtime(cache_dir=tmp_path)
    p = humming.plan(LayerSpec(28672, 4096, WeightScheme("int3", "group", 128)), "H200")
    loop = main_loop(I.disassemble(rt.kernel(p.kernel(5)).cubin))
    blocks = 4  # a stage: four blocks of 16 pairs per lane
    assert I.count(loop, r"HGMMA\.64x8x16\.F32") == 2 * 16  # (two 64-row sets)
    shifts = I.count(loop, r"^SHF") + I.count(loop, r"^IMAD\.SHL")
    # (v3's planes: 2 * (2 * 64 + 32 + 16) = 352 allowed, 413 with a shift per pair)
    assert I.count(loop, r"^LOP3") + shifts <= 2 * (26 * blocks + 16), loop
    assert I.count(loop, r"^(HFMA2|HADD2)") <= 2 * (16 * blocks + 8)
    p = humming.plan(LayerSpec(8192, 8192, WeightScheme("int3", "group", 128)), "H200")
    loop = main_loop(I.disassemble(rt.kernel(p.kernel(1)).cubin))
    mmas = I.count(loop, r"^HMMA\.16816\.F32")
    blocks = mmas // 8  # (4 k16 tiles x (codes + correction) per 64-column block)
    assert mmas % 8 == 0 and blocks >= 2, loop
    assert I.count(loop, r"^(HFMA2|HADD2)\s") == 0 and I.count(loop, r"^HMUL2") == 0
    shifts = I.count(loop, r"^SHF") + I.count(loop, r"^IMAD\.SHL")
    assert I.count(loop, r"^LOP3") + shifts <= (26 + 8) * blocks, loop  # (v3: ~48 per block; + the turn's copies)
    for n, m in ((4096, 1), (8192, 1), (14336, 1), (28672, 1), (8192, 8), (14336, 8)):  # (v4: rings to 8 tokens)
        usage = I.resource_usage(rt.kernel(humming.plan(LayerSpec(n, 8192, WeightScheme("int3", "group", 128)),
                                                          "h200").kernel(m)).cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0 and usage["REG"] <= 128, (n, m, usage)
    for dev, n, scheme in (("a100", 8192, WeightScheme("int3", "group", 128)), ("l40s", 4096, WeightScheme("uint3", "group", 128)),
                           ("h200", 8192, WeightScheme("int3", "channel", scale_fmt="fp32")),
                           ("a100", 28672, WeightScheme("int7", "channel", scale_fmt="fp32")),
                           ("l40s", 28672, WeightScheme("int7", "channel", scale_fmt="fp32"))):
        for act in ("fp16", "bf16"):
            plan = humming.plan(LayerSpec(n, 8192, scheme, ActivationScheme(act), out_dtype=act), dev)
            for m in (1, 16):
                usage = I.resource_usage(rt.kernel(plan.kernel(m)).cubin)["humming_entry"]
                assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (dev, n, scheme.describe(), act, m, usage)


def test_eight_warp_tma_tile_has_no_barrier_per_step(tmp_path):
    """A TMA tile of two warpgroups: each stage's refill waits on the stage's "empty" mbarrier
    (one arrival per warpgroup) instead of a barrier of all warps per step; its shared memory
    holds the second set of barriers."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    rec = G.recipe_for(WeightScheme("int4", "group", 128), bf16=False, out_bf16=False, caps_cp_async=True,
                       k8mma=False, target="sm_90a")
    four, eight = G.Tile(64, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1), G.Tile(64, 128, 128, 1, 8, 1, 4, wgmma=1, tma=1)
    for tile, bars in ((four, 64), (eight, 128)):  # (full barriers; and empty ones)
        assert G.smem_bytes(rec, tile) == G.smem_bytes(rec, dataclasses.replace(tile, tma=0)) + bars
    kernel = rt.kernel(G.kernel_spec(rec, G.fit_tile(eight, rec, 227 * 1024, 8192)))
    loop = main_loop(I.disassemble(kernel.cubin))
    assert I.count(loop, r"HGMMA\.64x64x16\.F32") == 8 and I.count(loop, r"BAR\.SYNC") == 0, loop
    assert I.count(loop, r"SYNCS\.PHASECHK") == 2  # the stage's full barrier; the refilled one's empty barrier
    assert I.count(loop, r"SYNCS\.ARRIVE\.TRANS64\.A1T0") == 1  # a warpgroup's arrival on it
    assert I.count(loop, r"WARPGROUP\.DEPBAR\.LE gsb0, 0x1") == 2
    assert I.resource_usage(kernel.cubin)["humming_entry"]["LOCAL"] == 0


def test_four_warp_tma_tile_shares_its_refills(tmp_path):
    """The planner's 64-token TMA tile (one warpgroup, no cluster) spreads each stage's refill over its four
    warps (SHARED_REFILL): the loop still issues the stage's two activation tensor copies and its five bulk
    copies (four 16-row weight blocks, one scale row), each under its own warp's branch, and the extra
    addressing leaves registers for three CTAs per SM (at most 168 of a thread) and no local memory. A cluster
    of two (thread 0's refill, as before) multicasts the activations' copies."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    rec = G.recipe_for(WeightScheme("int4", "group", 128), bf16=False, out_bf16=False, caps_cp_async=True,
                       k8mma=False, target="sm_90a")
    kernel = rt.kernel(G.kernel_spec(rec, G.WG_64_TMA))
    loop = main_loop(I.disassemble(kernel.cubin))
    assert I.count(loop, r"UTMALDG") == 2 and I.count(loop, r"UBLKCP") == 5, loop
    assert I.count(loop, r"BAR\.SYNC") == 0 and I.count(loop, r"HGMMA\.64x64x16\.F32") == 8
    usage = I.resource_usage(kernel.cubin)["humming_entry"]
    assert usage["LOCAL"] == 0 and usage["REG"] <= 168, usage
    clustered = rt.kernel(G.kernel_spec(rec, dataclasses.replace(G.WG_64_TMA, cluster=2)))
    loop = main_loop(I.disassemble(clustered.cubin))
    assert I.count(loop, r"UTMALDG\.2D\.MULTICAST") == 2 and I.count(loop, r"UBLKCP") == 5, loop
    assert I.resource_usage(clustered.cubin)["humming_entry"]["LOCAL"] == 0


def test_unsplit_warpgroup_launches_copy_weights_before_the_wait(tmp_path):
    """The cp.async warpgroup tiles (the H200 plan's 28672x8192 kernels at 1, 16 and 64 tokens) issue their
    first stages' weight copies before the wait for the previous kernel (griddepcontrol.wait: ACQBULK) when
    K is not split or the launch goes programmatically (GemmParams.early_w), and wait first otherwise (stage
    by stage: the first block's math waits for its own copies only): two waits, copies ahead of one of them
    only. The TMA tiles wait once, before their first copy. No local memory."""
    rt = Runtime(cache_dir=tmp_path)
    p = humming.plan(LayerSpec(28672, 8192, WeightScheme("int4", "group", 128)), "H200")
    for m in (1, 16, 64):
        kern = rt.kernel(p.kernel(m))
        sass = I.instructions(I.disassemble(kern.cubin))
        waits = [i for i, line in enumerate(sass) if "ACQBULK" in line]
        assert len(waits) == 2, (m, waits)
        # (each path from its entry -- the kernel's start or the instruction after an unconditional branch --
        # to its wait)
        starts = [max([i + 1 for i, line in enumerate(sass[:w]) if re.match(r"\s*BRA\b", line)], default=0)
                  for w in waits]
        copies = [sum("LDGSTS" in line for line in sass[a:w]) for a, w in zip(starts, waits)]
        assert sorted(copies)[0] == 0 and sorted(copies)[1] > 0, (m, copies)
        assert I.resource_usage(kern.cubin)["humming_entry"]["LOCAL"] == 0
    kern = rt.kernel(humming.plan(LayerSpec(8192, 8192, WeightScheme("int4", "group", 128)), "H200").kernel(64))
    assert dict(kern.spec.config)["TMA"] and I.disassemble(kern.cubin).count("ACQBULK") == 1


def test_activation_windows_are_checked_before_compiling():
    """A window of activations (Tile.xwin) holds two turns or more, on register rings only, and needs
    cp.async copies: other tiles and Turing's loads are refused with the reason; the tile round-trips
    through the plan's config."""
    from humming.errors import UnsupportedError
    from humming_nvidia import gemm_mma_sync as G

    T = G.Tile
    for bad in (T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2, xwin=1),
                T(8, 32, 256, 1, 2, 4, 4, stream=3, occupancy=2, xwin=2), T(64, 128, 128, 1, 8, 1, 4, xwin=2)):
        with pytest.raises(ValueError, match="activation window"):
            bad.check()
    rec = G.recipe_for(WeightScheme("int4", "group", 128), bf16=False, out_bf16=False, caps_cp_async=False,
                       k8mma=True, target="sm_75")
    with pytest.raises(UnsupportedError, match="cp.async"):
        G.kernel_spec(rec, G.DECODE_INT4_LONG_K_WINDOW)
    assert G.tile_from_config(G.DECODE_INT4_LONG_K_WINDOW.to_dict()) == G.DECODE_INT4_LONG_K_WINDOW


def test_wgmma_tiles_are_checked_before_compiling():
    """Warpgroup tiles: shapes the scheduler cannot run, targets without wgmma, int4 operands and
    byte operands whose scale groups split a 64-value half block (groups of 32 values) are refused with the reason
    (groups of 64 values compile: two partial sets per block); fitting
    keeps BK = 128 and at least 3 stages and gives up tokens (256 -> 128) for 8-bit weights; shared
    memory covers the 1 KB alignment."""
    from humming.errors import UnsupportedError
    from humming_nvidia import gemm_mma_sync as G

    T = G.Tile
    for bad in (T(64, 64, 64, 1, 4, 1, 4, wgmma=1), T(64, 96, 128, 1, 6, 1, 4, wgmma=1),
                T(48, 64, 128, 1, 4, 1, 4, wgmma=1), T(64, 64, 128, 1, 4, 1, 2, wgmma=1),
                T(64, 64, 128, 2, 4, 1, 4, wgmma=1), T(64, 192, 128, 1, 4, 1, 4, wgmma=1)):
        with pytest.raises(ValueError, match="wgmma tile"):
            bad.check()
    int4 = WeightScheme("int4", "group", 128)
    for scheme, target, op8 in ((int4, "sm_80", 0), (int4, "sm_90a", 4), (WeightScheme("int4", "group", 32), "sm_90a", 1)):
        rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target=target, op8=op8)
        with pytest.raises(UnsupportedError, match="wgmma"):
            G.kernel_spec(rec, G.WG_128)
    rec64 = G.recipe_for(WeightScheme("int4", "group", 64), bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False,
                         target="sm_90a", op8=1)
    assert dict(G.kernel_spec(rec64, G.WG_128).config)["GROUP"] == 32
    for op8 in (1, 2):  # int8 and e4m3 operands run there, 8 tokens per wgmma included
        scheme = int4 if op8 == 1 else WeightScheme("e4m3", "channel", scale_fmt="fp32")
        rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_90a",
                           op8=op8)
        assert dict(G.kernel_spec(rec, G.BYTE_WG_DECODE).config)["OP8"] == op8
    rec8 = G.recipe_for(WeightScheme("int8", "channel", scale_fmt="fp32"), bf16=False, out_bf16=False,
                        caps_cp_async=True, k8mma=False, target="sm_90a")
    t = G.fit_tile(G.WG_256, rec8, 227 * 1024, 4096)  # (fewer tokens, at the stages they leave room for)
    assert t == G.WG_128 and G.smem_bytes(rec8, t) <= 227 * 1024 - G.STATIC_SMEM_BYTES
    assert G.fit_tile(t, rec8, 227 * 1024, 4096) == t and G.fit_tile(G.WG_256, rec8, 160 * 1024, 4096).stages == 3
    rec4 = G.recipe_for(int4, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_90a")
    t = G.fit_tile(G.WG_128, rec4, 227 * 1024, 4096)
    stage = 128 * 128 * 2 + 8 * 2 * 512 + 128 * 2  # activations, weights, one row of group scales
    assert t == G.WG_128 and G.smem_bytes(rec4, t) == -(-stage // 1024) * 1024 * 4 + 1024


def test_stream_k_tiles(tmp_path, monkeypatch):
    """Stream-K warpgroup tiles (Tile.sk): cp.async warpgroup tiles only (TMA, clusters and other tiles are
    refused); the tile round-trips through the plan's config; the kernels compile for sm_90a without local
    memory, within the registers of their occupancy, with one wait for the previous kernel on the unsplit
    path (a CTA's later pieces do not wait); and the launcher's shape covers the (tile, K step) space with
    one run per CTA and a workspace for the most parts any tile is cut into. Plans take them only with
    HUMMING_STREAM_K=1 (1-16 tokens on layers of more than 16384 rows), and say so in the scheduler slot."""
    from humming_nvidia import gemm_mma_sync as G

    layer = LayerSpec(28672, 8192, WeightScheme("int4", "group", 128))
    assert not any(r.config.get("sk") for r in humming.plan(layer, "H200").tuning)
    monkeypatch.setenv("HUMMING_STREAM_K", "1")  # (read when a plan is made: plans are cached)
    humming.planner.clear_cache()
    p = humming.plan(layer, "H200")
    assert [r.label() for r in p.tuning if r.config.get("sk")] == ["M 1-8", "M 9-16"]
    assert "stream_k (M 1-8, M 9-16)" in p.components["scheduler"]
    assert not any(r.config.get("sk") for r in humming.plan(LayerSpec(8192, 8192, layer.weight), "H200").tuning)
    monkeypatch.delenv("HUMMING_STREAM_K")
    humming.planner.clear_cache()

    T = G.Tile
    for bad in (T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, sk=1), T(8, 32, 256, 1, 2, 4, 4, stream=4, sk=1),
                T(64, 128, 128, 1, 4, 1, 4, sk=1), T(64, 64, 128, 1, 4, 1, 4, wgmma=1, sk=2)):
        with pytest.raises(ValueError, match="stream-K"):
            bad.check()
    tiles = [G.replace(G.WG_DECODE_TWO, fold=1, sk=1), G.replace(G.WG_64, occupancy=2, sk=1)]
    assert all(G.tile_from_config(t.to_dict()) == t for t in tiles)
    rt = Runtime(cache_dir=tmp_path)
    rec = G.recipe_for(WeightScheme("int4", "group", 128), bf16=False, out_bf16=False, caps_cp_async=True,
                       k8mma=False, target="sm_90a")
    for t in tiles:
        kern = rt.kernel(G.kernel_spec(rec, t))
        use = I.resource_usage(kern.cubin)["humming_entry"]
        assert use["LOCAL"] == 0 and use["REG"] * t.threads * t.occupancy <= 65536, (t, use)
        sass = I.disassemble(kern.cubin)
        assert sass.count("ACQBULK") == 2 and "HGMMA" in sass  # (unsplit and split prologues, as run_wg's)

    # the partition: Launcher.stream_k_shape against the kernel's loop (run_wg_sk), replayed here
    class _Kernel:
        spec = types.SimpleNamespace(smem_bytes=0)

        @staticmethod
        def num_regs():
            raise RuntimeError("no GPU")

    import torch

    for tiles_, ksteps, sms, per_sm in ((224, 32, 132, 2), (2, 17, 132, 1), (64, 64, 132, 1), (3, 5, 4, 3), (7, 1, 4, 2)):
        pw = types.SimpleNamespace(np_=tiles_ * 128, w=torch.empty(0), recipe=rec)
        L = G.Launcher(None, [], sms)
        L.packed, L.ctas_per_sm = pw, per_sm
        lp = types.SimpleNamespace(kernel=_Kernel)
        _, grid, _, _, ws, ctr, _, cz, pdl_ok = L.stream_k_shape(lp, G.WG_DECODE_TWO, 1, 1, tiles_, ksteps)
        g, total = grid[0], tiles_ * ksteps
        assert grid[1:] == (1, 1) and cz == 1 and pdl_ok and g == min(per_sm * sms, total)
        covered, cuts = [0] * total, [set() for _ in range(tiles_)]
        for c in range(g):  # (the kernel's loop over its pieces)
            u, end = c * total // g, (c + 1) * total // g
            assert end > u
            while u < end:
                t, k0 = divmod(u, ksteps)
                n = min(end - u, ksteps - k0)
                cuts[t].add(c)
                for v in range(u, u + n):
                    covered[v] += 1
                u += n
        assert covered == [1] * total
        parts = max(len(c) for c in cuts)
        assert ws == (parts * pw.np_ if parts > 1 else 0) and (ctr is not None) == (parts > 1), (tiles_, ksteps, ws)


def test_tensor_map_parameters(monkeypatch):
    """TMA tiles: the launcher encodes the activations' tensor map once per (address, M, row
    stride) with boxes of min(BM, M) rows (tma_box_rows), writes the box rows and the map into the kernel's
    parameters (GemmParams.tma_rows and .tmap, the layout the kernel's struct has), and skips
    the copy when the parameters already hold that map."""
    import ctypes

    from humming_nvidia import gemm_mma_sync as G

    calls = []

    def encode(addr, ptr, dim0, dim1, stride, box0, box1):
        calls.append((ptr, dim0, dim1, stride, box0, box1))
        ctypes.memset(addr, 0x40 + len(calls), 128)

    from humming.jit import driver as drv  # (the launcher module's _drv)

    monkeypatch.setattr(drv, "encode_tensor_map_2d", encode)
    assert G.TMAP_OFFSET == 128 and ctypes.sizeof(G.GemmParams) == 320  # (MoE's fields after the map)
    L = G.Launcher.__new__(G.Launcher)
    L._tmaps, L._tmap_cur = {}, {}
    lp = types.SimpleNamespace(params=G.GemmParams())
    lp.params.K, lp.params.out_mul, lp.params.k_steps_per_split = 4224, 0.5, 7
    tile = G.Tile(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1)
    assert G.tma_box_rows(tile, 33) == 33 and G.tma_box_rows(tile, 100) == 64
    L._tensor_map(lp, G.tma_box_rows(tile, 33), 0x10000, 33, 4232)
    assert calls == [(0x10000, 4224, 33, 2 * 4232, 64, 33)]  # no rows past M in the box
    p = lp.params
    assert p.tma_rows == 33 and bytes(p.tmap) == bytes([0x41]) * 128
    assert p.out_mul == 0.5 and p.k_steps_per_split == 7  # the fields before are untouched
    L._tensor_map(lp, G.tma_box_rows(tile, 100), 0x20000, 100, 4232)  # another buffer, M above BM: full boxes
    assert calls[-1][2:] == (100, 2 * 4232, 64, 64) and p.tma_rows == 64 and p.tmap[0] == 0x4242424242424242
    L._tensor_map(lp, 33, 0x10000, 33, 4232)  # the first again: from the cache
    assert len(calls) == 2 and p.tma_rows == 33 and p.tmap[0] == 0x4141414141414141
    p.tma_rows = 0
    L._tensor_map(lp, 33, 0x10000, 33, 4232)  # the parameters hold it already: nothing written
    assert p.tma_rows == 0 and len(calls) == 2
    p.trace = 0x30000  # a HUMMING_TRACE build's buffer (scripts/gpu_trace.py) lies before the copied tail
    L._tensor_map(lp, G.tma_box_rows(tile, 100), 0x20000, 100, 4232)
    assert p.trace == 0x30000 and p.tma_rows == 64 and p.tmap[0] == 0x4242424242424242


def test_register_rings_load_their_activations_turn_by_turn(tmp_path):
    """The H200 plan's one-token rings (register slots) copy each turn's activations through L1
    (cp.async.ca: LDGSTS without BYPASS) while the previous turn computes, and wait for them with
    the warps that share the K run (a named barrier of 64 threads on 8192x8192, WN = 2; a warp's
    own lanes on 4096x4096, WN = 1): no CTA-wide barrier before the first MMA, and nothing spills."""
    rt = Runtime(cache_dir=tmp_path)
    scheme = WeightScheme("int4", "group", 128)
    for n, k, named in ((8192, 8192, True), (4096, 4096, False)):
        plan = humming.plan(LayerSpec(n, k, scheme), "H200")
        kern = rt.kernel(plan.kernel(1))
        sass = I.instructions(I.disassemble(kern.cubin))
        first_mma = next(i for i, line in enumerate(sass) if "HMMA" in line)
        assert not any(re.search(r"BAR\.SYNC\S* 0x0\b", line) for line in sass[:first_mma]), (n, k)
        copies = [line for line in sass if "LDGSTS" in line]
        assert copies and not any("BYPASS" in line for line in copies), (n, k)
        barriers = [line for line in sass if re.search(r"BAR\.SYNC\S* R\d+, 0x40", line)]
        assert bool(barriers) == named, (n, k, barriers)
        assert not any(re.match(r"(@!?P\d )?(STL|LDL)", line) for line in sass), (n, k)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (n, k, usage)


def test_one_token_rings_of_one_warp_per_run_copy_row_0_alone(tmp_path):
    """The one-token copy of the loop of rings of one warp per K run (WN = 1: the short-K int4 rings, and MoE's
    on older GPUs) copies the turn's activations of row 0 alone: one 16-byte cp.async per lane a turn of four
    blocks, two with eight slots (a loop kept rolled). ptxas had unrolled the copy loop over the tile's rows
    there into seven rows' copies and their checks, 100-190 instructions a turn. No local memory; bf16 with
    eight slots keeps the unrolled loop (rolled, it spilled on sm_90a)."""
    rt = Runtime(cache_dir=tmp_path)
    per_channel = WeightScheme("int4", "channel", scale_fmt="fp32")
    g128 = WeightScheme("int4", "group", 128)
    cases = [("H200", per_channel, "fp16", None, 1), ("H200", g128, "fp16", None, 2), ("A100", g128, "bf16", None, 1),
             ("L40S", per_channel, "bf16", 8, 1), ("H200", g128, "bf16", None, 14)]
    for dev, scheme, act, experts, copies in cases:
        n = 3456 if dev == "A100" else 4096  # (the A100's 108 SMs: 16-row CTAs within one wave, shape_stream_tile)
        layer = LayerSpec(n, 4096, scheme, ActivationScheme(act), out_dtype=act,
                          **({"num_experts": experts} if experts else {}))
        spec = humming.plan(layer, dev).kernel(1)
        cfg = dict(spec.config)
        assert cfg["WN"] == 1 and cfg["STREAM"] == 4 and cfg["STAGES"] == (4 if copies == 1 else 8), (dev, cfg)
        kern = rt.kernel(spec)
        sass = I.disassemble(kern.cubin)
        one = min((b for b in loop_bodies(sass) if "HMMA" in b), key=lambda b: sum(I.opcodes(b).values()))
        assert sum(n for op, n in I.opcodes(one).items() if op.startswith("LDGSTS")) == copies, (dev, scheme, act)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0 and I.local_in_loops(sass) == 0, (dev, scheme, usage)


def test_several_token_rings_copy_each_row_once_a_turn(tmp_path):
    """At 2-8 tokens, the dense rings of several warps per K run (WN > 1) copy a turn's activations with one
    16-byte cp.async per lane for each row the warp may hold (BM / WN of them, unrolled); the loop over those rows
    compiled to twice as many copy sites and the logic around them, about 100 instructions a turn more. No local
    memory."""
    rt = Runtime(cache_dir=tmp_path)
    cases = [("H200", 8192, 8192, WeightScheme("int4", "group", 128), 4),
             ("H200", 4096, 14336, WeightScheme("int4", "group", 128), 8),  # (the activation window, XWIN)
             ("A100", 8192, 8192, WeightScheme("int4", "channel", scale_fmt="fp32"), 2),
             ("H200", 4096, 14336, WeightScheme("int2", "group", 128), 2)]
    for dev, n, k, scheme, m in cases:
        spec = humming.plan(LayerSpec(n, k, scheme), dev).kernel(m)
        cfg = dict(spec.config)
        assert cfg["STREAM"] == 4 and cfg["WN"] > 1 and cfg["BM"] == 8, (dev, n, k, cfg)
        kern = rt.kernel(spec)
        sass = I.disassemble(kern.cubin)
        loop = max((b for b in loop_bodies(sass) if "HMMA" in b), key=lambda b: sum(I.opcodes(b).values()))
        copies = sum(c for op, c in I.opcodes(loop).items() if op.startswith("LDGSTS"))
        assert copies == cfg["BM"] // cfg["WN"], (dev, n, k, m, copies)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (dev, n, k, m, usage)


def test_loop_spans_of_a_listing():
    """inspect.loop_bodies: each backward branch's span, addresses inclusive; local_in_loops counts the spills
    inside them (a forward branch and a spill outside a loop do not count)."""
    listing = """
        /*0000*/                   STL [R1], R4 ;
        /*0010*/                   HMMA.16816.F32 R8, R12, R14, R8 ;
        /*0020*/                   LDL R4, [R1] ;
        /*0030*/              @P0 BRA 0x10 ;
        /*0040*/                   BRA 0x60 ;
        /*0050*/                   HMMA.16816.F32 R8, R12, R14, R8 ;
        /*0060*/                   EXIT ;
    """
    spans = I.loop_bodies(listing)
    assert len(spans) == 1 and spans[0].count("\n") == 2 and "HMMA" in spans[0] and "STL" not in spans[0]
    assert I.main_loop(listing) == spans[0] and I.local_in_loops(listing) == 1


def test_planned_decode_kernels_keep_their_loops_in_registers(tmp_path):
    """The kernels the planner picks for 1-8 tokens of the common low-bit formats (int4 in groups of 16-128 and per
    channel, uint4 with zero points, int3, int2, MXFP4, NVFP4) on layers of 4096-14336 rows over a short K, on the
    H200, A100 and L40S, and on 4096 rows over a long K on the H200 (long_k_16_row_ring), hold no local-memory load or
    store in any loop. A session's sweep of 662 such kernels found 43 that did on these targets (the short-K int4
    ring of eight slots, the 3-bit register-streaming tiles of three CTAs per SM on sm_80 and sm_89); at most 8
    bytes spilled once outside the loops remain."""
    rt = Runtime(cache_dir=tmp_path)
    schemes = [WeightScheme("int4", "group", g) for g in (16, 32, 64, 128)] + [
        WeightScheme("int4", "channel", scale_fmt="fp32"), WeightScheme("uint4", "group", 16, zero_point="int"),
        WeightScheme("int3", "group", 128), WeightScheme("int2", "group", 128),
        WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), WeightScheme("e2m1", "group", 16, scale_fmt="e4m3")]
    picks = {}
    for dev in ("h200", "a100", "l40s"):
        for scheme in schemes:
            for n, k in ((4096, 4096), (8192, 4096), (14336, 4096)) + (((4096, 14336),) if dev == "h200" else ()):
                p = humming.plan(LayerSpec(n, k, scheme), dev)
                for m in (1, 8):
                    picks.setdefault(p.kernel(m), (dev, scheme.describe(), f"{n}x{k}", m))
        for scheme in schemes[:4]:  # (bf16: the short-K ring of eight slots spilled on sm_89 where fp16 did not)
            for k in (4096, 14336) if dev == "h200" else (4096,):
                p = humming.plan(LayerSpec(4096, k, scheme, ActivationScheme("bf16"), out_dtype="bf16"), dev)
                picks.setdefault(p.kernel(1), (dev, scheme.describe() + " bf16", f"4096x{k}", 1))
    rt.warmup(list(picks), executor="thread")
    for spec, what in picks.items():
        kern = rt.kernel(spec)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] <= 8, (what, usage)
        if usage["STACK"]:
            assert I.local_in_loops(I.disassemble(kern.cubin)) == 0, what


def _compile_without_stack(rt, picks: dict, sass: str | None = None) -> None:
    """Compile every KernelSpec in ``picks`` (spec -> what it is, for the message) and check that none has local memory
    or a stack, and that each one's machine code holds ``sass`` (a regular expression) where one is given."""
    rt.warmup(list(picks), executor="thread")
    for spec, what in picks.items():
        kern = rt.kernel(spec)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (what, usage)
        if sass:
            assert I.count(I.disassemble(kern.cubin), sass) > 0, what


def test_turing_decode_kernels_of_8_bit_codes_keep_three_register_slots(tmp_path):
    """Turing has no cp.async, so a stream tile's slots are registers. 8-bit codes whose kernels min_blocks does not
    budget (zero points, float codes, groups of 16 or 32) reached 244-255 registers at four slots, and spilled in
    the loop for uint8 with zero points in groups of 16 (16 bytes) and e4m3 in groups of 64 (the long-K ring,
    8 bytes). They now take three slots and compile without local memory, and so does int8 in groups of 64 (budgeted,
    8 bytes outside the loops at four); int8 in groups of 128 and per channel keep four, and so do rings that fold
    every two or four blocks."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    cases = [(WeightScheme("uint8", "group", 16, zero_point="int"), 4096, 4096, 3),
             (WeightScheme("uint8", "group", 64, zero_point="int"), 28672, 8192, 3),
             (WeightScheme("e4m3", "group", 64, scale_fmt="fp32"), 4096, 14336, 3),
             (WeightScheme("e4m3", "channel", scale_fmt="fp32"), 4096, 4096, 3),
             (WeightScheme("int8", "group", 16), 4096, 14336, 3),
             (WeightScheme("int8", "group", 128), 4096, 4096, 4),
             # (budgeted, a floor of two CTAs: 8 bytes of stack outside the loops at four slots)
             (WeightScheme("int8", "group", 64), 4096, 4096, 3),
             (WeightScheme("int8", "group", 64), 28672, 8192, 3),
             # (a ring folding every two blocks keeps its slots in whole fold chunks: four)
             (WeightScheme("e4m3", "group", 128, scale_fmt="fp32"), 4096, 14336, 4)]
    picks = {}
    for scheme, n, k, stages in cases:
        p = humming.plan(LayerSpec(n, k, scheme, ActivationScheme("fp16"), out_dtype="fp16"), "T4")
        spec = p.kernel(1)
        cfg = dict(spec.config)
        assert cfg["STREAM"] and cfg["STAGES"] == stages, (scheme.describe(), cfg)
        picks[spec] = scheme.describe()
    _compile_without_stack(rt, picks, r"HMMA\.1688")
    # (chips with cp.async keep four slots for the same layers: their slots are shared memory)
    assert dict(humming.plan(LayerSpec(4096, 4096, cases[0][0], ActivationScheme("fp16"), out_dtype="fp16"),
                             "A100").kernel(1).config)["STAGES"] == G.DEFAULT_RANGES[0][2].stages


def test_turing_decode_tiles_of_sub_byte_codes_in_groups_of_64_do_not_spill(tmp_path):
    """Sub-byte integer codes in groups of 64 on Turing's register-streaming tiles (the 16- and 32-row decode tiles
    of layers of about 2048 rows or fewer): at four register slots int4 at min_blocks' floor of three CTAs per SM (80
    registers) left 8-16 bytes of stack with a local load in the loop, for every activation (int3 / int5, floored at
    two, up to 16 outside the loops). They take three slots (four_slots_spill) and compile at the floor of three
    without local memory; groups of 128 keep four."""
    rt = Runtime(cache_dir=tmp_path)
    cases = [("int4", 64, 2048, 1024, "fp16", 3), ("int4", 64, 256, 512, "int8", 3),
             ("int3", 64, 1000, 4096, "bf16", 3), ("int5", 64, 2040, 1024, "e4m3", 3),
             ("int4", 128, 2048, 1024, "fp16", 4)]
    picks = {}
    for fmt, g, n, k, act, stages in cases:
        a = ActivationScheme(act) if act in ("fp16", "bf16") else ActivationScheme(act, "dynamic_token")
        p = humming.plan(LayerSpec(n, k, WeightScheme(fmt, "group", g), a, out_dtype="bf16"), "T4")
        for m in (1, 8):
            spec = p.kernel(m)
            cfg = dict(spec.config)
            assert cfg["STREAM"] == 1 and cfg["STAGES"] == stages, (fmt, g, n, k, act, m, cfg)
            picks[spec] = (fmt, g, f"{n}x{k}", act, m)
    _compile_without_stack(rt, picks, r"HMMA\.1688")


def test_uint7_in_groups_of_64_take_three_slots_on_the_long_k_ring(tmp_path):
    """uint7 with zero points in groups of 64 on the sixteen-warp long-K ring (512 threads, so at most 128 registers):
    at four slots 48 bytes of stack with four local accesses in the loop on sm_90a, 16 and three on sm_86 / sm_89.
    They take three slots (four_slots_spill) and compile without a stack; int7 and uint6 in groups of 64 and uint7 in
    groups of 128 keep four."""
    rt = Runtime(cache_dir=tmp_path)
    cases = [("uint7", 64, "int", 3), ("int7", 64, "none", 4), ("uint6", 64, "int", 4), ("uint7", 128, "int", 4)]
    picks = {}
    for dev in ("H200", "L40S", "A10"):
        for fmt, g, zp, stages in cases:
            p = humming.plan(LayerSpec(4096, 14336, WeightScheme(fmt, "group", g, zero_point=zp)), dev)
            spec = p.kernel(1)
            cfg = dict(spec.config)
            assert (cfg["STREAM"], spec.threads, cfg["STAGES"]) == (4, 512, stages), (dev, fmt, g, cfg)
            picks[spec] = (dev, fmt, g)
    _compile_without_stack(rt, picks)


def test_int7_in_groups_of_64_takes_three_slots_on_the_one_token_tiles(tmp_path):
    """int7 in groups of 64 on the register-streaming tiles at one token (stream 1, a floor of two 256-thread CTAs:
    128 registers): at four slots sm_90a kept 8 bytes of stack outside the loops. It takes three slots
    (four_slots_spill) at the same floor and compiles without a stack; int6 and uint7 with zero points keep four."""
    rt = Runtime(cache_dir=tmp_path)
    cases = [("int7", "none", 7168, 2048, 3), ("int7", "none", 14336, 4096, 3), ("int6", "none", 8192, 4096, 4),
             ("uint7", "int", 8192, 4096, 4)]
    picks = {}
    for fmt, zp, n, k, stages in cases:
        p = humming.plan(LayerSpec(n, k, WeightScheme(fmt, "group", 64, zero_point=zp)), "H200")
        spec = p.kernel(1)
        cfg = dict(spec.config)
        assert (cfg["STREAM"], cfg["STAGES"]) == (1, stages), (fmt, n, k, cfg)
        if fmt == "int7":
            assert spec.min_blocks == 2, spec.min_blocks
        picks[spec] = (fmt, f"{n}x{k}")
    _compile_without_stack(rt, picks)


def test_odd_widths_with_zero_points_in_groups_of_16_take_three_slots_on_the_streaming_tiles(tmp_path):
    """5- and 7-bit codes with zero points in groups of 16 on the register-streaming decode tiles (no register floor),
    and 3-bit ones on Turing: at four slots 255 registers and 8-16 bytes of stack (uint5 on the A100's 16-row tile:
    four local accesses in the loop). They take three slots (four_slots_spill) and compile without a stack; uint4
    and uint6 keep four, and so does uint3 where there is cp.async."""
    rt = Runtime(cache_dir=tmp_path)
    cases = [("A100", "uint5", 1000, 3584, 3), ("L40S", "uint7", 4096, 14336, 3), ("T4", "uint3", 4096, 14336, 3),
             ("A100", "uint3", 1000, 3584, 4), ("T4", "uint4", 1000, 3584, 4), ("L40S", "uint6", 4096, 14336, 4)]
    picks = {}
    for dev, fmt, n, k, stages in cases:
        p = humming.plan(LayerSpec(n, k, WeightScheme(fmt, "group", 16, zero_point="int")), dev)
        spec = p.kernel(1)
        cfg = dict(spec.config)
        assert (cfg["STREAM"], cfg["STAGES"]) == (1, stages), (dev, fmt, cfg)
        picks[spec] = (dev, fmt, f"{n}x{k}")
    _compile_without_stack(rt, picks)


def test_byte_tiles_of_half_block_groups_above_128_tokens_do_not_spill(tmp_path):
    """Byte operands (int8 / e4m3 activations) whose weight groups cover half a 64-unit block keep a second int32
    partial set. Above 128 tokens, chips without warpgroup MMAs ran them on BYTE_TILE_LARGE (warps of 64 tokens),
    which spilled in the loop on sm_80 and sm_89 (40-104 bytes, 5-24 accesses a turn), and on layers of at most
    4096 rows on a 64-token tile of BK = 128 (8-16 bytes). They take 128 x 64 CTAs of 32-token warps
    (BYTE_TILE_LARGE_HALF) and BK = 64 there, and compile without local memory; groups of whole blocks keep
    BYTE_TILE_LARGE."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    tok = lambda f: ActivationScheme(f, "dynamic_token")  # noqa: E731
    cases = [("A100", WeightScheme("int4", "group", 32), tok("int8")),
             ("A100", WeightScheme("uint4", "group", 32, zero_point="int"), tok("int8")),
             ("A100", WeightScheme("int8", "group", 32), tok("int8")),
             ("L40S", WeightScheme("uint4", "group", 32, zero_point="int"), tok("e4m3")),
             ("L40S", WeightScheme("int2", "group", 32), tok("e4m3")),
             ("L40S", WeightScheme("uint4", "group", 64, zero_point="int"), tok("e4m3"))]
    picks = {}
    for dev, scheme, act in cases:
        for n in (8192, 4096):
            p = humming.plan(LayerSpec(n, 4096, scheme, act, out_dtype="bf16"), dev)
            cfg = p.tuning_for(256).config
            assert cfg["bk"] == 64 and cfg["bm"] // cfg["wm"] == 32, (dev, scheme.describe(), n, cfg)
            if n == 8192:
                assert (cfg["bm"], cfg["bn"]) == (128, 64), cfg
            picks[p.kernel(256)] = (dev, scheme.describe(), n)
    whole = humming.plan(LayerSpec(8192, 4096, WeightScheme("int4", "group", 128), tok("int8"), out_dtype="bf16"),
                         "A100").tuning_for(256).config
    assert {k: whole[k] for k in G.BYTE_TILE_LARGE.to_dict()} == G.BYTE_TILE_LARGE.to_dict()
    rt.warmup(list(picks), executor="thread")
    for spec, what in picks.items():
        kern = rt.kernel(spec)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (what, usage)
        assert re.search(r"IMMA\.16832|QMMA|HMMA\.16832", I.disassemble(kern.cubin)), what


def test_byte_tiles_of_quarter_block_groups_at_33_to_128_tokens_do_not_spill(tmp_path):
    """Byte operands in groups of 32 values (a quarter of a 64-unit block: two folds a block, a second int32 partial
    set) at 33-128 tokens on chips without warpgroup MMAs: the 32- and 64-token tiles of BK = 128 (32-token by
    32-row warps) reached 255 registers on sm_80 and spilled, in the loop for int4 / int2 / uint4 with zero points
    (8-32 bytes, one to six accesses a turn; int8 8 bytes outside). They take BK = 64 (one warp along K), as above
    128 tokens, and compile without local memory; groups of 64 values keep BK = 128."""
    rt = Runtime(cache_dir=tmp_path)
    tok = ActivationScheme("int8", "dynamic_token")
    cases = [(WeightScheme("uint4", "group", 32, zero_point="int"), 4096, 128),
             (WeightScheme("uint4", "group", 32, zero_point="int"), 28672, 33),
             (WeightScheme("int4", "group", 32), 4096, 64), (WeightScheme("int2", "group", 32), 28672, 33),
             (WeightScheme("int8", "group", 32), 28672, 48)]
    picks = {}
    for scheme, n, m in cases:
        p = humming.plan(LayerSpec(n, 4096 if n == 4096 else 8192, scheme, tok, out_dtype="fp16"), "A100")
        cfg = p.tuning_for(m).config
        assert (cfg["bk"], cfg["wk"], cfg["bm"] // cfg["wm"]) == (64, 1, 32), (scheme.describe(), n, m, cfg)
        picks[p.kernel(m)] = (scheme.describe(), n, m)
    g64 = humming.plan(LayerSpec(4096, 4096, WeightScheme("uint4", "group", 64, zero_point="int"), tok,
                                 out_dtype="fp16"), "A100").tuning_for(128).config
    assert g64["bk"] == 128, g64
    _compile_without_stack(rt, picks, r"IMMA\.16832")


def test_moe_256_token_warpgroup_tiles_do_not_spill(tmp_path):
    """MoE layers of more than 512 rows per expert run the 256-token warpgroup tile with cp.async stages and the
    rows gathered from the tokens' rows (XGATHER): 128 accumulators a thread and sixteen activation chunks. Their
    offsets were signed ints, which the compiler held sign-extended (two registers each): int2 in groups of
    16-128, int3 in groups of 16-32 and int4 in groups of 64 spilled 8 bytes there on sm_90a (1-4 local accesses a
    turn). Unsigned offsets (never negative), one register each: none spills."""
    rt = Runtime(cache_dir=tmp_path)
    picks = {}
    for scheme, act in ((WeightScheme("int2", "group", 128), "fp16"), (WeightScheme("int4", "group", 64), "bf16"),
                        (WeightScheme("int3", "group", 16), "fp16")):
        p = humming.plan(LayerSpec(1536, 2048, scheme, ActivationScheme(act), out_dtype=act, num_experts=8), "h200")
        cfg = dict(p.kernel(1024).config)
        assert cfg["BM"] == 256 and cfg["WG"] and cfg["XGATHER"] and not cfg["TMA"], cfg
        picks[p.kernel(1024)] = (scheme.describe(), act)
    rt.warmup(list(picks), executor="thread")
    for spec, what in picks.items():
        kern = rt.kernel(spec)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (what, usage)


def test_planned_65_to_512_token_warpgroup_kernels_do_not_spill(tmp_path):
    """The warpgroup kernels the planner picks for 65-512 tokens on the H200 (wgmma_tile's tiles of 16-bit operands
    for every code, 128-256 tokens, wave_steps' too, their K splits; byte_wgmma_tile's on 2049-4096 rows), for
    integer, float, zero-point and 8-bit codes in fp16 and bf16, compile for sm_90a without local memory, with the
    warpgroup MMA of their tile (HGMMA, or IGMMA / QGMMA for byte operands). W4A8 with integer zero points in groups
    of 64 included:
    it ran mma.sync's BYTE_TILE_LARGE, which spilled, until its warpgroup tiles folded two partial sets per block
    (the 128-token one with TMA stages, retiring each block's group before dequantizing the next: WAIT_FIRST)."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    tok8 = ActivationScheme("int8", "dynamic_token")
    cases = [(WeightScheme("int4", "group", 128), "fp16"), (WeightScheme("uint4", "group", 64, zero_point="int"), "bf16"),
             (WeightScheme("uint3", "group", 32, zero_point="float"), "fp16"), (WeightScheme("int5", "group", 128), "bf16"),
             (WeightScheme("e4m3", "channel", scale_fmt="fp32"), "bf16"), (WeightScheme("int2", "group", 128), "fp16"),
             (WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), "bf16"), (WeightScheme("int4", "group", 128), tok8),
             (WeightScheme("e4m3", "channel", scale_fmt="fp32"), ActivationScheme("e4m3", "dynamic_token")),
             (WeightScheme("uint4", "group", 64, zero_point="int"), tok8)]
    picks = {}
    for scheme, act in cases:
        act_s = act if isinstance(act, ActivationScheme) else ActivationScheme(act)
        out = "fp16" if act_s.is_quantized else act_s.fmt
        for n, k in ((4096, 12288), (8192, 8192), (4096, 4096)):
            p = humming.plan(LayerSpec(n, k, scheme, act_s, out_dtype=out), "h200")
            for m in (100, 200, 300, 350, 400, 500):
                tile = G.tile_from_config(p.tuning_for(m).config)
                assert tile.wgmma, (scheme.describe(), n, k, m)
                picks.setdefault(p.kernel(m), (scheme.describe(), act_s.fmt, n, k, m, tile))
    assert {t.bm for *_, t in picks.values()} >= {64, 128, 160, 192, 224, 256}
    rt.warmup(list(picks), executor="thread")
    for spec, what in picks.items():
        kern = rt.kernel(spec)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        sass = I.disassemble(kern.cubin)
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0 and usage["REG"] <= 255, (what, usage)
        assert I.count(sass, rf"[HIQ]GMMA\.64x{what[-1].bm}x(16|32)\.") > 0, what


def test_one_token_rings_of_2_bit_fp4_and_per_channel_codes_do_not_spill(tmp_path):
    """One token over a short K: 2-bit codes (groups and per channel) on the register rings ring2_short_tile
    picks on the H200, and int4 per channel on the short-K ring of four slots (eight spilled 8-32 bytes in their
    loops; groups: test_planned_decode_kernels_keep_their_loops_in_registers), keep their loops in registers (a
    spill of 8 bytes outside them at most, where noted); so do NVFP4 and MXFP4 (two
    MMA chains, and a one-token copy of the loop whose folds take half the FMAs) on fp4_one_tile's rings of 32-112
    rows, whose loops dequantize the e2m1 codes from layout v5's fields: at most 7 logic ops per MMA (6 per four
    pairs and a few besides; 8.9 from the nibbles of v4)."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    for dev, scheme, n, stack in (("h200", WeightScheme("int2", "group", 128), 4096, 0),
                                  ("h200", WeightScheme("int2", "channel", scale_fmt="fp32"), 14336, 0),
                                  ("h200", WeightScheme("int4", "channel", scale_fmt="fp32"), 4096, 0),
                                  ("a100", WeightScheme("int4", "channel", scale_fmt="fp32"), 4096, 0),
                                  ("h200", WeightScheme("e2m1", "group", 16, scale_fmt="e4m3"), 8192, 0),
                                  ("h200", WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), 8192, 0),
                                  ("h200", WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), 14336, 8)):
        p = humming.plan(LayerSpec(n, 4096, scheme), dev)
        assert G.tile_from_config(p.tuning[0].config).stream == 4, (dev, scheme.describe(), p.tuning[0])
        kern = rt.kernel(p.kernel(1))
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] <= stack, (dev, scheme.describe(), n, usage)
        code = I.disassemble(kern.cubin)
        assert all(I.count(b, r"^(LDL|STL)") == 0 for b in loop_bodies(code))
        if scheme.fmt == "e2m1":
            loop = main_loop(code)
            assert I.count(loop, r"^LOP3") <= 7 * I.count(loop, r"^HMMA"), (scheme.describe(), loop)
            # groups of 32 (ONE_FOLD): one token's copy of the loop folds its column only, half the FFMAs
            ffma = sorted({I.count(b, r"^FFMA") for b in loop_bodies(code) if I.count(b, r"^HMMA") >= 16})
            assert ffma == ([16, 32] if scheme.group_size == 32 else [64]), (scheme.describe(), n, ffma)


def test_lazy_correction_build_of_one_token_rings(tmp_path, monkeypatch):
    """HUMMING_GEMM_DEFINES adds preprocessor defines to the kernels of a weight's recipe (diagnostic builds, not
    planned). HUMMING_LAZY_CORR: the one-token loops of 1- and 2-bit codes (one_corr_cols) leave the correction's
    quad sums to the end. The H200's one-token int2 g128 ring drops 191 -> 176 loop instructions (FADD and SHFL
    out, four FFMAs in), no stack; the plain build's machine code is the same as without the variable."""
    from humming.device import get_device
    from humming_nvidia import gemm_mma_sync as G

    monkeypatch.delenv("HUMMING_GEMM_DEFINES", raising=False)
    assert G.gemm_defines() == ()
    monkeypatch.setenv("HUMMING_GEMM_DEFINES", "HUMMING_LAZY_CORR, X_Y=3")
    assert G.gemm_defines() == (("HUMMING_LAZY_CORR", "1"), ("X_Y", "3"))
    monkeypatch.setenv("HUMMING_GEMM_DEFINES", "3X")
    with pytest.raises(ValueError, match=r"HUMMING_GEMM_DEFINES: expected NAME or NAME=VALUE.*'3X'"):
        G.gemm_defines()

    rt = Runtime(cache_dir=tmp_path)
    hw = get_device("H200")
    loops = {}
    for defines in ("", "HUMMING_LAZY_CORR"):
        monkeypatch.setenv("HUMMING_GEMM_DEFINES", defines)
        p = humming.plan(LayerSpec(8192, 8192, WeightScheme("int2", "group", 128), ActivationScheme("fp16"),
                                   out_dtype="fp16"), hw)
        spec = p.kernel(1)
        assert dict(spec.defines) == ({"HUMMING_LAZY_CORR": "1"} if defines else {}), spec.defines
        assert G.recipe_from_plan(p, hw).defines == spec.defines
        kern = rt.kernel(spec)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (defines, usage)
        loops[defines] = main_loop(I.disassemble(kern.cubin))
    plain, lazy = loops[""], loops["HUMMING_LAZY_CORR"]
    assert I.count(lazy, r"^HMMA") == I.count(plain, r"^HMMA") == 18
    assert I.count(plain, r"^SHFL") == 8 and I.count(lazy, r"^SHFL") == 0
    assert I.count(lazy, r"^FADD") < I.count(plain, r"^FADD")
    n = lambda loop: len([ln for ln in loop.splitlines() if ln.strip()])  # noqa: E731
    assert n(lazy) <= n(plain) - 12, (n(plain), n(lazy))


def test_raw_code_rings_take_one_correction_mma_per_chunk_at_one_token(tmp_path):
    """Rings of raw codes whose folds come every 128 columns or more (groups of 128, per channel, zero points too)
    hold a second copy of their loop for one token: the token's activation sums over 256 columns from one MMA of
    ones (one_sums: the B operand 1.0 in every half, the sum over rows by shuffles 4, 8 and 16 lanes apart), so
    that loop holds one MMA per turn of 256 columns besides the weights' (16 + 1 where the other copy holds 32),
    and folds the token's column only (half the register-operand FFMAs; the corrections' FFMAs take immediates).
    The kernel holds fewer than twice the MMAs of a ring without that copy (groups of 64, one block per chunk:
    none of it), on sm_90a and sm_80 alike. 2-bit codes, dequantized in place elsewhere, go raw in that copy
    only: its loops hold no packed fma, and (one magic number per register, Dequant::FIELD_MAGIC) one shift per
    word of codes -- eight 32-bit words per turn, 64 LOP3s -- where a factor per row half took three; their
    correction is one MMA of the constant operand per 128 columns (one_corr_cols), summed over the quad by
    shuffles 1 and 2 lanes apart, not the sums of ones. Nothing spills."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    ones = "0x3c003c00"  # (fp16 1.0, 1.0)
    for target in ("sm_90a", "sm_80"):
        def sass(scheme):
            rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target=target)
            kern = rt.kernel(G.kernel_spec(rec, G.DECODE_INT4_LONG_K))
            assert I.resource_usage(kern.cubin)["humming_entry"]["LOCAL"] == 0, (scheme, target)
            return I.disassemble(kern.cubin)

        def one_token_loops(code):
            return [b for b in loop_bodies(code) if "HMMA" in b and ones in b and "SHFL.BFLY" in b]

        loops = loop_bodies(sass(WeightScheme("int3", "group", 128)))
        one = [b for b in loops if ones in b]
        other = [b for b in loops if ones not in b and "HMMA" in b]
        assert one and other, target
        assert {I.count(b, r"^HMMA") for b in one} == {17} and {I.count(b, r"^HMMA") for b in other} == {32}, target
        assert all(I.count(b, r"^SHFL\.BFLY PT, R\d+, R\d+, 0x10") == 2 for b in one), target
        fold = r"^FFMA R\d+, R\d+(\.reuse)?, R\d+(\.reuse)?, R\d+"  # (the folds' FFMAs: registers only)
        assert 2 * max(I.count(b, fold) for b in one) == min(I.count(b, fold) for b in other), target
        plain = sass(WeightScheme("int3", "group", 64))
        assert plain.count("SHFL.BFLY") == 0 and ones not in plain, target
        for scheme in (WeightScheme("int3", "group", 128), WeightScheme("uint4", "group", 128, zero_point="int"),
                       WeightScheme("int4", "channel", scale_fmt="fp32")):
            code = sass(scheme)
            assert one_token_loops(code), (scheme, target)
            assert plain.count("HMMA") < code.count("HMMA") < 2 * plain.count("HMMA"), (scheme, target)
        plain2, code2 = sass(WeightScheme("int2", "group", 64)), sass(WeightScheme("int2", "group", 128))
        assert plain2.count("SHFL.BFLY") == 0 and ones not in plain2, target
        one = [b for b in loop_bodies(code2) if "HMMA" in b and "SHFL.BFLY" in b]
        assert one and all("HFMA2" not in body and ones not in body for body in one), target
        for body in one:
            assert I.count(body, r"^LOP3") == 64 and I.count(body, r"^SHF\.") + I.count(body, r"^IMAD\.SHL") <= 8, target
            assert I.count(body, r"^SHFL\.BFLY PT, R\d+, R\d+, 0x1,") == I.count(body, r"^SHFL\.BFLY") // 2, target
        assert any("HFMA2" in body for body in loop_bodies(code2)), target  # (the other copy: in place)


@pytest.mark.parametrize("scheme,bf16", [(WeightScheme("int4", "group", 128), False),
                                         (WeightScheme("int4", "channel", scale_fmt="fp32"), True),
                                         (WeightScheme("uint4", "group", 64, zero_point="int"), True),
                                         (WeightScheme("int2", "group", 128), False),
                                         (WeightScheme("int2", "group", 64), True)], ids=lambda v: str(v))
def test_windowed_rings_of_the_batched_decode(tmp_path, scheme, bf16):
    """The H200 plan's 7-8 token kernel over a long K: the long-K register ring with a window of two turns
    of activations per K run (DECODE_INT4_LONG_K_WINDOW), copied through L1 and waited for with a named
    barrier of the run's two warps, its shared memory the window's (8 rows x 4 runs x 2 turns x 4 blocks x
    128 bytes, whatever K), and no local memory."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    act = ActivationScheme("bf16" if bf16 else "fp16")
    p = humming.plan(LayerSpec(8192, 8192, scheme, act, out_dtype=act.fmt), "H200")
    tile = G.tile_from_config(p.tuning_for(8).config)
    assert tile == G.DECODE_INT4_LONG_K_WINDOW == G.tile_from_config(p.tuning_for(7).config), p.tuning
    spec = p.kernel(8)
    window = 8 * tile.wk * tile.xwin * tile.stages * 128
    assert spec.smem_bytes == max(window, -(-G.stream_red_bytes(tile) // 16) * 16) == 32768
    kern = rt.kernel(spec)
    sass = I.instructions(I.disassemble(kern.cubin))
    copies = [line for line in sass if "LDGSTS" in line]
    assert copies and not any("BYPASS" in line for line in copies)
    assert any(re.search(r"BAR\.SYNC\S* R\d+, 0x40", line) for line in sass)
    usage = I.resource_usage(kern.cubin)["humming_entry"]
    assert usage["LOCAL"] == 0 and usage["STACK"] == 0, usage


@pytest.mark.parametrize("weight, group", [("int4", 128), ("int4", 0), ("int8", 0), ("e4m3", 0), ("int2", 128),
                                           ("int3", 128)])
def test_ring_launches_split_for_the_ctas_that_fit(tmp_path, weight, group):
    """A one-token ring tile's (stream 3 or 4) launch splits K for the CTAs per SM that its compiled
    kernel's registers allow (resident_ctas), not for more: on the H200 and A100 plans of the
    issue-6 shapes, the kernel's registers x threads x those CTAs fit the SM's 65536 registers."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    scheme = WeightScheme(weight, "group", group) if group else WeightScheme(weight, "channel", scale_fmt="fp32")
    seen = set()
    for device, target in (("H200", "sm_90a"), ("A100", "sm_80")):
        rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target=target)
        for n, k in ((4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192)):
            plan = humming.plan(LayerSpec(n, k, scheme), device)
            spec = plan.kernel(1)
            tile = G.tile_from_config(plan.tuning_for(1).config)
            if tile.stream < 3 or spec in seen:  # (the rings: stream=1 tiles split by stream_ctas_per_sm)
                continue
            seen.add(spec)
            regs = I.resource_usage(rt.kernel(spec).cubin)["humming_entry"]["REG"]
            ctas = G.resident_ctas(rec, tile, regs)  # (the launcher asks the driver for the registers)
            assert 1 <= ctas <= tile.occupancy and regs * tile.threads * ctas <= 65536, (device, n, k, tile, regs)
            if regs * tile.threads * tile.occupancy <= 65536:
                assert ctas == tile.occupancy
            if G.min_blocks(rec, tile) > 1:  # a lean ring: the estimate without the driver fits too
                assert regs * tile.threads * G.resident_ctas(rec, tile) <= 65536, (device, n, k, tile, regs)
    assert seen, "no ring tile planned"


def _longest_mma_chain(body: str) -> int:
    """The most MMAs in a loop body that each accumulate onto the one before (C = the previous D)."""
    chain, best = {}, 0
    for d, c in re.findall(r"HMMA\.16816\.F32 (R\d+), R\d+(?:\.reuse)?, R\d+(?:\.reuse)?, (R\w+)", body):
        chain[d] = chain.get(c, 0) + 1 if c != "RZ" else 1
        best = max(best, chain[d])
    return best


def test_one_token_loops_keep_two_mma_chains_between_folds_of_256_columns(tmp_path):
    """Where a ring folds every 256 columns (per channel, groups of 256 or more), its one-token loop spreads the
    16 weight MMAs between folds over two accumulator chains (GemmMmaSync::ONE_KC): no MMA waits on more than
    seven before it, where one chain made 16 dependent ones; the copy for more tokens keeps one chain, as does
    the short-K tile of one warp per K run, and groups of 128 (a fold per 128 columns: eight) keep one in both."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)

    def chains(scheme, tile, target):
        rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target=target)
        kern = rt.kernel(G.kernel_spec(rec, tile))
        assert I.resource_usage(kern.cubin)["humming_entry"]["LOCAL"] == 0, (scheme, tile, target)
        loops = [b for b in loop_bodies(I.disassemble(kern.cubin)) if "HMMA" in b]
        one = {_longest_mma_chain(b) for b in loops if "SHFL.BFLY" in b}
        other = {_longest_mma_chain(b) for b in loops if "SHFL.BFLY" not in b}
        return one, other

    for target in ("sm_90a", "sm_80"):
        for scheme in (WeightScheme("int2", "channel", scale_fmt="fp32"), WeightScheme("int4", "channel", scale_fmt="fp32"),
                       WeightScheme("int4", "group", 256)):
            assert chains(scheme, G.DECODE_INT4_LONG_K, target) == ({8}, {16}), (scheme, target)
        assert chains(WeightScheme("int4", "group", 128), G.DECODE_INT4_LONG_K, target) == ({8}, {8}), target
        assert chains(WeightScheme("int4", "channel", scale_fmt="fp32"), G.DECODE_INT4_SHORT_K, target)[0] == {16}, target


@pytest.mark.parametrize("scheme", [WeightScheme("int2", "group", 128), WeightScheme("int2", "group", 256),
                                    WeightScheme("int2", "channel", scale_fmt="fp32")], ids=lambda s: s.describe())
def test_two_bit_register_rings_hold_their_register_floor(tmp_path, scheme):
    """2-bit codes are dequantized on the ring (not raw; raw only in one token's loop, which a floor of 64
    registers leaves out), yet min_blocks budgets them: a ring of 16
    warps for two CTAs per SM compiles within the 64 registers that leaves, without spills, so the
    launch splits K for the two CTAs the tile promises (resident_ctas) and runs in one wave. Without
    the floor it took 107 registers: one CTA per SM, two waves on the H200 (11.1 against 9.7 us).
    Variants outside the budget keep no floor: 2-bit groups of 64 (a fold per block) and 2-bit and
    1-bit codes in bf16 spill at 64 registers."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_90a")
    tile = G.Tile(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2)
    assert not G.lean_stream(rec) and G.stream_work_regs(rec, tile) is not None
    assert G.min_blocks(rec, tile) == 2 and G.resident_ctas(rec, tile) == 2
    usage = I.resource_usage(rt.kernel(G.kernel_spec(rec, tile)).cubin)["humming_entry"]
    assert usage["REG"] <= 64 and usage["LOCAL"] == 0 and usage["STACK"] == 0, usage
    assert G.resident_ctas(rec, tile, usage["REG"]) == 2
    for fmt, group, bf16 in (("int2", 64, False), ("int2", 128, True), ("int1", 128, True)):
        other = G.recipe_for(WeightScheme(fmt, "group", group), bf16=bf16, out_bf16=bf16, caps_cp_async=True,
                             k8mma=False, target="sm_90a")
        assert G.stream_work_regs(other, tile) is None and G.min_blocks(other, tile) == 1


def test_traced_builds_stamp_the_timeline_only_when_asked(tmp_path):
    """HUMMING_TRACE builds (scripts/gpu_trace.py) of a ring tile and a warpgroup tile read the global
    timer at their events (entry, the wait, the staged activations for the ring, the loop's end, the
    split-K sum, exit); the planner's builds hold no timer read, and the trace pointer sits where the
    kernel's struct has it (the parameters' size is unchanged)."""
    import ctypes

    from humming_nvidia import gemm_mma_sync as G

    assert G.GemmParams.trace.offset == 112 and G.GemmParams.tma_rows.offset == 120 and ctypes.sizeof(G.GemmParams) == 320
    rt = Runtime(cache_dir=tmp_path)
    rec = G.recipe_for(WeightScheme("int4", "group", 128), bf16=False, out_bf16=False, caps_cp_async=True,
                       k8mma=False, target="sm_90a")
    traced = dataclasses.replace(rec, defines=(("HUMMING_TRACE", "1"),))
    # (the split-K sum's stamp sits in both of its paths: the workspace's and the cluster's, the workspace's
    # with three more inside it: fenced, thread 0's sums done, every thread's; a cp.async
    # warpgroup tile's wait in both of its prologues: unsplit launches copy weights first, split ones not;
    # the raw-code ring's wait and staged activations in both copies of its prologue and loop: one token's
    # (one_corr) and the others')
    for tile, events in ((G.Tile(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2), 12),
                         (G.Tile(8, 64, 256, 1, 4, 1, 4, wgmma=1, fold=1), 10)):
        assert "GLOBALTIMER" not in I.disassemble(rt.kernel(G.kernel_spec(rec, tile)).cubin)
        sass = I.disassemble(rt.kernel(G.kernel_spec(traced, tile)).cubin)
        assert sass.count("SR_GLOBALTIMER") == events, tile


def test_programmatic_dependent_launch_machine_code(tmp_path, monkeypatch):
    """Hopper kernels let the next kernel launch (PREEXIT) and wait for the previous one (ACQBULK)
    before reading activations or writing: the lean register ring issues its first weight loads
    before that wait, the warpgroup tiles wait first. Older targets have neither, and their launches
    never ask for it (a kernel without the wait must not overlap its predecessor); HUMMING_PDL=0
    turns it off."""
    from humming.device import get_device
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    scheme = WeightScheme("int4", "group", 128)
    ring = humming.plan(LayerSpec(8192, 8192, scheme), "H200")
    tile = G.tile_from_config(ring.tuning_for(1).config)
    assert tile.stream == 4
    sass = I.disassemble(rt.kernel(ring.kernel(1)).cubin).splitlines()
    at = {op: next(i for i, line in enumerate(sass) if re.search(rf"\b{op}\b", line)) for op in ("PREEXIT", "ACQBULK")}
    assert at["PREEXIT"] < at["ACQBULK"]
    # the ring's first blocks (a 128-bit load each) and their group scales, then the activations after the wait
    ahead = [line for line in sass[:at["ACQBULK"]] if re.search(r"\bLDG\.", line)]
    assert sum(1 for line in ahead if ".128" in line) >= tile.stages - 1 and len(ahead) > tile.stages - 1
    assert not any(re.search(r"\bLDGSTS\b", line) for line in sass[:at["ACQBULK"]])
    wg = rt.kernel(ring.kernel(64))
    sass = I.disassemble(wg.cubin).splitlines()
    wait = next(i for i, line in enumerate(sass) if re.search(r"\bACQBULK\b", line))
    assert not any(re.search(r"\b(LDG|UTMALDG|UBLKCP|LDGSTS|STG)\b", line) for line in sass[:wait])
    assert ring.components["scheduler"] == SCHED_H200, \
        ring.components
    ampere = humming.plan(LayerSpec(8192, 8192, scheme), "A100")
    assert "programmatic" not in ampere.components["scheduler"]
    sass = I.disassemble(rt.kernel(ampere.kernel(1)).cubin)
    assert "ACQBULK" not in sass and "PREEXIT" not in sass
    h200, a100 = get_device("h200"), get_device("a100")
    assert G.pdl_enabled(h200.caps) and not G.pdl_enabled(a100.caps)
    monkeypatch.setenv("HUMMING_PDL", "0")
    assert not G.pdl_enabled(h200.caps)
    rec80 = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_80")
    assert not G.Launcher(None, [], 132, pdl=True).pdl
    import torch
    from humming import reference as R

    pw = G.pack_weight(R.quantize(torch.randn(256, 512) * 0.02, scheme), rec80, "cpu")
    assert not G.Launcher(pw, [(1, None, G.Tile())], 108, pdl=True).pdl


def test_native_cvt_recipes_and_packing():
    """Plans of e4m3 weights on fp16 operands say native_cvt where the chip converts e4m3 in one
    instruction (sm_89 on) and the recipe follows them; the packed codes are the same and only the output
    multiplier loses the re-bias' 2^(15 - 7). Other pairs asking for the cvt are refused, saying which
    pairs it takes."""
    import torch
    from humming import reference as R
    from humming.device import Device
    from humming.errors import UnsupportedError
    from humming_nvidia import gemm_mma_sync as G

    scheme = WeightScheme("e4m3", "channel", scale_fmt="fp32")
    recs = {}
    for dev, cvt in (("H200", True), ("L40S", True), ("A100", False)):
        p = humming.plan(LayerSpec(256, 512, scheme), dev)
        assert (p.components["dequantizer"] == "native_cvt") == cvt, (dev, p.components)
        recs[dev] = G.recipe_from_plan(p, Device.named(dev))
        assert recs[dev].fcvt == cvt
    qw = R.quantize(torch.randn(256, 512) * 0.02, scheme)
    a = G.pack_weight(qw, recs["H200"], "cpu")
    b = G.pack_weight(qw, dataclasses.replace(recs["H200"], fcvt=False), "cpu")
    assert torch.equal(a.w, b.w) and a.out_mul * 2.0 ** 8 == b.out_mul
    bf16 = humming.plan(LayerSpec(256, 512, scheme, ActivationScheme("bf16"), out_dtype="bf16"), "H200")
    assert bf16.components["dequantizer"] == "float_rebias"
    with pytest.raises(UnsupportedError, match="native_cvt converts e4m3 into fp16"):
        G.recipe_for(WeightScheme("e5m2", "channel"), bf16=False, out_bf16=False, caps_cp_async=True,
                     k8mma=False, target="sm_90a", fcvt=True)


def test_crowded_warpgroup_launches_go_plainly():
    """Launcher.crowded: a warpgroup launch (K slices included) goes plainly when an SM could hold more of its
    CTAs than its even share -- the 28672x8192 3-bit tile at 5-8 tokens (224 CTAs, three per SM on the H200),
    and grids of at most one CTA per SM where two or more fit (4096x14336 int4 at 65-512 tokens: 128 CTAs) --
    and programmatically otherwise (two per SM; 384 CTAs of three K slices on 132 SMs; at most one CTA per
    SM fits). Only the CTAs per SM count, here set as a sweep sets them."""
    import torch
    from humming import reference as R
    from humming_nvidia import gemm_mma_sync as G

    scheme = WeightScheme("int3", "group", 128)
    rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_90a")
    pw = G.pack_weight(R.quantize(torch.randn(256, 512) * 0.02, scheme), rec, "cpu")
    L = G.Launcher(pw, [(1, None, G.WG_DECODE_TWO)], 132, pdl=True)
    for per_sm, ctas, crowded in ((3, 224, True), (2, 224, False), (3, 384, False), (3, 256, True), (4, 384, True),
                                  (3, 132, True), (16, 100, True), (2, 128, True), (1, 128, False), (1, 448, False)):
        L.ctas_per_sm = per_sm
        assert L.crowded(G.WG_DECODE_TWO, None, ctas) == crowded, (per_sm, ctas)


def test_split_k_cluster_sum(tmp_path, monkeypatch):
    """Split-K slices launched as one cluster sum the tile through distributed shared memory: the sm_90a
    kernels (ring, mma.sync and warpgroup tiles) hold the two cluster barriers, the second without a
    memory barrier ahead of it (it orders only reads), and no spills; sm_80 kernels hold none. The
    launcher clusters at most the capability file's portable cluster size of slices, on sm_90+ targets,
    unless HUMMING_CLUSTER_SPLIT is 0, and up to HUMMING_CLUSTER_MAX_PER_SM CTAs per SM where set."""
    import torch
    from humming import reference as R
    from humming.device import get_device
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    scheme = WeightScheme("int4", "group", 128)
    for target, tiles in (("sm_90a", (G.DECODE_INT4_LONG_K, G.TILE_16, G.WG_16_DEEP, G.WG_64_TMA)),
                          ("sm_80", (G.DECODE_INT4_LONG_K, G.TILE_16))):
        rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target=target)
        for t in tiles:
            k = rt.kernel(G.kernel_spec(rec, t))
            sass = [line for line in I.disassemble(k.cubin).splitlines() if ";" in line]  # (instructions)
            arrive = [i for i, line in enumerate(sass) if "UCGABAR_ARV" in line]
            assert I.resource_usage(k.cubin)["humming_entry"]["LOCAL"] == 0
            if target == "sm_80":
                assert not arrive, t
                continue
            assert len(arrive) == 2 and sum("UCGABAR_WAIT" in line for line in sass) == 2, t
            assert any("MEMBAR" in line for line in sass[arrive[0] - 4:arrive[0]])  # (release: the partial tile)
            assert not any("MEMBAR" in line for line in sass[arrive[1] - 8:arrive[1]])
            assert I.count("\n".join(sass), r"\bLD\.E\.128\b") >= 1  # (the peers' quads)
    assert G.cluster_split_limit(get_device("h200").caps) == 8
    assert G.cluster_split_limit(get_device("a100").caps) == 0
    assert G.cluster_split_limit(get_device("zhenwu-810e").caps) == 0
    monkeypatch.setenv("HUMMING_CLUSTER_SPLIT", "0")
    assert G.cluster_split_limit(get_device("h200").caps) == 0
    rec80 = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_80")
    pw = G.pack_weight(R.quantize(torch.randn(256, 512) * 0.02, scheme), rec80, "cpu")
    assert G.Launcher(pw, [(1, None, G.Tile())], 108, cluster_split=8).cluster_split == 0
    assert G.cluster_max_ctas_per_sm() == G.CLUSTER_MAX_CTAS_PER_SM
    monkeypatch.setenv("HUMMING_CLUSTER_MAX_PER_SM", "4")
    assert G.cluster_max_ctas_per_sm() == 4.0
    assert G.Launcher(pw, [(1, None, G.Tile())], 108, cluster_split=8).cluster_max_per_sm == 4.0
    monkeypatch.setenv("HUMMING_CLUSTER_MAX_PER_SM", "many")
    with pytest.raises(ValueError, match="HUMMING_CLUSTER_MAX_PER_SM.*'many'"):
        G.cluster_max_ctas_per_sm()


def test_split_k_fits_clusters_where_the_workspace_would_sum(monkeypatch):
    """A warpgroup launch of 16-bit operands and at most 64 tokens per tile whose K split would exceed the
    clusters' CTAs per SM (so its slices would meet in the workspace) splits as many ways as clusters hold, summed
    in clusters, where that is two or more slices of at most FIT_MAX_SLICE_K columns (FIT_16_MAX_SLICE_K for
    16-token tiles) and the driver holds every cluster at once (Launcher.cluster_fit_split); not for 128-token
    tiles, mma.sync ones or byte operands, not where it would not split fewer ways, not with
    HUMMING_CLUSTER_FIT=0."""
    import torch
    from humming import reference as R
    from humming_nvidia import gemm_mma_sync as G
    from humming_nvidia import mma_sync_launch as LM

    scheme = WeightScheme("int4", "group", 128)
    rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_90a")
    pw = G.pack_weight(R.quantize(torch.randn(256, 512) * 0.02, scheme), rec, "cpu")
    held = {"clusters": 1 << 20}
    monkeypatch.setattr(LM, "_resident_clusters", lambda lp, smem, cz: held["clusters"])
    L = G.Launcher(pw, [(1, None, G.WG_64_TMA)], 132, cluster_split=8)
    fit = L.cluster_fit_split
    # (8192x8192 at 64 tokens: 128 tiles of 64 rows, 64 K steps of 128, three slices -> two in clusters)
    assert fit(None, G.WG_64_TMA, 128, 64, 3, 0) == 2
    assert fit(None, G.WG_32_DEEP, 128, 32, 3, 0) == 2
    assert fit(None, G.WG_64_TMA, 111, 64, 3, 0) == 2  # (330 // 111)
    assert fit(None, G.WG_64_TMA, 84, 32, 4, 0) == 3  # (5376x4096)
    assert fit(None, G.WG_16_DEEP, 128, 32, 3, 0) == 0  # (16-token tiles: not over slices of 4096 columns)
    assert fit(None, G.WG_16_DEEP, 128, 16, 3, 0) == 2  # (... but of 2048: 8192x4096)
    assert fit(None, G.WG_128, 128, 32, 3, 0) == 0  # (128-token tiles: not measured so)
    assert fit(None, G.WG_64_TMA, 128, 224, 3, 0) == 0  # (slices of 14336 columns lost so)
    assert fit(None, G.WG_64_TMA, 128, 65, 3, 0) == 0  # (33 steps of 128: past 4096 columns)
    assert fit(None, G.WG_64_TMA, 64, 32, 5, 0) == 0  # (five slices of 64 tiles fit clusters already)
    assert fit(None, G.WG_64_TMA, 200, 32, 2, 0) == 0  # (one slice: no sum to fit)
    assert fit(None, G.WG_64_TMA, 128, 3, 3, 0) == 2  # (no empty slices: 2 + 1 steps)
    assert fit(None, G.TILE_16, 128, 32, 3, 0) == 0  # (mma.sync tiles: not measured so)
    held["clusters"] = 127
    assert fit(None, G.WG_64_TMA, 128, 64, 3, 0) == 0  # (not every cluster resident: the workspace)
    held["clusters"] = 1 << 20
    rec8 = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_90a", op8=1)
    pw8 = G.pack_weight(R.quantize(torch.randn(256, 512) * 0.02, scheme), rec8, "cpu")
    L8 = G.Launcher(pw8, [(1, None, G.WG_64)], 132, cluster_split=8)
    assert L8.cluster_fit_split(None, G.WG_64, 128, 16, 3, 0) == 0  # (byte operands: not measured so)
    assert fit(None, G.WG_64, 128, 64, 3, 0) == 2  # (the same tile on 16-bit operands)
    assert G.Launcher(pw, [(1, None, G.WG_64_TMA)], 132, cluster_split=0).cluster_fit_split(
        None, G.WG_64_TMA, 128, 64, 3, 0) == 0  # (no clusters: sm_80 kernels, HUMMING_CLUSTER_SPLIT=0)
    monkeypatch.setenv("HUMMING_CLUSTER_FIT", "0")
    assert G.Launcher(pw, [(1, None, G.WG_64_TMA)], 132, cluster_split=8).cluster_fit_split(
        None, G.WG_64_TMA, 128, 64, 3, 0) == 0
    # (... and where the driver cannot hold every cluster of a split that clusters may hold: the most slices, three or
    # more, whose clusters it holds, Launcher.cluster_fallback_split; the H100's counts for a 100 KB tile)
    held_by = {2: 132, 3: 79, 4: 62, 5: 47, 6: 39, 7: 32, 8: 30}
    monkeypatch.setattr(LM, "_resident_clusters", lambda lp, smem, cz: held_by[cz])
    monkeypatch.delenv("HUMMING_CLUSTER_FIT")
    back = G.Launcher(pw, [(1, None, G.WG_32_DEEP)], 132, cluster_split=8).cluster_fallback_split
    assert back(None, G.WG_32_DEEP, 32, 16, 8, 0) == 6   # (2048x4096: 16 steps, 8 -> 6 slices of three)
    assert back(None, G.WG_32_DEEP, 32, 32, 8, 0) == 7   # (2048x8192)
    assert back(None, G.WG_32_DEEP, 40, 32, 6, 0) == 5   # (2560x8192: six hold 39 clusters, five 47)
    assert back(None, G.WG_32_DEEP, 64, 16, 4, 0) == 3   # (4096x4096)
    assert back(None, G.WG_32_DEEP, 80, 32, 3, 0) == 0   # (two slices lost: 2560x8192 at 64 tokens)
    assert back(None, G.WG_32_DEEP, 90, 32, 4, 0) == 0   # (three hold 79 clusters)
    assert back(None, G.WG_32_DEEP, 48, 32, 6, 0) == 4   # (five hold 47)
    assert back(None, G.WG_32_DEEP, 64, 56, 4, 0) == 0   # (4096x14336: three slices of 19 steps, 4864 columns)
    assert back(None, G.WG_32_DEEP, 64, 32, 4, 0) == 0   # (4096x8192: three of 11, 2816 columns: not measured)
    assert back(None, G.WG_32_DEEP, 48, 32, 5, 0) == 4   # (3072x8192: four of 8, 2048 columns)
    assert back(None, G.WG_128, 32, 16, 8, 0) == 0 and back(None, G.TILE_16, 32, 16, 8, 0) == 0
    assert L8.cluster_fallback_split(None, G.WG_32_DEEP, 32, 16, 8, 0) == 0  # (byte operands)


def test_cluster_tiles_machine_code(tmp_path):
    """TMA tiles in clusters of 2 and 4 CTAs along N: the kernel carries its cluster shape, loads its
    share of each stage's activation rows with multicast tensor copies, arrives on every cluster CTA's
    empty barriers, and spills nothing; the launcher refuses a layer whose row blocks the cluster does
    not divide, and the tile checks its rows split into whole swizzle atoms."""
    from humming_nvidia import gemm_mma_sync as G

    rt = Runtime(cache_dir=tmp_path)
    rec = G.recipe_for(WeightScheme("int4", "group", 128), bf16=False, out_bf16=False, caps_cp_async=True,
                       k8mma=False, target="sm_90a")
    for c in (2, 4):
        t = G.Tile(64, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, chains=2, cluster=c)
        spec = G.kernel_spec(rec, t)
        assert spec.cluster == c and f"__cluster_dims__({c}, 1, 1)" in render(spec)
        k = rt.kernel(spec)
        sass = I.disassemble(k.cubin)
        assert I.count(sass, r"UTMALDG\.2D\.MULTICAST") >= 2 and I.count(sass, r"UTMALDG\.2D ") == 0
        assert I.count(sass, r"SYNCS\.ARRIVE\.TRANS64\.RED") >= 1 and I.count(sass, r"UCGABAR_WAIT") == 2
        assert I.resource_usage(k.cubin)["humming_entry"]["LOCAL"] == 0
        assert G.tma_box_rows(t, 64) == 64 // c and G.tma_box_rows(t, 33) == 8 * -(-33 // (8 * c))
        assert G.tile_from_config(t.to_dict()) == t
    with pytest.raises(ValueError, match="cluster"):
        G.Tile(16, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, cluster=4).check()  # 4 rows per CTA
    with pytest.raises(ValueError, match="cluster"):
        G.Tile(64, 64, 128, 1, 4, 1, 4, wgmma=1, cluster=2).check()  # cp.async stages
    import torch
    from humming import reference as R

    pw = G.pack_weight(R.quantize(torch.randn(384, 512) * 0.02, WeightScheme("int4", "group", 128)), rec, "cpu")
    with pytest.raises(ValueError, match="clusters of 4"):
        G.Launcher(pw, [(1, None, G.Tile(64, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, cluster=4))], 132)


@pytest.mark.parametrize("device", ["T4", "A100", "L40S", "H200"])
def test_plan_says_where_the_kernels_apply_group_scales(device):
    """The plan's group-scale entry names, per M range, where that range's kernel applies them: the
    fp32 partial sums where its spec has SCALE_ACC (decode and small-M tiles, folded warpgroup tiles),
    the dequantized weights elsewhere; per-channel scales stay in the epilogue."""
    import re as _re

    for scheme in (WeightScheme("int4", "group", 128), WeightScheme("uint4", "group", 32, zero_point="int"),
                   WeightScheme("e4m3", "block", 128, block_n=128)):
        for n, k in ((4096, 4096), (8192, 8192), (28672, 8192)):
            p = humming.plan(LayerSpec(n, k, scheme), device)
            key = next(k for k in p.scales if k.startswith("weight_") and k != "weight_zero_point")
            said = p.scales[key]
            runs = _re.findall(r"(\w+) \(M (\d+)(?:-(\d+))?\)|(\w+) \(M >= (\d+)\)", said) if "(" in said else []
            for r in p.tuning:
                acc = p.kernel(r.lo).get("SCALE_ACC")
                if not runs:
                    place = said
                else:
                    place = next(a or c for a, lo, hi, c, lo2 in runs
                                 if (a and int(lo) <= r.lo <= int(hi)) or (c and r.lo >= int(lo2)))
                assert place == ("partial_accumulators" if acc else "dequantized_weights"), (device, scheme, n, r, said)
    ch = humming.plan(LayerSpec(4096, 4096, WeightScheme("int4", "channel", scale_fmt="fp32")), device)
    assert ch.scales["weight_channel"] == "epilogue"


def test_fp8_group_activation_kernels_and_their_switch(tmp_path, monkeypatch):
    """fp8 weights and activations in groups of 128 values: e4m3 warpgroup MMAs at every M whose kernels fold the
    activation group scales (ACT_SCALE 3, AGROUP), copied into each stage (XS_ROWS rows, which smem_bytes counts),
    and compile for sm_90a without local memory, the 128-token tiles on TMA stages; HUMMING_BYTE_GROUP_ACTS=0 keeps
    bf16 operands (the planner's reason names it); tiles that cannot fold them are refused with the reason."""
    from humming.errors import UnsupportedError
    from humming.planner import clear_cache
    from humming_nvidia import gemm_mma_sync as G

    layer = LayerSpec(7168, 2048, WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"),
                      ActivationScheme("e4m3", "dynamic_group", 128), out_dtype="bf16")
    monkeypatch.setenv("HUMMING_BYTE_GROUP_ACTS", "0")
    clear_cache()
    try:
        p = humming.plan(layer, "h200")
        assert p.compute.a == "bf16" and "HUMMING_BYTE_GROUP_ACTS=0" in p.fallbacks[0].reason, p.explain()
    finally:
        monkeypatch.delenv("HUMMING_BYTE_GROUP_ACTS")
        clear_cache()
    p = humming.plan(layer, "h200")
    assert p.compute.a == "e4m3" and p.scales["activation"] == "partial_accumulators", p.explain()
    specs = {p.kernel(m): m for m in (1, 16, 64, 100, 300)}
    rt = Runtime(cache_dir=tmp_path)
    rt.warmup(list(specs), executor="thread")
    for spec, m in specs.items():
        cfg = dict(spec.config)
        assert cfg["ACT_SCALE"] == 3 and cfg["AGROUP"] == 128 and cfg["WG"] == 1, (m, cfg)
        assert cfg["BM"] < 128 or cfg["TMA"] == 1, (m, cfg)
        kern = rt.kernel(spec)  # (the kernel asserts that the host's smem_bytes holds its stages)
        usage = I.resource_usage(kern.cubin)["humming_entry"]
        assert usage["LOCAL"] == 0 and usage["STACK"] == 0, (m, usage)
        assert I.count(I.disassemble(kern.cubin), r"QGMMA\.64x\d+x32\.F32\.E4M3\.E4M3") > 0, m
    rec = G.recipe_for(layer.weight, bf16=False, out_bf16=True, caps_cp_async=True, k8mma=False, target="sm_90a",
                       act_scale=3, op8=2, agroup=128)
    with pytest.raises(UnsupportedError, match="activation scales per group of 128 values"):
        G.kernel_spec(rec, G.Tile(64, 128, 64, 2, 4, 1, 4))  # (an mma.sync tile)


@pytest.mark.parametrize("scheme,act", [(WeightScheme("int4", "group", 128), ActivationScheme("bf16")),
                                        (WeightScheme("uint4", "group", 64, zero_point="int"), ActivationScheme("bf16")),
                                        (WeightScheme("e4m3", "channel", scale_fmt="fp32"), ActivationScheme("bf16")),
                                        (WeightScheme("int4", "group", 128), ActivationScheme("int8", "dynamic_token")),
                                        (WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"),
                                         ActivationScheme("e4m3", "dynamic_group", 128))],
                         ids=["int4-bf16", "uint4-zp-bf16", "e4m3-bf16", "w4a8", "mxfp4-a8g128"])
def test_bf16_layers_on_turing_compile(tmp_path, scheme, act):
    """Turing has no bf16 MMA: the planner runs bf16 activations on fp16 operands (gemm converts x) and bf16
    outputs from fp32 sums. Those plans compile for sm_75 at every M range (the epilogue's bf16 packing is software
    there: cvt.bf16x2 needs sm_80; these plans were runnable but did not compile before), on HMMA.1688 pairs."""
    rt = Runtime(cache_dir=tmp_path)
    p = humming.plan(LayerSpec(1000, 1024, scheme, act, out_dtype="bf16", bias=True), "T4")
    assert p.runnable and p.compute.a in ("fp16", "int8"), p.explain()
    if act.fmt == "bf16":
        assert p.activation.convert == "bf16 -> fp16", p.explain()
    for m in (1, 16, 100, 1000):
        spec = p.kernel(m)
        assert spec.target == "sm_75", spec.target
        sass = I.disassemble(rt.kernel(spec).cubin)
        assert ("HMMA.1688.F32" in sass) or ("IMMA" in sass), (m, "no sm_75 tensor-core MMA")


@pytest.mark.parametrize("device", ["T4", "A10", "A100", "L40S", "H200", "B200", "RTX-5090"])
def test_random_draws_compile_for_their_targets(tmp_path, device):
    """The random layers of test_gemm_fuzz_gpu.py as ``device`` plans them (two seeds, every drawn token count):
    every kernel builds for the device's own target, fits its shared memory per block and holds a tensor-core
    MMA. (A runnable plan that does not
    compile -- bf16 outputs on Turing, found this way -- fails here without a GPU; 1446 kernels of such draws on
    nine targets compiled in the sweep that found it.)"""
    from test_gemm_fuzz_gpu import case_for

    rt = Runtime(cache_dir=tmp_path)
    specs = []
    for seed in (0, 1):
        w, a, n, k, bias, out, ms = case_for(seed, device)
        p = humming.plan(LayerSpec(n, k, w, a, out_dtype=out, bias=bias), device)
        specs += [p.kernel(m) for m in ms]
    from humming.device import get_device

    hw = get_device(device)
    target = hw.compile_target("nvrtc")
    limit = hw.caps.limit("smem_per_block_optin") or hw.caps.limit("smem_per_block")
    rt.warmup(specs, executor="thread")
    for spec in dict.fromkeys(specs):
        assert spec.target == target, (spec.target, target)
        assert spec.smem_bytes + 16 <= limit, (device, spec.smem_bytes, limit)
        sass = I.disassemble(rt.kernel(spec).cubin)
        assert re.search(r"\b(HMMA|IMMA|HGMMA|IGMMA|QMMA|QGMMA)\b", sass), (device, spec.target)
