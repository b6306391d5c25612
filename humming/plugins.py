"""The plugin system: pluggy hook specifications and the plugin manager.

A backend is a Python module registered under the ``humming.backends``
entry-point group (the built-in ``humming_nvidia`` and ``humming_zhenwu`` are
registered exactly like a third-party package would be)::

    [project.entry-points."humming.backends"]
    acme = "humming_acme.plugin"

and implements any of the hooks below with ``@humming.plugins.hookimpl``. The
plugin manager loads the entry points once (:func:`get_plugin_manager`), adds
the capability directories the backends contribute and routes device detection
to them. A backend that fails to import is reported (:func:`load_errors`, a
warning) and skipped, so one broken package cannot break every plan.
"""
from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from importlib import metadata

import pluggy

from .errors import FormatError

__all__ = [
    "PROJECT",
    "ENTRY_POINT_GROUP",
    "hookspec",
    "hookimpl",
    "BackendSpec",
    "get_plugin_manager",
    "register",
    "unregister",
    "generation",
    "load_errors",
    "kernel_families",
    "component_variants",
    "include_dirs",
    "capability_dirs",
    "tuning_override",
    "detect",
    "DeviceEntry",
    "devices",
    "entry_of",
]

PROJECT = "humming"
ENTRY_POINT_GROUP = "humming.backends"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class BackendSpec:
    """The hooks a backend may implement (all optional)."""

    @hookspec
    def humming_capability_dirs(self):
        """Directories of capability YAML files this backend contributes (list of paths)."""

    @hookspec(firstresult=True)
    def humming_detect_device(self, props):
        """The capability name for a detected GPU, or None.

        ``props`` is ``torch.cuda.get_device_properties(i)`` (or any object
        with ``name``, ``major``, ``minor``, ``multi_processor_count``).
        """

    @hookspec
    def humming_kernel_families(self):
        """Kernel families this backend offers (objects following
        :class:`humming.planner.KernelFamily`)."""

    @hookspec
    def humming_component_variants(self):
        """Component variants this backend adds to existing families
        (:class:`humming.planner.ComponentVariant` objects)."""

    @hookspec(firstresult=True)
    def humming_tuning(self, family, layer, caps, compute):
        """A list of :class:`humming.planner.MRange` replacing ``family``'s own tuning, or None."""

    @hookspec
    def humming_include_dirs(self):
        """Directories of CUDA headers this backend contributes to the JIT (list of paths)."""


