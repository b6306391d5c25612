"""What a serving engine asks of a kernel library, in the engine's own terms.

An engine (vLLM- or SGLang-style) describes a linear layer by the types it already
has: a weight *scalar type* name (``uint4b8``, ``uint4`` with zero points,
``float8_e4m3fn``, ``float4_e2m1f``, ...), the activation and output dtypes, the
group size (-1: per output channel), whether there are zero points and a GPTQ
``g_idx``, and the shape of this rank's partition after tensor parallelism. It
then wants three things:

1. a pure capability predicate with a reason -- :func:`can_implement`, which
   plans the layer (no GPU needed when ``device`` names one) and returns
   ``(True, None)`` or ``(False, "why")``, never raises for an unsupported layer;
2. a one-shot conversion of the checkpoint's tensors into the kernel's layout --
   :meth:`LinearKernel.process_weights` (any format of :mod:`humming.formats`,
   or a :class:`~humming.reference.QuantizedWeight`), checked against the config;
3. a call that is CUDA-graph- and ``torch.compile``-safe with nothing compiled in
   the hot path -- :meth:`LinearKernel.apply` (``torch.ops.humming.gemm`` under
   ``torch.compile``) after :func:`precompile` over the engine's M buckets.

Scalar type names follow the ml_dtypes convention engines use:
``[u]int<bits>[b<bias>]`` for integers (``uint4b8``: codes 0..15 meaning -8..7)
and ``float<bits>_e<E>m<M>[flags]`` for floats (``f``: finite values only,
``fn``: finite with a NaN code, none: IEEE-like with infinities).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Mapping, Optional

import torch

from .dtypes import FloatFormat, get_format
from .errors import FormatError, HummingError, ShapeError, UnsupportedError
from .scheme import ActivationScheme, LayerSpec, WeightScheme

__all__ = ["LinearConfig", "LinearKernel", "MoEKernel", "can_implement", "convert_weight", "precompile", "weight_format",
           "scalar_type_name"]

_INT_RE = re.compile(r"^(u?)int(\d+)(?:b(\d+))?$")
_FLOAT_RE = re.compile(r"^float(\d+)_e(\d+)m(\d+)([a-z]*)$")
#: the flags of a float scalar type name for each of humming's NaN conventions (dtypes.FloatFormat.nan)
_NAN_FLAGS = {"ieee": "", "all_ones": "fn", "none": "f"}

def weight_format(scalar_type: str, zero_points: bool | str = False) -> tuple[str, str]:
    """``(WeightScheme.fmt, WeightScheme.zero_point)`` for an engine's weight scalar type name.

    ``uint<b>b<2^(b-1)>`` (GPTQ's symmetric codes) is humming's ``uint<b>`` without zero
    points (codes carry the implicit offset); ``uint<b>`` takes zero points (``True`` or
    ``"int"``: integers, ``"float"``: real numbers); ``int<b>`` is symmetric signed.
    """
    if not isinstance(scalar_type, str):
        raise FormatError(f"weight_type: expected a scalar type name such as 'uint4b8' or 'float8_e4m3fn', "
                          f"got {type(scalar_type).__name__} {scalar_type!r}")
    zp = {False: "none", None: "none", "none": "none", True: "int", "int": "int", "float": "float"}.get(zero_points)
    if zp is None:
        raise FormatError(f"zero_points: expected a bool, 'int' or 'float', got {zero_points!r}")
    name = scalar_type.strip()
    m = _INT_RE.match(name)
    if m:
        unsigned, bits, bias = m.group(1) == "u", int(m.group(2)), m.group(3)
        if not 1 <= bits <= 8:
            raise FormatError(f"weight_type {name}: expected 1-8 bits, got {bits}")
        if not unsigned:
            if bias is not None:
                raise FormatError(f"weight_type {name}: a signed integer type carries no bias")
            if zp != "none":
                raise FormatError(f"weight_type {name}: signed codes are symmetric; zero points need unsigned "
                                  f"codes (uint{bits})")
            return f"int{bits}", "none"
        if bias is not None:
            if int(bias) != 1 << (bits - 1):
                raise FormatError(f"weight_type {name}: expected the bias {1 << (bits - 1)} of uint{bits}'s "
                                  f"symmetric codes (uint{bits}b{1 << (bits - 1)}), got {bias}")
            if zp != "none":
                raise FormatError(f"weight_type {name}: biased codes take no zero points; zero points come with "
                                  f"uint{bits}")
            return f"uint{bits}", "none"
        if zp == "none":
            raise FormatError(f"weight_type {name}: unsigned codes without a bias need zero points (a checkpoint "
                              f"without them is uint{bits}b{1 << (bits - 1)}, or zero points of 0)")
        return f"uint{bits}", zp
    m = _FLOAT_RE.match(name)
    if m:
        bits, e, mant, flags = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)
        if zp != "none":
            raise FormatError(f"weight_type {name}: float codes take no zero points")
        if bits != 1 + e + mant:
            raise FormatError(f"weight_type {name}: {bits} bits is not 1 sign + {e} exponent + {mant} mantissa bits")
        try:
            fmt = get_format(f"e{e}m{mant}")
        except (KeyError, ValueError):
            fmt = None
        if not isinstance(fmt, FloatFormat) or not fmt.signed:
            raise FormatError(f"weight_type {name}: humming has no signed float format e{e}m{mant}")
        want = _NAN_FLAGS.get(fmt.nan)
        if want != flags:
            raise FormatError(f"weight_type {name}: humming's {fmt.name} is {scalar_type_name(fmt.name)} "
                              f"(flags {want!r}), not flags {flags!r}")
        return fmt.name, "none"
    raise FormatError(f"weight_type: expected '[u]int<bits>[b<bias>]' or 'float<bits>_e<E>m<M>[flags]', "
                      f"got {name!r}")


def scalar_type_name(fmt: str, zero_point: str = "none") -> str:
    """The engine's scalar type name of a humming weight format (the inverse of :func:`weight_format`)."""
    f = get_format(fmt)
    if isinstance(f, FloatFormat):
        return f"float{f.bits}_e{f.exp}m{f.man}{_NAN_FLAGS.get(f.nan, '')}"
    if f.signed:
        return f"int{f.bits}"
    return f"uint{f.bits}" if zero_point != "none" else f"uint{f.bits}b{1 << (f.bits - 1)}"


def _dtype_name(what: str, v, allowed) -> str:
    """humming's name of a dtype given as a torch dtype, a humming name or an engine's scalar type name."""
    try:
        name = get_format(v).name  # (torch dtypes and humming's names and aliases)
    except (KeyError, ValueError, TypeError):
        name = None
    if name is None and isinstance(v, str) and _FLOAT_RE.match(v.strip()):  # (a scalar type name: float4_e2m1f)
        try:
            name = weight_format(v)[0]
        except FormatError:
            pass
    if name is None:
        raise FormatError(f"{what}: expected one of {', '.join(allowed)}, got {v!r}")
    if name not in allowed:
        raise FormatError(f"{what}: expected one of {', '.join(allowed)}, got {name}")
    return name


@dataclass(frozen=True)
class LinearConfig:
    """One linear layer as an engine describes it (the fields of vLLM's ``MPLinearLayerConfig``, plus the
    scale and activation-quantization details that vLLM keeps elsewhere).

    ``partition_weight_shape`` is ``(K, N)`` of this rank's shard, as the engine stores it ``[in, out]``;
    ``full_weight_shape`` is informative. ``group_size`` -1 means one scale per output channel.
    ``k_offset``: for a row-parallel rank, its first column in the full layer (rank x K). Where the
    group size does not divide the shards (Qwen2-72B's 29568 columns in groups of 128 over eight ranks:
    3696 each), the scale groups straddle them; with ``k_offset`` the shard is planned as one
    (``WeightScheme.group_offset``) and :func:`convert_weight` takes the full layer's tensors.
    ``scale_type`` defaults to the output dtype; ``global_scale`` adds NVFP4's second-level fp32 scale.
    Quantized activations (``int8``, ``float8_e4m3fn``, ``float4_e2m1f``, ...) take ``act_quant``
    (``dynamic_token``, ``static_tensor`` or ``dynamic_group`` with ``act_group_size``), ``act_scale_type``
    (fp32; e4m3 for NVFP4's, e8m0 for MX) and need ``out_type``. ``num_experts`` > 0 makes it the experts of an
    MoE layer (each expert's shard ``partition_weight_shape``), run by :class:`MoEKernel`.
    """

    weight_type: str
    partition_weight_shape: tuple
    act_type: object = torch.float16
    group_size: int = -1
    zero_points: bool | str = False
    has_g_idx: bool = False
    out_type: object = None
    scale_type: object = None
    global_scale: bool = False
    act_quant: str = "dynamic_token"
    act_group_size: Optional[int] = None
    act_scale_type: object = "fp32"
    bias: bool = False
    full_weight_shape: Optional[tuple] = None
    k_offset: Optional[int] = None
    num_experts: int = 0

    @classmethod
    def from_engine(cls, cfg, **extra) -> "LinearConfig":
        """From an engine's own layer config read by attribute (vLLM's ``MPLinearLayerConfig``: its
        ``weight_type`` a ScalarType whose ``str()`` is the name, ``act_type`` / ``out_type`` torch dtypes,
        ``group_size``, ``zero_points``, ``has_g_idx``, ``partition_weight_shape``, ``full_weight_shape``);
        ``extra`` sets the fields such a config leaves out (``scale_type``, ``bias``, ...)."""
        need = ("weight_type", "partition_weight_shape", "act_type", "group_size", "zero_points", "has_g_idx")
        missing = [a for a in need if not hasattr(cfg, a)]
        if missing:
            raise FormatError(f"LinearConfig.from_engine: the config has no {', '.join(missing)} "
                              f"(a {type(cfg).__name__})")
        return cls(weight_type=str(cfg.weight_type), partition_weight_shape=tuple(cfg.partition_weight_shape),
                   act_type=cfg.act_type, group_size=int(cfg.group_size), zero_points=bool(cfg.zero_points),
                   has_g_idx=bool(cfg.has_g_idx), out_type=getattr(cfg, "out_type", None),
                   full_weight_shape=tuple(cfg.full_weight_shape) if getattr(cfg, "full_weight_shape", None)
                   else None, **extra)

    def layer_spec(self) -> LayerSpec:
        """The shared description of this layer (raises FormatError naming the field that does not fit)."""
        shape = tuple(self.partition_weight_shape) if self.partition_weight_shape is not None else ()
        if len(shape) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in shape):
            raise FormatError(f"partition_weight_shape: expected (K, N), two positive integers, "
                              f"got {self.partition_weight_shape!r}")
        k, n = shape
        fmt, zp = weight_format(self.weight_type, self.zero_points)
        act_fmt = _dtype_name("act_type", self.act_type, ("fp16", "bf16", "int8", "e4m3", "e5m2", "int4", "e2m1"))
        if act_fmt in ("fp16", "bf16"):
            act = ActivationScheme(act_fmt)
            out = act_fmt if self.out_type is None else _dtype_name("out_type", self.out_type, ("fp16", "bf16"))
        else:
            if self.out_type is None:
                raise FormatError(f"out_type: {act_fmt} activations need the output dtype (fp16 or bf16), got None")
            out = _dtype_name("out_type", self.out_type, ("fp16", "bf16"))
            act = ActivationScheme(act_fmt, self.act_quant, group_size=self.act_group_size,
                                   scale_fmt=_dtype_name("act_scale_type", self.act_scale_type,
                                                         ("fp32", "fp16", "bf16", "e4m3", "e8m0")))
        sfmt = out if self.scale_type is None else _dtype_name(
            "scale_type", self.scale_type, ("fp16", "bf16", "fp32", "e4m3", "e8m0"))
        if not isinstance(self.group_size, int) or isinstance(self.group_size, bool) or not (
                self.group_size == -1 or self.group_size > 0):
            raise FormatError(f"group_size: expected -1 (per output channel) or a positive integer, "
                              f"got {self.group_size!r}")
        kw = dict(scale="channel", group_size=None) if self.group_size == -1 else dict(scale="group",
                                                                                    group_size=self.group_size)
        off = None
        if self.k_offset is not None:
            if not isinstance(self.k_offset, int) or isinstance(self.k_offset, bool) or self.k_offset < 0:
                raise FormatError(f"k_offset: expected None or the shard's first column (an integer >= 0), "
                                  f"got {self.k_offset!r}")
            if self.has_g_idx:
                raise FormatError("k_offset: an act-order layer shards by its g_idx, whose groups span every rank's "
                                  "columns; humming takes act-order weights whole, not cut by k_offset")
            if self.group_size > 0 and (self.k_offset % self.group_size or k % self.group_size):
                off = self.k_offset % self.group_size
        elif self.group_size > 0 and k % self.group_size:
            raise FormatError(f"group_size: {self.group_size} does not divide this partition's K = {k} "
                              f"(partition_weight_shape {shape}); the shard would split a scale group (give "
                              f"k_offset, the shard's first column, to run it)")
        if self.has_g_idx and self.group_size == -1:
            raise FormatError("has_g_idx: act order permutes scale groups; per-channel scales (group_size -1) "
                              "have none")
        if off is not None:
            kw["group_offset"] = off
        if not isinstance(self.num_experts, int) or isinstance(self.num_experts, bool) or self.num_experts < 0:
            raise FormatError(f"num_experts: expected 0 (a dense layer) or the number of experts, got "
                              f"{self.num_experts!r}")
        if self.num_experts and off is not None:
            raise FormatError("k_offset: MoE experts are sharded expert by expert here, not with straddling groups")
        ws = WeightScheme(fmt, zero_point=zp, scale_fmt=sfmt, global_scale="tensor" if self.global_scale else "none",
                          act_order=bool(self.has_g_idx), **kw)
        return LayerSpec(n, k, ws, act, out_dtype=out, bias=bool(self.bias), num_experts=self.num_experts)


