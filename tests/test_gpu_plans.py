"""The planner expectations of the GPU tests, checked on the CPU.

Many GPU tests of test_gemm_gpu.py plan their layer for an H200 (or for "this GPU") and assert which tile each
token range gets before they launch anything. Those assertions are about the planner alone, so a planner change can
break them on a machine without a GPU, where the GPU tests are skipped: the seventieth session found, on an H100,
that three layers of the 16-row long-K ring's test had left that ring on the H200 plan three sessions before. Here
each such test runs with its launches stubbed out (``run_and_check``: nothing), its data left out (``torch.randn``
and ``reference.quantize``: placeholders nothing reads) and "this GPU" an H200 (132 SMs, sm_90): every planner
assertion in it runs, nothing else.
"""
from __future__ import annotations

import types

import pytest
import torch

import test_gemm_gpu as T
from humming import reference as R
from humming.planner import plan

#: the GPU tests whose bodies, launches aside, only plan and assert
PLAN_TESTS = (
    "test_three_bit_rings_through_the_planner",
    "test_one_token_rings_of_2_bit_fp4_and_per_channel_codes_through_the_planner",
    "test_one_token_short_k_rings_within_one_wave",
    "test_one_token_over_a_long_k_on_the_16_row_ring",
    "test_batched_decode_through_the_planner",
    "test_rings_keep_a_window_where_the_tokens_outgrow_the_slice",
    "test_byte_codes_two_ctas_per_sm_through_the_planner",
    "test_fp8_group_activations_on_warpgroup_mmas",
    "test_wide_token_ranges_through_the_planner",
    "test_large_m_steps_by_their_waves_through_the_planner",
    "test_short_k_layers_on_the_sixteen_warp_tile",
    "test_byte_operands_above_512_tokens_by_their_padded_rows",
    "test_narrow_layers_run_17_64_tokens_on_the_16_token_tile",
    "test_byte_operands_at_65_512_tokens_through_the_planner",
    "test_byte_codes_at_65_128_tokens_on_wide_layers",
)

H200_PROPS = types.SimpleNamespace(major=9, minor=0, multi_processor_count=132, shared_memory_per_block_optin=232448,
                                   shared_memory_per_multiprocessor=233472, name="NVIDIA H200")


def _cases():
    """(test name, its keyword arguments) for every parametrization of PLAN_TESTS."""
    import inspect
    import itertools

    for name in PLAN_TESTS:
        f = getattr(T, name)
        axes = []
        for mark in getattr(f, "pytestmark", []):
            if mark.name != "parametrize":
                continue
            arg = mark.args[0]
            names = [a.strip() for a in arg.split(",")] if isinstance(arg, str) else list(arg)
            values = [tuple(getattr(v, "values", v)) if len(names) > 1 else (getattr(v, "values", (v,))[0],)
                      for v in mark.args[1]]
            axes.append((names, values))
        params = inspect.signature(f).parameters
        for i, combo in enumerate(itertools.product(*[vals for _, vals in axes])):
            kw = {}
            for (names, _), vals in zip(axes, combo):
                kw.update(zip(names, vals))
            yield pytest.param(name, {k: v for k, v in kw.items() if k in params}, id=f"{name[5:]}-{i}")


@pytest.mark.parametrize("name,kw", list(_cases()))
def test_gpu_test_plan_expectations_hold(name, kw, monkeypatch):
    monkeypatch.setattr(T, "run_and_check", lambda *a, **k: 0.0)
    monkeypatch.setattr(R, "quantize", lambda *a, **k: None)
    monkeypatch.setattr(torch, "randn", lambda *a, **k: torch.zeros(()))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda *a, **k: H200_PROPS)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a, **k: (9, 0))
    monkeypatch.setattr(T, "plan", lambda layer, device=None, **k: plan(
        layer, "h200" if device is None or str(device).startswith("cuda") else device, **k))
    getattr(T, name)(**kw)


def test_the_checked_tests_are_gpu_tests_that_launch():
    """Each test checked above is a GPU test of test_gemm_gpu.py that launches through run_and_check (so stubbing it
    leaves the planner's part), and the cases cover every parametrization."""
    import inspect

    assert T.pytestmark.name == "gpu"
    for name in PLAN_TESTS:
        assert "run_and_check(" in inspect.getsource(getattr(T, name)), name
    assert len(list(_cases())) >= 100
