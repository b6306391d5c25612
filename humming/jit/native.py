"""The optional native launch entry (``_fastlaunch.c``), built on first use.

A ctypes call to ``cuLaunchKernel`` converts eleven Python objects on every
launch; this tiny CPython extension does the same call from C. It is compiled
once per source version and Python ABI with the system C compiler into the
kernel cache (``<cache>/native/``), written atomically, and loaded from there
afterwards. When there is no C compiler or no Python headers, or
``HUMMING_NATIVE_LAUNCH=0``, :func:`load` returns ``None`` and the launch path
stays on ctypes; :data:`reason` says why.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shlex
import shutil
import subprocess
import sysconfig
import threading
import uuid
from pathlib import Path

__all__ = ["load", "build", "reason"]

SOURCE = Path(__file__).with_name("_fastlaunch.c")
_lock = threading.Lock()
_module = None
_tried = False
#: why the native entry is not in use (None while it is, or before the first load)
reason: str | None = None


def _compiler() -> list[str] | None:
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    argv = shlex.split(cc)
    if argv and shutil.which(argv[0]):
        return argv
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return [name]
    return None


def _module_name(src: bytes) -> str:
    tag = hashlib.sha256(src + (sysconfig.get_config_var("SOABI") or "").encode()).hexdigest()[:16]
    return f"_hm_fastlaunch_{tag}"


def build(cache_dir: Path | None = None) -> Path:
    """Compile the extension (if not cached) and return the path of the shared object.

    Raises ``RuntimeError`` with the compiler's output when it cannot be built."""
    from .cache import default_cache_dir

    src = SOURCE.read_bytes()
    name = _module_name(src)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    out_dir = Path(cache_dir or default_cache_dir()) / "native"
    target = out_dir / f"{name}{suffix}"
    if target.exists():
        return target
    cc = _compiler()
    if cc is None:
        raise RuntimeError("no C compiler (cc, gcc or clang) on the PATH")
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").exists():
        raise RuntimeError(f"no Python headers ({include}/Python.h is missing)")
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".{name}.{uuid.uuid4().hex}{suffix}"
    cmd = cc + ["-O2", "-shared", "-fPIC", f"-I{include}", f'-DHUMMING_MODULE_NAME="{name}"',
                f"-DHUMMING_MODULE_SYMBOL={name}", str(SOURCE), "-o", str(tmp)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"{' '.join(cmd)}: {e}") from e
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    os.replace(tmp, target)  # atomic: a racing process leaves an identical file
    return target


def load():
    """The native module, or ``None`` (see :data:`reason`). Built and imported once per process."""
    global _module, _tried, reason
    if _tried:
        return _module
    with _lock:
        if _tried:
            return _module
        _tried = True
        if os.environ.get("HUMMING_NATIVE_LAUNCH", "1") in ("0", "false", "no", "off"):
            reason = "disabled by HUMMING_NATIVE_LAUNCH"
            return None
        try:
            path = build()
            name = path.name.split(".", 1)[0]
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
        except Exception as e:  # no compiler, no headers, a broken cache entry: stay on ctypes
            reason = f"native launch entry unavailable: {e}"
            return None
        _module = mod
        reason = None
        return mod
