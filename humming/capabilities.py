"""Device capabilities: the YAML tables in ``capabilities/`` as validated, queryable objects.

Every fact about a GPU that differs between chips lives in one YAML file per
architecture (``sm_90.yaml``), product (``h200.yaml``) or device
(``zhenwu-810e.yaml``). This module validates each file against the schema in
this module, resolves ``extends`` chains and answers the planner's questions::

    from humming import capabilities as C
    caps = C.load("H20")                     # names ignore case, '-', '_' and spaces
    caps.supports_mma("e4m3", acc="fp32")    # False: sm_90 emulates fp8 mma.sync
    caps.find_mma("e4m3", families=("wgmma",))
    caps.can_convert("e4m3", "fp16"), caps.has("tma"), caps.limit("smem_per_block_optin")

File format (``schema: 1``)
---------------------------
Top-level keys: ``schema``, ``name``, ``kind`` (architecture | product |
device), ``extends``, ``aliases``, ``description``, ``provisional`` (``true``
or a list of key paths whose values are not public facts), ``sources``
(required when anything is provisional), ``compute_capability`` ([major,
minor]), ``compile`` (``nvrtc``/``nvcc``/``plain`` target names or null,
``min_cuda``, ``nvcc_flags``, ``nvrtc_flags``), ``tensor_core`` (one list of
ops per family in :data:`FAMILIES`), ``conversions``, ``memory`` (one boolean
per name in :data:`MEMORY_FEATURES`), ``limits`` (integers, keys in
:data:`LIMIT_KEYS`) and ``product`` (``sm_count``, ``bandwidth_gbs``,
``memory_gb``, ``l2_bytes``, ``peak_tflops`` keyed by :data:`PEAK_KEYS`,
``match``: regular expressions searched in the device name).

An op is ``{a, b, acc, shapes, native, kind, scale_vec, scale_types,
sass_patch, provisional, source, note}``. ``a``/``b``/``acc`` take one type
name or a list; ``b`` defaults to ``a``; every (a, b) combination of the two
lists is supported. A shape is ``m16n8k16``, or ``m64n8-256/8k16`` for "N from
8 to 256 in steps of 8". ``native: false`` marks an instruction that compiles
but is emulated by other instructions (e.g. fp8 ``mma.sync`` on sm_90).
``sass_patch: true`` marks operand encodings with no PTX name (e0m3, e3m4),
reachable only by patching the cubin; only pairs that use such a type are
taken from those entries. A conversion is ``{src, dst, native, source}``
(every src → dst pair of the lists).

Resolution of ``extends``: a root file (no ``extends``) must give
``compute_capability``, ``compile``, ``tensor_core``, ``conversions``,
``memory`` (every feature) and ``limits``. A child's mappings merge into the
parent's key by key (the child wins); a list in the child (ops, conversions,
match) replaces the parent's list whole. ``name``, ``kind``, ``aliases``,
``description`` and ``provisional`` belong to each file; ``sources``
accumulate from the root to the child.
"""
from __future__ import annotations

import difflib
import importlib.resources
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

import yaml

from .errors import FormatError

__all__ = [
    "CapabilityError", "Capabilities", "MmaOp", "Conversion", "ProductFigures",
    "load", "load_file", "names", "register_directory", "by_compute_capability",
    "match_device_name", "parse_shape",
    "TYPE_NAMES", "FAMILIES", "KINDS", "MEMORY_FEATURES", "LIMIT_KEYS", "PEAK_KEYS", "FILE_KINDS",
]

SCHEMA_VERSION = 1

#: Number-format names a capability file may use (those of ``humming.dtypes``, plus int32 for accumulators).
TYPE_NAMES = frozenset(
    [f"int{b}" for b in range(1, 9)] + [f"uint{b}" for b in range(1, 9)]
    + ["e2m1", "e3m2", "e2m3", "e4m3", "e5m2", "e8m0", "e0m3", "e3m4",
       "fp16", "bf16", "fp32", "tf32", "int32"])
