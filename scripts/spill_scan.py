"""Compile the kernels the planner picks for 1-8 tokens over many weight schemes, shapes and targets, on the CPU,
and list those that spill (a stack, and how many local loads / stores sit inside a loop).

python3 scripts/spill_scan.py --devices h200,a100,l40s [--cache DIR]

The kernels are compiled once into DIR (NVRTC; about 660 for the three targets above, some minutes on two cores;
a second run reads them back). A spill outside the loops (a few bytes, once per CTA) is listed too; the compile
test test_planned_decode_kernels_keep_their_loops_in_registers holds a subset of these to no loop spill.

Other activations, MoE layers and token counts (the fifty-fifth session's scan of integer weights made fp8
operands: 654 kernels, none spilled):

python3 scripts/spill_scan.py --devices h200,sm_89,sm_120 --acts e4m3,e5m2,e4m3:static --experts 0,64 \
    --shapes 1536x2048 --m 1,8,16,33,64,128,256,1024,4096

Codes gathered from bit planes and small layers (the seventy-eighth session's scan found the T4's 16- and 32-row decode
tiles of sub-byte codes in groups of 64, and uint7 g64 on the long-K ring of sm_86 / sm_89 / sm_90a):

python3 scripts/spill_scan.py --devices t4,a10,l40s,a100,h200 --formats int3,int4,int5,int6,int7,uint5,uint7,int8 \
    --shapes 2048x1024,256x512,1000x3584,4096x14336 --m 1,2,8 --acts fp16,int8
"""
import argparse

import humming
from humming.jit import Runtime, inspect as I
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme

SHAPES = [(4096, 4096), (8192, 4096), (4096, 2048), (4096, 14336), (8192, 8192), (14336, 4096), (28672, 8192),
          (7392, 3696)]


#: the integer formats scanned by default (--formats adds others: int5-int7 / uint5-uint7, whose codes are gathered
#: from bit planes)
FORMATS = ("int4", "uint4", "int3", "int2", "int8", "uint8")


def schemes(formats=FORMATS):
    out = []
    for fmt in formats:
        zp = "none" if fmt.startswith("int") else "int"
        out += [WeightScheme(fmt, "group", g, zero_point=zp) for g in (16, 32, 64, 128)]
        if zp == "none":
            out.append(WeightScheme(fmt, "channel", scale_fmt="fp32"))
    return out + [WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"),
                  WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"),
                  WeightScheme("e4m3", "channel", scale_fmt="fp32"),
                  WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="h200,a100,l40s")
    ap.add_argument("--m", default="1,2,4,8")
    ap.add_argument("--cache", default=None, help="kernel cache folder (default: humming's)")
    ap.add_argument("--acts", default="fp16,bf16",
                    help="activations: fp16, bf16, or a quantized format per token (int8, e4m3, ...; FMT:static for "
                         "a static per-tensor scale)")
    ap.add_argument("--experts", default="0", help="comma list: 0 dense, E an MoE layer of E experts")
    ap.add_argument("--shapes", default=None, help="N x K list (default: the decode shapes above)")
    ap.add_argument("--formats", default=",".join(FORMATS),
                    help="integer weight formats (comma list; the float ones are always scanned)")
    a = ap.parse_args()
    shapes = [tuple(map(int, s.split("x"))) for s in a.shapes.split(",")] if a.shapes else SHAPES
    rt = Runtime(cache_dir=a.cache) if a.cache else Runtime()
    picks = {}
    for dev in a.devices.split(","):
        for s in schemes(tuple(a.formats.split(","))):
            for act, e, (n, k) in ((x, int(e), nk) for x in a.acts.split(",") for e in a.experts.split(",")
                                   for nk in shapes):
                fmt, _, mode = act.partition(":")
                scheme = (ActivationScheme(fmt) if fmt in ("fp16", "bf16") else
                          ActivationScheme(fmt, "static_tensor" if mode == "static" else "dynamic_token"))
                out = fmt if fmt in ("fp16", "bf16") else "bf16"
                try:
                    p = humming.plan(LayerSpec(n, k, s, scheme, out_dtype=out, num_experts=e), dev)
                except humming.errors.HummingError:
                    continue  # (a shape the scheme does not divide, a pair no family runs)
                if not p.runnable or p.family != "mma_sync":
                    continue
                for m in map(int, a.m.split(",")):
                    picks.setdefault(p.kernel(m), []).append((dev, s.describe(), act, f"{n}x{k}", e, m))
    specs = list(picks)
    print(f"{len(specs)} distinct kernels", flush=True)
    rt.warmup(specs, executor="thread")
    found = 0
    for spec in specs:
        kern = rt.kernel(spec)
        u = I.resource_usage(kern.cubin)["humming_entry"]
        if not (u["LOCAL"] or u["STACK"]):
            continue
        found += 1
        in_loops = I.local_in_loops(I.disassemble(kern.cubin))
        cfg = dict(spec.config)
        tile = {x: cfg[x] for x in ("BN", "BK", "WN", "WK", "STAGES", "STREAM") if x in cfg}
        print(f"{picks[spec][0]} (+{len(picks[spec]) - 1} more): {u['REG']} registers, stack {u['STACK']} B, "
              f"local {u['LOCAL']} B, {in_loops} LDL/STL in loops; {tile}", flush=True)
    print(f"{found} of {len(specs)} spill")


if __name__ == "__main__":
    main()
