"""The few CUDA driver calls the runtime needs, through ``cuda.bindings.driver``.

Every call is checked; a failure raises :class:`DeviceError` naming the call and
the CUDA error. On a machine without a driver (``cuInit`` raises there instead of
returning an error code) the first call raises ``DeviceError`` too. Nothing here
runs at import time: planning and compiling never touch the driver.
"""
from __future__ import annotations

import threading

from ..errors import DeviceError

__all__ = ["check", "ensure_init", "current_context", "load_function", "raw_stream", "encode_tensor_map_2d"]

_lock = threading.Lock()
_driver = None  # cuda.bindings.driver once initialised
_SUCCESS = None
_primary: dict[int, object] = {}  # device ordinal -> retained primary context


def _name(err) -> str:
    if isinstance(err, int) and _driver is not None:
        try:
            err = _driver.CUresult(err)
        except Exception:
            pass
    try:
        _, name = _driver.cuGetErrorName(err)
        _, text = _driver.cuGetErrorString(err)
        return f"{name.decode()} ({text.decode()})"
    except Exception:
        return repr(err)


def check(result, what: str):
    """Unpack a cuda.bindings result tuple, raising DeviceError unless it succeeded."""
    err = result[0]
    if err != _SUCCESS:
        raise DeviceError(f"{what} failed: {_name(err)}")
    return result[1] if len(result) == 2 else result[1:]


def ensure_init():
    """Initialise the driver once; returns the ``cuda.bindings.driver`` module."""
    global _driver, _SUCCESS
    if _driver is not None:
        return _driver
    with _lock:
        if _driver is not None:
            return _driver
        try:
            from cuda.bindings import driver
        except ImportError as e:
            raise DeviceError(f"cannot launch a kernel: cuda.bindings is not installed ({e})") from e
        try:
            (err,) = driver.cuInit(0)
        except RuntimeError as e:  # no libcuda: cuda.pathfinder raises instead of returning
            raise DeviceError("cannot launch a kernel: no CUDA driver on this machine "
                              f"(cuInit: {e}); planning and compiling work without one") from e
        _SUCCESS = driver.CUresult.CUDA_SUCCESS
        if err != _SUCCESS:
            _driver = driver
            try:
                raise DeviceError(f"cannot launch a kernel: cuInit failed: {_name(err)}")
            finally:
                _driver = None
        _driver = driver
        return driver


def current_context() -> int:
    """The current CUDA context's handle. When the thread has none, torch's
    primary context of ``torch.cuda.current_device()`` is made current."""
    drv = _driver or ensure_init()
    err, ctx = drv.cuCtxGetCurrent()
    if err != _SUCCESS:
        raise DeviceError(f"cuCtxGetCurrent failed: {_name(err)}")
    handle = int(ctx)
    if handle:
        return handle
    import torch

    if not torch.cuda.is_available():
        raise DeviceError("cannot launch a kernel: torch sees no CUDA device")
    ordinal = torch.cuda.current_device()
    with _lock:
        pctx = _primary.get(ordinal)
        if pctx is None:
            dev = check(drv.cuDeviceGet(ordinal), f"cuDeviceGet({ordinal})")
            pctx = check(drv.cuDevicePrimaryCtxRetain(dev), f"cuDevicePrimaryCtxRetain({ordinal})")
            _primary[ordinal] = pctx
    check(drv.cuCtxSetCurrent(pctx), "cuCtxSetCurrent")
    return int(pctx)


