"""The mma.sync family's weight preparation: a QuantizedWeight into the kernel layout.

:func:`pack_weight` packs codes (``layout``), 16-bit group scales and zero points, fp32 channel multipliers, bias
and the act-order column map into a :class:`PackedWeight`; :func:`pack_moe_weight` stacks the experts'. The
recipe a scheme needs (:func:`recipe_for`) and the K layout of padded scale groups (:func:`kernel_group`,
:func:`group_columns`) are here too.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace

import torch

from humming.dtypes import FloatFormat, IntFormat
from humming.errors import UnsupportedError

from . import layout
from .mma_sync_kernel import (OP8_NAMES, op8_unit, padded_k, padded_n, Recipe)


@dataclass
class PackedWeight:
    """A weight in the kernel's layout, with everything the launch needs."""

    recipe: Recipe
    n: int
    k: int
    np_: int
    kp: int
    w: torch.Tensor                 # int32, packed
    sz: torch.Tensor | None         # int16 [groups, Np] or int32 [groups, Np] (scale, aux)
    chan: torch.Tensor | None       # fp32 [Np]
    bias: torch.Tensor | None       # fp32 [N]
    out_mul: float
    groups: int
    perm: torch.Tensor | None       # int64 [k]: x[:, perm] feeds the kernel (k: the kernels' K); MoE weights with
                                    # act order: int32 [E, k], each expert's (humming.ops.moe gathers by it)
    descriptor: dict = field(default_factory=dict)
    zero_column: bool = False       # perm's index K (the layer's K) names a column of zeros appended to x
                                    # (the gaps of padded scale groups: kernel_group)
    experts: int = 0                # MoE: the experts stacked in w, sz, chan ([E, Np]) and bias ([E, N])
    estrides: tuple = ()            # MoE: per expert, (u32 words of w, bytes of sz, floats of chan, floats of bias)

    @property
    def nbytes(self) -> int:
        t = [self.w, self.sz, self.chan, self.bias]
        return sum(x.numel() * x.element_size() for x in t if x is not None)


def _pow2_shift(maxabs: float) -> int:
    """Exponent e such that maxabs / 2**e lies in [0.5, 1)."""
    if not maxabs > 0 or not math.isfinite(maxabs):
        return 0
    return math.frexp(maxabs)[1]


_F32_MAX = float(torch.finfo(torch.float32).max)


def _f32_normal(v: float) -> bool:
    """Whether ``v`` is 0 or an fp32 normal number (an output multiplier the kernels can take)."""
    return v == 0 or 2.0 ** -126 <= abs(v) <= _F32_MAX


def _to16(x: torch.Tensor, bf16: bool) -> torch.Tensor:
    return x.to(torch.bfloat16 if bf16 else torch.float16).view(torch.int16)


