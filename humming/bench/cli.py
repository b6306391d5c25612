"""``humming bench``: options, the CUDA wiring, and the outputs.

``add_arguments(parser)`` and ``run(args)`` are what a CLI subcommand
registry needs; ``cli_main(argv)`` runs it stand-alone
(``python -m humming.bench ...``).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import sys
from pathlib import Path

from ..scheme import ACT_PRESETS, WEIGHT_PRESETS, ActivationScheme, WeightScheme

__all__ = ["add_arguments", "run", "cli_main", "build_workloads", "select_methods", "parse_external",
           "DEFAULT_ADAPTERS"]

#: external library name -> adapter script (relative to the repository root)
DEFAULT_ADAPTERS = {"humming-kernels": "scripts/external/humming_kernels_adapter.py"}


def add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    from .workloads import PRESETS

    g = p.add_argument_group("workloads")
    g.add_argument("--preset", default=None,
                   help=f"model preset(s), comma-separated: {', '.join(sorted(PRESETS))}")
    g.add_argument("--shapes", default=None, help="dense N x K list, e.g. 4096x4096,14336x4096")
    g.add_argument("--moe-shapes", default=None, help="MoE E x topk x N x K list, e.g. 128x8x1536x2048")
    g.add_argument("--kind", choices=("all", "dense", "moe"), default="all", help="preset layers to keep")
    g.add_argument("--m", default=None, help="M (token) list, e.g. 1,16,256 (default: 1,16,64,256,1024,4096)")
    g = p.add_argument_group("schemes (humming's; the baselines use their own formats)")
    g.add_argument("--weight", default="int4", help="weight element format (int4, uint4, e4m3, e2m1, ...) or a "
                   f"preset ({', '.join(WEIGHT_PRESETS)}: its group size and scale format unless given)")
    g.add_argument("--group-size", type=int, default=None, help="scale group along K; 0 = per channel (default 128)")
    g.add_argument("--scale-fmt", default=None, help="weight scale format (fp16, bf16, fp32, e8m0, ...; default fp16)")
    g.add_argument("--zero-point", default="none", choices=("none", "int", "float"))
    g.add_argument("--act-order", action="store_true",
                   help="GPTQ act order: the weight's K stored permuted (a random permutation, each expert its own)")
    g.add_argument("--act", default="fp16", help="activations: fp16, bf16, e4m3, e5m2, int8, int4, e2m1, or a "
                   f"preset ({', '.join(ACT_PRESETS)}: its quantization, group size and scale format unless given)")
    g.add_argument("--act-quant", default=None, choices=("dynamic_token", "dynamic_group"))
    g.add_argument("--act-group-size", type=int, default=None)
    g.add_argument("--act-scale-fmt", default=None, help="activation scale format (fp32, e4m3 for NVFP4, "
                   "e8m0 for MX)")
    g = p.add_argument_group("method")
    g.add_argument("--methods", default=None, help="comma-separated subset of the methods (default: all)")
    g.add_argument("--external", action="append", default=[], metavar="NAME=PYTHONPATH",
                   help="also run an external library from PYTHONPATH in its own process "
                        f"(known: {', '.join(DEFAULT_ADAPTERS)}); repeatable")
    g.add_argument("--external-python", default=sys.executable, help="python for external adapters")
    g.add_argument("--repeats", type=int, default=None, help="timed repeats per point (>= 3; default 5)")
    g.add_argument("--min-calls", type=int, default=5,
                   help="calls per timed CUDA graph at the least: the weight copies' calls repeated whole (default 5)")
    g.add_argument("--warmup-s", type=float, default=0.0,
                   help="seconds of untimed replays before each point's repeats (default 0: the timed repeats "
                        "start a few replays after the checks; 0.1 times the sustained state)")
    g.add_argument("--first-warmup-s", type=float, default=None,
                   help="seconds of untimed replays, at the least, before each method's first point and each "
                        "ceiling: they follow host work that leaves the GPU idle (default 0.05; 0 for the method "
                        "of the figures taken before the sixty-second session)")
    g.add_argument("--quick", action="store_true", help="fewer M values and repeats")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--device", default="cuda")
    g = p.add_argument_group("output")
    g.add_argument("--out", default=None, help="output folder (default: bench-results/<time>)")
    g.add_argument("--no-plot", action="store_true")
    g.add_argument("--no-jit", action="store_true", help="skip compile and host-overhead figures")
    return p


def build_workloads(args) -> list:
    from .workloads import (activation_scheme_from, parse_moe_shapes, parse_shapes, preset_workloads,
                            weight_scheme_from)

    preset = WEIGHT_PRESETS.get(args.weight.lower())
    if preset is not None:  # (a preset's fields, then the flags given)
        fields = dict(preset, zero_point=args.zero_point)
        if args.group_size is not None and args.group_size > 0:
            fields.update(scale="group", group_size=args.group_size)
        elif args.group_size is not None:
            fields.update(scale="channel", group_size=None)
        if args.scale_fmt is not None:
            fields["scale_fmt"] = args.scale_fmt
        weight = WeightScheme(**fields)
    else:
        gs = 128 if args.group_size is None else args.group_size
        weight = weight_scheme_from(args.weight, gs or None, args.scale_fmt or "fp16", args.zero_point)
    preset = ACT_PRESETS.get(args.act.lower())
    if preset is not None:
        fields = dict(preset)
        for flag, key in (("act_quant", "quant"), ("act_group_size", "group_size"), ("act_scale_fmt", "scale_fmt")):
            if getattr(args, flag) is not None:
                fields[key] = getattr(args, flag)
        act = ActivationScheme(**fields)
    else:
        act = activation_scheme_from(args.act, args.act_quant, args.act_group_size, args.act_scale_fmt or "fp32")
    if getattr(args, "act_order", False):
        weight = weight.replace(act_order=True)
    out = []
    for name in filter(None, (args.preset or "").split(",")):
        out += preset_workloads(name.strip(), weight, act, args.kind)
    if args.shapes:
        out += parse_shapes(args.shapes, weight, act)
    if args.moe_shapes:
        out += parse_moe_shapes(args.moe_shapes, weight, act)
    if not out:
        raise ValueError("no workloads: give --preset, --shapes or --moe-shapes")
    return out


def select_methods(text: str | None) -> list:
    from .methods import default_methods

    methods = default_methods()
    if not text:
        return methods
    names = [n.strip() for n in text.split(",") if n.strip()]
    known = {m.name: m for m in methods}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"--methods: unknown {', '.join(unknown)}; expected some of {', '.join(known)}")
    return [known[n] for n in names]


def parse_external(items, python: str) -> list:
    import humming

    from .runner import ExternalSpec

    root = Path(humming.__file__).resolve().parents[1]
    out = []
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or name not in DEFAULT_ADAPTERS:
            raise ValueError(f"--external: expected NAME=PYTHONPATH with NAME one of {', '.join(DEFAULT_ADAPTERS)}, "
                             f"found {item!r}")
        out.append(ExternalSpec(name, str(root / DEFAULT_ADAPTERS[name]), str(Path(path).resolve()), python))
    return out


def run(args) -> int:
    import torch

    from .ceilings import DeviceCeilings
    from .env import environment
    from ..jit.bench_jit import bench_compile
    from .report import format_summary, format_table, plot_report, write_json
    from .runner import BenchOptions, Progress, count_points, run_bench
    from .stream import stream_spec, target_of
    from .timing import CudaGraphTimer, FIRST_WARMUP_S, MIN_REPEATS, host_overhead_us
    from .workloads import DEFAULT_M, QUICK_M, parse_m_list

    try:
        workloads = build_workloads(args)
        methods = select_methods(args.methods)
        external = parse_external(args.external, args.external_python)
        ms = parse_m_list(args.m) if args.m else (QUICK_M if args.quick else DEFAULT_M)
        repeats = args.repeats or (MIN_REPEATS if args.quick else 5)
        if repeats < MIN_REPEATS:
            raise ValueError(f"--repeats: expected at least {MIN_REPEATS}, found {repeats}")
    except ValueError as e:
        print(f"humming bench: {e}", file=sys.stderr)
        return 2
    device = torch.device(args.device)
    if device.type != "cuda" or not torch.cuda.is_available():
        print(f"humming bench: needs a CUDA device; torch sees none for {args.device!r}", file=sys.stderr)
        return 2
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    torch.cuda.set_device(device)
    out_dir = Path(args.out or f"bench-results/{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}")
    timer = CudaGraphTimer(device)
    options = BenchOptions(ms=ms, repeats=repeats, seed=args.seed, min_calls=max(1, args.min_calls),
                           warmup_s=max(0.0, args.warmup_s),
                           first_warmup_s=FIRST_WARMUP_S if args.first_warmup_s is None else max(0.0, args.first_warmup_s))
    args.first_warmup_s = options.first_warmup_s  # (the report's args: the value the run used)
    sleep_cycles = 200_000_000  # ~0.1 s at H200 clocks: longer than any 200 eager calls take to issue
    host = None if args.no_jit else (lambda call: host_overhead_us(
        call, hold=lambda: torch.cuda._sleep(sleep_cycles), sync=torch.cuda.synchronize))
    total = count_points(workloads, methods, ms)
    report = run_bench(workloads, methods, options, device=device, timer=timer,
                       ceilings=DeviceCeilings(device, timer, repeats, min_calls=options.min_calls,
                                               warmup_s=options.warmup_s, first_warmup_s=options.first_warmup_s),
                       external=external, host_overhead=host,
                       compile_figures=None if args.no_jit else (lambda spec: bench_compile(spec, repeats=3)),
                       jit_specs=[("stream-read kernel", stream_spec(target_of(device)))],
                       env=environment(device),
                       args={k: v for k, v in vars(args).items() if not callable(v)},
                       progress=Progress(total))
    print(format_table(report))
    print(format_summary(report))
    path = write_json(report, out_dir / "report.json")
    print(f"wrote {path}")
    if not args.no_plot:
        for png in plot_report(report, out_dir):
            print(f"wrote {png}")
    return 0


def cli_main(argv=None) -> int:
    parser = add_arguments(argparse.ArgumentParser(prog="humming bench", description=__doc__.splitlines()[0]))
    return run(parser.parse_args(argv))
