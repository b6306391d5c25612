"""The planner against hardware facts: (weight scheme x activation x device) -> compute types.

Each row says what the chip can multiply natively, from the PTX ISA and the
SASS the capability probes saw (fp8 mma.sync is native QMMA on sm_89/sm_120 and
emulated on sm_90/sm_100; Hopper and Blackwell have no int4 tensor cores; sm_75
has no bf16 MMA; B300's tcgen05 has no i8 kind; NVFP4/MXFP4 block scaling lives
in tcgen05 and in sm_120's mma.sync kind::mxf4nvf4...): ``hw`` is the plan with
every family the chip has (``families="hardware"``). Where that family is the
implemented ``mma_sync`` but this version's kernels cannot run the layer
(4-bit operands, fp8 operands from other weight formats, int8 operands from
3/5/6/7-bit codes, MoE with act order, per-group activation scales on byte operands),
``hw.limits`` says so and the plan is not runnable.

``impl`` is the default plan, with the implemented families only: this
version's mma_sync kernels multiply fp16/bf16, int8 x int8 (m16n8k32, from
1/2/4/8-bit integer codes), int4 x int4 (m16n8k64, from 4-bit codes without zero
points) and fp8 x fp8 of the weight's own format, and take per-group
activation scales (NVFP4, MXFP4, MXFP8, FP8 block activations) and e2m1
activations on 16-bit operands only, so other
plans compute in fp16/bf16 on mma_sync, with a fallback step naming the
implementation limit it walked past, or raise (``Raises``) when nothing
implemented fits. ``SAME``: the two plans agree.

A step is ``(from, to, [substrings of its reason])``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from humming.errors import UnsupportedError
from humming.planner import plan
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme

W = {
    "gptq4": WeightScheme("uint4", "group", 128),                          # symmetric, implicit offset 8
    "gptq4ao": WeightScheme("uint4", "group", 128, act_order=True),       # GPTQ with act order (a K permutation)
    "awq4": WeightScheme("uint4", "group", 128, zero_point="int"),
    "fzp4": WeightScheme("uint4", "group", 128, zero_point="float"),
    "int4ch": WeightScheme("int4", "channel", scale_fmt="fp32"),
    "int3": WeightScheme("int3", "group", 128),
    "int8ch": WeightScheme("int8", "channel", scale_fmt="fp32"),
    "uint8zp": WeightScheme("uint8", "group", 128, zero_point="int"),
    "fp8ch": WeightScheme("e4m3", "channel", scale_fmt="fp32"),
    "fp8blk": WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"),
    "fp8g8": WeightScheme("e4m3", "group", 8, scale_fmt="fp32"),
    "int4g24": WeightScheme("int4", "group", 24),
    "e5m2ch": WeightScheme("e5m2", "channel", scale_fmt="fp32"),
    "nvfp4": WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"),
    "mxfp4": WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"),
    "mxfp8": WeightScheme("e4m3", "group", 32, scale_fmt="e8m0"),
}
A = {
    "fp16": ActivationScheme("fp16"),
    "bf16": ActivationScheme("bf16"),
    "fp8": ActivationScheme("e4m3", "dynamic_token"),
    "fp8g128": ActivationScheme("e4m3", "dynamic_group", 128),
    "int8g128": ActivationScheme("int8", "dynamic_group", 128),
    "int8": ActivationScheme("int8", "dynamic_token"),
    "int4": ActivationScheme("int4", "dynamic_token"),
    "nvfp4": ActivationScheme("e2m1", "dynamic_group", 16, "e4m3"),
    "mxfp4": ActivationScheme("e2m1", "dynamic_group", 32, "e8m0"),
    "mxfp8": ActivationScheme("e4m3", "dynamic_group", 32, "e8m0"),
    "fp8g4": ActivationScheme("e4m3", "dynamic_group", 4),  # narrower than the quantization kernel's groups
}

SAME = "same"


@dataclass(frozen=True)
class E:
    """What one plan must say."""

    a: str
    b: str = ""            # default: a
    family: str = "mma_sync"
    steps: tuple = ()      # ((from, to, (reason substrings...)), ...)
    kind: object = None    # None: no kind; a str or tuple of allowed kinds
    block_scaled: bool = False
    emulated: bool = False
    dequant: str | None = None
    mma: str | None = None
    loader: str | None = None
    notes: tuple = ()      # substrings that some note must contain
    scales: dict = field(default_factory=dict)
    absent: tuple = ()     # substrings no step reason may contain
    limits: tuple = ()     # substrings some implementation limit must contain (then: not runnable)


@dataclass(frozen=True)
class Raises:
    """The implemented families cannot run the layer: UnsupportedError whose reasons hold these."""

    reasons: tuple


@dataclass(frozen=True)
class Case:
    id: str
    w: str
    act: str
    device: str
    hw: E
    impl: object = SAME
    out: str = "fp16"
    experts: int = 0


FP16_SM75 = E("fp16", mma="mma_sync.m16n8k8.f16", loader="ldg", dequant="int_bittrick")
FP16_MMA = E("fp16", mma="mma_sync.m16n8k16.f16", loader="cp_async", dequant="int_bittrick")
NO_FP8 = ("no e4m3 x e4m3 MMA", "e4m3 values are exact in fp16")
EMU_WGMMA = ("native in wgmma (not implemented",)
EMU_TCGEN05 = ("native in tcgen05 (not implemented",)
# implementation limits of this version's mma_sync kernels (humming_nvidia.gemm_mma_sync.check_layer)
MOE = "MoE weights with act order take no per-group activation scales"
GROUP_ACT = "per-group activation scales on byte operands are not implemented"
#: where 16-bit mma.sync kernels apply group scales: to the fp32 partial sums on the decode and small-M
#: tiles (at most 16 tokens per warp), to the dequantized weights above
SMALL_M_ACC = "partial_accumulators (M 1-32), dequantized_weights (M >= 33)"
#: int4 activations reach int8 or 16-bit operands (one code per byte); the int4 x int4 MMA is not built
PACKED4 = "activations meet int8 or 16-bit operands in this version"
FP4_ACT = "e2m1 activations meet 16-bit operands in this version"
#: scale groups that are not a multiple of 16 values: 16-bit operands run them padded (gemm_mma_sync.kernel_group)
PAD8 = "scale groups of 8 values: the kernels apply one scale per 16 values of K, so prepare_weight pads each group"
#: per-group activation scales on 16-bit operands: folded into the values (humming.ops.act_quant)
GROUP_VALUES = {"activation": "values_and_epilogue"}


def ops(a: str, b: str | None = None) -> str:
    """The limit on operand types the kernels do not multiply (4-bit, mixed fp8)."""
    return f"{a} x {b or a} MMA is not implemented"


#: e4m3 weight codes meet fp16 operands by the chip's conversion where it has one (sm_89 on)
CVT = "native_cvt"
#: fp8 operands are the weight's own fp8 codes: other weight formats are not converted into them
FP8_OF = "MMAs take e4m3 weight codes as they are; found "
#: the byte-operand kernels issue m16n8k32 (Turing has m8n8k16 only, Zhenwu m16n16k32)
K32 = "the byte-operand kernels issue mma.sync m16n8k32 int8; this chip lists "
#: the 16-bit kernels issue m16n8k16 (m16n8k8 on Turing); Zhenwu's ppu.mma.sync is m16n16k16
PPU = "issue mma.sync m16n8k16 (m16n8k8 on Turing) fp16; this chip lists m16n16k16, which this version's kernels do not"
#: the int4-operand kernels issue m16n8k64 (Turing has m8n8k32 only)
K64 = "the int4-operand kernels issue mma.sync m16n8k64 int4; this chip lists "


def lim(a: str, b: str | None = None, emulated: bool = False, why: str | None = None) -> tuple:
    """Substrings of a fallback reason that passed over mma_sync's limit on ``a x b`` operands."""
    pair = f"{a} x {b or a}" + (" (emulated)" if emulated else "")
    return (f"mma_sync (nvidia) implementation limit for {pair}: ", why or ops(a, b))


