"""The Plan object and the planner's behaviour (the per-chip facts are in test_planner_table.py)."""
from __future__ import annotations

import ast
import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from humming import capabilities as C
from humming import reference as R
from humming.device import Device
from humming.errors import FormatError, UnsupportedError
from humming.planner import MRange, Plan, plan
from humming.planner.planner import DeviceCaps, resolve_device
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme

ROOT = Path(__file__).resolve().parents[1]

W4A16 = LayerSpec(n=4096, k=4096, weight=WeightScheme("uint4", "group", 128), out_dtype="bf16",
                  activation=ActivationScheme("bf16"))
W4A8 = LayerSpec(n=4096, k=4096, weight=WeightScheme("int4", "group", 128),
                 activation=ActivationScheme("e4m3", "dynamic_token"))
#: e2m1 weights with e4m3 activations: the chip multiplies e4m3 natively from sm_89 on; this version's byte-operand
#: kernels make e4m3 operands of e4m3 codes or small integers only (an implementation limit)
FP4A8 = W4A8.replace(weight=WeightScheme("e2m1", "group", 32))

PLAN_KEYS = {"plan_version", "layer", "device", "mode", "compute", "fallbacks", "family", "runnable",
             "not_runnable_reason", "limits", "components", "scales", "weight_layout", "activation", "tuning", "notes",
             "fingerprint"}


def test_plan_is_frozen():
    p = plan(W4A16, "H100")
    assert isinstance(p, Plan)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.family = "wgmma"
    with pytest.raises(TypeError):
        p.components["loader"] = "ldg"
    with pytest.raises(TypeError):
        p.tuning[0].config["bm"] = 1


def test_to_dict_is_json_with_stable_keys():
    p = plan(W4A8, "sm_80")
    d = json.loads(json.dumps(p.to_dict()))
    assert set(d) == PLAN_KEYS
    assert d["plan_version"] == 1
    assert d["fingerprint"] == p.fingerprint()
    assert LayerSpec.from_dict(d["layer"]) == W4A8
    assert d["device"] == {"name": "sm_80", "chain": ["sm_80"]}
    assert d["compute"] == {"activation": "fp16", "weight": "fp16", "accumulator": "fp32",
                            "mma_family": "mma_sync", "mma_kind": None, "native": True, "block_scaled": False}
    assert d["fallbacks"] == [{"from": "e4m3", "to": "fp16", "reason": p.fallbacks[0].reason}]
    assert d["limits"] == [] and d["runnable"] is True
    assert list(d["components"]) == ["loader", "dequantizer", "mma", "scheduler", "epilogue"]
    assert set(d["weight_layout"]) == {"name", "version", "params", "fingerprint"}
    assert set(d["activation"]) == {"quantize", "values", "stored_as", "operand", "convert", "scales"}
    # (16-bit operands: the quantization kernel writes the e4m3 codes' values as fp16)
    assert d["activation"]["stored_as"] == "fp16" and d["activation"]["convert"] == "none"
    assert all(set(r) == {"m_min", "m_max", "config"} for r in d["tuning"])
    assert json.loads(p.to_json()) == d


_FRESH = """
import sys, json, humming
lazy = not any(m in sys.modules for m in ("humming.planner", "humming.capabilities", "humming.plugins"))
from humming.scheme import LayerSpec
p = humming.plan(LayerSpec.from_json(sys.argv[1]), "H20")
print(json.dumps({"lazy": lazy, "fingerprint": p.fingerprint(),
                  "caps": humming.capabilities.load("h20").name,
                  "devices": [d.name for d in humming.devices(detect_gpus=False)]}))
"""