#: Operand encodings that exist in some tensor cores but have no PTX type.
SASS_ONLY_TYPES = frozenset(["e0m3", "e3m4"])
FAMILIES = ("mma_sync", "wgmma", "tcgen05")
#: ``.kind`` qualifiers of tcgen05.mma and of sm_120's mma.sync; the ``mx*`` ones are block-scaled.
KINDS = ("f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")
BLOCK_SCALED_KINDS = frozenset(["mxf8f6f4", "mxf4", "mxf4nvf4"])
MEMORY_FEATURES = {
    "cp_async": "cp.async global->shared copies",
    "ldmatrix": "ldmatrix b16 fragment loads",
    "ldmatrix_b8": "ldmatrix m16n16 .b8 and m8n16 .b8x16 (b4/b6 -> b8 expanding) forms",
    "stmatrix": "stmatrix fragment stores",
    "tma": "cp.async.bulk.tensor (Tensor Memory Accelerator)",
    "tma_multicast": "TMA .multicast::cluster in hardware (not a software fallback)",
    "clusters": "thread block clusters and distributed shared memory",
    "setmaxnreg": "setmaxnreg register reallocation between warpgroups",
    "pdl": "programmatic dependent launch (griddepcontrol)",
    "tmem": "tensor memory (tcgen05.alloc/ld/st)",
}
LIMIT_KEYS = {
    "smem_per_sm": "shared memory per SM, bytes",
    "smem_per_block": "shared memory per block without opt-in, bytes",
    "smem_per_block_optin": "largest dynamic shared memory per block with opt-in, bytes",
    "smem_reserved_per_block": "shared memory the driver reserves per block, bytes",
    "regs_per_sm": "32-bit registers per SM",
    "regs_per_block": "32-bit registers per block",
    "regs_per_thread": "32-bit registers per thread",
    "threads_per_block": "threads per block",
    "threads_per_sm": "resident threads per SM",
    "blocks_per_sm": "resident blocks per SM",
    "warp_size": "threads per warp",
    "max_cluster_size": "largest cluster (with the non-portable opt-in where the chip has one)",
    "portable_cluster_size": "largest cluster every chip of the architecture accepts",
    "tmem_columns": "tensor-memory columns per SM (32-bit, 128 lanes)",
    "l2_bytes": "L2 cache, bytes, where it is the same on every chip of the architecture",
}
#: Root architecture files must give these limits.
REQUIRED_LIMITS = ("smem_per_sm", "smem_per_block_optin", "regs_per_thread", "threads_per_block", "warp_size")
#: Keys of ``product.peak_tflops``: dense rates, fp32 accumulation for floats (int32 for integers).
PEAK_KEYS = ("fp16", "bf16", "tf32", "fp8", "fp6", "fp4", "int8", "int4")
FILE_KINDS = ("architecture", "product", "device")
COMPILERS = ("nvrtc", "nvcc", "plain")

_SHAPE_RE = re.compile(r"^m(\d+)n(\d+)(?:-(\d+)/(\d+))?k(\d+)$")
_TARGET_RE = re.compile(r"^sm_\d+[af]?$")
_VERSION_RE = re.compile(r"^\d+\.\d+$")


class CapabilityError(FormatError):
    """A capability file is malformed, or a name asked of the capability tables is unknown.

    ``file`` and ``key`` (a path such as ``tensor_core.mma_sync[3].acc``) say
    where the problem is, when it is in a file.
    """

    def __init__(self, message: str, file: str | None = None, key: str | None = None):
        self.file = file
        self.key = key
        where = ": ".join(p for p in (file, key) if p)
        super().__init__(f"{where}: {message}" if where else message)


# --------------------------------------------------------------------------------------------
# Schema: small checkers that validate and normalise one value, raising _Invalid(path, message)
# --------------------------------------------------------------------------------------------

class _Invalid(Exception):
    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path
        self.message = message


def _kind_of(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _str(value, path):
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(path, f"expected a non-empty string, found {_kind_of(value)} {value!r}")
    return value


def _bool(value, path):
    if not isinstance(value, bool):
        raise _Invalid(path, f"expected true or false, found {_kind_of(value)} {value!r}")
    return value


def _int(value, path):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Invalid(path, f"expected a non-negative integer, found {_kind_of(value)} {value!r}")
    return value


def _number(value, path):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise _Invalid(path, f"expected a positive number, found {_kind_of(value)} {value!r}")
    return value


def _one_of(choices: Iterable) -> Callable:
    choices = tuple(choices)

    def check(value, path):
        if value not in choices:
            raise _Invalid(path, f"expected one of {', '.join(map(str, choices))}; found {value!r}")
        return value
    return check


def _list(item: Callable, scalar_ok: bool = False, min_len: int = 0) -> Callable:
    def check(value, path):
        if scalar_ok and not isinstance(value, list):
            return (item(value, path),)
        if not isinstance(value, list):
            raise _Invalid(path, f"expected a list, found {_kind_of(value)} {value!r}")
        if len(value) < min_len:
            raise _Invalid(path, f"expected at least {min_len} item(s), found {len(value)}")
        return tuple(item(v, _join(path, i)) for i, v in enumerate(value))
    return check


def _type_name(value, path):
    if not isinstance(value, str) or value not in TYPE_NAMES:
        near = difflib.get_close_matches(str(value), sorted(TYPE_NAMES), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise _Invalid(path, f"unknown type name {value!r}{hint}; known: {', '.join(sorted(TYPE_NAMES))}")
    return value


_types = _list(_type_name, scalar_ok=True, min_len=1)


def _shape(value, path):
    if not isinstance(value, str) or not _SHAPE_RE.match(value):
        raise _Invalid(path, f"expected a shape like 'm16n8k16' or 'm64n8-256/8k16', found {value!r}")
    parse_shape(value)  # range sanity
    return value


def _target(value, path):
    if value is None:
        return None
    if not isinstance(value, str) or not _TARGET_RE.match(value):
        raise _Invalid(path, f"expected a target name like 'sm_90a' or null, found {value!r}")
    return value


def _version(value, path):
    if not isinstance(value, str) or not _VERSION_RE.match(value):
        raise _Invalid(path, f"expected a version string like '13.4', found {_kind_of(value)} {value!r}")
    return value


def _regex(value, path):
    _str(value, path)
    try:
        re.compile(value)
    except re.error as exc:
        raise _Invalid(path, f"invalid regular expression {value!r}: {exc}") from None
    return value


def _compute_capability(value, path):
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)):
        raise _Invalid(path, f"expected [major, minor] integers, found {value!r}")
    return tuple(value)