def pack_weight(qw, recipe: Recipe, device=None) -> PackedWeight:
    """Convert a canonical :class:`~humming.reference.QuantizedWeight` into the kernel layout.

    The recipe's format/zero-point/scale fields must describe ``qw.scheme``
    (the planner makes them agree; :func:`recipe_for` builds one).
    """
    s = qw.scheme
    fmt = s.format
    dev = torch.device(device) if device is not None else qw.codes.device
    n, k = qw.n, qw.k
    grouped = s.scale in ("group", "block")
    g2 = recipe.group * recipe.ku if recipe.gscale and grouped else 0  # (the kernels' group, in values)
    padded = bool(g2) and g2 != s.group_size
    if padded and (g2 < s.group_size or g2 % 16 or recipe.op8):
        raise ValueError(f"pack_weight: the recipe's groups of {g2} values cannot hold the weight's groups of "
                         f"{s.group_size}")
    off = s.group_offset  # (a K-shard whose groups straddle the shards: placed in whole groups)
    mapped = padded or off is not None  # (the kernels' K is not the weight's: a column map, a zero column)
    kk = s.num_groups(k) * (g2 if padded else s.group_size) if mapped else k  # the kernels' K
    np_, kp = padded_n(n), padded_k(kk, recipe)
    codes = qw.codes.to(dev).to(torch.int64)
    if isinstance(fmt, IntFormat) and fmt.signed:
        codes = codes ^ (1 << (fmt.bits - 1))  # two's complement -> offset binary
    vals = torch.zeros(np_, kp, dtype=torch.int64, device=dev)
    cols = group_columns(k, s.group_size, g2 if padded else s.group_size, dev, off or 0) if mapped else None
    if mapped:  # (the gaps hold code 0: they meet the zero column of the activations)
        vals[:n, cols] = codes
    else:
        vals[:n, :k] = codes
    if recipe.op8 == 4:  # offset binary -> two's-complement nibbles: the int4 operand itself
        w = layout.pack_nibbles(vals ^ 0x8).reshape(-1).contiguous()
    elif recipe.op8:
        if recipe.bits == 8 and byte_flip(recipe):  # offset binary -> two's complement: the int8 operand itself
            vals ^= 0x80
        w = layout.pack_bytes(vals, recipe.bits, pairs=fp8_pairs(recipe)).reshape(-1).contiguous()
    else:
        w = layout.to_storage(layout.pack(vals, recipe.bits, recipe.fields), recipe.bits).reshape(-1).contiguous()

    f64 = torch.float64
    bias16 = 127 if recipe.bf16 else 15
    if recipe.op8:  # byte operands: fp8 codes as they are; offset-binary integers flipped at the top of a byte
        ffactor = 2.0 ** (recipe.bits - 8) if byte_flip(recipe) else 1.0  # (int4 operands: the codes' own values)
    else:
        ffactor = 2.0 ** (bias16 - recipe.fbias) if recipe.wfloat and not recipe.fcvt else 1.0

    rebias = not recipe.op8 and ffactor != 1.0  # (float codes re-biased into 16-bit floats)
    # per-group scale S [N, G], per-row multiplier C [N], scalar T
    T = ffactor
    C = None
    S = None
    if s.global_scale == "tensor":
        T *= float(qw.global_scale.reshape(-1)[0])
    elif s.global_scale == "channel":
        C = qw.global_scale.to(dev, f64).reshape(n)
    sc = qw.scales.to(dev, f64)
    if s.scale in ("group", "block"):
        S = sc if s.scale == "group" else sc.repeat_interleave(s.block_n, dim=0)
    elif s.scale == "channel":
        C = sc.reshape(n) if C is None else C * sc.reshape(n)
    else:
        T *= float(sc.reshape(-1)[0])

    groups = 0
    sz = None
    out_mul = T
    if recipe.gscale:
        if S is None:  # zero points on channel/tensor scales: unit scales, one group
            S = torch.ones(n, 1, dtype=f64, device=dev)
        groups = S.shape[1]
        e = _pow2_shift(float(S.abs().max()))
        # the scales, normalized to at most 1, also carry the float codes' re-bias factor (2^126 for e2m1 in bf16):
        # the dequantized weights are then the weight's own values over out_mul, not 2^-126 times them (which
        # underflow where the scales span many binades), and out_mul, a float, stays finite
        S = S * (2.0 ** -e * ffactor) if rebias else S * 2.0 ** -e
        unit = 2.0 ** e / ffactor if rebias else 2.0 ** e  # (what a stored scale is in the weight's units)
        out_mul *= unit
        dt = torch.bfloat16 if recipe.bf16 else torch.float16
        s16 = S.to(dt)
        if bool(((s16 == 0) & (S != 0)).any()):
            raise UnsupportedError(
                f"scales of this weight span more than {'bf16' if recipe.bf16 else 'fp16'} can hold "
                f"(largest {float(S.abs().max()) * unit:.3g}, smallest non-zero "
                f"{float(S[S != 0].abs().min()) * unit:.3g})",
                ["use bf16 activations, or a scale format with a narrower range"])
        scale_bits = torch.zeros(groups, np_, dtype=torch.int16, device=dev)
        scale_bits[:, :n] = s16.T.contiguous().view(torch.int16)
        if recipe.zp:
            z = qw.zeros.to(dev, f64)
            if s.scale == "block":
                z = z.repeat_interleave(s.block_n, dim=0)
            z = z.expand(n, groups) if z.shape[0] == 1 else z.reshape(n, groups)
            # the kernel computes (v - z) * s; byte operands take 128 - z (an integer) per byte
            aux16 = (128 - z).round().to(torch.int16) if recipe.op8 else _to16(z, recipe.bf16)
            aux_bits = torch.zeros(groups, np_, dtype=torch.int16, device=dev)
            aux_bits[:, :n] = aux16.T.contiguous()
            lo = scale_bits.to(torch.int32) & 0xFFFF
            hi = aux_bits.to(torch.int32) << 16
            sz = layout.pair_scale_rows(lo | hi)
        else:
            sz = layout.pair_scale_rows(scale_bits)
    if C is not None and not _f32_normal(out_mul):  # (2^120 for e4m3 codes in bf16, times a large tensor scale)
        a = _pow2_shift(abs(out_mul))
        C, out_mul = C * 2.0 ** a, out_mul * 2.0 ** -a
    if not _f32_normal(out_mul) or (C is not None and not float(C.abs().max()) < _F32_MAX):
        raise UnsupportedError(
            f"this weight's scales times its float codes' re-bias factor ({ffactor:g}) leave fp32's range "
            f"(output multiplier {out_mul:.3g})", ["use fp16 activations, or scales nearer 1"])
    chan = None
    if C is not None:
        chan = torch.zeros(np_, dtype=torch.float32, device=dev)
        chan[:n] = C.to(torch.float32)
    bias = None if qw.bias is None else qw.bias.to(dev, torch.float32).contiguous()
    perm = None if qw.perm is None else qw.perm.to(dev).contiguous()
    if mapped:  # the kernels' column j reads x[:, perm[j]]; the gaps read the zero column (index k)
        base = perm if perm is not None else torch.arange(k, dtype=torch.int64, device=dev)
        perm = torch.full((kk,), k, dtype=torch.int64, device=dev)
        perm[cols] = base
    desc = {"layout": layout.LAYOUT_NAME, "version": layout.LAYOUT_VERSION, "bits": recipe.bits,
            "n": n, "k": k, "np": np_, "kp": kp, "operand": OP8_NAMES[recipe.op8],
            **({"byte_order": "".join(map(str, layout.BYTE_ORDER[fp8_pairs(recipe)]))} if int_fp8(recipe) else {}),
            "block": f"16x{64 * recipe.ku}",
            "fields": ("float4" if recipe.wfloat else "3-bit") if recipe.fields else None}
    if mapped:
        desc.update(kernel_k=kk)
    if padded:
        desc.update(group_padding=f"{s.group_size} -> {g2}")
    if off is not None:
        desc.update(group_offset=off)
    return PackedWeight(recipe, n, kk, np_, kp, w, sz, chan, bias, float(out_mul), groups, perm, desc,
                        zero_column=mapped)


