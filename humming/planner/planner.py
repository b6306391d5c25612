"""``plan(layer, device)``: from a layer and a device to a :class:`Plan`.

1. Resolve the device to its capability object (no GPU needed for a named one).
2. Collect the kernel families the backends offer whose instruction family the
   chip has (``families="hardware"``), or only the implemented ones among them
   (``families="implemented"``, the default: what runs).
3. Walk the compute-type fallback chain (:mod:`.compute`). With the implemented
   families a family's implementation limits count like hardware reasons (the
   walk goes on); with every family only the hardware reasons decide, and a
   chosen family with limits for the layer makes the plan not runnable.
4. Ask the chosen family (or a backend's ``humming_tuning`` hook) for tuning per
   M range -- or take the measured tuning of the tuning database
   (:mod:`humming.tune.database`, written by ``humming tune``) where it holds this
   layer on this device and the family accepts it -- then for its components;
   plugins' component variants may fill a slot.
5. Record where scales and zero points are applied, how activations are
   handled, the weight layout and notes.

The planner never branches on SM numbers: every hardware fact comes from the
capability object. Plans are cached per (layer, device, families mode, tuning
database state).
"""
from __future__ import annotations

import threading
from dataclasses import replace

from .. import plugins
from ..capabilities import ProductFigures
from ..errors import UnsupportedError
from ..scheme import LayerSpec
from ..tune import database
from .compute import choose_compute, family_limits, family_native_form, family_ops
from .family import SLOTS, ActivationHandling, Compute, MRange
from .numerics import exact_shifts, products_exact, weight_values
from .plans import Plan

__all__ = ["plan", "clear_cache", "resolve_device", "MODES"]

MODES = ("implemented", "hardware")

_cache: dict = {}
_cache_lock = threading.Lock()


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


class DeviceCaps:
    """A detected device's capability table with the figures torch measured laid over it.

    Families and tuning read ``caps.product.sm_count`` and ``caps.limit(...)``;
    for a detected GPU those must be the real ones. Everything else is the
    table's.
    """

    def __init__(self, device):
        self._caps = device.caps
        self._limits = device.limits
        product = device.caps.product or ProductFigures()
        self.product = replace(product, sm_count=device.sm_count, l2_bytes=device.l2_bytes)

    def limit(self, key: str):
        self._caps.limit(key)  # validates the key
        return self._limits.get(key)

    @property
    def limits(self):
        return self._limits

    def __getattr__(self, name):
        return getattr(self._caps, name)

    def __repr__(self) -> str:
        return f"<DeviceCaps {self._caps.name} sm_count={self.product.sm_count}>"


def resolve_device(device):
    """``(name, caps, cache key)`` for a device name, :class:`humming.device.Device`,
    a :class:`humming.capabilities.Capabilities` or None (the current GPU)."""
    from ..device import get_device

    d = get_device(device)
    if d.detected:
        return d.name, DeviceCaps(d), ("detected", d.caps, d.fingerprint())
    return d.name, d.caps, ("named", d.caps)


def plan(layer: LayerSpec, device=None, families: str = "implemented", tuning_db: bool = True) -> Plan:
    """Plan ``layer`` on ``device`` (a name such as ``"H20"``/``"sm_89"``, a Device, or
    None for the current GPU).

    ``families="implemented"`` (default) plans with the kernel families this
    version can run; ``families="hardware"`` with every family a backend
    declares that the chip has ("what the hardware would do"): such a plan is
    ``runnable=False`` when its family is not implemented. ``tuning_db=False``
    plans with the heuristics' tuning even where the tuning database holds an entry.
    Raises :class:`humming.errors.UnsupportedError` listing every reason when
    nothing fits.
    """
    if not isinstance(layer, LayerSpec):
        raise TypeError(f"plan(): layer must be a humming.LayerSpec, found {type(layer).__name__}")
    if families not in MODES:
        raise ValueError(f"plan(): families must be one of {', '.join(map(repr, MODES))}, found {families!r}")
    gen = plugins.generation()
    name, caps, dkey = resolve_device(device)
    db = database.token() if tuning_db else ("off",)
    key = (layer, dkey, families, gen, db)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    result = _plan(layer, name, caps, families, db != ("off",))
    with _cache_lock:
        _cache[key] = result
    return result


