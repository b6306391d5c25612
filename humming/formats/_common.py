"""Shared pieces of the checkpoint readers: tensor look-up with checks, bit
unpacking, scale conversion, act-order permutations and block-scale refinement.

Every function raises :class:`~humming.errors.FormatError` naming the tensor or
config key, what was expected and what was found.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Optional, Sequence

import torch

from ..dtypes import get_format
from ..errors import FormatError
from ..scheme import ActivationScheme, WeightScheme

# torch dtype -> the humming scale-format name it stores exactly
_SCALE_DTYPES = {
    torch.float16: "fp16",
    torch.bfloat16: "bf16",
    torch.float32: "fp32",
}
if hasattr(torch, "float8_e4m3fn"):
    _SCALE_DTYPES[torch.float8_e4m3fn] = "e4m3"
if hasattr(torch, "float8_e8m0fnu"):
    _SCALE_DTYPES[torch.float8_e8m0fnu] = "e8m0"

_INT_DTYPES = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)


def dtype_name(dt: torch.dtype) -> str:
    return str(dt).replace("torch.", "")


# ---------------------------------------------------------------------------
# config access
# ---------------------------------------------------------------------------


def quant_section(config: Mapping) -> dict:
    """The quantization config out of an HF ``config.json`` dict, a ModelOpt
    ``hf_quant_config.json`` dict, or a bare quantization config."""
    if not isinstance(config, Mapping):
        raise FormatError(f"quantization config: expected a dict, got {type(config).__name__}")
    if "quantization_config" in config and isinstance(config["quantization_config"], Mapping):
        return dict(config["quantization_config"])
    if "quantization" in config and isinstance(config["quantization"], Mapping) and "quant_method" not in config:
        # ModelOpt hf_quant_config.json: {"producer": {...}, "quantization": {...}}
        q = dict(config["quantization"])
        q.setdefault("quant_method", "modelopt")
        return q
    return dict(config)


def cfg_get(cfg: Mapping, *keys: str, default: Any = None) -> Any:
    """First present key of ``keys`` in ``cfg`` (formats rename keys over versions)."""
    for k in keys:
        if k in cfg and cfg[k] is not None:
            return cfg[k]
    return default


def cfg_int(cfg: Mapping, *keys: str, default: Any = None, allowed: Optional[Iterable[int]] = None) -> int:
    v = cfg_get(cfg, *keys, default=default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise FormatError(f"quantization_config.{keys[0]}: expected an integer, got {v!r}")
    if allowed is not None and v not in tuple(allowed):
        raise FormatError(f"quantization_config.{keys[0]}: expected one of {sorted(allowed)}, got {v}")
    return v


def model_act_dtype(config: Mapping, default: str = "bf16") -> str:
    """fp16 or bf16 from an HF config's ``torch_dtype``/``dtype`` (default when absent)."""
    v = config.get("torch_dtype", config.get("dtype")) if isinstance(config, Mapping) else None
    return {"float16": "fp16", "half": "fp16", "bfloat16": "bf16"}.get(str(v).replace("torch.", ""), default)


def unquantized_activation(config: Mapping, default: str = "bf16") -> ActivationScheme:
    return ActivationScheme(fmt=model_act_dtype(config, default))


# ---------------------------------------------------------------------------
# tensors
# ---------------------------------------------------------------------------


def get_tensor(tensors: Mapping[str, torch.Tensor], name: str, dtypes: Optional[Sequence[torch.dtype]] = None,
               ndim: Optional[Sequence[int] | int] = None, shape: Optional[Sequence[Optional[int]]] = None,
               optional: bool = False) -> Optional[torch.Tensor]:
    """``tensors[name]`` checked for dtype, rank and shape (``None`` entries match any size)."""
    if name not in tensors:
        if optional:
            return None
        near = sorted(k for k in _keys(tensors) if k.rsplit(".", 1)[0] == name.rsplit(".", 1)[0])
        hint = f"; tensors of that module: {', '.join(near)}" if near else ""
        raise FormatError(f"tensor {name}: expected in the checkpoint, not found{hint}")
    t = tensors[name]
    if not isinstance(t, torch.Tensor):
        raise FormatError(f"tensor {name}: expected a torch.Tensor, got {type(t).__name__}")
    if dtypes is not None and t.dtype not in tuple(dtypes):
        raise FormatError(f"tensor {name}: expected dtype {' or '.join(dtype_name(d) for d in dtypes)}, "
                          f"got {dtype_name(t.dtype)}")
    if ndim is not None:
        nd = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if t.dim() not in nd:
            raise FormatError(f"tensor {name}: expected {' or '.join(map(str, nd))} dimensions, "
                              f"got shape {list(t.shape)}")
    if shape is not None:
        if t.dim() != len(shape) or any(s is not None and s != d for s, d in zip(shape, t.shape)):
            want = "[" + ", ".join("*" if s is None else str(s) for s in shape) + "]"
            raise FormatError(f"tensor {name}: expected shape {want}, got {list(t.shape)}")
    return t


