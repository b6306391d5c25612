"""ACME backend hooks: a capability file, a detector and one component variant.

The ACME X1 is an sm_80-class chip with a DMA engine; its backend reuses the
NVIDIA ``mma_sync`` family but loads tiles with its own ``acme_dma`` loader.
"""
from __future__ import annotations

from pathlib import Path

from humming.planner import ComponentVariant
from humming.plugins import hookimpl

DEVICE = "acme-x1"


@hookimpl
def humming_capability_dirs():
    return [str(Path(__file__).resolve().parent / "capabilities")]


@hookimpl
def humming_detect_device(props):
    return DEVICE if str(getattr(props, "name", "")).upper().startswith("ACME") else None


def _on_acme(layer, caps, compute) -> bool:
    return DEVICE in tuple(caps.chain)


@hookimpl
def humming_component_variants():
    return [ComponentVariant(slot="loader", name="acme_dma", backend="acme", families=("mma_sync",),
                             applies=_on_acme, priority=10,
                             description="tiles arrive through the ACME DMA engine")]
