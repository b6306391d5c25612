"""Facts recorded with every report: library versions, the device, the commit."""
from __future__ import annotations

import importlib.metadata
import platform
import subprocess
from pathlib import Path

__all__ = ["versions", "device_facts", "git_facts", "settings", "environment"]

_PACKAGES = ("torch", "cuda-bindings", "nvidia-cuda-nvrtc", "triton", "numpy", "matplotlib")


def versions() -> dict:
    import torch

    import humming

    out = {"python": platform.python_version(), "humming": humming.__version__,
           "torch_cuda": torch.version.cuda}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    try:
        from cuda.bindings import nvrtc

        err, major, minor = nvrtc.nvrtcVersion()
        out["nvrtc"] = f"{major}.{minor}"
    except Exception:  # no NVRTC is a fact, not an error
        out["nvrtc"] = None
    return out


def _nvidia_smi(index: int) -> dict:
    fields = ("clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem", "driver_version", "power.limit")
    try:
        out = subprocess.run(["nvidia-smi", f"--id={index}", f"--query-gpu={','.join(fields)}",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return {}
    if out.returncode != 0 or not out.stdout.strip():
        return {}
    vals = [v.strip() for v in out.stdout.strip().splitlines()[0].split(",")]
    return {f.replace(".", "_"): v for f, v in zip(fields, vals)}


def device_facts(device) -> dict:
    """Name, SM count, L2, memory and clocks (where readable) of a CUDA device."""
    import torch

    dev = torch.device(device)
    if dev.type != "cuda":
        return {"type": dev.type, "name": platform.processor() or platform.machine()}
    props = torch.cuda.get_device_properties(dev)
    index = dev.index if dev.index is not None else torch.cuda.current_device()
    major, minor = torch.cuda.get_device_capability(dev)
    facts = {
        "type": "cuda", "index": index, "name": props.name, "capability": f"{major}.{minor}",
        "sm_count": props.multi_processor_count,
        "l2_bytes": int(getattr(props, "L2_cache_size", 0) or 0),
        "memory_bytes": int(props.total_memory),
    }
    facts.update(_nvidia_smi(index))
    return facts


def git_facts(start: Path | None = None) -> dict:
    root = Path(start or Path(__file__).resolve().parent)

    def git(*args):
        try:
            out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def settings() -> dict:
    """The HUMMING_* environment variables of the run that change what runs (e.g. HUMMING_PDL=0, plain
    launches for the decode kernels; not the cache and include paths), so that a report says how its
    kernels were launched."""
    import os

    return {k: v for k, v in sorted(os.environ.items())
            if k.startswith("HUMMING_") and not k.endswith(("_DIR", "_PATH"))}


def environment(device) -> dict:
    return {"versions": versions(), "device": device_facts(device), "git": git_facts(), "settings": settings()}