def pack_moe_weight(qw, recipe: Recipe, device=None) -> PackedWeight:
    """An MoE weight (``[E, N, K]`` codes) in the kernel layout: each expert packed as a dense weight
    (pack_weight) and the experts stacked, with their strides (PackedWeight.estrides). Each expert's output
    multiplier (tensor scale, the power of two its group scales were normalized by, a float re-bias left
    there) goes into its channel multipliers over a power of two the experts share, the launch's ``out_mul``
    (at most the smallest of them: what a channel multiplier then holds is the expert's own part, 1 or more,
    not a factor such as 2^120 that would leave fp32's range). Act order: each expert's kernel columns, int32
    ``[E, K']`` (PackedWeight.perm; K, the layer's, names the zero column of padded groups), by which the MoE
    gather puts each block's rows in its expert's column order."""
    from humming.errors import ShapeError

    if not qw.is_moe:
        raise ShapeError(f"pack_moe_weight: expected an MoE weight [E, N, K], got codes {list(qw.codes.shape)}")
    parts = [pack_weight(qw.expert(e), recipe, device) for e in range(qw.num_experts)]
    p0 = parts[0]
    nonzero = [abs(pe.out_mul) for pe in parts if pe.out_mul]
    common = 2.0 ** (_pow2_shift(min(nonzero)) - 1) if nonzero else 1.0
    chans = []
    for pe in parts:  # (rows past N are never stored: their multiplier does not matter)
        c = pe.chan if pe.chan is not None else torch.ones(pe.np_, dtype=torch.float32, device=pe.w.device)
        chans.append((c.to(torch.float64) * (pe.out_mul / common)).to(torch.float32))
    if not bool(torch.isfinite(torch.stack(chans)).all()):
        raise UnsupportedError(
            f"the experts' output multipliers span more than fp32 holds (from {min(nonzero):.3g} to "
            f"{max(nonzero):.3g})", ["pack the experts as separate dense weights"])
    w = torch.stack([pe.w for pe in parts]).reshape(-1).contiguous()
    sz = torch.stack([pe.sz for pe in parts]).contiguous() if p0.sz is not None else None
    chan = torch.stack(chans).reshape(-1).contiguous()
    bias = torch.stack([pe.bias for pe in parts]).reshape(-1).contiguous() if p0.bias is not None else None
    estrides = (p0.w.numel(), p0.sz.numel() * p0.sz.element_size() if sz is not None else 0, p0.np_,
                p0.n if bias is not None else 0)
    desc = dict(p0.descriptor, experts=qw.num_experts)
    perm = p0.perm  # (padded groups alone: one column map for every expert)
    if qw.perm is not None:
        perm = torch.stack([pe.perm for pe in parts]).to(torch.int32).contiguous()
        desc.update(act_order="per expert")
    return replace(p0, w=w, sz=sz, chan=chan, bias=bias, out_mul=common, descriptor=desc, experts=qw.num_experts,
                   estrides=estrides, perm=perm)


