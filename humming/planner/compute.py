"""Choosing the tensor-core operand types: the fallback chain.

The activation format starts a chain of ever wider operand types, each holding
the previous one's values exactly (``int4 -> int8 -> fp16``, ``e2m1 -> e4m3 ->
bf16/fp16``, ``e4m3 -> bf16/fp16``; ``bf16 -> fp16`` is the one lossy step, for
chips without bf16 MMA). For each type the weight operand is either the weight's
own format (a native mixed-type MMA such as tcgen05 ``kind::f8f6f4``) or the same
type (weights dequantized into it, which needs their values to be exact there).
The first (type, weight type, family) the capability object can multiply
natively and whose family accepts the layer wins; an emulated instruction
(``native: false``) is only taken when the type is native in a family of the
chip that is not being considered (e.g. wgmma before it is implemented).
When planning with the implemented families, a family whose implementation has
limits for the layer (:meth:`~humming.planner.KernelFamily.limits`) is passed
over like one whose instructions cannot run it, and the limit becomes part of
the step's reason; when planning with every family the hardware has, only
:meth:`~humming.planner.KernelFamily.check` decides.
Every type given up is recorded as a :class:`FallbackStep` with its reason.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..dtypes import IntFormat, get_format
from ..errors import UnsupportedError
from .family import Compute, FallbackStep, KernelFamily
from .numerics import activation_values, exact, exactness_reason, weight_values

__all__ = ["Choice", "activation_chain", "choose_compute", "family_ops", "family_limits",
           "block_scale_mismatch", "LIMIT_TAG"]

#: Marks an implementation limit (not a hardware fact) in fallback reasons.
LIMIT_TAG = "implementation limit"


@dataclass(frozen=True)
class Choice:
    compute: Compute
    family: KernelFamily
    fallbacks: tuple
    notes: tuple


def activation_chain(act_fmt: str, out_dtype: str) -> tuple[str, ...]:
    """Operand types tried for activations of ``act_fmt``, best first."""
    wide = ("bf16", "fp16") if out_dtype == "bf16" else ("fp16", "bf16")
    chains = {
        "fp16": ("fp16",),
        "bf16": ("bf16", "fp16"),
        "e4m3": ("e4m3",) + wide,
        "e5m2": ("e5m2",) + wide,
        "int8": ("int8", "fp16", "bf16"),
        "int4": ("int4", "int8", "fp16", "bf16"),
        "e2m1": ("e2m1", "e4m3") + wide,
    }
    return chains[act_fmt]


def _accumulator(t: str) -> str:
    return "int32" if isinstance(get_format(t), IntFormat) else "fp32"


def _is_16bit(t: str) -> bool:
    return t in ("fp16", "bf16")


def block_scale_mismatch(layer, op) -> str | None:
    """Why the layer's scales cannot be fed to the block-scaled ``op`` (None if they can)."""
    w, a = layer.weight, layer.activation
    sizes = op.scale_blocks
    types = op.scale_types
    need = f"{'/'.join(types)} scales per {'/'.join(map(str, sizes))} K elements"
    if w.scale != "group" or w.zero_point != "none" or w.act_order:
        return f"kind::{op.kind} needs weight {need} (no zero points, no act order); found {w.describe()}"
    if w.group_size not in sizes or w.scale_fmt not in types:
        return f"kind::{op.kind} needs weight {need}; found {w.scale_fmt} scales per {w.group_size}"
    if a.quant != "dynamic_group" or a.group_size != w.group_size or a.scale_fmt != w.scale_fmt:
        return (f"kind::{op.kind} needs activation {w.scale_fmt} scales per {w.group_size} K elements "
                f"like the weight's; found {a.describe()}")
    return None


def family_ops(fam, ops) -> list:
    """The ops of ``ops`` that kernel family ``fam`` issues."""
    accepts = getattr(fam, "accepts", None)
    return [op for op in ops if op.family == fam.mma_family and (accepts is None or accepts(op))]