def _provisional(value, path):
    if isinstance(value, bool):
        return value
    return _list(_str, min_len=1)(value, path)


def _record(fields: Mapping[str, Callable], required: Iterable[str] = ()) -> Callable:
    required = tuple(required)

    def check(value, path):
        if not isinstance(value, dict):
            raise _Invalid(path or "<top level>", f"expected a mapping, found {_kind_of(value)} {value!r}")
        out = {}
        for key, item in value.items():
            if key not in fields:
                near = difflib.get_close_matches(str(key), list(fields), n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise _Invalid(_join(path, str(key)), f"unknown key{hint}; known keys: {', '.join(fields)}")
            out[key] = fields[key](item, _join(path, key))
        for key in required:
            if key not in value:
                raise _Invalid(_join(path, key), "missing required key")
        return out
    return check


def _flags(value, path):
    return _record({k: _bool for k in MEMORY_FEATURES})(value, path)


_OP = _record({
    "a": _types, "b": _types, "acc": _types, "shapes": _list(_shape, scalar_ok=True, min_len=1),
    "native": _bool, "kind": _one_of(KINDS), "scale_vec": _list(_one_of((1, 2, 4)), scalar_ok=True, min_len=1),
    "scale_types": _types, "sass_patch": _bool, "provisional": _bool, "source": _str, "note": _str,
}, required=("a", "acc", "shapes"))

_CONVERSION = _record({"src": _types, "dst": _types, "native": _bool, "source": _str, "note": _str},
                      required=("src", "dst"))

_FILE = _record({
    "schema": _one_of((SCHEMA_VERSION,)),
    "name": _str,
    "kind": _one_of(FILE_KINDS),
    "extends": _str,
    "aliases": _list(_str),
    "description": _str,
    "provisional": _provisional,
    "sources": _list(_str),
    "compute_capability": _compute_capability,
    "compile": _record({"nvrtc": _target, "nvcc": _target, "plain": _target, "min_cuda": _version,
                        "nvcc_flags": _list(_str), "nvrtc_flags": _list(_str)}),
    "tensor_core": _record({f: _list(_OP) for f in FAMILIES}),
    "conversions": _list(_CONVERSION),
    "memory": _flags,
    "limits": _record({k: _int for k in LIMIT_KEYS}),
    "product": _record({
        "sm_count": _int, "bandwidth_gbs": _number, "memory_gb": _number, "l2_bytes": _int,
        "peak_tflops": _record({k: _number for k in PEAK_KEYS}), "match": _list(_regex),
    }),
}, required=("schema", "name", "kind"))

_ROOT_SECTIONS = ("compute_capability", "compile", "tensor_core", "conversions", "memory", "limits")
_OWN_KEYS = ("name", "kind", "extends", "aliases", "description", "provisional", "sources")


def _check_op(op: dict, family: str, path: str) -> None:
    kind = op.get("kind")
    if family == "tcgen05" and kind is None:
        raise _Invalid(_join(path, "kind"), "missing required key (every tcgen05 op names its .kind)")
    if family == "wgmma" and kind is not None:
        raise _Invalid(_join(path, "kind"), "wgmma ops take no kind")
    scaled = kind in BLOCK_SCALED_KINDS
    for key in ("scale_vec", "scale_types"):
        if scaled and key not in op:
            raise _Invalid(_join(path, key), f"missing required key (kind {kind} is block-scaled)")
        if not scaled and key in op:
            raise _Invalid(_join(path, key), f"only block-scaled kinds ({', '.join(sorted(BLOCK_SCALED_KINDS))}) "
                                             f"take {key}; this op's kind is {kind}")
    ks = {parse_shape(s)[2] for s in op["shapes"]}
    if scaled and any(k % v for k in ks for v in op["scale_vec"]):
        raise _Invalid(_join(path, "scale_vec"), f"scale_vec {list(op['scale_vec'])} does not divide K of {list(op['shapes'])}")
    used = set(op["a"]) | set(op.get("b", op["a"]))
    if not op.get("sass_patch") and used & SASS_ONLY_TYPES:
        raise _Invalid(_join(path, "a"), f"{', '.join(sorted(used & SASS_ONLY_TYPES))} has no PTX type; "
                                         "mark the op 'sass_patch: true'")
    if op.get("sass_patch") and not used & SASS_ONLY_TYPES:
        raise _Invalid(_join(path, "sass_patch"), f"sass_patch ops must use one of {', '.join(sorted(SASS_ONLY_TYPES))}")
    if op.get("provisional") and "source" not in op:
        raise _Invalid(_join(path, "source"), "missing required key (a provisional op says where it comes from)")


def _lookup_path(doc: Mapping, dotted: str) -> bool:
    node: Any = doc
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _validate(raw: Any) -> dict:
    """Validate one parsed file; returns the normalised document or raises _Invalid."""
    doc = _FILE(raw, "")
    for family, ops in doc.get("tensor_core", {}).items():
        for i, op in enumerate(ops):
            _check_op(op, family, f"tensor_core.{family}[{i}]")
    if doc["kind"] == "product" and "extends" not in doc:
        raise _Invalid("extends", "missing required key (a product extends an architecture)")
    if "product" in doc and doc["kind"] == "architecture":
        raise _Invalid("product", "architecture files describe no single product; put figures in a product file")
    prov = doc.get("provisional", False)
    if prov and not doc.get("sources"):
        raise _Invalid("sources", "missing required key (a provisional file says where its facts come from)")
    if isinstance(prov, tuple):
        for i, dotted in enumerate(prov):
            if not _lookup_path(doc, dotted):
                raise _Invalid(f"provisional[{i}]", f"names {dotted!r}, which this file does not set")
    if "extends" not in doc:
        for key in _ROOT_SECTIONS:
            if key not in doc:
                raise _Invalid(key, "missing required key (a file that extends nothing declares every section)")
        for key in COMPILERS:
            if key not in doc["compile"]:
                raise _Invalid(f"compile.{key}", "missing required key (a root file names every target, or null)")
        missing = [k for k in MEMORY_FEATURES if k not in doc["memory"]]
        if missing:
            raise _Invalid(f"memory.{missing[0]}", "missing required key (a root file declares every memory "
                                                   f"feature true or false; missing: {', '.join(missing)})")
        if doc["kind"] == "architecture":
            for key in REQUIRED_LIMITS:
                if key not in doc["limits"]:
                    raise _Invalid(f"limits.{key}", "missing required key (every architecture gives it)")
    return doc


# --------------------------------------------------------------------------------------------
# Resolved objects
# --------------------------------------------------------------------------------------------

def parse_shape(shape: str) -> tuple[int, tuple[int, ...], int]:
    """``'m64n8-256/8k16'`` -> ``(64, (8, 16, ..., 256), 16)``; ``'m16n8k16'`` -> ``(16, (8,), 16)``."""
    m = _SHAPE_RE.match(shape)
    if not m:
        raise CapabilityError(f"shape {shape!r} is not of the form 'm16n8k16' or 'm64n8-256/8k16'")
    mm, n0, n1, step, k = m.groups()
    if n1 is None:
        return int(mm), (int(n0),), int(k)
    lo, hi, st = int(n0), int(n1), int(step)
    if st <= 0 or hi < lo or (hi - lo) % st:
        raise CapabilityError(f"shape {shape!r}: N range {lo}..{hi} is not whole steps of {st}")
    return int(mm), tuple(range(lo, hi + 1, st)), int(k)


@dataclass(frozen=True)
class MmaOp:
    """One tensor-core instruction for one (A, B) operand-type pair.

    ``acc`` lists the accumulator types, ``shapes`` the instruction shapes
    (see :func:`parse_shape`). ``kind`` is the tcgen05 / block-scaled
    ``.kind`` or None; block-scaled ops carry ``scale_vec`` (the PTX
    ``scale_vec::NX`` values) and ``scale_types``. ``native`` is False where
    the instruction compiles but is emulated; ``sass_patch`` is True where an
    operand type has no PTX name.
    """

    family: str
    a: str
    b: str
    acc: tuple[str, ...]
    shapes: tuple[str, ...]
    native: bool = True
    kind: str | None = None
    scale_vec: tuple[int, ...] = ()
    scale_types: tuple[str, ...] = ()
    sass_patch: bool = False
    provisional: bool = False
    source: str = ""

    @property
    def block_scaled(self) -> bool:
        return bool(self.scale_vec)

    @property
    def dims(self) -> tuple[tuple[int, tuple[int, ...], int], ...]:
        """Each shape as ``(m, allowed n values, k)``."""
        return tuple(parse_shape(s) for s in self.shapes)

    @property
    def scale_blocks(self) -> tuple[int, ...]:
        """Elements along K per scale factor, one per ``scale_vec`` entry (e.g. 32 for MX, 16 for NVFP4)."""
        if not self.scale_vec:
            return ()
        k = parse_shape(self.shapes[0])[2]
        return tuple(k // v for v in self.scale_vec)


@dataclass(frozen=True)
class Conversion:
    """A ``cvt`` from ``src`` to ``dst``; ``native`` means one conversion instruction (packed pairs)."""

    src: str
    dst: str
    native: bool = True
    source: str = ""


@dataclass(frozen=True)
class ProductFigures:
    """Figures of one product, for planning without the device. Absent figures are None."""

    sm_count: int | None = None
    bandwidth_gbs: float | None = None
    memory_gb: float | None = None
    l2_bytes: int | None = None
    peak_tflops: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    match: tuple[str, ...] = ()


def _freeze(value):
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _plain(value):
    """A JSON-able copy: mappings -> dict, tuples -> list."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _expand_op(family: str, entry: Mapping) -> list[MmaOp]:
    a_types = entry["a"]
    b_types = entry.get("b", a_types)
    ops = []
    for a in a_types:
        for b in b_types:
            if entry.get("sass_patch") and not {a, b} & SASS_ONLY_TYPES:
                continue
            ops.append(MmaOp(
                family=family, a=a, b=b, acc=tuple(entry["acc"]), shapes=tuple(entry["shapes"]),
                native=entry.get("native", True), kind=entry.get("kind"),
                scale_vec=tuple(entry.get("scale_vec", ())), scale_types=tuple(entry.get("scale_types", ())),
                sass_patch=entry.get("sass_patch", False), provisional=entry.get("provisional", False),
                source=entry.get("source", "")))
    return ops


def _check_type(name: str, what: str) -> str:
    if name not in TYPE_NAMES:
        raise CapabilityError(f"{what}: unknown type name {name!r}; known: {', '.join(sorted(TYPE_NAMES))}")
    return name


class Capabilities:
    """The resolved capability table of one architecture, product or device (immutable).

    Build it with :func:`load` or :func:`load_file`; see the module docstring
    for what each section means. ``chain`` lists the files merged, root first.
    ``provisional`` is True when a file of the chain marks itself, or some of
    its keys (``provisional_fields``), as not public fact; single ops carry
    their own ``provisional`` flag. ``sources`` are those of the whole chain.
    ``targets`` maps 'nvrtc', 'nvcc' and 'plain' to target names (None where
    that compiler cannot build for the device); ``min_cuda`` is the toolkit
    the targets need, when newer than 13.0.
    """

    __slots__ = ("name", "kind", "chain", "aliases", "description", "provisional", "provisional_fields",
                 "sources", "compute_capability", "targets", "min_cuda", "_table", "_ops", "_by_pair",
                 "_conversions", "_convert_pairs", "_memory", "limits", "product")

    def __init__(self, table: Mapping, chain: tuple[str, ...], provisional: bool,
                 provisional_fields: tuple[str, ...], sources: tuple[str, ...]):
        self.name: str = table["name"]
        self.kind: str = table["kind"]
        self.chain = chain
        self.aliases: tuple[str, ...] = tuple(table.get("aliases", ()))
        self.description: str = table.get("description", "")
        self.provisional = provisional
        self.provisional_fields = provisional_fields
        self.sources = sources
        self.compute_capability: tuple[int, int] = tuple(table["compute_capability"])
        comp = table["compile"]
        self.targets = MappingProxyType({c: comp.get(c) for c in COMPILERS})
        self.min_cuda: tuple[int, int] | None = (
            tuple(int(x) for x in comp["min_cuda"].split(".")) if comp.get("min_cuda") else None)
        self._table = _freeze(table)
        ops = []
        for family in FAMILIES:
            for entry in table["tensor_core"].get(family, ()):
                ops.extend(_expand_op(family, entry))
        self._ops = tuple(ops)
        by_pair: dict[tuple[str, str], list[MmaOp]] = {}
        for op in self._ops:
            by_pair.setdefault((op.a, op.b), []).append(op)
        self._by_pair = {k: tuple(v) for k, v in by_pair.items()}
        convs = []
        for entry in table["conversions"]:
            for src in entry["src"]:
                for dst in entry["dst"]:
                    convs.append(Conversion(src, dst, entry.get("native", True), entry.get("source", "")))
        self._conversions = tuple(convs)
        self._convert_pairs = {(c.src, c.dst): c for c in convs}
        self._memory = MappingProxyType(dict(table["memory"]))
        self.limits: Mapping[str, int] = MappingProxyType(dict(table["limits"]))
        prod = table.get("product")
        self.product: ProductFigures | None = None
        if prod is not None:
            self.product = ProductFigures(
                sm_count=prod.get("sm_count"), bandwidth_gbs=prod.get("bandwidth_gbs"),
                memory_gb=prod.get("memory_gb"), l2_bytes=prod.get("l2_bytes"),
                peak_tflops=MappingProxyType(dict(prod.get("peak_tflops", {}))), match=tuple(prod.get("match", ())))

    def __repr__(self) -> str:
        return f"<Capabilities {self.name} ({self.kind}, sm_{self.compute_capability[0]}{self.compute_capability[1]})>"

    # ---- tensor cores ----------------------------------------------------------------------
    def mma_ops(self, family: str | None = None) -> tuple[MmaOp, ...]:
        """All ops (one per operand pair), in file order; only those of ``family`` if given."""
        if family is None:
            return self._ops
        if family not in FAMILIES:
            raise CapabilityError(f"unknown tensor-core family {family!r}; known: {', '.join(FAMILIES)}")
        return tuple(op for op in self._ops if op.family == family)

    def find_mma(self, a: str, b: str | None = None, acc: str | None = None,
                 families: Iterable[str] | None = None, native_only: bool = True) -> list[MmaOp]:
        """Ops that multiply ``a`` by ``b`` (default ``a``) into ``acc`` (any if None).

        Results come grouped in the order of ``families`` (default :data:`FAMILIES`),
        in file order within a family. ``native_only`` drops emulated ops.
        """
        _check_type(a, "find_mma a")
        b = a if b is None else _check_type(b, "find_mma b")
        if acc is not None:
            _check_type(acc, "find_mma acc")
        order = tuple(FAMILIES if families is None else ((families,) if isinstance(families, str) else families))
        for f in order:
            if f not in FAMILIES:
                raise CapabilityError(f"unknown tensor-core family {f!r}; known: {', '.join(FAMILIES)}")
        found = [op for op in self._by_pair.get((a, b), ())
                 if (acc is None or acc in op.acc) and (op.native or not native_only) and op.family in order]
        found.sort(key=lambda op: order.index(op.family))
        return found

    def supports_mma(self, a: str, b: str | None = None, acc: str | None = None,
                     family: str | None = None, native_only: bool = True) -> bool:
        """Whether any op multiplies ``a`` by ``b`` (default ``a``) into ``acc``."""
        return bool(self.find_mma(a, b, acc, families=None if family is None else (family,),
                                  native_only=native_only))

    # ---- conversions, features, limits -------------------------------------------------------
    @property
    def conversions(self) -> tuple[Conversion, ...]:
        return self._conversions

    def can_convert(self, src: str, dst: str, native_only: bool = True) -> bool:
        """Whether a declared ``cvt`` turns ``src`` into ``dst`` (one instruction when ``native_only``)."""
        conv = self._convert_pairs.get((_check_type(src, "can_convert src"), _check_type(dst, "can_convert dst")))
        return conv is not None and (conv.native or not native_only)

    def has(self, feature: str) -> bool:
        """A memory feature (:data:`MEMORY_FEATURES`) or a tensor-core family (:data:`FAMILIES`) is present."""
        if feature in MEMORY_FEATURES:
            return bool(self._memory.get(feature, False))
        if feature in FAMILIES:
            return any(op.family == feature for op in self._ops)
        raise CapabilityError(f"unknown feature {feature!r}; known: {', '.join([*MEMORY_FEATURES, *FAMILIES])}")

    @property
    def features(self) -> Mapping[str, bool]:
        return self._memory

    def limit(self, key: str) -> int | None:
        """One limit (see :data:`LIMIT_KEYS`), or None where this table does not give it."""
        if key not in LIMIT_KEYS:
            raise CapabilityError(f"unknown limit {key!r}; known: {', '.join(LIMIT_KEYS)}")
        return self.limits.get(key)

    def compile_flags(self, compiler: str) -> tuple[str, ...]:
        """Extra flags the table asks for with ``compiler`` ('nvrtc' or 'nvcc')."""
        if compiler not in ("nvrtc", "nvcc"):
            raise CapabilityError(f"unknown compiler {compiler!r}; known: nvrtc, nvcc")
        return tuple(self._table["compile"].get(f"{compiler}_flags", ()))

    # ---- export --------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The resolved table as plain JSON-able data (ops as written, merged along ``chain``)."""
        out = _plain(self._table)
        out.pop("extends", None)
        out.update(chain=list(self.chain), provisional=self.provisional,
                   provisional_fields=list(self.provisional_fields), sources=list(self.sources))
        return out

    def explain(self) -> str:
        """A table for people: what this device can do and where each fact comes from."""
        cc = "%d.%d" % self.compute_capability
        lines = [f"{self.name} ({self.kind}; {' -> '.join(self.chain)}), compute capability {cc}"]
        if self.description:
            lines.append(f"  {self.description}")
        lines.append("  targets: " + ", ".join(f"{c} {t or '-'}" for c, t in self.targets.items())
                     + (f" (needs CUDA >= {'%d.%d' % self.min_cuda})" if self.min_cuda else ""))
        if self.provisional:
            lines.append("  PROVISIONAL" + (f": {', '.join(self.provisional_fields)}" if self.provisional_fields else
                                            ": the whole table is not a public fact"))
        lines.append("  tensor cores:")
        rows = [("family", "kind", "A", "B", "acc", "shapes", "notes")]
        for family in FAMILIES:
            for e in self._table["tensor_core"].get(family, ()):
                notes = []
                if not e.get("native", True):
                    notes.append("emulated")
                if e.get("scale_vec"):
                    notes.append("scale " + "/".join(f"{v}X" for v in e["scale_vec"]) + " " + ",".join(e["scale_types"]))
                if e.get("sass_patch"):
                    notes.append("sass-patch")
                if e.get("provisional"):
                    notes.append("provisional")
                rows.append((family, e.get("kind") or "-", ",".join(e["a"]), ",".join(e.get("b", e["a"])),
                             ",".join(e["acc"]), " ".join(e["shapes"]), "; ".join(notes)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
        for r in rows:
            lines.append("    " + "  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
        conv = ", ".join(f"{c.src}->{c.dst}" + ("" if c.native else " (emulated)") for c in self._conversions)
        lines.append(f"  conversions: {conv or 'none declared'}")
        lines.append("  memory: " + ", ".join(f"{k}" if v else f"no {k}" for k, v in self._memory.items()))
        lines.append("  limits: " + ", ".join(f"{k} {v}" for k, v in self.limits.items()))
        if self.product is not None:
            p = self.product
            figs = [f"{p.sm_count} SMs" if p.sm_count else None,
                    f"{p.bandwidth_gbs:g} GB/s" if p.bandwidth_gbs else None,
                    f"{p.memory_gb:g} GB" if p.memory_gb else None,
                    f"L2 {p.l2_bytes / 2**20:g} MiB" if p.l2_bytes else None]
            lines.append("  product: " + ", ".join(f for f in figs if f))
            if p.peak_tflops:
                lines.append("  peak dense TFLOP/s: " + ", ".join(f"{k} {v:g}" for k, v in p.peak_tflops.items()))
        if self.sources:
            lines.append("  sources:")
            lines.extend(f"    - {s}" for s in self.sources)
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Registry: directories of YAML files, an index of names, caches
# --------------------------------------------------------------------------------------------

def _normalize(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name).lower()


def _read(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CapabilityError(f"cannot read the file: {exc}", file=str(path)) from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        raw = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise CapabilityError(f"not valid YAML: {exc}", file=str(path)) from None
    try:
        return _validate(raw)
    except _Invalid as exc:
        raise CapabilityError(exc.message, file=str(path), key=exc.path) from None


def _merge(base: Mapping, over: Mapping) -> dict:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


class _Registry:
    def __init__(self):
        self.lock = threading.RLock()
        self.dirs: list[Path] = [Path(str(importlib.resources.files("humming.capabilities_data")))]
        self.clear()

    def clear(self):
        self.docs: dict[str, tuple[Path, dict]] | None = None  # canonical name -> (file, document)
        self.index: dict[str, str] = {}                          # normalised name/alias -> canonical name
        self.resolved: dict[str, Capabilities] = {}

    def build(self):
        with self.lock:
            if self.docs is not None:
                return
            docs: dict[str, tuple[Path, dict]] = {}
            index: dict[str, str] = {}
            for directory in self.dirs:
                for path in sorted(directory.glob("*.yaml")):
                    doc = _read(path)
                    for key in (doc["name"], *doc.get("aliases", ())):
                        norm = _normalize(key)
                        if index.get(norm, doc["name"]) != doc["name"]:
                            other = docs[index[norm]][0]
                            raise CapabilityError(f"name {key!r} is already used by {other}", file=str(path),
                                                  key="name" if key == doc["name"] else "aliases")
                        index[norm] = doc["name"]
                    docs[doc["name"]] = (path, doc)
            self.docs, self.index = docs, index

    def canonical(self, name: str) -> str:
        self.build()
        canon = self.index.get(_normalize(name))
        if canon is None:
            near = difflib.get_close_matches(_normalize(name), list(self.index), n=3)
            hint = f"; did you mean {', '.join(self.index[n] for n in near)}?" if near else ""
            raise CapabilityError(f"unknown device or architecture {name!r}{hint} "
                                  f"(known: {', '.join(sorted(self.docs))})")
        return canon

    def resolve(self, path: Path, doc: dict) -> Capabilities:
        """Merge ``doc`` with its ``extends`` chain and build the object."""
        chain_docs = [(path, doc)]
        names = [doc["name"]]
        while "extends" in chain_docs[-1][1]:
            child_path, child = chain_docs[-1]
            parent_name = child["extends"]
            try:
                canon = self.canonical(parent_name)
            except CapabilityError:
                raise CapabilityError(f"extends unknown parent {parent_name!r} (known: {', '.join(sorted(self.docs))})",
                                      file=str(child_path), key="extends") from None
            if canon in names:
                cycle = " -> ".join([*names, canon])
                raise CapabilityError(f"extends cycle: {cycle}", file=str(child_path), key="extends")
            names.append(canon)
            chain_docs.append(self.docs[canon])
        table: dict = {}
        for _, d in reversed(chain_docs):
            table = _merge(table, {k: v for k, v in d.items() if k not in _OWN_KEYS})
        table.update({k: doc[k] for k in ("name", "kind", "aliases", "description") if k in doc})
        if "product" in table:  # name patterns identify one file; a child never inherits them
            table["product"] = {**table["product"], "match": doc.get("product", {}).get("match", ())}
        sources: list[str] = []
        provisional = False
        fields: list[str] = []
        for _, d in reversed(chain_docs):
            sources.extend(s for s in d.get("sources", ()) if s not in sources)
            prov = d.get("provisional", False)
            provisional = provisional or bool(prov)
            if isinstance(prov, tuple):
                fields.extend(f for f in prov if f not in fields)
        return Capabilities(table, tuple(reversed(names)), provisional, tuple(fields), tuple(sources))

    def load(self, name: str) -> Capabilities:
        cached = self.resolved.get(name)
        if cached is not None:
            return cached
        with self.lock:
            canon = self.canonical(name)
            caps = self.resolved.get(canon)
            if caps is None:
                path, doc = self.docs[canon]
                caps = self.resolve(path, doc)
                self.resolved[canon] = caps
            self.resolved[name] = caps
            return caps


_REGISTRY = _Registry()


def load(name: str | Capabilities) -> Capabilities:
    """The resolved table for ``name`` (an architecture, product, device or alias; case-insensitive).

    Results are cached: after the first call for a name this is one dict lookup.
    """
    if isinstance(name, Capabilities):
        return name
    if not isinstance(name, str):
        raise CapabilityError(f"expected a capability name (str), found {_kind_of(name)} {name!r}")
    return _REGISTRY.load(name)


def load_file(path: str | Path) -> Capabilities:
    """Validate and resolve one YAML file (its ``extends`` parent comes from the registered directories).

    The file is not added to the registry; use :func:`register_directory` for that.
    """
    path = Path(path)
    doc = _read(path)
    _REGISTRY.build()
    return _REGISTRY.resolve(path, doc)


def names(kind: str | None = None) -> list[str]:
    """Canonical names of all known tables, sorted; only those of ``kind`` if given."""
    if kind is not None and kind not in FILE_KINDS:
        raise CapabilityError(f"unknown kind {kind!r}; known: {', '.join(FILE_KINDS)}")
    _REGISTRY.build()
    natural = lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n.lower())]
    return sorted((n for n, (_, d) in _REGISTRY.docs.items() if kind is None or d["kind"] == kind), key=natural)


def register_directory(path: str | Path) -> None:
    """Add a directory of capability YAML files (plugins call this) and clear the caches.

    Every file in every registered directory is validated on the next lookup;
    a name or alias used twice is an error naming both files.
    """
    directory = Path(path).resolve()
    if not directory.is_dir():
        raise CapabilityError(f"capability directory {str(directory)!r} does not exist or is not a directory")
    with _REGISTRY.lock:
        if directory not in [d.resolve() for d in _REGISTRY.dirs]:
            _REGISTRY.dirs.append(directory)
        _REGISTRY.clear()


def by_compute_capability(major: int, minor: int) -> Capabilities | None:
    """The architecture table for compute capability ``major.minor``, or None if there is none."""
    _REGISTRY.build()
    found = [n for n, (_, d) in _REGISTRY.docs.items()
             if d["kind"] == "architecture" and d.get("compute_capability") == (major, minor)]
    if len(found) > 1:
        raise CapabilityError(f"compute capability {major}.{minor} is declared by several architecture "
                              f"files: {', '.join(sorted(found))}")
    return load(found[0]) if found else None


def match_device_name(device_name: str) -> Capabilities | None:
    """The product or device whose ``product.match`` pattern matches ``device_name`` (case-insensitive).

    Where several match, the longest matched text wins (``'H100 PCIe'`` over
    ``'H100'``); a tie between different tables is an error.
    """
    _REGISTRY.build()
    best: list[tuple[int, str]] = []
    for canon, (_, doc) in _REGISTRY.docs.items():
        if doc["kind"] == "architecture":
            continue
        caps = load(canon)
        patterns = caps.product.match if caps.product else ()
        length = max((len(m.group(0)) for p in patterns if (m := re.search(p, device_name, re.IGNORECASE))),
                     default=-1)
        if length >= 0:
            best.append((length, canon))
    if not best:
        return None
    best.sort(reverse=True)
    if len(best) > 1 and best[0][0] == best[1][0]:
        raise CapabilityError(f"device name {device_name!r} matches {best[0][1]} and {best[1][1]} equally; "
                              "make one of their product.match patterns more specific")
    return load(best[0][1])
