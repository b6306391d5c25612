"""torch.nn modules over humming's kernels."""
from __future__ import annotations

import torch

from .. import reference as R
from ..errors import ShapeError
from ..scheme import ActivationScheme, LayerSpec, WeightScheme

__all__ = ["QuantLinear", "QuantMoE"]

_OUT = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def _static_scale(who: str, act: ActivationScheme, act_scale) -> torch.Tensor | None:
    """The calibrated activation scale as a one-element fp32 tensor for ``static_tensor`` activations (checked:
    one finite positive value), None otherwise (where giving one is an error)."""
    if act.quant != "static_tensor":
        if act_scale is not None:
            raise ShapeError(f"{who}: act_scale is for static_tensor activations, these are {act.describe()}")
        return None
    if act_scale is None:
        raise ShapeError(f"{who}: {act.describe()} activations need act_scale (the calibrated fp32 scale, one "
                         f"value), got None")
    sc = torch.as_tensor(act_scale, dtype=torch.float32).reshape(-1)
    if sc.numel() != 1 or not bool(torch.isfinite(sc).all()) or not float(sc) > 0:
        raise ShapeError(f"{who}: act_scale must be one finite positive value, got "
                         f"{sc.tolist() if sc.numel() <= 4 else list(sc.shape)}")
    return sc