def _keys(tensors: Mapping) -> Iterable[str]:
    try:
        return list(tensors.keys())
    except Exception:  # pragma: no cover - exotic mappings
        return []


def check_finite(name: str, t: torch.Tensor) -> None:
    bad = ~torch.isfinite(t)
    if bool(bad.any()):
        raise FormatError(f"tensor {name}: expected finite values, found {int(bad.sum())} NaN/inf "
                          "(corrupt or truncated checkpoint?)")


def scale_to_f32(name: str, t: torch.Tensor, allow: Sequence[str] = ("fp16", "bf16", "fp32", "e4m3", "e8m0")
                 ) -> tuple[torch.Tensor, str]:
    """A stored scale tensor as exact float32 values plus its scale-format name.

    ``uint8`` tensors are read as E8M0 (``2**(s-127)``, 255 is NaN and refused).
    """
    if t.dtype == torch.uint8:
        fmt = "e8m0"
        if bool((t == 255).any()):
            raise FormatError(f"tensor {name}: E8M0 scale code 255 (NaN) found")
        v = get_format("e8m0").decode(t)
    elif t.dtype in _SCALE_DTYPES:
        fmt = _SCALE_DTYPES[t.dtype]
        v = t.to(torch.float32) if fmt != "e8m0" else get_format("e8m0").decode(t.view(torch.uint8))
    else:
        raise FormatError(f"tensor {name}: expected a scale dtype (float16, bfloat16, float32, float8_e4m3fn or "
                          f"uint8/float8_e8m0fnu E8M0), got {dtype_name(t.dtype)}")
    if fmt not in allow:
        raise FormatError(f"tensor {name}: expected scales stored as {' or '.join(allow)}, got {fmt} "
                          f"({dtype_name(t.dtype)})")
    check_finite(name, v)
    return v.contiguous(), fmt


def is_power_of_two(v: torch.Tensor) -> bool:
    m, _ = torch.frexp(v.to(torch.float32))
    return bool(((m == 0.5) & (v > 0)).all())


def codes_from_float8(name: str, t: torch.Tensor) -> torch.Tensor:
    """Raw e4m3 bit patterns (uint8) of a float8_e4m3fn (or uint8) tensor; NaN codes refused."""
    if t.dtype == torch.uint8:
        c = t
    elif hasattr(torch, "float8_e4m3fn") and t.dtype == torch.float8_e4m3fn:
        c = t.view(torch.uint8)
    else:
        raise FormatError(f"tensor {name}: expected dtype float8_e4m3fn, got {dtype_name(t.dtype)}")
    if bool(((c & 0x7F) == 0x7F).any()):
        raise FormatError(f"tensor {name}: e4m3 NaN codes found (corrupt checkpoint?)")
    return c.contiguous()


# ---------------------------------------------------------------------------
# bit unpacking
# ---------------------------------------------------------------------------