def _reason(err: Exception) -> str:
    if isinstance(err, UnsupportedError) and err.reasons:
        return "; ".join(err.reasons)
    return str(err)


def can_implement(config: LinearConfig, device=None) -> tuple[bool, Optional[str]]:
    """``(True, None)`` when humming runs ``config`` on ``device`` (a name such as ``"H200"`` or ``"sm_89"``,
    a :class:`humming.device.Device`, or None: this process's GPU), else ``(False, reason)``. It plans the
    layer, so it needs no GPU for a named device, and it does not raise for a layer it cannot run."""
    from .planner import plan

    try:
        p = plan(config.layer_spec(), device)
    except (HummingError, ValueError) as err:
        return False, _reason(err)
    if not p.runnable:
        return False, p.not_runnable_reason
    return True, None


def convert_weight(config, weight, quant_config: Optional[Mapping] = None, prefix: str = "",
                   bias: Optional[torch.Tensor] = None):
    """The :class:`~humming.reference.QuantizedWeight` of one layer, checked against ``config`` (a
    :class:`LinearConfig` or its LayerSpec); no GPU needed.

    ``weight`` is a QuantizedWeight, or a mapping of the layer's checkpoint tensors (``qweight``,
    ``scales``, ``qzeros``, ``g_idx``, ... under ``prefix``, or unprefixed) with the checkpoint's
    ``quant_config`` (any format :mod:`humming.formats` reads); for an MoE config, ``prefix`` may be a list
    of the experts' prefixes (stacked in that order) or one prefix of a format that stores them together. Its shape and every field of its scheme
    must be what the config said; a mismatch raises naming the field. A config with ``bias=True`` and
    no bias tensor gets a zero bias, which the engine's per-call bias replaces."""
    from .formats import load
    from .reference import QuantizedWeight

    layer = config.layer_spec() if isinstance(config, LinearConfig) else config
    # (a config that leaves scale_type unsaid takes the checkpoint's scale format: GPTQ stores fp16 scales
    # for bf16 models too)
    loose = ("scale_fmt",) if isinstance(config, LinearConfig) and config.scale_type is None else ()
    if isinstance(weight, QuantizedWeight):
        qw, where = weight, "the QuantizedWeight"
    elif isinstance(weight, Mapping):
        if quant_config is None:
            raise FormatError("convert_weight: checkpoint tensors need the checkpoint's quant_config")
        tensors, p = weight, prefix
        if not isinstance(p, str):  # (an MoE layer: one prefix per expert)
            from .formats import load_moe

            qw, where = load_moe(quant_config, tensors, list(p)), f"the checkpoint tensors of {p[0]}, ..."
        else:
            if not p:  # (the layer's own tensors, unprefixed)
                tensors, p = {f"layer.{k}": v for k, v in weight.items()}, "layer"
            qw, where = load(quant_config, tensors, p), f"the checkpoint tensors of {prefix or 'the layer'}"
    else:
        raise FormatError(f"convert_weight: expected a QuantizedWeight or a mapping of checkpoint tensors, "
                          f"got {type(weight).__name__}")
    want = layer.weight
    k_offset = config.k_offset if isinstance(config, LinearConfig) else None
    if k_offset is not None and not qw.is_moe and qw.k != layer.k:  # (the full layer: this rank's columns)
        if qw.n != layer.n or k_offset + layer.k > qw.k:
            raise ShapeError(f"convert_weight: {where} is N x K = {qw.n} x {qw.k}; the config's shard is "
                             f"N x K = {layer.n} x {layer.k} from column {k_offset}")
        qw, where = qw.k_shard(k_offset, layer.k), f"columns [{k_offset}, {k_offset + layer.k}) of {where}"
    if qw.num_experts != layer.num_experts or (qw.n, qw.k) != (layer.n, layer.k):
        def per(e):
            return f" per expert, {e} experts" if e else ""
        raise ShapeError(f"convert_weight: {where} is N x K = {qw.n} x {qw.k}{per(qw.num_experts)}"
                         f"; the config's partition is N x K = {layer.n} x {layer.k}{per(layer.num_experts)}")
    got = qw.scheme
    diffs = [f"{f.name} {getattr(got, f.name)!r} where the config says {getattr(want, f.name)!r}"
             for f in fields(want) if getattr(got, f.name) != getattr(want, f.name) and f.name not in loose]
    if diffs:
        raise FormatError(f"convert_weight: {where} is {got.describe()}, not the configured "
                          f"{want.describe()}: " + "; ".join(diffs))
    if bias is not None:
        if not layer.bias:
            raise ShapeError("convert_weight: a bias was given, but the config says bias=False")
        want_b = (layer.num_experts, layer.n) if layer.is_moe else (layer.n,)
        if tuple(bias.shape) != want_b:
            raise ShapeError(f"convert_weight: bias must be {list(want_b)}, got {list(bias.shape)}")
        qw = replace(qw, bias=bias.detach().float().to(qw.codes.device))
    elif layer.bias and qw.bias is None:
        shape = (layer.num_experts, layer.n) if layer.is_moe else (layer.n,)
        qw = replace(qw, bias=torch.zeros(shape, dtype=torch.float32, device=qw.codes.device))
    elif not layer.bias and qw.bias is not None:
        raise ShapeError(f"convert_weight: {where} carries a bias, but the config says bias=False")
    return qw


