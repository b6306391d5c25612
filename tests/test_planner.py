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

from humming import capabilities as C
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

PLAN_KEYS = {"plan_version", "layer", "device", "mode", "compute", "fallbacks", "family", "runnable",
             "not_runnable_reason", "components", "scales", "weight_layout", "activation", "tuning", "notes",
             "fingerprint"}


def test_plan_is_frozen():
    p = plan(W4A16, "H100")
    assert isinstance(p, Plan)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.family = "wgmma"
    with pytest.raises(TypeError):
        p.components["loader"] = "ldg"
    with pytest.raises(TypeError):
        p.tuning[0].config["tile_m"] = 1


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
    assert list(d["components"]) == ["loader", "dequantizer", "mma", "scheduler", "epilogue"]
    assert set(d["weight_layout"]) == {"name", "version", "params", "fingerprint"}
    assert set(d["activation"]) == {"quantize", "values", "stored_as", "operand", "convert", "scales"}
    assert d["activation"]["convert"] == "e4m3 -> fp16"
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


def test_plans_are_cached_per_layer_device_and_mode():
    a = plan(W4A16, "H20")
    assert plan(W4A16, "h20") is a                      # aliases resolve to the same table
    assert plan(W4A16, Device.named("H20")) is a
    assert plan(W4A16, "H20", families="hardware") is not a
    assert plan(W4A16.replace(n=2048), "H20") is not a


def test_tuning_covers_every_m():
    p = plan(W4A16, "A100")
    assert 3 <= len(p.tuning) <= 5
    assert p.tuning[0].lo == 1 and p.tuning[-1].hi is None
    for a, b in zip(p.tuning, p.tuning[1:]):
        assert b.lo == a.hi + 1
    for m in (1, 16, 17, 64, 65, 300, 10**6):
        r = p.tuning_for(m)
        assert r.contains(m)
        cfg = r.config
        assert cfg["stages"] >= 2 and cfg["tile_k"] % 64 == 0 and C.load("A100").limit(
            "smem_per_block_optin") >= cfg["tile_m"] * cfg["tile_k"] * 2 * cfg["stages"]
    with pytest.raises(ValueError, match="positive integer"):
        p.tuning_for(0)


def test_tuning_follows_the_device_figures():
    # one narrow layer at small M: the chip with more SMs splits K further to fill them
    narrow = LayerSpec(n=1024, k=8192, weight=WeightScheme("uint4", "group", 128))
    t4 = plan(narrow, "T4").tuning_for(1).config
    a100 = plan(narrow, "A100").tuning_for(1).config
    assert a100["split_k"] > t4["split_k"] >= 1
    # no cp.async on Turing: loads are register-staged and double-buffered
    assert plan(narrow, "T4").components["loader"] == "ldg"
    assert all(r.config["stages"] == 2 for r in plan(narrow, "T4").tuning)
    assert plan(narrow, "T4").components["scheduler"] == "split_k"


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
        p = plan(W4A16, name, families=mode)
        assert p.device_chain == C.load(name).chain
        assert p.runnable == p.implemented
        assert (p.family == "mma_sync") == p.runnable


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
