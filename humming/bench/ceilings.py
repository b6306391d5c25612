"""Ceilings measured in the same run as the methods, with the same timer.

* copy bandwidth: a device-to-device copy, bytes read plus bytes written;
* stream time of N bytes: the stream-read kernel over rotated buffers of N
  bytes (the practical floor; for tens of MB well above bytes / bandwidth);
* dense bf16 (``torch.matmul``) and fp8 (``torch._scaled_mm``, tensorwise)
  rates at 8192^3.
"""
from __future__ import annotations

from .timing import FIRST_WARMUP_S, MIN_CALLS, WARMUP_S, copies_for, time_calls

__all__ = ["DeviceCeilings", "device_l2_bytes"]


def device_l2_bytes(device) -> int:
    import torch

    props = torch.cuda.get_device_properties(device)
    return int(getattr(props, "L2_cache_size", 0) or getattr(props, "l2_cache_size", 0) or 0)


class DeviceCeilings:
    """The ceilings of one CUDA device, measured lazily and remembered."""

    def __init__(self, device, timer, repeats: int = 5, copy_bytes: int = 1 << 30, matmul_size: int = 8192,
                 min_calls: int = MIN_CALLS, warmup_s: float = WARMUP_S, first_warmup_s: float = FIRST_WARMUP_S):
        import torch

        self.torch = torch
        self.device = torch.device(device)
        if self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.timer = timer
        self.repeats = repeats
        self.min_calls = min_calls  # (timed as the methods are: the stream time is their yardstick)
        # (each ceiling is timed once, after host work -- allocations, fills, the readers' compile --: warmed as a
        # method's first point is)
        self.warmup_s = max(warmup_s, first_warmup_s)
        self.copy_bytes = copy_bytes
        self.matmul_size = matmul_size
        self.l2_bytes = device_l2_bytes(self.device)
        self._stream = {}
        self._readers = None

    def _time(self, calls):
        return time_calls(calls, self.timer, repeats=self.repeats, min_calls=self.min_calls,
                          warmup_s=self.warmup_s).median_us

    def copy_gbps(self) -> float:
        torch = self.torch
        src = torch.empty(self.copy_bytes, dtype=torch.uint8, device=self.device)
        dst = torch.empty_like(src)
        us = self._time([lambda: dst.copy_(src)])
        return 2 * self.copy_bytes / us / 1e3

    def bf16_tflops(self) -> float:
        torch = self.torch
        n = self.matmul_size
        a = torch.randn(n, n, device=self.device, dtype=torch.bfloat16)
        b = torch.randn(n, n, device=self.device, dtype=torch.bfloat16)
        return 2 * n ** 3 / self._time([lambda: torch.matmul(a, b)]) / 1e6

    def fp8_tflops(self) -> float:
        torch = self.torch
        n = self.matmul_size
        a = torch.randn(n, n, device=self.device).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=self.device).to(torch.float8_e4m3fn)
        one = torch.ones((), device=self.device)
        return 2 * n ** 3 / self._time([lambda: torch._scaled_mm(a, b.t(), one, one,
                                                                   out_dtype=torch.bfloat16)]) / 1e6

    def stream_us(self, nbytes: int) -> float:
        """Time to stream ``nbytes`` once (the fastest of the kernel variants)."""
        from .stream import CONFIGS, StreamReader

        nbytes = int(nbytes)
        if nbytes not in self._stream:
            if self._readers is None:
                self._readers = [StreamReader(self.device, u, t) for u, t in CONFIGS]
            copies = copies_for(nbytes, self.l2_bytes)
            best = None
            for reader in self._readers:
                us = self._time(reader.calls(nbytes, copies))
                reader.release()
                best = us if best is None else min(best, us)
            self._stream[nbytes] = best
        return self._stream[nbytes]
