"""The ``humming`` command line, run in process through ``humming.cli.main``."""
from __future__ import annotations

import json
import re
from importlib import metadata

import pytest

from humming import capabilities as C
from humming import cli
from humming.device import Device
from humming.planner import plan
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_console_script_is_declared():
    scripts = {ep.name: ep.value for ep in metadata.entry_points(group="console_scripts")}
    assert scripts["humming"] == "humming.cli:main"


def test_devices_one_line_each(capsys):
    rc, out, _ = run(capsys, "devices", "--no-detect")
    lines = out.splitlines()
    assert rc == 0 and lines[0].startswith("# no GPU detected")
    assert len(lines) == 1 + len(C.names())
    h20 = next(l for l in lines if l.split()[1] == "H20")
    assert "sm_90 -> H20" in h20 and "product" in h20
    assert "(provisional)" in next(l for l in lines if l.split()[1] == "zhenwu-810e")


def test_devices_json_and_resolve(capsys):
    rc, out, _ = run(capsys, "devices", "--no-detect", "--json")
    assert rc == 0 and [d["name"] for d in json.loads(out)] == C.names()
    rc, out, _ = run(capsys, "devices", "--resolve", "NVIDIA H200")
    chain = " -> ".join(C.load("H200").chain)
    assert rc == 0 and out.strip() == f"'NVIDIA H200' -> H200 (product; {chain})" and chain.startswith("sm_90")
    rc, out, _ = run(capsys, "devices", "--resolve", "Some GPU", "--cc", "8.9")
    assert out.strip().startswith("'Some GPU' -> sm_89 (architecture; ") and out.strip().endswith("sm_89)")
    rc, _, err = run(capsys, "devices", "--resolve", "Some GPU", "--cc", "eight")
    assert rc == 2 and "--cc: expected MAJOR.MINOR" in err


def test_capabilities(capsys):
    rc, out, _ = run(capsys, "capabilities", "h20")
    assert rc == 0 and out.strip() == C.load("H20").explain()
    rc, out, _ = run(capsys, "capabilities", "sm_120", "--json")
    assert json.loads(out) == json.loads(json.dumps(C.load("sm_120").to_dict()))
    rc, _, err = run(capsys, "capabilities", "H2O0")
    assert rc == 2 and "unknown device or architecture 'H2O0'" in err


def test_plan_from_flags(capsys):
    rc, out, _ = run(capsys, "plan", "--weight", "int4", "--group-size", "128", "--act", "fp8", "--device", "H20")
    layer = LayerSpec(n=4096, k=4096, weight=WeightScheme("int4", "group", 128, scale_fmt="bf16"),
                      activation=ActivationScheme("e4m3", "dynamic_token"), out_dtype="bf16")
    assert rc == 0 and out.strip() == plan(layer, "H20").explain()
    rc, out, _ = run(capsys, "plan", "--weight", "int4", "--group-size", "128", "--act", "fp8", "--device", "H20",
                     "--hardware", "--json", "--n", "1024", "--k", "2048", "--out-dtype", "fp16")
    d = json.loads(out)
    assert d["mode"] == "hardware" and d["family"]["name"] == "wgmma" and d["runnable"] is False
    assert (d["layer"]["n"], d["layer"]["k"], d["layer"]["out_dtype"]) == (1024, 2048, "fp16")


def test_plan_output_follows_16_bit_activations(capsys):
    """Without --out-dtype (and no config), ``--act fp16`` plans an fp16 layer -- fp16 output and fp16 weight
    scales, as ``humming bench --act fp16`` measures it -- where it used to plan a bf16 output; other activations
    keep the bf16 default, and --out-dtype still wins."""
    def layer(*flags):
        rc, out, err = run(capsys, "plan", "--json", "--device", "A100", "--weight", "int4", "--group-size", "128",
                           *flags)
        assert rc == 0, err
        d = json.loads(out)["layer"]
        return d["out_dtype"], d["activation"]["fmt"], d["weight"]["scale_fmt"]

    assert layer("--act", "fp16") == ("fp16", "fp16", "fp16")
    assert layer("--act", "bf16") == ("bf16", "bf16", "bf16")
    assert layer() == ("bf16", "bf16", "bf16")
    assert layer("--act", "int8") == ("bf16", "int8", "bf16")
    assert layer("--act", "fp16", "--out-dtype", "bf16") == ("bf16", "fp16", "bf16")


