"""The prepared weight layout: the Python packer and the CUDA header agree, bit for bit.

The header's extraction code is plain C++ as well, so it is compiled here with the
host C++ compiler and run on packed data from the Python side.
"""
import math
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from humming_nvidia import layout as L

INCLUDE = Path(L.__file__).parent / "include"


@pytest.mark.parametrize("bits", range(1, 9))
def test_pack_unpack_round_trip(bits):
    g = torch.Generator().manual_seed(bits)
    v = torch.randint(0, 1 << bits, (48, 192), generator=g)
    p = L.pack(v, bits)
    assert p.dtype == torch.int32 and p.shape == (3, 3, 32, bits)
    assert torch.equal(L.unpack(p, bits), v)


def test_planes():
    assert L.planes(7) == [(4, 0), (2, 4), (1, 6)]
    assert L.planes(3) == [(2, 0), (1, 2)]
    assert L.planes(8) == [(8, 0)]
    with pytest.raises(ValueError):
        L.planes(9)


def test_pack_rejects_unpadded_shapes():
    with pytest.raises(ValueError, match="multiple of 16"):
        L.pack(torch.zeros(20, 64, dtype=torch.int64), 4)


HOST_PROGRAM = r"""
#include <cstdio>
#include "humming/gemm/layout.cuh"
template <int B, int J>
void emit(const unsigned (&w)[B]) {
  unsigned x = humming::layout::extract_pair<B, J>(w);
  std::printf("%u %u\n", x & 0xffffu, x >> 16);
  if constexpr (J + 1 < 16) emit<B, J + 1>(w);
}
template <int B>
int run() {
  unsigned w[B];
  while (true) {
    for (int i = 0; i < B; ++i)
      if (std::scanf("%u", &w[i]) != 1) return 0;
    emit<B, 0>(w);
  }
}
int main(int argc, char** argv) {
  switch (argv[1][0] - '0') {
    case 1: return run<1>(); case 2: return run<2>(); case 3: return run<3>(); case 4: return run<4>();
    case 5: return run<5>(); case 6: return run<6>(); case 7: return run<7>(); case 8: return run<8>();
  }
  return 1;
}
"""


@pytest.fixture(scope="module")
def host_extractor(tmp_path_factory):
    cxx = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if cxx is None:
        pytest.fail("a host C++ compiler (g++) is needed to check the layout header on the CPU")
    d = tmp_path_factory.mktemp("layout")
    src = d / "extract.cpp"
    src.write_text(HOST_PROGRAM)
    exe = d / "extract"
    subprocess.run([cxx, "-std=c++17", "-O1", f"-I{INCLUDE}", str(src), "-o", str(exe)], check=True)
    return exe


@pytest.mark.parametrize("bits", range(1, 9))
def test_cuda_header_extracts_what_python_packed(host_extractor, bits):
    g = torch.Generator().manual_seed(100 + bits)
    v = torch.randint(0, 1 << bits, (32, 128), generator=g)
    p = L.pack(v, bits)  # [NB, KB, lane, bits]
    lanes = p.reshape(-1, bits)  # each lane's words, in order
    text = "\n".join(" ".join(str(int(x) & 0xFFFFFFFF) for x in row) for row in lanes.tolist())
    out = subprocess.run([str(host_extractor), str(bits)], input=text, capture_output=True, text=True,
                         check=True).stdout.split()
    got = torch.tensor([int(x) for x in out]).view(2, 2, 32, 16, 2)  # [NB, KB, lane, pair, elem]
    row, col = L._fragment_index("cpu")
    blocks = v.view(2, 16, 2, 64).permute(0, 2, 1, 3)
    want = blocks[:, :, row, col]
    assert torch.equal(got, want)


