"""Render a KernelSpec into its (tiny) CUDA source, and find the headers it uses.

The source is: the defines, one include, ``struct HummingConfig`` with every
compile-time constant, and one ``extern "C"`` entry that forwards its single
by-value parameter struct to the family's device template::

    #include "humming/kernels/act_quant.cuh"
    struct HummingConfig {
      static constexpr int THREADS = 256;
      ...
    };
    extern "C" __global__ void __launch_bounds__(256)
    humming_entry(const __grid_constant__ humming::ActQuantParams p) {
      humming::act_quant<HummingConfig>(p);
    }
"""
from __future__ import annotations

import hashlib
import os
import re
import struct
from pathlib import Path
from typing import Iterable, Sequence

from .spec import KernelSpec

__all__ = ["ENTRY_SYMBOL", "render", "include_roots", "header_digests"]

#: The one C symbol every generated kernel exports.
ENTRY_SYMBOL = "humming_entry"

_INT32 = range(-(1 << 31), 1 << 31)


def _literal(value) -> tuple[str, str]:
    """(C++ type, literal) for a config value."""
    if isinstance(value, bool):
        return "bool", "true" if value else "false"
    if isinstance(value, int):
        return ("int", str(value)) if value in _INT32 else ("long long", f"{value}LL")
    as_f32 = struct.unpack("f", struct.pack("f", value))[0]
    if as_f32 == value:
        return "float", f"{value!r}f"
    return "double", repr(value)


def render(spec: KernelSpec) -> str:
    """The complete source of ``spec`` (deterministic: equal specs, equal text)."""
    lines = [f"// humming kernel: {spec.family} for {spec.target} (generated; do not edit)"]
    lines += [f"#define {name} {value}" for name, value in spec.defines]
    lines.append(f'#include "{spec.header}"')
    lines.append("")
    lines.append("struct HummingConfig {")
    constants = [("THREADS", spec.threads), ("SMEM_BYTES", spec.smem_bytes),
                 ("MIN_BLOCKS", spec.min_blocks)] + list(spec.config)
    for name, value in constants:
        ctype, lit = _literal(value)
        lines.append(f"  static constexpr {ctype} {name} = {lit};")
    lines.append("};")
    if spec.params_size:
        lines.append(f"static_assert(sizeof({spec.params}) == {spec.params_size}, "
                     f'"{spec.params}: the host declares {spec.params_size} bytes");')
    bounds = f"{spec.threads}, {spec.min_blocks}" if spec.min_blocks else f"{spec.threads}"
    cluster = f" __cluster_dims__({spec.cluster}, 1, 1)" if spec.cluster > 1 else ""
    lines.append(f'extern "C" __global__ void __launch_bounds__({bounds}){cluster}')
    lines.append(f"{ENTRY_SYMBOL}(const __grid_constant__ {spec.params} p) {{")
    lines.append(f"  {spec.entry}<HummingConfig>(p);")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# include roots and header content
# ---------------------------------------------------------------------------

_roots_cache: tuple[Path, ...] | None = None


def include_roots() -> tuple[Path, ...]:
    """Our include roots: the NVIDIA backend's ``include/`` (found through the
    ``humming_nvidia`` package) plus any listed in ``HUMMING_INCLUDE_PATH``
    (os.pathsep-separated, searched first)."""
    global _roots_cache
    extra = tuple(Path(p) for p in os.environ.get("HUMMING_INCLUDE_PATH", "").split(os.pathsep) if p)
    if _roots_cache is None:
        import humming_nvidia

        _roots_cache = (Path(humming_nvidia.__file__).resolve().parent / "include",)
    return extra + _roots_cache


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
# absolute path -> (mtime_ns, size, sha256, [(kind, name), ...]); a parse memo, never part of a key
_scan_memo: dict[str, tuple[int, int, str, list[tuple[str, str]]]] = {}


def _scan(path: Path) -> tuple[str, list[tuple[str, str]]]:
    st = path.stat()
    key = str(path)
    hit = _scan_memo.get(key)
    if hit is not None and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
        return hit[2], hit[3]
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    incs = _INCLUDE.findall(data.decode("utf-8", "replace"))
    _scan_memo[key] = (st.st_mtime_ns, st.st_size, digest, incs)
    return digest, incs


def _resolve(kind: str, name: str, here: tuple[Path, str] | None,
             roots: Sequence[Path]) -> tuple[Path, str] | None:
    """(file, root-relative name) of an include found under our roots, else None."""
    if kind == '"' and here is not None:
        root, rel = here
        cand_rel = os.path.normpath(os.path.join(os.path.dirname(rel), name)).replace(os.sep, "/")
        if not cand_rel.startswith("../") and (root / cand_rel).is_file():
            return root / cand_rel, cand_rel
    for root in roots:
        if (root / name).is_file():
            return root / name, os.path.normpath(name).replace(os.sep, "/")
    return None


def header_digests(source: str, roots: Iterable[Path] | None = None) -> list[tuple[str, str]]:
    """``[(relative name, sha256), ...]``, sorted, of every header under ``roots``
    that ``source`` includes, transitively. Includes not found under our roots
    (CUDA's own headers) are skipped: the compiler's identity covers them."""
    roots = tuple(include_roots() if roots is None else roots)
    seen: dict[str, str] = {}
    todo: list[tuple[tuple[str, str], tuple[Path, str] | None]] = [
        (inc, None) for inc in _INCLUDE.findall(source)]
    while todo:
        (kind, name), here = todo.pop()
        found = _resolve(kind, name, here, roots)
        if found is None:
            continue
        path, rel = found
        if rel in seen:
            continue
        digest, incs = _scan(path)
        seen[rel] = digest
        root = path.parents[len(Path(rel).parts) - 1]
        todo.extend((inc, (root, rel)) for inc in incs)
    return sorted(seen.items())