def _limited(d, *subs):
    """A hardware plan on the implemented mma_sync family that this version cannot run."""
    return (d["family"]["name"] == "mma_sync" and d["runnable"] is False
            and all(any(s in r for r in d["limits"]) for s in subs))


@pytest.mark.parametrize("argv,check", [
    (["--weight", "nvfp4", "--act", "nvfp4", "--device", "B200", "--hardware"],
     lambda d: d["compute"]["mma_kind"] == "mxf4nvf4" and d["compute"]["block_scaled"]),
    (["--weight", "mxfp4", "--act", "fp8", "--device", "sm_90", "--hardware"],
     lambda d: d["components"]["dequantizer"] == "fused_e2m1_to_e4m3" and d["family"]["name"] == "wgmma"),
    # this version computes in bf16 (the CLI's default output type) and re-biases the e2m1 codes
    (["--weight", "mxfp4", "--act", "fp8", "--device", "sm_90"],
     lambda d: (d["compute"]["activation"], d["components"]["dequantizer"], d["runnable"])
     == ("bf16", "float_rebias", True) and d["fallbacks"][0]["from"] == "e4m3"),
    (["--weight", "uint4", "--zero-point", "int", "--group-size", "64", "--act", "int8", "--device", "A100",
      "--hardware"],
     lambda d: d["compute"]["activation"] == "int8" and d["layer"]["weight"]["zero_point"] == "int"
     and d["runnable"]),
    (["--weight", "uint4", "--zero-point", "int", "--group-size", "64", "--act", "int8", "--device", "A100"],
     lambda d: d["compute"]["activation"] == "int8" and d["runnable"] and not d["fallbacks"]
     and d["components"]["mma"] == "mma_sync.m16n8k32.s8"),
    # int8 operands come from power-of-two widths only: 3-bit weights fall back to fp16, saying why
    (["--weight", "int3", "--group-size", "128", "--act", "int8", "--device", "A100"],
     lambda d: d["compute"]["activation"] == "fp16" and d["runnable"]
     and "implementation limit for int8 x int8" in d["fallbacks"][0]["reason"]
     and "1, 2, 4 or 8-bit codes" in d["fallbacks"][0]["reason"]),
    (["--weight", "int8", "--act", "int8", "--device", "sm_75", "--experts", "8"],
     lambda d: d["components"]["scheduler"] == "moe_grouped" and d["layer"]["weight"]["scale"] == "channel"
     and d["runnable"] and any("the M ranges count the rows one expert gets" in n for n in d["notes"])),
    (["--weight", "int4", "--group-size", "128", "--act-order", "--device", "A100", "--experts", "8", "--hardware"],
     lambda d: d["components"]["scheduler"] == "moe_grouped" and d["runnable"]
     and any("each expert's own" in n for n in d["notes"])),
    (["--weight", "fp8", "--scale", "block", "--block-n", "128", "--group-size", "128", "--act", "fp8",
      "--act-quant", "dynamic_group", "--act-group-size", "128", "--device", "sm_89", "--hardware"],
     lambda d: d["scales"]["weight_block"] == "partial_accumulators"
     and _limited(d, "per-group activation scales on byte operands are not implemented")),
    # (what runs: 16-bit operands, the group scales folded into the activation values)
    (["--weight", "fp8", "--scale", "block", "--block-n", "128", "--group-size", "128", "--act", "fp8",
      "--act-quant", "dynamic_group", "--act-group-size", "128", "--device", "sm_89"],
     lambda d: d["runnable"] and d["compute"]["activation"] in ("fp16", "bf16")
     and d["scales"]["activation"] == "values_and_epilogue"
     and d["activation"]["stored_as"] == d["compute"]["activation"]),
    # (a K-shard whose groups straddle the ranks: Qwen2-72B's down_proj, rank 1 of 8)
    (["--weight", "uint4", "--group-size", "128", "--group-offset", "112", "--k", "3696", "--n", "8192",
      "--device", "A100"],
     lambda d: d["runnable"] and d["layer"]["weight"]["group_offset"] == 112
     and d["weight_layout"]["params"]["group_offset"] == 112
     and any("K-shard starting 112 columns" in n and "K 3696 -> 3840" in n for n in d["notes"])),
])
def test_plan_flag_variants(capsys, argv, check):
    rc, out, err = run(capsys, "plan", "--json", *argv)
    assert rc == 0, err
    assert check(json.loads(out))


