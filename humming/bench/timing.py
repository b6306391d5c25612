"""The timing method, shared by every benchmarked method (and by the external
adapters, which load this file by path: it imports only the standard library,
and torch lazily inside the CUDA timer).

One measurement of a method at one shape:

1. ``R`` calls, each with its own copy of the weights, with ``R x weight bytes``
   greater than ``3 x L2`` (:func:`copies_for`), so no call finds its weights in L2;
2. the R calls -- the whole list repeated until the unit holds at least
   ``min_calls`` (``MIN_CALLS``; ``humming bench --min-calls``) of them, so that a call's weights are still
   R - 1 copies away from their last use -- are warmed up and captured once into
   a replayable unit (:meth:`CudaGraphTimer.build`: a CUDA graph, warmed up on a
   side stream). Without the repeat, a layer of more than L2 / 2 bytes (R = 2)
   had every second call start across a graph launch, where layers of a tenth of
   that share it between a dozen calls: the launch gap weighed on large layers
   alone;
3. the unit is replayed a few times, and for ``warmup_s`` seconds more where
   asked (``humming bench --warmup-s``; default 0, the method every figure in
   docs/perf-notes.md was taken with), then ``iters`` replays are timed with
   CUDA events, ``iters`` chosen so one repeat lasts about ``target_s``. The
   first tens of milliseconds of replays after idle differ from sustained
   replay on the H200: 28672x8192 int4 at M=1 runs ~3 % slower in them, at
   M=16 and 64 5 % and 14 % faster (cuBLAS the same in both); a warm-up of 0.1 s
   times the sustained state, with repeats within 0.5 % of each other. The
   first point of each method (and each ceiling) is replayed untimed for at
   least ``first_warmup_s`` (``FIRST_WARMUP_S``; ``humming bench
   --first-warmup-s``): it comes after the method's preparation, host work of
   up to seconds with the GPU idle, and the first tens of milliseconds of
   replays after that run slow (H100, int4 g128 28672x8192: M=1, the first
   point, 49.5 us over all three repeats, 43.1 after 25 ms of replays, where
   M=8 right after it, the same kernel and grid, read 43.7; the stream time,
   measured after every point, is timed in the warm state). The later points
   follow shorter host work (the check of a few rows against the reference,
   the graph's capture) and keep the default: at most their first repeat runs
   slow there, and the median drops it (28672x8192 at M=8 / 16: one repeat of
   three slow, the median as warmed);
4. that is done ``repeats`` (>= 3) times; the result is the median time per call
   and the spread (min, max) over the repeats.

Anything with ``build(calls) -> replay`` and ``time(replay, iters) -> seconds``
is a timer, so the whole method runs on CPU with a fake clock in the tests.
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

__all__ = ["Timer", "CudaGraphTimer", "Measurement", "copies_for", "time_calls", "host_overhead_us",
           "MIN_REPEATS", "MIN_CALLS", "WARMUP_S", "FIRST_WARMUP_S"]

MIN_REPEATS = 3
#: calls per captured unit at the least (the copies' list repeated whole): what a layer of 3 x L2 / 5
#: bytes gets from its copies alone
MIN_CALLS = 5
#: seconds of untimed replays before the timed repeats by default (see the module docstring, step 3)
WARMUP_S = 0.0
#: seconds of untimed replays before the first point of a method or a ceiling, whatever ``WARMUP_S`` (see the
#: module docstring, step 3; sixty-second session, ``gpu_run.sh s62a`` / ``s62b``)
FIRST_WARMUP_S = 0.05


class Timer(Protocol):
    def build(self, calls: Sequence[Callable[[], object]]) -> Callable[[], None]:
        """Warm up ``calls`` and return one callable that replays all of them."""

    def time(self, replay: Callable[[], None], iters: int) -> float:
        """Seconds taken by ``iters`` back-to-back replays."""


def copies_for(weight_bytes: int, l2_bytes: int, factor: float = 3.0, min_copies: int = 2,
               max_copies: int = 64) -> int:
    """The number ``R`` of weight copies so that ``R * weight_bytes > factor * l2_bytes``.

    At least ``min_copies`` (a call never directly follows itself); at most
    ``max_copies`` (tiny weights: memory and capture time stay bounded, and the
    returned R then no longer beats the L2, which the report shows).
    """
    if weight_bytes <= 0:
        raise ValueError(f"copies_for: weight_bytes must be positive, found {weight_bytes}")
    if l2_bytes < 0:
        raise ValueError(f"copies_for: l2_bytes must be >= 0, found {l2_bytes}")
    need = math.floor(factor * l2_bytes / weight_bytes) + 1
    return max(min_copies, min(max_copies, need))


@dataclass(frozen=True)
class Measurement:
    """Time per call over ``repeats`` repeats of ``iters`` replays of the ``copies`` weight copies'
    calls (repeated whole up to ``min_calls`` in each replay)."""

    samples_us: tuple[float, ...]
    copies: int
    iters: int
    median_us: float = field(init=False)
    min_us: float = field(init=False)
    max_us: float = field(init=False)

    def __post_init__(self):
        if len(self.samples_us) < 1:
            raise ValueError("Measurement.samples_us: expected at least one sample, found none")
        object.__setattr__(self, "median_us", statistics.median(self.samples_us))
        object.__setattr__(self, "min_us", min(self.samples_us))
        object.__setattr__(self, "max_us", max(self.samples_us))

    @property
    def spread(self) -> float:
        """(max - min) / median: the relative spread over the repeats."""
        return (self.max_us - self.min_us) / self.median_us if self.median_us > 0 else 0.0


def time_calls(calls: Sequence[Callable[[], object]], timer: Timer, repeats: int = 5,
               warmup: int = 2, target_s: float = 0.01, max_iters: int = 1000,
               min_calls: int = MIN_CALLS, warmup_s: float = WARMUP_S) -> Measurement:
    """Time ``calls`` (one per weight copy) with ``timer``; see the module docstring."""
    if not calls:
        raise ValueError("time_calls: expected at least one call, found none")
    if repeats < MIN_REPEATS:
        raise ValueError(f"time_calls: repeats must be >= {MIN_REPEATS}, found {repeats}")
    if min_calls < 1:
        raise ValueError(f"time_calls: min_calls must be >= 1, found {min_calls}")
    unit = list(calls) * math.ceil(min_calls / len(calls))
    replay = timer.build(unit)
    for _ in range(warmup):
        replay()
    one = timer.time(replay, 1)
    iters = max(1, min(max_iters, math.ceil(target_s / one))) if one > 0 else max_iters
    if warmup_s > 0:  # (replayed, not timed: at most 20 x max_iters replays)
        for _ in range(min(20 * max_iters, math.ceil(warmup_s / one)) if one > 0 else 0):
            replay()
    per_call = len(unit) * iters
    samples = tuple(timer.time(replay, iters) / per_call * 1e6 for _ in range(repeats))
    return Measurement(samples, len(calls), iters)


class CudaGraphTimer:
    """CUDA-graph capture of the calls, timed with CUDA events on the current stream."""

    def __init__(self, device=None):
        import torch

        self._torch = torch
        self.device = torch.device("cuda" if device is None else device)
        if self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        self._graphs = []  # keep the last graph (and its memory pool) alive while it is timed

    def build(self, calls):
        torch = self._torch
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):  # torch wants eager warm-up off the capture stream
            for call in calls:
                call()
        torch.cuda.current_stream(self.device).wait_stream(side)
        torch.cuda.synchronize(self.device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for call in calls:
                call()
        self._graphs = [graph]
        return graph.replay

    def time(self, replay, iters):
        torch = self._torch
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    def release(self):
        self._graphs = []


def host_overhead_us(call: Callable[[], object], n: int = 200, hold: Callable[[], None] | None = None,
                     sync: Callable[[], None] | None = None,
                     clock: Callable[[], float] = time.perf_counter) -> float:
    """Host time per eager ``call``, in microseconds.

    ``hold`` (e.g. a long ``torch.cuda._sleep``) keeps the device busy while the
    ``n`` calls are issued, so the wall time of the loop is host work only,
    not waiting for the GPU; ``sync`` waits for the device afterwards.
    """
    if n < 1:
        raise ValueError(f"host_overhead_us: n must be >= 1, found {n}")
    call()  # first call: lazy initialisation, caches
    if sync is not None:
        sync()
    if hold is not None:
        hold()
    t0 = clock()
    for _ in range(n):
        call()
    t1 = clock()
    if sync is not None:
        sync()
    return (t1 - t0) / n * 1e6
