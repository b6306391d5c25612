"""The stream-read kernel (``humming/kernels/stream_read.cuh``) through the JIT.

``StreamReader(device).calls(nbytes, copies)`` returns one launch per buffer
copy, ready for the timing method: the practical floor of reading ``nbytes``
of weights with nothing else to do.
"""
from __future__ import annotations

import ctypes

from ..jit import KernelSpec, get_kernel

__all__ = ["StreamReadParams", "stream_spec", "StreamReader", "CONFIGS", "target_of"]

#: (UNROLL, THREADS) variants tried; the fastest one counts
CONFIGS = ((4, 512), (8, 256))


class StreamReadParams(ctypes.Structure):
    _fields_ = [("src", ctypes.c_uint64), ("num_vecs", ctypes.c_uint64), ("sink", ctypes.c_uint64),
                ("never", ctypes.c_uint32), ("pad_", ctypes.c_uint32),
                ("trace", ctypes.c_uint64)]  # HUMMING_TRACE builds: 16 words per CTA, or 0


def stream_spec(target: str, unroll: int = 4, threads: int = 512, run: int = 0, defines=()) -> KernelSpec:
    """``run`` > 0: each warp reads runs of ``run`` 512-byte blocks (see stream_read.cuh);
    ``defines`` e.g. ``{"HUMMING_TRACE": 1}`` (the CTA timelines of scripts/gpu_trace.py)."""
    return KernelSpec(family="stream_read", header="humming/kernels/stream_read.cuh",
                      entry="humming::stream_read", params="humming::StreamReadParams",
                      config={"UNROLL": unroll, "RUN": run}, target=target, threads=threads,
                      params_size=ctypes.sizeof(StreamReadParams), defines=defines)


def target_of(device) -> str:
    """The plain SM target of a CUDA device (the kernel needs no arch-specific feature)."""
    import torch

    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}"


class StreamReader:
    """Launches of the stream-read kernel over rotated buffers on one device."""

    def __init__(self, device, unroll: int = 4, threads: int = 512, run: int = 0, defines=()):
        import torch

        self.device = torch.device(device)
        props = torch.cuda.get_device_properties(self.device)
        self.blocks = props.multi_processor_count * max(1, 2048 // threads)
        self.run = run
        self.kernel = get_kernel(stream_spec(target_of(self.device), unroll, threads, run, defines))
        self.sink = torch.zeros(1, dtype=torch.int32, device=self.device)
        self._keep = []

    def calls(self, nbytes: int, copies: int):
        """``copies`` launches, each reading its own buffer of ``nbytes`` (rounded up to 16)."""
        import torch

        vecs = max(1, -(-int(nbytes) // 16))
        if self.run:  # whole runs of `run` 512-byte blocks
            vecs = -(-vecs // (32 * self.run)) * 32 * self.run
        bufs = [torch.empty(vecs * 16, dtype=torch.uint8, device=self.device) for _ in range(copies)]
        plans = []
        self.plans = plans  # (their params: scripts/gpu_trace.py points them at its buffers)
        for buf in bufs:
            params = StreamReadParams(buf.data_ptr(), vecs, self.sink.data_ptr(), 0xFFFFFFFF, 0)
            plans.append(self.kernel.plan(params, grid=(self.blocks,)))
        self._keep = bufs  # buffers live as long as the calls are used
        return [plan.launch for plan in plans]

    def release(self):
        self._keep = []
