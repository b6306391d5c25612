"""Look inside a CUBIN on any machine: SASS, instruction counts, resource usage.

Uses ``cuobjdump`` (and the ``nvdisasm`` it calls for SASS) found by
cuda.pathfinder -- the pip wheels ``nvidia-cuda-cuobjdump`` and
``nvidia-cuda-nvdisasm`` work without a GPU or a CUDA toolkit::

    sass = disassemble(kernel.cubin)
    count(sass, r"F2FP\\..*E4M3")          # instructions matching a regex
    opcodes(sass)["HMMA.16816.F32"]       # Counter of opcodes
    resource_usage(kernel.cubin)          # {"humming_entry": {"REG": 40, "STACK": 0, "LOCAL": 0, ...}}
    summary(kernel.cubin)                 # registers, spills, MMA instructions, the K loop's instruction mix
"""
from __future__ import annotations

import collections
import functools
import os
import re
import shutil
import subprocess
import tempfile

__all__ = ["ToolMissing", "tool_path", "disassemble", "instructions", "count", "opcodes", "resource_usage", "summary",
           "describe_summary"]


class ToolMissing(RuntimeError):
    """cuobjdump/nvdisasm are not installed (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)."""


@functools.lru_cache(maxsize=None)
def tool_path(name: str) -> str:
    """Path of a CUDA binary utility (``cuobjdump``, ``nvdisasm``), or ToolMissing."""
    path = None
    try:
        from cuda.pathfinder import find_nvidia_binary_utility

        path = find_nvidia_binary_utility(name)
    except Exception:
        pass
    path = path or shutil.which(name)
    if not path:
        raise ToolMissing(f"{name} not found (cuda.pathfinder, PATH); install nvidia-cuda-cuobjdump "
                          "and nvidia-cuda-nvdisasm")
    return str(path)


def _run_on_cubin(args: list[str], cubin: bytes) -> str:
    env = dict(os.environ)
    try:  # cuobjdump --dump-sass runs nvdisasm: let it find the one we found
        env["NVDISASM_PATH"] = os.path.dirname(tool_path("nvdisasm"))
    except ToolMissing:
        pass
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        proc = subprocess.run([tool_path("cuobjdump"), *args, f.name], capture_output=True, text=True,
                              env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"cuobjdump {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def disassemble(cubin: bytes) -> str:
    """The SASS listing of ``cubin`` (``cuobjdump --dump-sass``)."""
    return _run_on_cubin(["--dump-sass"], cubin)


# "        /*0090*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;"
_INSN = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", re.M)


def instructions(sass: str) -> list[str]:
    """Instruction texts (predicate, opcode, operands), one per SASS instruction."""
    return _INSN.findall(sass)


_GUARD = re.compile(r"^@!?U?P\w+\s+")


def count(sass: str, pattern: str) -> int:
    """How many instructions match ``pattern`` (``re.search`` on each instruction
    without its predicate guard, so ``^LDG`` also counts ``@!P0 LDG ...``)."""
    rx = re.compile(pattern)
    return sum(1 for ins in instructions(sass) if rx.search(_GUARD.sub("", ins)))


def opcodes(sass: str) -> collections.Counter:
    """Counter of full opcodes with modifiers (``"F2FP.SATFINITE.E4M3.F32.PACK_AB.RELU"`` ...)."""
    c = collections.Counter()
    for ins in instructions(sass):
        words = _GUARD.sub("", ins).split()
        if words:
            c[words[0]] += 1
    return c


_ADDR = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/")
_BACK_BRANCH = re.compile(r"BRA\S*\s+(?:\S+, )?(0x[0-9a-f]+)")


def loop_bodies(sass: str) -> list[str]:
    """The SASS lines of every backward-branch span (a loop's body), in order."""
    lines = [(int(m.group(1), 16), line) for line in sass.splitlines() if (m := _ADDR.match(line))]
    spans = []
    for a, line in lines:
        m = _BACK_BRANCH.search(line)
        if m and int(m.group(1), 16) < a:
            start = int(m.group(1), 16)
            spans.append("\n".join(x for b, x in lines if start <= b <= a))
    return spans


def main_loop(sass: str) -> str:
    """The K loop: the backward-branch span holding the most MMAs (HMMA, IMMA, QMMA, HGMMA)."""
    best, best_n = "", -1
    for span in loop_bodies(sass):
        n = len(re.findall(r"[HIQ]G?MMA", span))
        if n > best_n:
            best, best_n = span, n
    return best


def local_in_loops(sass: str) -> int:
    """Local-memory loads and stores (LDL / STL: spills) inside loops."""
    return sum(count(span, r"^(LDL|STL)") for span in loop_bodies(sass))


_RES_FUNC = re.compile(r"Function ([^\s:]+):\s*\n\s*(.*)")
_RES_ITEM = re.compile(r"([A-Z_]+(?:\[\d+\])?):(\d+)")


def resource_usage(cubin: bytes) -> dict[str, dict[str, int]]:
    """``cuobjdump -res-usage``: per function, {"REG", "STACK", "SHARED", "LOCAL", ...}."""
    out = _run_on_cubin(["-res-usage"], cubin)
    return {m.group(1): {k: int(v) for k, v in _RES_ITEM.findall(m.group(2))}
            for m in _RES_FUNC.finditer(out)}


# tensor-core instructions: HMMA / IMMA / QMMA (mma.sync), HGMMA / IGMMA / QGMMA (wgmma), UTC*MMA (tcgen05)
_MMA_OP = re.compile(r"^[A-Z]*MMA(\.|$)")


def summary(cubin: bytes, entry: str = "humming_entry") -> dict:
    """What a kernel's machine code holds, for checking a build without its GPU: ``registers``, ``stack`` and
    ``local`` bytes (cuobjdump's resource usage of ``entry``, else of the cubin's first function), ``mma`` (each
    tensor-core opcode with modifiers and its count), ``main_loop`` (instructions of the K loop: the
    backward-branch span holding the most MMAs, see :func:`main_loop`), ``main_loop_mix`` (its base opcodes by
    count) and ``loop_spills`` (local loads and stores inside loops)."""
    sass = disassemble(cubin)
    usage = resource_usage(cubin)
    res = usage.get(entry) or next(iter(usage.values()), {})
    loop = main_loop(sass)
    mix = collections.Counter()
    for op, n in opcodes(loop).items():
        mix[op.split(".")[0]] += n
    return {"registers": res.get("REG"), "stack": res.get("STACK"), "local": res.get("LOCAL"),
            "mma": {op: n for op, n in sorted(opcodes(sass).items()) if _MMA_OP.match(op)},
            "main_loop": len(instructions(loop)), "main_loop_mix": dict(mix.most_common()),
            "loop_spills": local_in_loops(sass)}


def describe_summary(s: dict, top: int = 8) -> str:
    """:func:`summary` in two lines."""
    mma = ", ".join(f"{op} x{n}" for op, n in s["mma"].items()) or "none"
    mix = ", ".join(f"{op} {n}" for op, n in list(s["main_loop_mix"].items())[:top])
    spills = "no spills in loops" if not s["loop_spills"] else f"{s['loop_spills']} local loads/stores in loops"
    return (f"registers {s['registers']}, stack {s['stack']} B, local {s['local']} B; tensor-core MMAs: {mma}\n"
            f"K loop {s['main_loop']} instructions ({mix}); {spills}")
