"""Which values a weight or activation carries, and whether an operand type holds them exactly.

The planner only moves a tensor into a tensor-core operand type when every value
it can carry is exact in that type (before scales: scales are applied outside
the MMA, or by the block-scaled MMA itself). These facts come from the number
formats in :mod:`humming.dtypes`, not from a table: ``exact(values, "e4m3")``
rounds every value through the format and compares.

A value set is a small hashable key:

* ``("int", lo, hi)`` -- every integer in ``[lo, hi]``;
* ``("float", name)`` -- every finite value of a float format;
* ``("real",)`` -- arbitrary reals (float zero points: ``q - z`` is not a grid).
"""
from __future__ import annotations

import functools

import torch

from ..dtypes import FloatFormat, IntFormat, get_format
from ..scheme import ActivationScheme, WeightScheme

__all__ = [
    "weight_values",
    "activation_values",
    "describe_values",
    "exact",
    "integer_run",
    "exact_shifts",
    "exactness_reason",
    "significand_bits",
    "products_exact",
]

ValueSet = tuple


def weight_values(scheme: WeightScheme) -> ValueSet:
    """The values a weight element takes before scaling: ``q - offset - z``."""
    fmt = scheme.format
    if isinstance(fmt, IntFormat):
        if scheme.zero_point == "float":
            return ("real",)
        if scheme.zero_point == "int":
            span = (1 << fmt.bits) - 1
            return ("int", -span, span)
        if not fmt.signed:  # implicit offset 2**(b-1): GPTQ-style symmetric storage
            half = 1 << (fmt.bits - 1)
            return ("int", -half, half - 1)
        return ("int", fmt.min_value, fmt.max_value)
    return ("float", fmt.name)


def activation_values(scheme: ActivationScheme) -> ValueSet:
    fmt = scheme.format
    if isinstance(fmt, IntFormat):
        return ("int", fmt.min_value, fmt.max_value)
    return ("float", fmt.name)


def describe_values(vs: ValueSet, *, zero_point: bool = False) -> str:
    if vs[0] == "int":
        what = "q - z" if zero_point else "integers"
        return f"{what} in [{vs[1]}, {vs[2]}]"
    if vs[0] == "float":
        return f"{vs[1]} values"
    return "real-valued q - z (float zero points)"


@functools.lru_cache(maxsize=None)
def _tensor(vs: ValueSet) -> torch.Tensor:
    if vs[0] == "int":
        return torch.arange(vs[1], vs[2] + 1, dtype=torch.float64)
    fmt = get_format(vs[1])
    if fmt.bits > 8:
        raise ValueError(f"value set of {fmt.name} is not enumerable")
    return fmt.values()


def _holds(values: torch.Tensor, target: str) -> bool:
    fmt = get_format(target)
    if isinstance(fmt, IntFormat):
        return bool(((values == values.round()) & (values >= fmt.min_value)
                     & (values <= fmt.max_value)).all())
    if not isinstance(fmt, FloatFormat):  # tf32 / int32 compute types: not operand choices here
        return False
    return bool((fmt.round(values.to(torch.float32)).to(torch.float64) == values).all())


@functools.lru_cache(maxsize=None)
def exact(vs: ValueSet, target: str) -> bool:
    """Whether every value of ``vs`` is exactly representable in ``target``."""
    if vs[0] == "real":
        return False
    if vs[0] == "float" and get_format(vs[1]).bits > 8:
        src = get_format(vs[1])
        dst = get_format(target)
        # 16-bit floats: exact only in themselves (bf16 and fp16 differ in range and precision)
        return src.name == dst.name
    return _holds(_tensor(vs), target)


@functools.lru_cache(maxsize=None)
def integer_run(target: str) -> int:
    """Largest n such that every integer in [-n, n] is exact in ``target``."""
    fmt = get_format(target)
    if isinstance(fmt, IntFormat):
        return min(-fmt.min_value, fmt.max_value)
    if isinstance(fmt, FloatFormat):
        n = 1 << (fmt.man + 1)
        return int(min(n, fmt.max_value))
    return 0


def significand_bits(name: str) -> int:
    """Significand bits the values of format ``name`` may need: an integer's magnitude bits
    (int8: 7), a float's mantissa plus the implicit bit (e4m3: 4, e8m0: 1, bf16: 8, fp32: 24)."""
    fmt = get_format(name)
    if isinstance(fmt, IntFormat):
        return fmt.bits - 1 if fmt.signed else fmt.bits
    return fmt.man + 1


def products_exact(a: str, b: str, target: str) -> bool:
    """Whether every product of a value of ``a`` and one of ``b``, moved by a power of two into
    ``target``'s range, is exact in the float ``target``: their significands fit its own."""
    return significand_bits(a) + significand_bits(b) <= significand_bits(target)


@functools.lru_cache(maxsize=None)
def exact_shifts(vs: ValueSet, target: str) -> tuple[int, int] | None:
    """The range ``[lo, hi]`` of ``d`` for which ``values * 2**d`` is exact in ``target``.

    Used for folding power-of-two (e8m0) group scales into the exponent of a
    float operand: a group whose scale exponent, relative to the per-channel
    base, lies in this range converts exactly.
    """
    if vs[0] != "float" or not isinstance(get_format(target), FloatFormat):
        return None
    vals = _tensor(vs)
    ok = [d for d in range(-40, 41) if _holds(vals * (2.0 ** d), target)]
    if not ok:
        return None
    return (min(ok), max(ok))


def exactness_reason(vs: ValueSet, target: str, *, zero_point: bool = False) -> str:
    """One clause saying whether and why ``vs`` is (not) exact in ``target``."""
    what = describe_values(vs, zero_point=zero_point)
    tfmt = get_format(target)
    ok = exact(vs, target)
    verb = "are exact" if ok else "are not exact"
    if vs[0] == "real":
        return f"{what} are not exact in {target} (only a 16-bit dequantization can hold them)"
    if vs[0] == "int" and isinstance(tfmt, FloatFormat):
        run = integer_run(target)
        return f"{what} {verb} in {target} ({target} holds every integer up to {run} exactly)"
    if vs[0] == "float" and isinstance(tfmt, IntFormat):
        return f"{what} {verb} in {target} (they are not all integers)"
    if vs[0] == "float" and get_format(vs[1]).bits > 8:
        if ok:
            return f"{what} {verb} in {target}"
        return (f"{vs[1]} values are not exact in {target}: values beyond {target}'s range "
                f"(max {get_format(target).max_value:g}) saturate and low bits are rounded")
    return f"{what} {verb} in {target}"