def _device(device) -> torch.device:
    return torch.device(device) if device is not None else (
        torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu"))


def _open(checkpoint):
    """A Checkpoint, from a path or as given."""
    from ..formats import load_checkpoint

    if isinstance(checkpoint, (str, bytes)) or hasattr(checkpoint, "__fspath__"):
        return load_checkpoint(checkpoint)
    return checkpoint


def _checkpoint_scale(who: str, ckpt, prefixes: list, act: ActivationScheme) -> float | None:
    """The static activation scale the checkpoint holds for these layers (``input_scale`` or
    ``activation_scale``; the largest where experts have one each, as engines take it), or None for
    dynamic activations."""
    if act.quant != "static_tensor":
        return None
    found = [torch.as_tensor(q.meta[k], dtype=torch.float32).reshape(-1) for q in (ckpt.layers[p] for p in prefixes)
             for k in ("input_scale", "activation_scale") if k in q.meta]
    if not found:
        raise ShapeError(f"{who}: layer {prefixes[0]} has {act.describe()} activations but the checkpoint holds no "
                         f"{prefixes[0]}.input_scale (or activation_scale)")
    return float(torch.cat(found).max())


class QuantLinear(torch.nn.Module):
    """A linear layer with quantized weights: ``y = x @ W.T (+ bias)``.

    On a CUDA device the weight is planned and repacked once (``prepare_weight``)
    and ``forward`` runs humming's kernel; elsewhere (a CPU, or ``device=None``
    without a GPU) it runs :mod:`humming.reference`, so the same module works in
    tests and on laptops.

    Build it from a :class:`~humming.reference.QuantizedWeight`, a float weight
    (:meth:`from_float`) or a checkpoint (:meth:`from_checkpoint`).

    ``act_scale`` is the calibrated fp32 activation scale of a ``static_tensor``
    activation scheme (one value; ``from_checkpoint`` takes the checkpoint's
    ``input_scale``), kept as a buffer and passed to every call.
    """

    def __init__(self, qw: R.QuantizedWeight, activation: ActivationScheme | None = None,
                 out_dtype: str | None = None, device=None, act_scale: torch.Tensor | float | None = None):
        super().__init__()
        act = activation or ActivationScheme("fp16")
        self.activation = act
        sc = _static_scale("QuantLinear", act, act_scale)
        self.out_dtype = out_dtype or ("bf16" if act.fmt == "bf16" else "fp16")
        self.in_features, self.out_features = qw.k, qw.n
        self.layer = LayerSpec(qw.n, qw.k, qw.scheme, act, out_dtype=self.out_dtype, bias=qw.bias is not None)
        dev = _device(device)
        self.qweight = qw
        self.register_buffer("act_scale", None if sc is None else sc.to(dev), persistent=False)
        self.prepared = None
        if dev.type == "cuda":
            from ..ops import prepare_weight

            self.prepared = prepare_weight(qw, layer=self.layer, device=dev)

    # -- constructors -------------------------------------------------------------
    @classmethod
    def from_float(cls, weight, scheme: WeightScheme, activation: ActivationScheme | None = None,
                   bias: torch.Tensor | None = None, perm: torch.Tensor | None = None, out_dtype=None,
                   device=None, act_scale: torch.Tensor | float | None = None) -> "QuantLinear":
        """Quantize a float weight ``[N, K]`` (or an ``nn.Linear``) round-to-nearest with ``scheme``."""
        if isinstance(weight, torch.nn.Linear):
            bias = weight.bias if bias is None else bias
            weight = weight.weight
        qw = R.quantize(weight, scheme, perm=perm, bias=bias)
        return cls(qw, activation, out_dtype, device, act_scale=act_scale)

    @classmethod
    def from_checkpoint(cls, checkpoint, prefix: str, activation: ActivationScheme | None = None,
                        out_dtype=None, device=None, k_shard: tuple[int, int] | None = None) -> "QuantLinear":
        """One layer of a checkpoint (a path or a :class:`humming.formats.Checkpoint`). ``k_shard=(start,
        size)``: only those input columns, as a tensor-parallel rank of a row-parallel layer holds them
        (:meth:`~humming.reference.QuantizedWeight.k_shard`: scale groups may straddle the ranks)."""
        ckpt = _open(checkpoint)
        qw = ckpt.layers[prefix]
        if k_shard is not None:
            qw = qw.k_shard(*k_shard)
        act = activation or ckpt.schemes(prefix)[1]
        scale = _checkpoint_scale("QuantLinear.from_checkpoint", ckpt, [prefix], act)
        return cls(qw, act, out_dtype, device, act_scale=scale)

    # -- forward ---------------------------------------------------------------------
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[-1] != self.in_features \
                or not x.is_floating_point():
            got = (f"{x.dtype} {list(x.shape)}" if isinstance(x, torch.Tensor) else type(x).__name__)
            raise ShapeError(f"QuantLinear: x must be a floating-point tensor [..., {self.in_features}] "
                             f"(in_features), got {got}")
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)
        if self.prepared is not None:
            from ..ops import gemm

            y = gemm(x2.contiguous(), self.prepared, act_scale=self.act_scale)
        else:
            y = R.gemm(x2, self.qweight, self.activation, act_scale=self.act_scale).to(_OUT[self.out_dtype])
        return y.reshape(*lead, self.out_features)

    def extra_repr(self) -> str:
        where = "reference (CPU)" if self.prepared is None else f"{self.prepared.plan.family} on {self.prepared.device}"
        return f"in={self.in_features}, out={self.out_features}, {self.layer.weight.describe()}, " \
               f"act={self.activation.describe()}, {where}"


