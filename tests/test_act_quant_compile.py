"""The activation-quantization kernel compiles for every target, on the CPU, and
its machine code holds what the design promises: 16-byte loads, native fp8
conversion where the architecture has it (software elsewhere), no calls and no
local memory. Also the SASS helpers of humming.jit.inspect."""
from __future__ import annotations

import concurrent.futures as cf

import pytest
import torch

from humming.jit import Runtime, get_compiler
from humming.jit.inspect import ToolMissing, count, disassemble, instructions, opcodes, resource_usage, tool_path
from humming.ops.act_quant import act_quant_spec

try:
    tool_path("cuobjdump"), tool_path("nvdisasm")
    HAVE_TOOLS = True
except ToolMissing:
    HAVE_TOOLS = False
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="cuobjdump/nvdisasm wheels not installed")

# target -> does its PTX have cvt.rn.satfinite.e4m3x2.f32 (sm_89 and newer)
TARGETS = {"sm_75": False, "sm_80": False, "sm_86": False, "sm_87": False, "sm_89": True, "sm_90a": True,
           "sm_100a": True, "sm_103a": True, "sm_110a": True, "sm_120a": True, "sm_121a": True}
F2FP_E4M3 = r"^F2FP\S*E4M3"

# (fmt, mode, group, dtype, K): variants beyond the per-target sweep, all on sm_90a
VARIANTS = [
    ("e4m3", "dynamic_group", 128, torch.bfloat16, 4096),
    ("int4", "dynamic_group", 32, torch.float16, 7168),
    ("e2m1", "dynamic_group", 16, torch.bfloat16, 512),
    ("e5m2", "static_tensor", None, torch.float16, 4096),
    ("int4", "dynamic_token", None, torch.bfloat16, 16384),
    ("e2m1", "dynamic_token", None, torch.float16, 1000),
    ("int8", "static_tensor", None, torch.bfloat16, 300),
    # 16-bit values for 16-bit GEMM operands (group scales folded in over the row's power of two)
    ("e2m1+bf16", "dynamic_group", 16, torch.bfloat16, 4096),
    ("e4m3+fp16", "dynamic_group", 128, torch.float16, 7168),
    ("int8+fp16", "dynamic_token", None, torch.float16, 1000),
]
#: value variants with scales rounded into a storage format (NVFP4: e4m3, MX: e8m0)
SCALED = {"nvfp4": ("e2m1+fp16", "dynamic_group", 16, "e4m3"), "mx": ("e4m3+bf16", "dynamic_group", 32, "e8m0"),
          "token-e8m0": ("e4m3", "dynamic_token", None, "e8m0")}


INT8_TARGETS = ("sm_75", "sm_90a", "sm_120a")