def host_numbers(tmp_path, program: str) -> list[int]:
    """Compile ``program`` (C++ including the layout header) with the host compiler, run it, and return
    the integers it prints."""
    cxx = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if cxx is None:
        pytest.fail("a host C++ compiler (g++) is needed to check the layout header on the CPU")
    src, exe = tmp_path / "probe.cpp", tmp_path / "probe"
    src.write_text(program)
    subprocess.run([cxx, "-std=c++17", "-O1", f"-I{INCLUDE}", str(src), "-o", str(exe)], check=True)
    return [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]


WORD_INDEX_PROGRAM = r"""
#include <cstdio>
#include "humming/gemm/layout.cuh"
int main() {
  for (int b = 1; b <= 8; ++b)
    for (int l = 0; l < 32; ++l)
      for (int i = 0; i < b; ++i) std::printf("%d\n", humming::layout::word_index(b, l, i));
}
"""


def test_storage_order_is_the_header_word_index(tmp_path):
    """Layout v3 (and v4) stores a block plane by plane (plane q's P words of lane l at 32 off_q + l P): the
    Python order and the header's word_index agree, every width keeps its words (a permutation of the
    block), one-plane widths keep [lane][word], and to_storage / from_storage invert each other."""
    got = host_numbers(tmp_path, WORD_INDEX_PROGRAM)
    at = 0
    for bits in range(1, 9):
        idx = L.storage_index(bits)
        assert got[at:at + 32 * bits] == idx.tolist(), bits
        at += 32 * bits
        assert sorted(idx.tolist()) == list(range(32 * bits))
        if bits in (1, 2, 4, 8):
            assert idx.tolist() == list(range(32 * bits))
    idx3 = L.storage_index(3).view(32, 3)
    assert idx3[5].tolist() == [10, 11, 64 + 5]  # lane 5: words 0 and 1 side by side, then word 2
    v = torch.randint(0, 8, (32, 128), generator=torch.Generator().manual_seed(7))
    p = L.pack(v, 3)
    st = L.to_storage(p, 3)
    assert st.shape == (2, 2, 96) and torch.equal(L.from_storage(st, 3), p)
    assert torch.equal(st[1, 0, 64:], p[1, 0, :, 2]) and torch.equal(st[1, 0, :64].view(32, 2), p[1, 0, :, :2])


FIELDS3_PROGRAM = r"""
#include <cstdio>
#include "humming/gemm/layout.cuh"
int main() {
  for (int j = 0; j < 15; ++j) std::printf("%d %d\n", humming::layout::word3(j), humming::layout::pos3(j));
}
"""


def cells(runs) -> set:
    """The (word, bit) places the field runs of a layout take, both halves; no place twice."""
    used = set()
    for rs in runs:
        for word, pos, vb, width in rs:
            for b in range(width):
                for half in (0, 16):
                    assert (word, pos + b + half) not in used
                    used.add((word, pos + b + half))
    return used


def test_three_bit_fields_are_whole_and_in_reach(tmp_path):
    """v4: 3-bit pair j < 15 is one whole field of its word (the header's word3 / pos3 agree with Python),
    pair 15 takes the spare bit 15 of the three words, and together they fill the 96 bits once. The
    dequantizer wants pair j at bit 3 (j & 1): each word gets there with at most two shifts besides none
    (6 and 12, word 2 6 and 9), and pair 15's bit 0 comes from word 0 shifted by 12."""
    got = host_numbers(tmp_path, FIELDS3_PROGRAM)
    runs = L.fields3()
    assert [(r[0][0], r[0][1]) for r in runs[:15]] == list(zip(got[0::2], got[1::2]))
    for j, rs in enumerate(runs):
        assert sum(w for *_, w in rs) == 3 and len(rs) == (1 if j < 15 else 3)
    assert len(cells(runs)) == 96
    shifts = {w: set() for w in range(3)}
    for j, rs in enumerate(runs[:15]):
        word, pos = rs[0][:2]
        assert pos >= 3 * (j & 1) and pos - 3 * (j & 1) in (0, 6, 9, 12)
        shifts[word].add(pos - 3 * (j & 1))
    assert shifts == {0: {0, 6, 12}, 1: {0, 6, 12}, 2: {0, 6, 9}}
    assert runs[15][0] == (0, 15, 0, 1) and 15 - 12 == 3  # (w0 >> 12: bit 15 -> bit 3)
    assert L.slots(7, 2).tolist() == list(range(16)) and L.slots(2, 0).tolist() == [j % 8 for j in range(16)]


