"""Cache keys and the disk cache of compiled kernels.

Key
    sha256 over: the generated source, the name and content hash of every
    header it includes from our include roots (transitively), the compiler's
    identity (name, version, CUDA headers), its portable flags and the target.
    No file times, no absolute paths: a key means the same on every machine.

Disk layout (``default_cache_dir()``; ``HUMMING_CACHE_DIR`` overrides)::

    <dir>/kernels/<family>-<key>/kernel.cubin
    <dir>/kernels/<family>-<key>/meta.json   key, flags, compiler, target,
                                             cubin size and sha256, source
    <dir>/failed/<family>-<key>.cu (+ .log)  sources that failed to compile

An entry is written into a private temporary folder and renamed into place in
one step; when several processes race, the first rename wins and the others
drop their copy. An entry whose metadata or checksum does not verify is moved
aside and rebuilt, never loaded.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CACHE_FORMAT", "cache_key", "default_cache_dir", "CacheEntry", "DiskCache"]

#: Bump when the entry layout or the key recipe changes.
CACHE_FORMAT = 1


def cache_key(source: str, headers: list[tuple[str, str]], compiler: str, flags: list[str],
              target: str) -> str:
    blob = json.dumps({"format": CACHE_FORMAT, "source": source, "headers": headers,
                       "compiler": compiler, "flags": list(flags), "target": target},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def default_cache_dir() -> Path:
    """``HUMMING_CACHE_DIR``, else ``$XDG_CACHE_HOME/humming``, else ``~/.cache/humming``."""
    env = os.environ.get("HUMMING_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "humming"


@dataclass(frozen=True)
class CacheEntry:
    key: str
    cubin: bytes
    meta: dict


class DiskCache:
    """Content-addressed store of CUBINs; safe across threads and processes."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_cache_dir()

    def entry_dir(self, family: str, key: str) -> Path:
        return self.root / "kernels" / f"{family}-{key}"

    def get(self, family: str, key: str) -> CacheEntry | None:
        """The verified entry, or None (missing; a corrupt one is removed)."""
        d = self.entry_dir(family, key)
        try:
            meta_bytes = (d / "meta.json").read_bytes()
            cubin = (d / "kernel.cubin").read_bytes()
        except FileNotFoundError:
            if d.exists():  # half an entry: never valid
                self._discard(d)
            return None
        except OSError:
            return None
        try:
            meta = json.loads(meta_bytes)
            ok = (isinstance(meta, dict) and meta.get("format") == CACHE_FORMAT
                  and meta.get("key") == key and meta.get("cubin_size") == len(cubin)
                  and meta.get("cubin_sha256") == hashlib.sha256(cubin).hexdigest())
        except ValueError:
            ok = False
        if not ok:
            self._discard(d)
            return None
        return CacheEntry(key, cubin, meta)

    def put(self, family: str, key: str, cubin: bytes, meta: dict) -> CacheEntry:
        """Store an entry atomically; returns what is in the cache afterwards
        (ours, or an equal one another process stored first)."""
        meta = dict(meta, format=CACHE_FORMAT, key=key, cubin_size=len(cubin),
                    cubin_sha256=hashlib.sha256(cubin).hexdigest())
        final = self.entry_dir(family, key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.parent / f".tmp-{final.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        try:
            (tmp / "kernel.cubin").write_bytes(cubin)
            (tmp / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
            for _ in range(3):
                try:
                    os.rename(tmp, final)  # atomic; fails if `final` exists
                    return CacheEntry(key, cubin, meta)
                except OSError:
                    existing = self.get(family, key)  # removes it when corrupt
                    if existing is not None:
                        return existing
            raise OSError(f"cannot store cache entry {final}")
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def save_failed(self, family: str, key: str, source: str, log: str) -> Path:
        """Keep a source that failed to compile (and its log); returns the source path."""
        d = self.root / "failed"
        d.mkdir(parents=True, exist_ok=True)
        path = d / f"{family}-{key}.cu"
        for p, text in ((path, source), (path.with_suffix(".log"), log)):
            tmp = p.with_name(f".{p.name}.{uuid.uuid4().hex[:8]}")
            tmp.write_text(text)
            os.replace(tmp, p)
        return path

    def _discard(self, d: Path) -> None:
        trash = d.parent / f".trash-{d.name}-{uuid.uuid4().hex[:8]}"
        try:
            os.rename(d, trash)
        except OSError:
            return  # someone else moved it already
        shutil.rmtree(trash, ignore_errors=True)
