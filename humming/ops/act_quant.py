"""Activation quantization on the GPU: ``quantize_activation(x, fmt, mode)``.

``x`` is fp16 or bf16 ``[..., K]`` on a CUDA device. Returns ``(q, scales)``:

* ``q``: codes of ``fmt`` -- ``torch.int8`` (int8), ``torch.float8_e4m3fn``
  (e4m3), ``torch.float8_e5m2`` (e5m2), or for the 4-bit formats (int4, e2m1)
  ``torch.uint8 [..., K/2]`` with two codes per byte, the even element in the low
  nibble (int4 codes are two's complement); ``"int4+bytes"``: int4 codes one per
  byte, ``torch.int8 [..., K]``; ``fmt + "+fp16"`` or ``"+bf16"``: the codes'
  values as 16-bit floats ``[..., K]``, for GEMMs on 16-bit operands (see below);
* ``scales``: fp32, ``[..., 1]`` (``dynamic_token``), ``[..., K/group_size]``
  (``dynamic_group``), or the given ``scale`` (``static_tensor``, shape ``[1]``);
  ``group_major=True`` (``dynamic_group`` codes only) lays the group scales out by
  group, ``[K/group_size, M']`` with ``M'`` the M rows rounded up to a multiple
  of 4 (the padding entries unwritten): a GEMM that folds them per block reads each block's
  scales of consecutive tokens from one run of memory.

With 16-bit values, token and static scales stay apart (``x = value * scale``,
the values exact), and ``dynamic_group`` folds each group's scale into its
values over a per-row power of two ``t`` that is at least every group scale of
the row: ``value = fp16(code * scale_g / t)`` and ``scales`` is ``t`` ``[..., 1]``.
The values stay within the format's range (no fp16 overflow whatever the
activations), and are exact where ``code * scale_g / t`` is in 16 bits (e2m1 or
e4m3 codes with e4m3 or e8m0 scales: NVFP4, MXFP8, MXFP4 activations); fp32 group
scales are rounded once to 16 bits.

``scale_fmt`` (default fp32) rounds every dynamic scale up into that storage
format (e4m3, e8m0, fp16, bf16; saturating at its largest value), as
:func:`humming.reference.quantize_activation` does.

Numerics (the contract the tests hold the kernel to, bit for bit): a dynamic
scale is ``absmax / fmt.max`` in fp32, and **1 when the absmax is 0** (an
all-zero row or group then quantizes to zeros); codes are ``encode(x / scale)``
with IEEE fp32 division, round to nearest even, and saturation to the format's
finite range (int8: [-128, 127], int4: [-8, 7], e4m3: +-448, e5m2: +-57344,
e2m1: +-6).

One kernel variant is compiled per (input dtype, format, mode, group size, K
tier) on first use and cached (see ``humming.jit``); a call then allocates the
outputs, writes pointers and sizes into a prepared parameter struct and
launches on the current stream -- no synchronisation, so CUDA graphs capture
it. ``torch.compile`` sees the op ``torch.ops.humming.quantize_activation``.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Optional

import torch

from ..dtypes import get_format
from ..errors import DeviceError, ShapeError, UnsupportedError
from ..jit import KernelSpec, get_kernel
from ..scheme import SCALE_FORMATS
from .library import register_op

__all__ = ["MODES", "ActQuantParams", "act_quant_spec", "quantize_activation", "quantized_dtype",
           "device_target"]

MODES = ("static_tensor", "dynamic_token", "dynamic_group")
_MODE_CODE = {"static_tensor": 0, "dynamic_token": 1, "dynamic_group": 2}
_IN_DTYPES = (torch.float16, torch.bfloat16)


class ActQuantParams(ctypes.Structure):
    """Host copy of ``humming::ActQuantParams`` (act_quant.cuh); same layout."""

    _fields_ = [("x", ctypes.c_void_p), ("q", ctypes.c_void_p), ("scales", ctypes.c_void_p),
                ("m", ctypes.c_int), ("k", ctypes.c_int),
                ("ld_x", ctypes.c_longlong), ("ld_q", ctypes.c_longlong), ("ld_s", ctypes.c_longlong),
                ("ld_g", ctypes.c_longlong)]


#: ``fmt + BYTES``: a 4-bit integer format's codes one per byte (``torch.int8 [..., K]``, the
#: same values and scales), for kernels that multiply them as int8 operands
BYTES = "+bytes"
#: ``fmt + VALUES[dtype]``: the codes' values as 16-bit floats (group scales folded in)
VALUES = {torch.float16: "+fp16", torch.bfloat16: "+bf16"}
_OUT16 = {"+fp16": 1, "+bf16": 2}


def _split(fmt: str) -> tuple[str, str]:
    """``fmt`` -> (element format, output: "" codes, BYTES or a VALUES suffix)."""
    for suffix in (BYTES, *_OUT16):
        if fmt.endswith(suffix):
            base = fmt[: -len(suffix)]
            if suffix == BYTES:
                f = get_format(base)
                if f.is_float or f.bits != 4:
                    raise UnsupportedError(f"quantize_activation: {fmt!r}: one code per byte is for 4-bit "
                                           f"integer formats", [f"found {f.name}"])
            return base, suffix
    return fmt, ""


def _one_per_byte(fmt: str) -> tuple[str, bool]:
    base, out = _split(fmt)
    return base, out == BYTES


def _output_format(fmt: str):
    f = get_format(_split(fmt)[0])
    ok = f.signed and f.bits in (4, 8) and (not f.is_float or (f.exp >= 2 and f.man >= 1))
    if not ok:
        raise UnsupportedError(f"quantize_activation: no kernel writes {f.name} activations",
                               ["supported formats: int8, int4 and signed small floats of 8 or 4 bits "
                                "with >= 2 exponent and >= 1 mantissa bits (e4m3, e5m2, e2m1, ...)"])
    return f


def quantized_dtype(fmt: str) -> torch.dtype:
    """The torch dtype of ``q`` for ``fmt`` (uint8 holds packed 4-bit codes)."""
    f = _output_format(fmt)
    out = _split(fmt)[1]
    if out in _OUT16:
        return torch.bfloat16 if out == "+bf16" else torch.float16
    if f.bits == 4 and out != BYTES:
        return torch.uint8
    return torch.int8 if not f.is_float else f.torch_dtype


def _layout(k: int) -> tuple[int, int]:
    """(threads per block, threads per row) for a row of k elements: a warp per row (4 rows per
    block) up to 1024, else a block per row of one 8-element vector per thread up to 8192 (the
    kernel then holds the row in registers: one memory round trip), 1024 threads beyond."""
    if k <= 1024:
        return 128, 32
    t = 256 if k <= 2048 else 512 if k <= 4096 else 1024
    return t, t


def _check_group(group_size) -> int:
    g = group_size
    if not isinstance(g, int) or isinstance(g, bool) or not (g in (8, 16, 32, 64, 128, 256) or
                                                            (g > 256 and g % 256 == 0)):
        raise UnsupportedError(f"quantize_activation: group_size={g!r} is not supported",
                               ["dynamic_group needs group_size 8, 16, 32, 64, 128, 256 or a multiple of 256"])
    return g


def _scale_config(scale_fmt: str) -> dict:
    if scale_fmt not in SCALE_FORMATS:
        raise UnsupportedError(f"quantize_activation: scale_fmt={scale_fmt!r} is not supported",
                               [f"scale formats: {', '.join(SCALE_FORMATS)}"])
    if scale_fmt == "fp32":
        return {"SC_EXP": 0, "SC_MAN": 0, "SC_BIAS": 0, "SC_MAX": 0.0}
    sf = get_format(scale_fmt)
    return {"SC_EXP": sf.exp, "SC_MAN": sf.man, "SC_BIAS": sf.bias, "SC_MAX": float(sf.max_value)}


def act_quant_spec(fmt: str, mode: str, in_dtype: torch.dtype, k: int, target: str,
                   group_size: int | None = None, soft_cvt: bool = False, scale_fmt: str = "fp32") -> KernelSpec:
    """The kernel for one variant. ``soft_cvt`` forces the software float encoder
    even where the target has a native fp8 conversion."""
    f = _output_format(fmt)
    out = _split(fmt)[1]
    if mode not in _MODE_CODE:
        raise ValueError(f"quantize_activation: mode must be one of {MODES}, found {mode!r}")
    if in_dtype not in _IN_DTYPES:
        raise ShapeError(f"quantize_activation: x must be float16 or bfloat16, found {in_dtype}")
    group = _check_group(group_size) if mode == "dynamic_group" else 0
    threads, row_threads = _layout(k)
    config = {
        "IN_BF16": in_dtype == torch.bfloat16, "MODE": _MODE_CODE[mode], "GROUP": group,
        "OUT_BITS": 8 if out == BYTES else f.bits, "OUT_FLOAT": f.is_float,
        "EXP": f.exp if f.is_float else 0, "MAN": f.man if f.is_float else 0,
        "BIAS": f.bias if f.is_float else 0,
        "QMIN": float(-f.max_value if f.is_float else f.min_value), "QMAX": float(f.max_value),
        "SOFT_CVT": bool(soft_cvt), "ROW_THREADS": row_threads, "OUT16": _OUT16.get(out, 0),
        **_scale_config(scale_fmt),
    }
    return KernelSpec(family="act_quant", header="humming/kernels/act_quant.cuh", entry="humming::act_quant",
                      params="humming::ActQuantParams", config=config, target=target, threads=threads,
                      params_size=ctypes.sizeof(ActQuantParams))


_targets: dict[int, tuple[str, object]] = {}


def _device(index: int) -> tuple[str, object]:
    """(compile target, Capabilities or None) of CUDA device ``index``: from its
    capability file, or ``sm_<major><minor>`` when no file describes it."""
    hit = _targets.get(index)
    if hit is None:
        try:
            from ..device import get_device
            from ..jit import default_runtime

            dev = get_device(index)
            hit = (dev.compile_target(default_runtime().compiler.name), dev.caps)
        except Exception:  # an unknown GPU still gets a kernel; the header checks the PTX target
            major, minor = torch.cuda.get_device_capability(index)
            hit = (f"sm_{major}{minor}", None)
        _targets[index] = hit
    return hit


def device_target(index: int) -> str:
    """The compile target of CUDA device ``index`` (e.g. ``sm_90a`` for an H200)."""
    return _device(index)[0]


_bits: dict[str, int] = {}  # output name -> bits per element written, for formats already validated


def _shapes(x: torch.Tensor, fmt: str, mode: str, group_size, scale, group_major: bool = False):
    """Validate the call; returns (M, K, q shape, scales shape or None)."""
    if mode not in _MODE_CODE:
        raise ValueError(f"quantize_activation: mode must be one of {MODES}, found {mode!r}")
    if x.dtype not in _IN_DTYPES:
        raise ShapeError(f"quantize_activation: x must be float16 or bfloat16, found {x.dtype}")
    shape = x.shape
    if len(shape) == 2:
        m, k = shape
        lead = (m,)
    elif len(shape) == 0:
        raise ShapeError("quantize_activation: x must have at least one dimension [..., K], found a scalar")
    else:
        k = shape[-1]
        lead = tuple(shape[:-1])
        m = 1
        for d in lead:
            m *= d
    bits = _bits.get(fmt)
    if bits is None:
        out = _split(fmt)[1]
        bits = _output_format(fmt).bits
        bits = _bits[fmt] = 16 if out in _OUT16 else 8 if out == BYTES else bits
    if bits == 4 and k % 2:
        raise ShapeError(f"quantize_activation: 4-bit {fmt} codes are packed in pairs, so K must be even; found K={k}")
    q_shape = lead + (k * bits // 8 if bits < 16 else k,)
    if mode == "static_tensor":
        if not isinstance(scale, torch.Tensor) or scale.numel() != 1 or scale.dtype != torch.float32:
            found = (f"{tuple(scale.shape)} {scale.dtype}" if isinstance(scale, torch.Tensor) else repr(scale))
            raise ShapeError(f"quantize_activation: static_tensor needs scale as a float32 tensor of one "
                             f"element, found {found}")
        if scale.device != x.device:
            raise ShapeError(f"quantize_activation: scale is on {scale.device}, x on {x.device}")
        return m, k, q_shape, None
    if scale is not None:
        raise ShapeError(f"quantize_activation: scale is only taken by static_tensor, found it with mode={mode!r}")
    if group_major and mode != "dynamic_group":
        raise ValueError(f"quantize_activation: group_major is for dynamic_group scales, found mode={mode!r}")
    if mode == "dynamic_token":
        return m, k, q_shape, lead + (1,)
    if group_major and bits == 16:
        raise ValueError(f"quantize_activation: group_major is for codes with their group scales; {fmt!r} "
                         f"writes 16-bit values with one scale per row")
    g = _check_group(group_size)
    if k % g:
        raise ShapeError(f"quantize_activation: group_size={g} must divide K, found K={k}")
    if group_major:
        return m, k, q_shape, (k // g, (m + 3) // 4 * 4)
    return m, k, q_shape, lead + ((k // g,) if bits < 16 else (1,))  # (16-bit values: the row's t)


class _Prepared:
    __slots__ = ("plan", "rows_per_block", "q_dtype")

    def __init__(self, plan, rows_per_block: int, q_dtype: torch.dtype):
        self.plan = plan
        self.rows_per_block = rows_per_block
        self.q_dtype = q_dtype


_local = threading.local()  # each thread its own parameter structs


def _prepare(key) -> _Prepared:
    device, in_dtype, fmt, mode, group_size, k, scale_fmt = key
    target, caps = _device(device)
    f = _output_format(fmt)
    # Ask the capability table whether fp32 -> fmt is a native conversion here.
    soft = f.is_float and caps is not None and not caps.can_convert("fp32", f.name)
    spec = act_quant_spec(fmt, mode, in_dtype, k, target, group_size, soft_cvt=soft, scale_fmt=scale_fmt)
    kernel = get_kernel(spec)
    return _Prepared(kernel.plan(ActQuantParams()), spec.threads // spec.get("ROW_THREADS"),
                     quantized_dtype(fmt))


def _quantize_activation(x: torch.Tensor, fmt: str, mode: str, group_size: Optional[int] = None,
                         scale: Optional[torch.Tensor] = None, scale_fmt: str = "fp32", group_major: bool = False
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    """The op: as quantize_activation, but static_tensor returns an empty scales tensor."""
    if x.device.type != "cuda":
        raise DeviceError(f"quantize_activation: x must be a CUDA tensor, found one on {x.device}")
    m, k, q_shape, s_shape = _shapes(x, fmt, mode, group_size, scale, group_major)
    x2 = x if x.dim() == 2 else x.reshape(m, k)
    if k > 1 and x2.stride(1) != 1:
        x2 = x2.contiguous()
    device = x.device.index
    key = (device, x.dtype, fmt, mode, group_size, _layout(k), scale_fmt)
    plans = getattr(_local, "plans", None)
    if plans is None:
        plans = _local.plans = {}
    prep = plans.get(key)
    if prep is None:
        prep = plans[key] = _prepare((device, x.dtype, fmt, mode, group_size, k, scale_fmt))
    q = torch.empty(q_shape, dtype=prep.q_dtype, device=x.device)
    scales = torch.empty(s_shape if s_shape is not None else (0,), dtype=torch.float32, device=x.device)
    if m == 0:
        return q, scales
    p = prep.plan.params
    p.x = x2.data_ptr()
    p.q = q.data_ptr()
    p.scales = scale.data_ptr() if s_shape is None else scales.data_ptr()
    p.m = m
    p.k = k
    p.ld_x = x2.stride(0) if m > 1 else k
    p.ld_q = q_shape[-1] * q.element_size()
    if group_major:
        p.ld_s, p.ld_g = 1, s_shape[-1]
    else:
        p.ld_s, p.ld_g = (0 if s_shape is None else s_shape[-1]), 1
    grid = (m + prep.rows_per_block - 1) // prep.rows_per_block
    if device != torch.cuda.current_device():
        with torch.cuda.device(device):
            prep.plan.launch(grid)
    else:
        prep.plan.launch(grid)
    return q, scales


def _fake(x, fmt, mode, group_size=None, scale=None, scale_fmt="fp32", group_major=False):
    m, k, q_shape, s_shape = _shapes(x, fmt, mode, group_size, scale, group_major)
    q = x.new_empty(q_shape, dtype=quantized_dtype(fmt))
    return q, x.new_empty(s_shape if s_shape is not None else (0,), dtype=torch.float32)


_op = register_op("quantize_activation", _quantize_activation, _fake)


def quantize_activation(x: torch.Tensor, fmt: str, mode: str, group_size: int | None = None,
                        scale: torch.Tensor | None = None, scale_fmt: str = "fp32", group_major: bool = False
                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """Quantize ``x`` (see the module docstring)."""
    q, scales = _op(x, fmt, mode, group_size, scale, scale_fmt, group_major)
    if mode == "static_tensor":
        return q, scale.reshape(1)
    return q, scales
