"""Fingerprints of the machine code of a set of planned dense kernels, to show a change leaves them alone.

    python scripts/sass_fingerprints.py OUT.json [--cache DIR]     # this tree's kernels
    python scripts/sass_fingerprints.py --compare OLD.json NEW.json

Run it on the tree before a change (``git stash``) and after, then compare: for each kernel (H200, A100 and
T4 plans of eight weight/activation pairs on two shapes at six token counts) it records a hash of the whole
SASS and of its main loop (addresses stripped), the registers, the stack and the instruction count. No GPU
is needed (NVRTC and nvdisasm from the pip wheels).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile


def _lines(sass: str) -> list[str]:
    return [re.sub(r"/\*[0-9a-f]+\*/", "", line).split(";")[0].strip()
            for line in sass.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", line)]


def fingerprints(cache_dir: str) -> dict:
    import humming
    from humming.jit import Runtime, inspect as I
    from humming.jit.inspect import main_loop
    from humming.scheme import ActivationScheme, LayerSpec, WeightScheme

    pairs = [(WeightScheme("int4", "group", 128), ActivationScheme("fp16")),
             (WeightScheme("uint4", "group", 64, zero_point="int"), ActivationScheme("bf16")),
             (WeightScheme("e4m3", "channel", scale_fmt="fp32"), ActivationScheme("bf16")),
             (WeightScheme("int4", "group", 128), ActivationScheme("int8", "dynamic_token")),
             (WeightScheme("int2", "group", 128), ActivationScheme("fp16")),
             (WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), ActivationScheme("bf16")),
             (WeightScheme("int4", "group", 128), ActivationScheme("e4m3", "dynamic_token")),
             (WeightScheme("e4m3", "channel", scale_fmt="fp32"), ActivationScheme("e4m3", "dynamic_token"))]
    specs = {}
    for dev in ("H200", "A100", "T4"):
        for ws, act in pairs:
            if dev == "T4" and act.fmt != "fp16":
                continue
            for n, k in ((8192, 8192), (4096, 14336)):
                p = humming.plan(LayerSpec(n, k, ws, act, out_dtype="bf16" if act.fmt == "bf16" else "fp16"), dev)
                for m in (1, 4, 16, 64, 256, 2048):
                    specs.setdefault(p.kernel(m), f"{dev} {ws.describe()} {act.describe()} {n}x{k} m{m}")
    rt = Runtime(cache_dir=cache_dir)
    rt.warmup(list(specs), executor="thread")
    out = {}
    for spec, what in specs.items():
        cubin = rt.kernel(spec).cubin
        sass = I.disassemble(cubin)
        usage = I.resource_usage(cubin)["humming_entry"]
        whole, loop = _lines(sass), _lines(main_loop(sass))
        out[what] = {"sass": hashlib.sha1("\n".join(whole).encode()).hexdigest(),
                     "loop": hashlib.sha1("\n".join(loop).encode()).hexdigest(),
                     "regs": usage["REG"], "stack": usage["STACK"], "instructions": len(whole)}
    return out


def compare(old: dict, new: dict) -> int:
    keys = sorted(set(old) | set(new))
    same = [k for k in keys if old.get(k) == new.get(k)]
    loop_same = [k for k in keys if k in old and k in new and old[k]["loop"] == new[k]["loop"]
                 and all(old[k][f] == new[k][f] for f in ("regs", "stack", "instructions"))]
    print(f"{len(keys)} kernels: {len(same)} identical, {len(loop_same)} with the same main loop, registers, "
          f"stack and instruction count")
    for k in keys:
        if k not in loop_same:
            print(f"  differs: {k}: {old.get(k)} -> {new.get(k)}")
    return 0 if len(loop_same) == len(keys) else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--cache", default=None, help="JIT cache folder (default: a fresh temporary one)")
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    a = ap.parse_args(argv)
    if a.compare:
        return compare(*(json.load(open(f)) for f in a.compare))
    if not a.out:
        ap.error("give OUT.json or --compare OLD NEW")
    with tempfile.TemporaryDirectory() as tmp:
        fp = fingerprints(a.cache or tmp)
    json.dump(fp, open(a.out, "w"), indent=1)
    print(f"{len(fp)} kernels -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
