"""KernelSpec: everything that decides what one compiled kernel is.

A spec is a frozen, hashable value. Two equal specs always produce the same
source, so the runtime can use a spec as its in-memory cache key, and the
disk-cache key is derived from the source it renders to (see ``cache.py``).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

__all__ = ["KernelSpec", "RESERVED_CONFIG_NAMES"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_QUALIFIED = re.compile(r"^(::)?[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")
_TARGET = re.compile(r"^sm_[0-9]{2,3}[af]?$")

#: Names codegen adds to ``HummingConfig`` itself (from the spec's launch fields).
RESERVED_CONFIG_NAMES = frozenset({"THREADS", "SMEM_BYTES", "MIN_BLOCKS"})


def _bad(field_name: str, expected: str, found) -> ValueError:
    return ValueError(f"KernelSpec.{field_name}: expected {expected}, found {found!r}")


@dataclass(frozen=True)
class KernelSpec:
    """One kernel, fully determined.

    Fields
    ------
    family:
        kernel family name ("act_quant", "gemm", ...): used in file names and logs.
    header:
        the header holding the entry template, relative to an include root,
        e.g. ``"humming/kernels/act_quant.cuh"``.
    entry:
        a ``__device__`` function template taking the config struct as its only
        template parameter, e.g. ``"humming::act_quant"``.
    params:
        the C++ type of the single by-value kernel argument, e.g.
        ``"humming::ActQuantParams"``.
    config:
        ``(name, value)`` pairs of every compile-time constant (int, bool or
        float); a dict is accepted and stored sorted by name.
    target:
        the compile target, e.g. ``"sm_90a"`` (from the capability file).
    threads:
        the block size; also ``HummingConfig::THREADS``.
    smem_bytes:
        dynamic shared memory per block; also ``HummingConfig::SMEM_BYTES``.
    min_blocks:
        the second ``__launch_bounds__`` argument (0: not given).
    defines:
        extra ``(MACRO, value)`` pairs defined before the include (e.g.
        ``("USE_PPU", "1")``).
    cluster:
        CTAs per thread-block cluster along x (``__cluster_dims__(cluster, 1, 1)`` on the
        entry; sm_90 and later); 1: no cluster. Launches of such a kernel need a grid
        whose x extent is a multiple of it.
    params_size:
        ``sizeof(params)`` as the host declares it (``ctypes.sizeof`` of the
        matching Structure); when non-zero the generated source asserts it, so a
        host/device layout mismatch is a compile error, not a wrong result.
    """

    family: str
    header: str
    entry: str
    params: str
    config: tuple = ()
    target: str = "sm_90a"
    threads: int = 128
    smem_bytes: int = 0
    min_blocks: int = 0
    defines: tuple = ()
    params_size: int = 0
    cluster: int = 1
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self):
        if not isinstance(self.family, str) or not _IDENT.match(self.family):
            raise _bad("family", "an identifier such as 'act_quant'", self.family)
        if not isinstance(self.header, str) or not self.header or self.header.startswith("/") \
                or ".." in self.header.split("/") or '"' in self.header:
            raise _bad("header", "a path relative to an include root", self.header)
        for name in ("entry", "params"):
            v = getattr(self, name)
            if not isinstance(v, str) or not _QUALIFIED.match(v):
                raise _bad(name, "a C++ qualified name such as 'humming::act_quant'", v)
        if not isinstance(self.target, str) or not _TARGET.match(self.target):
            raise _bad("target", "an SM target such as 'sm_90a'", self.target)
        for name, lo in (("threads", 1), ("smem_bytes", 0), ("min_blocks", 0), ("params_size", 0), ("cluster", 1)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                raise _bad(name, f"an integer >= {lo}", v)
        if self.threads > 1024:
            raise _bad("threads", "at most 1024", self.threads)
        if self.cluster > 8 or (self.cluster > 1 and self.arch < 90):
            raise _bad("cluster", f"1, or at most 8 CTAs on sm_90 or later (target {self.target})", self.cluster)
        object.__setattr__(self, "config", self._normalize_config(self.config))
        object.__setattr__(self, "defines", self._normalize_defines(self.defines))
        object.__setattr__(self, "_hash", hash((self.family, self.header, self.entry, self.params,
                                                self.config, self.target, self.threads,
                                                self.smem_bytes, self.min_blocks, self.defines,
                                                self.params_size, self.cluster)))

    @staticmethod
    def _pairs(field_name: str, items) -> dict:
        """``(identifier, value)`` pairs (or a dict) as a dict, each name once."""
        out = {}
        for item in (items.items() if isinstance(items, dict) else items):
            if not (isinstance(item, tuple) and len(item) == 2):
                raise _bad(field_name, "(name, value) pairs", item)
            name, value = item
            if not isinstance(name, str) or not _IDENT.match(name):
                raise _bad(field_name, "identifier names", name)
            if name in out:
                raise _bad(field_name, "each name once", name)
            out[name] = value
        return out

    @classmethod
    def _normalize_config(cls, config) -> tuple:
        out = cls._pairs("config", config)
        for name, value in out.items():
            if name in RESERVED_CONFIG_NAMES:
                raise _bad("config", f"no reserved name ({', '.join(sorted(RESERVED_CONFIG_NAMES))}: "
                           "they come from the spec's launch fields)", name)
            if not isinstance(value, (bool, int, float)):
                raise _bad(f"config[{name!r}]", "an int, bool or float", value)
            if isinstance(value, float) and not math.isfinite(value):
                raise _bad(f"config[{name!r}]", "a finite float", value)
        return tuple(sorted(out.items()))

    @classmethod
    def _normalize_defines(cls, defines) -> tuple:
        out = {name: str(value) for name, value in cls._pairs("defines", defines).items()}
        for name, value in out.items():
            if "\n" in value:
                raise _bad(f"defines[{name!r}]", "a one-line value", value)
        return tuple(sorted(out.items()))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):  # rebuild (and re-hash) on unpickling: str hashes differ per process
        return (type(self), (self.family, self.header, self.entry, self.params, self.config, self.target,
                             self.threads, self.smem_bytes, self.min_blocks, self.defines, self.params_size,
                             self.cluster))

    def get(self, name: str, default=None):
        """The value of config constant ``name``."""
        for k, v in self.config:
            if k == name:
                return v
        return default

    @property
    def arch(self) -> int:
        """The SM number of the target (90 for ``sm_90a``)."""
        return int(self.target[3:].rstrip("af"))

    @property
    def name(self) -> str:
        """A short human-readable name: family, target and the config values."""
        vals = "_".join(f"{k}{int(v) if isinstance(v, bool) else v}" for k, v in self.config)
        return f"{self.family}[{self.target}]{('_' + vals) if vals else ''}"
