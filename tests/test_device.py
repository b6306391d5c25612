"""Device: named devices for every capability name, detection from (fake) torch properties, the
plugin detector hook, and, on a GPU machine, detection of the real device."""
from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch

from humming import capabilities as C
from humming import device as D
from humming.device import Device, get_device, register_detector, unregister_detector
from humming.errors import DeviceError, UnsupportedError

cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the behaviour without a GPU")


def props(name="NVIDIA H200", major=9, minor=0, sms=132, **extra):
    return SimpleNamespace(name=name, major=major, minor=minor, multi_processor_count=sms, **extra)


@pytest.fixture
def fresh_detection():
    """Forget cached detections before and after the test."""
    D._DETECTED.clear()
    yield
    D._DETECTED.clear()


@pytest.mark.parametrize("name", C.names())
def test_named_device_for_every_name(name):
    d = get_device(name)
    caps = C.load(name)
    assert d.caps is caps and d.name == caps.name and not d.detected and d.index is None
    assert d.measured == {} and d.compute_capability == caps.compute_capability
    assert d.sm_count == (caps.product.sm_count if caps.product else None)
    assert d.max_smem_per_block == caps.limit("smem_per_block_optin")
    assert d.bandwidth_gbs == (caps.product.bandwidth_gbs if caps.product else None)
    if caps.targets["nvrtc"]:
        assert d.compile_target() == caps.targets["nvrtc"]
    assert d.compile_target("nvcc") == caps.targets["nvcc"]
    summary = d.to_dict()
    assert json.loads(json.dumps(summary)) == summary and summary["capabilities"] == name
    fp = d.fingerprint()
    assert len(fp) == 16 and int(fp, 16) >= 0 and fp == get_device(name).fingerprint()


def test_named_figures_and_targets():
    h20 = get_device("h20")
    assert (h20.name, h20.sm_count, h20.bandwidth_gbs, h20.l2_bytes) == ("H20", 78, 4000, 60 * 2**20)
    assert h20.compile_target() == "sm_90a" and h20.compile_target("plain") == "sm_90"
    assert get_device("sm_120").compile_target("nvrtc") == "sm_120a"
    assert get_device("sm_90").sm_count is None  # an architecture has no SM count
    with pytest.raises(UnsupportedError, match="zhenwu-810e cannot be compiled for with nvrtc") as info:
        get_device("zhenwu-810e").compile_target("nvrtc")
    assert "compile.nvrtc is null" in str(info.value) and "nvcc" in str(info.value)
    with pytest.raises(ValueError, match="unknown compiler 'clang'"):
        h20.compile_target("clang")
    assert h20.fingerprint() != get_device("H200").fingerprint()


def test_get_device_accepts_devices_and_capabilities():
    d = get_device("B200")
    assert get_device(d) is d
    assert get_device(C.load("B200")).caps is d.caps
    with pytest.raises(C.CapabilityError, match="unknown device or architecture 'cpu'"):
        get_device("cpu")
    with pytest.raises(DeviceError, match=r"expected a CUDA device, found torch.device\('cpu'\)"):
        get_device(torch.device("cpu"))
    with pytest.raises(TypeError, match="found float"):
        get_device(1.5)
    with pytest.raises(TypeError, match="found bool"):
        get_device(True)


@cpu_only
def test_no_gpu_means_device_error_not_a_crash():
    assert Device.available() is False
    for spec in (None, 0, "cuda", "cuda:0", torch.device("cuda:0")):
        with pytest.raises(DeviceError, match="torch.cuda.is_available"):
            get_device(spec)


def test_import_does_not_touch_torch_or_the_gpu():
    code = "import sys, humming.device, humming.capabilities; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ------------------------------------------------------------------------------------------
# detection from properties (no GPU needed)
# ------------------------------------------------------------------------------------------

def test_detect_product_by_name():
    d = Device.from_properties(props(L2_cache_size=62914560, total_memory=150_000_000_000,
                                     shared_memory_per_block_optin=232448), index=0)
    assert d.caps.name == "H200" and d.detected and d.index == 0 and d.name == "NVIDIA H200"
    assert (d.sm_count, d.bandwidth_gbs, d.max_smem_per_block, d.l2_bytes) == (132, 4800, 232448, 62914560)
    assert d.memory_gb == 150.0
    assert d.fingerprint() == get_device("H200").fingerprint()  # same figures as the named H200


