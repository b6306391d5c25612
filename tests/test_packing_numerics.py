"""What a packed weight means, read back on the CPU (CPU tier).

``pack_weight`` turns a canonical QuantizedWeight into the kernels' layout: the codes in fragment order
(``layout.py``), the group scales normalized to at most 1 and rounded to the compute type, the float codes'
re-bias factor and the largest scale's power of two moved between the scales, the channel multipliers and the
output multiplier, a K-shard's or padded groups' columns placed in whole groups. :func:`effective_weight` reads
a PackedWeight back as the kernels' dequantizers use it (``gemm/dequant.cuh``: ``w = (v - z) * s``, then the
channel multiplier and ``out_mul`` on the sums), written from those semantics and not from ``pack_weight``; the
tests compare it with ``reference.dequantize`` on random layers of the GPU fuzz's formats, as each chip's plan
packs them. A wrong factor in ``out_mul`` (the bf16 gpt-oss overflow of the forty-eighth session was one), a
scale that underflows its 16-bit type, a column in the wrong place: each shows here without a GPU. The code
extraction itself (the CUDA header against ``layout.unpack``) is test_layout.py's.

Tolerance per element: the stored scales (and float zero points) are the compute type's, rounded once to
nearest: ``2 eps |w|`` with eps = 2^-11 (fp16) or 2^-8 (bf16), plus their subnormal step (2^-25 / 2^-134 times
the element's multipliers) for scales far below the largest, and twice the float zero point's rounding times its
scale (``v - z`` may round to zero where the layer's is not).
"""
from __future__ import annotations

import dataclasses
import random

import pytest
import torch

import humming
from humming import reference as R
from humming.device import Device
from humming.dtypes import FloatFormat
from humming.errors import FormatError, UnsupportedError
from humming.scheme import LayerSpec
from humming_nvidia import gemm_mma_sync as G
from humming_nvidia import layout

import test_gemm_fuzz_gpu as F  # (the formats and activations the GPU fuzz draws; tests/ is on the path: rootdir)


