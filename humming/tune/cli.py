"""``humming tune``: measure a layer's candidate kernel configs on this GPU and store the fastest in the
tuning database (:mod:`humming.tune.autotune`, :mod:`humming.tune.database`).

Takes the layer flags of ``humming plan`` (or ``--config``); an MoE layer (``--experts E``) is timed with ``--topk``
experts per token. ``--dry-run`` prints the heuristics' tuning and the candidates each range would time, for this
GPU or a named ``--device``, without a GPU.
"""
from __future__ import annotations

import argparse

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..cli import _plan_args

    _plan_args(p)
    p.add_argument("--shapes", help="several layers, NxK comma-separated (instead of --n / --k), e.g. "
                   "6144x4096,4096x4096,28672x4096,4096x14336")
    p.add_argument("--preset", help="the dense layers of a model preset of the bench (instead of --n / --k): "
                   "llama3-8b, llama3-70b, qwen3-30b-a3b, deepseek-v3")
    p.add_argument("--max-m", type=int, default=4096, help="tune the M ranges up to this many tokens")
    p.add_argument("--topk", type=int, default=None,
                   help="MoE layers (--experts): experts per token, routed at random (default 8, at most the experts)")
    p.add_argument("--repeats", type=int, default=5, help="timed repeats per candidate, token count and round")
    p.add_argument("--rounds", type=int, default=3, help="rounds over the candidates, each in a new random order")
    p.add_argument("--margin", type=float, default=0.03,
                   help="keep a candidate only when it beats the heuristics' config by more than this fraction")
    p.add_argument("--db", help="the tuning database file (default: HUMMING_TUNING_DB, else tuning.json in "
                   "humming's cache folder)")
    p.add_argument("--no-store", action="store_true", help="measure and print, store nothing")
    p.add_argument("--dry-run", action="store_true",
                   help="print the candidates per M range and exit (no GPU needed with --device)")


def layers_from_args(args) -> list:
    """The layers to tune: ``--shapes`` or ``--preset`` (its dense layers), else the one of --n / --k."""
    from ..cli import layer_from_args
    from ..errors import FormatError

    if args.shapes and args.preset:
        raise FormatError("--shapes and --preset: give one of them")
    if args.shapes:
        from ..bench.workloads import _ints  # (the bench's --shapes, parsed the same way)

        shapes = [_ints(item, "x", 2, "--shapes", "N x K pairs such as '4096x4096,14336x4096'")
                  for item in filter(None, (s.strip() for s in args.shapes.split(",")))]
    elif args.preset:
        from ..bench.workloads import PRESETS

        if args.preset not in PRESETS:
            raise FormatError(f"--preset: expected one of {', '.join(sorted(PRESETS))}, got {args.preset!r}")
        shapes = [(n, k) for _, n, k, experts, _ in PRESETS[args.preset] if not experts]
    else:
        return [layer_from_args(args)]
    return [layer_from_args(argparse.Namespace(**{**vars(args), "n": n, "k": k})) for n, k in dict.fromkeys(shapes)]


def run(args) -> int:
    from ..planner import plan
    from ..planner.planner import resolve_device
    from .autotune import candidate_plans, layer_range_token_counts, tune

    layers = layers_from_args(args)
    if args.dry_run:
        _, caps, _ = resolve_device(args.device)
        for layer in layers:
            p = plan(layer, args.device, tuning_db=False)
            if not p.runnable:
                print(f"humming tune: the plan for {p.device} cannot run: {p.not_runnable_reason}")
                return 1
            print(f"{layer.describe()} on {p.device}: candidates per M range (the heuristics' config first)")
            for i, r in enumerate(p.tuning):
                if r.lo > args.max_m:
                    break
                ms = layer_range_token_counts(layer, r.lo, r.hi, args.max_m, args.topk)
                if not ms:
                    continue
                for j, (cfg, _) in enumerate(candidate_plans(p, caps, i)):
                    at = f"{r.label()} at M {', '.join(map(str, ms))}" if not layer.is_moe else \
                        f"{r.label()} per expert at M {', '.join(map(str, ms))}"
                    head = at if j == 0 else ""
                    print(f"  {head:<40}{', '.join(f'{k}={v}' for k, v in cfg.items())}")
        return 0
    import torch

    device = args.device
    if device is not None and not str(device).isdigit():
        print("humming tune: --device names a GPU of this machine by index (or leave it out); "
              "a named device only with --dry-run")
        return 2
    dev = torch.device("cuda", int(device)) if device is not None else None
    for layer in layers:
        print(f"== {layer.describe()}")
        tune(layer, dev, max_m=args.max_m, repeats=args.repeats, rounds=args.rounds, margin=args.margin,
             store=not args.no_store, db=args.db, topk=args.topk if layer.is_moe else None)
    return 0
