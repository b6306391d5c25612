"""The ``humming`` command line.

``humming devices``                 known devices (capability files, plugins' too) and detected GPUs
``humming capabilities DEVICE``     the resolved capability table of a device
``humming plan ...``                a plan from flags or from a checkpoint's config.json

Subcommands live in a small registry so other modules can add theirs::

    from humming.cli import command

    def _args(p):
        p.add_argument("--shape")

    @command("bench", help="run the benchmark suite", configure=_args)
    def _bench(args) -> int:
        ...

A module that registers commands is listed in :data:`COMMAND_MODULES`; ``main``
imports those before parsing. A module that need not import this one offers
``add_arguments(parser)`` and ``run(args)`` and is listed in :data:`LAZY_COMMANDS`. Exit codes: 0 success, 1 unsupported (the plan
has no kernel), 2 a bad request (unknown device, malformed config, bad flags).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from dataclasses import dataclass
from typing import Callable

from .scheme import ACT_PRESETS, WEIGHT_PRESETS

__all__ = ["command", "register_command", "COMMANDS", "COMMAND_MODULES", "LAZY_COMMANDS", "build_parser", "main",
           "layer_from_args"]

#: Modules imported by :func:`main` so that their ``@command`` registrations run.
COMMAND_MODULES: list[str] = []
#: Subcommands defined elsewhere without importing this module: name -> (module, help). The module
#: offers ``add_arguments(parser)`` and ``run(args) -> int``; it is imported when the parser is built.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "bench": ("humming.bench.cli", "benchmark humming's kernels (and peers) on this GPU"),
    "demo": ("humming.demo", "write a small GPTQ checkpoint, plan, compile and run it (reference without a GPU)"),
    "compile": ("humming.jit.compile_cli", "compile the kernels of layers ahead of time (no GPU needed)"),
    "tune": ("humming.tune.cli", "time a layer's candidate kernel configs on this GPU; store the fastest"),
}


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    run: Callable
    configure: Callable | None = None


COMMANDS: dict[str, Command] = {}


def register_command(name: str, help: str, run: Callable, configure: Callable | None = None) -> None:
    """Add subcommand ``name``: ``configure(parser)`` adds its arguments, ``run(args)`` returns the exit code."""
    if name in COMMANDS and COMMANDS[name].run is not run:
        raise ValueError(f"humming CLI: subcommand {name!r} is already registered "
                         f"(by {COMMANDS[name].run.__module__})")
    COMMANDS[name] = Command(name, help, run, configure)


def command(name: str, help: str, configure: Callable | None = None):
    """Decorator form of :func:`register_command`."""
    def deco(run):
        register_command(name, help, run, configure)
        return run
    return deco


# ---------------------------------------------------------------------------
# devices
# ---------------------------------------------------------------------------


def _devices_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--no-detect", action="store_true", help="do not look for GPUs")
    p.add_argument("--resolve", metavar="GPU_NAME",
                   help="only show what a GPU reporting this name would be detected as (no GPU needed)")
    p.add_argument("--cc", metavar="MAJOR.MINOR",
                   help="with --resolve: the compute capability it reports (default: that of the product "
                   "whose name pattern matches)")


def _resolve(name: str, cc: str | None):
    from types import SimpleNamespace

    from . import capabilities
    from .device import Device
    from .plugins import entry_of, get_plugin_manager

    get_plugin_manager()
    if cc is None:
        product = capabilities.match_device_name(name)
        major, minor = product.compute_capability if product is not None else (0, 0)
    else:
        try:
            major, minor = (int(x) for x in cc.split("."))
        except ValueError:
            raise ValueError(f"--cc: expected MAJOR.MINOR such as 9.0, got {cc!r}") from None
    return [entry_of(Device.from_properties(SimpleNamespace(name=name, major=major, minor=minor)))]


@command("devices", help="list known devices and detected GPUs", configure=_devices_args)
def _devices(args) -> int:
    from .plugins import devices

    if args.resolve:
        entries = _resolve(args.resolve, args.cc)
    else:
        entries = devices(detect_gpus=not args.no_detect)
    if args.json:
        print(json.dumps([e.to_dict() for e in entries], indent=2))
        return 0
    if not args.resolve and not any(e.detected for e in entries):
        print("# no GPU detected; known devices follow")
    if args.resolve:
        e = entries[0]
        print(f"{args.resolve!r} -> {e.name} ({e.kind}; {' -> '.join(e.chain)})")
        return 0
    width = max((len(e.name) for e in entries), default=8)
    for e in entries:
        mark = f"cuda:{e.index}" if e.detected else "-"
        extra = f"  [{e.gpu_name}]" if e.gpu_name else ""
        prov = "  (provisional)" if e.provisional else ""
        print(f"{mark:<7} {e.name:<{width}}  {e.kind:<13} {' -> '.join(e.chain)}{prov}{extra}")
    return 0


# ---------------------------------------------------------------------------
# capabilities
# ---------------------------------------------------------------------------


def _caps_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("device", help="a device or architecture name (H20, sm_89, zhenwu-810e, ...)")
    p.add_argument("--json", action="store_true", help="print the resolved table as JSON")


@command("capabilities", help="show the resolved capability table of a device", configure=_caps_args)
def _capabilities(args) -> int:
    from . import capabilities
    from .plugins import get_plugin_manager

    get_plugin_manager()
    caps = capabilities.load(args.device)
    if args.json:
        print(json.dumps(caps.to_dict(), indent=2, sort_keys=True))
    else:
        print(caps.explain())
    return 0


# ---------------------------------------------------------------------------
# plan
# ---------------------------------------------------------------------------

def _plan_args(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("what to plan (flags, or --config)")
    src.add_argument("--config", help="a checkpoint's config.json (its quantization_config is read; "
                     "a ModelOpt hf_quant_config.json works too)")
    src.add_argument("--layer", help="with --config: the layer whose scheme to use, for configs with "
                     "per-layer groups (default: the first linear group)")
    src.add_argument("--weight", help="weight format (int4, uint4, int8, e4m3/fp8, e2m1/fp4, ...) "
                     f"or a preset ({', '.join(WEIGHT_PRESETS)})")
    src.add_argument("--group-size", type=int, help="K elements per weight scale (<= 0: per channel)")
    src.add_argument("--scale", choices=("tensor", "channel", "group", "block"), help="weight scale kind")
    src.add_argument("--block-n", type=int, help="N extent of block scales")
    src.add_argument("--scale-fmt", help="weight scale format (fp16, bf16, fp32, e4m3, e8m0, ...)")
    src.add_argument("--zero-point", choices=("none", "int", "float"), help="weight zero points")
    src.add_argument("--global-scale", choices=("none", "tensor", "channel"))
    src.add_argument("--act-order", action="store_true", help="GPTQ act order (desc_act)")
    src.add_argument("--group-offset", type=int,
                     help="a K-shard of a larger layer whose scale groups straddle the shards: its first column's "
                          "offset into its first group (e.g. 112 for rank 1 of 29568 columns over 8 ranks, g128)")
    src.add_argument("--act", help="activation format (fp16, bf16, fp8/e4m3, e5m2, int8, int4, fp4/e2m1) "
                     f"or a preset ({', '.join(ACT_PRESETS)})")
    src.add_argument("--act-quant", choices=("dynamic_token", "dynamic_group", "static_tensor"))
    src.add_argument("--act-group-size", type=int)
    src.add_argument("--act-scale-fmt")
    shape = p.add_argument_group("layer shape")
    shape.add_argument("--n", type=int, help="output features (default: the config's "
                       "intermediate_size, else 4096)")
    shape.add_argument("--k", type=int, help="input features (default: the config's hidden_size, else 4096)")
    shape.add_argument("--experts", type=int, default=0, help="number of experts (MoE); 0 = dense")
    shape.add_argument("--out-dtype", choices=("fp16", "bf16", "fp32"),
                       help="output dtype (default: the config's torch_dtype, else --act when it is fp16 / "
                       "bf16, else bf16)")
    shape.add_argument("--bias", action="store_true")
    p.add_argument("--device", help="device name (H20, sm_89, ...); default: the current GPU")
    p.add_argument("--hardware", action="store_true",
                   help="plan with every family the chip has, implemented or not")
    p.add_argument("--json", action="store_true", help="print Plan.to_dict() as JSON")


def _dtype_name(cfg: dict) -> str | None:
    t = str(cfg.get("torch_dtype") or cfg.get("dtype") or "").lower()
    return {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32"}.get(t)


def _weight_from_args(args, out_dtype: str):
    from .dtypes import get_format
    from .scheme import WeightScheme

    name = (args.weight or "int4").lower()
    fields = dict(WEIGHT_PRESETS.get(name, {}))
    if not fields:
        fmt = get_format(name)
        fields["fmt"] = fmt.name
        if fmt.bits > 8:
            fields.update(scale="tensor", scale_fmt="fp32")
        else:
            fields["scale_fmt"] = "fp32" if fmt.is_float else ("bf16" if out_dtype == "bf16" else "fp16")
    if args.group_size is not None:
        if args.group_size > 0:
            fields.update(scale="group", group_size=args.group_size)
        else:
            fields.update(scale="channel", group_size=None)
    elif "scale" not in fields:
        fields["scale"] = "channel"
    for flag, key in (("scale", "scale"), ("block_n", "block_n"), ("scale_fmt", "scale_fmt"),
                      ("zero_point", "zero_point"), ("global_scale", "global_scale")):
        v = getattr(args, flag)
        if v is not None:
            fields[key] = v
    if fields.get("scale") == "block" and "group_size" not in fields:
        fields["group_size"] = 128
    if args.act_order:
        fields["act_order"] = True
    if getattr(args, "group_offset", None) is not None:
        fields["group_offset"] = args.group_offset
    return WeightScheme(**fields)


def _activation_from_args(args, act16: str):
    from .dtypes import get_format
    from .scheme import ActivationScheme

    name = (args.act or act16).lower()
    fields = dict(ACT_PRESETS.get(name, {}))
    if not fields:
        fmt = get_format(name)
        fields["fmt"] = fmt.name
        if fmt.name == "e2m1":  # fp4 activations need fine scales: NVFP4-style by default
            fields.update(ACT_PRESETS["nvfp4"])
        elif fmt.name not in ("fp16", "bf16"):
            fields["quant"] = "dynamic_token"
    for flag, key in (("act_quant", "quant"), ("act_group_size", "group_size"),
                      ("act_scale_fmt", "scale_fmt")):
        v = getattr(args, flag)
        if v is not None:
            fields[key] = v
    return ActivationScheme(**fields)


def layer_from_args(args):
    """The LayerSpec a ``humming plan`` invocation describes."""
    from .errors import FormatError
    from .scheme import LayerSpec

    cfg = {}
    if args.config:
        try:
            with open(args.config) as f:
                cfg = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise FormatError(f"--config {args.config}: cannot read a JSON config ({e})") from None
        if not isinstance(cfg, dict):
            raise FormatError(f"--config {args.config}: expected a JSON object at the top level")
    # (no --out-dtype and no config dtype: 16-bit activations name the output type, as in `humming bench`)
    a16 = (args.act or "").lower()
    out = args.out_dtype or _dtype_name(cfg) or (a16 if a16 in ("fp16", "bf16") else "bf16")
    act16 = "bf16" if out == "fp32" else out
    if args.config:
        from .formats import schemes_from_config

        weight, act = schemes_from_config(cfg, args.layer)
    else:
        weight = _weight_from_args(args, out)
        act = _activation_from_args(args, act16)
    n = args.n or int(cfg.get("intermediate_size") or 4096)
    k = args.k or int(cfg.get("hidden_size") or 4096)
    return LayerSpec(n=n, k=k, weight=weight, activation=act, num_experts=args.experts,
                     out_dtype=out, bias=args.bias)


@command("plan", help="plan a layer on a device and explain it", configure=_plan_args)
def _plan(args) -> int:
    from .planner import plan

    layer = layer_from_args(args)
    p = plan(layer, args.device, families="hardware" if args.hardware else "implemented")
    print(p.to_json(indent=2) if args.json else p.explain())
    return 0


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    for mod in COMMAND_MODULES:
        importlib.import_module(mod)
    for name, (mod, help) in LAZY_COMMANDS.items():
        if name not in COMMANDS:
            m = importlib.import_module(mod)
            register_command(name, help, m.run, m.add_arguments)
    from . import __version__

    parser = argparse.ArgumentParser(prog="humming", description="JIT-compiled GEMM kernels for "
                                     "quantized LLM inference: devices, capabilities, plans.")
    parser.add_argument("--version", action="version", version=f"humming {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in sorted(COMMANDS):
        c = COMMANDS[name]
        sp = sub.add_parser(name, help=c.help, description=c.help)
        if c.configure is not None:
            c.configure(sp)
        sp.set_defaults(_run=c.run)
    return parser


def main(argv=None) -> int:
    from .errors import HummingError, UnsupportedError

    args = build_parser().parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except BrokenPipeError:  # e.g. `humming plan ... | head`: the reader left; not an error
        sys.stdout = open(os.devnull, "w")
        return 0
    except UnsupportedError as e:
        print(f"humming {args.command}: unsupported: {e}", file=sys.stderr)
        if getattr(args, "hardware", None) is False and str(e).startswith("nothing can run"):
            print("  (`humming plan ... --hardware` shows what the chip itself would run)", file=sys.stderr)
        return 1
    except (HummingError, ValueError, KeyError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"humming {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