@pytest.fixture(scope="module")
def fresh_process():
    """Facts from a new interpreter (one subprocess for the tests that need one)."""
    out = subprocess.run([sys.executable, "-c", _FRESH, W4A8.to_json()], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return json.loads(out.stdout)


def test_fingerprint_is_stable_across_processes(fresh_process):
    p = plan(W4A8, "H20")
    assert fresh_process["fingerprint"] == p.fingerprint()
    assert p.fingerprint() != plan(W4A8, "H20", families="hardware").fingerprint()
    assert p.weight_layout.fingerprint != plan(W4A16, "H20").weight_layout.fingerprint


def test_lazy_exports(fresh_process):
    assert fresh_process["lazy"]  # import humming loads no planner, capability table or plugin
    assert fresh_process["caps"] == "H20"
    assert "zhenwu-810e" in fresh_process["devices"] and "sm_90" in fresh_process["devices"]


def test_explain_shows_every_decision():
    p = plan(W4A8, "sm_80")
    text = p.explain()
    assert p.fallbacks[0].reason in text
    for slot, variant in p.components.items():
        assert re.search(rf"{slot}\s+{re.escape(variant)}", text)
    for r in p.tuning:
        assert r.label() in text
    assert "e4m3 -> fp16" in text and p.weight_layout.fingerprint in text and p.fingerprint() in text
    hw = plan(W4A8, "sm_90", families="hardware")
    assert "runnable    no: kernel family wgmma (nvidia) is declared for sm_90" in hw.explain()
    limited = plan(FP4A8, "sm_89", families="hardware").explain()
    assert re.search(r"limits +this version's mma_sync kernels cannot run this layer:\n +- .*e4m3 MMAs take e4m3 "
                     r"weight codes as they are", limited)
    assert "runnable    no: implementation limits" in limited


def test_implementation_limits_walk_on_with_the_implemented_families():
    # sm_89 multiplies e4m3 natively (check passes); this version's mma_sync kernels do not for e2m1 codes (limits)
    p = plan(FP4A8, "sm_89")
    assert (p.compute.a, p.family, p.runnable, p.limits) == ("fp16", "mma_sync", True, ())
    (step,) = p.fallbacks
    assert (step.src, step.dst) == ("e4m3", "fp16")
    assert "mma_sync (nvidia) implementation limit for e4m3 x e4m3" in step.reason
    assert "e4m3 values are exact in fp16" in step.reason
    assert "no e4m3" not in step.reason  # the hardware has it: only the implementation is missing
    assert step.reason in p.explain()


def test_implementation_limits_make_a_hardware_plan_not_runnable():
    hw = plan(FP4A8, "sm_89", families="hardware")
    assert (hw.compute.a, hw.family, hw.implemented, hw.fallbacks) == ("e4m3", "mma_sync", True, ())
    assert not hw.runnable and hw.limits
    assert any("e4m3 MMAs take e4m3 weight codes as they are; found e2m1 weights" in r for r in hw.limits)
    assert hw.not_runnable_reason.startswith("kernel family mma_sync (nvidia) cannot run this layer in this version")
    assert all(r in hw.not_runnable_reason for r in hw.limits)
    assert hw.to_dict()["limits"] == list(hw.limits)
    with pytest.raises(UnsupportedError, match="not runnable"):
        hw.kernel(16)
    # a layer the implementation runs has no limits in either mode
    for mode in ("hardware", "implemented"):
        ok = plan(W4A16, "sm_89", families=mode)
        assert ok.runnable and ok.limits == () and "limits " not in ok.explain()


def test_moe_runs_on_mma_sync_act_order_without_group_activations():
    moe = W4A16.replace(num_experts=8)
    p = plan(moe, "A100")
    assert p.family == "mma_sync" and p.runnable and p.components["scheduler"] == "moe_grouped"
    ao = moe.replace(weight=moe.weight.replace(act_order=True))
    pa = plan(ao, "A100")
    assert pa.runnable and any("each expert's own" in n for n in pa.notes)
    grouped = ao.replace(activation=ActivationScheme("int8", "dynamic_group", 128))
    with pytest.raises(UnsupportedError) as e:
        plan(grouped, "A100")
    assert any("MoE weights with act order take no per-group activation scales" in r for r in e.value.reasons)
    hw = plan(grouped, "A100", families="hardware")
    assert hw.family == "mma_sync" and not hw.runnable and hw.components["scheduler"] == "moe_grouped"


def test_plans_are_cached_per_layer_device_and_mode():
    a = plan(W4A16, "H20")
    assert plan(W4A16, "h20") is a                      # aliases resolve to the same table
    assert plan(W4A16, Device.named("H20")) is a
    assert plan(W4A16, "H20", families="hardware") is not a
    assert plan(W4A16.replace(n=2048), "H20") is not a


def _ranges_are_contiguous(p):
    assert 3 <= len(p.tuning) <= 5
    assert p.tuning[0].lo == 1 and p.tuning[-1].hi is None
    for a, b in zip(p.tuning, p.tuning[1:]):
        assert b.lo == a.hi + 1
    for m in (1, 16, 17, 64, 65, 300, 10**6):
        assert p.tuning_for(m).contains(m)
    with pytest.raises(ValueError, match="positive integer"):
        p.tuning_for(0)


def test_tuning_covers_every_m_with_kernel_tiles():
    from humming_nvidia import gemm_mma_sync as G

    p = plan(W4A16, "A100")
    _ranges_are_contiguous(p)
    recipe = G.recipe_from_plan(p, Device.named("A100"))
    for r in p.tuning:
        tile = G.tile_from_config(r.config)  # the mma_sync kernel's own Tile
        assert tile is not None, r.config
        tile.check()
        assert 4096 % tile.bk == 0 and tile.stages >= 2
        assert G.smem_bytes(recipe, tile) <= C.load("A100").limit("smem_per_block_optin")


def test_tile_rows_divide_the_padded_weight_rows(monkeypatch):
    # a CTA reads BN rows of packed weights (padded to 128 rows): a 256-row tile on a layer of
    # 4224 rows would read 128 rows past the buffer, so the planner keeps 128-row tiles there
    # and the launcher refuses such a tile by name
    from humming.planner import clear_cache
    from humming_nvidia import gemm_mma_sync as G

    # (and the 256-row tile of sixteen warps over a short K, WG_256_WIDE: 8320, 6016 and 5248 rows, as the GPU test of
    # the seventy-sixth session found, on the H100)
    for dev in ("A100", "RTX4090", "H100", "H200"):
        for n in (4224, 5120, 5248, 6016, 7392, 8192, 8320, 12416):
            for k in (W4A16.k, 512, 1536, 2048):
                for wave in ("0", "1"):
                    monkeypatch.setenv("HUMMING_WAVE_WIDE", wave)
                    clear_cache()
                    p = plan(W4A16.replace(n=n, k=k), dev)
                    np_ = G.padded_n(n)
                    bns = {G.tile_from_config(r.config).bn for r in p.tuning}
                    assert all(np_ % bn == 0 for bn in bns), (dev, n, k, wave, bns)
    monkeypatch.delenv("HUMMING_WAVE_WIDE")
    clear_cache()
    assert G.tile_from_config(plan(W4A16.replace(n=8192, k=512), "H200").tuning_for(1024).config) == G.WG_256_WIDE
    # (and byte operands' 128 x 256 tile above 512 tokens, BYTE_WG_LARGE: int4 / int2 per channel with int8 or int4
    # activations on Hopper, found by the planner fuzz's launcher check in the seventy-sixth session -- 3696 rows,
    # a tensor-parallel shard, pad to 3712)
    int8 = ActivationScheme("int8", "dynamic_token")
    per_channel = W4A8.replace(weight=WeightScheme("int4", "channel", scale_fmt="fp32"), activation=int8)
    for dev in ("H100", "H200", "H20"):
        for n in (3696, 4224, 5248, 8192, 12416):
            for act in (int8, ActivationScheme("int4", "dynamic_token")):
                p = plan(per_channel.replace(n=n, k=1536, activation=act), dev)
                bns = {G.tile_from_config(r.config).bn for r in p.tuning}
                assert all(G.padded_n(n) % bn == 0 for bn in bns), (dev, n, act.describe(), bns)
    assert G.tile_from_config(plan(per_channel.replace(n=8192), "H200").tuning_for(1024).config) == G.BYTE_WG_LARGE
    assert G.tile_from_config(plan(per_channel.replace(n=3696), "H200").tuning_for(1024).config) == G.WG_128
    assert G.tile_from_config(plan(W4A16.replace(n=8192), "A100").tuning_for(300).config) == G.TILE_64_WIDE
    assert G.tile_from_config(plan(W4A16.replace(n=4224), "A100").tuning_for(300).config).bn == 128
    qw = R.quantize(torch.randn(384, 256) * 0.02, WeightScheme("int4", "group", 128))
    rec = G.recipe_for(qw.scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_80")
    pw = G.pack_weight(qw, rec)
    G.Launcher(pw, [(1, None, G.Tile(64, 128, 128, 1, 4, 1, 3))], 108)
    with pytest.raises(ValueError, match="BN = 256.*384 rows"):
        G.Launcher(pw, [(1, None, G.TILE_64_WIDE)], 108)


def test_declared_families_keep_the_generic_tuning():
    # wgmma (declared): the heuristics' keys, and the chip with more SMs splits K further
    narrow = LayerSpec(n=1024, k=8192, weight=WeightScheme("uint4", "group", 128))
    h100, h20 = (plan(narrow, d, families="hardware") for d in ("H100", "H20"))
    assert h100.family == h20.family == "wgmma"
    _ranges_are_contiguous(h100)
    assert h100.tuning_for(1).config["split_k"] > h20.tuning_for(1).config["split_k"] >= 1
    assert {"tile_m", "tile_n", "tile_k", "stages", "split_k"} <= set(h100.tuning_for(1).config)


def test_mma_sync_split_k_is_decided_at_launch_from_the_sm_count():
    from humming_nvidia import gemm_mma_sync as G

    narrow = LayerSpec(n=1024, k=8192, weight=WeightScheme("uint4", "group", 128))
    splits = {}
    for name in ("T4", "A100"):
        p, hw = plan(narrow, name), Device.named(name)
        assert p.components["scheduler"] == "split_k"
        # the small-M ranges carry the most K slices the launcher may use; the others none
        for r in p.tuning:
            want = G.MAX_SPLIT_K if r.config["bm"] <= G.SPLIT_K_BM else 1
            assert r.config.get("split_k", 1) == want, r
        recipe = G.recipe_from_plan(p, hw)
        kp = G.PAD_K * -(-narrow.k // G.PAD_K)
        ranges = G.launch_ranges(p, recipe, hw.max_smem_per_block, kp)
        assert [t for *_, t, _ in ranges] == [t for *_, t in G.ranges_from_plan(p, recipe, hw.max_smem_per_block, kp)]
        launcher = G.Launcher(None, [r[:3] for r in ranges], hw.sm_count, max_split=[r[3] for r in ranges])
        assert launcher.max_split_for(10**6) == 1 and launcher.max_split_for(1) == G.MAX_SPLIT_K
        tile = launcher.tile_for(1)
        splits[name] = launcher.split_for(tile, 1, -(-1024 // tile.bn), kp // tile.bk, launcher.max_split_for(1))
    # the chip with more SMs splits K further to fill them
    assert G.MAX_SPLIT_K >= splits["A100"] > splits["T4"] > 1
    # no cp.async on Turing: the loads are synchronous, two stages suffice (a
    # streaming decode tile's ring is register loads either way and keeps its depth)
    t4 = plan(narrow, "T4")
    assert t4.components["loader"] == "ldg"
    assert all(r.config["stages"] == 2 for r in t4.tuning if not r.config.get("stream"))
    assert any(r.config.get("stream") and r.config["stages"] > 2 for r in t4.tuning)
    assert any(r.config["stages"] > 2 for r in plan(narrow, "A100").tuning)


def test_detected_device_uses_measured_figures():
    props = SimpleNamespace(name="NVIDIA H20", major=9, minor=0, multi_processor_count=60)
    dev = Device.from_properties(props, index=0)
    name, caps, _ = resolve_device(dev)
    assert isinstance(caps, DeviceCaps)
    assert name == "NVIDIA H20" and caps.product.sm_count == 60 and caps.chain == ("sm_90", "H20")
    p = plan(W4A16, dev)
    assert p.device == "NVIDIA H20" and p.device_chain == ("sm_90", "H20")
    assert p.compute == plan(W4A16, "H20").compute


def test_nothing_fits_lists_every_reason():
    layer = LayerSpec(n=256, k=256, weight=WeightScheme("bf16", "tensor", scale_fmt="fp32"),
                      activation=ActivationScheme("fp16"))
    with pytest.raises(UnsupportedError) as e:
        plan(layer, "sm_90")
    assert "tried operand types fp16" in str(e.value)
    assert any("bf16 values are not exact in fp16" in r for r in e.value.reasons)


def test_bad_requests_name_the_problem():
    with pytest.raises(TypeError, match="LayerSpec"):
        plan({"n": 1}, "H20")
    with pytest.raises(ValueError, match="'implemented', 'hardware'"):
        plan(W4A16, "H20", families="all")
    with pytest.raises(FormatError, match="nope-gpu"):
        plan(W4A16, "nope-gpu")


def test_kernel_of_a_declared_family_is_refused():
    hw = plan(W4A8, "sm_90", families="hardware")
    assert hw.family == "wgmma" and not hw.runnable
    with pytest.raises(UnsupportedError, match="not runnable"):
        hw.kernel(16)


@pytest.mark.parametrize("name", C.names())
def test_every_capability_file_plans(name):
    for mode in ("implemented", "hardware"):
        if name == "zhenwu-810e" and mode == "implemented":
            # (its tensor cores are ppu.mma.sync m16n16k16, which this version's kernels do not issue)
            with pytest.raises(UnsupportedError, match="this chip lists m16n16k16"):
                plan(W4A16, name, families=mode)
            continue
        p = plan(W4A16, name, families=mode)
        assert p.device_chain == C.load(name).chain
        assert p.runnable == (p.implemented and not p.limits)
        assert (p.family == "mma_sync" and not p.limits) == p.runnable
        assert not p.limits or name == "zhenwu-810e"


def _code_strings_and_attrs(tree):
    """String constants (docstrings excluded) and attribute names used in a module's code."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value
        elif isinstance(node, ast.Attribute):
            yield node.lineno, "." + node.attr


def test_planner_never_reads_sm_numbers():
    sources = list((ROOT / "humming" / "planner").glob("*.py")) + [
        ROOT / "humming" / "tune" / "heuristics.py", ROOT / "backends" / "nvidia" / "families.py",
        ROOT / "backends" / "zhenwu" / "plugin.py"]
    pattern = re.compile(r"sm_?\d{2,3}|\.compute_capability$|\.major$|\.minor$")
    for path in sources:
        for line, text in _code_strings_and_attrs(ast.parse(path.read_text())):
            assert not pattern.search(text), f"{path.name}:{line} reads an SM number: {text!r}"


def test_mrange_validates():
    with pytest.raises(ValueError, match="MRange.lo"):
        MRange(0, 4)
    with pytest.raises(ValueError, match="MRange.hi"):
        MRange(8, 4)
    assert MRange(1, None).contains(10**9)


@pytest.mark.gpu
def test_plan_on_the_detected_gpu():
    import torch

    p = plan(W4A16)
    assert p.device == torch.cuda.get_device_name()
    _, caps, _ = resolve_device(None)
    assert caps.product.sm_count == torch.cuda.get_device_properties(0).multi_processor_count
    assert p.runnable and p.family == "mma_sync"


def test_small_m_tiles_follow_the_layer_shape_on_a_known_gpu():
    """On a device with a known SM count the planner re-splits the decode tile's
    warps for short K and picks the 33-64 token tile from N (the H200 sweep's
    winners; an L40S has a similar SM count, 142); without an SM count (a bare target)
    the nominal tiles stay. On Hopper, 2-8 tokens on layers of at most 16384 rows take register rings
    (the layer's long-K or wide ring; from 7 tokens on the long-K ring with a window of activations, or the
    wide one on layers of a 64-row CTA per SM); one to 8 tokens on larger layers
    and more than 8 take the warpgroup tiles, chosen from M and N (and K for two 64-row wgmmas)."""
    from humming_nvidia import gemm_mma_sync as G

    def tile(n, k, m, dev="l40s", scheme=WeightScheme("int4", "group", 128)):
        return G.tile_from_config(plan(LayerSpec(n, k, scheme), dev).tuning_for(m).config)

    assert tile(4096, 4096, 64).bm == 16            # few 128-row blocks: 16 tokens, split along K
    assert tile(14336, 4096, 64).bm == 32           # in between: the nominal tile
    assert tile(28672, 8192, 64).bm == 64           # a block per SM or more: 64 tokens per CTA
    assert tile(28672, 8192, 100).bm == 32          # 65-128 keeps its tile
    assert tile(4096, 4096, 1, "h200").bn == 16 and tile(8192, 8192, 1, "h200").bn == 32
    assert tile(4096, 4096, 64, "sm_89").bm == 32   # no SM count: nominal
    assert not tile(8192, 8192, 1, "h200").wgmma and not tile(8192, 8192, 64, "sm_89").wgmma
    # (up to 32 tokens the group scales of 128 columns are folded per block: Tile.fold)
    fold = lambda t: dataclasses.replace(t, fold=1)  # noqa: E731
    assert tile(8192, 8192, 2, "h200") == G.DECODE_INT4_LONG_K == tile(4096, 4096, 8, "h200") == tile(8192, 8192, 6, "h200")
    assert tile(14336, 4096, 2, "h200") == G.DECODE_INT4_WIDE == tile(14336, 4096, 8, "h200")  # (a CTA of 64 rows per SM)
    # (7-8 tokens over a long K: the long-K ring keeps a window of activations instead of splitting K for them)
    assert tile(8192, 8192, 7, "h200") == G.DECODE_INT4_LONG_K_WINDOW == tile(4096, 14336, 8, "h200")
    assert G.DECODE_INT4_LONG_K_WINDOW == dataclasses.replace(G.DECODE_INT4_LONG_K, xwin=2)
    # (... and 2-6 tokens where six tokens' slice of activations outgrows RING_XTURN_CAP at one wave of CTAs, and the
    # wide ring's 7-8 over 8192 columns: ring_needs_window; where the slices fit, no window)
    assert tile(8192, 14336, 2, "h200") == G.DECODE_INT4_LONG_K_WINDOW == tile(8192, 28672, 6, "h200")
    assert tile(4096, 14336, 6, "h200") == G.DECODE_INT4_LONG_K == tile(8192, 8192, 6, "h200")
    assert tile(14336, 8192, 7, "h200") == dataclasses.replace(G.DECODE_INT4_WIDE, xwin=2) == tile(10240, 14336, 2, "h200")
    assert tile(14336, 8192, 6, "h200") == G.DECODE_INT4_WIDE == tile(14336, 4096, 8, "h200")
    assert tile(5120, 27648, 4, "h200") == G.DECODE_INT4_LONG_K_WINDOW and tile(5120, 27648, 4, "a100").xwin == 0
    moe8 = plan(LayerSpec(8192, 14336, WeightScheme("int4", "group", 128), num_experts=8), "h200")
    assert G.tile_from_config(moe8.tuning_for(4).config).xwin == 0  # (MoE layers: not measured, no window)
    # (one token over a short K: the warps along K; 16 rows of fp16 groups of 128 keep eight slots)
    assert tile(4096, 4096, 1, "h200") == G.replace(G.DECODE_INT4_SHORT_K, stages=G.SHORT_K_DEEP_STAGES)
    # (... four register slots, any scales: eight spilled; groups of 16 and 32: twice the rows, short_k_ring; 2-bit
    # codes over a short K: rings by rows, ring2_short_tile)
    one = lambda scheme, n, k, dev="h200": G.tile_from_config(plan(LayerSpec(n, k, scheme), dev).tuning[0].config)  # noqa: E731
    ch4, ch2, g2 = (WeightScheme("int4", "channel", scale_fmt="fp32"), WeightScheme("int2", "channel", scale_fmt="fp32"),
                    WeightScheme("int2", "group", 128))
    assert G.DECODE_INT4_SHORT_K.stages == 4 and G.DECODE_INT4_SHORT_K.wn * G.DECODE_INT4_SHORT_K.wk == 8
    assert one(ch4, 4096, 4096) == G.DECODE_INT4_SHORT_K == one(ch4, 3456, 2048, "a100")
    # (the tile count nearest two CTAs per SM within one wave: the A100's 108 SMs take 4096 rows in 128 32-row CTAs,
    # not 256 of 16 rows for 216 places; 5120 rows on 132 SMs, 160 of 32 rows)
    assert one(ch4, 4096, 2048, "a100") == G.split_warps(G.DECODE_INT4_SHORT_K, 2) == one(ch4, 5120, 4096)
    ring32, ring64 = (G.split_warps(G.DECODE_INT4_SHORT_K, w) for w in (2, 4))
    assert ring32.bn == 32 and ring32.wk == 4 and ring32.bk == 256 and ring64.bk == 128
    g16, g32, g64 = (WeightScheme("int4", "group", g) for g in (16, 32, 64))
    assert one(g16, 4096, 4096) == ring32 == one(g32, 4096, 2048) == one(WeightScheme("uint4", "group", 16,
                                                                                        zero_point="int"), 4096, 4096)
    assert one(g16, 8192, 4096) == ring64 == one(g32, 8192, 4096) and one(g64, 4096, 4096) == G.DECODE_INT4_SHORT_K
    # (the A100's 108 SMs make 8192 rows a wide layer: DECODE_INT4_WIDE as shape_stream_tile shapes it, any group: 128
    # CTAs of 64 rows within its 216 places, not 256 of 32)
    assert one(g64, 8192, 4096) == ring32 and one(g16, 8192, 4096, "a100") == ring64 == one(g64, 8192, 4096, "a100")
    bf = lambda dev: G.tile_from_config(plan(LayerSpec(4096, 4096, WeightScheme("int4", "group", 128),  # noqa: E731
                                                     ActivationScheme("bf16"), out_dtype="bf16"), dev).tuning[0].config)
    assert bf("l40s") == G.DECODE_INT4_SHORT_K == one(WeightScheme("int4", "group", 256), 4096, 4096)  # (eight spilled)
    assert bf("h200") == G.replace(G.DECODE_INT4_SHORT_K, stages=G.SHORT_K_DEEP_STAGES)  # (bf16: Hopper alone)
    # (one token over a long K on Hopper, on at most two 16-row CTAs per SM (1.25 on the H200, whose bandwidth per SM
    # is above LONG_K_ONE_RING_BW_PER_SM_GBS): the 16-row ring, long_k_16_row_ring, as short_k_ring shapes it; groups
    # of 16-64, wider layers, 2-8 tokens, MoE layers and older GPUs keep their rings)
    deep16, g128 = G.replace(G.DECODE_INT4_SHORT_K, stages=G.SHORT_K_DEEP_STAGES), WeightScheme("int4", "group", 128)
    assert one(g128, 2560, 14336) == deep16 == one(g128, 1024, 8192, "h100") == one(g128, 4096, 14336, "h100") == one(
        WeightScheme("uint4", "group", 128, zero_point="int"), 4096 + 128, 11008, "h100")
    assert one(g128, 4096, 14336) == G.DECODE_INT4_LONG_K == one(g128, 2560 + 128, 8192)  # (H200: 168 CTAs > 1.25 x 132)
    assert one(ch4, 4096, 14336, "h100") == G.DECODE_INT4_SHORT_K == one(ch4, 2560, 14336) == one(
        WeightScheme("int4", "group", 256), 2048, 8192)
    assert one(g64, 4096, 14336) == G.DECODE_INT4_LONG_K == one(g32, 2048, 8192) == one(g128, 4096 + 129, 14336)
    # (the one-token cap by bandwidth per SM: the H200's 36 GB/s and the H20's 51 above 30, the H100's 25 below; a
    # chip without a product table keeps two)
    caps_of = lambda dev: resolve_device(dev)[1]  # noqa: E731
    assert [G.long_k_one_ring_ctas_per_sm(caps_of(d)) for d in ("h200", "h20", "h100", "sm_90")] == [
        G.LONG_K_ONE_RING_HIGH_BW_CTAS_PER_SM, G.LONG_K_ONE_RING_HIGH_BW_CTAS_PER_SM, 2, 2]
    assert one(g128, 4096, 14336, "a100") == G.DECODE_INT4_LONG_K == tile(4096, 14336, 2, "h200")
    assert one(g128, 8192, 8192) == G.DECODE_INT4_LONG_K
    moe = plan(LayerSpec(4096, 14336, g128, num_experts=8), "h200")
    assert G.tile_from_config(moe.tuning[0].config) != deep16
    # (... and 2-6 tokens where the layer has at most one 16-row CTA per SM: 2048 rows, not 2112 (padded to 2176);
    # 7-8 tokens keep the window ring, groups of 64 their ring)
    assert tile(2048, 8192, 2, "h200") == deep16 == tile(1024, 14336, 6, "h200") == tile(1536, 5120, 4, "h100")
    assert tile(2112, 8192, 2, "h200") == G.DECODE_INT4_LONG_K == tile(1024, 8192, 2, "h200", g64)
    assert tile(1024, 8192, 7, "h200") == G.DECODE_INT4_LONG_K_WINDOW and tile(2048, 8192, 2, "a100") != deep16
    assert tile(1024, 4096, 2, "h200") == G.DECODE_INT4_LONG_K  # (short K: the long-K ring, gpu_sweep.py r4)
    assert one(g2, 14336, 4096) == G.DECODE_INT4_WIDE == one(ch2, 14336, 4096)  # (a 64-row CTA per SM)
    assert one(g2, 8192, 4096) == G.DECODE_INT2_LONG_K == one(ch2, 8192, 3712)  # (fills two CTAs per SM)
    assert one(g2, 4096, 4096) == G.DECODE_INT3 == one(ch2, 2048, 4096)         # (one CTA of 16 warps per SM)
    assert one(g2, 8192, 8192) == G.DECODE_INT2_LONG_K and one(g2, 4096, 4096, "a100").stream == 1  # (not measured)
    # (one token of MXFP4 / NVFP4 codes: the 16-warp rings of 32 rows where they fit a wave, else of 64, 112 or 128
    # rows, the fewest on the busiest SM; fp4_one_tile)
    mx, nv = WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), WeightScheme("e2m1", "group", 16, scale_fmt="e4m3")
    assert one(mx, 4096, 4096) == G.DECODE_INT3 == one(nv, 4096, 14336) == one(mx, 2880, 2880)
    assert one(mx, 8192, 8192) == G.DECODE_INT3_WIDE == one(nv, 5120, 2880)
    assert one(nv, 14336, 4096) == G.DECODE_INT3_112 == one(mx, 28672, 8192)  # (128 CTAs; 256, two waves)
    assert one(mx, 16384, 4096) == G.DECODE_INT3_128 == one(nv, 12288, 2048)  # (112 rows do not divide them)
    assert one(mx, 57344, 8192).stream == 1 and one(nv, 4096, 4096, "a100").stream == 1  # (not measured)
    w4a4 = plan(LayerSpec(4096, 4096, nv, ActivationScheme("e2m1", "dynamic_group", 16, "e4m3")), "h200")
    assert G.tile_from_config(w4a4.tuning[0].config).stream == 1  # (quantized activations: as before, not measured)
    deep = G.replace(fold(G.WG_DECODE_TWO), stages=G.DECODE_TWO_STAGES)  # (decode_depth)
    assert tile(28672, 8192, 1, "h200") == deep == tile(28672, 8192, 8, "h200") and G.WG_DECODE.bk == 256
    assert fold(G.WG_16_DEEP) == tile(5120, 8192, 9, "h200") == tile(2048, 8192, 16, "h200")
    # (... with three groups of warps along K where its tiles fill 2/3 of the SMs to all of them, or a launch that
    # splits K in two does: wg16_groups_along_k)
    kg3 = G.replace(fold(G.WG_16_DEEP), kg=3)
    assert tile(8192, 8192, 9, "h200") == kg3 == tile(7168, 8192, 16, "h200") == tile(6144, 4096, 16, "h200")
    assert tile(4096, 4096, 16, "h200") == kg3 == tile(4096, 14336, 12, "h200")
    assert tile(28672, 8192, 16, "h200") == fold(G.WG_16_DEEP_TWO) == tile(14336, 4096, 9, "h200")
    assert G.WG_16_TWO.bn == 32 * G.WG_16_TWO.wn and G.Launcher.ctas_for(G.WG_16_TWO) == 2
    assert tile(8192, 8192, 17, "h200") == fold(G.WG_32_NARROW) == tile(4096, 4096, 100, "h200")  # (M > 32: two tiles)
    # (... folded at BK = 256 up to 64 tokens on 2049-4096 rows over a K of 4096-12287; not over 2048 rows)
    assert tile(4096, 4096, 64, "h200") == fold(G.WG_32_DEEP) == tile(3072, 8192, 33, "h200")
    assert tile(2048, 8192, 64, "h200") == fold(G.WG_32_NARROW) == tile(4096, 2048, 64, "h200")
    assert tile(28672, 8192, 17, "h200") == fold(G.WG_32_DEEP_TWO) and tile(14336, 4096, 32, "h200") == fold(G.WG_32_DEEP)
    assert tile(4096, 4096, 32, "h200") == fold(G.WG_32_DEEP) == tile(4096, 14336, 17, "h200")
    assert tile(28672, 8192, 64, "h200") == G.WG_64 and tile(14336, 4096, 33, "h200") == G.WG_64_TMA
    assert tile(8192, 8192, 64, "h200") == G.WG_64_TMA and G.WG_64_TMA.tma and G.WG_64_TMA.chains == 2
    assert tile(4096, 14336, 64, "h200") == G.WG_64_TMA and tile(2048, 8192, 64, "h200") == fold(G.WG_32_NARROW)
    # (17-64 tokens of 4-bit integer codes on layers of at most 8 rows per SM over a K of at most 8192, with folding
    # group scales: the 16-token tile in M tiles of 16, narrow_16_tokens; not per channel, for 2- or 3-bit codes, on MoE
    # layers, over a longer K, nor on the A100)
    assert tile(1024, 8192, 17, "h200") == fold(G.WG_16_DEEP) == tile(1056, 4096, 32, "h100") == tile(512, 3584, 64, "h200")
    assert tile(1120, 8192, 17, "h200").bm == 32 and tile(2048, 4096, 33, "h200").bm == 32  # (8.5 rows per SM)
    assert tile(1024, 8192 + 128, 17, "h200").bm == 32 and tile(1024, 4096, 17, "h200", ch4).bm != 16
    assert tile(1024, 4096, 24, "h200", WeightScheme("int3", "group", 128)).bm != 16 != tile(1024, 4096, 24, "h200", g2).bm
    assert tile(1024, 4096, 64, "h200", WeightScheme("uint4", "group", 64, zero_point="int")) == fold(G.WG_16_DEEP)
    assert G.tile_from_config(plan(LayerSpec(1024, 4096, g128, num_experts=8), "h200").tuning_for(24).config).bm != 16
    assert not tile(1024, 4096, 24, "a100").wgmma and tile(1024, 4096, 24, "sm_90a").bm == 32  # (no SM count)
    assert tile(4096, 2048, 100, "h200") == G.WG_64_NARROW and tile(28672, 8192, 100, "h200") == G.WG_128
    # (65-128 tokens on at most 4096 rows over a K of 4096 or more, where the 128-token rule (2049-4096 rows over a
    # K of 8192 or more) does not take them: 32-token tiles, K split for two CTAs per SM)
    assert tile(2048, 4096, 65, "h200") == fold(G.WG_32_NARROW) == tile(3072, 6144 - 128, 128, "h200")
    assert tile(4096, 4096, 100, "h200") == fold(G.WG_32_NARROW) == tile(2048, 14336, 100, "h200")
    assert tile(3072, 2048, 100, "h200") == G.WG_64_NARROW and tile(3072, 8192, 100, "h200") == G.WG_128
    assert tile(8192, 8192, 256, "h200") == G.WG_128 and tile(28672, 8192, 256, "h200") == G.WG_256
    # (129-512 tokens of codes on 16-bit operands: wgmma_tile's tiles of them, 128 tokens in two K slices on
    # 2049-4096 rows at 129-256 tokens, and at 65-128 over a K of 8192 or more; zero-point codes too, with 128 tokens
    # where the others take 256)
    split = lambda n, k, m, s=WeightScheme("int4", "group", 128): plan(LayerSpec(n, k, s), "h200").tuning_for(m).config.get("split_k")  # noqa: E731
    assert tile(4096, 14336, 256, "h200") == G.WG_128 == tile(4096, 14336, 512, "h200") == tile(4096, 4096, 257, "h200")
    assert split(4096, 14336, 129) == 2 and split(4096, 14336, 257) is None and split(8192, 8192, 200) is None
    assert split(2048, 4096, 100) == G.MAX_SPLIT_K  # (the 32-token tiles of small layers at 65-128 tokens)
    assert tile(4096, 14336, 100, "h200") == G.WG_128 == tile(8192, 8192, 65, "h200") == tile(14336, 4096, 128, "h200")
    assert split(4096, 14336, 100) == 4 and split(8192, 8192, 128) == 2 and split(14336, 4096, 100) is None
    assert tile(4096, 4096, 256, "h200") == G.WG_128 == tile(4096, 8192, 65, "h200") and split(4096, 2048, 129) == 2
    assert split(4096, 8192, 128) == 4 and tile(8192, 8192, 500, "h200") == G.WG_256
    assert tile(8192, 8192, 300, "h200").bm == 160  # (two M tiles of the tokens 300 needs: wave_steps)
    e4, zp = WeightScheme("e4m3", "channel", scale_fmt="fp32"), WeightScheme("uint4", "group", 128, zero_point="int")
    assert split(4096, 14336, 200, e4) == 2 == split(4096, 14336, 200, WeightScheme("int3", "group", 128))
    assert split(4096, 14336, 200, zp) == 2 and split(4096, 14336, 100, zp) == 4 and split(8192, 8192, 100, zp) == 2
    assert tile(8192, 8192, 300, "h200", zp) == G.WG_128 == tile(4096, 4096, 300, "h200", zp)
    assert tile(8192, 8192, 1024, "h200", zp) == G.WG_128 and tile(4096, 4096, 1024, "h200", zp) == G.WG_64
    assert tile(8192, 8192, 4096, "h20") == G.WG_256  # (H20 extends sm_90)
    mma = lambda n, dev="h200": plan(LayerSpec(n, 4096, WeightScheme("int4", "group", 128)), dev).components["mma"]  # noqa: E731
    assert mma(8192).endswith("(M >= 9)") and mma(4096).endswith("(M >= 9)") and "wgmma" not in mma(8192, "l40s")
    assert mma(28672).endswith("(M >= 1)")


def test_byte_operand_tiles_at_65_512_tokens():
    """Byte operands (W4A8, W8A8, fp8 x fp8) on 2049-4096 rows take byte_wgmma_tile's 65-512-token tiles: 64 tokens
    of 128 rows with K in two slices at 65-128 tokens over a long K, the 8-bit codes' TMA tile in two at 129-256
    wherever it leaves half the SMs idle, 128 tokens for codes of at most 4 bits above 256 (and at 65-128 on more
    than 4096 rows: test_eight_bit_byte_tiles_on_hopper); other layers, and the A100's (mma.sync), keep their
    tiles."""
    from humming_nvidia import gemm_mma_sync as G

    tok8, fp8 = ActivationScheme("int8", "dynamic_token"), ActivationScheme("e4m3", "dynamic_token")
    g128, e4 = WeightScheme("int4", "group", 128), WeightScheme("e4m3", "channel", scale_fmt="fp32")

    def pick(scheme, act, n, k, m, dev="h200"):
        c = plan(LayerSpec(n, k, scheme, act), dev).tuning_for(m).config
        return G.tile_from_config(c), c.get("split_k")

    assert pick(g128, tok8, 4096, 14336, 100) == (G.WG_64, 2) == pick(e4, fp8, 3072, 12288, 65)
    assert pick(g128, tok8, 4096, 4096, 100) == (G.WG_64_NARROW, None)  # (a short K)
    assert pick(g128, tok8, 8192, 8192, 100) == (G.WG_128, 2)  # (more than 4096 rows: 128 tokens, 64 CTAs)
    assert pick(e4, fp8, 4096, 4096, 200) == (G.BYTE_WG_8BIT, 2) and pick(e4, fp8, 8192, 8192, 200)[1] is None
    assert pick(g128, tok8, 4096, 14336, 200) == (G.WG_64, None)
    assert pick(g128, tok8, 4096, 4096, 300) == (G.WG_128, None) == pick(g128, tok8, 2560, 14336, 512)
    assert pick(e4, fp8, 4096, 4096, 300) == (G.BYTE_WG_8BIT, None)
    assert pick(g128, tok8, 2048, 8192, 300) == (G.WG_64, None)  # (2048 rows and fewer: as before)
    assert not pick(g128, tok8, 4096, 14336, 100, "a100")[0].wgmma


def test_byte_codes_keep_two_ctas_per_sm():
    """Warpgroup tiles of 16-bit operands with 8-bit weight codes (twice the weight bytes per stage of the
    4-bit codes the tiles were sized on) take fewer stages where that keeps two CTAs per SM, as their 4-bit form
    holds, on layers whose grid has more CTAs than SMs from the range's first M on (wgmma_pair); 9-16 tokens take
    the 64-row tile on layers of at most BYTE_CODES_16_TWO_FROM_N rows. Grids of at most one CTA per SM, 4-bit
    codes, byte operands and the BK = 256 tiles keep theirs, and a paired tile fits and pairs again unchanged."""
    from humming_nvidia import gemm_mma_sync as G

    def tile(scheme, n, k, m):
        p = plan(LayerSpec(n, k, scheme), "h200")
        return G.tile_from_config(next(r.config for r in p.tuning if r.lo <= m and (r.hi is None or m <= r.hi)))

    for fmt in ("e4m3", "int8", "e5m2"):
        ch = WeightScheme(fmt, "channel", scale_fmt="fp32")
        assert tile(ch, 28672, 8192, 16) == G.replace(G.WG_16_TWO, stages=5)  # (six stages: one CTA per SM)
        assert tile(ch, 14336, 4096, 16) == G.WG_16_NARROW == tile(ch, 4096, 14336, 9)
        assert tile(ch, 28672, 8192, 64) == G.replace(G.WG_64, stages=3)
        # (65-512 tokens: wgmma_tile's lean tiles, one CTA per SM; WG_256 halved to 128 tokens at four stages)
        assert tile(ch, 14336, 4096, 100) == G.WG_128 == tile(ch, 8192, 8192, 100) == tile(ch, 4096, 14336, 256)
        assert tile(ch, 28672, 8192, 300) == G.WG_128 == tile(ch, 8192, 8192, 4096) == tile(ch, 8192, 8192, 300)
        assert tile(ch, 8192, 8192, 64) == G.WG_64_TMA and tile(ch, 8192, 8192, 1) == G.WG_DECODE_8BIT
    i4 = WeightScheme("int4", "channel", scale_fmt="fp32")
    assert tile(i4, 28672, 8192, 16) == G.WG_16_TWO == tile(i4, 14336, 4096, 16)
    assert tile(i4, 28672, 8192, 64) == G.WG_64 and tile(i4, 14336, 4096, 100) == G.WG_128  # (wgmma_tile's narrow)
    smem = 227 * 1024
    rec8 = G.recipe_for(WeightScheme("int8", "channel", scale_fmt="fp32"), bf16=False, out_bf16=False,
                        caps_cp_async=True, k8mma=False, target="sm_90a")
    rec4 = G.recipe_for(i4, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_90a")
    for t in (G.WG_16_TWO, G.WG_64):
        f = G.wgmma_pair(G.fit_tile(t, rec8, smem, 8192), rec8, smem)
        assert f.stages < t.stages and G.fit_tile(f, rec8, smem, 8192) == f == G.wgmma_pair(f, rec8, smem)
        assert 2 * (G.smem_bytes(rec8, f) + G.STATIC_SMEM_BYTES + 1024) <= smem + 1024, (t, f)
        assert G.wgmma_pair(t, rec4, smem) == t
    assert G.wgmma_pair(G.WG_32, rec8, smem) == G.WG_32  # (two per SM already)
    assert G.wgmma_pair(G.WG_128, rec8, smem) == G.WG_128  # (one CTA per SM in its 4-bit form too)
    assert G.wgmma_pair(G.WG_32_DEEP_TWO, rec8, smem) == G.WG_32_DEEP_TWO  # (BK = 256: as before)
    rec_b = G.recipe_for(WeightScheme("int8", "channel", scale_fmt="fp32"), bf16=False, out_bf16=False,
                         caps_cp_async=True, k8mma=False, target="sm_90a", act_scale=1, op8=1)
    assert G.wgmma_pair(G.WG_64, rec_b, smem) == G.WG_64  # (byte operands: their own tiles)


def test_decode_tile_takes_a_stage_where_ctas_per_sm_allow():
    """The 128-row decode tile with folded group scales takes DECODE_TWO_STAGES stages on layers of more such
    tiles than SMs where two or more CTAs per SM still fit (decode_depth); unfolded scales, split grids, codes
    that would lose a CTA per SM (int2: four -> three, int5: two -> one) and other tiles keep their stages,
    and the rule applied again changes nothing."""
    from humming_nvidia import gemm_mma_sync as G

    def tile(scheme, n, k, m):
        p = plan(LayerSpec(n, k, scheme), "h200")
        return G.tile_from_config(next(r.config for r in p.tuning if r.lo <= m and (r.hi is None or m <= r.hi)))

    deep = G.replace(G.WG_DECODE_TWO, fold=1, stages=G.DECODE_TWO_STAGES)
    smem = 227 * 1024
    for fmt in ("int4", "uint4"):
        sch = WeightScheme(fmt, "group", 128)
        assert tile(sch, 28672, 8192, 1) == deep == tile(sch, 28672, 8192, 8), fmt
        rec = G.recipe_for(sch, bf16=True, out_bf16=True, caps_cp_async=True, k8mma=False, target="sm_90a")
        assert G.decode_depth(deep, rec, smem) == deep  # (again: unchanged)
        assert 2 * (G.smem_bytes(rec, deep) + G.STATIC_SMEM_BYTES + 1024) <= smem + 1024
        assert tile(sch, 28672, 8192, 16).stages == G.WG_16_DEEP_TWO.stages  # (16 tokens: as before)
    assert tile(WeightScheme("e2m1", "group", 32), 14336, 4096, 8) == G.WG_DECODE_TWO  # (K split, not folded)
    assert tile(WeightScheme("int4", "channel", scale_fmt="fp32"), 28672, 8192, 8) == G.WG_DECODE_TWO
    for fmt in ("int2", "int5", "int6"):
        sch = WeightScheme(fmt, "group", 128)
        assert tile(sch, 28672, 8192, 8).stages == G.WG_DECODE_TWO.stages, fmt
        rec = G.recipe_for(sch, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_90a")
        assert G.decode_depth(G.replace(G.WG_DECODE_TWO, fold=1), rec, smem).stages == G.WG_DECODE_TWO.stages


def test_hopper_decode_and_fold_choices():
    """On Hopper, 8-bit weight codes on 16-bit operands decode on the 8-token warpgroup tile (the plan's
    MMA slot says wgmma from one token), int4 and 2-bit codes keep the rings for up to 8 tokens (with or
    without group scales), 3-bit codes up to RING3_TOKENS on layers of at most RING3_MAX_N rows (raw codes
    with the k-half factor), the four-block warpgroup tiles from one token on wider ones where the group
    scales fold, other codes from two; the group scales are folded per
    block on warpgroup tiles of at most 32 tokens where the groups span whole 64-column blocks (not per
    channel, not groups of 32), and nowhere on chips without wgmma."""
    from humming_nvidia import gemm_mma_sync as G

    def tiles(scheme, dev="h200", n=8192, k=8192):
        p = plan(LayerSpec(n, k, scheme), dev)
        return p, {r.lo: G.tile_from_config(r.config) for r in p.tuning}

    for scheme in (WeightScheme("int8", "channel", scale_fmt="fp32"), WeightScheme("e4m3", "channel", scale_fmt="fp32"),
                   WeightScheme("int8", "group", 128)):
        p, t = tiles(scheme)
        assert t[1] == dataclasses.replace(G.WG_DECODE_8BIT, fold=int(scheme.scale == "group")), (scheme, t[1])
        assert p.components["mma"].endswith("(M >= 1)"), p.components["mma"]
    for scheme in (WeightScheme("int4", "group", 128), WeightScheme("int3", "group", 128), WeightScheme("int2", "group", 64)):
        p, t = tiles(scheme)
        if scheme.bits == 3:  # (8192 rows: the 64-row ring, one wave of CTAs on the H200's 132 SMs)
            def at(p, m):
                return next(G.tile_from_config(r.config) for r in p.tuning if r.lo <= m <= r.hi)

            # (5-8 tokens, v4: the 128-row ring, K split two ways at 8 tokens: 128 CTAs; one token: 256 CTAs of
            # 32 rows, two per SM, RING3_ONE_TWO)
            assert at(p, 1) == G.DECODE_INT4_LONG_K and at(p, 2) == at(p, 4) == G.DECODE_INT3_WIDE
            assert at(p, 5) == at(p, 8) == G.DECODE_INT3_128
            assert p.components["mma"].endswith(f"(M >= {G.RING3_MANY_TOKENS + 1})")
            # (4 rows of 14336 columns split K two ways for the activation cap: the 64-row ring from 2 tokens;
            # 8 rows three ways, and no ring fills the wave: the warpgroup tile from 5)
            for n, k, one, few, many in ((4096, 14336, G.DECODE_INT3, G.DECODE_INT3_WIDE, None),
                                         (4096, 4096, G.DECODE_INT3, G.DECODE_INT3, G.DECODE_INT3)):
                q = plan(LayerSpec(n, k, scheme), "h200")
                assert (at(q, 1), at(q, 2), at(q, 4)) == (one, few, few), (n, k, q.tuning)
                assert at(q, 5) == at(q, 8) == many if many else at(q, 5).wgmma, (n, k, q.tuning)
            # (wider: 1-4 tokens on the ring that fills one wave at 4 tokens, 5-8 on the warpgroup tile; wider
            # than RING3_MAX_N, or no ring filling three quarters of a wave: the warpgroup tile from one token)
            # (v4: the 112-row ring first where it fills its waves: 128 CTAs of 14336 rows, 256 of 28672; 14336
            # rows, at most RING3_MANY_MAX_N, keep it to 8 tokens)
            # (one token of 14336 rows: 224 CTAs of 64 rows, two per SM, RING3_ONE_TWO)
            for n, one, many in ((14336, G.DECODE_INT3_112, True), (28672, G.DECODE_INT3_112, False),
                                 (24576, None, False), (57344, None, False), (11008, None, False)):
                p, t = tiles(scheme, n=n, k=4096)
                single = G.DECODE_INT4_WIDE if n == 14336 else one
                assert t[1] == (single or dataclasses.replace(G.WG_DECODE_TWO, fold=1)), (n, t)
                if one:
                    assert at(p, 2) == at(p, 4) == one, (n, t)
                    assert at(p, 8) == one if many else 5 in t, (n, t)
                first = 9 if many else 5 if one else 1
                assert at(p, first).wgmma if many else at(p, first) == dataclasses.replace(G.WG_DECODE_TWO, fold=1), (n, t)
                assert p.components["mma"].endswith(f"(M >= {first})"), p.components["mma"]
            # (the same ring at 2-4 tokens over a long K: 112 rows of 28672, K not split for 4 x 8192 columns)
            q = plan(LayerSpec(28672, 8192, scheme), "h200")
            assert at(q, 1) == at(q, 4) == G.DECODE_INT3_112 and at(q, 5).wgmma, q.tuning
            # (192 CTAs of 112 rows of 21504 leave the second wave under three quarters: the warpgroup tile)
            q = plan(LayerSpec(21504, 8192, scheme), "h200")
            assert at(q, 1).wgmma, q.tuning
        else:
            assert t[1].stream and t[7].stream and not t[7].wgmma and p.components["mma"].endswith("(M >= 9)")
        assert t[9].fold and t[17].fold and not t[33].fold and not t[129].fold
    _, t = tiles(WeightScheme("int3", "channel", scale_fmt="fp32"))  # (nothing to fold: the ring, one CTA per SM)
    assert t[1] == G.DECODE_INT3_WIDE and G.DECODE_INT3_WIDE.occupancy == 1
    _, t = tiles(WeightScheme("int3", "channel", scale_fmt="fp32"), n=16384)  # (128 rows: one wave of 128 CTAs)
    assert t[1] == G.DECODE_INT3_128
    _, t = tiles(WeightScheme("int3", "channel", scale_fmt="fp32"), dev="a100")  # (no warpgroup tiles: as before)
    assert t[1] == dataclasses.replace(G.DECODE_LONG_K, occupancy=1) and G.DECODE_LONG_K.occupancy == 2
    for scheme in (WeightScheme("int4", "channel", scale_fmt="fp32"), WeightScheme("int4", "group", 32)):
        _, t = tiles(scheme)
        # (per channel and groups of 32 alike: the rings to 8 tokens, from 7 with a window of activations)
        assert t[7] == G.DECODE_INT4_LONG_K_WINDOW, t
        assert t[9].wgmma and not t[9].fold, (scheme, t)
    _, t = tiles(WeightScheme("int4", "group", 128), "sm_89")
    assert not any(x.fold or x.wgmma for x in t.values())
    with pytest.raises(UnsupportedError, match="whole 64-column blocks"):  # asked for where it cannot run
        rec = G.recipe_for(WeightScheme("int4", "group", 32), bf16=False, out_bf16=False, caps_cp_async=True,
                           k8mma=False, target="sm_90a")
        G.kernel_spec(rec, dataclasses.replace(G.WG_16_NARROW, fold=1))


@pytest.mark.parametrize("act, out, compute, exact", [
    (ActivationScheme("e2m1", "dynamic_group", 16, "e4m3"), "fp16", "fp16", True),   # NVFP4: 2 + 4 bits
    (ActivationScheme("int8", "dynamic_group", 32, "e8m0"), "bf16", "fp16", True),   # 7 + 1 bits
    (ActivationScheme("int8", "dynamic_group", 128, "e4m3"), "fp16", "fp16", True),  # 7 + 4: fp16's 11
    (ActivationScheme("e4m3", "dynamic_group", 128, "e4m3"), "bf16", "bf16", True),  # 4 + 4: bf16's 8
    (ActivationScheme("e4m3", "dynamic_group", 128, "bf16"), "bf16", "bf16", False),  # 4 + 8 bits
    (ActivationScheme("e4m3", "dynamic_group", 128), "fp16", "fp16", False),          # fp32 scales
])
def test_group_activation_note_says_when_values_are_exact(act, out, compute, exact):
    """Per-group activation scales on 16-bit operands are folded into the values: the plan says
    whether code x scale is a 16-bit float (exact) or rounded once."""
    layer = LayerSpec(4096, 4096, WeightScheme("int4", "group", 128), act, out_dtype=out)
    p = plan(layer, "sm_80")
    assert p.compute.a == compute and p.scales["activation"] == "values_and_epilogue"
    (note,) = [n for n in p.notes if "activation group scales" in n]
    assert ("exact for these codes and scales" in note) == exact and ("rounded once" in note) == (not exact), note


@pytest.mark.parametrize("scheme,act", [
    (WeightScheme("e4m3", "channel", scale_fmt="fp32"), ActivationScheme("e4m3", "dynamic_token")),
    (WeightScheme("int8", "channel", scale_fmt="fp32"), ActivationScheme("int8", "dynamic_token")),
    (WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"), ActivationScheme("e4m3", "dynamic_group", 128)),
], ids=["fp8", "w8a8", "fp8-block"])
def test_eight_bit_byte_tiles_on_hopper(scheme, act):
    """8-bit codes on byte warpgroup tiles (H200): the 8-token decode tile keeps two CTAs per SM by shared memory
    (byte_depth: fewer stages); 65-128 tokens on more than 4096 rows take the 128-token TMA tile (K split while its
    CTAs fill under half the SMs), as do 4-bit codes (WG_128), 2049-4096 rows keep their 64-token tiles; fp8 group
    activations plan fp8 MMAs."""
    from humming.device import get_device
    from humming_nvidia import gemm_mma_sync as G

    hw = get_device("h200")
    smem = int(hw.max_smem_per_block or G._max_smem(hw.caps))
    for n, k in ((14336, 4096), (8192, 8192), (28672, 8192)):
        p = plan(LayerSpec(n, k, scheme, act), "h200")
        assert p.compute.a == act.fmt and not p.fallbacks, p.explain()
        rec = G.recipe_from_plan(p, hw)
        dec = G.tile_from_config(p.tuning_for(1).config)
        assert dec.bm == 8 and dec.wgmma and G.BYTE_MIN_STAGES <= dec.stages < G.BYTE_WG_DECODE.stages, p.tuning
        assert G.ctas_by_smem(rec, dec, smem) >= 2 > G.ctas_by_smem(rec, G.BYTE_WG_DECODE, smem), p.tuning
        for m in (65, 128):
            cfg = p.tuning_for(m).config
            assert G.tile_from_config(cfg) == G.BYTE_WG_8BIT, (n, m, p.tuning)
            assert cfg.get("split_k") == (2 if n == 8192 else None), (n, m, p.tuning)
    p = plan(LayerSpec(4096, 14336, scheme, act), "h200")
    assert G.tile_from_config(p.tuning_for(100).config).bm == 64, p.tuning
    for scheme in (WeightScheme("int4", "group", 128), WeightScheme("uint4", "group", 64, zero_point="int")):
        p = plan(LayerSpec(8192, 8192, scheme, ActivationScheme("int8", "dynamic_token")), "h200")  # (4-bit codes)
        cfg = p.tuning_for(100).config
        assert G.tile_from_config(cfg).bm == 128 and cfg.get("split_k") == 2, p.tuning


def test_byte_operands_in_small_scale_groups_on_hopper():
    """int8 / fp8 operands whose weight scale groups the byte warpgroup tiles fold: groups of 64 values run them at
    every M (two partial sets per block; the 128-token tile with TMA stages), groups of 32 values fall back to 16-bit
    operands on the H200 with the planner's reason (int8 values are exact in fp16) and keep int8 mma.sync on the
    A100, which has no warpgroup MMAs."""
    from humming_nvidia import gemm_mma_sync as G

    tok8 = ActivationScheme("int8", "dynamic_token")
    for scheme in (WeightScheme("uint4", "group", 64, zero_point="int"), WeightScheme("int4", "group", 64),
                   WeightScheme("int8", "group", 64)):
        p = plan(LayerSpec(8192, 8192, scheme, tok8), "h200")
        assert p.compute.a == "int8" and not p.fallbacks, p.explain()
        tiles = {m: G.tile_from_config(p.tuning_for(m).config) for m in (1, 16, 64, 100, 300, 2000)}
        assert all(t.wgmma for t in tiles.values()), p.tuning
        big = tiles[300]
        assert big.bm == tiles[2000].bm == 128 and big.tma and tiles[2000].tma, p.tuning
        assert G.half_block_groups(G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False,
                                                target="sm_90a", op8=1))
    g128 = plan(LayerSpec(8192, 8192, WeightScheme("int4", "group", 128), tok8), "h200")
    assert G.tile_from_config(g128.tuning_for(300).config) == G.WG_128  # (one partial set: cp.async stages stay)
    for scheme, act in ((WeightScheme("int4", "group", 32), tok8),
                        (WeightScheme("uint4", "group", 32, zero_point="int"), tok8),
                        (WeightScheme("e4m3", "group", 32, scale_fmt="fp32"), ActivationScheme("e4m3", "dynamic_token"))):
        p = plan(LayerSpec(8192, 8192, scheme, act), "h200")
        assert p.compute.is_16bit and p.runnable, p.explain()
        assert "scale groups of 32 values" in p.fallbacks[0].reason and "16-bit operands" in p.fallbacks[0].reason
        assert p.activation.stored_as == p.compute.a and p.activation.values == act.fmt
        a100 = plan(LayerSpec(8192, 8192, scheme, act), "a100")
        if act.fmt == "int8":
            assert a100.compute.a == "int8" and not a100.fallbacks, a100.explain()


def test_plan_refuses_or_plans_every_valid_layer_on_every_device():
    """Random valid layers (the GPU fuzz's weight formats, padded groups and K-shards, activations, real and
    sharded sizes, MoE or not) on every capability file: the plan of every family the chip has explains itself
    and serializes to JSON; ``plan`` returns a plan (which does too) or raises UnsupportedError
    with reasons, and a runnable plan names a kernel for every M range -- never another exception from
    inside the planner (a K-shard with activations in groups raised ShapeError for the kernels' own K)."""
    import random

    import test_gemm_fuzz_gpu as F

    rng = random.Random(50)
    weights = F.WEIGHTS + F.PADDED + F.SHARDS
    checked = runnable = launched = 0
    for device in C.names():
        for _ in range(80):
            w, a = rng.choice(weights), rng.choice(F.ACTS)
            n, k = rng.choice(F.NS), rng.choice(F.KS + F.SHARD_KS)
            experts = rng.choice([0, 0, 8, 64])
            try:
                layer = LayerSpec(n, k, w, a, out_dtype=rng.choice(["fp16", "bf16"]), bias=rng.random() < 0.5,
                                  num_experts=experts)
            except (FormatError, ValueError):  # (ShapeError is a ValueError: a group that does not divide K, ...)
                continue
            checked += 1
            hw = plan(layer, device, families="hardware")  # (a plan whatever runs: explained, serialized)
            assert hw.explain() and json.loads(hw.to_json()) == json.loads(json.dumps(hw.to_dict()))
            try:
                p = plan(layer, device)
            except UnsupportedError as e:
                assert e.reasons, (device, layer.describe())
                continue
            assert p.explain() and json.loads(p.to_json())
            if p.runnable:
                runnable += 1
                for r in p.tuning:
                    assert p.kernel(r.lo) is not None, (device, layer.describe(), r)
                if p.family == "mma_sync":
                    launched += _launcher_takes(p, layer, device)
    assert checked > 800 and runnable > 400 and launched > 300, (checked, runnable, launched)


def _launcher_takes(p, layer, device) -> bool:
    """Build the mma_sync family's Launcher for plan ``p`` as ``prepare`` does (``launcher_for``), over a stand-in
    for the packed weight (its recipe and padded rows: what the Launcher checks before any launch), so that a plan
    whose tiles the Launcher refuses -- a BN that does not divide the padded rows, clusters that do not divide the
    row blocks -- fails here, on the CPU (the seventy-sixth session's GPU test found 256-row tiles planned for 8320
    rows). True once built."""
    from humming_nvidia import gemm_mma_sync as G

    hw = Device.named(device)
    if not hw.sm_count:  # (a product without an SM count: the Launcher's grids need one)
        hw = dataclasses.replace(hw, measured={"sm_count": 108})
    G.launcher_for(p, SimpleNamespace(recipe=G.recipe_from_plan(p, hw), np_=G.padded_n(layer.n)), hw)
    return True


def test_integer_codes_made_fp8_operands_and_the_switch(monkeypatch):
    """int4 weights with e4m3 activations run e4m3 MMAs where the chip has them natively (the integer codes made
    e4m3 operands in the kernels: the plan says what that costs at decode); HUMMING_INT_FP8=0, read when a plan is
    made, keeps the 16-bit operands, saying why. Codes that fp8 does not hold exactly never become fp8 operands."""
    layer = W4A8.replace(n=4096 + 64)  # (a layer no other test plans: plans are cached per layer and device)
    p = plan(layer, "H200")
    assert (p.compute.a, p.fallbacks) == ("e4m3", ())
    assert any("integer weight codes become e4m3 operands" in n and "HUMMING_INT_FP8=0" in n for n in p.notes)
    monkeypatch.setenv("HUMMING_INT_FP8", "0")
    off = plan(layer.replace(n=4096 + 128), "H200")
    assert off.compute.is_16bit and "turned off (HUMMING_INT_FP8=0)" in off.fallbacks[0].reason
    monkeypatch.delenv("HUMMING_INT_FP8")
    # e5m2 holds integers up to 8 exactly: symmetric int4 codes (v - 8 in [-8, 7]) fit, AWQ's zero points do not
    e5 = ActivationScheme("e5m2", "dynamic_token")
    assert plan(layer.replace(n=4096 + 192, activation=e5), "H200").compute.a == "e5m2"
    awq = WeightScheme("uint4", "group", 128, zero_point="int")
    q = plan(layer.replace(n=4096 + 192, weight=awq, activation=e5), "H200")
    assert q.compute.a != "e5m2" and any("not exact in e5m2" in s.reason for s in q.fallbacks)
    assert plan(layer.replace(n=4096 + 192, weight=awq), "H200").compute.a == "e4m3"
    # 8-bit integer codes span more than fp8 holds exactly; int3 has no byte layout
    for w in (WeightScheme("int8", "channel", scale_fmt="fp32"), WeightScheme("int3", "group", 128)):
        assert plan(layer.replace(n=4096 + 192, weight=w), "H200").compute.is_16bit


def test_int4_codes_split_into_e4m3_operands_only_with_the_switch(monkeypatch):
    """HUMMING_INT_FP8_SPLIT=1 (read when a plan is made): int4 codes of offset 8 without zero points, on a chip
    whose plan runs warpgroup tiles at every M (Hopper), take the dequantizer int_bittrick_split -- another
    weight layout (bytes in order), its own fingerprint, a note -- and the warpgroup tiles of at most 64 tokens
    run INT_FP8_MODE 2 (two e4m3 operands per register), the larger ones mode 1 (F2FP after a PRMT per word).
    Off (the default), zero points, e5m2 and Ada keep int_bittrick_cvt."""
    from humming.planner import clear_cache
    from humming_nvidia import gemm_mma_sync as G

    layer = W4A8.replace(n=4096 + 320)  # (a layer no other test plans: plans are cached per layer and device)
    off = plan(layer, "H200")
    monkeypatch.setenv("HUMMING_INT_FP8_SPLIT", "1")
    clear_cache()
    try:
        on = plan(layer, "H200")
        assert off.components["dequantizer"] == "int_bittrick_cvt"
        assert on.components["dequantizer"] == "int_bittrick_split" and on.compute.a == "e4m3", on.explain()
        assert on.fingerprint() != off.fingerprint() and "int_bittrick_split" in str(on.weight_layout.to_dict())
        assert any("two e4m3 operands per register" in n for n in on.notes), on.notes
        modes = {r.lo: dict(on.kernel(max(r.lo, 2)).config)["INT_FP8_MODE"] for r in on.tuning}
        assert all(m == (2 if r.config["bm"] <= G.FP8_SPLIT_MAX_BM else 1) for r, m in zip(on.tuning, modes.values()))
        assert modes[1] == 2 and modes[on.tuning[-1].lo] == 1, modes
        assert "INT_FP8_MODE" not in dict(off.kernel(1).config)
        assert plan(layer.replace(weight=WeightScheme("uint4", "group", 128)), "H200").components[
            "dequantizer"] == "int_bittrick_split"  # (offset 8 implied)
        for other, dev in ((layer.replace(weight=WeightScheme("uint4", "group", 128, zero_point="int")), "H200"),
                           (layer.replace(activation=ActivationScheme("e5m2", "dynamic_token")), "H200"),
                           (layer, "L40S")):
            assert plan(other, dev).components["dequantizer"] == "int_bittrick_cvt", (other, dev)
    finally:
        clear_cache()