def _plan(layer: LayerSpec, name: str, caps, mode: str, tuning_db: bool = False) -> Plan:
    all_families = plugins.kernel_families()
    declared = [f for f in all_families if family_ops(f, caps.mma_ops(f.mma_family))]
    considered = declared if mode == "hardware" else [f for f in declared if f.implemented]
    choice = choose_compute(layer, caps, considered, declared, use_limits=mode == "implemented")
    compute, fam = choice.compute, choice.family
    notes = list(choice.notes)
    # with the implemented families the walk already passed over every limit
    limits = tuple(family_limits(fam, layer, caps, compute)) if mode == "hardware" and fam.implemented else ()

    tuning = plugins.tuning_override(fam, layer, caps, compute)
    if tuning is None:
        tuning = fam.tuning(layer, caps, compute)
    tuning = tuple(tuning)
    _check_tuning(fam, tuning)
    if tuning_db and fam.implemented:
        tuning = _measured_tuning(name, fam, layer, caps, compute, tuning, notes)

    components = dict(fam.components(layer, caps, compute))
    missing = [s for s in SLOTS if s not in components]
    if missing:
        raise UnsupportedError(f"kernel family {fam.backend}:{fam.name} left slots unfilled",
                               [f"no variant for slot {s!r}" for s in missing])
    if components["scheduler"] == "data_parallel" and any(r.config.get("split_k", 1) > 1 for r in tuning):
        components["scheduler"] = "split_k"
    own = dict(components)  # (the family's, before any variant)
    taken = set()
    for v in plugins.component_variants():  # highest priority first; one per slot
        if v.slot in taken or (v.families and fam.name not in v.families):
            continue
        if not v.applies(layer, caps, compute):
            continue
        taken.add(v.slot)
        if components[v.slot] != v.name:
            notes.append(f"{v.slot}: variant {v.name!r} from backend {v.backend!r} replaces "
                         f"{components[v.slot]!r}" + (f" ({v.description})" if v.description else ""))
            components[v.slot] = v.name

    scales = _scales(layer, compute, components["dequantizer"])
    tuned = getattr(fam, "tuned", None)  # (what the family's kernels do per M range of the final tuning)
    if tuned is not None:
        upd = tuned(layer, caps, compute, tuning, dict(components), dict(scales)) or {}
        for slot, variant in upd.get("components", {}).items():
            if components.get(slot) == own.get(slot):  # (not where a variant took the slot)
                components[slot] = variant
        scales.update(upd.get("scales", {}))
        notes.extend(upd.get("notes", ()))
    notes.extend(_numeric_notes(layer, compute, components["dequantizer"]))
    if mode == "implemented":
        notes.extend(_preferred_elsewhere(layer, caps, compute, fam, declared))
    if caps.targets.get("nvrtc") is None and caps.targets.get("nvcc"):
        flags = " ".join(caps.compile_flags("nvcc"))
        notes.append(f"{caps.name} has no NVRTC target: kernels compile with nvcc for "
                     f"{caps.targets['nvcc']}" + (f" ({flags})" if flags else ""))
    if not fam.implemented:
        reason = (f"kernel family {fam.name} ({fam.backend}) is declared for {caps.name} "
                  "but not implemented in this version")
    elif limits:
        reason = (f"kernel family {fam.name} ({fam.backend}) cannot run this layer in this version: "
                  + "; ".join(limits))
    else:
        reason = None
    return Plan(
        layer=layer, device=name, device_chain=tuple(caps.chain), mode=mode, compute=compute,
        fallbacks=choice.fallbacks, family=fam.name, backend=fam.backend, implemented=fam.implemented,
        runnable=reason is None, not_runnable_reason=reason, limits=limits, components=components,
        scales=scales,
        weight_layout=fam.weight_layout(layer, caps, compute),
        activation=_activation(layer, compute), tuning=tuning, notes=tuple(notes), _family=fam)


def _measured_tuning(name: str, fam, layer, caps, compute, tuning: tuple, notes: list) -> tuple:
    """The tuning database's entry for this layer on this device, where the family accepts it (a note
    says which ranges it changed, or why it was set aside); else ``tuning``."""
    entry = database.lookup(name, f"{fam.backend}:{fam.name}", layer, compute)
    if entry is None:
        return tuning
    where = f"tuning database {database.database_path()}"
    m = entry.get("measured") or {}
    version = getattr(fam, "tuning_version", None)
    if version is not None and m.get("kernels") != version():
        notes.append(f"{where}: its entry for this layer was measured with other kernel sources (kernels "
                     f"{m.get('kernels')!r}, now {version()!r}) and was set aside; the heuristics' tuning runs "
                     f"(run `humming tune` again)")
        return tuning
    try:
        measured = tuple(MRange(int(r["m_min"]), None if r["m_max"] is None else int(r["m_max"]), r["config"])
                         for r in entry["tuning"])
        _check_tuning(fam, measured)
        check = getattr(fam, "check_tuning", None)
        problems = list(check(layer, caps, compute, measured)) if check is not None else []
    except (KeyError, TypeError, ValueError, UnsupportedError) as e:
        problems = [str(e).splitlines()[0]]
    if problems:
        notes.append(f"{where}: its entry for this layer was set aside ({'; '.join(problems)}); "
                     f"the heuristics' tuning runs (run `humming tune` again)")
        return tuning
    old = {(r.lo, r.hi): dict(r.config) for r in tuning}
    changed = [r.label() for r in measured if old.get((r.lo, r.hi)) != dict(r.config)]
    made = f" (measured on {entry['device']} by humming {m.get('humming', '?')}, {m.get('when', '?')})"
    notes.append(f"{where}: tuning measured for this layer{made}; "
                 + (f"it differs from the heuristics' in {', '.join(changed)}" if changed
                    else "the heuristics' configs measured best"))
    return measured


