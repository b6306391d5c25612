"""Device: the GPU a plan is for, detected from torch or named ("H20", "sm_120", "zhenwu-810e").

Both kinds resolve to a :class:`~humming.capabilities.Capabilities`; a
detected device also carries the figures torch measured, which take
precedence over the table's product figures::

    from humming.device import Device, get_device
    get_device("H20").sm_count          # 78, from capabilities/h20.yaml, no GPU needed
    get_device(None)                    # the current CUDA device, or DeviceError on a CPU-only machine
    get_device(0).compile_target()      # e.g. "sm_90a"

Detection (:meth:`Device.from_properties`) tries, in order: the detectors that
plugins registered with :func:`register_detector`, the ``product.match`` name
patterns of the capability files, and the architecture file of the reported
compute capability. Nothing here touches the GPU at import time.
"""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

import humming.capabilities as C  # the module itself: ``from . import`` would load every plugin (and torch)
from .errors import DeviceError, UnsupportedError

__all__ = ["Device", "get_device", "register_detector", "unregister_detector"]

Detector = Callable[[Any], "str | None"]
_DETECTORS: list[Detector] = []
_DETECTED: dict[int, "Device"] = {}
_LOCK = threading.Lock()

# torch property name -> key of Device.measured; the limits among them also override Capabilities.limits.
_MEASURED_PROPS = {
    "name": "name",
    "major": "major",
    "minor": "minor",
    "multi_processor_count": "sm_count",
    "L2_cache_size": "l2_bytes",
    "total_memory": "memory_bytes",
    "shared_memory_per_block_optin": "smem_per_block_optin",
    "shared_memory_per_multiprocessor": "smem_per_sm",
    "shared_memory_per_block": "smem_per_block",
    "regs_per_multiprocessor": "regs_per_sm",
    "max_threads_per_multi_processor": "threads_per_sm",
    "warp_size": "warp_size",
}
_MEASURED_LIMITS = ("smem_per_block_optin", "smem_per_sm", "smem_per_block", "regs_per_sm", "threads_per_sm",
                    "warp_size")


def register_detector(fn: Detector) -> Detector:
    """Add a detector: ``fn(torch_props) -> capability name or None`` (plugins call this).

    Detectors run before the built-in name patterns, in registration order;
    the first name returned wins. Returns ``fn``, so it works as a decorator.
    """
    with _LOCK:
        if fn not in _DETECTORS:
            _DETECTORS.append(fn)
        _DETECTED.clear()
    return fn


def unregister_detector(fn: Detector) -> None:
    """Remove a detector added with :func:`register_detector` (no error if it is absent)."""
    with _LOCK:
        if fn in _DETECTORS:
            _DETECTORS.remove(fn)
        _DETECTED.clear()


def _torch():
    import torch  # deferred: importing humming must not initialise CUDA
    return torch


