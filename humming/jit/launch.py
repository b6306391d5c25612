"""Loaded kernels and launch plans.

:class:`Kernel` is a compiled binary plus its spec; it loads itself lazily into
each CUDA context that launches it (one module per context).

:class:`LaunchPlan` is built once, when weights are prepared: it owns the
kernel's parameter struct (a ``ctypes.Structure`` laid out like the C++ one),
the ``void*[1]`` argument array pointing at it, and the grid, block and shared
memory. A call writes only what changed (pointers, M) into ``plan.params`` and
calls :meth:`LaunchPlan.launch`. The driver copies the arguments at launch time,
so the struct may be rewritten right after; the path does no allocation and no
synchronisation, so it can be captured in a CUDA graph. A plan is not meant to
be shared between threads that launch at the same time.
"""
from __future__ import annotations

import ctypes
import threading

from ..errors import DeviceError
from . import driver as _drv
from .codegen import ENTRY_SYMBOL
from .spec import KernelSpec

__all__ = ["Kernel", "LaunchPlan"]


class Kernel:
    """A compiled kernel: ``spec``, ``key``, ``cubin``, ``meta`` (cache metadata)."""

    __slots__ = ("spec", "key", "cubin", "meta", "origin", "_functions", "_modules", "_lock")

    def __init__(self, spec: KernelSpec, key: str, cubin: bytes, meta: dict, origin: str):
        self.spec = spec
        self.key = key
        self.cubin = cubin
        self.meta = meta
        self.origin = origin  # "compiled" or "disk": where this process got it
        self._functions: dict[int, object] = {}
        self._modules: dict[int, object] = {}
        self._lock = threading.Lock()

    def function(self):
        """The ``CUfunction`` in the current context (loaded on first use)."""
        ctx = _drv.current_context()
        f = self._functions.get(ctx)
        if f is None:
            with self._lock:
                f = self._functions.get(ctx)
                if f is None:
                    module, f = _drv.load_function(self.cubin, ENTRY_SYMBOL, self.spec.smem_bytes,
                                                   self.spec.name)
                    self._modules[ctx] = module
                    self._functions[ctx] = f
        return f

    def num_regs(self) -> int:
        """Registers per thread of the loaded kernel (the driver's count, in the current context)."""
        return _drv.function_registers(self.function())

    def plan(self, params: ctypes.Structure, grid=(1, 1, 1), block=None, smem_bytes=None) -> "LaunchPlan":
        return LaunchPlan(self, params, grid, block, smem_bytes)

    def __repr__(self) -> str:
        return f"<Kernel {self.spec.name} key={self.key[:12]} {len(self.cubin)} bytes ({self.origin})>"


def _dim3(value, what: str) -> tuple[int, int, int]:
    dims = (value,) if isinstance(value, int) else tuple(value)
    if not 1 <= len(dims) <= 3 or any(not isinstance(d, int) or d < 1 for d in dims):
        raise ValueError(f"LaunchPlan.{what}: expected 1 to 3 positive ints, found {value!r}")
    return dims + (1,) * (3 - len(dims))


class LaunchPlan:
    """Everything a launch needs, prepared once (see the module docstring)."""

    __slots__ = ("kernel", "params", "grid", "block", "smem_bytes", "pdl", "cluster_z", "_args", "_args_ptr", "_fn",
                 "_dev")

    def __init__(self, kernel: Kernel, params: ctypes.Structure, grid=(1, 1, 1), block=None,
                 smem_bytes: int | None = None):
        if not isinstance(params, ctypes.Structure):
            raise TypeError(f"LaunchPlan.params: expected a ctypes.Structure, found {type(params).__name__}")
        spec = kernel.spec
        if spec.params_size and ctypes.sizeof(params) != spec.params_size:
            raise ValueError(f"LaunchPlan.params: {spec.params} is {spec.params_size} bytes in the spec, "
                             f"found a {type(params).__name__} of {ctypes.sizeof(params)} bytes")
        self.kernel = kernel
        self.params = params
        self.grid = _dim3(grid, "grid")
        self.block = _dim3(block if block is not None else spec.threads, "block")
        self.smem_bytes = spec.smem_bytes if smem_bytes is None else int(smem_bytes)
        # programmatic dependent launch (sm_90+): the kernel may start before the previous kernel of
        # the stream has finished; it must wait for it (griddepcontrol.wait) before touching its data
        self.pdl = False
        # thread-block clusters of 1 x 1 x cluster_z CTAs (sm_90+; 1: none), set per launch by the caller (the
        # split-K slices of a tile as one cluster: the grid's z extent is a multiple of it)
        self.cluster_z = 1
        self._args = (ctypes.c_void_p * 1)(ctypes.addressof(params))
        self._args_ptr = ctypes.addressof(self._args)
        self._fn = None   # CUfunction handle (int) for device self._dev, resolved on first launch
        self._dev = -1

    def launch(self, grid_x: int = 0, stream: int | None = None, pdl: bool = True) -> None:
        """Launch on ``stream`` (default: torch's current stream) with the plan's
        grid, or ``grid_x`` blocks along x when given (e.g. from M); programmatically
        where the plan says so (``self.pdl``) and the caller allows it (``pdl``).

        The hot path is one cached device check and one driver call (through
        ctypes when libcuda can be opened directly: a few hundred ns cheaper than
        the cuda.bindings wrapper)."""
        if self._fn is None:  # first launch: load the module into this context
            self._fn = int(self.kernel.function())
            self._dev = _drv.current_device_index()
        elif _drv.current_device_index() != self._dev:
            self._fn = int(self.kernel.function())
            self._dev = _drv.current_device_index()
        if stream is None:
            stream = _drv.raw_stream()
        g = self.grid
        b = self.block
        cz = self.cluster_z
        dims = (grid_x or g[0], g[1], g[2], b[0], b[1], b[2], self.smem_bytes, stream, self._args_ptr)
        prog = self.pdl and pdl
        err = _drv.launch_any(self._fn, *dims, prog, cz)
        if err:
            # e.g. a thread without a current context: resolve through the slow path once
            self._fn = int(self.kernel.function())
            err = _drv.launch_any(self._fn, *dims, prog, cz)
        if err and prog:  # a driver that refuses the programmatic launch: plain launches from now on
            self.pdl = False  # (a cluster launch keeps its clusters: the kernel counts on them)
            err = _drv.launch_any(self._fn, *dims, False, cz)
        if err:
            c = self.kernel.spec.cluster
            hint = (f" (clusters of {c} CTAs along x: the grid's x extent must be a multiple of {c})" if c > 1 else
                    f" (clusters of 1 x 1 x {cz} CTAs: the grid's z extent must be a multiple of {cz}, at most 8)"
                    if cz > 1 else "")
            raise DeviceError(f"cuLaunchKernel({self.kernel.spec.name}, grid=({grid_x or g[0]}, {g[1]}, "
                              f"{g[2]}), block={b}, smem={self.smem_bytes}) failed: {_drv._name(err)}{hint}")