def family_native_form(fam, layer, caps, compute):
    """``(mma family, fewest tokens)``: the native instructions of another MMA family that the
    kernels of ``fam`` issue for this layer from that many tokens on (e.g. mma_sync's warpgroup
    scheduler issuing wgmma on Hopper), or None (families without a ``native_form`` method)."""
    form = getattr(fam, "native_form", None)
    return form(layer, caps, compute) if form is not None else None


def family_limits(fam, layer, caps, compute) -> list[str]:
    """What keeps this version's implementation of ``fam`` from running the layer
    (families without a ``limits`` method have none)."""
    limits = getattr(fam, "limits", None)
    return list(limits(layer, caps, compute)) if limits is not None else []


def _op_label(op) -> str:
    return op.family + (f" kind::{op.kind}" if op.kind else "")


class _Search:
    """The state of one compute-type search (one layer, one chip, one set of families)."""

    def __init__(self, layer, caps, considered, declared, use_limits):
        self.layer = layer
        self.caps = caps
        self.considered = considered  # families being planned with, priority order
        self.declared = declared      # every family a backend declares that the chip has
        self.use_limits = use_limits  # pass over families whose implementation cannot run the layer
        self.w_vs = weight_values(layer.weight)
        self.a_vs = activation_values(layer.activation)

    # -- helpers -------------------------------------------------------------
    def _ops(self, a, b, acc) -> list:
        """Every op of the chip multiplying a x b into acc, native or emulated."""
        return self.caps.find_mma(a, b, acc, native_only=False)

    def _weight_operands(self, t: str) -> tuple[list[str], list[str]]:
        """Weight operand types to try with activations in ``t``, and why others are not."""
        w = self.layer.weight
        options, reasons = [], []
        own = w.fmt
        plain = w.zero_point == "none" and w.implicit_offset == 0
        if own != t and plain and get_format(own).bits <= 8 and self._ops(t, own, _accumulator(t)):
            options.append(own)  # a native mixed-type MMA takes the weight as stored
        if exact(self.w_vs, t) or (_is_16bit(t) and self.w_vs[0] == "real"):
            options.append(t)
        elif own != t or not plain:
            reasons.append(f"weights ({w.describe()}): "
                           + exactness_reason(self.w_vs, t, zero_point=w.zero_point != "none"))
        return options, reasons

    def _native_elsewhere(self, ops) -> list[str]:
        """Families of the chip, not being considered, that run one of ``ops`` natively."""
        native = [op for op in ops if op.native]
        names = []
        for fam in self.declared:
            if fam not in self.considered and family_ops(fam, native):
                names.append(f"{fam.name} (not implemented in this version)")
        for op in native:
            if not any(family_ops(f, [op]) for f in self.declared):
                label = f"{_op_label(op)} (no backend offers kernels for it)"
                if label not in names:
                    names.append(label)
        return names

    def _pick_op(self, ops):
        """The op to use: block-scaled when the layer's scales match one (the largest
        instruction K first: the fp4-specific kinds), else a plain one."""
        why, matching = [], []
        for op in ops:
            if op.block_scaled:
                mismatch = block_scale_mismatch(self.layer, op)
                if mismatch is None:
                    matching.append(op)
                else:
                    why.append(mismatch)
        if matching:
            return max(matching, key=lambda op: op.dims[0][2]), []
        plain = [op for op in ops if not op.block_scaled]
        return (plain[0], []) if plain else (None, why)

    # -- one operand type -------------------------------------------------------
    def try_type(self, t: str):
        """``(compute, family, notes)`` for activations in ``t``, or ``(None, None, reasons)``.

        Native ops of the considered families come first; an emulated op of a
        considered family is taken only when the pair is native in a family of the
        chip that is not being considered.
        """
        acc = _accumulator(t)
        b_options, reasons = self._weight_operands(t)
        rejected = []  # families that had the instruction but turned the layer down
        had_candidate = False
        for emulated in (False, True):
            for b in b_options:
                ops = self._ops(t, b, acc)
                elsewhere = self._native_elsewhere(ops) if emulated else []
                if emulated and not elsewhere:
                    continue  # emulation only stands in for native support we do not plan with
                pool = [op for op in ops if op.native != emulated]
                for fam in self.considered:
                    mine = family_ops(fam, pool)
                    if not mine:
                        continue
                    had_candidate = True
                    op, why = self._pick_op(mine)
                    if op is not None:
                        compute = Compute(a=t, b=b, acc=acc, mma_family=op.family, op=op, kind=op.kind,
                                          emulated=emulated, block_scaled=op.block_scaled)
                        why = fam.check(self.layer, self.caps, compute)
                    if why:
                        rejected.extend(f"{fam.name} ({fam.backend}): {r}" for r in why)
                        continue
                    if self.use_limits:
                        limits = family_limits(fam, self.layer, self.caps, compute)
                        if limits:
                            pair = f"{t} x {b}" + (" (emulated)" if emulated else "")
                            rejected.extend(f"{fam.name} ({fam.backend}) {LIMIT_TAG} for {pair}: {r}"
                                            for r in limits)
                            continue
                    notes = [f"not {r}" for r in rejected]
                    form = family_native_form(fam, self.layer, self.caps, compute) if emulated else None
                    if form is not None and form[1] <= 1 and self.caps.find_mma(t, b, acc, families=form[0]):
                        # the family never issues the emulated instruction for this layer
                        compute = replace(compute, emulated=False)
                        notes.append(f"{t} x {b} {op.family.replace('_', '.')} is a compiler emulation on "
                                     f"{self.caps.name}; the {fam.name} kernels issue the native {form[0]} form "
                                     f"at every M instead")
                    elif emulated:
                        how = "unpack + IMMA" if acc == "int32" else "cvt + HMMA"
                        notes.append(f"{t} x {b} MMA is native in {', '.join(elsewhere)}; the "
                                     f"{op.family.replace('_', '.')} form is emulated by the compiler ({how})")
                    return compute, fam, notes
        if not had_candidate and (b_options or not self._runs_natively(t, acc)):
            reasons.append(self._why_no_mma(t, b_options or [t], acc))
        return None, None, reasons + rejected

    def _runs_natively(self, t, acc) -> bool:
        """Whether a considered family multiplies t x t natively (the weights were the problem)."""
        native = [op for op in self._ops(t, t, acc) if op.native]
        return any(family_ops(f, native) for f in self.considered)

    def _why_no_mma(self, t, b_options, acc) -> str:
        chip = self.caps.name
        pairs = ", ".join(f"{t} x {b}" for b in b_options)
        ops = [op for b in b_options for op in self._ops(t, b, acc)]
        elsewhere = self._native_elsewhere(ops)
        if elsewhere:
            return f"{pairs} MMA is native on {chip} only in {', '.join(elsewhere)}"
        emulated = sorted({_op_label(op) for op in ops if not op.native})
        if emulated:
            return (f"{pairs} MMA exists on {chip} only as a compiler emulation "
                    f"({', '.join(emulated)}, native: false): no tensor-core support")
        return f"no {pairs} MMA on {chip}"


