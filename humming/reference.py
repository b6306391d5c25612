"""The oracle: quantize, dequantize and reference GEMMs in plain torch.

Every kernel test compares against this module. It runs on CPU and CUDA
tensors and favours clarity over speed.

Canonical layout of a :class:`QuantizedWeight` (``E`` only for MoE weights)
------------------------------------------------------------------------------
``codes``         uint8 ``[(E,) N, K]`` -- one element code per weight, the raw bit
                  pattern of ``scheme.fmt`` (two's complement for ``intB``),
                  columns in *storage* order (see ``perm``).
``scales``        float32 ``[(E,) SN, SK]`` -- values exactly representable in
                  ``scheme.scale_fmt``: tensor ``[1, 1]``, channel ``[N, 1]``,
                  group ``[N, K/g]``, block ``[N/bn, K/g]``. Column groups run over
                  storage order.
``zeros``         float32, same shape as ``scales``, or None. Integer zero points
                  hold integers in the element range.
``global_scale``  float32 ``[(E,) 1]`` (tensor) or ``[(E,) N]`` (channel), or None.
``perm``          int64 ``[(E,) K]`` or None: storage column ``j`` holds original
                  input column ``perm[j]`` (GPTQ act order: ``perm = argsort(g_idx)``).
``bias``          float32 ``[(E,) N]`` or None.

Dequantization
    ``w[n, j] = (decode(codes[n, j]) - offset - zeros[cell]) * scales[cell] * global``
    with ``offset = scheme.implicit_offset`` (8 for GPTQ-style ``uint4`` without
    zero points, else 0); then ``W[:, perm[j]] = w[:, j]``.

Quantization (:func:`quantize`) is round-to-nearest:
    * scales are rounded *up* to the scale format, so no element saturates;
    * symmetric integers use ``absmax / (2**(b-1) - 1)``;
    * zero-point integers use min-max over ``[min(w, 0), max(w, 0)]``;
    * float elements use ``absmax / fmt.max``;
    * a second-level scale is ``absmax / (fmt.max * scale_fmt.max)`` for narrow
      scale formats (NVFP4: ``absmax / (6 * 448)``), ``absmax / fmt.max`` for wide
      ones (e8m0, fp16, bf16, fp32).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

import torch

from .dtypes import IntFormat, NumberFormat, get_format
from .errors import FormatError, ShapeError
from .scheme import ActivationScheme, WeightScheme

__all__ = [
    "QuantizedWeight",
    "quantize",
    "dequantize",
    "quantize_activation",
    "dequantize_activation",
    "gemm",
    "moe_gemm",
    "moe_activation",
    "moe_mlp",
    "MOE_ACTIVATIONS",
    "scale_shape",
    "expand_scales",
    "encode_ceil",
]


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def scale_shape(scheme: WeightScheme, n: int, k: int) -> tuple[int, int]:
    """Shape of the scale (and zero-point) tensor of one ``n x k`` weight."""
    if scheme.scale == "tensor":
        return (1, 1)
    if scheme.scale == "channel":
        return (n, 1)
    if scheme.scale == "group":
        return (n, scheme.num_groups(k))
    return (n // scheme.block_n, k // scheme.group_size)


def expand_scales(s: torch.Tensor, scheme: WeightScheme, n: int, k: int) -> torch.Tensor:
    """Broadcast a scale/zero tensor ``[..., SN, SK]`` to ``[..., n, k]``."""
    if scheme.scale == "tensor":
        return s.expand(*s.shape[:-2], n, k)
    if scheme.scale == "channel":
        return s.expand(*s.shape[:-2], n, k)
    out = s.repeat_interleave(scheme.group_size, dim=-1)
    if scheme.group_offset is not None:  # (a K-shard: its columns start group_offset into the first group)
        out = out[..., scheme.group_offset:scheme.group_offset + k]
    if scheme.scale == "block":
        out = out.repeat_interleave(scheme.block_n, dim=-2)
    return out


def _reduce_cells(w: torch.Tensor, scheme: WeightScheme, op: str) -> torch.Tensor:
    """Reduce ``w [..., n, k]`` over each scale cell -> ``[..., SN, SK]``."""
    *lead, n, k = w.shape
    if scheme.scale == "tensor":
        v = w.reshape(*lead, 1, 1, n * k)
    elif scheme.scale == "channel":
        v = w.reshape(*lead, n, 1, k)
    elif scheme.scale == "group":
        if scheme.group_offset is not None:  # (a K-shard: partial groups padded with what cannot win)
            pad = {"absmax": 0.0, "min": float("inf"), "max": float("-inf")}[op]
            off = scheme.group_offset
            tail = scheme.num_groups(k) * scheme.group_size - off - k
            w = torch.nn.functional.pad(w, (off, tail), value=pad)
            k = w.shape[-1]
        v = w.reshape(*lead, n, k // scheme.group_size, scheme.group_size)
    else:
        bn, g = scheme.block_n, scheme.group_size
        v = w.reshape(*lead, n // bn, bn, k // g, g).transpose(-3, -2)
        v = v.reshape(*lead, n // bn, k // g, bn * g)
    if op == "absmax":
        return v.abs().amax(dim=-1)
    if op == "min":
        return v.amin(dim=-1)
    return v.amax(dim=-1)


def encode_ceil(fmt: NumberFormat, x: torch.Tensor) -> torch.Tensor:
    """Smallest value of ``fmt`` that is >= ``x`` (x > 0), as float32.

    Used for scales, so that dividing by the stored scale never pushes an
    element beyond the element format's range. Saturates at ``fmt.max_value``.
    """
    x = x.to(torch.float32)
    codes = fmt.encode(x)
    v = fmt.decode(codes)
    low = v < x
    if bool(low.any()):
        bumped = fmt.decode((codes.to(torch.int64) + 1).to(codes.dtype))
        ok = low & torch.isfinite(bumped)
        v = torch.where(ok, bumped, v)
        v = torch.where(low & ~ok, torch.full_like(v, fmt.max_value), v)
    return v


def _element_max(scheme: WeightScheme) -> float:
    f = scheme.format
    if isinstance(f, IntFormat):
        if scheme.zero_point != "none":
            return float(f.max_value)
        bits = f.bits
        if bits == 1:
            raise FormatError(f"WeightScheme.fmt: symmetric {f.name} cannot represent a sign; "
                              "use uint1 with zero_point='int'")
        return float((1 << (bits - 1)) - 1)
    return float(f.max_value)


def _perm_index(perm: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Gather/scatter index for a K permutation ``[K]`` or ``[E, K]`` over ``w [(E,) N, K]``."""
    idx = perm[..., None, :] if perm.dim() == w.dim() - 1 else perm
    return idx.expand_as(w)