def grouped(to: str, *steps, rounded: bool = False, **kw) -> E:
    """An implemented plan for per-group activation scales: 16-bit operands ``to`` after ``steps``,
    the group scales folded into the values (exactly, or ``rounded`` once)."""
    note = f"rounded once to {to}" if rounded else "exact for these codes and scales"
    return E(to, steps=steps, dequant=kw.pop("dequant", "float_rebias"),
             scales={**GROUP_VALUES, **kw.pop("scales", {})},
             notes=(f"activation group scales are folded into the {to} values", note), **kw)


def fp16_past(a: str, *more, b: str | None = None, emulated: bool = False, to: str = "fp16", why=None, **kw) -> E:
    """An implemented plan that walked from ``a`` to ``to`` past mma_sync's operand limit."""
    return E(to, steps=((a, to, lim(a, b, emulated, why) + (f"exact in {to}",) + more),), absent=(f"no {a} x",),
             **kw)


CASES = [
    # -- W4A16 (GPTQ int4 g128, fp16 activations): every chip dequantizes into fp16 MMA
    Case("w4a16-sm75", "gptq4", "fp16", "sm_75", FP16_SM75),
    *[Case(f"w4a16-{d}", "gptq4", "fp16", d, FP16_MMA) for d in ("sm_80", "sm_86", "sm_87", "sm_89")],
    Case("w4a16-sm90", "gptq4", "fp16", "sm_90", E("fp16", family="wgmma", mma="wgmma.f16", loader="tma"),
         E("fp16", mma="mma_sync.m16n8k16.f16 + wgmma.m64nNk16.f16 (M >= 9)", notes=("would prefer wgmma",))),
    *[Case(f"w4a16-{d}", "gptq4", "fp16", d, E("fp16", family="tcgen05", kind="f16", mma="tcgen05.f16"),
           E("fp16", notes=("would prefer tcgen05",))) for d in ("sm_100", "sm_103", "sm_110")],
    *[Case(f"w4a16-{d}", "gptq4", "fp16", d, FP16_MMA) for d in ("sm_120", "sm_121")],
    # -- W4A16 with bf16 activations: Turing has no bf16 MMA
    Case("w4a16bf-sm75", "gptq4", "bf16", "sm_75",
         E("fp16", steps=(("bf16", "fp16", ("no bf16 x bf16 MMA on sm_75", "saturate")),)), out="bf16"),
    Case("w4a16bf-sm80", "gptq4", "bf16", "sm_80", E("bf16", mma="mma_sync.m16n8k16.bf16"), out="bf16"),
    Case("w4a16bf-sm90", "gptq4", "bf16", "sm_90", E("bf16", family="wgmma"), E("bf16"), out="bf16"),
    Case("w4a16bf-sm100", "gptq4", "bf16", "sm_100", E("bf16", family="tcgen05", kind="f16"), E("bf16"),
         out="bf16"),
    Case("w4a16bf-sm120", "gptq4", "bf16", "sm_120", E("bf16"), out="bf16"),
    # -- W4A8 fp8: native e4m3 MMA on Ada and consumer Blackwell; wgmma/tcgen05 on Hopper/B200.
    #    The byte-operand kernels make 4-bit integer codes e4m3 operands (exact: |v - 8| <= 8), on mma.sync where
    #    the chip has it natively, on the warpgroup tiles at every M on Hopper; chips without e4m3 MMAs compute
    #    in fp16 (fp8 is exact there); on B200, whose e4m3 mma.sync is emulated, too.
    *[Case(f"w4a8-{d}", "gptq4", "fp8", d, E("fp16", steps=(("e4m3", "fp16", NO_FP8),)))
      for d in ("sm_75", "sm_80", "sm_86", "sm_87")],
    Case("w4a8bf-sm80", "gptq4", "fp8", "sm_80",
         E("bf16", steps=(("e4m3", "bf16", ("no e4m3", "exact in bf16")),)), out="bf16"),
    Case("w4a8-sm89", "gptq4", "fp8", "sm_89",
         E("e4m3", mma="mma_sync.m16n8k32.e4m3", dequant="int_bittrick_cvt",
           scales={"weight_group": "partial_accumulators", "activation": "epilogue"})),
    Case("w4a8-sm90", "gptq4", "fp8", "sm_90", E("e4m3", family="wgmma", mma="wgmma.e4m3"),
         E("e4m3", mma="mma_sync.m16n8k32.e4m3 + wgmma.m64nNk32.e4m3 (M >= 1)", dequant="int_bittrick_cvt",
           notes=("would prefer wgmma", "issue the native wgmma form at every M"),
           scales={"weight_group": "partial_accumulators", "activation": "epilogue"})),
    Case("w4a8-H20", "gptq4", "fp8", "H20", E("e4m3", family="wgmma"),
         E("e4m3", mma="mma_sync.m16n8k32.e4m3 + wgmma.m64nNk32.e4m3 (M >= 1)")),
    *[Case(f"w4a8-{d}", "gptq4", "fp8", d, E("e4m3", family="tcgen05", kind="f8f6f4"),
           fp16_past("e4m3", emulated=True, why="compiler emulation", notes=("would prefer tcgen05",)))
      for d in ("sm_100", "sm_103")],
    Case("w4a8-sm120", "gptq4", "fp8", "sm_120", E("e4m3", mma="mma_sync.m16n8k32.e4m3")),
    # -- W8A8 int8: int8 tensor cores everywhere; this version's kernels issue m16n8k32 (sm_80 on),
    #    Turing computes in fp16 (int8 is exact there)
    Case("w8a8-sm75", "int8ch", "int8", "sm_75",
         E("int8", mma="mma_sync.m8n8k16.s8", dequant="passthrough", limits=(K32 + "m8n8k16",)),
         fp16_past("int8", why=K32 + "m8n8k16", mma="mma_sync.m16n8k8.f16", dequant="int_bittrick")),
    Case("w8a8-sm80", "int8ch", "int8", "sm_80",
         E("int8", mma="mma_sync.m16n8k32.s8", dequant="passthrough", scales={"weight_channel": "epilogue"})),
    Case("w8a8-sm86", "int8ch", "int8", "sm_86", E("int8", mma="mma_sync.m16n8k32.s8")),
    Case("w8a8-sm90", "int8ch", "int8", "sm_90", E("int8", family="wgmma", mma="wgmma.s8"),
         E("int8", mma="mma_sync.m16n8k32.s8 + wgmma.m64nNk32.s8 (M >= 1)", notes=("would prefer wgmma",))),
    Case("w8a8-sm100", "int8ch", "int8", "sm_100", E("int8", family="tcgen05", kind="i8"), E("int8")),
    Case("w8a8-sm103", "int8ch", "int8", "sm_103", E("int8")),  # B300: no tcgen05 i8 kind
    Case("w8a8-sm110", "int8ch", "int8", "sm_110", E("int8", family="tcgen05", kind="i8"), E("int8")),
    Case("w8a8-sm120", "int8ch", "int8", "sm_120", E("int8")),
    # -- W4A4 int4: Turing/Ampere/Ada have int4 tensor cores, Hopper and Blackwell do not;
    #    this version multiplies int4 x int4 on m16n8k64 where it is native, elsewhere int4
    #    activations as int8 (m16n8k32) or, on Turing (m8n8k32 only), fp16 operands
    Case("w4a4i-sm75", "int4ch", "int4", "sm_75",
         E("int4", mma="mma_sync.m8n8k32.s4", dequant="passthrough", limits=(K64 + "m8n8k32",)),
         E("fp16", mma="mma_sync.m16n8k8.f16", steps=(("int4", "int8", lim("int4", why=K64 + "m8n8k32")),
                                                      ("int8", "fp16", (K32 + "m8n8k16",))))),
    Case("w4a4i-sm80", "int4ch", "int4", "sm_80", E("int4", mma="mma_sync.m16n8k64.s4", dequant="passthrough")),
    Case("w4a4i-sm89", "int4ch", "int4", "sm_89", E("int4", mma="mma_sync.m16n8k64.s4", dequant="passthrough")),
    Case("w4a4i-sm90", "int4ch", "int4", "sm_90",
         E("int8", family="wgmma", steps=(("int4", "int8", ("only as a compiler emulation", "exact in int8")),),
           dequant="int_bittrick"),
         E("int8", mma="mma_sync.m16n8k32.s8 + wgmma.m64nNk32.s8 (M >= 1)",
           steps=(("int4", "int8", ("only as a compiler emulation", "exact in int8")),))),
    Case("w4a4i-sm100", "int4ch", "int4", "sm_100",
         E("int8", family="tcgen05", kind="i8", steps=(("int4", "int8", ("compiler emulation",)),)),
         E("int8", steps=(("int4", "int8", ("compiler emulation",)),))),
    Case("w4a4i-sm103", "int4ch", "int4", "sm_103",
         E("int8", steps=(("int4", "int8", ("compiler emulation",)),))),
    Case("w4a4i-sm120", "int4ch", "int4", "sm_120",
         E("int8", steps=(("int4", "int8", ("compiler emulation",)),))),
    # -- NVFP4 W4A4: native block-scaled fp4 on Blackwell; e4m3 (exact) elsewhere. Per-group
    #    (block) activation scales and packed e2m1 activations are beyond this version.
    Case("nvfp4-sm100", "nvfp4", "nvfp4", "sm_100",
         E("e2m1", family="tcgen05", kind="mxf4nvf4", block_scaled=True, dequant="passthrough",
           scales={"weight_group": "mma_block_scale", "activation": "mma_block_scale",
                   "weight_global_tensor": "epilogue"}),
         grouped("bf16", ("e2m1", "e4m3", ("e2m1 x e2m1 MMA is native on sm_100 only in tcgen05 (not implemented",)),
                 ("e4m3", "bf16", lim("e4m3", emulated=True, why="compiler emulation") +
                  (FP8_OF + "e2m1", GROUP_ACT, FP4_ACT, "exact in bf16"))), out="bf16"),
    *[Case(f"nvfp4-{d}", "nvfp4", "nvfp4", d,
           E("e2m1", family="mma_block_scaled", kind="mxf4nvf4", block_scaled=True, mma="mma_block_scaled.mxf4nvf4"),
           grouped("bf16", ("e2m1", "e4m3", ("only in mma_block_scaled (not implemented",)),
                   ("e4m3", "bf16", lim("e4m3", why=FP8_OF + "e2m1") + (GROUP_ACT, FP4_ACT, "exact in bf16"))),
           out="bf16") for d in ("sm_120", "sm_121")],
    Case("nvfp4-sm90", "nvfp4", "nvfp4", "sm_90",
         # wgmma's only fp8 K is 32: group-16 scales cannot be applied between its instructions
         E("bf16", family="wgmma", steps=(("e2m1", "e4m3", ("no e2m1 x e2m1 MMA on sm_90",)),
                                          ("e4m3", "bf16", ("multiple of an MMA K (32",)))),
         grouped("bf16", ("e2m1", "e4m3", ("no e2m1 x e2m1 MMA on sm_90",)),
                 ("e4m3", "bf16", lim("e4m3", emulated=True, why="compiler emulation") + ("exact in bf16",))),
         out="bf16"),
    Case("nvfp4-sm89", "nvfp4", "nvfp4", "sm_89",
         E("e4m3", mma="mma_sync.m16n8k16.e4m3", steps=(("e2m1", "e4m3", ("no e2m1",)),),
           limits=(FP8_OF + "e2m1", GROUP_ACT, FP4_ACT)),
         grouped("bf16", ("e2m1", "e4m3", ("no e2m1",)),
                 ("e4m3", "bf16", lim("e4m3", why=FP8_OF + "e2m1") + (GROUP_ACT, FP4_ACT, "exact in bf16"))),
         out="bf16"),
    Case("nvfp4-sm80", "nvfp4", "nvfp4", "sm_80",
         grouped("bf16", ("e2m1", "e4m3", ("no e2m1",)), ("e4m3", "bf16", ("no e4m3", "exact in bf16"))),
         out="bf16"),
    # -- MXFP4 W4A4
    Case("mxfp4-sm100", "mxfp4", "mxfp4", "sm_100",
         E("e2m1", family="tcgen05", kind=("mxf4", "mxf4nvf4"), block_scaled=True),
         grouped("fp16", ("e2m1", "e4m3", ("tcgen05 (not implemented",)),
                 ("e4m3", "fp16", lim("e4m3", emulated=True, why="compiler emulation") + ("exact in fp16",)))),
    Case("mxfp4-sm103", "mxfp4", "mxfp4", "sm_103",
         E("e2m1", family="tcgen05", kind=("mxf4", "mxf4nvf4"), block_scaled=True),
         grouped("fp16", ("e2m1", "e4m3", ("tcgen05 (not implemented",)),
                 ("e4m3", "fp16", lim("e4m3", emulated=True, why="compiler emulation") + ("exact in fp16",)))),
    Case("mxfp4-sm120", "mxfp4", "mxfp4", "sm_120",
         E("e2m1", family="mma_block_scaled", kind=("mxf4", "mxf4nvf4"), block_scaled=True),
         grouped("fp16", ("e2m1", "e4m3", ("mma_block_scaled (not implemented",)),
                 ("e4m3", "fp16", lim("e4m3", why=FP8_OF + "e2m1") + (GROUP_ACT, "exact in fp16")))),
    # -- MXFP4 weights x fp8 activations: fused e2m1 -> e4m3 conversion where fp4 MMA is missing;
    #    this version re-biases the e2m1 codes into fp16
    Case("mxfp4a8-sm89", "mxfp4", "fp8", "sm_89",
         E("e4m3", dequant="fused_e2m1_to_e4m3", scales={"weight_group": "exponent_fold"},
           notes=("folded into the e4m3 exponent",), limits=(FP8_OF + "e2m1",)),
         fp16_past("e4m3", why=FP8_OF + "e2m1", dequant="float_rebias",
                   scales={"weight_group": SMALL_M_ACC})),
    Case("mxfp4a8-sm90", "mxfp4", "fp8", "sm_90", E("e4m3", family="wgmma", dequant="fused_e2m1_to_e4m3"),
         fp16_past("e4m3", emulated=True, why=FP8_OF + "e2m1", dequant="float_rebias")),
    Case("mxfp4a8-sm100", "mxfp4", "fp8", "sm_100",
         E("e4m3", "e2m1", family="tcgen05", kind="f8f6f4", dequant="passthrough"),
         fp16_past("e4m3", emulated=True, why=FP8_OF + "e2m1", dequant="float_rebias")),
    Case("mxfp4a8-sm120", "mxfp4", "fp8", "sm_120",
         E("e4m3", "e2m1", family="mma_block_scaled", kind="f8f6f4", dequant="passthrough"),
         fp16_past("e4m3", why=FP8_OF + "e2m1", dequant="float_rebias")),
    Case("mxfp4a8-sm80", "mxfp4", "fp8", "sm_80", E("fp16", dequant="float_rebias", steps=(("e4m3", "fp16", NO_FP8),))),
    # -- MXFP8
    Case("mxfp8-sm100", "mxfp8", "mxfp8", "sm_100", E("e4m3", family="tcgen05", kind="mxf8f6f4", block_scaled=True),
         grouped("fp16", ("e4m3", "fp16", lim("e4m3", emulated=True, why="compiler emulation") + ("exact in fp16",)),
                 dequant=CVT)),
    Case("mxfp8-sm120", "mxfp8", "mxfp8", "sm_120",
         E("e4m3", family="mma_block_scaled", kind="mxf8f6f4", block_scaled=True),
         grouped("fp16", ("e4m3", "fp16", lim("e4m3", why=GROUP_ACT) + ("exact in fp16",)), dequant=CVT)),
    Case("mxfp8-sm89", "mxfp8", "mxfp8", "sm_89", E("e4m3", dequant="passthrough", limits=(GROUP_ACT,)),
         grouped("fp16", ("e4m3", "fp16", lim("e4m3", why=GROUP_ACT) + ("exact in fp16",)), dequant=CVT)),
    # -- FP8 per channel and DeepSeek-style blocks
    Case("fp8-sm89", "fp8ch", "fp8", "sm_89",
         E("e4m3", dequant="passthrough", mma="mma_sync.m16n8k32.e4m3", scales={"weight_channel": "epilogue"})),
    Case("fp8-sm80", "fp8ch", "fp8", "sm_80", E("fp16", dequant="float_rebias", steps=(("e4m3", "fp16", NO_FP8),))),
    Case("fp8-sm75", "fp8ch", "fp8", "sm_75", E("fp16", steps=(("e4m3", "fp16", NO_FP8),))),
    # (fp8 mma.sync is a compiler emulation on Hopper: the mma_sync kernels issue fp8 wgmma at every M instead)
    Case("fp8-sm90", "fp8ch", "fp8", "sm_90", E("e4m3", family="wgmma", dequant="passthrough"),
         E("e4m3", dequant="passthrough", mma="mma_sync.m16n8k32.e4m3 + wgmma.m64nNk32.e4m3 (M >= 1)",
           notes=("issue the native wgmma form at every M instead", "would prefer wgmma"))),
    Case("fp8blk-sm90", "fp8blk", "fp8g128", "sm_90", E("e4m3", family="wgmma",
                                                        scales={"weight_block": "partial_accumulators",
                                                                "activation": "partial_accumulators"}),
         # (fp8 warpgroup MMAs at every M fold each block's sums times the weights' block scale and the tokens'
         # activation group scales; HUMMING_BYTE_GROUP_ACTS=0 keeps bf16 / fp16 operands)
         E("e4m3", dequant="passthrough", mma="mma_sync.m16n8k32.e4m3 + wgmma.m64nNk32.e4m3 (M >= 1)",
           scales={"weight_block": "partial_accumulators", "activation": "partial_accumulators"},
           notes=("issue the native wgmma form at every M instead",))),
    Case("fp8blk-sm89", "fp8blk", "fp8g128", "sm_89",
         E("e4m3", mma="mma_sync.m16n8k32.e4m3", limits=(GROUP_ACT,)),
         grouped("fp16", ("e4m3", "fp16", lim("e4m3", why=GROUP_ACT) + ("exact in fp16",)), rounded=True, dequant=CVT)),
    # -- weights that do not fit the activation's type
    Case("w8a8fp8-sm89", "int8ch", "fp8", "sm_89",
         E("fp16", dequant="int_bittrick",
           steps=(("e4m3", "fp16", ("not exact in e4m3", "up to 16", "exact in fp16")),),
           absent=("MMA", "implementation limit"))),
    Case("w8a8fp8-sm100", "int8ch", "fp8", "sm_100",
         E("fp16", family="tcgen05", kind="f16", steps=(("e4m3", "fp16", ("not exact in e4m3",)),)),
         E("fp16", steps=(("e4m3", "fp16", ("not exact in e4m3",)),))),
    Case("uint8zp-a8-sm80", "uint8zp", "int8", "sm_80",
         E("fp16", steps=(("int8", "fp16", ("q - z in [-255, 255]", "not exact in int8")),),
           scales={"weight_zero_point": "dequantized_weights"})),
    Case("awq-a8-sm80", "awq4", "int8", "sm_80",
         E("int8", dequant="int_bittrick", mma="mma_sync.m16n8k32.s8",
           scales={"weight_zero_point": "subtracted_in_dequant", "weight_group": "partial_accumulators"})),
    # int4 g128 x int8: int8 MMA with group scales on the int32 partial sums; 3-bit codes fall back
    Case("w4a8i-sm89", "gptq4", "int8", "sm_89",
         E("int8", mma="mma_sync.m16n8k32.s8", dequant="int_bittrick",
           scales={"weight_group": "partial_accumulators", "activation": "epilogue"})),
    Case("w3a8i-sm80", "int3", "int8", "sm_80", E("int8", limits=("1, 2, 4 or 8-bit codes",)),
         fp16_past("int8", why="int8 operands are made from 1, 2, 4 or 8-bit codes in this version; found 3-bit")),
    Case("fzp-a8-sm89", "fzp4", "fp8", "sm_89", E("fp16", steps=(("e4m3", "fp16", ("float zero points",)),))),
    Case("e5m2a8-sm89", "e5m2ch", "fp8", "sm_89", E("e4m3", "e5m2", dequant="passthrough",
                                                    mma="mma_sync.m16n8k32.e4m3xe5m2", limits=(ops("e4m3", "e5m2"),)),
         fp16_past("e4m3", "e5m2", b="e5m2", dequant="float_rebias")),
    Case("e5m2a8-sm90", "e5m2ch", "fp8", "sm_90", E("e4m3", "e5m2", family="wgmma", mma="wgmma.e4m3xe5m2"),
         fp16_past("e4m3", b="e5m2", emulated=True)),
    Case("e5m2a8-sm80", "e5m2ch", "fp8", "sm_80", E("fp16", steps=(("e4m3", "fp16", NO_FP8),))),
    Case("w8a4-sm80", "int8ch", "int4", "sm_80",
         E("int8", steps=(("int4", "int8", ("integers in [-128, 127] are not exact in int4",)),))),
    # groups of 8 values: no e4m3 MMA splits them; 16-bit operands run them padded to 16 (kernel_group)
    Case("fp8g8-sm89", "fp8g8", "fp8", "sm_89",
         E("fp16", steps=(("e4m3", "fp16", ("multiple of an MMA K", "found 8")),), notes=(PAD8,))),
    # -- products and other devices resolve through their architecture
    Case("w4a8-rtx4090", "gptq4", "fp8", "RTX-4090", E("e4m3", mma="mma_sync.m16n8k32.e4m3")),
    Case("w4a8-a100", "gptq4", "fp8", "A100", E("fp16", steps=(("e4m3", "fp16", NO_FP8),))),
    Case("w4a16-t4", "gptq4", "fp16", "T4", FP16_SM75),
    Case("nvfp4-b200", "nvfp4", "nvfp4", "B200", E("e2m1", family="tcgen05", kind="mxf4nvf4", block_scaled=True),
         grouped("bf16", ("e2m1", "e4m3", ("tcgen05 (not implemented",)),
                 ("e4m3", "bf16", lim("e4m3", emulated=True, why="compiler emulation") + ("exact in bf16",))),
         out="bf16"),
    Case("nvfp4-rtx5090", "nvfp4", "nvfp4", "RTX-5090",
         E("e2m1", family="mma_block_scaled", kind="mxf4nvf4", block_scaled=True),
         grouped("bf16", ("e2m1", "e4m3", ("mma_block_scaled (not implemented",)),
                 ("e4m3", "bf16", lim("e4m3", why=FP8_OF + "e2m1") + ("exact in bf16",))), out="bf16"),
    Case("w8a8-b300", "int8ch", "int8", "B300", E("int8")),
    Case("nvfp4-rubin", "nvfp4", "nvfp4", "Rubin", E("e2m1", family="tcgen05", kind="mxf4nvf4", block_scaled=True),
         grouped("bf16", ("e2m1", "e4m3", ("tcgen05 (not implemented",)),
                 ("e4m3", "bf16", lim("e4m3", emulated=True, why="compiler emulation") + ("exact in bf16",))),
         out="bf16"),
    # -- Zhenwu 810E: sm_80-class ppu.mma.sync with N=16, no int4 or fp8 tensor cores. This version's kernels issue
    # mma.sync m16n8k16 / m16n8k32, not the chip's m16n16k16 / m16n16k32: the hardware plans say so, nothing runs
    Case("w4a16bf-zhenwu", "gptq4", "bf16", "zhenwu-810e",
         E("bf16", mma="mma_sync.m16n16k16.bf16", limits=(PPU.replace("fp16", "bf16"),)),
         Raises((PPU.replace("fp16", "bf16"),)), out="bf16"),
    Case("w4a4i-zhenwu", "int4ch", "int4", "zhenwu-810e",
         E("int8", mma="mma_sync.m16n16k32.s8", steps=(("int4", "int8", ("no int4 x int4 MMA on zhenwu-810e",)),),
           limits=("m16n8k32 int8; this chip lists m16n16k32",)),
         Raises(("m16n8k32 int8; this chip lists m16n16k32", PPU))),
    Case("w4a8-zhenwu", "gptq4", "fp8", "zhenwu-810e", E("fp16", steps=(("e4m3", "fp16", NO_FP8),), limits=(PPU,)),
         Raises((PPU,))),
    # -- MoE: the same instructions and compute types as the dense layer (mma_sync's MoE kernels: one launch over the
    #    routed rows); act order, a K permutation per expert, applied as the rows are gathered (not with per-group
    #    activation scales, which would then group permuted columns)
    Case("moe-w4a16-sm80", "gptq4", "fp16", "sm_80", E("fp16", notes=("the M ranges count the rows one expert gets",)),
         experts=8),
    Case("moe-w4a16-ao-sm80", "gptq4ao", "fp16", "sm_80", E("fp16", notes=("each expert's own",)), experts=8),
    Case("moe-w4a8g-ao-sm80", "gptq4ao", "int8g128", "sm_80", E("int8", mma="mma_sync.m16n8k32.s8", limits=(MOE,)),
         Raises((MOE,)), experts=8),
    Case("moe-w4a8i-sm89", "gptq4", "int8", "sm_89", E("int8", mma="mma_sync.m16n8k32.s8"), experts=8),
    Case("moe-fp8blk-sm80", "fp8blk", "fp8g128", "sm_80", E("fp16", steps=(("e4m3", "fp16", NO_FP8),)),
         experts=16),
    Case("moe-mxfp4-sm80", "mxfp4", "mxfp4", "sm_80",
         E("bf16", steps=(("e2m1", "e4m3", ("no e2m1",)), ("e4m3", "bf16", ("no e4m3", "exact in bf16")))),
         out="bf16", experts=32),
    Case("moe-w4a16-zhenwu", "gptq4", "fp16", "zhenwu-810e",
         E("fp16", mma="mma_sync.m16n16k16.f16", limits=(PPU,)), Raises((PPU,)), experts=8),
    Case("fp8g8-sm80", "fp8g8", "fp8", "sm_80", E("fp16", steps=(("e4m3", "fp16", NO_FP8),), notes=(PAD8,))),
    Case("fp8g8-sm75", "fp8g8", "fp8", "sm_75",
         E("fp16", mma="mma_sync.m16n8k8.f16", steps=(("e4m3", "fp16", NO_FP8),), notes=(PAD8,))),
    Case("int4g24-sm80", "int4g24", "fp16", "sm_80", E("fp16", notes=("scale groups of 24 values", "K 4080 -> 5440"))),
    Case("fp8g4-sm80", "fp8ch", "fp8g4", "sm_80",
         E("fp16", steps=(("e4m3", "fp16", NO_FP8),), limits=("activation groups of 4",)),
         Raises(("activation groups of 4: the quantization kernel takes groups of 8, 16",))),
    Case("moe-nvfp4-sm100", "nvfp4", "nvfp4", "sm_100",
         E("e2m1", family="tcgen05", kind="mxf4nvf4", block_scaled=True),
         grouped("bf16", ("e2m1", "e4m3", ("e2m1 x e2m1 MMA is native on sm_100 only in tcgen05 (not implemented",)),
                 ("e4m3", "bf16", lim("e4m3", emulated=True, why="compiler emulation") +
                  (FP8_OF + "e2m1", GROUP_ACT, FP4_ACT, "exact in bf16"))), out="bf16", experts=64),
]