class LinearKernel:
    """One linear layer of an engine: checked at construction, its weights converted once
    (:meth:`process_weights`), then called (:meth:`apply`).

    ``LinearKernel(config)`` raises :class:`UnsupportedError` with the reason
    :func:`can_implement` gives; an engine that wants to fall back asks that first.
    """

    def __init__(self, config: LinearConfig, device=None):
        from .ops.gemm import _detect_cuda
        from .planner import plan

        self.config = config
        self.device = _detect_cuda(device, "LinearKernel")
        ok, why = can_implement(config, self.device.index)
        if not ok:
            raise UnsupportedError(f"humming cannot run {config.weight_type} {tuple(config.partition_weight_shape)} "
                                   f"on this GPU", [why or ""])
        self.layer = config.layer_spec()
        self.plan = plan(self.layer, self.device.index)
        self.weight = None

    def process_weights(self, weight, quant_config: Optional[Mapping] = None, prefix: str = "",
                        bias: Optional[torch.Tensor] = None):
        """Convert this layer's checkpoint weight (:func:`convert_weight`: checked against the config) into the
        kernel's layout on the GPU, once. Returns the prepared weight, also kept as ``self.weight``."""
        from .ops import prepare_weight
        from .planner import plan

        qw = convert_weight(self.config, weight, quant_config, prefix, bias)
        if qw.scheme != self.layer.weight:  # (the checkpoint's own scale format: plan for it)
            self.layer = replace(self.layer, weight=qw.scheme)
            self.plan = plan(self.layer, self.device.index)
            if not self.plan.runnable:
                raise UnsupportedError(f"humming cannot run {self.layer.describe()} on this GPU",
                                       [self.plan.not_runnable_reason or ""])
        self.weight = prepare_weight(qw, layer=self.layer, device=self.device, plan=self.plan)
        return self.weight

    def apply(self, x: torch.Tensor, bias: Optional[torch.Tensor] = None,
              act_scale: Optional[torch.Tensor] = None) -> torch.Tensor:
        """``y = x @ W.T (+ bias)`` for ``x [..., K]``; ``bias`` replaces the prepared one for this call
        (the config must say bias=True). Under ``torch.compile`` this is ``torch.ops.humming.gemm``."""
        from .ops import gemm

        if self.layer.is_moe:
            raise ShapeError("apply: this config has experts (num_experts > 0); use MoEKernel")
        if self.weight is None:
            raise ShapeError("apply: call process_weights first (no weight has been converted yet)")
        if not isinstance(x, torch.Tensor) or x.dim() < 1:
            raise ShapeError(f"apply: x must be a tensor [..., {self.layer.k}], got "
                             f"{list(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}")
        lead = x.shape[:-1]
        y = gemm(x.reshape(-1, x.shape[-1]), self.weight, bias=bias, act_scale=act_scale)
        return y.reshape(*lead, self.layer.n)

    __call__ = apply


