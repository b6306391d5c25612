"""``humming compile``: compile a layer's kernels ahead of time, in parallel.

Takes the same layer flags as ``humming plan`` (or ``--config``) plus the token
counts to prepare for; prints one line per kernel (cache origin and seconds) and,
with ``--inspect``, what its machine code holds (registers, spills, the tensor-core
instructions, the K loop's instruction mix: :func:`humming.jit.inspect.summary`).
Works without a GPU: the target comes from ``--device`` (default: the detected
GPU) and the kernels land in the disk cache for the GPU run to find.
"""
from __future__ import annotations

import argparse
import time

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..cli import _plan_args

    _plan_args(p)
    p.add_argument("--m", default="1,16,64,256,1024",
                   help="token counts to compile for (each picks its M range's kernel)")
    p.add_argument("--workers", type=int, default=None, help="parallel compiles (default: CPU count)")
    p.add_argument("--inspect", action="store_true",
                   help="also print each kernel's registers, spills, tensor-core instructions and K-loop mix "
                        "(needs cuobjdump and nvdisasm: the dev extra)")


def run(args) -> int:
    import humming
    from ..cli import layer_from_args
    from . import default_runtime, inspect, warmup

    layer = layer_from_args(args)
    plan = humming.plan(layer, args.device)
    ms = [int(v) for v in args.m.split(",")]
    specs = list(dict.fromkeys(plan.kernel(m) for m in ms))
    t0 = time.perf_counter()
    results = warmup(specs, max_workers=args.workers)
    rt = default_runtime()
    for r in results:
        print(f"{r.spec.name}  {r.origin:<8s} {r.seconds:6.2f} s  key {r.key[:16]}")
        if args.inspect:
            summary = inspect.summary(rt.kernel(r.spec).cubin)
            print("    " + inspect.describe_summary(summary).replace("\n", "\n    "))
    print(f"{len(results)} kernel{'s' if len(results) != 1 else ''} for {plan.device} ({specs[0].target}) in "
          f"{time.perf_counter() - t0:.2f} s")
    return 0