def _layer(c: Case) -> LayerSpec:
    k = 4096 if 4096 % (W[c.w].group_size or 1) == 0 else 4080  # (groups of 24: 4080 = 170 x 24)
    return LayerSpec(n=4096, k=k, weight=W[c.w], activation=A[c.act], out_dtype=c.out, num_experts=c.experts)


def _check(p, e: E, mode: str):
    where = f"[{mode}] {p.device}: {p.layer.describe()}\n{p.explain()}"
    assert (p.compute.a, p.compute.b) == (e.a, e.b or e.a), where
    assert p.family == e.family, where
    assert [(s.src, s.dst) for s in p.fallbacks] == [(s[0], s[1]) for s in e.steps], where
    for step, (_, _, subs) in zip(p.fallbacks, e.steps):
        for sub in subs:
            assert sub in step.reason, f"{sub!r} not in {step.reason!r}\n{where}"
    for sub in e.absent:
        assert not any(sub in s.reason for s in p.fallbacks), where
    kinds = e.kind if isinstance(e.kind, tuple) else (e.kind,)
    assert p.compute.kind in kinds, where
    assert p.compute.block_scaled == e.block_scaled, where
    assert p.compute.emulated == e.emulated, where
    assert p.compute.acc == ("int32" if e.a.startswith("int") else "fp32"), where
    for slot, want in (("dequantizer", e.dequant), ("mma", e.mma), ("loader", e.loader)):
        if want is not None:
            assert p.components[slot] == want, where
    for sub in e.notes:
        assert any(sub in n for n in p.notes), f"no note with {sub!r}\n{where}"
    for key, want in e.scales.items():
        assert p.scales.get(key) == want, f"scales[{key!r}]\n{where}"
    for sub in e.limits:
        assert any(sub in r for r in p.limits), f"no limit with {sub!r}\n{where}"
    assert bool(p.limits) == bool(e.limits), where
    assert p.runnable == (e.family == "mma_sync" and not e.limits), where
    if p.layer.is_moe:
        from humming.device import get_device

        pdl = (" + programmatic_launch (every launch of a call)"  # (the implemented family's MoE launches)
               if p.family == "mma_sync" and get_device(p.device).caps.has("pdl") else "")
        assert p.components["scheduler"] == "moe_grouped" + pdl and p.components["epilogue"] == "moe_topk", where