def choose_compute(layer, caps, considered, declared, use_limits: bool = True) -> Choice:
    """Walk the fallback chain; raise :class:`UnsupportedError` with every reason if nothing fits.

    ``use_limits``: also pass over families whose implementation has limits for
    the layer (planning with the implemented families).
    """
    if not considered:
        raise UnsupportedError(
            f"no kernel family for {caps.name}: no backend offers a family whose instructions "
            f"this chip has", [f"declared families: {', '.join(f.name for f in declared) or 'none'}"])
    search = _Search(layer, caps, considered, declared, use_limits)
    chain = activation_chain(layer.activation.fmt, layer.out_dtype)
    steps: list[FallbackStep] = []
    all_reasons: list[str] = []
    for i, t in enumerate(chain):
        compute, fam, reasons = search.try_type(t)
        if compute is not None:
            return Choice(compute, fam, tuple(steps), tuple(reasons))
        all_reasons.extend(f"{t}: {r}" for r in reasons)
        if i + 1 < len(chain):
            nxt = chain[i + 1]
            carry = exactness_reason(search.a_vs, nxt)
            steps.append(FallbackStep(t, nxt, "; ".join(reasons) + f"; activation {carry}"))
    raise UnsupportedError(
        f"nothing can run {layer.describe()} on {caps.name} "
        f"(tried operand types {' -> '.join(chain)})", all_reasons)