def load_function(cubin: bytes, symbol: str, smem_bytes: int, what: str):
    """Load ``cubin`` into the current context; returns ``(module, function)``."""
    drv = ensure_init()
    module = check(drv.cuModuleLoadData(cubin), f"cuModuleLoadData({what})")
    func = check(drv.cuModuleGetFunction(module, symbol.encode()), f"cuModuleGetFunction({what}, {symbol})")
    # dynamic + static shared memory above 48 KB needs the opt-in; the static part is
    # not known here, so opt in for any dynamic size from 32 KB up (it costs nothing)
    if smem_bytes > 32 * 1024:
        attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        check(drv.cuFuncSetAttribute(func, attr, smem_bytes),
              f"cuFuncSetAttribute({what}, MAX_DYNAMIC_SHARED_SIZE_BYTES={smem_bytes})")
    if smem_bytes > 0:
        # prefer the largest shared-memory carveout: otherwise the driver may size the
        # L1/shared split for one block of this kernel per SM (seen on the H200:
        # one 80 KB block per SM instead of two)
        attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
        check(drv.cuFuncSetAttribute(func, attr, 100),
              f"cuFuncSetAttribute({what}, PREFERRED_SHARED_MEMORY_CARVEOUT=100)")
    return module, func


_stream_of_fn = None


def stream_of(device_index: int) -> int:
    """The handle of torch's current stream on CUDA device ``device_index``."""
    global _stream_of_fn
    if _stream_of_fn is None:
        import torch

        _stream_of_fn = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda d: torch.cuda.current_stream(d).cuda_stream)
    return _stream_of_fn(device_index)


def raw_stream() -> int:
    """The handle of ``torch.cuda.current_stream()`` on the current device."""
    return stream_of(current_device_index())


_encode_fn = None


def encode_tensor_map_2d(out_addr: int, ptr: int, dim0: int, dim1: int, stride_bytes: int, box0: int,
                         box1: int) -> None:
    """Write the 128-byte CUtensorMap of a row-major 2D array of 16-bit values at ``ptr``
    (``dim0`` values per row, ``dim1`` rows, rows ``stride_bytes`` apart) into host memory at
    ``out_addr``: boxes of ``box0`` x ``box1`` values stored in 128-byte swizzle atoms,
    out-of-range elements read as zeros, 256-byte L2 promotion (cuTensorMapEncodeTiled, called
    through libcuda: a few hundred ns). Raises DeviceError with the driver's reason."""
    global _encode_fn
    import ctypes

    if _encode_fn is None:
        ensure_init()
        try:
            f = ctypes.CDLL("libcuda.so.1").cuTensorMapEncodeTiled
        except (OSError, AttributeError) as e:
            raise DeviceError(f"cuTensorMapEncodeTiled is not available from libcuda: {e}") from e
        f.restype = ctypes.c_int
        u32, u64p, u32p = ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32)
        f.argtypes = [ctypes.c_void_p, ctypes.c_int, u32, ctypes.c_void_p, u64p, u64p, u32p, u32p,
                      ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        _encode_fn = f
    dims = (ctypes.c_uint64 * 2)(dim0, dim1)
    strides = (ctypes.c_uint64 * 1)(stride_bytes)
    box = (ctypes.c_uint32 * 2)(box0, box1)
    estr = (ctypes.c_uint32 * 2)(1, 1)
    # UINT16, no interleave, SWIZZLE_128B, L2 promotion 256 B, no float OOB fill (zeros)
    err = _encode_fn(out_addr, 1, 2, ptr, dims, strides, box, estr, 0, 3, 3, 0)
    if err:
        raise DeviceError(f"cuTensorMapEncodeTiled(address={ptr:#x}, dims=({dim0}, {dim1}), row stride="
                          f"{stride_bytes} bytes, box=({box0}, {box1})) failed: {_name(err)} (the address must "
                          f"be 16-byte aligned and the row stride a multiple of 16 bytes)")


# ---------------------------------------------------------------- the launch hot path
_launch_fn = None
_device_fn = None


def function_registers(func) -> int:
    """Registers per thread of a loaded ``CUfunction``."""
    drv = ensure_init()
    attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS
    return int(check(drv.cuFuncGetAttribute(attr, func), "cuFuncGetAttribute(NUM_REGS)"))


def max_active_blocks(func, threads: int, smem: int) -> int:
    """How many CTAs of ``threads`` threads and ``smem`` bytes of dynamic shared memory of a loaded
    ``CUfunction`` one SM holds at once (cuOccupancyMaxActiveBlocksPerMultiprocessor: registers,
    shared memory, threads); 0 where the driver says nothing."""
    drv = ensure_init()
    try:
        err, n = drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, int(threads), int(smem))
    except (AttributeError, TypeError):  # (bindings without the call)
        return 0
    return int(n) if err == _SUCCESS else 0


