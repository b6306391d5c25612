"""Register humming ops with ``torch.library`` without paying for it eagerly.

``register_op("quantize_activation", impl, fake)`` declares the custom op
``torch.ops.humming.quantize_activation`` (schema inferred from ``impl``'s type
hints) with ``fake`` as its fake/meta implementation, so ``torch.compile`` can
trace it and CUDA graphs can capture it. The returned :class:`HummingOp` is what
callers use: while torch.compile traces, it calls the registered op; otherwise it
calls ``impl`` directly, skipping the dispatcher and its host overhead.
"""
from __future__ import annotations

from typing import Callable, Iterable

import torch

__all__ = ["NAMESPACE", "HummingOp", "register_op"]

NAMESPACE = "humming"

_is_compiling = torch.compiler.is_compiling


class HummingOp:
    """A registered op: ``op`` (the torch.library one) and ``impl`` (the Python one)."""

    __slots__ = ("name", "op", "impl", "__weakref__")

    def __init__(self, name: str, op, impl: Callable):
        self.name = name
        self.op = op
        self.impl = impl

    def __call__(self, *args, **kwargs):
        if _is_compiling():
            return self.op(*args, **kwargs)
        return self.impl(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<HummingOp {NAMESPACE}::{self.name}>"


def register_op(name: str, impl: Callable, fake: Callable, mutates_args: Iterable[str] = ()) -> HummingOp:
    """Declare ``humming::<name>`` with ``impl`` (all devices) and ``fake``."""
    op = torch.library.custom_op(f"{NAMESPACE}::{name}", impl, mutates_args=tuple(mutates_args))
    op.register_fake(fake)
    return HummingOp(name, op, impl)
