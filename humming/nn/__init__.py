"""torch.nn modules over humming's kernels."""
from __future__ import annotations

import torch

from .. import reference as R
from ..scheme import ActivationScheme, LayerSpec, WeightScheme

__all__ = ["QuantLinear"]

_OUT = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


class QuantLinear(torch.nn.Module):
    """A linear layer with quantized weights: ``y = x @ W.T (+ bias)``.

    On a CUDA device the weight is planned and repacked once (``prepare_weight``)
    and ``forward`` runs humming's kernel; elsewhere (a CPU, or ``device=None``
    without a GPU) it runs :mod:`humming.reference`, so the same module works in
    tests and on laptops.

    Build it from a :class:`~humming.reference.QuantizedWeight`, a float weight
    (:meth:`from_float`) or a checkpoint (:meth:`from_checkpoint`).
    """

    def __init__(self, qw: R.QuantizedWeight, activation: ActivationScheme | None = None,
                 out_dtype: str | None = None, device=None):
        super().__init__()
        act = activation or ActivationScheme("fp16")
        self.activation = act
        self.out_dtype = out_dtype or ("bf16" if act.fmt == "bf16" else "fp16")
        self.in_features, self.out_features = qw.k, qw.n
        self.layer = LayerSpec(qw.n, qw.k, qw.scheme, act, out_dtype=self.out_dtype, bias=qw.bias is not None)
        dev = torch.device(device) if device is not None else (
            torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu"))
        self.qweight = qw
        self.prepared = None
        if dev.type == "cuda":
            from ..ops import prepare_weight

            self.prepared = prepare_weight(qw, layer=self.layer, device=dev)

    # -- constructors -------------------------------------------------------------
    @classmethod
    def from_float(cls, weight, scheme: WeightScheme, activation: ActivationScheme | None = None,
                   bias: torch.Tensor | None = None, perm: torch.Tensor | None = None, out_dtype=None,
                   device=None) -> "QuantLinear":
        """Quantize a float weight ``[N, K]`` (or an ``nn.Linear``) round-to-nearest with ``scheme``."""
        if isinstance(weight, torch.nn.Linear):
            bias = weight.bias if bias is None else bias
            weight = weight.weight
        qw = R.quantize(weight, scheme, perm=perm, bias=bias)
        return cls(qw, activation, out_dtype, device)

    @classmethod
    def from_checkpoint(cls, checkpoint, prefix: str, activation: ActivationScheme | None = None,
                        out_dtype=None, device=None) -> "QuantLinear":
        """One layer of a checkpoint (a path or a :class:`humming.formats.Checkpoint`)."""
        from ..formats import load_checkpoint

        ckpt = load_checkpoint(checkpoint) if isinstance(checkpoint, (str, bytes)) or hasattr(
            checkpoint, "__fspath__") else checkpoint
        qw = ckpt.layers[prefix]
        act = activation or ckpt.schemes(prefix)[1]
        return cls(qw, act, out_dtype, device)

    # -- forward ---------------------------------------------------------------------
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)
        if self.prepared is not None:
            from ..ops import gemm

            y = gemm(x2.contiguous(), self.prepared)
        else:
            y = R.gemm(x2, self.qweight, self.activation).to(_OUT[self.out_dtype])
        return y.reshape(*lead, self.out_features)

    def extra_repr(self) -> str:
        where = "reference (CPU)" if self.prepared is None else f"{self.prepared.plan.family} on {self.prepared.device}"
        return f"in={self.in_features}, out={self.out_features}, {self.layer.weight.describe()}, " \
               f"act={self.activation.describe()}, {where}"
