"""Number formats as values.

Every element, scale and activation type humming knows is a small frozen object
that can encode real numbers into codes and decode codes back, on torch tensors.

* :class:`IntFormat` -- two's-complement (``int1`` .. ``int8``) or unsigned
  (``uint1`` .. ``uint8``) integers.
* :class:`FloatFormat` -- any small binary floating format given by its exponent
  and mantissa widths, its bias and its special-value rule: ``e2m1``, ``e3m2``,
  ``e2m3``, ``e4m3`` (the finite "fn" variant), ``e5m2``, ``e8m0`` (unsigned,
  scales only), the Blackwell operand encodings ``e0m3`` and ``e3m4``, and any
  other signed format of at most 8 bits (``FloatFormat(exp=3, man=3)``); plus
  ``fp16``, ``bf16``, ``fp32`` (and ``tf32`` as a compute type).

Codes
    A code is the format's bit pattern, right-aligned in an unsigned integer:
    ``torch.uint8`` for formats of 8 bits or fewer, ``torch.int16`` for the
    16-bit floats and ``torch.int32`` for fp32 (their raw bits).

Encoding rules (the same for every format)
    * round to nearest, ties to even (for floats: the code with an even last
      mantissa bit; for integers: the even integer);
    * saturating: finite values beyond the largest magnitude encode to the
      largest finite value of that sign, and so do infinities, except in
      formats that have infinities (``e5m2``, fp16, bf16, fp32), where +-inf
      stays +-inf;
    * NaN: formats with a NaN code encode NaN to it (``e4m3``: 0x7F, ``e5m2``:
      0x7E, ``e8m0``: 0xFF, IEEE formats: their quiet NaN); formats without one
      (integers, ``e2m1``, ``e3m2``, ``e2m3``, ``e0m3``, ``e3m4``) raise
      ``ValueError`` naming how many NaNs were found -- a NaN weight is a bug
      upstream and is never turned silently into a number.
    * ``e8m0`` has no sign and no zero: zero and negative inputs encode to its
      smallest value 2^-127; it is meant for scales only.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch

__all__ = [
    "NumberFormat",
    "IntFormat",
    "FloatFormat",
    "get_format",
    "format_names",
    "torch_dtype_of",
    "format_of_torch_dtype",
]


class NumberFormat:
    """Common interface of all formats (see the module docstring)."""

    name: str
    bits: int
    is_float: bool
    signed: bool

    # -- to be provided by subclasses -------------------------------------
    def decode(self, codes: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def encode(self, x: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- shared helpers -----------------------------------------------------
    @property
    def code_dtype(self) -> torch.dtype:
        if self.bits <= 8:
            return torch.uint8
        return torch.int16 if self.bits == 16 else torch.int32

    def round(self, x: torch.Tensor) -> torch.Tensor:
        """``decode(encode(x))`` as float32: the value this format stores for ``x``."""
        return self.decode(self.encode(x))

    def all_codes(self, device=None) -> torch.Tensor:
        """Every code of a format of at most 8 bits (in code order)."""
        if self.bits > 8:
            raise ValueError(f"{self.name}: all_codes() is only defined for formats of at most 8 bits")
        return torch.arange(1 << self.bits, dtype=torch.int32, device=device).to(torch.uint8)

    def __str__(self) -> str:
        return self.name


# ---------------------------------------------------------------------------
# integers
# ---------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class IntFormat(NumberFormat):
    """An integer of ``bits`` bits, two's-complement when ``signed``."""

    bits: int
    signed: bool = True

    def __post_init__(self):
        if not isinstance(self.bits, int) or not 1 <= self.bits <= 8:
            raise ValueError(f"IntFormat.bits must be an integer in 1..8, got {self.bits!r}")

    is_float = False

    @property
    def name(self) -> str:
        return f"{'int' if self.signed else 'uint'}{self.bits}"

    def __repr__(self) -> str:
        return f"IntFormat({self.name})"

    @property
    def min_value(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max_value(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.as_tensor(x)
        xf = x.to(torch.float32) if x.dtype != torch.float64 else x
        nan = torch.isnan(xf)
        if bool(nan.any()):
            raise ValueError(f"{self.name}.encode: {int(nan.sum())} NaN value(s) in the input; "
                             f"{self.name} has no NaN code")
        v = torch.round(xf).clamp(self.min_value, self.max_value).to(torch.int32)
        return (v & self.mask).to(torch.uint8)

    def decode(self, codes: torch.Tensor) -> torch.Tensor:
        c = codes.to(torch.int32) & self.mask
        if self.signed:
            c = torch.where(c >= (1 << (self.bits - 1)), c - (1 << self.bits), c)
        return c.to(torch.float32)

    def values(self) -> torch.Tensor:
        """All representable values, ascending, as float32."""
        return torch.arange(self.min_value, self.max_value + 1, dtype=torch.float32)


# ---------------------------------------------------------------------------
# floats
# ---------------------------------------------------------------------------

_TORCH_FLOATS = {
    (5, 10): torch.float16,
    (8, 7): torch.bfloat16,
    (8, 23): torch.float32,
}


@dataclass(frozen=True, repr=False)
class FloatFormat(NumberFormat):
    """A binary floating-point format.

    Parameters
    ----------
    exp, man:
        exponent and mantissa widths in bits.
    bias:
        exponent bias; defaults to ``2**(exp-1) - 1``.
    signed:
        whether there is a sign bit (``e8m0`` has none).
    nan:
        ``"ieee"`` -- the all-ones exponent holds inf (mantissa 0) and NaN;
        ``"all_ones"`` -- only the all-ones code (sign aside) is NaN, every
        other code is finite (``e4m3`` fn, ``e8m0``);
        ``"none"`` -- every code is a finite number (``e2m1``, ``e3m2``, ...).
    name:
        display name; defaults to ``e{exp}m{man}``.

    Exponent field 0 means a subnormal (``man/2**m * 2**(1-bias)``) when the
    format has mantissa bits; formats with no mantissa bits (``e8m0``) have no
    subnormals: every code ``e`` is ``2**(e - bias)``.
    """

    exp: int
    man: int
    bias: int | None = None
    signed: bool = True
    nan: str = "none"
    fmt_name: str | None = None

    is_float = True

    def __post_init__(self):
        if self.exp < 0 or self.man < 0 or self.exp + self.man == 0:
            raise ValueError(f"FloatFormat needs exp >= 0, man >= 0 and at least one of them > 0, "
                             f"got exp={self.exp}, man={self.man}")
        if self.nan not in ("ieee", "all_ones", "none"):
            raise ValueError(f"FloatFormat.nan must be 'ieee', 'all_ones' or 'none', got {self.nan!r}")
        if self.nan == "ieee" and self.exp < 2:
            raise ValueError("FloatFormat: 'ieee' specials need at least 2 exponent bits")
        bits = self.exp + self.man + int(self.signed)
        if bits > 8 and (self.exp, self.man) not in _TORCH_FLOATS:
            raise ValueError(f"FloatFormat: formats wider than 8 bits are only fp16, bf16 and fp32, "
                             f"got e{self.exp}m{self.man} ({bits} bits)")
        if self.bias is None:
            object.__setattr__(self, "bias", (1 << (self.exp - 1)) - 1 if self.exp > 0 else 0)

    # -- identity -------------------------------------------------------------
    @property
    def bits(self) -> int:
        return self.exp + self.man + int(self.signed)

    @property
    def name(self) -> str:
        return self.fmt_name or f"e{self.exp}m{self.man}"

    def __repr__(self) -> str:
        return (f"FloatFormat({self.name}: exp={self.exp}, man={self.man}, bias={self.bias}, "
                f"signed={self.signed}, nan={self.nan})")

    @property
    def torch_dtype(self) -> torch.dtype | None:
        """The torch dtype that stores exactly this format, if there is one."""
        if self.bits > 8:
            return _TORCH_FLOATS[(self.exp, self.man)]
        return _SMALL_TORCH.get(self.name) if self == _by_name_raw(self.name) else None

    # -- value table (formats of at most 8 bits) --------------------------------
    def _magnitude(self, e_field: torch.Tensor, m_field: torch.Tensor) -> torch.Tensor:
        """Magnitude of codes given their exponent and mantissa fields (float64)."""
        e = e_field.to(torch.float64)
        m = m_field.to(torch.float64)
        if self.man == 0:
            return torch.pow(2.0, e - self.bias)
        frac = m / float(1 << self.man)
        normal = torch.pow(2.0, e - self.bias) * (1.0 + frac)
        sub = frac * 2.0 ** (1 - self.bias)
        if self.exp == 0:
            return sub
        return torch.where(e_field == 0, sub, normal)

    @functools.cached_property
    def _table(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(values float64 [2^bits], is_nan bool [2^bits]) in code order."""
        if self.bits > 8:
            raise ValueError(f"{self.name}: no value table for formats wider than 8 bits")
        codes = torch.arange(1 << self.bits, dtype=torch.int64)
        m_field = codes & ((1 << self.man) - 1)
        e_field = (codes >> self.man) & ((1 << self.exp) - 1)
        sign = ((codes >> (self.exp + self.man)) & 1) if self.signed else torch.zeros_like(codes)
        mag = self._magnitude(e_field, m_field)
        val = torch.where(sign == 1, -mag, mag)
        mag_bits = codes & ((1 << (self.exp + self.man)) - 1)
        all_ones = (1 << (self.exp + self.man)) - 1
        is_nan = torch.zeros_like(codes, dtype=torch.bool)
        if self.nan == "all_ones":
            is_nan = mag_bits == all_ones
        elif self.nan == "ieee":
            exp_ones = e_field == (1 << self.exp) - 1
            is_nan = exp_ones & (m_field != 0)
            val = torch.where(exp_ones & (m_field == 0),
                              torch.where(sign == 1, -math.inf, math.inf), val)
        val = torch.where(is_nan, torch.full_like(val, math.nan), val)
        return val, is_nan

    @functools.cached_property
    def _positive_codes(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Finite non-negative values ascending, with their codes (for encoding)."""
        val, is_nan = self._table
        codes = torch.arange(1 << self.bits, dtype=torch.int64)
        non_neg = ~is_nan & torch.isfinite(val) & (val >= 0)
        if self.signed:
            non_neg &= (codes >> (self.exp + self.man)) == 0
        v, c = val[non_neg], codes[non_neg]
        order = torch.argsort(v, stable=True)
        return v[order], c[order]

    @property
    def max_value(self) -> float:
        """Largest finite value."""
        if self.bits > 8:
            return float(torch.finfo(self.torch_dtype).max)
        return float(self._positive_codes[0][-1])

    @property
    def min_positive(self) -> float:
        """Smallest positive value (subnormal where the format has them)."""
        if self.bits > 8:
            return float(torch.finfo(self.torch_dtype).smallest_normal) / (1 << self.man)
        v = self._positive_codes[0]
        return float(v[v > 0][0])

    @property
    def has_nan(self) -> bool:
        return self.nan != "none"

    @property
    def has_inf(self) -> bool:
        return self.nan == "ieee"

    def values(self) -> torch.Tensor:
        """All finite values, ascending, without duplicates (float64)."""
        if self.bits > 8:
            raise ValueError(f"{self.name}: values() is only defined for formats of at most 8 bits")
        val, is_nan = self._table
        v = val[~is_nan & torch.isfinite(val)]
        return torch.unique(v)

    # -- decode ----------------------------------------------------------------
    def decode(self, codes: torch.Tensor) -> torch.Tensor:
        if self.bits > 8:
            bits_dtype = torch.int16 if self.bits == 16 else torch.int32
            return codes.to(bits_dtype).view(self.torch_dtype).to(torch.float32)
        val, _ = self._table
        idx = (codes.to(torch.int64) & ((1 << self.bits) - 1))
        return val.to(torch.float32).to(codes.device)[idx]

    # -- encode ----------------------------------------------------------------
    def encode(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.as_tensor(x)
        if self.bits > 8:
            xf = x.to(torch.float64 if x.dtype == torch.float64 else torch.float32)
            big = float(torch.finfo(self.torch_dtype).max)
            finite = torch.isfinite(xf)
            xf = torch.where(finite, xf.clamp(-big, big), xf)
            # torch's float32 -> fp16/bf16 conversion rounds to nearest even.
            y = xf.to(self.torch_dtype)
            return y.view(torch.int16 if self.bits == 16 else torch.int32)
        return self._encode_small(x)

    def _encode_small(self, x: torch.Tensor) -> torch.Tensor:
        device = x.device
        xd = x.to(torch.float64)
        nan = torch.isnan(xd)
        if bool(nan.any()) and not self.has_nan:
            raise ValueError(f"{self.name}.encode: {int(nan.sum())} NaN value(s) in the input; "
                             f"{self.name} has no NaN code")
        pos_vals, pos_codes = self._positive_codes
        pos_vals = pos_vals.to(device)
        pos_codes = pos_codes.to(device)
        mag = xd.abs()
        if not self.signed:
            mag = torch.where(xd > 0, xd, torch.zeros_like(xd))
        # index of the first table value >= mag
        hi = torch.searchsorted(pos_vals, torch.nan_to_num(mag, nan=0.0, posinf=math.inf).contiguous())
        n = pos_vals.numel()
        hi_c = hi.clamp(max=n - 1)
        lo_c = (hi - 1).clamp(min=0)
        v_hi = pos_vals[hi_c]
        v_lo = pos_vals[lo_c]
        d_hi = v_hi - mag
        d_lo = mag - v_lo
        c_hi = pos_codes[hi_c]
        c_lo = pos_codes[lo_c]
        # ties go to the even code (consecutive magnitudes alternate parity)
        take_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (c_hi % 2 == 0))
        code = torch.where(take_hi, c_hi, c_lo)
        code = torch.where(hi >= n, pos_codes[-1], code)  # saturate (also +inf)
        code = torch.where(hi == 0, pos_codes[0], code)
        if self.signed:
            sign_bit = 1 << (self.exp + self.man)
            neg = torch.signbit(xd)
            code = torch.where(neg, code | sign_bit, code)
        if self.has_inf:
            inf_code = ((1 << self.exp) - 1) << self.man
            code = torch.where(torch.isinf(xd), torch.full_like(code, inf_code), code)
            if self.signed:
                code = torch.where(torch.isinf(xd) & (xd < 0), code | (1 << (self.exp + self.man)), code)
        if self.has_nan:
            code = torch.where(nan, torch.full_like(code, self._nan_code), code)
        return code.to(torch.uint8)

    @property
    def _nan_code(self) -> int:
        if self.nan == "all_ones":
            return (1 << (self.exp + self.man)) - 1
        # ieee: exponent all ones, mantissa: all ones (as e5m2 0x7F? use the canonical quiet NaN)
        return (((1 << self.exp) - 1) << self.man) | ((1 << self.man) - 1)


# ---------------------------------------------------------------------------
# the registry of named formats
# ---------------------------------------------------------------------------

_FORMATS: dict[str, NumberFormat] = {}


def _register(fmt: NumberFormat, *aliases: str) -> NumberFormat:
    _FORMATS[fmt.name] = fmt
    for a in aliases:
        _FORMATS[a] = fmt
    return fmt


for _b in range(1, 9):
    _register(IntFormat(_b, True))
    _register(IntFormat(_b, False))

E2M1 = _register(FloatFormat(2, 1), "fp4", "float4_e2m1")
E3M2 = _register(FloatFormat(3, 2), "fp6_e3m2")
E2M3 = _register(FloatFormat(2, 3), "fp6_e2m3")
E4M3 = _register(FloatFormat(4, 3, nan="all_ones"), "fp8", "fp8_e4m3", "e4m3fn", "float8_e4m3fn")
E5M2 = _register(FloatFormat(5, 2, nan="ieee"), "fp8_e5m2", "float8_e5m2")
E8M0 = _register(FloatFormat(8, 0, bias=127, signed=False, nan="all_ones"), "ue8m0", "float8_e8m0fnu")
E0M3 = _register(FloatFormat(0, 3, bias=1))
E3M4 = _register(FloatFormat(3, 4))
FP16 = _register(FloatFormat(5, 10, nan="ieee", fmt_name="fp16"), "float16", "half")
BF16 = _register(FloatFormat(8, 7, nan="ieee", fmt_name="bf16"), "bfloat16")
FP32 = _register(FloatFormat(8, 23, nan="ieee", fmt_name="fp32"), "float32", "float")


@dataclass(frozen=True, repr=False)
class _ComputeOnly(NumberFormat):
    """A compute type that is not a storage format (tf32, int32 accumulators)."""

    fmt_name: str
    bits: int
    is_float: bool
    signed: bool = True

    @property
    def name(self) -> str:
        return self.fmt_name

    def __repr__(self) -> str:
        return f"ComputeType({self.fmt_name})"

    def encode(self, x):
        if self.fmt_name == "tf32":  # 10 mantissa bits, fp32 range; round to nearest even
            xi = torch.as_tensor(x, dtype=torch.float32).view(torch.int32).to(torch.int64)
            lsb = (xi >> 13) & 1
            xi = ((xi + 0xFFF + lsb) >> 13) << 13
            return ((xi + 2**31) % 2**32 - 2**31).to(torch.int32)
        return torch.as_tensor(x).round().clamp(-2**31, 2**31 - 1).to(torch.int32)

    def decode(self, codes):
        if self.fmt_name == "tf32":
            return codes.to(torch.int32).view(torch.float32)
        return codes.to(torch.float32)


TF32 = _register(_ComputeOnly("tf32", 19, True))
INT32 = _register(_ComputeOnly("int32", 32, False))

_SMALL_TORCH: dict[str, torch.dtype] = {}
for _name, _attr in (("e4m3", "float8_e4m3fn"), ("e5m2", "float8_e5m2"), ("e8m0", "float8_e8m0fnu")):
    if hasattr(torch, _attr):
        _SMALL_TORCH[_name] = getattr(torch, _attr)


def _by_name_raw(name: str) -> NumberFormat | None:
    return _FORMATS.get(name)


def get_format(name) -> NumberFormat:
    """Look a format up by name (``"int4"``, ``"e4m3"``, ``"bf16"``...), torch dtype or format."""
    if isinstance(name, NumberFormat):
        return name
    if isinstance(name, torch.dtype):
        fmt = format_of_torch_dtype(name)
        if fmt is None:
            raise ValueError(f"no humming number format for torch dtype {name}")
        return fmt
    key = str(name).strip().lower()
    if key in _FORMATS:
        return _FORMATS[key]
    raise ValueError(f"unknown number format {name!r}; known: {', '.join(format_names())}")


def format_names() -> list[str]:
    """Canonical names of all registered formats."""
    return sorted({f.name for f in _FORMATS.values()})


_TORCH_TO_NAME = {
    torch.float16: "fp16",
    torch.bfloat16: "bf16",
    torch.float32: "fp32",
    torch.int8: "int8",
    torch.uint8: "uint8",
}
for _name, _dt in _SMALL_TORCH.items():
    _TORCH_TO_NAME[_dt] = _name


def format_of_torch_dtype(dtype: torch.dtype) -> NumberFormat | None:
    name = _TORCH_TO_NAME.get(dtype)
    return _FORMATS[name] if name else None


def torch_dtype_of(fmt) -> torch.dtype | None:
    """The torch dtype that holds values of ``fmt`` natively (fp16/bf16/fp32/fp8/int8), or None."""
    fmt = get_format(fmt)
    for dt, name in _TORCH_TO_NAME.items():
        if name == fmt.name:
            return dt
    return None
