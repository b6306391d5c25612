"""The plugin system: entry points, hooks, run-time registration, a third-party package."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import pytest

from humming import plugins
from humming.device import Device
from humming.errors import FormatError, UnsupportedError
from humming.planner import ComponentVariant, FamilyBase, MRange, plan
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme

ROOT = Path(__file__).resolve().parents[1]
LAYER = LayerSpec(n=4096, k=4096, weight=WeightScheme("uint4", "group", 128), activation=ActivationScheme("fp16"))


#: the H200 plan's scheduler slot for an int4 g128 layer of 8192 x 8192
SCHED_H200 = ("split_k + cluster_sum (<= 8 slices) + programmatic_launch (M 1-6, M 7-8, "
              "warpgroup tiles whose CTAs spread evenly) + tile_by_waves (fewer tokens per M tile where the "
              "256-token grid would end in a short wave or a part-empty M tile: 160 at M 257-320, 513-640, 1537-1600; "
              "192 at M 321-384, 641-768, 1025-1152; 224 at M 385-448, 769-896, 1153-1344, 1601-1792, 2049-2240, "
              "2561-2688, 3073-3136)")


def _props(name, major=8, minor=0):
    return SimpleNamespace(name=name, major=major, minor=minor, multi_processor_count=20)


def test_builtin_backends_come_from_entry_points():
    eps = {ep.name: ep.value for ep in metadata.entry_points(group=plugins.ENTRY_POINT_GROUP)}
    assert eps["nvidia"] == "humming_nvidia.plugin" and eps["zhenwu"] == "humming_zhenwu.plugin"
    pm = plugins.get_plugin_manager()
    assert pm.has_plugin("nvidia") and pm.has_plugin("zhenwu")
    assert plugins.get_plugin_manager() is pm
    assert plugins.load_errors() == {}


def test_nvidia_families():
    fams = {f.name: f for f in plugins.kernel_families()}
    assert {n: (f.backend, f.mma_family, f.implemented) for n, f in fams.items()}.items() >= {
        "mma_sync": ("nvidia", "mma_sync", True),
        "wgmma": ("nvidia", "wgmma", False),
        "tcgen05": ("nvidia", "tcgen05", False),
        "mma_block_scaled": ("nvidia", "mma_sync", False),
    }.items()
    prios = [f.priority for f in plugins.kernel_families()]
    assert prios == sorted(prios, reverse=True)


def test_nvidia_include_dir():
    dirs = [Path(d) for d in plugins.include_dirs()]
    assert any((d / "humming" / "common.cuh").is_file() for d in dirs)


@pytest.mark.parametrize("name,expected", [("PPU-810E", "zhenwu-810e"), ("ZW810E", "zhenwu-810e"),
                                           ("zw 810e", "zhenwu-810e"), ("NVIDIA A100-SXM4-80GB", None)])
def test_zhenwu_detection(name, expected):
    assert plugins.detect(_props(name)) == expected
    if expected:
        assert Device.from_properties(_props(name)).caps.name == expected


def test_zhenwu_tuning_two_ctas_per_sm_and_no_split_k():
    from humming_nvidia import gemm_mma_sync as G

    # (the hardware plan: this version's kernels do not issue the chip's m16n16k16, so nothing runs there yet,
    # but the plugin's tuning is the plan's)
    p = plan(LAYER, "zhenwu-810e", families="hardware")
    assert p.family == "mma_sync" and p.components["scheduler"] == "data_parallel"
    assert not p.runnable and any("this chip lists m16n16k16" in r for r in p.limits)
    assert any("no NVRTC target" in n and "-DUSE_PPU=1" in n for n in p.notes)
    zw = Device.named("zhenwu-810e")
    recipe = G.recipe_from_plan(p, zw)
    smem_sm = zw.caps.limit("smem_per_sm")
    tiles = [G.tile_from_config(r.config) for r in p.tuning]
    for r, tile in zip(p.tuning, tiles):
        assert tile is not None and r.config["split_k"] == 1, r  # the kernel's tiles; K is never split
        assert 2 * G.smem_bytes(recipe, tile) <= smem_sm  # two CTAs share an SM's shared memory
    # ... and the launcher built from the plan keeps to one K slice at every M
    kp = G.PAD_K * -(-LAYER.k // G.PAD_K)
    assert {s for *_, s in G.launch_ranges(p, recipe, smem_sm // 2, kp)} == {1}
    # more shared memory per CTA than the 48 KB the kernel's own tuning assumes without an opt-in figure
    assert any(G.smem_bytes(recipe, t) > 48 * 1024 for t in tiles)
    # the kernel's own tuning (A100, sm_80-class) lets the launcher split K at small M
    a100 = plan(LAYER.replace(n=1024), "A100")
    assert a100.tuning[0].config["split_k"] > 1 and a100.components["scheduler"] == "split_k"


class _ToyFamily(FamilyBase):
    """A family that takes over plain fp16 mma.sync on dense layers, for these tests."""

    name = "toy"
    backend = "toy"
    mma_family = "mma_sync"
    implemented = True
    priority = 100

    def accepts(self, op):
        return op.kind is None and op.a == "fp16"

    def check(self, layer, caps, compute):
        return ["toy kernels are dense only"] if layer.is_moe else []

    def components(self, layer, caps, compute):
        return {"loader": "ldg", "dequantizer": "toy_lut", "mma": "mma_sync.toy", "scheduler": "data_parallel",
                "epilogue": "scale_bias"}

    def tuning(self, layer, caps, compute):
        return [MRange(1, 8, {"tile_m": 8}), MRange(9, None, {"tile_m": 64})]

    def kernel_spec(self, p, m):
        return ("toy-spec", p.family, p.tuning_for(m).config["tile_m"])


class _ToyPlugin:
    @plugins.hookimpl
    def humming_kernel_families(self):
        return [_ToyFamily()]

    @plugins.hookimpl
    def humming_component_variants(self):
        return [ComponentVariant("epilogue", "toy_epilogue", "toy", families=("toy",),
                                 applies=lambda layer, caps, compute: layer.bias)]


@pytest.fixture
def toy_plugin():
    gen = plugins.generation()
    name = plugins.register(_ToyPlugin(), name="toy")
    assert plugins.generation() > gen
    yield name
    plugins.unregister(name)


def test_runtime_registered_family_and_variant(toy_plugin):
    p = plan(LAYER, "sm_80")
    assert (p.family, p.backend) == ("toy", "toy")
    assert p.components["dequantizer"] == "toy_lut" and p.components["epilogue"] == "scale_bias"
    assert p.kernel(5) == ("toy-spec", "toy", 8) and p.kernel(100) == ("toy-spec", "toy", 64)
    with_bias = plan(LAYER.replace(bias=True), "sm_80")
    assert with_bias.components["epilogue"] == "toy_epilogue"
    assert any("toy_epilogue" in n and "'toy'" in n for n in with_bias.notes)
    # bf16 is not something the family accepts: the next family runs it
    assert plan(LAYER.replace(activation=ActivationScheme("bf16")), "sm_80").family == "mma_sync"
    # the family's check sends MoE layers to the next family: mma_sync runs them (and refuses act order with
    # per-group activation scales, which the toy refuses for its own reason too)
    moe = LAYER.replace(num_experts=4)
    assert plan(moe, "sm_80").family == "mma_sync"
    ao = moe.replace(weight=moe.weight.replace(act_order=True),
                     activation=ActivationScheme("int8", "dynamic_group", 128))
    assert plan(moe.replace(weight=ao.weight), "sm_80").family == "mma_sync"
    with pytest.raises(UnsupportedError) as e:
        plan(ao, "sm_80")
    assert any("toy kernels are dense only" in r for r in e.value.reasons)
    assert any("MoE weights with act order" in r for r in e.value.reasons)
    hw = plan(ao, "sm_80", families="hardware")
    assert hw.family == "mma_sync" and not hw.runnable and any("MoE" in r for r in hw.limits)


def test_what_depends_on_the_tuning_follows_an_override_and_yields_to_a_variant():
    """The mma_sync family's per-range details (the decode tiles' programmatic launches, where group
    scales are applied) come from the final tuning, a plugin's override included; a component variant
    that takes the scheduler slot keeps it as it is."""
    from humming_nvidia import gemm_mma_sync as G

    layer = LayerSpec(8192, 8192, WeightScheme("int4", "group", 128))
    base = plan(layer, "H200")
    assert base.components["scheduler"] == SCHED_H200
    stream = base.tuning_for(1).config

    class Override:
        @plugins.hookimpl
        def humming_tuning(self, family, layer, caps, compute):
            if family.name == "mma_sync":  # the decode tile up to 4 tokens, the mma.sync prefill tile above
                return [MRange(1, 4, dict(stream)), MRange(5, None, G.TILE_64.to_dict())]

    class Variant:
        @plugins.hookimpl
        def humming_component_variants(self):
            return [ComponentVariant("scheduler", "toy_persistent", "toy", families=("mma_sync",))]

    plugins.register(Override(), name="toy_tuning")
    try:
        p = plan(layer, "H200")
        assert p.components["scheduler"] == "split_k + cluster_sum (<= 8 slices) + programmatic_launch (M 1-4)", \
            p.components
        # (the override runs no warpgroup tile: the MMA and loader slots say nothing of wgmma or TMA)
        assert "wgmma" not in p.components["mma"] and "tma" not in p.components["loader"], p.components
        assert "wgmma.m64nNk16.f16 (M >= 9)" in base.components["mma"] and "tma_bulk (M 33-64)" in base.components["loader"]
        assert p.scales["weight_group"] == "partial_accumulators (M 1-4), dequantized_weights (M >= 5)"
        plugins.register(Variant(), name="toy_variant")
        try:
            v = plan(layer, "H200")
            assert v.components["scheduler"] == "toy_persistent" and v.scales == p.scales
        finally:
            plugins.unregister("toy_variant")
    finally:
        plugins.unregister("toy_tuning")


class _LimitedToyFamily(_ToyFamily):
    """A toy family whose implementation (not its instructions) cannot add a bias yet."""

    name = "toy_limited"

    def limits(self, layer, caps, compute):
        return ["toy kernels add no bias yet"] if layer.bias else []


@contextmanager
def _family_registered(family, name):
    """``family`` offered by a plugin registered as ``name`` for the duration."""
    class P:
        @plugins.hookimpl
        def humming_kernel_families(self):
            return [family]

    plugins.register(P(), name=name)
    try:
        yield
    finally:
        plugins.unregister(name)


def test_plugin_family_limits():
    with _family_registered(_LimitedToyFamily(), "limited"):
        assert plan(LAYER, "sm_80").family == "toy_limited"
        biased = LAYER.replace(bias=True)
        # with the implemented families the limit passes the layer on to the next family, and says so
        p = plan(biased, "sm_80")
        assert p.family == "mma_sync" and p.runnable
        assert "not toy_limited (toy) implementation limit for fp16 x fp16: toy kernels add no bias yet" in p.notes
        # with every family the hardware has, only check() decides: the plan names the limit
        hw = plan(biased, "sm_80", families="hardware")
        assert (hw.family, hw.runnable, hw.limits) == ("toy_limited", False, ("toy kernels add no bias yet",))
        assert "toy kernels add no bias yet" in hw.not_runnable_reason and "limits " in hw.explain()


def test_unregister_restores_the_plans(toy_plugin):
    assert plan(LAYER, "sm_80").family == "toy"
    plugins.unregister(toy_plugin)
    try:
        assert plan(LAYER, "sm_80").family == "mma_sync"
    finally:
        plugins.register(_ToyPlugin(), name=toy_plugin)


class _NoSpecFamily(_ToyFamily):
    name = "toy_nospec"
    kernel_spec = None


def test_kernel_of_a_family_without_kernel_specs_is_refused():
    with _family_registered(_NoSpecFamily(), "nospec"):
        p = plan(LAYER, "sm_80")
        assert p.family == "toy_nospec" and p.runnable
        with pytest.raises(UnsupportedError, match="'toy_nospec' .toy. cannot generate kernels"):
            p.kernel(1)


class _BadPlugin:
    def __init__(self, **attrs):
        self.family = _ToyFamily()
        for k, v in attrs.items():
            setattr(self.family, k, v)

    @plugins.hookimpl
    def humming_kernel_families(self):
        return [self.family]


@pytest.mark.parametrize("attrs,message", [
    ({"mma_family": "hgmma"}, "mma_family must be one of mma_sync, wgmma, tcgen05"),
    ({"implemented": "yes"}, "attribute 'implemented' must be a bool"),
    ({"components": None}, r"method components\(\) is missing"),
    ({"name": "mma_sync", "backend": "nvidia"}, "nvidia:mma_sync is offered twice"),
])
def test_malformed_family_is_named(attrs, message):
    name = plugins.register(_BadPlugin(**attrs), name="bad")
    try:
        with pytest.raises(FormatError, match=message):
            plugins.kernel_families()
    finally:
        plugins.unregister(name)
    assert plugins.kernel_families()


def test_tuning_hook_result_is_checked():
    class GapTuning:
        @plugins.hookimpl
        def humming_tuning(self, family, layer):
            return [MRange(1, 8, {}), MRange(10, None, {})]

    name = plugins.register(GapTuning(), name="gap")
    try:
        with pytest.raises(UnsupportedError, match="gap or overlap"):
            plan(LAYER, "sm_86")
    finally:
        plugins.unregister(name)


_PROBE = textwrap.dedent("""
    import contextlib, io, json, warnings
    from humming import cli, plugins

    def run(*argv):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = cli.main(list(argv))
        return rc, buf.getvalue()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plugins.get_plugin_manager()
    plan_args = ["plan", "--weight", "uint4", "--group-size", "128", "--act", "fp16", "--json", "--device"]
    print(json.dumps({
        "load_errors": sorted(plugins.load_errors()),
        "warned": [str(w.message) for w in caught],
        "devices": run("devices", "--no-detect", "--json"),
        "resolve": run("devices", "--resolve", "ACME X1 Pro"),
        "plan_acme": run(*plan_args, "acme-x1"),
        "plan_a100": run(*plan_args, "A100"),
    }))
