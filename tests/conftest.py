"""Shared test fixtures.

* Tests marked ``@pytest.mark.gpu`` are skipped when torch sees no CUDA GPU.
* ``jit_runtime``: a :class:`humming.jit.Runtime` over a fresh cache folder.
* ``isolated_cache``: points ``HUMMING_CACHE_DIR`` (and the default runtime) at
  a fresh folder for one test.
* ``HUMMING_TUNING_DB`` is ``off`` unless set: plans come from the heuristics.
* ``poison_cuda``: call it to fill free memory of torch's caching allocator with
  NaN bytes, so a kernel that leaves outputs unwritten is caught.
"""
from __future__ import annotations

import os

import pytest
import torch

# Plans in tests come from the heuristics: a tuning database on this machine (`humming tune`) must not
# change them. Tests of the database point HUMMING_TUNING_DB at their own file.
os.environ.setdefault("HUMMING_TUNING_DB", "off")


def _has_gpu() -> bool:
    try:
        return torch.cuda.is_available() and torch.cuda.device_count() > 0
    except Exception:
        return False


HAS_GPU = _has_gpu()


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (marker 'gpu')")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def jit_runtime(tmp_path):
    from humming.jit import Runtime

    return Runtime(cache_dir=tmp_path / "jit-cache")


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    from humming.jit import reset_default_runtime

    folder = tmp_path / "humming-cache"
    monkeypatch.setenv("HUMMING_CACHE_DIR", str(folder))
    reset_default_runtime()
    yield folder
    reset_default_runtime()


@pytest.fixture
def poison_cuda():
    def poison(nbytes: int = 64 << 20, byte: int = 0xFF) -> None:
        # blocks of every size class (torch keeps small and large pools apart)
        sizes = [nbytes] + [1 << p for p in range(9, 21) for _ in range(4)]
        junk = [torch.full((n,), byte, dtype=torch.uint8, device="cuda") for n in sizes]
        torch.cuda.synchronize()
        del junk  # the blocks go back to the cache, still full of `byte`

    return poison