def test_enough_cases():
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)
    # the table covers both outcomes of the implemented families (fewer refusals as the kernels grow: MoE runs now)
    assert sum(isinstance(c.impl, Raises) for c in CASES) >= 6
    assert sum(isinstance(c.impl, E) and any("implementation limit" in sub for st in c.impl.steps for sub in st[2])
               for c in CASES) >= 15


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_plan_table(case: Case):
    layer = _layer(case)
    hw = plan(layer, case.device, families="hardware")
    _check(hw, case.hw, "hardware")
    assert hw.mode == "hardware"
    if isinstance(case.impl, Raises):
        with pytest.raises(UnsupportedError) as e:
            plan(layer, case.device)
        assert str(e.value).startswith(f"nothing can run {layer.describe()}")
        for sub in case.impl.reasons:
            assert any(sub in r for r in e.value.reasons), f"no reason with {sub!r}: {e.value.reasons}"
        return
    impl = plan(layer, case.device)
    _check(impl, case.hw if case.impl is SAME else case.impl, "implemented")
    # what runs in this version: fp16/bf16, int8, int4 or fp8 (of fp8 weights) operands on mma_sync, nothing left over
    byte_ops = impl.compute.a == impl.compute.b and impl.compute.a in ("int8", "int4", "e4m3", "e5m2")
    assert impl.mode == "implemented" and (impl.compute.is_16bit or byte_ops) and impl.family == "mma_sync"
    assert impl.runnable and impl.limits == ()
    if case.impl is SAME:
        assert impl.fingerprint() != hw.fingerprint()  # the mode is part of the plan
