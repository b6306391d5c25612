"""scripts/gpu_wgmma_rate.py's probe kernel (scripts/probes/wgmma_rate.cuh), on the CPU: each variant the script
times compiles for sm_90a without a stack, issues wgmmas of its width only, and -- where it asks for one group in
flight -- keeps them unserialized (ptxas drains every group only where a wgmma's inputs are redefined while
groups are pending, C7513), so the figures it gives on a GPU are the tensor pipe's, not a compiler fallback's."""
from __future__ import annotations

import pytest
from _scripts import load_script

from humming.jit import Runtime
from humming.jit import inspect as I

RATE = load_script("gpu_wgmma_rate")


@pytest.mark.parametrize("variant", sorted({v[:5] for v in RATE.VARIANTS}),
                         ids=lambda v: "n{}-wait{}-ch{}-redef{}-wg{}".format(*v))
def test_wgmma_rate_probe_compiles_as_it_is_measured(variant, tmp_path, monkeypatch):
    monkeypatch.setenv("HUMMING_INCLUDE_PATH", str(RATE.PROBES))
    kernel = Runtime(cache_dir=tmp_path).kernel(RATE.spec(*variant))
    n, wait = variant[0], variant[1]
    use = I.resource_usage(kernel.cubin)["humming_entry"]
    assert use["STACK"] == 0 and use["LOCAL"] == 0, use
    sass = I.disassemble(kernel.cubin)
    hgmma = [ln for ln in sass.splitlines() if "HGMMA." in ln]
    assert hgmma and all(f"HGMMA.64x{n}x16.F32 " in ln for ln in hgmma), hgmma[:4]
    drains = sass.count("WARPGROUP.DEPBAR.LE gsb0, 0x0")
    if wait == 1:  # one group left in flight after each commit; a single drain after the loop
        assert "WARPGROUP.DEPBAR.LE gsb0, 0x1" in sass and drains == 1, drains
    else:
        assert drains >= 1


@pytest.mark.parametrize("variant", sorted({v[:3] for v in RATE.MMA_VARIANTS}),
                         ids=lambda v: "warps{}-ch{}-redef{}".format(*v))
@pytest.mark.parametrize("target", ["sm_90a", "sm_80"])
def test_mma_sync_rate_probe_compiles_as_it_is_measured(variant, target, tmp_path, monkeypatch):
    """The mma.sync probe: m16n8k16 fp16 -> fp32 only (HMMA.16816.F32), a group of eight in the loop (the loop is
    counted per turn, however ptxas unrolls the turns), no stack, for the H200 and for Ampere alike."""
    monkeypatch.setenv("HUMMING_INCLUDE_PATH", str(RATE.PROBES))
    kernel = Runtime(cache_dir=tmp_path).kernel(RATE.mma_spec(*variant, target=target))
    use = I.resource_usage(kernel.cubin)["humming_entry"]
    assert use["STACK"] == 0 and use["LOCAL"] == 0, use
    sass = I.disassemble(kernel.cubin)
    mma = [ln for ln in sass.splitlines() if "MMA." in ln]
    assert mma and all("HMMA.16816.F32 " in ln for ln in mma), mma[:4]
    assert len(mma) % 8 == 0, len(mma)  # (groups of eight; ptxas may unroll the loop over them)