def max_active_clusters(func, block: tuple[int, int, int], smem: int, cz: int) -> int:
    """How many clusters of 1 x 1 x ``cz`` CTAs of a loaded ``CUfunction`` (``block`` threads,
    ``smem`` bytes of dynamic shared memory each) the GPU holds at once
    (cuOccupancyMaxActiveClusters: the GPCs' SMs and each SM's room); 0 where the driver says
    nothing (clusters unsupported, an older driver)."""
    drv = ensure_init()
    try:
        cfg = drv.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = 1, 1, int(cz)
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = (int(b) for b in block)
        cfg.sharedMemBytes = int(smem)
        attr = drv.CUlaunchAttribute()
        attr.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = 1, 1, int(cz)
        cfg.attrs = [attr]
        cfg.numAttrs = 1
        err, n = drv.cuOccupancyMaxActiveClusters(func, cfg)
    except (AttributeError, TypeError):  # (bindings without the call)
        return 0
    return int(n) if err == _SUCCESS else 0


def current_device_index() -> int:
    """torch's current CUDA device index (fast C call where torch has one)."""
    global _device_fn
    if _device_fn is None:
        import torch

        _device_fn = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
    return _device_fn()


def launch_raw(fn: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, smem: int, stream: int,
               args_ptr: int) -> int:
    """cuLaunchKernel with pre-packed arguments; returns the CUresult as an int."""
    global _launch_fn
    if _launch_fn is None:
        _launch_fn = _make_launcher()
    return _launch_fn(fn, gx, gy, gz, bx, by, bz, smem, stream, args_ptr)


_launch_pdl_fn = None


def launch_raw_pdl(fn: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, smem: int, stream: int,
                   args_ptr: int) -> int:
    """launch_raw with programmatic stream serialization allowed (cuLaunchKernelEx, programmatic
    dependent launch: the kernel may start before the previous kernel of the stream has finished,
    and waits for it itself with griddepcontrol.wait); returns the CUresult as an int."""
    global _launch_pdl_fn
    if _launch_pdl_fn is None:
        _launch_pdl_fn = _make_pdl_launcher()
    return _launch_pdl_fn(fn, gx, gy, gz, bx, by, bz, smem, stream, args_ptr)


def _make_pdl_launcher():
    """cuLaunchKernelEx with the programmatic-serialization attribute (see launch_raw_ex): the native
    module's own ten-argument entry where it is built; without libcuda's symbol (cuda.bindings only),
    the plain launch."""
    ex, mod = _make_ex_launcher()
    if ex is None:
        return launch_raw
    if mod is not None:
        return mod.launch_pdl
    return lambda fn, gx, gy, gz, bx, by, bz, smem, stream, args: ex(fn, gx, gy, gz, bx, by, bz, smem, stream,
                                                                      args, 1, 1)


def launch_any(fn: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, smem: int, stream: int,
               args_ptr: int, pdl: bool, cz: int) -> int:
    """The launch a plan asks for: clusters of 1 x 1 x ``cz`` CTAs (launch_raw_ex), else programmatic
    (launch_raw_pdl) if ``pdl``, else plain (launch_raw); returns the CUresult as an int."""
    if cz > 1:
        return launch_raw_ex(fn, gx, gy, gz, bx, by, bz, smem, stream, args_ptr, int(pdl), cz)
    go = launch_raw_pdl if pdl else launch_raw
    return go(fn, gx, gy, gz, bx, by, bz, smem, stream, args_ptr)


_launch_ex_fn = None