def sweep_specs():
    specs = {}
    for target in TARGETS:
        specs[("e4m3", target)] = act_quant_spec("e4m3", "dynamic_token", torch.float16, 4096, target)
    for target in INT8_TARGETS:
        specs[("int8", target)] = act_quant_spec("int8", "dynamic_group", torch.bfloat16, 4096, target, 128)
    specs[("soft", "sm_90a")] = act_quant_spec("e4m3", "dynamic_token", torch.float16, 4096, "sm_90a",
                                               soft_cvt=True)
    for v in VARIANTS:
        fmt, mode, g, dt, k = v
        specs[v] = act_quant_spec(fmt, mode, dt, k, "sm_90a", g)
    for name, (fmt, mode, g, sfmt) in SCALED.items():
        for target in ("sm_75", "sm_90a"):
            specs[(name, target)] = act_quant_spec(fmt, mode, torch.float16, 4096, target, g, scale_fmt=sfmt)
    return specs


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every spec compiled once (in parallel), with resource usage and SASS."""
    rt = Runtime(cache_dir=tmp_path_factory.mktemp("act-quant-cache"))
    specs = sweep_specs()
    rt.warmup(specs.values())
    kernels = {name: rt.kernel(spec) for name, spec in specs.items()}
    out = {name: {"kernel": k} for name, k in kernels.items()}
    if HAVE_TOOLS:
        with cf.ThreadPoolExecutor(4) as pool:  # the tools run as subprocesses
            sass = dict(zip(kernels, pool.map(lambda k: disassemble(k.cubin), kernels.values())))
            res = dict(zip(kernels, pool.map(lambda k: resource_usage(k.cubin), kernels.values())))
        for name in kernels:
            out[name].update(sass=sass[name], res=res[name]["humming_entry"])
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_act_quant_compiles_for_every_target(built, target):
    k = built[("e4m3", target)]["kernel"]
    assert k.cubin[:4] == b"\x7fELF" and k.meta["target"] == target


@needs_tools
@pytest.mark.parametrize("target", TARGETS)
def test_act_quant_sass_per_target(built, target):
    for fmt in ("e4m3", "int8") if target in INT8_TARGETS else ("e4m3",):
        b = built[(fmt, target)]
        sass, res = b["sass"], b["res"]
        assert f"code for {target}" in sass
        assert res["LOCAL"] == 0 and res["STACK"] == 0, res  # no spills, no call frames
        assert count(sass, r"^RET\b") == 0  # no subroutine (e.g. a division slow path)
        assert count(sass, r"^LDG\.E\.128") >= 1  # 16-byte loads
        if fmt == "e4m3":
            native = count(sass, F2FP_E4M3)
            assert (native > 0) == TARGETS[target], (target, native)
            assert count(sass, r"^STG\.E\.64") >= 1  # 8 codes per store
        else:
            assert count(sass, F2FP_E4M3) == 0 and count(sass, r"^F2I") >= 1


@needs_tools
def test_soft_cvt_forces_the_software_encoder(built):
    soft, native = built[("soft", "sm_90a")], built[("e4m3", "sm_90a")]
    assert count(soft["sass"], F2FP_E4M3) == 0 and count(native["sass"], F2FP_E4M3) > 0
    assert soft["res"]["LOCAL"] == 0 and soft["res"]["STACK"] == 0


@needs_tools
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"{v[0]}-{v[1]}-{v[4]}")
def test_act_quant_variants_have_no_local_memory(built, variant):
    b = built[variant]
    assert b["res"]["LOCAL"] == 0 and b["res"]["STACK"] == 0, b["res"]
    assert count(b["sass"], r"^RET\b") == 0
    assert count(b["sass"], r"^LDG\.E\.128") >= 1


@needs_tools
@pytest.mark.parametrize("name", SCALED)
@pytest.mark.parametrize("target", ["sm_75", "sm_90a"])
def test_value_outputs_and_scale_formats(built, name, target):
    """16-bit values go out 16 bytes at a time; rounding scales into e4m3/e8m0 and the row's
    power of two add no division slow path, no calls and no local memory."""
    b = built[(name, target)]
    assert b["res"]["LOCAL"] == 0 and b["res"]["STACK"] == 0, b["res"]
    assert count(b["sass"], r"^RET\b") == 0 and count(b["sass"], r"^CALL") == 0
    assert count(b["sass"], r"^LDG\.E\.128") >= 1
    if "+" in SCALED[name][0]:
        assert count(b["sass"], r"^STG\.E\.128") >= 1  # 8 values per store


@needs_tools
@pytest.mark.parametrize("fmt, target, native", [("int8", "sm_80", False), ("e4m3", "sm_90a", True)])
def test_act_quant_compiles_with_nvcc(tmp_path, fmt, target, native):
    spec = act_quant_spec(fmt, "dynamic_token", torch.float16, 4096, target)
    nvcc_rt = Runtime(cache_dir=tmp_path, compiler="nvcc")
    k = nvcc_rt.kernel(spec)
    assert k.meta["compiler"].startswith("nvcc:") and f"-gencode=arch=compute_{target[3:]},code={target}" \
        in k.meta["flags"]
    assert k.key != Runtime(cache_dir=tmp_path, compiler="nvrtc").describe(spec)["key"]
    sass = disassemble(k.cubin)
    res = resource_usage(k.cubin)["humming_entry"]
    assert res["LOCAL"] == 0 and res["STACK"] == 0
    assert (count(sass, F2FP_E4M3) > 0) == native


def test_sass_helpers_parse_listings():
    listing = """
        Function : humming_entry
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
                                                                         /* 0x000fe20000000800 */
        /*0010*/              @!P0 F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C R4, R5, R6, RZ ;  /* 0x0 */
        /*0020*/               @P1 LDG.E.128.CONSTANT R8, desc[UR4][R2.64] ;    /* 0x0 */
        /*0030*/                   F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C R7, R5, R6, RZ ;  /* 0x0 */
        /*0040*/                   EXIT ;                                  /* 0x0 */
    """
    assert instructions(listing)[1] == "@!P0 F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C R4, R5, R6, RZ"
    assert count(listing, r"^F2FP\S*E4M3") == 2 and count(listing, r"^LDG\.E\.128") == 1
    assert opcodes(listing) == {"LDC": 1, "F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C": 2,
                                "LDG.E.128.CONSTANT": 1, "EXIT": 1}


def test_act_quant_variants_are_few():
    """Compile only what is needed: K picks one of four row layouts (a warp per row; a block of
    256, 512 or 1024 threads), nothing else."""
    specs = {act_quant_spec("e4m3", "dynamic_token", torch.float16, k, "sm_90a") for k in range(1, 40000, 97)}
    assert len(specs) == 4 and {s.threads for s in specs} == {128, 256, 512, 1024}
    assert get_compiler().name in ("nvrtc", "nvcc")
