"""humming: JIT-compiled GPU GEMM kernels for quantized LLM inference."""
from __future__ import annotations

__version__ = "0.1.0"

from . import errors
from .errors import UnsupportedError, FormatError, ShapeError, CompileError, DeviceError