def _operand_codes(pw) -> torch.Tensor:
    """The codes of the kernels' operand, offset binary as packed (int64 [Np, Kp])."""
    r = pw.recipe
    if r.op8 == 4:
        return layout.unpack_nibbles(pw.w.view(pw.np_ // 16, pw.kp // 256, 32, 16)) ^ 0x8
    if r.op8:
        v = layout.unpack_bytes(pw.w.view(pw.np_ // 16, pw.kp // 128, 32, 2 * r.bits), r.bits, G.int_fp8(r))
        return v ^ 0x80 if r.bits == 8 and G.byte_flip(r) else v
    words = layout.from_storage(pw.w.view(pw.np_ // 16, pw.kp // 64, 32 * r.bits), r.bits)
    return layout.unpack(words, r.bits, r.fields)


def _sixteen(bits: torch.Tensor, bf16: bool) -> torch.Tensor:
    return (bits & 0xFFFF).to(torch.int16).view(torch.bfloat16 if bf16 else torch.float16).to(torch.float64)


def effective_weight(pw, fmt) -> tuple[torch.Tensor, torch.Tensor]:
    """(float64 [N, K'] weights the kernels multiply by, in their columns; the per-element bound of their
    rounding). Byte operands (dequant.cuh's DequantBytes) hold the codes' values as signed bytes or fp8, with
    zero points subtracted from the code in the byte; int4 operands two's-complement nibbles."""
    r = pw.recipe
    n, kk = pw.n, pw.k
    v = _operand_codes(pw)[:n, :kk]
    bf16 = r.bf16 and not r.op8
    eps, tiny = (2.0 ** -8, 2.0 ** -134) if bf16 else (2.0 ** -11, 2.0 ** -25)
    z = torch.zeros(())
    if r.op8 == 4:
        q = (v - 8).double()
    elif r.op8 and not r.wfloat and G.byte_flip(r):  # (the code at the top of a byte, bit 7 flipped: out_mul holds
        q = ((v - (1 << (r.bits - 1))) << (8 - r.bits)).double()  # 2^(bits - 8))
    elif r.op8 and not r.wfloat:  # (the code plus 128 - z, or 128 - offset, bit 7 flipped: v - z in a signed byte)
        q = (v - (0 if r.zp else r.offset)).double()
    elif r.wfloat:  # (the code's bits moved into a 16-bit float: value x 2^(fbias - bias16), unless converted)
        q = fmt.decode(v).double()
        if not r.op8 and not r.fcvt:
            q = q * 2.0 ** (r.fbias - (127 if r.bf16 else 15))
    else:
        q = (v - (0 if r.zp else r.offset)).double()
    s = torch.ones(n, kk, dtype=torch.float64)
    if pw.sz is not None:
        entries = layout.unpair_scale_rows(pw.sz).to(torch.int64)[:, :n]  # [groups, N]
        g2 = r.group * r.ku  # (the kernels' group, in values)
        col_group = torch.arange(kk) // g2
        s = _sixteen(entries, bf16).T[:, col_group]
        if r.zp and r.op8:  # (byte operands: the integer 128 - z in the entry's high half)
            q = q - (128 - ((entries >> 16) & 0xFF)).double().T[:, col_group]
        elif r.zp:
            z = _sixteen(entries >> 16, bf16).T[:, col_group]
            q = q - z
    mul = torch.full((n, 1), float(pw.out_mul), dtype=torch.float64)
    if pw.chan is not None:
        mul = mul * pw.chan[:n, None].double()
    w = mul * s * q
    bound = 2 * eps * w.abs() + mul.abs() * (tiny * (q.abs() + 1) + 2 * eps * s.abs() * z.abs())
    return w, bound


def _layer_in_kernel_columns(qw, pw) -> tuple[torch.Tensor, torch.Tensor]:
    """reference.dequantize's weights where the kernels hold them, and which kernel columns hold one (the gaps
    of padded groups meet a zero activation column: any value)."""
    ref = R.dequantize(qw).double()
    if pw.perm is None:
        return ref, torch.ones(pw.k, dtype=torch.bool)
    perm = pw.perm.to(torch.int64)
    real = perm < qw.k
    out = torch.zeros(qw.n, pw.k, dtype=torch.float64)
    out[:, real] = ref[:, perm[real]]
    return out, real


DEVICES = ["H200", "A100", "T4", "L40S", "sm_120", "B200"]
SIZES_N, SIZES_K = [48, 192, 320], [256, 512, 960, 1536, 1848, 2368]


def _draws(count: int, seed: int):
    """(device, LayerSpec, plan) of ``count`` random valid layers the device's plan runs, a quarter of them MoE
    layers of three experts."""
    rng = random.Random(seed)
    weights = F.WEIGHTS + F.PADDED + F.SHARDS
    out = []
    while len(out) < count:
        w, a = rng.choice(weights), rng.choice(F.ACTS)
        try:
            layer = LayerSpec(rng.choice(SIZES_N), rng.choice(SIZES_K), w, a, out_dtype=rng.choice(["fp16", "bf16"]),
                              num_experts=3 if rng.random() < 0.25 else 0)
        except (FormatError, ValueError):
            continue
        device = rng.choice(DEVICES)
        try:
            p = humming.plan(layer, device)
        except UnsupportedError:
            continue
        if p.runnable:
            out.append((device, layer, p))
    return out


def _random_weight(layer, gen) -> R.QuantizedWeight:
    """Fresh weights of ``layer`` whose rows span 2^-10 .. 2^8 (scales over many binades: where the re-bias factors
    and the largest scale's power of two meet fp32's and the 16-bit types' limits); MoE: each expert its own, with
    its own act-order permutation."""
    def one():
        rows = torch.exp2(torch.randint(-10, 9, (layer.n, 1), generator=gen).float())
        perm = torch.randperm(layer.k, generator=gen) if layer.weight.act_order else None
        return R.quantize(torch.randn(layer.n, layer.k, generator=gen) * rows * 0.02, layer.weight, perm=perm)
    return R.QuantizedWeight.stack([one() for _ in range(layer.num_experts)]) if layer.is_moe else one()


def _expert(pw, e: int):
    """Expert ``e`` of a packed MoE weight as a dense one (its slice of the words, scales, channel multipliers
    and column order; the launch's out_mul)."""
    ws, _, cs, _ = pw.estrides
    perm = pw.perm[e].to(torch.int64) if pw.perm is not None and pw.perm.dim() == 2 else pw.perm
    return dataclasses.replace(pw, w=pw.w[e * ws:(e + 1) * ws], sz=None if pw.sz is None else pw.sz[e],
                               chan=pw.chan[e * cs:(e + 1) * cs], perm=perm, experts=0, estrides=())


def _check(device, layer, p) -> None:
    """The layer's packed weights (each expert's) against the reference."""
    gen = torch.Generator().manual_seed(abs(hash((device, layer.describe()))) % 2**31)
    qw = _random_weight(layer, gen)
    recipe = G.recipe_from_plan(p, Device.named(device))
    fmt = layer.weight.format if isinstance(layer.weight.format, FloatFormat) else None
    if layer.is_moe:
        pw = G.pack_moe_weight(qw, recipe, "cpu")
        pairs = [(qw.expert(e), _expert(pw, e)) for e in range(layer.num_experts)]
    else:
        pairs = [(qw, G.pack_weight(qw, recipe, "cpu"))]
    for e, (q, pe) in enumerate(pairs):
        eff, bound = effective_weight(pe, fmt)
        ref, real = _layer_in_kernel_columns(q, pe)
        ratio = (eff - ref).abs()[:, real] / bound[:, real]
        worst = float(ratio.max())
        assert worst <= 1.0, (f"{device} {layer.describe()} ({p.compute.a} x {p.compute.b}), expert {e}: {worst:.3g} x "
                              f"the bound at (row, column) {divmod(int(ratio.argmax()), int(real.sum()))}")


@pytest.mark.parametrize("chunk", range(4))
def test_packed_weights_mean_the_layers_weights(chunk):
    """Random layers (every weight format of the GPU fuzz, padded groups, K-shards, act order; the activations
    that choose their operands; dense and MoE) as six chips' plans pack them: what the kernels multiply by is
    the layer's weights, within the stored scales' rounding."""
    for draw in _draws(16, 1000 + chunk):
        _check(*draw)


def test_the_decoding_sees_a_wrong_output_multiplier():
    """The check is not vacuous: a packed weight whose out_mul is off by one power of two fails it."""
    device, layer, p = next(d for d in _draws(8, 7) if not d[1].is_moe)
    qw = _random_weight(layer, torch.Generator().manual_seed(7))
    pw = G.pack_weight(qw, G.recipe_from_plan(p, Device.named(device)), "cpu")
    fmt = layer.weight.format if isinstance(layer.weight.format, FloatFormat) else None
    ref, real = _layer_in_kernel_columns(qw, pw)
    eff, bound = effective_weight(pw, fmt)
    assert float(((eff - ref).abs()[:, real] / bound[:, real]).max()) <= 1.0
    pw.out_mul *= 2
    eff, bound = effective_weight(pw, fmt)
    assert float(((eff - ref).abs()[:, real] / bound[:, real]).max()) > 1.0
