"""How many cycles an SM takes per tensor-core instruction with nothing else to do: wgmma.mma_async m64nNk16 (A
from registers, fp16, fp32 accumulators; the warpgroup tiles' instruction, the ceiling of their tensor work at N
tokens) and mma.sync m16n8k16 (the register rings' and 16-row tiles'; at one token they use one of its eight
columns).

wgmma: each variant launches CTAs of one or two warpgroups, `ctas` per SM at once, whose warpgroups issue groups
of four wgmmas and retire them with wait_group WAIT (scripts/probes/wgmma_rate.cuh). Reported per SM: the cycles
per wgmma (the launch's time in SM cycles / the wgmmas each SM issued) against the tensor pipe's dense fp16 rate
(N / 2 cycles per m64nNk16).

mma.sync: CTAs of W warps, `ctas` per SM, each warp issuing groups of eight m16n8k16 into CHAINS accumulator sets
(scripts/probes/mma_sync_rate.cuh). Reported: the cycles per MMA of one sub-partition (an SM has four; the warps
spread over them) against the same dense rate (m16n8k16 is 8 / 64 of an m64n64k16: 4 cycles an SM, 16 a
sub-partition).

Both report the weights an SM multiplies per cycle at one token (m64nNk16: 64 x 16 per instruction whatever N;
m16n8k16: 16 x 16 per instruction, four sub-partitions), the SM clock that the CTAs' clock64 spans and the CUDA
events imply, and TFLOP/s of the instructions' full width. The CTAs an SM holds at once, by the driver's
occupancy count, run side by side; more run in rounds.

    python scripts/gpu_wgmma_rate.py [--only wgmma|mma_sync] [--json out.json]     (sm_90a only)
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
from pathlib import Path

import torch

from humming.jit import KernelSpec, driver, get_kernel

#: the probe kernels' headers (an include root through HUMMING_INCLUDE_PATH, which main() sets)
PROBES = Path(__file__).resolve().parent / "probes"


class RateParams(ctypes.Structure):  # (scripts/probes/rate_params.cuh)
    _fields_ = [("sink", ctypes.c_uint64), ("spans", ctypes.c_uint64), ("iters", ctypes.c_int32),
                ("never", ctypes.c_float)]


def spec(n: int, wait: int, chains: int, redef: int, wgs: int, group: int = 4) -> KernelSpec:
    return KernelSpec(family="wgmma_rate", header="wgmma_rate.cuh", entry="humming::wgmma_rate",
                      params="humming::RateParams",
                      config={"N": n, "WAIT": wait, "CHAINS": chains, "REDEF": redef, "GROUP": group},
                      target="sm_90a", threads=128 * wgs, smem_bytes=n * 128 + 1024,
                      params_size=ctypes.sizeof(RateParams))


def mma_spec(warps: int, chains: int, redef: int, group: int = 8, target: str = "sm_90a") -> KernelSpec:
    return KernelSpec(family="mma_sync_rate", header="mma_sync_rate.cuh", entry="humming::mma_sync_rate",
                      params="humming::RateParams", config={"CHAINS": chains, "REDEF": redef, "GROUP": group},
                      target=target, threads=32 * warps, smem_bytes=0, params_size=ctypes.sizeof(RateParams))


# (N, WAIT, CHAINS, REDEF, warpgroups per CTA, CTAs per SM)
VARIANTS = [(64, 1, 2, 1, 1, c) for c in (1, 2, 3, 4)] + [
    (64, 1, 1, 1, 1, 2), (64, 1, 2, 0, 1, 2), (64, 0, 2, 1, 1, 2), (64, 1, 2, 1, 2, 1), (64, 1, 2, 1, 2, 2),
    (64, 0, 2, 0, 1, 4), (128, 1, 2, 1, 1, 1), (128, 1, 2, 1, 1, 2), (128, 1, 1, 1, 1, 2),
    (256, 1, 1, 1, 1, 1), (256, 1, 1, 1, 1, 2), (256, 0, 1, 0, 1, 2), (32, 1, 2, 1, 1, 2), (16, 1, 2, 1, 1, 2),
    (16, 1, 2, 1, 1, 4), (8, 1, 2, 1, 1, 2), (8, 1, 2, 1, 1, 4), (8, 1, 2, 1, 2, 2)]
# (warps per CTA, CHAINS, REDEF, CTAs per SM): the one-token rings run 8 warps at two CTAs an SM
MMA_VARIANTS = [(4, 1, 1, 1), (4, 2, 1, 1), (4, 4, 1, 1), (8, 1, 1, 2), (8, 2, 1, 2), (8, 4, 1, 2), (8, 4, 0, 2),
                (16, 2, 1, 1), (16, 4, 1, 2)]


def timed(kernel, grid: int, ctas: int, threads: int, iters: int):
    """(seconds, SM cycles over the launch, CTAs an SM holds at once) of the best of five launches."""
    dev = torch.device("cuda")
    sink = torch.zeros(1, device=dev)
    spans = torch.zeros(grid, dtype=torch.int64, device=dev)
    plan = kernel.plan(RateParams(sink.data_ptr(), spans.data_ptr(), iters, -1.0), grid=(grid,))
    for _ in range(3):
        plan.launch()
    torch.cuda.synchronize()
    best = None
    for _ in range(5):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        plan.launch()
        e1.record()
        torch.cuda.synchronize()
        t = e0.elapsed_time(e1) * 1e-3
        if best is None or t < best[0]:
            best = (t, spans.float().median().item())
    t, span = best
    # (the launch runs in `waves` rounds of `resident` CTAs an SM, each as long as one CTA's span)
    resident = min(ctas, driver.max_active_blocks(kernel.function(), threads, kernel.spec.smem_bytes) or ctas)
    return t, span * -(-ctas // resident), resident


def run_wgmma(sms: int, iters: int, rows: list):
    print(f"wgmma m64nNk16\n{'N':>4} {'wait':>4} {'chains':>6} {'redef':>5} {'wg/cta':>6} {'cta/sm':>6} {'held':>4}"
          f"  {'clk/wgmma/SM':>12}  {'x peak':>6}  {'w/clk/SM':>8}  {'GHz':>5}  {'TFLOP/s':>7}")
    for n, wait, chains, redef, wgs, ctas in VARIANTS:
        k = get_kernel(spec(n, wait, chains, redef, wgs))
        t, cycles, resident = timed(k, sms * ctas, ctas, 128 * wgs, iters)
        clk = cycles / (iters * 4 * wgs * ctas)  # per wgmma the SM issued
        row = dict(kind="wgmma", n=n, wait=wait, chains=chains, redef=redef, wgs=wgs, ctas=ctas, resident=resident,
                   clk_per_wgmma=clk, x_peak=clk / (n / 2), weights_per_clk=64 * 16 / clk, ghz=cycles / t / 1e9,
                   tflops=sms * ctas * wgs * iters * 4 * 2 * 64 * n * 16 / t / 1e12, us=t * 1e6)
        rows.append(row)
        print(f"{n:>4} {wait:>4} {chains:>6} {redef:>5} {wgs:>6} {ctas:>6} {resident:>4}  {clk:>12.1f}"
              f"  {row['x_peak']:>6.2f}  {row['weights_per_clk']:>8.0f}  {row['ghz']:>5.2f}  {row['tflops']:>7.0f}",
              flush=True)


def run_mma_sync(sms: int, iters: int, rows: list, group: int = 8):
    print(f"mma.sync m16n8k16\n{'warps':>5} {'chains':>6} {'redef':>5} {'cta/sm':>6} {'held':>4}"
          f"  {'clk/mma/SMSP':>12}  {'x peak':>6}  {'w/clk/SM':>8}  {'GHz':>5}  {'TFLOP/s':>7}")
    for warps, chains, redef, ctas in MMA_VARIANTS:
        k = get_kernel(mma_spec(warps, chains, redef, group))
        t, cycles, resident = timed(k, sms * ctas, ctas, 32 * warps, iters)
        clk = cycles / (iters * group * warps * ctas / 4)  # per MMA one sub-partition issued
        row = dict(kind="mma_sync", warps=warps, chains=chains, redef=redef, ctas=ctas, resident=resident,
                   clk_per_mma=clk, x_peak=clk / 16, weights_per_clk=4 * 16 * 16 / clk, ghz=cycles / t / 1e9,
                   tflops=sms * ctas * warps * iters * group * 2 * 16 * 8 * 16 / t / 1e12, us=t * 1e6)
        rows.append(row)
        print(f"{warps:>5} {chains:>6} {redef:>5} {ctas:>6} {resident:>4}  {clk:>12.1f}  {row['x_peak']:>6.2f}"
              f"  {row['weights_per_clk']:>8.0f}  {row['ghz']:>5.2f}  {row['tflops']:>7.0f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=4000)
    ap.add_argument("--only", choices=("wgmma", "mma_sync"))
    ap.add_argument("--json")
    args = ap.parse_args()
    os.environ["HUMMING_INCLUDE_PATH"] = os.pathsep.join(
        p for p in (str(PROBES), os.environ.get("HUMMING_INCLUDE_PATH", "")) if p)
    sms = torch.cuda.get_device_properties(torch.device("cuda")).multi_processor_count
    rows: list = []
    if args.only != "mma_sync":
        run_wgmma(sms, args.iters, rows)
    if args.only != "wgmma":
        run_mma_sync(sms, args.iters, rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
