"""Whether where a layer's weight copies land in device memory changes a decode GEMM's time (twenty-third
session: the same kernel on 28672x8192 at M=1 took 33.2 us timed by gpu_trace.py --time in a fresh process
and 35.4 us through the bench, whose ceilings allocate and free gigabytes first).

Times the planner's kernel as the bench does (timing.time_calls) on weight copies prepared (a) in a fresh
process, (b) after allocating and freeing the bench's ceiling buffers without giving them back to the driver,
(c) the same after torch.cuda.empty_cache(); prints each copy's address modulo 2 MiB.

    python scripts/gpu_placement.py --shape 28672x8192 --m 1
"""
from __future__ import annotations

import argparse

import torch

import humming.ops as ops
from humming import reference as R
from humming.bench.timing import CudaGraphTimer, copies_for, time_calls
from humming.scheme import LayerSpec, WeightScheme


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="28672x8192")
    ap.add_argument("--m", type=int, default=1)
    args = ap.parse_args()
    n, k = map(int, args.shape.split("x"))
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    scheme = WeightScheme("int4", "group", 128)
    layer = LayerSpec(n=n, k=k, weight=scheme)
    qw = R.quantize((torch.randn(n, k, device=dev) * 0.02).half(), scheme)
    x = torch.randn(args.m, k, device=dev).half()
    timer = CudaGraphTimer(dev)

    def measure(tag: str) -> None:
        preps = [ops.prepare_weight(qw, layer=layer, device=dev)]
        copies = copies_for(preps[0].nbytes, props.L2_cache_size)  # (the bench's count)
        preps += [ops.prepare_weight(qw, layer=layer, device=dev) for _ in range(copies - 1)]
        calls = [lambda pw=pw: ops.gemm(x, pw) for pw in preps]
        for c in calls + calls:
            c()
        us = [time_calls(calls, timer, repeats=5).median_us for _ in range(2)]
        timer.release()
        where = [f"{pw.packed.w.data_ptr() % (1 << 21) // 1024} KiB" for pw in preps]
        print(f"{tag:<34} {us[0]:.2f} / {us[1]:.2f} us  copies {copies}  w mod 2 MiB: {', '.join(where)}", flush=True)

    measure("fresh process")
    measure("fresh process, again")
    # the bench's ceilings: copy buffers of 1 GiB, bf16 and fp8 matmuls of 8192, stream buffers of the layer's bytes
    junk = [torch.empty(1 << 30, dtype=torch.uint8, device=dev) for _ in range(2)]
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    junk += [a, a @ a]
    for nbytes in (121 << 20, 470 << 20):
        junk += [torch.empty(nbytes + 16 * i, dtype=torch.uint8, device=dev) for i in range(2)]
    torch.cuda.synchronize()
    del junk, a
    measure("after the bench's buffers, freed")
    torch.cuda.empty_cache()
    measure("after empty_cache")


if __name__ == "__main__":
    main()
