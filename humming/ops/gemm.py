"""Dense quantized GEMM: ``prepare_weight`` once, then ``gemm(x, prepared)`` per call.

``prepare_weight`` plans the layer for the device (``humming.plan``), repacks
the weight into the plan's layout on the device, and builds the launch state;
nothing is compiled until the first call for an M range needs its kernel (or
``prepared.warmup(ms)`` asks for them ahead of time).

``gemm`` checks its input (dtype, device, shape, contiguity), quantizes the
activations when the plan says so, permutes them for act-order weights, and
launches one kernel for the call's M on the current stream.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import torch

from ..errors import DeviceError, ShapeError, UnsupportedError
from ..reference import QuantizedWeight
from ..scheme import ActivationScheme, LayerSpec
from .library import register_op

__all__ = ["PreparedWeight", "prepare_weight", "gemm", "registered"]

_TORCH_OUT = {"fp16": torch.float16, "bf16": torch.bfloat16}
#: The fewest tokens per expert whose M range's tile an MoE call routed by kernel runs (humming.ops.moe.
#: tokens_per_expert): a block runs all of its tile's BM rows, so the one-token tiles (tuned for one row) are not
#: taken; a call routed directly (one row per block) runs the one-row range's (humming.ops.moe.DIRECT_TOKENS).
MOE_MIN_TOKENS = 2


@dataclass
class PreparedWeight:
    """A weight repacked for one plan on one device.

    ``descriptor`` (layout name, version, plan fingerprint, device) travels with
    the weight, so a prepared weight is refused on a device it was not made for.
    """

    layer: LayerSpec
    plan: object
    packed: object
    launcher: object
    device: torch.device
    descriptor: dict = field(default_factory=dict)

    handle: int = -1
    fast: tuple = ()  # (k, n, x dtype, out dtype, device index, device) when calls need no conversion, else ()

    @property
    def nbytes(self) -> int:
        return self.packed.nbytes

    @property
    def compute_dtype(self) -> torch.dtype:
        """The dtype of the activations fed to the kernel (int8 for byte operands)."""
        r = self.packed.recipe
        if r.op8:
            return torch.int8
        return torch.bfloat16 if r.bf16 else torch.float16

    @property
    def out_dtype(self) -> torch.dtype:
        return _TORCH_OUT[self.layer.out_dtype]

    def warmup(self, ms=(1, 16, 64, 256, 1024)) -> list:
        """Compile the kernels for these token counts now (in parallel); returns timings. (MoE weights: the
        tokens per expert, humming.ops.moe.tokens_per_expert.)"""
        from ..jit import warmup

        return warmup(list(dict.fromkeys(self.kernel_specs(ms))))

    def kernel_specs(self, ms=(1, 16, 64, 256, 1024)) -> list:
        """The kernels calls with these token counts launch (MoE weights: rows per block -- tokens per expert for
        routed calls, at least MOE_MIN_TOKENS; one for directly routed ones, humming.ops.moe.direct_routing)."""
        return [self.launcher.spec_for(max(1, int(m))) for m in ms]


def _detect_cuda(device, what: str = "prepare_weight") -> torch.device:
    dev = torch.device(device) if device is not None else torch.device("cuda")
    if dev.type != "cuda":
        raise DeviceError(f"{what}: the mma_sync GEMM runs on CUDA devices, got {dev}")
    if not torch.cuda.is_available():
        raise DeviceError(f"{what}: no CUDA GPU is available in this process (plan() works without one)")
    if dev.index is None:
        dev = torch.device("cuda", torch.cuda.current_device())
    return dev


def prepare_weight(qw, layer: LayerSpec | None = None, activation: ActivationScheme | None = None,
                   device=None, out_dtype: str | None = None, plan=None) -> PreparedWeight:
    """Plan ``qw`` (a :class:`~humming.reference.QuantizedWeight`) for ``device`` and repack it there."""
    from .. import plan as make_plan
    from ..device import get_device

    if not isinstance(qw, QuantizedWeight):
        hint = (" (a float weight: quantize it first, humming.reference.quantize(w, scheme), or use "
                "humming.nn.QuantLinear.from_float)" if isinstance(qw, torch.Tensor) else "")
        raise ShapeError(f"prepare_weight: the weight must be a QuantizedWeight, got {type(qw).__name__}{hint}")
    dev = _detect_cuda(device)
    if layer is None:
        act = activation or ActivationScheme("fp16")
        od = out_dtype or ("bf16" if act.fmt == "bf16" else "fp16")
        layer = LayerSpec(qw.n, qw.k, qw.scheme, act, num_experts=qw.num_experts, out_dtype=od,
                          bias=qw.bias is not None)
    elif (layer.n, layer.k) != (qw.n, qw.k) or layer.weight != qw.scheme:
        raise ShapeError(f"prepare_weight: layer {layer.describe()} does not describe the weight "
                         f"({qw.scheme.describe()}, N={qw.n}, K={qw.k})")
    hw = get_device(dev.index)
    if plan is None:
        plan = make_plan(layer, hw)
    elif plan.device != hw.name and hw.caps.name not in plan.device_chain:
        raise DeviceError(f"prepare_weight: the plan was made for {plan.device} "
                          f"({' -> '.join(plan.device_chain)}), this is {hw.name} ({hw.caps.name}); "
                          f"plan again for this device")
    if not plan.runnable:
        raise UnsupportedError(f"prepare_weight: the plan for {hw.name} cannot run", [plan.not_runnable_reason])
    family = plan._family
    prepare = getattr(family, "prepare", None)
    if prepare is None:
        raise UnsupportedError(f"prepare_weight: kernel family {plan.family!r} cannot prepare weights",
                               [f"{plan.family}: no prepare()"])
    packed, launcher = prepare(plan, qw, dev, hw)
    desc = dict(packed.descriptor)
    desc.update({"plan": plan.fingerprint(), "device": hw.name, "target": packed.recipe.target})
    w = PreparedWeight(layer, plan, packed, launcher, dev, desc)
    w.handle = _register(w)
    if not layer.activation.is_quantized and packed.perm is None and not layer.is_moe:
        w.fast = (layer.k, layer.n, w.compute_dtype, w.out_dtype, dev.index, dev)
    return w


# Prepared weights are reachable from torch.ops.humming.gemm through an integer
# handle, so the op's schema holds only tensors and scalars (torch.compile traces it).
_registry: dict[int, PreparedWeight] = {}


def _register(w: PreparedWeight) -> int:
    import weakref

    h = len(_registry) + 1
    while h in _registry:
        h += 1
    _registry[h] = w
    weakref.finalize(w, _registry.pop, h, None)
    return h


def registered(handle: int) -> PreparedWeight:
    w = _registry.get(handle)
    if w is None:
        raise ShapeError(f"gemm: no prepared weight with handle {handle} (was it freed?)")
    return w


def not_prepared(w, op: str) -> ShapeError:
    """The error for a call given something other than a PreparedWeight as its weight (``op``: the call's name)."""
    if isinstance(w, torch.Tensor):
        hint = "a torch.Tensor (the arguments are x, then the prepared weight)"
    elif isinstance(w, QuantizedWeight):
        hint = "a QuantizedWeight; prepare it once with humming.prepare_weight(w) (plan and repack for this GPU)"
    else:
        hint = type(w).__name__
    return ShapeError(f"{op}: the weight must be a PreparedWeight (humming.prepare_weight), got {hint}")


def _check_x(x: torch.Tensor, w: PreparedWeight) -> None:
    if w.layer.is_moe:
        raise ShapeError(f"gemm: the prepared weight is an MoE weight ({w.layer.num_experts} experts); use "
                         f"humming.moe_gemm(x, weight, topk_ids)")
    if not isinstance(x, torch.Tensor):
        raise ShapeError(f"gemm: x must be a torch.Tensor, got {type(x).__name__}")
    if x.device != w.device:
        raise ShapeError(f"gemm: x is on {x.device}, the prepared weight on {w.device}")
    if x.dim() != 2 or x.shape[1] != w.layer.k:
        raise ShapeError(f"gemm: x must be [M, {w.layer.k}], got {list(x.shape)}")
    if x.dtype not in (torch.float16, torch.bfloat16):
        raise ShapeError(f"gemm: x must be float16 or bfloat16, got {x.dtype}")
    if x.stride(1) != 1 and x.shape[1] > 1:
        raise ShapeError(f"gemm: x must be row-contiguous (stride 1 along K), got strides {tuple(x.stride())}; "
                         f"call x.contiguous()")


def _prepare_activations(x: torch.Tensor, w: PreparedWeight, act_scale: torch.Tensor | None, columns: bool = True):
    """-> (x16 fed to the kernel, per-token or per-tensor scale or None). ``columns=False``: ``x``'s columns are
    already in the kernels' order (an MoE weight with act order: humming.ops.moe gathers them expert by expert)."""
    act = w.layer.activation
    pw = w.packed
    kc = _kernel_columns if columns else (lambda v, _pw: v)
    if not act.is_quantized:
        x = kc(x, pw)
        if x.dtype != w.compute_dtype:
            if x.dtype != _TORCH_OUT.get(act.fmt) or w.plan.activation.convert == "none":
                raise ShapeError(f"gemm: x is {x.dtype}, the plan computes in {w.compute_dtype} "
                                 f"(activation scheme {act.describe()})")
            # the plan's fallback (bf16 activations on a chip without bf16 MMAs, e.g. sm_75): converted here,
            # before the kernel, saturating at the compute type's range as the plan's note says (clamped after
            # the cast: bf16 cannot hold fp16's largest value, 65504, and would round the bound up to 65536)
            fi = torch.finfo(w.compute_dtype)
            x = x.to(w.compute_dtype).clamp(fi.min, fi.max)
        return _aligned(x), None
    from .act_quant import BYTES, VALUES, quantize_activation

    if not pw.recipe.op8:
        # 16-bit operands: the kernel writes the codes' values in the compute type (exact; group
        # scales folded in over a per-row power of two, returned as the row's scale). Act order
        # permutes after, so that groups are the checkpoint's columns.
        v, s = quantize_activation(x.contiguous(), act.fmt + VALUES[w.compute_dtype], act.quant,
                                   act.group_size, scale=act_scale, scale_fmt=act.scale_fmt)
        return _aligned(kc(v, pw)), s.reshape(-1).contiguous()
    if act.quant == "dynamic_group" and (pw.recipe.act_scale != 3 or pw.perm is not None):
        raise UnsupportedError("gemm: per-group activation scales on these byte operands are not implemented",
                               [f"activation scheme {act.describe()}; the kernels fold them for fp8 operands on "
                                f"warpgroup MMAs, without act order"])
    x = kc(x, pw)
    fmt = act.fmt
    if act.format.bits == 4 and pw.recipe.op8 != 4:
        fmt += BYTES  # the int8 operands take the int4 codes exactly, one per byte
    # (dynamic_group: the codes and their scales by group, [K / group, M rounded up to 4], which the kernel
    # copies into its stages beside the activations and folds with each block's sums)
    q, s = quantize_activation(x.contiguous(), fmt, act.quant, act.group_size, scale=act_scale,
                               scale_fmt=act.scale_fmt, group_major=act.quant == "dynamic_group")
    # byte operands: the codes go to the MMA as they are
    return _aligned(q.view(torch.int8)), s.reshape(-1).contiguous()


def _kernel_columns(x: torch.Tensor, pw) -> torch.Tensor:
    """``x``'s columns in the order and K the kernels read: act order's permutation, and the gaps of
    scale groups the kernels pad (a column of zeros appended to ``x``, index K: ``pw.zero_column``)."""
    if pw.perm is None:
        return x
    if getattr(pw, "zero_column", False):
        x = torch.nn.functional.pad(x, (0, 1))
    return x.index_select(1, pw.perm)


def _aligned(x: torch.Tensor) -> torch.Tensor:
    """The kernel copies rows in 16-byte pieces: rows must start on 16 bytes and
    hold a multiple of 16 bytes (zeros appended when K is not)."""
    per = 16 // x.element_size()
    if x.shape[1] % per:
        return torch.nn.functional.pad(x, (0, per - x.shape[1] % per))
    if x.stride(0) % per or x.data_ptr() % 16:
        return x.contiguous() if not x.is_contiguous() else x.clone()
    return x


def gemm(x: torch.Tensor, w: PreparedWeight, bias: torch.Tensor | None = None,
         act_scale: torch.Tensor | None = None, out: torch.Tensor | None = None) -> torch.Tensor:
    """``y = x @ W.T (+ bias)`` for a prepared weight. ``x``: fp16/bf16 ``[M, K]`` on the weight's device.

    ``act_scale`` is the calibrated fp32 scale of a ``static_tensor`` activation
    scheme. ``bias`` (``[N]``) overrides the prepared bias for this call.
    Under ``torch.compile`` this is the custom op ``torch.ops.humming.gemm``.
    """
    if out is None and _is_compiling():
        if not isinstance(w, PreparedWeight):
            raise not_prepared(w, "gemm")
        return _gemm_op.op(x, w.handle, bias, act_scale)
    return _gemm(x, w, bias, act_scale, out)


def _gemm(x, w, bias=None, act_scale=None, out=None):
    try:
        f = w.fast
    except AttributeError:  # (no check on the fast path: an attribute read fails only for a wrong object)
        raise not_prepared(w, "gemm") from None
    # the common call (16-bit x as the kernel wants it, nothing else given) in a few
    # attribute reads; anything else takes the checked path below
    if f and out is None and bias is None and act_scale is None and type(x) is torch.Tensor:
        shape = x.shape
        if (len(shape) == 2 and shape[1] == f[0] and x.dtype is f[2] and x.get_device() == f[4]
                and shape[0] > 0):
            st = x.stride()
            xp = x.data_ptr()
            if st[1] == 1 and not st[0] & 7 and not xp & 15:
                m = shape[0]
                out = torch.empty((m, f[1]), dtype=f[3], device=f[5])
                w.launcher.run(x, xp, out, m, st[0])
                return out
    _check_x(x, w)
    m = x.shape[0]
    n = w.layer.n
    if out is None:
        out = torch.empty(m, n, dtype=w.out_dtype, device=x.device)
    elif out.shape != (m, n) or out.dtype != w.out_dtype or out.stride(1) != 1 or out.device != x.device:
        raise ShapeError(f"gemm: out must be {w.out_dtype} [{m}, {n}] row-contiguous on {x.device}, "
                         f"got {out.dtype} {list(out.shape)} on {out.device}")
    if m == 0:
        return out
    if bias is not None:
        if bias.shape != (n,):
            raise ShapeError(f"gemm: bias must be [{n}], got {list(bias.shape)}")
        if not w.packed.recipe.has_bias:
            raise ShapeError("gemm: this weight was prepared without a bias; prepare it with one "
                             "(LayerSpec(bias=True)) to pass a bias per call")
        bias = bias.to(device=x.device, dtype=torch.float32).contiguous()
    if w.layer.activation.quant == "static_tensor" and act_scale is None:
        raise ShapeError("gemm: static_tensor activations need act_scale (the calibrated fp32 scale)")
    xk, s = _prepare_activations(x, w, act_scale)
    w.launcher(xk, out, s, bias)
    return out


def _gemm_impl(x: torch.Tensor, handle: int, bias: Optional[torch.Tensor],
               act_scale: Optional[torch.Tensor]) -> torch.Tensor:
    return _gemm(x, registered(handle), bias, act_scale)


def _gemm_fake(x, handle, bias, act_scale):
    w = registered(handle)
    return x.new_empty((x.shape[0], w.layer.n), dtype=w.out_dtype)


_gemm_op = register_op("gemm", _gemm_impl, _gemm_fake)
_is_compiling = torch.compiler.is_compiling
