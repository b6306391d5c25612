"""scripts/gpu_trace.py's reading of CTA timelines (the GPU writes them; here synthetic ones)."""
from __future__ import annotations

import pytest
import torch
from _scripts import load_script


def load():
    return load_script("gpu_trace")


def timeline(start_ns: int, ctas: int = 4, split_sum: bool = False) -> torch.Tensor:
    """A call whose CTA c enters at start + 100 c ns, passes the wait 1000 ns after the first entry,
    stages in 500 ns, loops for 3000 + 200 c ns, and exits 300 ns later (CTA 0 also sums)."""
    t = torch.zeros(ctas, 16, dtype=torch.int64)
    for c in range(ctas):
        e = start_ns + 100 * c
        w = start_ns + 1000 + 10 * c
        t[c, 0], t[c, 1], t[c, 2] = e, w, w + 500
        t[c, 3] = w + 500 + 3000 + 200 * c
        t[c, 4] = t[c, 3] + 300
        t[c, 7] = c  # the SM
    if split_sum:
        t[0, 5] = t[0, 3] + 100
    return t


def test_analyse_reports_each_phase_of_the_calls():
    tr = load()
    calls = [timeline(1_000_000 + i * 5_000, split_sum=True) for i in range(5)]
    r = tr.analyse(calls)
    # the last exit: start + 1030 + 500 + 3600 + 300 = start + 5430; calls 5000 ns apart
    assert r["period"] == pytest.approx(5.0)
    assert r["span"] == pytest.approx(5.43)
    assert r["overlap"] == pytest.approx(0.43)  # the call before ends 430 ns after this one's first entry
    assert r["launch"] == pytest.approx(0.3)
    assert r["stage"] == pytest.approx(1.32)  # entry -> staged (1500 - 90 c ns), torch's lower median
    assert (r["loop_min"], r["loop_max"]) == (pytest.approx(3.0), pytest.approx(3.6))
    assert r["loop_med"] == pytest.approx(3.2)
    assert r["tail"] == pytest.approx(0.3)
    assert r["sum"] == pytest.approx(0.2)  # the summing CTA: its stamp 5 -> exit
    assert r["wait"] == pytest.approx(1.0 - 0.43)  # the first wait returns 570 ns after the call before ends
    assert r["spread"] == pytest.approx((5430 - 5010) / 1e3)  # last exit - median exit (exits 4800 + 210 c)
    assert r["ctas"] == 4 and r["timer_step_ns"] == 10


def test_analyse_skips_ctas_that_never_stamped():
    """A CTA whose record stayed zero (it never ran, or the buffer was larger) does not count."""
    tr = load()
    calls = []
    for i in range(3):
        t = torch.cat([timeline(2_000_000 + i * 6_000), torch.zeros(2, 16, dtype=torch.int64)])
        calls.append(t)
    r = tr.analyse(calls)
    assert r["period"] == pytest.approx(6.0) and r["launch"] == pytest.approx(0.3)
    assert "sum" not in r