def launch_raw_ex(fn: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, smem: int, stream: int,
                  args_ptr: int, pdl: int, cz: int) -> int:
    """launch_raw through cuLaunchKernelEx with programmatic stream serialization if ``pdl`` (see
    launch_raw_pdl) and thread-block clusters of 1 x 1 x ``cz`` CTAs if ``cz`` > 1 (sm_90+: the grid's z
    extent a multiple of ``cz``, at most 8); returns the CUresult as an int (CUDA_ERROR_NOT_SUPPORTED
    without libcuda's cuLaunchKernelEx)."""
    global _launch_ex_fn
    if _launch_ex_fn is None:
        _launch_ex_fn = _make_ex_launcher()[0] or (lambda *a: 801)  # (CUDA_ERROR_NOT_SUPPORTED)
    return _launch_ex_fn(fn, gx, gy, gz, bx, by, bz, smem, stream, args_ptr, pdl, cz)


def _make_ex_launcher():
    """cuLaunchKernelEx with up to two attributes (launch_raw_ex's arguments) and the native module
    whose entries call it: (the native entry, the module), else (ctypes, None); (None, None) without
    libcuda's symbol."""
    import ctypes

    ensure_init()
    try:
        f = ctypes.CDLL("libcuda.so.1").cuLaunchKernelEx
    except (OSError, AttributeError):
        return None, None
    from . import native

    mod = native.load()
    if mod is not None:
        mod.set_entry_ex(ctypes.cast(f, ctypes.c_void_p).value)
        return mod.launch_ex, mod

    class Attr(ctypes.Structure):  # cuda.h's CUlaunchAttribute: an id, padding to 8, a 64-byte union
        _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint * 3),
                    ("rest", ctypes.c_char * 52)]

    class Config(ctypes.Structure):  # CUlaunchConfig
        _fields_ = [("dims", ctypes.c_uint * 7), ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(Attr)),
                    ("nattrs", ctypes.c_uint)]

    f.restype = ctypes.c_int
    f.argtypes = [ctypes.POINTER(Config), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    attrs = (Attr * 2)()
    cfg = Config(attrs=attrs)

    def via_ctypes(fn, gx, gy, gz, bx, by, bz, smem, stream, args, pdl, cz):
        n = 0
        if pdl:  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            attrs[n].id, attrs[n].value[:] = 6, (1, 0, 0)
            n += 1
        if cz > 1:  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            attrs[n].id, attrs[n].value[:] = 4, (1, 1, cz)
            n += 1
        cfg.dims[:] = (gx, gy, gz, bx, by, bz, smem)
        cfg.stream = stream or None
        cfg.nattrs = n
        return f(ctypes.byref(cfg), fn, args, None)
    return via_ctypes, None


def _make_launcher():
    """The fastest working cuLaunchKernel: the native entry (``native.py``) on libcuda's
    own symbol, else ctypes on it, else the cuda.bindings wrapper."""
    global launch_path
    drv = ensure_init()
    try:  # libcuda directly: the process already has it loaded (cuInit succeeded)
        import ctypes

        lib = ctypes.CDLL("libcuda.so.1")
        f = lib.cuLaunchKernel
    except (OSError, AttributeError):
        def via_bindings(fn, gx, gy, gz, bx, by, bz, smem, stream, args):
            err = drv.cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, smem, stream, args, 0)[0]
            return 0 if err == _SUCCESS else int(err)
        launch_path = "cuda.bindings"
        return via_bindings
    from . import native

    mod = native.load()
    if mod is not None:
        mod.set_entry(ctypes.cast(f, ctypes.c_void_p).value)
        launch_path = "native"
        return mod.launch
    f.restype = ctypes.c_int
    u = ctypes.c_uint
    f.argtypes = [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    launch_path = "ctypes"
    return lambda fn, gx, gy, gz, bx, by, bz, smem, stream, args: f(fn, gx, gy, gz, bx, by, bz, smem,
                                                                      stream or None, args, None)


#: which cuLaunchKernel the hot path calls: "native", "ctypes" or "cuda.bindings" (None before the first launch)
launch_path: str | None = None