@dataclass(frozen=True, eq=False)
class Device:
    """A GPU: its capability table plus, when detected, what torch reported about it.

    ``name`` is the name torch reports for a detected GPU and the table's name
    for a named one. ``measured`` holds the detected figures (empty when named).
    """

    name: str
    caps: C.Capabilities
    detected: bool = False
    index: int | None = None
    measured: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    # ---- construction ----------------------------------------------------------------------
    @staticmethod
    def available() -> bool:
        """Whether torch sees a CUDA device. Never raises (False on CPU-only machines)."""
        try:
            return bool(_torch().cuda.is_available())
        except Exception:  # a broken driver or CUDA-less torch build: there is no usable GPU
            return False

    @classmethod
    def named(cls, name: str | C.Capabilities) -> "Device":
        """The device a capability name describes ('H20', 'sm_90', 'zhenwu-810e'); no GPU needed."""
        caps = C.load(name)
        return cls(name=caps.name, caps=caps)

    @classmethod
    def detect(cls, index: int | None = None) -> "Device":
        """The CUDA device ``index`` (default: torch's current device), read through torch."""
        if not cls.available():
            raise DeviceError("no CUDA device: torch.cuda.is_available() is False; "
                              "use a named device (e.g. get_device('H200')) to plan without a GPU")
        torch = _torch()
        if index is None:
            index = torch.cuda.current_device()
        count = torch.cuda.device_count()
        if not 0 <= index < count:
            raise DeviceError(f"CUDA device index {index} is out of range: torch sees {count} device(s)")
        cached = _DETECTED.get(index)
        if cached is None:
            cached = cls.from_properties(torch.cuda.get_device_properties(index), index=index)
            with _LOCK:
                _DETECTED[index] = cached
        return cached

    @classmethod
    def from_properties(cls, props: Any, index: int | None = None) -> "Device":
        """Build a detected device from a torch device-properties object (or anything with its attributes)."""
        measured = {key: getattr(props, attr) for attr, key in _MEASURED_PROPS.items()
                    if getattr(props, attr, None) is not None}
        for key in ("name", "major", "minor"):
            if key not in measured:
                raise DeviceError(f"device properties lack '{key}' (found: {', '.join(sorted(measured)) or 'nothing'})")
        caps = _identify(props, measured["name"], (measured["major"], measured["minor"]))
        return cls(name=measured["name"], caps=caps, detected=True, index=index,
                   measured=MappingProxyType(measured))

    # ---- figures (measured first, then the table) --------------------------------------------
    def _product(self, attr: str):
        return getattr(self.caps.product, attr) if self.caps.product is not None else None

    @property
    def sm_count(self) -> int | None:
        return self.measured.get("sm_count", self._product("sm_count"))

    @property
    def l2_bytes(self) -> int | None:
        measured = self.measured.get("l2_bytes")
        return measured if measured else (self._product("l2_bytes") or self.caps.limit("l2_bytes"))

    @property
    def bandwidth_gbs(self) -> float | None:
        """Peak memory bandwidth from the table (torch does not report it)."""
        return self._product("bandwidth_gbs")

    @property
    def memory_gb(self) -> float | None:
        if "memory_bytes" in self.measured:
            return self.measured["memory_bytes"] / 1e9
        return self._product("memory_gb")

    @property
    def max_smem_per_block(self) -> int | None:
        """Largest dynamic shared memory a block can opt in to, bytes."""
        return self.limits.get("smem_per_block_optin")

    @property
    def compute_capability(self) -> tuple[int, int]:
        return self.caps.compute_capability

    @property
    def limits(self) -> Mapping[str, int]:
        """The table's limits with the measured ones laid over them."""
        merged = dict(self.caps.limits)
        merged.update({k: self.measured[k] for k in _MEASURED_LIMITS if k in self.measured})
        return MappingProxyType(merged)

    def compile_target(self, compiler: str = "nvrtc") -> str:
        """The target name to compile for with ``compiler`` ('nvrtc', 'nvcc' or 'plain')."""
        if compiler not in C.COMPILERS:
            raise ValueError(f"unknown compiler {compiler!r}; expected one of {', '.join(C.COMPILERS)}")
        target = self.caps.targets[compiler]
        if target is None:
            usable = [c for c, t in self.caps.targets.items() if t]
            raise UnsupportedError(f"{self.caps.name} cannot be compiled for with {compiler}",
                                   [f"capabilities/{self.caps.name}: compile.{compiler} is null; "
                                    f"use {' or '.join(usable) or 'nothing'}"])
        return target

    # ---- export ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Plain JSON-able summary: identity, effective figures and what was measured."""
        return {
            "name": self.name,
            "capabilities": self.caps.name,
            "chain": list(self.caps.chain),
            "detected": self.detected,
            "index": self.index,
            "compute_capability": list(self.compute_capability),
            "sm_count": self.sm_count,
            "max_smem_per_block": self.max_smem_per_block,
            "l2_bytes": self.l2_bytes,
            "bandwidth_gbs": self.bandwidth_gbs,
            "memory_gb": self.memory_gb,
            "targets": dict(self.caps.targets),
            "provisional": self.caps.provisional,
            "measured": dict(self.measured),
        }

    def fingerprint(self) -> str:
        """16 hex digits naming what a kernel or a weight layout depends on.

        Covers the resolved capability table and the effective SM count,
        shared memory and L2; not the index or the device's marketing name, so
        two identical GPUs (or a named H200 and a detected one with the same
        figures) share a fingerprint.
        """
        key = {"caps": self.caps.to_dict(), "sm_count": self.sm_count, "smem": self.max_smem_per_block,
               "l2": self.l2_bytes, "limits": dict(self.limits)}
        blob = json.dumps(key, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def __repr__(self) -> str:
        where = f"cuda:{self.index}" if self.detected else "named"
        return f"<Device {self.name!r} ({where}) caps={self.caps.name} sm_count={self.sm_count}>"


def _identify(props: Any, name: str, cc: tuple[int, int]) -> C.Capabilities:
    for detector in list(_DETECTORS):
        found = detector(props)
        if found is not None:
            return C.load(found)
    product = C.match_device_name(name)
    if product is not None and product.compute_capability == cc:
        return product
    arch = C.by_compute_capability(*cc)
    if arch is None:
        known = ", ".join(f"{c.name} ({c.compute_capability[0]}.{c.compute_capability[1]})"
                          for c in map(C.load, C.names("architecture")))
        raise UnsupportedError(f"no capability file for {name!r} (compute capability {cc[0]}.{cc[1]})",
                               [f"known architectures: {known}",
                                "add capabilities/sm_XX.yaml, or register a detector or a capability directory"])
    return arch


def get_device(spec: Any = None) -> Device:
    """Resolve ``spec`` to a :class:`Device`.

    ``None``: the current CUDA device (DeviceError without one); a Device: itself;
    an int, ``torch.device('cuda:N')`` or the string ``'cuda[:N]'``: that CUDA
    device; any other string or a Capabilities: the named device.
    """
    if spec is None:
        return Device.detect()
    if isinstance(spec, Device):
        return spec
    if isinstance(spec, C.Capabilities):
        return Device.named(spec)
    if isinstance(spec, bool):
        raise TypeError(f"get_device expects None, a name, an index or a device; found bool {spec!r}")
    if isinstance(spec, int):
        return Device.detect(spec)
    if isinstance(spec, str):
        if spec.strip().lower().split(":")[0] != "cuda":
            return Device.named(spec)
        spec = _torch().device(spec)
    if type(spec).__name__ == "device" and hasattr(spec, "type"):
        if spec.type != "cuda":
            raise DeviceError(f"expected a CUDA device, found torch.device({str(spec)!r})")
        return Device.detect(spec.index)
    raise TypeError(f"get_device expects None, a name, an index or a device; found {type(spec).__name__} {spec!r}")
