"""GPU ops: quantized GEMM and activation quantization (registered with torch.library)."""
from __future__ import annotations

from .gemm import PreparedWeight, gemm, prepare_weight

__all__ = ["PreparedWeight", "prepare_weight", "gemm", "moe_gemm", "quantize_activation"]


def __getattr__(name):
    if name == "moe_gemm":
        from .moe import moe_gemm

        return moe_gemm
    if name == "quantize_activation":
        from .act_quant import quantize_activation

        return quantize_activation
    raise AttributeError(f"module 'humming.ops' has no attribute {name!r}")
