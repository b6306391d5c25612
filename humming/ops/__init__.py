"""GPU ops: quantized GEMM and activation quantization (registered with torch.library)."""
from __future__ import annotations

from .gemm import PreparedWeight, gemm, prepare_weight

__all__ = ["PreparedWeight", "prepare_weight", "gemm", "moe_gemm", "moe_gemm_batched", "moe_mlp",
           "quantize_activation"]


def __getattr__(name):
    if name in ("moe_gemm", "moe_gemm_batched", "moe_mlp"):
        from . import moe

        return getattr(moe, name)
    if name == "quantize_activation":
        from .act_quant import quantize_activation

        return quantize_activation
    raise AttributeError(f"module 'humming.ops' has no attribute {name!r}")
