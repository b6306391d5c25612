"""The error hierarchy of humming.

Every error names what it is about (the tensor, key, field or kernel), what was
expected and what was found, so that a user can act on the message alone.
"""
from __future__ import annotations


class HummingError(Exception):
    """Base class of every error humming raises on purpose."""


class UnsupportedError(HummingError):
    """Nothing the library has can run this request.

    ``reasons`` lists every reason that was found (one line each); the message
    shows them all, so that a serving engine can log it and fall back.
    """

    def __init__(self, message: str, reasons: list[str] | tuple[str, ...] = ()):
        self.reasons = list(reasons)
        text = message
        if self.reasons:
            text += "\n" + "\n".join(f"  - {r}" for r in self.reasons)
        super().__init__(text)


class FormatError(HummingError, ValueError):
    """A checkpoint, scheme or tensor does not match what its format requires."""


class ShapeError(HummingError, ValueError):
    """A tensor has the wrong shape, dtype, device or strides for the call."""


class CompileError(HummingError):
    """A kernel failed to compile. Carries the compiler log and the kept source."""

    def __init__(self, message: str, log: str = "", source_path: str | None = None):
        self.log = log
        self.source_path = source_path
        text = message
        if source_path:
            text += f"\n  source kept at: {source_path}"
        if log:
            text += "\n  compiler log:\n" + "\n".join("    " + l for l in log.strip().splitlines())
        super().__init__(text)


class DeviceError(HummingError, RuntimeError):
    """No usable GPU for a launch, or a prepared weight used on the wrong device."""


__all__ = [
    "HummingError",
    "UnsupportedError",
    "FormatError",
    "ShapeError",
    "CompileError",
    "DeviceError",
]