class QuantMoE(torch.nn.Module):
    """The experts of an MoE layer with quantized weights (``[E, N, K]``): one GEMM per routed (token, expert)
    pair, ``y[m, j] = x[m] @ W[topk_ids[m, j]].T (+ bias[topk_ids[m, j]])``.

    ``forward(x, topk_ids, topk_weights=None, reduce=False)`` takes ``x`` ``[M, K]`` (gate/up projections) or
    ``[M, topk, K]`` (down projections) and returns ``[M, topk, N]``, or ``[M, N]`` with ``reduce`` (the
    weighted sum over the chosen experts). On a CUDA device it runs humming's MoE kernels
    (:func:`humming.ops.moe.moe_gemm`), elsewhere :func:`humming.reference.moe_gemm`.
    """

    def __init__(self, qw: R.QuantizedWeight, activation: ActivationScheme | None = None,
                 out_dtype: str | None = None, device=None, act_scale: torch.Tensor | float | None = None):
        super().__init__()
        if not qw.is_moe:
            raise ShapeError(f"QuantMoE: expected an MoE weight (codes [E, N, K]), got codes {list(qw.codes.shape)}; "
                             f"QuantizedWeight.stack builds one from dense experts")
        self.activation = act = activation or ActivationScheme("fp16")
        sc = _static_scale("QuantMoE", act, act_scale)
        self.out_dtype = out_dtype or ("bf16" if act.fmt == "bf16" else "fp16")
        self.num_experts, self.in_features, self.out_features = qw.num_experts, qw.k, qw.n
        self.layer = LayerSpec(qw.n, qw.k, qw.scheme, act, num_experts=qw.num_experts, out_dtype=self.out_dtype,
                               bias=qw.bias is not None)
        dev = _device(device)
        self.register_buffer("act_scale", None if sc is None else sc.to(dev), persistent=False)
        self.qweight = qw
        self.prepared = None
        if dev.type == "cuda":
            from ..ops import prepare_weight

            self.prepared = prepare_weight(qw, layer=self.layer, device=dev)

    @classmethod
    def from_float(cls, weight: torch.Tensor, scheme: WeightScheme, activation: ActivationScheme | None = None,
                   bias: torch.Tensor | None = None, out_dtype=None, device=None) -> "QuantMoE":
        """Quantize float expert weights ``[E, N, K]`` round-to-nearest with ``scheme``, expert by expert."""
        if weight.dim() != 3:
            raise ShapeError(f"QuantMoE.from_float: weight must be [E, N, K], got {list(weight.shape)}")
        experts = [R.quantize(weight[e], scheme, bias=None if bias is None else bias[e])
                   for e in range(weight.shape[0])]
        return cls(R.QuantizedWeight.stack(experts), activation, out_dtype, device)

    @classmethod
    def from_checkpoint(cls, checkpoint, prefixes, activation: ActivationScheme | None = None, out_dtype=None,
                        device=None) -> "QuantMoE":
        """The experts of one MoE layer of a checkpoint (a path or a :class:`humming.formats.Checkpoint`):
        ``prefixes`` is one prefix where the format stores the experts together (gpt-oss's
        ``...mlp.experts.gate_up_proj``), or one prefix per expert, stacked in that order. Static activation
        scales (``input_scale``) differ per expert in some checkpoints; the largest is taken, as engines do,
        so no expert's activations saturate."""
        ckpt = _open(checkpoint)
        names = [prefixes] if isinstance(prefixes, str) else list(prefixes)
        missing = [p for p in names if p not in ckpt.layers]
        if missing or not names:
            raise ShapeError(f"QuantMoE.from_checkpoint: no quantized layer {missing[0] if missing else '(none given)'} "
                             f"in {ckpt.path}")
        if isinstance(prefixes, str):
            qw = ckpt.layers[prefixes]
            if not qw.is_moe:
                raise ShapeError(f"QuantMoE.from_checkpoint: {prefixes} holds one dense weight "
                                 f"{list(qw.codes.shape)}; pass one prefix per expert")
        else:
            qw = ckpt.moe(names)
        act = activation or ckpt.schemes(names[0])[1]
        return cls(qw, act, out_dtype, device, act_scale=_checkpoint_scale("QuantMoE.from_checkpoint", ckpt, names, act))

    def forward(self, x: torch.Tensor, topk_ids: torch.Tensor, topk_weights: torch.Tensor | None = None,
                reduce: bool = False) -> torch.Tensor:
        if self.prepared is not None:
            from ..ops.moe import moe_gemm

            return moe_gemm(x.contiguous(), self.prepared, topk_ids, topk_weights, reduce=reduce,
                            act_scale=self.act_scale)
        y = R.moe_gemm(x, self.qweight, topk_ids, topk_weights, self.activation, reduce=reduce,
                       act_scale=self.act_scale)
        return y.to(_OUT[self.out_dtype])

    def extra_repr(self) -> str:
        where = "reference (CPU)" if self.prepared is None else f"{self.prepared.plan.family} on {self.prepared.device}"
        return (f"experts={self.num_experts}, in={self.in_features}, out={self.out_features}, "
                f"{self.layer.weight.describe()}, act={self.activation.describe()}, {where}")

