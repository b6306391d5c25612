"""The persisted tuning database: measured tuning that replaces the heuristics' for one layer on one device.

``humming tune`` (:mod:`humming.tune.autotune`) times a plan's candidate kernel configs on the GPU and
writes what it measured here; :func:`humming.plan` then takes the entry for the same layer, device,
kernel family and operand types, checks it with the family (``check_tuning``) and says so in the plan's
notes. The heuristics stay the default: a layer without an entry plans as before.

Where: ``HUMMING_TUNING_DB`` (a JSON file; ``off`` or ``0`` disables the database), else
``tuning.json`` in humming's cache folder (``HUMMING_CACHE_DIR``, ``$XDG_CACHE_HOME/humming`` or
``~/.cache/humming``). Writes are atomic (a temporary file renamed over the old one), so readers in
other processes see the old or the new file, never half of one; writers take turns on a lock file.

The file::

    {"humming_tuning": 1,
     "entries": [{"device": "H200", "family": "nvidia:mma_sync", "layer": {...LayerSpec.to_dict()},
                  "compute": {...Compute.to_dict()}, "tuning": [{"m_min": 1, "m_max": 8, "config": {...}}, ...],
                  "measured": {"humming": "0.1.0", "when": "...", "kernels": "...", "ranges": [...]}}]}

``measured.kernels`` is the family's ``tuning_version()`` (for ``mma_sync`` a digest of the kernel headers
and the module that sizes and launches the tiles): an entry measured with other kernel sources is set
aside, since its times no longer describe the kernels that would run.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Optional

from ..errors import FormatError

__all__ = ["SCHEMA", "database_path", "token", "lookup", "store", "entries", "entry_key"]

#: version of the file's schema (``"humming_tuning"``)
SCHEMA = 1
_OFF = ("", "0", "off", "none", "false", "no")
_lock = threading.Lock()
_parsed: dict = {}  # path -> (stat token, {key: entry})


def database_path() -> Optional[Path]:
    """The database file in use, or None when ``HUMMING_TUNING_DB`` turns it off."""
    env = os.environ.get("HUMMING_TUNING_DB")
    if env is not None:
        return None if env.strip().lower() in _OFF else Path(env).expanduser()
    from ..jit.cache import default_cache_dir

    return default_cache_dir() / "tuning.json"


def token() -> tuple:
    """What changes when the database does (its path, size and modification time): planners cache by it."""
    path = database_path()
    if path is None:
        return ("off",)
    try:
        st = path.stat()
    except OSError:
        return (str(path), None)
    return (str(path), st.st_size, st.st_mtime_ns)


_KEY = ("device", "family", "layer", "compute")


def _key(entry: dict) -> str:
    return json.dumps({k: entry[k] for k in _KEY}, sort_keys=True, separators=(",", ":"))


def entry_key(device: str, family: str, layer, compute) -> str:
    """The key of an entry: device name, ``backend:family``, the layer and the operand types, as canonical JSON."""
    return _key({"device": device, "family": family, "layer": layer.to_dict(), "compute": compute.to_dict()})


def _read(path: Path) -> dict:
    """``{key: entry}`` of the file at ``path`` (empty when it does not exist); FormatError names the file."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise FormatError(f"tuning database {path}: cannot read it ({e})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"tuning database {path}: not JSON ({e}); remove it or point HUMMING_TUNING_DB "
                          f"elsewhere") from None
    if not isinstance(doc, dict) or doc.get("humming_tuning") != SCHEMA or not isinstance(doc.get("entries"), list):
        found = doc.get("humming_tuning") if isinstance(doc, dict) else type(doc).__name__
        raise FormatError(f"tuning database {path}: expected an object with \"humming_tuning\": {SCHEMA} and a list "
                          f"of \"entries\", found schema {found!r}")
    out = {}
    for i, e in enumerate(doc["entries"]):
        if not isinstance(e, dict) or not all(k in e for k in _KEY + ("tuning",)):
            raise FormatError(f"tuning database {path}: entry {i} lacks one of device, family, layer, compute, "
                              f"tuning")
        out[_key(e)] = e
    return out


def entries(path: Optional[Path] = None) -> dict:
    """``{key: entry}`` of the database (cached until the file changes)."""
    path = database_path() if path is None else Path(path)
    if path is None:
        return {}
    tok = token() if path == database_path() else None
    with _lock:
        hit = _parsed.get(str(path))
        if tok is not None and hit is not None and hit[0] == tok:
            return hit[1]
    table = _read(path)
    with _lock:
        if tok is not None:
            _parsed[str(path)] = (tok, table)
    return table


def lookup(device: str, family: str, layer, compute) -> Optional[dict]:
    """The entry for this layer on ``device`` with ``family`` and these operand types, or None."""
    if database_path() is None:
        return None
    return entries().get(entry_key(device, family, layer, compute))


@contextlib.contextmanager
def _file_lock(path: Path):
    """Hold an exclusive lock on ``path``'s lock file: one process's read-modify-write at a time
    (POSIX; elsewhere the atomic rename alone, where a concurrent writer's entry may be lost)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(path.with_name(path.name + ".lock"), "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def store(entry: dict, path: Optional[Path] = None) -> Path:
    """Add ``entry`` to the database (replacing one with the same key), atomically. Returns the file."""
    path = database_path() if path is None else Path(path)
    if path is None:
        raise FormatError("tuning database: HUMMING_TUNING_DB turns it off; set it to a file to store entries")
    key = _key(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _lock, _file_lock(path):
        table = _read(path)
        table[key] = entry
        doc = {"humming_tuning": SCHEMA, "entries": [table[k] for k in sorted(table)]}
        fd, tmp = tempfile.mkstemp(prefix=".tuning-", suffix=".json", dir=str(path.parent))
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f, indent=1)  # (configs keep their keys' order, as the plan shows them)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        _parsed.pop(str(path), None)
    return path