""")


@pytest.fixture(scope="module")
def third_party(tmp_path_factory):
    """tests/plugin_pkg pip-installed into a temporary target directory, next to a backend whose
    entry point cannot be imported; one subprocess runs the CLI with both on its path."""
    tmp = tmp_path_factory.mktemp("backends")
    src = tmp / "src"
    shutil.copytree(ROOT / "tests" / "plugin_pkg", src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                    "--quiet", "--disable-pip-version-check", "--target", str(site), str(src)],
                   check=True, capture_output=True, text=True)
    assert (site / "humming_acme" / "capabilities" / "acme-x1.yaml").is_file()
    broken = tmp / "broken" / "humming_broken-0.1.dist-info"
    broken.mkdir(parents=True)
    (broken / "METADATA").write_text("Metadata-Version: 2.1\nName: humming-broken\nVersion: 0.1\n")
    (broken / "entry_points.txt").write_text("[humming.backends]\nbroken = humming_no_such_module.plugin\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(broken.parent)]))
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_third_party_device_is_listed_and_detected(third_party):
    rc, text = third_party["devices"]
    acme = [d for d in json.loads(text) if d["name"] == "acme-x1"]
    assert rc == 0 and acme == [{"name": "acme-x1", "kind": "device", "chain": ["sm_80", "acme-x1"],
                                 "provisional": True, "detected": False, "index": None, "gpu_name": None}]
    assert third_party["resolve"] == [0, "'ACME X1 Pro' -> acme-x1 (device; sm_80 -> acme-x1)\n"]


def test_third_party_component_is_chosen(third_party):
    rc, text = third_party["plan_acme"]
    p = json.loads(text)
    assert rc == 0 and p["components"]["loader"] == "acme_dma"
    assert p["device"] == {"name": "acme-x1", "chain": ["sm_80", "acme-x1"]}
    assert any("acme_dma" in n and "'acme'" in n for n in p["notes"])
    # the same layer on a plain sm_80 product keeps the NVIDIA loader
    assert json.loads(third_party["plan_a100"][1])["components"]["loader"] == "cp_async"


def test_broken_backend_is_skipped_with_a_warning(third_party):
    assert third_party["load_errors"] == ["broken"]
    assert any("'broken'" in w and "humming_no_such_module" in w for w in third_party["warned"])


def test_third_party_backend_leaves_this_environment_alone(third_party):
    assert "humming-acme-backend" not in {d.metadata["Name"] for d in metadata.distributions()}
    assert "acme" not in {ep.name for ep in metadata.entry_points(group=plugins.ENTRY_POINT_GROUP)}
    assert not (ROOT / "tests" / "plugin_pkg" / "build").exists()
    assert not list((ROOT / "tests" / "plugin_pkg").glob("*.egg-info"))
    assert all(d.name != "acme-x1" for d in plugins.devices(detect_gpus=False))
