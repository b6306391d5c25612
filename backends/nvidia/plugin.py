"""The NVIDIA backend, registered through the ``humming.backends`` entry point
(``nvidia = "humming_nvidia.plugin"``), like any third-party backend.

It offers the NVIDIA kernel families (:mod:`humming_nvidia.families`) and the
CUDA component headers under ``include/``. NVIDIA GPUs are detected by the core
(product name patterns and compute capability in the capability files), so this
backend adds no detector and no capability files of its own.
"""
from __future__ import annotations

from pathlib import Path

from humming.plugins import hookimpl

from .families import FAMILIES

INCLUDE_DIR = Path(__file__).resolve().parent / "include"


@hookimpl
def humming_kernel_families():
    return list(FAMILIES)


@hookimpl
def humming_include_dirs():
    return [str(INCLUDE_DIR)]