def group_columns(k: int, group: int, kernel_group: int, device=None, offset: int = 0) -> torch.Tensor:
    """int64 [k]: where each of a weight's ``k`` columns (groups of ``group``, the first column ``offset``
    into its group) sits in the kernels' K, whose groups hold ``kernel_group`` columns (the group's
    ``group`` columns first; zeros after, and before a shard's first column)."""
    j = torch.arange(k, dtype=torch.int64, device=device) + offset
    return j // group * kernel_group + j % group


def kernel_group(scheme, op8: int = 0) -> int:
    """K values per scale group as the kernels hold the weight (0: no group or block scales). The
    kernels apply one scale per k16 tile of a row (per k32 / k64 on byte / int4 operands). For 16-bit
    operands a group that is not a multiple of 16 values is padded to the next multiple: pack_weight
    puts zero-weight columns after each group, and each call gathers the activations into that K
    with a zero column in the gaps (humming.ops.gemm, as it permutes act-order columns). The results
    are the layer's; the kernels read ``kernel_group / group_size`` times the weight codes. Byte
    operands keep their groups (recipe_for refuses what their MMAs cannot split)."""
    if scheme.scale not in ("group", "block"):
        return 0
    g = scheme.group_size
    return g if op8 or g % 16 == 0 else -(-g // 16) * 16


def kernel_layer(layer, compute):
    """``layer`` as the kernels run it with ``compute``'s operands: with its scale groups padded
    (kernel_group), a K-shard's partial groups filled out to whole ones (``group_offset``), and K grown to
    match; ``layer`` itself where nothing is padded. pack_weight places the columns so (group_columns). Per-group
    activation scales whose groups do not divide that K appear as what 16-bit operands meet: one scale per row."""
    w = layer.weight
    g2 = kernel_group(w, _op8(compute))
    if w.group_offset is None and (not g2 or g2 == w.group_size):
        return layer
    # (a K-shard whose groups straddle the shards, w.group_offset: its partial groups filled out with
    # zero-weight columns, so the kernels see whole groups)
    k = w.num_groups(layer.k) * g2
    act = layer.activation
    if act.quant == "dynamic_group" and k % act.group_size:
        # Per-group activation scales are computed over the layer's columns, before the call places them in the
        # kernels' K (humming.ops.gemm): 16-bit operands then see the values with one power of two per row, as
        # per-token activations; byte operands, whose kernels would fold the scales by the kernels' columns,
        # refuse such layers (check_layer, _group_acts_fit). So the kernels' K need not hold whole groups.
        act = replace(act, quant="dynamic_token")
    return replace(layer, k=k, weight=replace(w, group_size=g2, group_offset=None), activation=act)


def group_padding_note(layer, compute) -> str | None:
    """The plan's note where kernel_layer pads the scale groups (None where it does not)."""
    kl = kernel_layer(layer, compute)
    if kl is layer:
        return None
    g, g2, off = layer.weight.group_size, kl.weight.group_size, layer.weight.group_offset
    cost = (f"(K {layer.k} -> {kl.k} in the kernels: {kl.k / layer.k:.2f}x the weight codes read) and each call "
            f"gathers the activations into that K, with zeros in the gaps, as for act order")
    if off is not None and g2 == g:
        return (f"a K-shard starting {off} columns into its first scale group of {g}: prepare_weight fills its "
                f"partial groups out with zero-weight columns {cost}")
    return (f"scale groups of {g} values: the kernels apply one scale per 16 values of K, so prepare_weight pads "
            f"each group with {g2 - g} zero-weight columns"
            + (f", and fills a K-shard's partial groups (it starts {off} columns into its first) out to whole ones"
               if off is not None else "") + f" {cost}")


def recipe_for(scheme, *, bf16: bool, out_bf16: bool, caps_cp_async: bool, k8mma: bool, target: str,
               act_scale: int = 0, has_bias: bool = False, defines: tuple = (), op8: int = 0,
               fcvt: bool = False, agroup: int = 0, fp8_split: bool = False) -> Recipe:
    """The kernel-level facts of a weight scheme computed in fp16 (``bf16=False``) or bf16,
    or (``op8``: 1 int8, 2 e4m3, 3 e5m2) on byte operands. ``fcvt``: float codes meet the
    16-bit operand by the chip's conversion (the plan's ``native_cvt``; see cvt_dequant). ``fp8_split``: int4
    codes as two e4m3 operands per register (the plan's ``int_bittrick_split``; fp8_split_limits)."""
    fmt = scheme.format
    reasons = []
    wfloat = isinstance(fmt, FloatFormat)
    zp = {"none": 0, "int": 1, "float": 2}[scheme.zero_point]
    if op8:
        reasons.extend(byte_operand_limits(scheme, op8))
        bf16 = False  # 16-bit scales stored as fp16
    elif wfloat:
        lim_e, lim_m = (8, 7) if bf16 else (5, 10)
        if fmt.exp > lim_e or fmt.man > lim_m:
            reasons.append(f"{fmt.name} weights do not fit {'bf16' if bf16 else 'fp16'} by re-biasing "
                           f"(exponent {fmt.exp} > {lim_e} bits)")
    gscale = scheme.scale in ("group", "block") or zp != 0
    group = scheme.group_size if scheme.scale in ("group", "block") else 0
    ku = op8_unit(op8)
    if gscale and scheme.scale in ("group", "block") and group % (16 * ku):
        reasons.append(f"group size {group} is not a multiple of {16 * ku} (the kernel applies scales per "
                       f"k{16 * ku} tile)")
    if fp8_split:
        reasons.extend(fp8_split_limits(scheme, op8))
    if reasons:
        raise UnsupportedError("the mma_sync GEMM cannot run this weight scheme", reasons)
    has_chan = scheme.scale == "channel" or scheme.global_scale == "channel"
    if not gscale:
        group = 64
    elif scheme.scale not in ("group", "block"):
        group = 1 << 30  # one group spanning all of K (zero points on channel/tensor scales)
    else:
        group //= ku  # in kernel K units
    if fcvt and not (op8 == 0 and not bf16 and cvt_dequant(fmt.name, "fp16")):
        pairs = ", ".join(f"{a} into {b}" for a, b in sorted(CVT_DEQUANT))
        raise UnsupportedError("the mma_sync GEMM cannot run this weight scheme",
                               [f"native_cvt converts {pairs} operands; found {fmt.name} into "
                                f"{'bf16' if bf16 else OP8_NAMES[op8] if op8 else 'fp16'}"])
    offset = 0 if wfloat else code_offset(scheme)
    return Recipe(bits=fmt.bits, wfloat=wfloat, fexp=getattr(fmt, "exp", 0), fman=getattr(fmt, "man", 0),
                  fbias=getattr(fmt, "bias", 0) or 0, fcvt=fcvt, offset=offset, zp=zp, gscale=gscale, group=group,
                  bf16=bf16, out_bf16=out_bf16, has_chan=has_chan, act_scale=act_scale, has_bias=has_bias,
                  cp_async=caps_cp_async, k8mma=k8mma and not op8, target=target, defines=defines, op8=op8,
                  agroup=agroup if act_scale == 3 else 0, fp8_split=fp8_split)


#: (weight format, 16-bit operand) pairs whose ``native_cvt`` dequantizer gemm/dequant.cuh has
#: (``cvt.rn.f16x2.e4m3x2``: a PRMT and an F2FP per pair, where the re-bias takes a shift and
#: three LOP3s per two pairs more). e5m2 codes stay re-biased: they are fp16's top byte, a
#: shift and a mask per pair, cheaper than the cvt (checked in SASS: 214 against 198
#: instructions per loop of the one-token e5m2 tile on sm_90a).
CVT_DEQUANT = {("e4m3", "fp16")}


def cvt_dequant(fmt: str, operand: str) -> bool:
    """Whether the kernels convert ``fmt`` weight codes into ``operand`` with the chip's cvt."""
    return (fmt, operand) in CVT_DEQUANT
OP8_OF = {"int8": 1, "e4m3": 2, "e5m2": 3, "int4": 4}


def byte_flip(recipe: Recipe) -> bool:
    """Integer codes become byte operands by one flip of bit 7 (mirrors DequantBytes::FLIP)."""
    return (recipe.op8 == 1 and not recipe.wfloat and not recipe.zp
            and recipe.offset == 1 << (recipe.bits - 1))


def int_fp8(recipe: Recipe) -> bool:
    """Integer codes made fp8 operands in the kernels (mirrors DequantBytes::INT_FP8; their words hold bytes
    in layout.BYTE_ORDER[True])."""
    return recipe.op8 in (2, 3) and not recipe.wfloat


def code_offset(scheme) -> int:
    """What the kernels subtract from an integer weight's stored code: 2^(bits - 1) for signed codes (stored offset
    binary) and for codes with an implicit offset, else 0."""
    fmt = scheme.format
    return (1 << (fmt.bits - 1)) if (fmt.signed or scheme.implicit_offset) else 0


def fp8_pairs(recipe: Recipe) -> bool:
    """Whether the words of integer codes made fp8 operands hold their bytes 1 and 2 swapped (layout.BYTE_ORDER,
    INT_FP8_MODE 0); the split layout (Recipe.fp8_split: modes 1 and 2) keeps them in order."""
    return int_fp8(recipe) and not recipe.fp8_split


def fp8_split_enabled() -> bool:
    """Whether plans may take int4 codes as two e4m3 operands per register on Hopper's warpgroup tiles
    (fp8_split_limits): only with ``HUMMING_INT_FP8_SPLIT`` 1/on, read when a plan is made. Two LOP3s per register
    in place of two LOP3s, two packed ops and two F2FPs, and twice the wgmmas, on the tiles of at most
    FP8_SPLIT_MAX_BM tokens; the other tiles convert by F2FP after a PRMT per word (the split layout keeps the
    bytes in order). GPU-tested (gpu_run.sh s56c); on the H100 2-8 % faster at 1-16 tokens and 1-4 % slower from
    64 (the PRMTs), so off by default (FP8_SPLIT_MAX_BM has the figures)."""
    return os.environ.get("HUMMING_INT_FP8_SPLIT", "0").lower() in ("1", "on", "true", "yes")


def fp8_split_limits(scheme, op8: int) -> list[str]:
    """Why integer weights of ``scheme`` cannot be split into two e4m3 operands per register (8 + the low three
    bits of a code, and -16 or -8 by its top bit: DequantBytes' INT_FP8_MODE 2)."""
    fmt = scheme.format
    if isinstance(fmt, FloatFormat) or op8 != 2:
        return ["the split takes integer codes into e4m3 operands"]
    if fmt.bits != 4 or scheme.zero_point != "none" or code_offset(scheme) != 8:
        return [f"the split takes 4-bit codes of offset 8 without zero points; found {scheme.describe()}"]
    return []


def byte_operand_limits(scheme, op8: int) -> list[str]:
    """Why weights of ``scheme`` cannot be the byte operand ``op8`` (empty: they can)."""
    fmt = scheme.format
    name = OP8_NAMES[op8]
    if op8 == 4:
        if isinstance(fmt, FloatFormat) or fmt.bits != 4:
            return [f"int4 MMAs take 4-bit integer weight codes as they are; found {fmt.name} weights"]
        if scheme.zero_point != "none" or not (fmt.signed or scheme.implicit_offset == 8):
            return ["int4 weights minus a zero point (or unsigned without the offset 8) span more than int4"]
        return []
    if op8 >= 2:
        if isinstance(fmt, FloatFormat):
            if fmt.name != name:
                return [f"{name} MMAs take {name} weight codes as they are; found {fmt.name} weights"]
            if scheme.zero_point != "none":
                return [f"{name} weights with zero points are not implemented"]
            return []
        return int_fp8_limits(scheme, op8)
    if isinstance(fmt, FloatFormat):
        return [f"int8 MMAs take integer weights; found {fmt.name}"]
    reasons = []
    if fmt.bits not in (1, 2, 4, 8):
        reasons.append(f"int8 operands are made from 1, 2, 4 or 8-bit codes in this version; found {fmt.bits}-bit "
                       f"weights")
    if scheme.zero_point == "float":
        reasons.append("float zero points do not fit int8 operands")
    signed_or_offset = fmt.signed or scheme.implicit_offset
    if fmt.bits == 8 and (scheme.zero_point != "none" or not signed_or_offset):
        reasons.append("8-bit codes minus a zero point (or unsigned 8-bit codes) span more than int8")
    return reasons


def int_fp8_limits(scheme, op8: int) -> list[str]:
    """Why integer weights of ``scheme`` cannot become fp8 operands ``op8`` (2 e4m3, 3 e5m2) in the kernels
    (DequantBytes::INT_FP8: each code minus its offset, converted on the chip; it must be exact in the fp8 type)."""
    fmt, name = scheme.format, OP8_NAMES[op8]
    if os.environ.get("HUMMING_INT_FP8", "1") == "0":
        return [f"integer codes into {name} operands are turned off (HUMMING_INT_FP8=0)"]
    if fmt.bits not in (1, 2, 4):
        return [f"{name} operands are made from integer codes of 1, 2 or 4 bits; found {fmt.bits}-bit weights"]
    if scheme.zero_point == "float":
        return [f"float zero points do not fit {name} operands"]
    offset = code_offset(scheme)
    # (the largest |code - offset|, or |code - z| with integer zero points z within the codes' range)
    top = (1 << fmt.bits) - 1 if scheme.zero_point == "int" else max(offset, (1 << fmt.bits) - 1 - offset)
    exact = 16 if op8 == 2 else 8  # (every integer up to this is exact: 3 / 2 mantissa bits)
    if top > exact:
        minus = "their zero points" if scheme.zero_point == "int" else "their offset"
        return [f"{fmt.name} codes minus {minus} reach {top}, which {name} does not hold exactly"]
    return []


def _op8(compute) -> int:
    return OP8_OF.get(compute.a, 0) if compute.a == compute.b else 0
