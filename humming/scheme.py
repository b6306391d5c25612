"""The shared description of a quantized layer.

* :class:`WeightScheme` -- how a weight matrix ``W[N, K]`` (``y = x @ W.T``) is
  stored: element format, scale granularity and format, zero point, second-level
  scale, act-order permutation.
* :class:`ActivationScheme` -- what the activations are when they reach the
  GEMM: their element format and how they are quantized (if at all).
* :class:`LayerSpec` -- a dense or MoE layer: shapes, output dtype, bias and the
  two schemes.

All three are frozen, hashable, validated at construction (errors name the
field, the expected and the found) and round-trip through plain dicts/JSON.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping

from .dtypes import FloatFormat, IntFormat, NumberFormat, get_format
from .errors import FormatError, ShapeError

__all__ = [
    "WeightScheme",
    "ActivationScheme",
    "LayerSpec",
    "SCALE_KINDS",
    "ZERO_POINT_KINDS",
    "GLOBAL_SCALE_KINDS",
    "ACT_QUANT_MODES",
    "SCHEMA_VERSION",
    "WEIGHT_PRESETS",
    "ACT_PRESETS",
]

SCHEMA_VERSION = 1

SCALE_KINDS = ("tensor", "channel", "group", "block")
ZERO_POINT_KINDS = ("none", "int", "float")
GLOBAL_SCALE_KINDS = ("none", "tensor", "channel")
SCALE_FORMATS = ("fp16", "bf16", "fp32", "e4m3", "e5m2", "e8m0")
ACT_FORMATS = ("fp16", "bf16", "e4m3", "e5m2", "int8", "int4", "e2m1")

#: Named weight schemes (the CLI's --weight presets): name -> WeightScheme fields.
WEIGHT_PRESETS = {
    "nvfp4": {"fmt": "e2m1", "scale": "group", "group_size": 16, "scale_fmt": "e4m3", "global_scale": "tensor"},
    "mxfp4": {"fmt": "e2m1", "scale": "group", "group_size": 32, "scale_fmt": "e8m0"},
    "mxfp8": {"fmt": "e4m3", "scale": "group", "group_size": 32, "scale_fmt": "e8m0"},
}
#: Named activation schemes (the CLI's --act presets): name -> ActivationScheme fields.
ACT_PRESETS = {
    "nvfp4": {"fmt": "e2m1", "quant": "dynamic_group", "group_size": 16, "scale_fmt": "e4m3"},
    "mxfp4": {"fmt": "e2m1", "quant": "dynamic_group", "group_size": 32, "scale_fmt": "e8m0"},
    "mxfp8": {"fmt": "e4m3", "quant": "dynamic_group", "group_size": 32, "scale_fmt": "e8m0"},
}
ACT_QUANT_MODES = ("none", "static_tensor", "dynamic_token", "dynamic_group")
OUT_DTYPES = ("fp16", "bf16", "fp32")


def _err(cls_name: str, fieldname: str, expected: str, found: Any) -> FormatError:
    return FormatError(f"{cls_name}.{fieldname}: expected {expected}, got {found!r}")


def _fmt(cls_name: str, fieldname: str, value, allowed=None) -> NumberFormat:
    try:
        fmt = get_format(value)
    except ValueError:
        raise _err(cls_name, fieldname, "a number format name" +
                   (f" (one of {', '.join(allowed)})" if allowed else ""), value) from None
    if allowed is not None and fmt.name not in allowed:
        raise _err(cls_name, fieldname, f"one of {', '.join(allowed)}", fmt.name)
    return fmt


def _choice(cls_name: str, fieldname: str, value, allowed) -> str:
    if value not in allowed:
        raise _err(cls_name, fieldname, f"one of {', '.join(map(repr, allowed))}", value)
    return value


def _divisors_near(k: int, limit: int = 256) -> list[int]:
    return [d for d in (16, 32, 48, 64, 96, 128, 192, 256) if d <= limit and k % d == 0]


def _pad_hint(what: str, group: int, size: int) -> str:
    padded = -(-size // group) * group
    divs = _divisors_near(size)
    hint = f"pad {what} to {padded} (the next multiple of {group})"
    if divs:
        hint += f", or use a group size that divides {size} ({', '.join(map(str, divs))})"
    return hint


class _Record:
    """dict round trip and ``replace`` for the scheme dataclasses."""

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: Mapping):
        return cls(**_known(cls, d))

    def replace(self, **kw):
        return replace(self, **kw)


class _Formats:
    """The number formats named by ``fmt`` and ``scale_fmt``."""

    @property
    def format(self) -> NumberFormat:
        return get_format(self.fmt)

    @property
    def scale_format(self) -> NumberFormat:
        return get_format(self.scale_fmt)


@dataclass(frozen=True)
class WeightScheme(_Formats, _Record):
    """How a quantized weight is stored.

    Fields
    ------
    fmt:
        element format: ``int1``..``int8`` (symmetric), ``uint1``..``uint8``
        (with a zero point, or an implicit offset of ``2**(bits-1)`` when
        ``zero_point == "none"``; see :attr:`implicit_offset`), or a float
        format of at most 8 bits (``e2m1``, ``e4m3``, ...). 16-bit formats mean
        "not quantized".
    scale:
        ``"tensor"``, ``"channel"`` (one per output row), ``"group"`` (one per
        row and ``group_size`` consecutive K elements) or ``"block"`` (one per
        ``block_n x group_size`` tile).
    group_size:
        K extent of a group or block (required for group and block).
    block_n:
        N extent of a block (required for block).
    scale_fmt:
        storage format of the scales: fp16, bf16, fp32, e4m3, e5m2 or e8m0.
    zero_point:
        ``"none"``, ``"int"`` (an integer in the element's range, subtracted
        before scaling: ``(q - z) * s``) or ``"float"`` (a real number, same
        formula). Zero points follow the scale granularity.
    global_scale:
        second-level scale multiplied on top: ``"none"``, ``"tensor"`` or
        ``"channel"`` (NVFP4 uses a tensor-wide fp32 scale over e4m3 group scales).
    act_order:
        the K dimension is stored permuted (GPTQ ``desc_act``): a permutation
        travels with the weight; see :class:`humming.reference.QuantizedWeight`.
    group_offset:
        None (the default): K is a whole number of scale groups. An integer
        ``0 <= group_offset < group_size``: the weight is a K-shard of a larger
        layer (a tensor-parallel rank's columns) whose scale groups straddle the
        shards: its first column sits ``group_offset`` columns into its first
        group, and its first and last groups may be partial. Group ``j`` then
        covers columns ``[j * group_size - group_offset, (j + 1) * group_size -
        group_offset)``; there are ``ceil((K + group_offset) / group_size)``.
        Group scales only, without act order.
    """

    fmt: str = "int4"
    scale: str = "group"
    group_size: int | None = 128
    block_n: int | None = None
    scale_fmt: str = "fp16"
    zero_point: str = "none"
    global_scale: str = "none"
    act_order: bool = False
    group_offset: int | None = None

    def __post_init__(self):
        C = "WeightScheme"
        fmt = _fmt(C, "fmt", self.fmt)
        if fmt.name in ("tf32", "int32", "fp32") or (fmt.bits > 8 and fmt.name not in ("fp16", "bf16")):
            raise _err(C, "fmt", "an integer format of 1-8 bits, a float format of at most 8 bits, "
                       "fp16 or bf16", fmt.name)
        if isinstance(fmt, FloatFormat) and not fmt.signed:
            raise _err(C, "fmt", "a signed element format (e8m0 is for scales only)", fmt.name)
        object.__setattr__(self, "fmt", fmt.name)
        _choice(C, "scale", self.scale, SCALE_KINDS)
        sfmt = _fmt(C, "scale_fmt", self.scale_fmt, SCALE_FORMATS)
        object.__setattr__(self, "scale_fmt", sfmt.name)
        _choice(C, "zero_point", self.zero_point, ZERO_POINT_KINDS)
        _choice(C, "global_scale", self.global_scale, GLOBAL_SCALE_KINDS)
        if not isinstance(self.act_order, bool):
            raise _err(C, "act_order", "a bool", self.act_order)
        if self.scale in ("group", "block"):
            if not isinstance(self.group_size, int) or isinstance(self.group_size, bool) or self.group_size <= 0:
                raise _err(C, "group_size", f"a positive integer for scale={self.scale!r}", self.group_size)
        else:
            object.__setattr__(self, "group_size", None)
        if self.scale == "block":
            if not isinstance(self.block_n, int) or isinstance(self.block_n, bool) or self.block_n <= 0:
                raise _err(C, "block_n", "a positive integer for scale='block'", self.block_n)
        else:
            object.__setattr__(self, "block_n", None)
        if self.zero_point != "none":
            if not isinstance(fmt, IntFormat) or fmt.signed:
                raise _err(C, "zero_point", f"'none' for element format {fmt.name} (zero points need an "
                           "unsigned integer format uint1..uint8)", self.zero_point)
        if self.act_order and self.scale == "block":
            raise _err(C, "act_order", "False with block scales (a K permutation would break the blocks)",
                       self.act_order)
        if fmt.bits > 8 and (self.zero_point != "none" or self.global_scale != "none"):
            raise _err(C, "fmt", "a quantized format when zero points or global scales are used", fmt.name)
        if self.group_offset is not None:
            off = self.group_offset
            if self.scale != "group":
                raise _err(C, "group_offset", f"None with scale={self.scale!r} (a shard's offset into its first "
                           "scale group is for group scales)", off)
            if not isinstance(off, int) or isinstance(off, bool) or not 0 <= off < self.group_size:
                raise _err(C, "group_offset", f"None or an integer in [0, group_size={self.group_size})", off)
            if self.act_order:
                raise _err(C, "group_offset", "None with act_order (act order shards by g_idx, not by columns)",
                           off)

    def to_dict(self) -> dict:
        d = _Record.to_dict(self)
        if d["group_offset"] is None:  # (a field added later: a whole-group scheme keeps its dict, and the
            del d["group_offset"]      # fingerprints of the plans and weights made from it)
        return d

    # -- derived ---------------------------------------------------------------

    @property
    def bits(self) -> int:
        return self.format.bits

    @property
    def is_float(self) -> bool:
        return self.format.is_float

    @property
    def implicit_offset(self) -> int:
        """Offset subtracted from unsigned codes that carry no zero point.

        ``uint4`` with ``zero_point="none"`` means GPTQ-style symmetric storage:
        the stored code ``q`` stands for ``q - 8``. Zero for every other case.
        """
        f = self.format
        if isinstance(f, IntFormat) and not f.signed and self.zero_point == "none":
            return 1 << (f.bits - 1)
        return 0

    def validate_shape(self, n: int, k: int) -> None:
        """Check that this scheme fits a weight of ``n`` rows by ``k`` columns."""
        if self.scale in ("group", "block") and k % self.group_size and self.group_offset is None:
            raise ShapeError(
                f"WeightScheme.group_size={self.group_size} does not divide K={k}; "
                + _pad_hint("K", self.group_size, k))
        if self.scale == "block" and n % self.block_n:
            raise ShapeError(
                f"WeightScheme.block_n={self.block_n} does not divide N={n}; "
                + _pad_hint("N", self.block_n, n))

    def num_groups(self, k: int) -> int:
        """Scale groups along K of a weight of ``k`` columns (partial ones of a shard included)."""
        if self.scale in ("group", "block"):
            return -(-(k + (self.group_offset or 0)) // self.group_size)
        return 1

    def bytes_per_weight(self, n: int, k: int) -> float:
        """Storage bytes of codes + scales + zero points (for bandwidth estimates)."""
        codes = n * k * self.bits / 8
        if self.scale == "tensor":
            ns = 1
        elif self.scale == "channel":
            ns = n
        elif self.scale == "group":
            ns = n * self.num_groups(k)
        else:
            ns = (n // self.block_n) * (k // self.group_size)
        sbytes = ns * self.scale_format.bits / 8
        zbytes = 0.0
        if self.zero_point == "int":
            zbytes = ns * self.bits / 8
        elif self.zero_point == "float":
            zbytes = ns * 2
        return codes + sbytes + zbytes

    def describe(self) -> str:
        s = self.fmt
        if self.scale == "group":
            s += f" g{self.group_size}"
        elif self.scale == "block":
            s += f" block{self.block_n}x{self.group_size}"
        else:
            s += f" per-{self.scale}"
        s += f" {self.scale_fmt} scales"
        if self.zero_point != "none":
            s += f", {self.zero_point} zero points"
        if self.global_scale != "none":
            s += f", {self.global_scale} global scale"
        if self.act_order:
            s += ", act order"
        if self.group_offset is not None:
            s += f", K-shard {self.group_offset} columns into its first group"
        return s



@dataclass(frozen=True)
class ActivationScheme(_Formats, _Record):
    """What the activations are at the GEMM.

    Fields
    ------
    fmt:
        fp16, bf16 (no quantization), or e4m3, e5m2, int8, int4, e2m1.
    quant:
        ``"none"`` (only for fp16/bf16), ``"static_tensor"`` (one calibrated
        scale), ``"dynamic_token"`` (one scale per row, computed on the fly) or
        ``"dynamic_group"`` (one per row and ``group_size`` K elements).
    group_size:
        for ``dynamic_group``.
    scale_fmt:
        storage format of the activation scales (fp32 by default; e8m0 for MX,
        e4m3 for NVFP4 activations).
    """

    fmt: str = "fp16"
    quant: str = "none"
    group_size: int | None = None
    scale_fmt: str = "fp32"

    def __post_init__(self):
        C = "ActivationScheme"
        fmt = _fmt(C, "fmt", self.fmt, ACT_FORMATS)
        object.__setattr__(self, "fmt", fmt.name)
        _choice(C, "quant", self.quant, ACT_QUANT_MODES)
        sfmt = _fmt(C, "scale_fmt", self.scale_fmt, SCALE_FORMATS)
        object.__setattr__(self, "scale_fmt", sfmt.name)
        if fmt.name in ("fp16", "bf16"):
            if self.quant != "none":
                raise _err(C, "quant", f"'none' for {fmt.name} activations", self.quant)
        elif self.quant == "none":
            raise _err(C, "quant", f"a quantization mode for {fmt.name} activations "
                       "('static_tensor', 'dynamic_token' or 'dynamic_group')", self.quant)
        if self.quant == "dynamic_group":
            if not isinstance(self.group_size, int) or isinstance(self.group_size, bool) or self.group_size <= 0:
                raise _err(C, "group_size", "a positive integer for quant='dynamic_group'", self.group_size)
        else:
            object.__setattr__(self, "group_size", None)


    @property
    def is_quantized(self) -> bool:
        return self.quant != "none"

    def validate_shape(self, k: int) -> None:
        if self.quant == "dynamic_group" and k % self.group_size:
            raise ShapeError(f"ActivationScheme.group_size={self.group_size} does not divide K={k}; "
                             + _pad_hint("K", self.group_size, k))

    def describe(self) -> str:
        if self.quant == "none":
            return self.fmt
        s = f"{self.fmt} {self.quant.replace('_', ' ')}"
        if self.quant == "dynamic_group":
            s += f" g{self.group_size}"
        return s + f" ({self.scale_fmt} scales)"



@dataclass(frozen=True)
class LayerSpec:
    """A dense (``num_experts == 0``) or MoE linear layer: ``y = x @ W.T (+ bias)``.

    ``n`` is the output features, ``k`` the input features (per expert for MoE).
    """

    n: int
    k: int
    weight: WeightScheme = field(default_factory=WeightScheme)
    activation: ActivationScheme = field(default_factory=ActivationScheme)
    num_experts: int = 0
    out_dtype: str = "fp16"
    bias: bool = False

    def __post_init__(self):
        C = "LayerSpec"
        for name in ("n", "k"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise _err(C, name, "a positive integer", v)
        if not isinstance(self.num_experts, int) or self.num_experts < 0:
            raise _err(C, "num_experts", "a non-negative integer (0 = dense)", self.num_experts)
        if isinstance(self.weight, Mapping):
            object.__setattr__(self, "weight", WeightScheme.from_dict(self.weight))
        if isinstance(self.activation, Mapping):
            object.__setattr__(self, "activation", ActivationScheme.from_dict(self.activation))
        if not isinstance(self.weight, WeightScheme):
            raise _err(C, "weight", "a WeightScheme", self.weight)
        if not isinstance(self.activation, ActivationScheme):
            raise _err(C, "activation", "an ActivationScheme", self.activation)
        od = _fmt(C, "out_dtype", self.out_dtype, OUT_DTYPES)
        object.__setattr__(self, "out_dtype", od.name)
        if not isinstance(self.bias, bool):
            raise _err(C, "bias", "a bool", self.bias)
        self.weight.validate_shape(self.n, self.k)
        self.activation.validate_shape(self.k)

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    def describe(self) -> str:
        kind = f"MoE x{self.num_experts}" if self.is_moe else "dense"
        return (f"{kind} N={self.n} K={self.k}: weights {self.weight.describe()}; "
                f"activations {self.activation.describe()}; out {self.out_dtype}"
                + (", bias" if self.bias else ""))

    def to_dict(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "n": self.n,
            "k": self.k,
            "num_experts": self.num_experts,
            "out_dtype": self.out_dtype,
            "bias": self.bias,
            "weight": self.weight.to_dict(),
            "activation": self.activation.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> "LayerSpec":
        d = dict(d)
        v = d.pop("schema_version", SCHEMA_VERSION)
        if v != SCHEMA_VERSION:
            raise FormatError(f"LayerSpec.schema_version: expected {SCHEMA_VERSION}, got {v!r}")
        return cls(**_known(cls, d))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, s: str) -> "LayerSpec":
        return cls.from_dict(json.loads(s))

    def replace(self, **kw) -> "LayerSpec":
        return replace(self, **kw)


def _known(cls, d: Mapping) -> dict:
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(d) - names)
    if unknown:
        raise FormatError(f"{cls.__name__}: unknown field(s) {', '.join(unknown)}; "
                          f"expected some of {', '.join(sorted(names))}")
    return dict(d)