class MoEKernel(LinearKernel):
    """The experts of one MoE layer of an engine (a :class:`LinearConfig` with ``num_experts``): checked at
    construction, converted once (:meth:`process_weights`: a QuantizedWeight ``[E, N, K]``, or checkpoint
    tensors with the experts' prefixes), then called in either activation format engines use:
    :meth:`apply` (token-major activations with top-k ids and weights) or :meth:`apply_batched` (activations
    grouped by expert, with counts: expert parallelism). Two of them, the gate/up and the down projection,
    run a layer's experts whole through ``humming.ops.moe_mlp(x, gate_up.weight, down.weight, topk_ids,
    topk_weights, activation)``."""

    def __init__(self, config: LinearConfig, device=None):
        if not config.num_experts:
            raise FormatError("MoEKernel: the config has no experts (num_experts is 0); use LinearKernel")
        super().__init__(config, device)

    def apply(self, x: torch.Tensor, topk_ids: torch.Tensor, topk_weights: Optional[torch.Tensor] = None,
              reduce: bool = False, act_scale: Optional[torch.Tensor] = None, check_ids: bool = True) -> torch.Tensor:
        """:func:`humming.ops.moe.moe_gemm`: ``x`` ``[M, K]`` or ``[M, topk, K]``, ``topk_ids`` ``[M, topk]``
        -> ``[M, topk, N]`` (``[M, N]`` with ``reduce``, weighted by ``topk_weights``). ``check_ids=False``
        skips the check that every id is below ``num_experts``: one host synchronization per eager call (calls
        captured in a CUDA graph skip it anyway). An engine whose ids come from a top-k over the router's
        logits, mapped to local experts (-1 for those held elsewhere), may pass it; an unchecked id past the
        experts counts as one held elsewhere (zeros)."""
        from .ops.moe import moe_gemm

        if self.weight is None:
            raise ShapeError("apply: call process_weights first (no weight has been converted yet)")
        return moe_gemm(x, self.weight, topk_ids, topk_weights, reduce=reduce, act_scale=act_scale,
                        check_ids=check_ids)

    __call__ = apply

    def apply_batched(self, x: torch.Tensor, expert_num_tokens: torch.Tensor,
                      act_scale: Optional[torch.Tensor] = None, tokens_per_expert: Optional[int] = None) -> torch.Tensor:
        """:func:`humming.ops.moe.moe_gemm_batched`: ``x`` ``[E, T, K]`` with ``expert_num_tokens`` ``[E]``
        -> ``[E, T, N]``."""
        from .ops.moe import moe_gemm_batched

        if self.weight is None:
            raise ShapeError("apply_batched: call process_weights first (no weight has been converted yet)")
        return moe_gemm_batched(x, self.weight, expert_num_tokens, act_scale=act_scale,
                                tokens_per_expert=tokens_per_expert)


def precompile(kernels, ms=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)) -> list:
    """Compile, in parallel and once per distinct kernel, everything ``kernels`` (LinearKernels or
    prepared weights) would launch for these token counts, so no call compiles. Returns the JIT's
    per-kernel results (compile time, cache hit)."""
    from .jit import warmup

    specs = {}
    for kern in kernels:
        w = getattr(kern, "weight", kern)
        if w is None:
            raise ShapeError("precompile: a LinearKernel has no converted weight yet (call process_weights)")
        specs.update(dict.fromkeys(w.kernel_specs(ms)))
    return warmup(list(specs))