def test_measured_figures_override_the_table():
    d = Device.from_properties(props("NVIDIA H100 80GB HBM3", sms=114, shared_memory_per_block_optin=200000,
                                     L2_cache_size=0, warp_size=32))
    assert d.caps.name == "H100" and d.sm_count == 114 and d.bandwidth_gbs == 3350
    assert d.max_smem_per_block == 200000 and d.limits["smem_per_block_optin"] == 200000
    assert d.limits["threads_per_sm"] == 2048  # not measured: from the table
    assert d.l2_bytes == 52428800  # a zero report falls back to the product's L2
    assert d.fingerprint() != get_device("H100").fingerprint()
    twin = Device.from_properties(props("NVIDIA H100 80GB HBM3", sms=114, shared_memory_per_block_optin=200000,
                                        L2_cache_size=0, warp_size=32), index=1)
    assert twin.fingerprint() == d.fingerprint()  # the index is not part of it


def test_unknown_product_falls_back_to_the_architecture():
    d = Device.from_properties(props("NVIDIA GH200 480GB", sms=132))
    assert d.caps.name == "sm_90" and d.sm_count == 132 and d.bandwidth_gbs is None
    assert d.compile_target() == "sm_90a"


def test_name_match_with_wrong_compute_capability_is_ignored():
    d = Device.from_properties(props("NVIDIA H200", major=12, minor=0, sms=10))
    assert d.caps.name == "sm_120"


def test_unknown_compute_capability():
    with pytest.raises(UnsupportedError, match=r"no capability file for 'Tesla V100' \(compute capability 7.0\)") as info:
        Device.from_properties(props("Tesla V100", major=7, minor=0, sms=80))
    assert any("sm_90 (9.0)" in r for r in info.value.reasons)


def test_missing_properties():
    with pytest.raises(DeviceError, match="device properties lack 'major'"):
        Device.from_properties(SimpleNamespace(name="x", minor=0))


def test_zhenwu_by_name_pattern():
    d = Device.from_properties(props("ZW810E", major=8, minor=0, sms=20))
    assert d.caps.name == "zhenwu-810e" and d.caps.provisional and d.compile_target("nvcc") == "sm_80"


def test_register_detector_runs_first_and_can_be_removed(fresh_detection):
    seen = []

    def acme(p):
        seen.append(p.name)
        return "zhenwu-810e" if p.name.startswith("Acme") else None

    def broken(p):
        return "sm_999"

    acme_props = props("Acme X1", major=8, minor=0, sms=20)
    assert Device.from_properties(acme_props).caps.name == "sm_80"
    assert register_detector(acme) is acme
    try:
        assert Device.from_properties(acme_props).caps.name == "zhenwu-810e"
        assert Device.from_properties(props("NVIDIA H20", sms=78)).caps.name == "H20"  # acme said None
        assert seen == ["Acme X1", "NVIDIA H20"]
        register_detector(broken)
        with pytest.raises(C.CapabilityError, match="unknown device or architecture 'sm_999'"):
            Device.from_properties(props("NVIDIA H20", sms=78))
    finally:
        unregister_detector(acme)
        unregister_detector(broken)
    assert Device.from_properties(acme_props).caps.name == "sm_80"


def test_detect_through_a_fake_torch(monkeypatch, fresh_detection):
    calls = []

    def get_props(i):
        calls.append(i)
        return props("NVIDIA B200", major=10, minor=0, sms=148)

    fake = SimpleNamespace(device=torch.device, cuda=SimpleNamespace(
        is_available=lambda: True, device_count=lambda: 2, current_device=lambda: 1, get_device_properties=get_props))
    monkeypatch.setattr(D, "_torch", lambda: fake)
    assert Device.available()
    d = get_device(None)
    assert d.index == 1 and d.caps.name == "B200" and d.compile_target() == "sm_100a"
    assert get_device(1) is d and get_device("cuda:1") is d and get_device(torch.device("cuda", 1)) is d
    assert get_device("cuda:0").index == 0
    assert calls == [1, 0]  # properties are read once per index
    with pytest.raises(DeviceError, match="index 5 is out of range: torch sees 2"):
        get_device(5)


# ------------------------------------------------------------------------------------------
# on a GPU
# ------------------------------------------------------------------------------------------

@pytest.mark.gpu  # tests/conftest.py skips it without a GPU
def test_detects_the_real_gpu():
    d = get_device(None)
    real = torch.cuda.get_device_properties(d.index)
    assert d.detected and d.index == torch.cuda.current_device()
    assert d.caps.compute_capability == (real.major, real.minor)
    assert d.sm_count == real.multi_processor_count
    assert d.name == real.name
    assert d.max_smem_per_block == real.shared_memory_per_block_optin
    target = d.compile_target()
    assert target.startswith(f"sm_{real.major}{real.minor}")
    if "H200" in real.name:
        assert d.caps.name == "H200" and d.bandwidth_gbs == 4800
    assert get_device(d.index) is d