def unpack_bits(name: str, packed: torch.Tensor, bits: int, count: int, dim: int = -1) -> torch.Tensor:
    """Unpack ``count`` values of ``bits`` bits along ``dim`` from a dense little-endian bit stream.

    Value ``i`` starts at bit ``i * bits`` of the stream formed by the packed
    words in order, least significant bit first (this is GPTQ's layout for
    2/3/4/8 bits, compressed-tensors' dense int32 packing and AutoRound's
    generic packing; words may be 8, 16, 32 or 64 bits wide). Returns uint8.
    """
    if packed.dtype not in _INT_DTYPES:
        raise FormatError(f"tensor {name}: expected an integer packed dtype, got {dtype_name(packed.dtype)}")
    if not 1 <= bits <= 8:
        raise FormatError(f"tensor {name}: bits must be 1..8, got {bits}")
    x = packed.movedim(dim, -1).contiguous()
    wbytes = x.element_size()
    have = x.shape[-1] * wbytes * 8
    if count * bits > have:
        raise FormatError(f"tensor {name}: {x.shape[-1]} packed words of {wbytes * 8} bits hold at most "
                          f"{have // bits} {bits}-bit values along dim {dim}, expected {count}")
    lead = x.shape[:-1]
    by = x.view(torch.uint8).reshape(-1, x.shape[-1] * wbytes)
    by = torch.nn.functional.pad(by, (0, 1))  # one spare byte for values straddling the end
    start = torch.arange(count, dtype=torch.int64, device=x.device) * bits
    byte_i = start // 8
    shift = (start % 8).to(torch.int32)
    mask = (1 << bits) - 1
    out = torch.empty(by.shape[0], count, dtype=torch.uint8, device=x.device)
    step = max(1, (1 << 24) // max(count, 1))
    for r0 in range(0, by.shape[0], step):  # chunk rows to bound the int32 temporaries
        b = by[r0:r0 + step]
        lo = b[:, byte_i].to(torch.int32)
        hi = b[:, byte_i + 1].to(torch.int32)
        out[r0:r0 + step] = (((lo | (hi << 8)) >> shift) & mask).to(torch.uint8)
    return out.reshape(*lead, count).movedim(-1, dim)


# ---------------------------------------------------------------------------
# act order (g_idx) and block scales
# ---------------------------------------------------------------------------


def perm_from_g_idx(name: str, g_idx: torch.Tensor, k: int, num_groups: int
                    ) -> tuple[Optional[torch.Tensor], int]:
    """``(perm, group_size)`` for a GPTQ-style ``g_idx`` (group of each input column).

    ``perm`` is None when ``g_idx`` is already sorted. Every group must hold
    the same number of columns (``k / num_groups``): that is what GPTQ with
    ``desc_act`` writes, and what a contiguous group layout needs.
    """
    g = g_idx.to(torch.int64).reshape(-1)
    if g.numel() != k:
        raise FormatError(f"tensor {name}: expected {k} entries (one per input column), got {g.numel()}")
    if k and (int(g.min()) < 0 or int(g.max()) >= num_groups):
        raise FormatError(f"tensor {name}: expected group indices in [0, {num_groups}), found "
                          f"[{int(g.min())}, {int(g.max())}]")
    if k % num_groups:
        raise FormatError(f"tensor {name}: {num_groups} groups do not divide K={k}")
    gs = k // num_groups
    counts = torch.bincount(g, minlength=num_groups)
    if bool((counts != gs).any()):
        bad = int(torch.nonzero(counts != gs)[0])
        raise FormatError(f"tensor {name}: expected every group to hold {gs} columns, group {bad} holds "
                          f"{int(counts[bad])}")
    if bool((g[1:] >= g[:-1]).all()):
        return None, gs
    return torch.argsort(g, stable=True), gs


def check_groups(scales_name: str, k: int, group_size: int, rows: int, k_from: str) -> int:
    """Group size (``-1``/0 = all of K) checked against K and the scale rows of a K-grouped format."""
    if group_size in (-1, 0):
        group_size = k
    if k % group_size:
        raise FormatError(f"quantization_config.group_size: {group_size} does not divide K={k} ({k_from})")
    if rows != k // group_size:
        raise FormatError(f"tensor {scales_name}: expected {k // group_size} rows (K={k} / group_size="
                          f"{group_size}), got {rows}")
    return group_size


def refine_blocks(scales: torch.Tensor, n: int, k: int, bn: int, bk: int) -> tuple[torch.Tensor, dict]:
    """Scales on a ``bn x bk`` grid (``[ceil(n/bn), ceil(k/bk)]``, last block possibly partial)
    as an exact canonical layout: block scales when the blocks divide the weight,
    else the finest uniform grid (``gcd``) that keeps every block boundary.

    Returns ``(scales, scheme_kwargs)``.
    """
    gn, gk = math.gcd(n, bn), math.gcd(k, bk)
    s = scales
    if gk != bk:
        s = s.repeat_interleave(bk // gk, dim=-1)[..., : k // gk]
    if gn != bn:
        s = s.repeat_interleave(bn // gn, dim=-2)[..., : n // gn, :]
    s = s.contiguous()
    if gn == 1:
        return s, dict(scale="group", group_size=gk)
    return s, dict(scale="block", block_n=gn, group_size=gk)


def grid_kwargs(name: str, scales: torch.Tensor, n: int, k: int) -> dict:
    """Scheme granularity implied by a 2-D scale tensor shape over an ``n x k`` weight."""
    sn, sk = scales.shape[-2:]
    if (sn, sk) == (1, 1):
        return dict(scale="tensor")
    if sn == n and sk == 1:
        return dict(scale="channel")
    if sn == n and sk >= 1 and k % sk == 0:
        return dict(scale="group", group_size=k // sk)
    raise FormatError(f"tensor {name}: scale shape {list(scales.shape)} does not match a tensor, channel "
                      f"or group layout over a weight [{n}, {k}]")


def weight_scheme(**kw) -> WeightScheme:
    try:
        return WeightScheme(**kw)
    except FormatError as e:
        raise FormatError(f"checkpoint maps to an invalid scheme: {e}") from None


def attach_input_scale(meta: dict, tensors: Mapping[str, torch.Tensor], p: str,
                       names: Sequence[str] = ("input_scale",)) -> None:
    """Record the first static activation scale found under its own name (``meta['input_scale']`` ...),
    as float32 and as stored (compressed-tensors' ``input_global_scale`` is a divisor, like its weight one)."""
    for name in names:
        t = tensors[p + name] if p + name in tensors else None
        if t is not None:
            v = t.to(torch.float32).reshape(-1)
            check_finite(p + name, v)
            meta[name] = v
            return