@pytest.mark.parametrize("argv,reason", [
    (["--weight", "int4", "--group-size", "128", "--act-order", "--device", "A100", "--experts", "8", "--act",
      "int8", "--act-quant", "dynamic_group", "--act-group-size", "128"],
     "MoE weights with act order take no per-group activation scales"),
    (["--weight", "fp8", "--scale", "block", "--block-n", "128", "--group-size", "128", "--act", "fp8",
      "--act-quant", "dynamic_group", "--act-group-size", "4", "--device", "sm_89"],
     "activation groups of 4: the quantization kernel takes groups of 8, 16"),
])
def test_plan_beyond_this_version_is_unsupported(capsys, argv, reason):
    rc, out, err = run(capsys, "plan", *argv)
    assert rc == 1 and out == ""
    assert err.startswith("humming plan: unsupported: nothing can run") and reason in err


def _write(tmp_path, name, obj):
    path = tmp_path / name
    path.write_text(json.dumps(obj))
    return str(path)


def test_plan_from_checkpoint_config(capsys, tmp_path):
    cfg = {"torch_dtype": "float16", "hidden_size": 2048, "intermediate_size": 5632,
           "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True,
                                   "desc_act": False}}
    rc, out, _ = run(capsys, "plan", "--config", _write(tmp_path, "config.json", cfg), "--device", "sm_89")
    layer = LayerSpec(n=5632, k=2048, weight=WeightScheme("uint4", "group", 128, scale_fmt="fp16"),
                      activation=ActivationScheme("fp16"), out_dtype="fp16")
    assert rc == 0 and out.strip() == plan(layer, "sm_89").explain()


def test_plan_from_fp8_block_and_modelopt_configs(capsys, tmp_path):
    fp8 = {"torch_dtype": "bfloat16", "hidden_size": 7168, "intermediate_size": 18432,
           "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128],
                                   "activation_scheme": "dynamic"}}
    rc, out, _ = run(capsys, "plan", "--config", _write(tmp_path, "config.json", fp8), "--device", "sm_90",
                     "--hardware", "--json")
    d = json.loads(out)
    assert rc == 0 and (d["compute"]["activation"], d["family"]["name"]) == ("e4m3", "wgmma")
    assert (d["layer"]["n"], d["layer"]["k"]) == (18432, 7168)
    modelopt = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "group_size": 16}}
    rc, out, _ = run(capsys, "plan", "--config", _write(tmp_path, "hf_quant_config.json", modelopt),
                     "--device", "RTX-5090", "--hardware", "--json")
    d = json.loads(out)
    assert rc == 0 and d["compute"]["mma_kind"] == "mxf4nvf4" and d["family"]["name"] == "mma_block_scaled"


def test_errors_and_exit_codes(capsys, tmp_path):
    rc, _, err = run(capsys, "plan", "--weight", "bf16", "--act", "fp16", "--device", "sm_90")
    assert rc == 1 and "unsupported" in err and "bf16 values are not exact in fp16" in err
    rc, _, err = run(capsys, "plan", "--weight", "int99", "--device", "sm_90")
    assert rc == 2 and "unknown number format 'int99'" in err
    rc, _, err = run(capsys, "plan", "--config", str(tmp_path / "missing.json"), "--device", "sm_90")
    assert rc == 2 and "missing.json" in err
    bad = _write(tmp_path, "bad.json", {"quantization_config": {"quant_method": "zipquant"}})
    rc, _, err = run(capsys, "plan", "--config", bad, "--device", "sm_90")
    assert rc == 2 and "zipquant" in err
    rc, out, err = run(capsys, "plan", "--weight", "int4")  # no --device: the current GPU, if any
    if Device.available():
        assert rc == 0 and "Plan for" in out
    else:
        assert rc == 2 and "no CUDA device" in err
    with pytest.raises(SystemExit):
        cli.main(["plan", "--act-quant", "sometimes"])