FLOAT4_PROGRAM = r"""
#include <cstdio>
#include "humming/gemm/layout.cuh"
template <int MS, int J>
void emit(const unsigned (&w)[4]) {
  unsigned x = humming::layout::float4_pair<J, MS>(w);
  std::printf("%u %u\n", x & 0xffffu, x >> 16);
  if constexpr (J + 1 < 16) emit<MS, J + 1>(w);
}
int main() {
  for (int q = 0; q < 4; ++q)
    std::printf("%d %d %d %d\n", humming::layout::f4_mag(q, 9), humming::layout::f4_sign(q, 9),
                humming::layout::f4_mag(q, 6), humming::layout::f4_sign(q, 6));
  unsigned w[4];
  while (std::scanf("%u %u %u %u", &w[0], &w[1], &w[2], &w[3]) == 4) emit<9, 0>(w), emit<6, 0>(w);
}
"""


@pytest.mark.parametrize("bf16", [False, True], ids=["fp16", "bf16"])
def test_float4_fields_give_the_16_bit_floats(tmp_path, bf16):
    """v5: e2m1 codes are stored as magnitude and sign fields (fields4) that fill each 16-bit half once; the
    header's positions agree with Python's, packing round-trips, and the header's float4_pair turns each
    lane's words into the fp16 (magnitude at bit 9) / bf16 (bit 6) bits of its pairs -- the magnitude bits
    there, the sign at bit 15, nothing else -- which the exponent re-bias factor makes the e2m1 values; two
    of the four pairs of a word move whole."""
    from humming.dtypes import get_format
    from humming_nvidia import gemm_mma_sync as G
    from humming.scheme import WeightScheme

    ms = 6 if bf16 else 9
    runs = L.fields4(ms)
    for j, rs in enumerate(runs):
        assert [(vb, width) for _, _, vb, width in rs] == [(0, 3), (3, 1)] and {r[0] for r in rs} == {j // 4}
    assert len(cells(runs)) == 128
    whole = [j for j, (m, sg) in enumerate(runs) if sg[1] - m[1] == 15 - ms]
    assert [j % 4 for j in whole[:2]] == [0, 2]
    rec = G.recipe_for(WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"), bf16=bf16, out_bf16=bf16,
                       caps_cp_async=True, k8mma=False, target="sm_90a")
    assert rec.fields == runs
    assert G.recipe_for(WeightScheme("e4m3", "channel", scale_fmt="fp32"), bf16=bf16, out_bf16=bf16,
                        caps_cp_async=True, k8mma=False, target="sm_90a").fields is None
    v = torch.randint(0, 16, (32, 128), generator=torch.Generator().manual_seed(11 + ms))
    p = L.pack(v, 4, runs)
    assert torch.equal(L.unpack(p, 4, runs), v) and not torch.equal(p, L.pack(v, 4))
    lanes = p.reshape(-1, 4)
    text = "\n".join(" ".join(str(int(x) & 0xFFFFFFFF) for x in row) for row in lanes.tolist())
    src, exe = tmp_path / "f4.cpp", tmp_path / "f4"
    src.write_text(FLOAT4_PROGRAM)
    cxx = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    subprocess.run([cxx, "-std=c++17", "-O1", f"-I{INCLUDE}", str(src), "-o", str(exe)], check=True)
    out = [int(x) for x in subprocess.run([str(exe)], input=text, capture_output=True, text=True,
                                          check=True).stdout.split()]
    pos = torch.tensor(out[:16]).view(4, 4)[:, (2, 3) if bf16 else (0, 1)]
    assert pos.tolist() == [[runs[q][0][1], runs[q][1][1]] for q in range(4)]
    got = torch.tensor(out[16:]).view(-1, 2, 16, 2)[:, 1 if bf16 else 0].reshape(2, 2, 32, 16, 2)
    row, col = L._fragment_index("cpu")
    code = v.view(2, 16, 2, 64).permute(0, 2, 1, 3)[:, :, row, col]  # [NB, KB, lane, pair, elem]
    assert torch.equal(got, ((code & 7) << ms) | ((code & 8) << 12))
    e2m1 = get_format("e2m1")
    bits16 = got.to(torch.int16).view(torch.bfloat16 if bf16 else torch.float16).float()
    values = e2m1.decode(torch.arange(16)).float()
    assert torch.equal(bits16 * 2.0 ** ((127 if bf16 else 15) - e2m1.bias), values[code])


def test_scale_rows_pair_up_for_each_lane_group():
    """Layout v2: in every 16-row block of the [groups, Np] scale entries, rows g and
    g + 8 (the two rows lane group g of the MMA fragment holds) are adjacent, so the
    kernels read both with one aligned 4-byte (8 with zero points) load."""
    t = torch.arange(3 * 48, dtype=torch.int32).view(3, 48)  # entry = group * 48 + row
    p = L.pair_scale_rows(t)
    for blk in range(3):
        for g in range(8):
            assert torch.equal(p[:, blk * 16 + 2 * g], t[:, blk * 16 + g])
            assert torch.equal(p[:, blk * 16 + 2 * g + 1], t[:, blk * 16 + g + 8])
    assert torch.equal(L.unpair_scale_rows(p), t)
    with pytest.raises(ValueError, match="multiple of 16"):
        L.pair_scale_rows(torch.zeros(2, 24))


def test_packed_weight_stores_paired_scale_rows():
    from humming import reference as R
    from humming.scheme import WeightScheme
    from humming_nvidia import gemm_mma_sync as G

    qw = R.quantize(torch.randn(40, 256) * 0.02, WeightScheme("uint4", "group", 64, zero_point="int"))
    rec = G.recipe_for(qw.scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_80")
    pw = G.pack_weight(qw, rec, "cpu")
    assert pw.descriptor["version"] == L.LAYOUT_VERSION == 5 and pw.descriptor["fields"] is None
    sz = L.unpair_scale_rows(pw.sz)  # [groups, Np] of scale | zero << 16
    s16 = (sz & 0xFFFF).to(torch.int16).view(torch.float16).float()[:, :40].T * pw.out_mul
    z16 = ((sz >> 16) & 0xFFFF).to(torch.int16).view(torch.float16).float()[:, :40].T
    assert torch.allclose(s16, qw.scales.float(), rtol=1e-3)
    assert torch.equal(z16, qw.zeros.float())


@pytest.mark.parametrize("bf16", [False, True], ids=["fp16", "bf16"])
def test_float_codes_rebias_rides_on_the_group_scales(bf16):
    """e2m1 codes re-biased into a 16-bit float are 2^-(bias16 - 1) times their values (2^-14 in fp16, 2^-126 in
    bf16). The stored group scales carry that factor back, over the largest scale's power of two, so out_mul
    is the weight's own (finite: it was 2^133 in bf16 for scales up to 2^6) and stored scale x out_mul /
    factor is the scale, exactly."""
    from humming import reference as R
    from humming.scheme import WeightScheme
    from humming_nvidia import gemm_mma_sync as G

    g = torch.Generator().manual_seed(5)
    rows = 2.0 ** torch.randint(-12, 9, (40, 1), generator=g).double()  # (scales over 20 binades)
    qw = R.quantize((torch.randn(40, 256, generator=g) * rows).float(), WeightScheme("e2m1", "group", 32,
                                                                                     scale_fmt="e8m0"))
    rec = G.recipe_for(qw.scheme, bf16=bf16, out_bf16=bf16, caps_cp_async=True, k8mma=False, target="sm_80")
    pw = G.pack_weight(qw, rec, "cpu")
    factor = 2.0 ** ((127 if bf16 else 15) - 1)
    assert pw.out_mul == 2.0 ** math.frexp(float(qw.scales.max()))[1]
    dt = torch.bfloat16 if bf16 else torch.float16
    s16 = L.unpair_scale_rows(pw.sz).to(torch.int16).view(dt).double()[:, :40].T
    assert float(s16.abs().max()) < factor
    assert torch.equal(s16 * pw.out_mul / factor, qw.scales.double())


def test_output_multipliers_stay_in_fp32():
    """Without group scales the re-bias factor stays in out_mul (2^120 for e4m3 in bf16): with channel scales
    what leaves fp32 moves into them; a tensor scale that takes it past fp32 is refused, saying why."""
    from humming import reference as R
    from humming.errors import UnsupportedError
    from humming.scheme import WeightScheme
    from humming_nvidia import gemm_mma_sync as G

    w = torch.randn(40, 256) * 2.0 ** 17
    kw = dict(bf16=True, out_bf16=True, caps_cp_async=True, k8mma=False, target="sm_80")
    qc = R.quantize(w, WeightScheme("e4m3", "channel", scale_fmt="fp32"))  # (scales near 2^10)
    pc = G.pack_weight(qc, G.recipe_for(qc.scheme, **kw), "cpu")
    assert 2.0 ** -126 <= pc.out_mul < 2.0 ** 127 and bool(torch.isfinite(pc.chan).all())
    assert torch.allclose(pc.chan[:40].double() * pc.out_mul, qc.scales.double().reshape(-1) * 2.0 ** 120)
    qt = R.quantize(w, WeightScheme("e4m3", "tensor", scale_fmt="fp32"))
    with pytest.raises(UnsupportedError, match="leave fp32's range"):
        G.pack_weight(qt, G.recipe_for(qt.scheme, **kw), "cpu")


@pytest.mark.parametrize("bits", [1, 2, 4, 8])
def test_byte_operand_layout_is_the_m16n8k32_fragment(bits):
    """pack_bytes (int8 / fp8 MMA operands): byte i of register R = 4 kt + r of lane 4 g + t is
    W[g + 8 (r & 1), 32 kt + 4 t + 16 (r >> 1) + i] of its 16x128 block, register j of word q
    (R = 8/bits q + j) at bits 8 i + bits j; and DequantBytes' flip (shift the field to the top
    of each byte, mask, flip bit 7) gives (v - 2^(bits-1)) * 2^(8-bits) as int8."""
    from humming_nvidia import layout as L

    g = torch.Generator().manual_seed(bits)
    v = torch.randint(0, 1 << bits, (32, 256), generator=g)
    p = L.pack_bytes(v, bits)
    assert p.shape == (2, 2, 32, 2 * bits)
    assert torch.equal(L.unpack_bytes(p, bits), v)
    per = 8 // bits
    words = p.to(torch.int64) & 0xFFFFFFFF
    top = (((1 << bits) - 1) << (8 - bits)) * 0x01010101
    for nb, kb, lane, reg in [(0, 0, 0, 0), (1, 1, 31, 15), (0, 1, 6, 5), (1, 0, 13, 10)]:
        gi, t = lane // 4, lane % 4
        kt, r = reg // 4, reg % 4
        w = int(words[nb, kb, lane, reg // per])
        j = reg % per
        flipped = ((w << (8 - bits - bits * j)) & 0xFFFFFFFF & top) ^ 0x80808080
        for i in range(4):
            want = int(v[16 * nb + gi + 8 * (r & 1), 128 * kb + 32 * kt + 4 * t + 16 * (r >> 1) + i])
            assert (w >> (8 * i + bits * j)) & ((1 << bits) - 1) == want
            byte = (flipped >> (8 * i)) & 0xFF
            assert byte - 256 * (byte >= 128) == (want - (1 << (bits - 1))) * (1 << (8 - bits))


@pytest.mark.parametrize("bits", [1, 2, 4])
def test_byte_operand_pairs_order(bits):
    """pack_bytes(pairs=True) (integer codes made fp8 operands, DequantBytes::INT_FP8): the same registers with
    bytes 1 and 2 of every word swapped, so that a word's 16-bit halves hold codes 0, 2 (low bytes) and 1, 3
    (high bytes) of each of its registers -- the fp16 pairs the dequantizer makes are the register's codes 0, 1
    and 2, 3; and pack_weight stores int4 weights with e4m3 activations that way, saying so."""
    from humming import reference as R
    from humming.scheme import WeightScheme
    from humming_nvidia import gemm_mma_sync as G

    g = torch.Generator().manual_seed(10 + bits)
    v = torch.randint(0, 1 << bits, (32, 256), generator=g)
    plain = L.pack_bytes(v, bits).to(torch.int64) & 0xFFFFFFFF
    paired = L.pack_bytes(v, bits, pairs=True)
    assert torch.equal(L.unpack_bytes(paired, bits, pairs=True), v)
    b = [(plain >> (8 * i)) & 0xFF for i in range(4)]
    assert torch.equal(paired.to(torch.int64) & 0xFFFFFFFF, b[0] | b[2] << 8 | b[1] << 16 | b[3] << 24)
    qw = R.quantize(torch.randn(32, 256, generator=g), WeightScheme("int4", "group", 128))
    kw = dict(bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_89")
    fp8 = G.pack_weight(qw, G.recipe_for(qw.scheme, op8=2, **kw), "cpu")
    int8 = G.pack_weight(qw, G.recipe_for(qw.scheme, op8=1, **kw), "cpu")
    assert G.int_fp8(fp8.recipe) and not G.int_fp8(int8.recipe)
    assert fp8.descriptor["byte_order"] == "0213" and "byte_order" not in int8.descriptor
    w8 = int8.w.to(torch.int64) & 0xFFFFFFFF
    c = [(w8 >> (8 * i)) & 0xFF for i in range(4)]
    assert torch.equal(fp8.w.to(torch.int64) & 0xFFFFFFFF, c[0] | c[2] << 8 | c[1] << 16 | c[3] << 24)


def test_int4_codes_split_into_two_e4m3_operands():
    """The split of DequantBytes (INT_FP8_MODE 2), emulated on the packed words: register R of a word in order
    (Recipe.fp8_split: pack_weight keeps the bytes in order and says so) gives lo = (x & 0x07..) | 0x50.. and
    hi = (~x & 0x08..) | 0xd0.. per byte, x the word shifted by 4 (R % 2); as e4m3 values lo + hi is the code
    minus 8, exactly, for every register of every lane and every code."""
    from humming import reference as R
    from humming.errors import UnsupportedError
    from humming.scheme import WeightScheme
    from humming_nvidia import gemm_mma_sync as G

    g = torch.Generator().manual_seed(41)
    v = torch.randint(0, 16, (32, 256), generator=g)
    v[0, :16] = torch.arange(16)  # (every code)
    words = L.pack_bytes(v, 4).to(torch.int64) & 0xFFFFFFFF  # [N/16, K/128, 32 lanes, 8 words]
    e4m3 = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).float()
    seen = 0
    for reg in range(16):
        x = words[..., reg // 2] >> (4 * (reg % 2))
        lo = (x & 0x07070707) | 0x50505050
        hi = (~x & 0x08080808) | 0xD0D0D0D0
        for i in range(4):
            lo_b, hi_b = (lo >> (8 * i)) & 0xFF, (hi >> (8 * i)) & 0xFF
            code = (words[..., reg // 2] >> (8 * i + 4 * (reg % 2))) & 0xF
            assert torch.equal(e4m3[lo_b] + e4m3[hi_b], (code - 8).float())
            seen += code.numel()
    assert seen == v.numel()
    assert torch.equal(L.unpack_bytes(L.pack_bytes(v, 4), 4), v)  # (the codes are the registers' bytes in order)
    qw = R.quantize(torch.randn(32, 256, generator=g), WeightScheme("int4", "group", 128))
    kw = dict(bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_90a", op8=2)
    split = G.pack_weight(qw, G.recipe_for(qw.scheme, fp8_split=True, **kw), "cpu")
    pairs = G.pack_weight(qw, G.recipe_for(qw.scheme, **kw), "cpu")
    assert split.descriptor["byte_order"] == "0123" and pairs.descriptor["byte_order"] == "0213"
    assert G.fp8_pairs(pairs.recipe) and not G.fp8_pairs(split.recipe)
    w = pairs.w.to(torch.int64) & 0xFFFFFFFF
    b = [(w >> (8 * i)) & 0xFF for i in range(4)]
    assert torch.equal(split.w.to(torch.int64) & 0xFFFFFFFF, b[0] | b[2] << 8 | b[1] << 16 | b[3] << 24)
    assert G.recipe_for(WeightScheme("uint4", "group", 128), fp8_split=True, **kw).fp8_split  # (offset 8 implied)
    for scheme in (WeightScheme("uint4", "group", 128, zero_point="int"), WeightScheme("int2", "group", 128)):
        with pytest.raises(UnsupportedError, match="4-bit codes of offset 8 without zero points"):
            G.recipe_for(scheme, fp8_split=True, **kw)
    with pytest.raises(UnsupportedError, match="into e4m3 operands"):
        G.recipe_for(qw.scheme, fp8_split=True, **{**kw, "op8": 3})


def test_int4_operand_layout_is_the_m16n8k64_fragment():
    """pack_nibbles (int4 MMA operands): nibble e of register R = 4 kt + r of lane 4 g + t is
    W[g + 8 (r & 1), 64 kt + 8 t + 32 (r >> 1) + e] of its 16x256 block (mma.sync m16n8k64's A
    operand: the m16n8k32 fragment with each byte holding two consecutive-K codes), and
    pack_weight stores offset-binary codes flipped to two's complement (v - 8)."""
    from humming_nvidia import gemm_mma_sync as G
    from humming_nvidia import layout as L

    g = torch.Generator().manual_seed(4)
    v = torch.randint(0, 16, (32, 512), generator=g)
    p = L.pack_nibbles(v)
    assert p.shape == (2, 2, 32, 16)
    assert torch.equal(L.unpack_nibbles(p), v)
    words = p.to(torch.int64) & 0xFFFFFFFF
    for nb, kb, lane, reg in [(0, 0, 0, 0), (1, 1, 31, 15), (0, 1, 6, 5), (1, 0, 13, 10)]:
        gi, t = lane // 4, lane % 4
        kt, r = reg // 4, reg % 4
        for e in range(8):
            want = int(v[16 * nb + gi + 8 * (r & 1), 256 * kb + 64 * kt + 8 * t + 32 * (r >> 1) + e])
            assert (int(words[nb, kb, lane, reg]) >> (4 * e)) & 0xF == want
    with pytest.raises(ValueError, match="multiple of 16 and K=128 of 256"):
        L.pack_nibbles(torch.zeros(16, 128, dtype=torch.int64))
    # through pack_weight: GPTQ-style uint4 (offset 8) -> the nibbles of v - 8
    from humming import reference as R
    from humming.scheme import WeightScheme

    qw = R.quantize(torch.randn(20, 320, generator=g), WeightScheme("uint4", "group", 64))
    rec = G.recipe_for(qw.scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target="sm_80",
                       op8=4)
    pw = G.pack_weight(qw, rec, "cpu")
    assert rec.ku == 4 and pw.kp % 512 == 0 and pw.descriptor["operand"] == "int4" and pw.descriptor["block"] == "16x256"
    nib = L.unpack_nibbles(pw.w.view(pw.np_ // 16, pw.kp // 256, 32, 16))[:20, :320]
    signed = nib - 16 * (nib >= 8)
    assert torch.equal(signed, qw.codes.to(torch.int64) - 8)