def _div(t: torch.Tensor, c: float) -> torch.Tensor:
    """``t / c`` correctly rounded on every device (torch's CUDA kernels turn a
    division by a Python scalar into a multiplication by its rounded reciprocal)."""
    return t / torch.full_like(t, c)


def _tiny_scale(fmt: NumberFormat) -> float:
    return fmt.min_positive if fmt.is_float else 1.0


# ---------------------------------------------------------------------------
# QuantizedWeight
# ---------------------------------------------------------------------------


@dataclass
class QuantizedWeight:
    """A scheme plus its tensors in the canonical layout (module docstring)."""

    scheme: WeightScheme
    codes: torch.Tensor
    scales: torch.Tensor
    zeros: Optional[torch.Tensor] = None
    global_scale: Optional[torch.Tensor] = None
    perm: Optional[torch.Tensor] = None
    bias: Optional[torch.Tensor] = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.validate()

    # -- shape facts -----------------------------------------------------------
    @property
    def is_moe(self) -> bool:
        return self.codes.dim() == 3

    @property
    def num_experts(self) -> int:
        return self.codes.shape[0] if self.is_moe else 0

    @property
    def n(self) -> int:
        return self.codes.shape[-2]

    @property
    def k(self) -> int:
        return self.codes.shape[-1]

    @property
    def device(self) -> torch.device:
        return self.codes.device

    def _lead(self) -> tuple[int, ...]:
        return tuple(self.codes.shape[:-2])

    def validate(self) -> None:
        """Check every tensor against the scheme; raise FormatError naming the tensor."""
        s = self.scheme
        c = self.codes
        if not isinstance(s, WeightScheme):
            raise FormatError(f"QuantizedWeight.scheme: expected a WeightScheme, got {type(s).__name__}")
        if c.dtype != torch.uint8 or c.dim() not in (2, 3):
            raise FormatError(f"QuantizedWeight.codes: expected uint8 [N, K] or [E, N, K], "
                              f"got {c.dtype} {list(c.shape)}")
        if s.bits <= 8 and c.numel() and int(c.max()) >= (1 << s.bits):
            raise FormatError(f"QuantizedWeight.codes: expected codes of {s.bits} bits (< {1 << s.bits}) "
                              f"for {s.fmt}, found {int(c.max())}")
        n, k = self.n, self.k
        try:
            s.validate_shape(n, k)
        except ShapeError as e:
            raise FormatError(f"QuantizedWeight.codes: {e}") from None
        lead = self._lead()
        want = lead + scale_shape(s, n, k)
        self._check("scales", self.scales, want)
        if s.zero_point == "none":
            if self.zeros is not None:
                raise FormatError("QuantizedWeight.zeros: expected None for zero_point='none', got a tensor")
        else:
            self._check("zeros", self.zeros, want)
        if s.global_scale == "none":
            if self.global_scale is not None:
                raise FormatError("QuantizedWeight.global_scale: expected None for global_scale='none', "
                                  "got a tensor")
        else:
            self._check("global_scale", self.global_scale, lead + ((1,) if s.global_scale == "tensor" else (n,)))
        if s.act_order:
            if self.perm is None:
                raise FormatError("QuantizedWeight.perm: expected an int64 [K] permutation for act_order=True, "
                                  "got None")
            if self.perm.dtype != torch.int64 or tuple(self.perm.shape) != lead + (k,):
                raise FormatError(f"QuantizedWeight.perm: expected int64 {list(lead + (k,))}, "
                                  f"got {self.perm.dtype} {list(self.perm.shape)}")
            srt = torch.sort(self.perm, dim=-1).values
            if not torch.equal(srt, torch.arange(k, device=srt.device).expand_as(srt)):
                raise FormatError("QuantizedWeight.perm: expected a permutation of 0..K-1")
        elif self.perm is not None:
            raise FormatError("QuantizedWeight.perm: expected None when scheme.act_order is False")
        if self.bias is not None:
            self._check("bias", self.bias, lead + (n,))

    def _check(self, name, t, shape):
        if t is None:
            raise FormatError(f"QuantizedWeight.{name}: expected float32 {list(shape)}, got None")
        if t.dtype != torch.float32 or tuple(t.shape) != tuple(shape):
            raise FormatError(f"QuantizedWeight.{name}: expected float32 {list(shape)}, "
                              f"got {t.dtype} {list(t.shape)}")
        if t.device != self.codes.device:
            raise FormatError(f"QuantizedWeight.{name}: expected device {self.codes.device}, got {t.device}")

    def to(self, device) -> "QuantizedWeight":
        mv = lambda t: None if t is None else t.to(device)  # noqa: E731
        return replace(self, codes=self.codes.to(device), scales=self.scales.to(device), zeros=mv(self.zeros),
                       global_scale=mv(self.global_scale), perm=mv(self.perm), bias=mv(self.bias))

    def expert(self, e: int) -> "QuantizedWeight":
        """One expert of an MoE weight as a dense QuantizedWeight."""
        if not self.is_moe:
            raise ShapeError("QuantizedWeight.expert: this weight has no expert dimension")
        pick = lambda t: None if t is None else t[e]  # noqa: E731
        return replace(self, codes=self.codes[e], scales=self.scales[e], zeros=pick(self.zeros),
                       global_scale=pick(self.global_scale), perm=pick(self.perm), bias=pick(self.bias))

    def k_shard(self, start: int, size: int) -> "QuantizedWeight":
        """Columns ``[start, start + size)`` of this dense weight as a weight of their own: the K-shard a
        tensor-parallel rank holds of a row-parallel layer. Group scales keep the groups the shard touches,
        with ``scheme.group_offset`` where it starts in the first (None again when it starts and ends on
        group boundaries of a whole-group weight); channel and tensor scales and the global scale travel
        unchanged. The bias goes with the shard that starts at column 0 only, so that the ranks' outputs
        sum to the layer's (row-parallel engines add it once, on rank 0). Block scales shard on whole
        blocks only, act-order weights not at all (their shards follow ``g_idx``)."""
        if self.is_moe:
            raise ShapeError("QuantizedWeight.k_shard: an MoE weight; shard its experts one by one")
        k, s = self.k, self.scheme
        if not (isinstance(start, int) and isinstance(size, int) and 0 <= start and 0 < size and start + size <= k):
            raise ShapeError(f"QuantizedWeight.k_shard: expected 0 <= start and 0 < size with start + size <= "
                             f"K = {k}, got start={start!r}, size={size!r}")
        if s.act_order:
            raise FormatError("QuantizedWeight.k_shard: act-order weights shard by g_idx, not by columns")
        cols = slice(start, start + size)
        scheme, sl = s, slice(None)
        if s.scale == "block":
            if start % s.group_size or size % s.group_size:
                raise ShapeError(f"QuantizedWeight.k_shard: block scales of {s.block_n}x{s.group_size} shard on "
                                 f"whole blocks; columns [{start}, {start + size}) are not")
            sl = slice(start // s.group_size, (start + size) // s.group_size)
        elif s.scale == "group":
            g, p = s.group_size, (s.group_offset or 0) + start
            sl = slice(p // g, -(-(p + size) // g))
            whole = s.group_offset is None and p % g == 0 and size % g == 0
            scheme = s.replace(group_offset=None if whole else p % g)
        pick = lambda t: None if t is None else t[..., sl].contiguous()  # noqa: E731
        keep = s.scale in ("group", "block")
        return replace(self, scheme=scheme, codes=self.codes[..., cols].contiguous(),
                       scales=pick(self.scales) if keep else self.scales,
                       zeros=pick(self.zeros) if keep else self.zeros, bias=self.bias if start == 0 else None,
                       meta={**self.meta, "k_shard": [start, size]})

    @staticmethod
    def stack(experts: list["QuantizedWeight"]) -> "QuantizedWeight":
        """Stack dense weights of one scheme into one MoE weight."""
        if not experts:
            raise ShapeError("QuantizedWeight.stack: expected at least one expert")
        s0 = experts[0].scheme
        for i, q in enumerate(experts):
            if q.scheme != s0:
                raise FormatError(f"QuantizedWeight.stack: expert {i} has scheme {q.scheme.describe()}, "
                                  f"expected {s0.describe()}")
            if q.is_moe or (q.n, q.k) != (experts[0].n, experts[0].k):
                raise ShapeError(f"QuantizedWeight.stack: expert {i} has codes {list(q.codes.shape)}, "
                                 f"expected {[experts[0].n, experts[0].k]}")

        def st(name):
            ts = [getattr(q, name) for q in experts]
            if all(t is None for t in ts):
                return None
            if any(t is None for t in ts):
                raise FormatError(f"QuantizedWeight.stack: tensor {name} is missing on some experts")
            return torch.stack(ts)

        return QuantizedWeight(s0, st("codes"), st("scales"), st("zeros"), st("global_scale"), st("perm"),
                               st("bias"), dict(experts[0].meta))

    def nbytes(self) -> float:
        """Bytes of the packed representation (codes at their bit width, scales in their format)."""
        e = max(self.num_experts, 1)
        return e * self.scheme.bytes_per_weight(self.n, self.k)


# ---------------------------------------------------------------------------
# quantize / dequantize
# ---------------------------------------------------------------------------


def dequantize(qw: QuantizedWeight) -> torch.Tensor:
    """Float32 weight ``[(E,) N, K]`` in original column order."""
    s = qw.scheme
    n, k = qw.n, qw.k
    v = s.format.decode(qw.codes)
    if s.implicit_offset:
        v = v - s.implicit_offset
    if qw.zeros is not None:
        v = v - expand_scales(qw.zeros, s, n, k)
    w = v * expand_scales(qw.scales, s, n, k)
    if qw.global_scale is not None:
        g = qw.global_scale  # [(E,) 1] or [(E,) N]: one value per row either way
        w = w * g[..., None]
    if qw.perm is not None:
        w = torch.empty_like(w).scatter_(-1, _perm_index(qw.perm.to(w.device), w), w)
    return w


def quantize(weight: torch.Tensor, scheme: WeightScheme, perm: torch.Tensor | None = None,
             bias: torch.Tensor | None = None) -> QuantizedWeight:
    """Round-to-nearest quantization of a float weight ``[(E,) N, K]``.

    ``perm`` (int64 ``[K]``) is required when ``scheme.act_order``: storage
    column ``j`` will hold original column ``perm[j]``.
    """
    if weight.dim() not in (2, 3):
        raise ShapeError(f"quantize: weight must be [N, K] or [E, N, K], got {list(weight.shape)}")
    w = weight.detach().to(torch.float32)
    if torch.isnan(w).any():
        raise FormatError("quantize: weight contains NaN")
    n, k = w.shape[-2:]
    scheme.validate_shape(n, k)
    if scheme.act_order:
        if perm is None:
            raise FormatError("quantize: scheme.act_order=True needs perm (int64 [K]), got None")
        perm = perm.to(device=w.device, dtype=torch.int64)
        if perm.dim() == 1 and w.dim() == 3:
            perm = perm.expand(w.shape[0], k).contiguous()
        w = torch.gather(w, -1, _perm_index(perm, w))
    elif perm is not None:
        raise FormatError("quantize: perm given but scheme.act_order is False")

    fmt = scheme.format
    sfmt = scheme.scale_format
    if fmt.bits > 8:
        raise FormatError(f"quantize: {fmt.name} weights are not quantized; use them directly")
    qmax = _element_max(scheme)

    glob = None
    if scheme.global_scale != "none":
        if scheme.global_scale == "tensor":
            amax = w.abs().amax(dim=(-2, -1)).reshape(*w.shape[:-2], 1)
        else:
            amax = w.abs().amax(dim=-1)
        # narrow scale formats (e4m3: 448) leave the range to the global scale (NVFP4:
        # absmax / (6 * 448)); wide ones (e8m0, 16/32-bit) keep local scales near absmax / qmax
        narrow = sfmt.bits <= 8 and sfmt.max_value < 2.0 ** 16
        denom = qmax * (sfmt.max_value if narrow else 1.0)
        glob = torch.where(amax > 0, _div(amax, denom), torch.ones_like(amax)).to(torch.float32)
    g_exp = None
    if glob is not None:
        g_exp = glob[..., None]  # [(E,) 1, 1] or [(E,) N, 1]

    zeros = None
    if scheme.zero_point == "none":
        amax = _reduce_cells(w, scheme, "absmax")
        raw = _div(amax, qmax)
    else:
        lo = _reduce_cells(w, scheme, "min").clamp(max=0)
        hi = _reduce_cells(w, scheme, "max").clamp(min=0)
        raw = _div(hi - lo, qmax)
    if g_exp is not None:
        gcell = g_exp if scheme.global_scale == "tensor" else _cells_of_rows(g_exp, scheme)
        raw = raw / gcell
    raw = torch.where(raw > 0, raw, torch.ones_like(raw))
    scales = encode_ceil(sfmt, raw.clamp(min=_tiny_scale(sfmt)))

    eff = expand_scales(scales, scheme, n, k)
    if g_exp is not None:
        eff = eff * g_exp
    if scheme.zero_point == "none":
        x = w / eff
        if isinstance(fmt, IntFormat):
            codes = fmt.encode(torch.round(x) + scheme.implicit_offset) if scheme.implicit_offset \
                else fmt.encode(x)
        else:
            codes = fmt.encode(x)
    else:
        s_cell = scales * (gcell if g_exp is not None else 1.0)
        zf = -lo / s_cell
        if scheme.zero_point == "int":
            zeros = torch.round(zf).clamp(0, fmt.max_value)
        else:
            zfmt = sfmt if sfmt.name in ("fp16", "bf16", "fp32") else get_format("fp16")
            zeros = zfmt.round(zf)
        x = w / eff + expand_scales(zeros, scheme, n, k)
        codes = fmt.encode(x)
    return QuantizedWeight(scheme, codes, scales.to(torch.float32), zeros, glob, perm,
                           None if bias is None else bias.detach().to(torch.float32).to(w.device))


def _cells_of_rows(g_rows: torch.Tensor, scheme: WeightScheme) -> torch.Tensor:
    """Per-row global scale ``[..., N, 1]`` -> per-cell ``[..., SN, 1]``."""
    if scheme.scale == "tensor":
        raise FormatError("WeightScheme: a per-channel global scale needs channel, group or block scales")
    if scheme.scale == "block":
        bn = scheme.block_n
        g = g_rows.reshape(*g_rows.shape[:-2], -1, bn, 1)
        if not torch.all(g == g[..., :1, :]):
            raise FormatError("WeightScheme: a per-channel global scale must be uniform within a scale block")
        return g[..., 0, :]
    return g_rows


# ---------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------


def quantize_activation(x: torch.Tensor, scheme: ActivationScheme, scale: torch.Tensor | None = None
                        ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Quantize activations ``[..., K]`` as a kernel would.

    Returns ``(q, scales)``: ``q`` float32 holding exact values of
    ``scheme.fmt``; ``scales`` float32 ``[..., 1]`` (token), ``[..., K/g]``
    (group), ``[1]`` (static) or None (fp16/bf16).

    Dynamic scales are ``absmax / fmt.max`` computed in fp32 (an all-zero row
    gets scale 1), rounded up to ``scheme.scale_fmt`` when that is not fp32;
    ``q = encode(x / scale)`` with round-to-nearest-even and saturation.
    """
    fmt = scheme.format
    xf = x.to(torch.float32)
    if scheme.quant == "none":
        return fmt.round(xf), None
    fmax = float(fmt.max_value)
    if scheme.quant == "static_tensor":
        if scale is None:
            raise FormatError("quantize_activation: static_tensor quantization needs a scale, got None")
        s = scale.to(device=xf.device, dtype=torch.float32).reshape(1)
        return fmt.decode(fmt.encode(xf / s)), s
    k = xf.shape[-1]
    if scheme.quant == "dynamic_token":
        amax = xf.abs().amax(dim=-1, keepdim=True)
        s = _act_scale(amax, fmax, scheme)
        return fmt.decode(fmt.encode(xf / s)), s
    g = scheme.group_size
    scheme.validate_shape(k)
    xg = xf.reshape(*xf.shape[:-1], k // g, g)
    amax = xg.abs().amax(dim=-1, keepdim=True)
    s = _act_scale(amax, fmax, scheme)
    q = fmt.decode(fmt.encode(xg / s)).reshape(xf.shape)
    return q, s[..., 0]


def _act_scale(amax: torch.Tensor, fmax: float, scheme: ActivationScheme) -> torch.Tensor:
    s = _div(amax, fmax)
    s = torch.where(amax > 0, s, torch.ones_like(s))
    if scheme.scale_fmt != "fp32":
        s = encode_ceil(scheme.scale_format, s)
    return s


def dequantize_activation(q: torch.Tensor, scales: torch.Tensor | None, scheme: ActivationScheme) -> torch.Tensor:
    if scales is None:
        return q
    if scheme.quant == "dynamic_group":
        return q * scales.repeat_interleave(scheme.group_size, dim=-1)
    return q * scales


# ---------------------------------------------------------------------------
# reference GEMMs
# ---------------------------------------------------------------------------


def _effective_x(x, act, act_scale):
    if act is None:
        return x.to(torch.float32)
    q, s = quantize_activation(x, act, act_scale)
    return dequantize_activation(q, s, act)


def gemm(x: torch.Tensor, qw: QuantizedWeight, activation: ActivationScheme | None = None,
         bias: torch.Tensor | None = None, act_scale: torch.Tensor | None = None) -> torch.Tensor:
    """``y = quant(x) @ dequantize(qw).T (+ bias)`` in float64, returned as float32 ``[M, N]``.

    ``activation`` (default: use ``x`` as given) says how the kernel sees x:
    fp16/bf16 rounding, or quantization to fp8/int8/int4/fp4 with its scales.
    ``bias`` defaults to ``qw.bias``.
    """
    if qw.is_moe:
        raise ShapeError("reference.gemm: got an MoE weight; use moe_gemm")
    if x.shape[-1] != qw.k:
        raise ShapeError(f"reference.gemm: x has K={x.shape[-1]}, weight has K={qw.k}")
    xe = _effective_x(x, activation, act_scale).to(torch.float64)
    w = dequantize(qw).to(device=xe.device, dtype=torch.float64)
    y = xe @ w.T
    b = bias if bias is not None else qw.bias
    if b is not None:
        y = y + b.to(device=y.device, dtype=torch.float64)
    return y.to(torch.float32)


def check_moe_call(op: str, x, k: int, topk_ids, topk_weights, dtypes=(torch.float16, torch.bfloat16)) -> None:
    """The shapes and dtypes of an MoE call (``op``: its name in the errors): ``topk_ids`` int ``[M, topk]``,
    ``x`` ``[M, K]`` or ``[M, topk, K]`` of one of ``dtypes`` (None: any floating dtype), ``topk_weights`` a float
    ``[M, topk]`` or None. Raises ShapeError naming the tensor, what was expected and what came."""
    if not isinstance(topk_ids, torch.Tensor) or topk_ids.dim() != 2 or topk_ids.dtype not in (
            torch.int32, torch.int64):
        raise ShapeError(f"{op}: topk_ids must be an int32 or int64 tensor [M, topk], got "
                         f"{getattr(topk_ids, 'dtype', type(topk_ids).__name__)} "
                         f"{list(getattr(topk_ids, 'shape', []))}")
    m, topk = topk_ids.shape
    if not isinstance(x, torch.Tensor) or (x.dtype not in dtypes if dtypes else not x.is_floating_point()):
        want = " or ".join(str(d).replace("torch.", "") for d in dtypes) if dtypes else "floating-point"
        raise ShapeError(f"{op}: x must be a {want} tensor, got {getattr(x, 'dtype', type(x).__name__)}")
    if tuple(x.shape) not in ((m, k), (m, topk, k)):
        raise ShapeError(f"{op}: x must be [M, K] = [{m}, {k}] or [M, topk, K] = [{m}, {topk}, {k}] "
                         f"(M, topk from topk_ids), got {list(x.shape)}")
    if topk_weights is not None and (not isinstance(topk_weights, torch.Tensor)
                                     or topk_weights.shape != topk_ids.shape
                                     or not topk_weights.is_floating_point()):
        raise ShapeError(f"{op}: topk_weights must be a float tensor [M, topk] = {list(topk_ids.shape)}, got "
                         f"{getattr(topk_weights, 'dtype', type(topk_weights).__name__)} "
                         f"{list(getattr(topk_weights, 'shape', []))}")


def moe_gemm(x: torch.Tensor, qw: QuantizedWeight, topk_ids: torch.Tensor,
             topk_weights: torch.Tensor | None = None, activation: ActivationScheme | None = None,
             reduce: bool = False, act_scale: torch.Tensor | None = None) -> torch.Tensor:
    """Reference MoE GEMM.

    ``x`` is ``[M, K]`` (every chosen expert sees the token's row, as in a
    gate/up projection) or ``[M, topk, K]`` (one row per (token, expert), as in
    a down projection). ``topk_ids`` is int ``[M, topk]``; an id below zero
    names an expert held elsewhere (expert parallelism), whose row is zero.
    Returns ``[M, topk, N]``; rows are multiplied by ``topk_weights`` when
    given and summed over ``topk`` to ``[M, N]`` when ``reduce``.
    """
    if not qw.is_moe:
        raise ShapeError("reference.moe_gemm: expected an MoE weight [E, N, K]")
    check_moe_call("reference.moe_gemm", x, qw.k, topk_ids, topk_weights, dtypes=None)
    m, topk = topk_ids.shape
    xs = x[:, None, :].expand(m, topk, x.shape[-1]) if x.dim() == 2 else x
    if topk_ids.numel() and int(topk_ids.max()) >= qw.num_experts:
        raise ShapeError(f"reference.moe_gemm: topk_ids must be below {qw.num_experts} (negative: an expert held "
                         f"elsewhere), found {int(topk_ids.max())}")
    xe = _effective_x(xs, activation, act_scale).to(torch.float64)
    w = dequantize(qw).to(device=xe.device, dtype=torch.float64)  # [E, N, K]
    ids = topk_ids.to(device=xe.device, dtype=torch.int64)
    # expert by expert (the pairs' weights gathered whole, [M, topk, N, K], would not fit for real layers)
    y = torch.zeros(m, topk, qw.n, dtype=torch.float64, device=xe.device)
    bias = qw.bias.to(device=y.device, dtype=torch.float64) if qw.bias is not None else None
    for e in torch.unique(ids[ids >= 0]).tolist():
        sel = ids == e
        ye = xe[sel] @ w[e].T
        y[sel] = ye + bias[e] if bias is not None else ye
    if topk_weights is not None:
        y = y * topk_weights.to(device=y.device, dtype=torch.float64)[..., None]
    if reduce:
        y = y.sum(dim=1)
    return y.to(torch.float32)


#: Gated activations between an MoE layer's gate/up and down projections: ``silu`` (SwiGLU: silu(gate) x up),
#: ``gelu`` (tanh-approximated GELU(gate) x up) and ``swigluoai`` (gpt-oss: the gate clamped above at
#: ``limit``, the up both ways, ``(up + 1) x gate x sigmoid(alpha x gate)``).
MOE_ACTIVATIONS = ("silu", "gelu", "swigluoai")


def moe_activation(y: torch.Tensor, activation: str = "silu", interleaved: bool = False, alpha: float = 1.702,
                   limit: float = 7.0) -> torch.Tensor:
    """The gated activation of gate/up rows ``y`` ``[..., 2I]`` -> ``[..., I]``, in float64 then float32: the
    gate is the first half (``interleaved``: the even columns, as gpt-oss stores them), the up the other."""
    if activation not in MOE_ACTIVATIONS:
        raise ShapeError(f"moe_activation: activation must be one of {', '.join(MOE_ACTIVATIONS)}, got {activation!r}")
    if y.shape[-1] % 2:
        raise ShapeError(f"moe_activation: the gate/up rows need an even width [..., 2I], got {list(y.shape)}")
    y = y.to(torch.float64)
    half = y.shape[-1] // 2
    gate, up = (y[..., 0::2], y[..., 1::2]) if interleaved else (y[..., :half], y[..., half:])
    if activation == "silu":
        out = gate * torch.sigmoid(gate) * up
    elif activation == "gelu":
        out = torch.nn.functional.gelu(gate, approximate="tanh") * up
    else:
        gate = gate.clamp(max=limit)
        up = up.clamp(min=-limit, max=limit)
        out = (up + 1) * gate * torch.sigmoid(alpha * gate)
    return out.to(torch.float32)


def moe_mlp(x: torch.Tensor, w13: QuantizedWeight, w2: QuantizedWeight, topk_ids: torch.Tensor,
            topk_weights: torch.Tensor | None = None, activation: str = "silu", interleaved: bool = False,
            alpha: float = 1.702, limit: float = 7.0, round_to: torch.dtype | None = None) -> torch.Tensor:
    """Reference MoE MLP: ``sum_j w_j down_j(act(gate_up_j(x)))`` over each token's chosen experts ``j`` ->
    ``[M, H]`` float32. ``round_to`` (fp16/bf16) rounds the gate/up outputs and the activation to that type
    between the steps, as the kernels store them."""
    y1 = moe_gemm(x, w13, topk_ids)
    if round_to is not None:
        y1 = y1.to(round_to).float()
    a = moe_activation(y1, activation, interleaved, alpha, limit)
    if round_to is not None:
        a = a.to(round_to).float()
    return moe_gemm(a, w2, topk_ids, topk_weights, reduce=True)