def test_bench_is_a_subcommand(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--help"])
    assert e.value.code == 0 and "--preset" in capsys.readouterr().out


def test_other_modules_register_subcommands(capsys):
    seen = []

    def configure(p):
        p.add_argument("--times", type=int, default=1)

    @cli.command("hello-test", help="say hello", configure=configure)
    def hello(args):
        seen.append(args.times)
        print("hello " * args.times)
        return 0

    try:
        rc, out, _ = run(capsys, "hello-test", "--times", "2")
        assert rc == 0 and out.split() == ["hello", "hello"] and seen == [2]
        assert "hello-test" in cli.build_parser().format_help()
        cli.register_command("hello-test", "again", hello)  # the same function: allowed
        with pytest.raises(ValueError, match="'hello-test' is already registered"):
            cli.register_command("hello-test", "other", lambda args: 0)
    finally:
        cli.COMMANDS.pop("hello-test", None)


def test_compile_inspects_the_machine_code_without_a_gpu(capsys, isolated_cache):
    """``humming compile --inspect`` shows what each kernel's machine code holds: an Ada plan of fp8 weights and
    activations issues QMMA (mma.sync m16n8k32 e4m3), a Turing plan of 16-bit operands HMMA.1688 (m16n8k8), with
    their registers, spills and K loop; the figures are those of humming.jit.inspect.summary."""
    from humming.jit import default_runtime, inspect as I

    cases = ((["--device", "L40S", "--weight", "e4m3", "--scale", "channel", "--scale-fmt", "fp32", "--act", "fp8"],
              r"QMMA\.16832\.F32\.E4M3\.E4M3 x\d+"),
             (["--device", "T4", "--weight", "int4", "--group-size", "128", "--act", "fp16"], r"HMMA\.1688\.F32 x\d+"))
    for flags, mma in cases:
        rc, out, _ = run(capsys, "compile", *flags, "--n", "256", "--k", "512", "--m", "1,100", "--inspect")
        assert rc == 0, out
        lines = out.splitlines()
        names = [l.split()[0] for l in lines if l.startswith("gemm_mma_sync[")]
        assert len(names) == 2 and lines[-1].startswith("2 kernels for "), out
        for name in names:
            i = next(i for i, l in enumerate(lines) if l.startswith(name))
            head, loop = lines[i + 1], lines[i + 2]
            assert head.startswith("    registers ") and re.search(mma, head), out
            assert loop.startswith("    K loop ") and loop.endswith("no spills in loops"), out
        # the same figures as the library call on the kernels of the layer those flags describe
        parser = cli.build_parser()
        args = parser.parse_args(["compile", *flags, "--n", "256", "--k", "512"])
        p = plan(cli.layer_from_args(args), args.device)
        for m in (1, 100):
            kern = default_runtime().kernel(p.kernel(m))
            assert kern.spec.name in names
            s = I.summary(kern.cubin)
            assert s["registers"] > 0 and s["loop_spills"] == 0 and s["main_loop"] > 0 and s["mma"]
            assert "    " + I.describe_summary(s).replace("\n", "\n    ") in out


def test_plan_that_nothing_runs_points_at_the_hardware_plan(capsys):
    """Where no implemented family runs a layer (here the Zhenwu 810E, whose ppu.mma.sync m16n16k16 this version's
    kernels do not issue), ``humming plan`` exits 1 with the planner's reasons and names ``--hardware``, which
    shows the chip's own plan with that limit."""
    flags = ("--device", "zhenwu-810e", "--weight", "int4", "--group-size", "128", "--act", "fp16")
    rc, _, err = run(capsys, "plan", *flags)
    assert rc == 1 and err.startswith("humming plan: unsupported: nothing can run ")
    assert "this chip lists m16n16k16" in err and "--hardware` shows what the chip itself would run" in err
    rc, out, _ = run(capsys, "plan", *flags, "--hardware")
    assert rc == 0 and "runnable    no" in out and "this chip lists m16n16k16" in out
