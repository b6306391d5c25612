"""How many cycles an SM takes per wgmma.mma_async m64nNk16 (A from registers, fp16, fp32 accumulators)
with nothing else to do: the ceiling of the warpgroup tiles' tensor work at a given token count N.

Each variant launches CTAs of one or two warpgroups, `ctas` per SM at once, whose warpgroups issue groups of
four wgmmas and retire them with wait_group WAIT (scripts/probes/wgmma_rate.cuh). Reports, per SM, the cycles
per wgmma (the launch's time in SM cycles / the wgmmas each SM issued) against the tensor pipe's dense fp16 rate
(N / 2 cycles per m64nNk16), and the SM clock that the CTAs' clock64 spans and the CUDA events imply (the CTAs an
SM holds at once, by the driver's occupancy count, run side by side; more run in rounds).

    python scripts/gpu_wgmma_rate.py [--json out.json]     (sm_90a only)
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
from pathlib import Path

import torch

from humming.jit import KernelSpec, driver, get_kernel

#: the probe kernel's header (an include root through HUMMING_INCLUDE_PATH, which main() sets)
PROBES = Path(__file__).resolve().parent / "probes"


class WgmmaRateParams(ctypes.Structure):
    _fields_ = [("sink", ctypes.c_uint64), ("spans", ctypes.c_uint64), ("iters", ctypes.c_int32),
                ("never", ctypes.c_float)]


def spec(n: int, wait: int, chains: int, redef: int, wgs: int, group: int = 4) -> KernelSpec:
    return KernelSpec(family="wgmma_rate", header="wgmma_rate.cuh", entry="humming::wgmma_rate",
                      params="humming::WgmmaRateParams",
                      config={"N": n, "WAIT": wait, "CHAINS": chains, "REDEF": redef, "GROUP": group},
                      target="sm_90a", threads=128 * wgs, smem_bytes=n * 128 + 1024,
                      params_size=ctypes.sizeof(WgmmaRateParams))


# (N, WAIT, CHAINS, REDEF, warpgroups per CTA, CTAs per SM)
VARIANTS = [(64, 1, 2, 1, 1, c) for c in (1, 2, 3, 4)] + [
    (64, 1, 1, 1, 1, 2), (64, 1, 2, 0, 1, 2), (64, 0, 2, 1, 1, 2), (64, 1, 2, 1, 2, 1), (64, 1, 2, 1, 2, 2),
    (64, 0, 2, 0, 1, 4), (128, 1, 2, 1, 1, 1), (128, 1, 2, 1, 1, 2), (128, 1, 1, 1, 1, 2),
    (256, 1, 1, 1, 1, 1), (256, 1, 1, 1, 1, 2), (256, 0, 1, 0, 1, 2), (32, 1, 2, 1, 1, 2), (16, 1, 2, 1, 1, 2)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=4000)
    ap.add_argument("--json")
    args = ap.parse_args()
    os.environ["HUMMING_INCLUDE_PATH"] = os.pathsep.join(
        p for p in (str(PROBES), os.environ.get("HUMMING_INCLUDE_PATH", "")) if p)
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    sink = torch.zeros(1, device=dev)
    rows = []
    print(f"{'N':>4} {'wait':>4} {'chains':>6} {'redef':>5} {'wg/cta':>6} {'cta/sm':>6} {'held':>4}"
          f"  {'clk/wgmma/SM':>12}"
          f"  {'x peak':>6}  {'GHz':>5}  {'TFLOP/s':>7}")
    for n, wait, chains, redef, wgs, ctas in VARIANTS:
        k = get_kernel(spec(n, wait, chains, redef, wgs))
        grid = sms * ctas
        spans = torch.zeros(grid, dtype=torch.int64, device=dev)
        plan = k.plan(WgmmaRateParams(sink.data_ptr(), spans.data_ptr(), args.iters, -1.0), grid=(grid,))
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
        # CTAs an SM holds at once (registers may hold fewer than asked): the launch runs in `waves` rounds of
        # `resident`, each as long as one CTA's span
        resident = min(ctas, driver.max_active_blocks(k.function(), 128 * wgs, k.spec.smem_bytes) or ctas)
        waves = -(-ctas // resident)
        cycles = span * waves  # (the SM's cycles over the whole launch)
        ghz = cycles / t / 1e9
        clk = cycles / (args.iters * 4 * wgs * ctas)  # per wgmma the SM issued
        tflops = grid * wgs * args.iters * 4 * 2 * 64 * n * 16 / t / 1e12
        row = dict(n=n, wait=wait, chains=chains, redef=redef, wgs=wgs, ctas=ctas, resident=resident,
                   clk_per_wgmma=clk, x_peak=clk / (n / 2), ghz=ghz, tflops=tflops, us=t * 1e6)
        rows.append(row)
        print(f"{n:>4} {wait:>4} {chains:>6} {redef:>5} {wgs:>6} {ctas:>6} {resident:>4}  {clk:>12.1f}"
              f"  {clk / (n / 2):>6.2f}"
              f"  {ghz:>5.2f}  {tflops:>7.0f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