def _check_tuning(fam, tuning) -> None:
    if not tuning or tuning[0].lo != 1 or tuning[-1].hi is not None:
        raise UnsupportedError(f"tuning for {fam.backend}:{fam.name} must cover every M >= 1",
                               [f"found ranges {[r.label() for r in tuning]}"])
    for a, b in zip(tuning, tuning[1:]):
        if a.hi is None or b.lo != a.hi + 1:
            raise UnsupportedError(f"tuning for {fam.backend}:{fam.name} has a gap or overlap",
                                   [f"{a.label()} then {b.label()}"])


def _scales(layer: LayerSpec, compute: Compute, dequantizer: str) -> dict:
    """Where each scale and zero point is applied."""
    w = layer.weight
    out = {}
    if w.scale in ("group", "block"):
        if compute.block_scaled:
            where = "mma_block_scale"
        elif dequantizer == "fused_e2m1_to_e4m3":
            where = "exponent_fold"
        elif compute.is_16bit:
            where = "dequantized_weights"
        else:
            where = "partial_accumulators"
        out[f"weight_{w.scale}"] = where
    else:
        out[f"weight_{w.scale}"] = "epilogue"
    if w.zero_point != "none":
        out["weight_zero_point"] = "dequantized_weights" if compute.is_16bit else "subtracted_in_dequant"
    if w.global_scale != "none":
        out[f"weight_global_{w.global_scale}"] = "epilogue"
    out["activation"] = _activation_scale_place(layer, compute)
    return out


def _activation_scale_place(layer: LayerSpec, compute: Compute) -> str:
    a = layer.activation
    if a.quant == "none":
        return "none"
    if a.quant == "dynamic_group":
        if compute.block_scaled:
            return "mma_block_scale"
        # 16-bit operands: the quantization kernel folds each group's scale into the values
        # over a per-row power of two, which the epilogue applies
        return "values_and_epilogue" if compute.is_16bit else "partial_accumulators"
    return "epilogue"


def _activation(layer: LayerSpec, compute: Compute) -> ActivationHandling:
    a = layer.activation
    if a.quant == "none":
        stored = a.fmt
    elif compute.is_16bit:
        stored = compute.a  # the quantization kernel writes the codes' values as 16-bit floats
    elif a.fmt != compute.a:
        stored = compute.a  # e.g. int4 values written as int8, e2m1 values as e4m3 bytes
    else:
        stored = a.fmt
    convert = "none" if stored == compute.a else f"{stored} -> {compute.a}"
    return ActivationHandling(
        quantize="none" if a.quant == "none" else "separate_kernel",
        values=a.fmt, stored_as=stored, operand=compute.a, convert=convert,
        scales=_activation_scale_place(layer, compute))


def _numeric_notes(layer: LayerSpec, compute: Compute, dequantizer: str) -> list[str]:
    notes = []
    w = layer.weight
    if dequantizer == "fused_e2m1_to_e4m3":
        lo, hi = exact_shifts(weight_values(w), compute.b)
        notes.append(f"e8m0 group scales are folded into the {compute.b} exponent relative to a "
                     f"per-channel base; exact while a group's scale lies within 2^{lo}..2^{hi} "
                     "of that base")
    if w.act_order:
        notes.append("act order: activation columns are permuted by the stored permutation "
                     "before the GEMM" + (" (each expert's own, as the routed rows are gathered)"
                                          if layer.is_moe else ""))
    a = layer.activation
    if a.quant == "dynamic_group" and compute.is_16bit and not compute.block_scaled:
        if not products_exact(a.fmt, a.scale_fmt, compute.a):
            how = f"each value code x scale is rounded once to {compute.a}"
        elif compute.a == "fp16":
            how = "exact for these codes and scales down to 2^-14 of the row's largest scale"
        else:
            how = "exact for these codes and scales"
        notes.append(f"activation group scales are folded into the {compute.a} values over a per-row power "
                     f"of two (the epilogue applies it): {how}")
    if not compute.is_16bit and w.scale in ("group", "block") and not compute.block_scaled \
            and dequantizer != "fused_e2m1_to_e4m3":
        conv = " (converted to fp32)" if compute.acc == "int32" else ""
        notes.append(f"per-group scales multiply the {compute.acc} partial sums{conv} every "
                     f"{w.group_size} K elements")
    if layer.out_dtype == "fp16" and compute.a == "bf16":
        notes.append("bf16 compute with fp16 output: results beyond fp16's range saturate")
    return notes


def _preferred_elsewhere(layer, caps, compute: Compute, fam, declared) -> list[str]:
    """Name a higher-priority declared family that would run the same types natively."""
    if compute.emulated:  # the emulation note already names the native family
        return []
    for other in declared:
        if other is fam or other.implemented or other.priority <= fam.priority:
            continue
        if family_ops(other, caps.find_mma(compute.a, compute.b, compute.acc, native_only=True)):
            form = family_native_form(fam, layer, caps, compute)
            also = (f"; the {fam.name} kernels issue its instructions from M >= {form[1]}"
                    if form is not None and form[0] == other.mma_family else "")
            return [f"the hardware would prefer {other.name} ({other.backend}; declared, not "
                    f"implemented in this version) for {compute.a} x {compute.b}{also}"]
    return []