_lock = threading.RLock()
_pm: pluggy.PluginManager | None = None
_errors: dict[str, BaseException] = {}
_generation = 0
_cache: dict = {}
_dirs_registered: set[str] = set()


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, with every ``humming.backends`` entry point loaded (once)."""
    global _pm
    if _pm is not None:
        return _pm
    with _lock:
        if _pm is None:
            pm = pluggy.PluginManager(PROJECT)
            pm.add_hookspecs(BackendSpec)
            for ep in _entry_points():
                if pm.has_plugin(ep.name):
                    continue
                try:
                    pm.register(ep.load(), name=ep.name)
                except Exception as e:  # a broken third-party backend must not break the rest
                    _errors[ep.name] = e
                    warnings.warn(f"humming: backend {ep.name!r} ({ep.value}) failed to load and is "
                                  f"skipped: {type(e).__name__}: {e}", RuntimeWarning, stacklevel=2)
            _pm = pm
            _activate()
    return _pm


def _entry_points():
    eps = metadata.entry_points()
    group = eps.select(group=ENTRY_POINT_GROUP) if hasattr(eps, "select") else eps.get(ENTRY_POINT_GROUP, [])
    seen, out = set(), []
    for ep in group:  # the same distribution may be visible twice on sys.path
        if ep.name not in seen:
            seen.add(ep.name)
            out.append(ep)
    return out


def _detect_hook(props):
    return get_plugin_manager().hook.humming_detect_device(props=props)


def _activate() -> None:
    """Hand what the backends contribute to the capability and device layers; reset caches."""
    global _generation
    from . import capabilities, device

    for d in capability_dirs():
        if d not in _dirs_registered:
            capabilities.register_directory(d)
            _dirs_registered.add(d)
    device.register_detector(_detect_hook)  # idempotent: one detector routes to every backend
    _generation += 1
    _cache.clear()


def register(plugin, name: str | None = None) -> str:
    """Register a backend object or module at run time (tests, notebooks); returns its name."""
    pm = get_plugin_manager()
    with _lock:
        registered = pm.register(plugin, name=name)
        if registered is None:
            raise FormatError(f"plugin {name or plugin!r}: already registered or blocked")
        _activate()
    return registered


def unregister(name: str) -> None:
    pm = get_plugin_manager()
    with _lock:
        pm.unregister(name=name)
        _activate()


def generation() -> int:
    """A counter bumped whenever the set of plugins changes (planner caches key on it)."""
    get_plugin_manager()
    return _generation


def load_errors() -> dict[str, BaseException]:
    """Backends whose entry point failed to load, by entry-point name."""
    get_plugin_manager()
    return dict(_errors)


def _flatten(results) -> list:
    out = []
    for r in results:
        if r is None:
            continue
        if isinstance(r, (list, tuple)):
            out.extend(r)
        else:
            out.append(r)
    return out


_FAMILY_ATTRS = (("name", str), ("backend", str), ("mma_family", str), ("implemented", bool), ("priority", int))


def _validate_family(f) -> None:
    for attr, typ in _FAMILY_ATTRS:
        v = getattr(f, attr, None)
        if not isinstance(v, typ):
            raise FormatError(f"kernel family {f!r}: attribute {attr!r} must be a {typ.__name__}, "
                              f"found {v!r}")
    from .capabilities import FAMILIES

    if f.mma_family not in FAMILIES:
        raise FormatError(f"kernel family {f.backend}:{f.name}: mma_family must be one of "
                          f"{', '.join(FAMILIES)} (a capability-file family), found {f.mma_family!r}")
    for meth in ("check", "components", "tuning", "weight_layout"):
        if not callable(getattr(f, meth, None)):
            raise FormatError(f"kernel family {f.backend}:{f.name}: method {meth}() is missing")


def kernel_families() -> list:
    """Every kernel family the backends offer, highest priority first."""
    pm = get_plugin_manager()
    key = ("families", _generation)
    if key not in _cache:
        fams = _flatten(pm.hook.humming_kernel_families())
        seen = {}
        for f in fams:
            _validate_family(f)
            full = (f.backend, f.name)
            if full in seen:
                raise FormatError(f"kernel family {f.backend}:{f.name} is offered twice")
            seen[full] = f
        _cache[key] = sorted(fams, key=lambda f: (-f.priority, f.backend, f.name))
    return _cache[key]


def component_variants() -> list:
    pm = get_plugin_manager()
    key = ("variants", _generation)
    if key not in _cache:
        _cache[key] = sorted(_flatten(pm.hook.humming_component_variants()), key=lambda v: -v.priority)
    return _cache[key]


def include_dirs() -> list[str]:
    """CUDA include directories contributed by the backends (in registration order)."""
    return [str(d) for d in _flatten(get_plugin_manager().hook.humming_include_dirs())]


def capability_dirs() -> list[str]:
    pm = _pm if _pm is not None else get_plugin_manager()
    return [str(d) for d in _flatten(pm.hook.humming_capability_dirs())]


def tuning_override(family, layer, caps, compute):
    """A backend's replacement tuning for this family and layer, or None."""
    return get_plugin_manager().hook.humming_tuning(family=family, layer=layer, caps=caps, compute=compute)


def detect(props) -> str | None:
    """The capability name a backend's detector gives for GPU properties ``props``, or None."""
    return _detect_hook(props)


@dataclass(frozen=True)
class DeviceEntry:
    """One line of ``humming devices``: a known capability name or a detected GPU."""

    name: str
    kind: str
    chain: tuple
    provisional: bool
    detected: bool = False
    index: int | None = None
    gpu_name: str | None = None

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "chain": list(self.chain),
                "provisional": self.provisional, "detected": self.detected, "index": self.index,
                "gpu_name": self.gpu_name}


def entry_of(device) -> DeviceEntry:
    """The DeviceEntry of a :class:`humming.device.Device` (detected or named)."""
    c = device.caps
    return DeviceEntry(c.name, c.kind, tuple(c.chain), bool(c.provisional), device.detected, device.index,
                       device.name if device.detected else None)


def devices(detect_gpus: bool = True) -> list[DeviceEntry]:
    """Known devices (every capability name, plugins' included) and, first, the detected GPUs."""
    get_plugin_manager()
    from . import capabilities
    from .device import Device

    out = []
    if detect_gpus and Device.available():
        import torch

        out.extend(entry_of(Device.detect(i)) for i in range(torch.cuda.device_count()))
    for name in capabilities.names():
        c = capabilities.load(name)
        out.append(DeviceEntry(c.name, c.kind, tuple(c.chain), bool(c.provisional)))
    return out
