// humming/gemm/dequant.cuh -- weight codes -> MMA operands: 16-bit ones (below) and byte ones
// (int8, fp8, int4: DequantBytes, further down).
//
// Three 16-bit variants, chosen by the planner:
//   int_bittrick : integers of 1-8 bits. A pair of codes sits in the two 16-bit
//                  halves of a register (layout.cuh). OR-ing the exponent of
//                  MAGIC (1024 in fp16: 0x6400, 128 in bf16: 0x4300) onto a field
//                  v * 2^pos that fits the mantissa makes each half exactly
//                  MAGIC + v * 2^pos; one packed fma with 2^-pos and
//                  -(MAGIC * 2^-pos + offset) (a subtraction when pos = 0) then
//                  leaves v - offset, exact. Fields are taken in place while they
//                  fit the mantissa, so most pairs cost one LOP3 and one packed
//                  op; power-of-two widths come from one plane, 3-bit fields
//                  are whole in their words (layout v4: one LOP3 per pair, two shifts
//                  per word), 5/6/7 bits are gathered from their planes. 8-bit codes in bf16 (7 mantissa
//                  bits) go through fp32.
//   float_rebias : signed float formats of at most 8 bits. Moving the sign to bit
//                  15 and the exponent-mantissa bits up to align the mantissas
//                  gives a 16-bit float equal to value * 2^(bias16 - bias); the
//                  host folds that constant into the scales. e2m1 codes (layout v5)
//                  are stored as magnitude and sign fields placed for this: 11
//                  operations per four pairs where nibbles took 15.
//   native_cvt   : e4m3 codes into fp16 where the chip converts them in one
//                  instruction (sm_89 on): a PRMT and a cvt per pair, no factor. (The
//                  code takes e5m2 too; the host keeps those re-biased, which is cheaper.)
// Zero points (aux = z, exact for integers, rounded to 16 bits for float zero
// points) are subtracted from v; then, unless the kernel applies the group
// scales to its fp32 accumulators, the row's scale multiplies: w = (v - z) * s.
#pragma once
#include "humming/gemm/layout.cuh"
#include "humming/gemm/ptx.cuh"

namespace humming {
namespace dequant {

enum ZeroPoint { kZpNone = 0, kZpInt = 1, kZpFloat = 2 };

// Bits of an exactly representable fp16 / bf16 number (normal, power-of-two
// scaled small integers only: what the constants below need).
HUMMING_HD constexpr u32 f16_bits(double v, bool bf16) {
  const bool neg = v < 0;
  double a = neg ? -v : v;
  if (a == 0) return neg ? 0x8000u : 0u;
  int e = 0;
  while (a >= 2.0) a /= 2.0, ++e;
  while (a < 1.0) a *= 2.0, --e;
  const int man_bits = bf16 ? 7 : 10, bias = bf16 ? 127 : 15;
  const u32 man = static_cast<u32>((a - 1.0) * (1 << man_bits) + 0.5);
  return (neg ? 0x8000u : 0u) | (static_cast<u32>(e + bias) << man_bits) | man;
}
HUMMING_HD constexpr u32 f16x2_bits(double v, bool bf16) { return f16_bits(v, bf16) * 0x00010001u; }

// Cfg: BITS, WFLOAT, FEXP, FMAN, FCVT, OFFSET, ZP, BF16; SCALE_W: scales applied here.
template <typename Cfg, bool SCALE_W>
struct Dequant {
  static constexpr bool BF16 = Cfg::BF16;
  static constexpr int BITS = Cfg::BITS;
  static constexpr u32 MAGIC = BF16 ? 0x4300u : 0x6400u;  // 128.0 / 1024.0
  static constexpr double MAGIC_F = BF16 ? 128.0 : 1024.0;
  static constexpr int MANT = BF16 ? 7 : 10;
  static constexpr bool VIA_FP32 = !Cfg::WFLOAT && BF16 && BITS == 8;
  static constexpr bool ONE_PLANE = layout::num_planes(BITS) == 1;
  // native_cvt (Cfg::FCVT): e4m3 / e5m2 codes into fp16 by the hardware conversion (sm_89+)
  static constexpr bool FCVT = Cfg::FCVT;
  static_assert(!FCVT || (Cfg::WFLOAT && BITS == 8 && !BF16 && Cfg::FEXP + Cfg::FMAN == 7 &&
                          (Cfg::FEXP == 4 || Cfg::FEXP == 5)),
                "the hardware conversion takes e4m3 / e5m2 codes into fp16");
  static_assert(Cfg::WFLOAT || BITS <= 8, "integers of at most 8 bits");
  static_assert(!Cfg::WFLOAT || (Cfg::FEXP <= (BF16 ? 8 : 5) && Cfg::FMAN <= MANT),
                "float weights must fit the 16-bit compute type's exponent and mantissa");

  // 3-bit pair J as MAGIC + v * 2^sub_at(J) in each half (layout.cuh's word3 / pos3; pair 15 from the
  // spare bits of the three words)
  template <int J>
  static HUMMING_DEVICE u32 code3(const u32 (&w)[BITS]) {
    constexpr u32 M2 = MAGIC * 0x00010001u, H = 0x00010001u;
    constexpr int sub = sub_at(J);
    if constexpr (J < 15) {
      constexpr int sh = layout::pos3(J) - sub;
      static_assert(sh >= 0, "3-bit fields move down");
      const u32 src = sh ? (w[layout::word3(J)] >> sh) : w[layout::word3(J)];
      return ptx::and_or(src, (7u << sub) * H, M2);
    } else {  // (layout::field3<15, sub> | M2 as three LOP3s: left to itself ptxas takes four, 413 -> 415 per loop)
      const u32 t = ptx::and_or(w[1] >> (14 - sub), (2u << sub) * H, M2);
      return ptx::and_or(w[0] >> (15 - sub), (1u << sub) * H, ptx::and_or(w[2] >> (13 - sub), (4u << sub) * H, t));
    }
  }

  // ---- integers: MAGIC + v * 2^pos in each half, then v - offset (or v - z)
  template <int J>
  static HUMMING_DEVICE u32 int_pair(const u32 (&w)[BITS]) {
    constexpr u32 M2 = MAGIC * 0x00010001u;
    if constexpr (ONE_PLANE) {
      constexpr int P = BITS, PER_WORD = 16 / P;
      constexpr int FIT = (MANT / P) * P;  // bits of a half usable in place
      constexpr int pos = P * (J % PER_WORD);
      constexpr int seg = pos / FIT, sub = pos % FIT;
      constexpr u32 MASK = (((1u << P) - 1u) << sub) * 0x00010001u;
      const u32 src = seg ? (w[J / PER_WORD] >> (seg * FIT)) : w[J / PER_WORD];
      const u32 r = ptx::and_or(src, MASK, M2);  // MAGIC + v * 2^sub
      if constexpr (Cfg::ZP == kZpNone) {
        if constexpr (sub == 0) return ptx::hsub2<BF16>(r, f16x2_bits(MAGIC_F + Cfg::OFFSET, BF16));
        else return ptx::hfma2<BF16>(r, f16x2_bits(1.0 / (1 << sub), BF16),
                                     f16x2_bits(-(MAGIC_F / (1 << sub) + Cfg::OFFSET), BF16));
      } else {
        u32 v;
        if constexpr (sub == 0) v = ptx::hsub2<BF16>(r, M2);
        else v = ptx::hfma2<BF16>(r, f16x2_bits(1.0 / (1 << sub), BF16), f16x2_bits(-MAGIC_F / (1 << sub), BF16));
        return v;  // caller subtracts the zero point
      }
    } else if constexpr (BITS == 3) {
      // whole 3-bit fields (layout.cuh, v4): pair J's at bit 3 (J & 1) of each half after its word's shift
      // (shared by the pairs of the word that take it), one LOP3 (pair 15: three)
      constexpr int sub = sub_at(J);
      const u32 r = code3<J>(w);  // MAGIC + v * 2^sub
      constexpr double off = Cfg::ZP == kZpNone ? Cfg::OFFSET : 0;  // (zero points: the caller subtracts)
      if constexpr (sub == 0) return ptx::hsub2<BF16>(r, f16x2_bits(MAGIC_F + off, BF16));
      else return ptx::hfma2<BF16>(r, f16x2_bits(1.0 / (1 << sub), BF16), f16x2_bits(-(MAGIC_F / (1 << sub) + off), BF16));
    } else {
      const u32 r = layout::extract_pair<BITS, J>(w) | M2;
      if constexpr (Cfg::ZP == kZpNone) return ptx::hsub2<BF16>(r, f16x2_bits(MAGIC_F + Cfg::OFFSET, BF16));
      else return ptx::hsub2<BF16>(r, M2);
    }
  }

  // ---- raw integer codes: MAGIC + v * 2^sub in each half and nothing else (one
  // LOP3 per pair in place, after a shift shared by the pairs of a segment or
  // word). The caller takes MAGIC + offset (or + z) out of the fp32 sums (the
  // register-streaming kernel does it with an MMA on a constant operand) and
  // multiplies by 2^-sub there, so sub may depend only on the row half of the
  // pair (registers 0, 2: rows g; 1, 3: rows g+8): sub_at(j) = RAW_SUB1 * (j & 1).
  //  * 4-bit codes (fp16) sit at 0 / 4 by row half, 8-bit ones at 0.
  //  * 3-bit codes (layout v4: whole fields, five per half) at 0 / 3, in fp16 and
  //    bf16 alike. (v3's 2-bit and 1-bit planes took two LOP3s per pair and a
  //    k-half factor on the activations, one HMUL2 per k16 tile; before that the
  //    planes' fields were gathered to bit 0, three shifts and three logic ops per
  //    pair.)
  //  * 5-7-bit codes are gathered to bit 0.
  //  * 1- and 2-bit codes are raw only where the kernel's correction costs one MMA per 128 columns
  //    (RAW_ONE_OK: a ring's one-token loop, one_corr_cols); dequantized in place (a packed fma per
  //    pair) they cost fewer instructions than a correction MMA per k16 tile (H200, int2 g128 M=1:
  //    9.83 against 9.70 us on 8192x8192). They take no factor: register r of a k16 tile (r = J % 4)
  //    has its field at raw_pos(r) = min(BITS r, MANT - BITS) in each half and, OR-ed on, the
  //    exponent of raw_magic(r) = 2^(MANT - raw_pos(r)), whose mantissa step is 1: the half is
  //    raw_magic(r) + v exactly. The tiles of a word share those places, so one shift serves a
  //    tile (2-bit fp16: one per word; 1-bit: three) where a factor per row half took three
  //    (2-bit) and seven (1-bit); the correction operand then differs per register (k half too:
  //    one_corr_cols, not one_sums). (At 0 / 2 by row half the fp16 2-bit loop took 24 SHF per
  //    ring turn beside its 64 LOP3s, 8 now: int2 per channel 4-6 % faster at M=1 on the H200, g128
  //    unchanged; the fp32 sums carry less of the magic numbers.)
  static constexpr bool FIELD_MAGIC = !Cfg::WFLOAT && ONE_PLANE && BITS <= 2;
  static constexpr int RAW_SUB1 =
      BITS == 3 ? 3 : (ONE_PLANE && !FIELD_MAGIC && MANT / BITS * BITS > BITS ? BITS % (MANT / BITS * BITS) : 0);
  static HUMMING_HD constexpr int sub_at(int j) { return RAW_SUB1 * (j & 1); }
  // register r's field place and magic number (MAGIC, with the factor 2^sub_at(r), where not FIELD_MAGIC)
  static HUMMING_HD constexpr int raw_pos(int r) {
    return FIELD_MAGIC ? (BITS * r < MANT - BITS ? BITS * r : MANT - BITS) : sub_at(r);
  }
  static HUMMING_HD constexpr double raw_magic(int r) {
    return FIELD_MAGIC ? double(1 << (MANT - raw_pos(r))) : MAGIC_F;
  }
  static constexpr bool RAW_ANY = !Cfg::WFLOAT && !VIA_FP32 && Cfg::ZP != kZpFloat;
  static constexpr bool RAW_OK = RAW_ANY && !(ONE_PLANE && BITS <= 2);
  static constexpr bool RAW_ONE_OK = RAW_ANY && ONE_PLANE && BITS <= 2;
  static_assert(!RAW_ANY || raw_pos(3) + BITS <= MANT, "raw fields fit the mantissa");
  static constexpr int SUB0 = sub_at(0), SUB1 = sub_at(1);  // rows g, rows g+8

  template <int J>
  static HUMMING_DEVICE u32 raw_pair(const u32 (&w)[BITS]) {
    if constexpr (ONE_PLANE) {
      constexpr int P = BITS, PER_WORD = 16 / P, pos = raw_pos(J & 3);
      constexpr int shift = P * (J % PER_WORD) - pos;  // the field's place in its half, down to pos
      static_assert(shift >= 0, "raw fields move down");
      constexpr u32 MASK = (((1u << P) - 1u) << pos) * 0x00010001u, MG = f16x2_bits(raw_magic(J & 3), BF16);
      const u32 src = shift ? (w[J / PER_WORD] >> shift) : w[J / PER_WORD];
      return ptx::and_or(src, MASK, MG);
    } else if constexpr (BITS == 3) {
      return code3<J>(w);
    } else {
      static_assert(sub_at(J) == 0, "codes gathered from planes land at bit 0");
      return layout::extract_pair<BITS, J>(w) | (MAGIC * 0x00010001u);
    }
  }
  template <int KT>
  static HUMMING_DEVICE void tile_raw(const u32 (&w)[BITS], u32 (&a)[4]) {
    a[0] = raw_pair<4 * KT + 0>(w);
    a[1] = raw_pair<4 * KT + 1>(w);
    a[2] = raw_pair<4 * KT + 2>(w);
    a[3] = raw_pair<4 * KT + 3>(w);
  }

  // Pair J -> one A register (both halves), given the row's scale `s` and
  // auxiliary word `aux` (both 16-bit pairs, same value in both halves).
  template <int J>
  static HUMMING_DEVICE u32 pair(const u32 (&w)[BITS], u32 s, u32 aux) {
    if constexpr (Cfg::WFLOAT && FCVT) {
      // native_cvt: bytes J & 1 and 2 + (J & 1) of word J / 2 side by side (one PRMT),
      // then the hardware conversion: the value itself, no re-bias factor
      const u32 r = ptx::fp8x2_to_f16x2<Cfg::FEXP == 4>(ptx::prmt<(J & 1) ? 0x31u : 0x20u>(w[J / 2], 0u));
      if constexpr (SCALE_W) return ptx::hmul2<BF16>(r, s);
      else return r;
    } else if constexpr (Cfg::WFLOAT) {
      constexpr int MSHIFT = MANT - Cfg::FMAN;
      u32 r;
      if constexpr (layout::float4_fields(BITS, MSHIFT)) {  // (v5: magnitude and sign fields, a shift each)
        r = layout::float4_pair<J, MSHIFT>(w);
      } else {
        const u32 x = layout::extract_pair<BITS, J>(w);
        constexpr u32 MAG = ((1u << (BITS - 1)) - 1u) * 0x00010001u;
        constexpr u32 SIGN = (1u << (BITS - 1)) * 0x00010001u;
        r = ((x & MAG) << MSHIFT) | ((x & SIGN) << (16 - BITS));
      }
      if constexpr (SCALE_W) return ptx::hmul2<BF16>(r, s);
      else return r;
    } else if constexpr (VIA_FP32) {
      // exact integer -> fp32 by the 2^23 trick, then one rounding to bf16
      const u32 x = layout::extract_pair<BITS, J>(w);
      const float sub = Cfg::ZP ? bf16_to_float(static_cast<u16>(aux)) : float(Cfg::OFFSET);
      float a = (__uint_as_float(0x4b000000u | (x & 0xffu)) - 8388608.0f) - sub;
      float b = (__uint_as_float(0x4b000000u | (x >> 16)) - 8388608.0f) - sub;
      if constexpr (SCALE_W) {
        const float sf = bf16_to_float(static_cast<u16>(s));
        a *= sf;
        b *= sf;
      }
      return ptx::pack2<true>(a, b);
    } else {
      u32 t = int_pair<J>(w);  // v - offset, or v when there are zero points
      if constexpr (Cfg::ZP != kZpNone) t = ptx::hsub2<BF16>(t, aux);  // aux = z
      if constexpr (SCALE_W) return ptx::hmul2<BF16>(t, s);
      else return t;
    }
  }

  // The four A registers of k16 tile KT; s0/aux0 belong to row g, s1/aux1 to row g+8.
  template <int KT>
  static HUMMING_DEVICE void tile(const u32 (&w)[BITS], u32 (&a)[4], u32 s0, u32 s1, u32 aux0, u32 aux1) {
    a[0] = pair<4 * KT + 0>(w, s0, aux0);
    a[1] = pair<4 * KT + 1>(w, s1, aux1);
    a[2] = pair<4 * KT + 2>(w, s0, aux0);
    a[3] = pair<4 * KT + 3>(w, s1, aux1);
  }
};

HUMMING_CFG_FIELD_OR_ZERO(IntFp8ModeOf, INT_FP8_MODE)  // (DequantBytes::MODE)

// ---- byte operands (int8 and fp8 MMA, m16n8k32; layout.cuh, byte operand).
// Register R (k32 tile R / 4, fragment register R % 4) of a lane's block holds
// four consecutive-K codes; a word holds 8 / BITS registers, register j of a word
// taking bits 8 i + BITS j of it as its byte i. So
//   offset binary (signed codes, or an implicit offset of 2^(BITS-1)), no zero
//   point: shift the field to the top of each byte, mask, flip bit 7: one LOP3
//   (and a shift) per register gives (v - 2^(BITS-1)) * 2^(8-BITS), exact; the
//   host multiplies the output by 2^(BITS-8);
//   integer zero points (or another constant offset): the field at the bottom of
//   each byte, then (v + 128 - z) ^ 0x80 = v - z per byte (no carries: 0 <= v + 128 - z < 256);
//   fp8 weights with fp8 activations: the codes as they are;
//   integer codes of at most 4 bits with fp8 activations (OP8 2 / 3, W4A8-FP8): the host swaps
//   bytes 1 and 2 of every word, so bytes 0, 2 and 1, 3 of a word hold a register's codes 0, 1
//   and 2, 3; each such pair of fields becomes an fp16 pair by the magic number (the field in
//   place OR-ed onto 1024, then one packed sub or fma: v - offset, exact) and one F2FP takes it
//   into two fp8 codes (exact: small integers): six instructions per register and a shared shift;
//   integer zero points subtract the row's 1024 + z, made from zc.
// Power-of-two widths only (1, 2, 4, 8); the host refuses the rest.
// int4 operands (OP8 == 4, m16n8k64): word R is register R itself, eight two's-complement
// nibbles (the host flips offset-binary codes when it packs them): nothing to do here.
template <typename Cfg>
struct DequantBytes {
  static constexpr int P = Cfg::BITS;
  static constexpr bool NIBBLES = Cfg::OP8 == 4;  // int4 operands: the host stores the registers themselves
  static constexpr int PER = NIBBLES ? 1 : 8 / P;  // registers per word
  static constexpr int WORDS = NIBBLES ? 16 : 2 * P;
  static_assert(!NIBBLES || (P == 4 && !Cfg::WFLOAT && Cfg::ZP == kZpNone),
                "int4 operands are 4-bit integer codes without zero points (two's complement nibbles)");
  static_assert(P == 1 || P == 2 || P == 4 || P == 8, "byte operands from 1, 2, 4 or 8-bit codes");
  static_assert(!Cfg::WFLOAT || (P == 8 && Cfg::ZP == kZpNone), "fp8 operands are the 8-bit codes themselves");
  // integer codes made fp8 operands (W4A8-FP8)
  static constexpr bool INT_FP8 = (Cfg::OP8 == 2 || Cfg::OP8 == 3) && !Cfg::WFLOAT;
  // (that v - offset or v - z is exact in the fp8 type -- |.| <= 16 for e4m3, 8 for e5m2 -- is the host's check)
  static_assert(!INT_FP8 || (P <= 4 && Cfg::ZP != kZpFloat), "fp8 operands from integer codes of at most 4 bits, "
                "without float zero points");
  static_assert(Cfg::ZP != kZpFloat, "no float zero points on integer MMA operands");
  // How integer codes become fp8 operands (INT_FP8; Cfg::INT_FP8_MODE):
  //   0: words with bytes 1 and 2 swapped (the host's default for them), each pair of codes through an fp16
  //      pair and an F2FP (reg);
  //   1: words in order (the layout of mode 2), a PRMT per word swapping bytes 1 and 2, then as 0;
  //   2: 4-bit codes of offset 8 without zero points into e4m3 (SPLIT): two operands per register, one LOP3
  //      each and no conversion, lo = 8 + (v & 7) (exponent 3, the low bits as the mantissa) and
  //      hi = 8 (v >> 3) - 16 (-16 or -8: the top bit picks the exponent), so lo + hi = v - 8, exactly; the
  //      kernel issues an MMA for each into the same sums (reg2, tile2).
  static constexpr int MODE = IntFp8ModeOf<Cfg>::value;
  static constexpr bool SPLIT = INT_FP8 && MODE == 2;
  static_assert(MODE == 0 || (INT_FP8 && MODE == 1) ||
                    (SPLIT && P == 4 && Cfg::OP8 == 2 && Cfg::ZP == kZpNone && Cfg::OFFSET == 8),
                "INT_FP8_MODE 1: integer codes made fp8 operands; 2: 4-bit codes of offset 8 into e4m3");
  static constexpr bool FLIP = !Cfg::WFLOAT && Cfg::ZP == kZpNone && Cfg::OFFSET == (1 << (P - 1));
  // zc: the row's zero-point word, (128 - z) in both 16-bit halves (ZP), else unused
  template <int R>
  static HUMMING_DEVICE u32 reg(const u32 (&w)[WORDS], u32 zc) {
    static_assert(!SPLIT, "SPLIT: two operands per register (reg2)");
    constexpr int J = R % PER;
    // (mode 1: one PRMT per word, shared by its registers)
    const u32 x = INT_FP8 && MODE == 1 ? ptx::prmt<0x3120>(w[R / PER], 0u) : w[R / PER];
    if constexpr (INT_FP8) {
      // (bytes 1 and 2 of the word swapped: bytes 0, 2 hold the register's first two codes)
      constexpr int SH = P * J;
      constexpr u32 MAGIC2 = 0x64006400u;  // (1024 in fp16)
      u32 v01, v23;  // v - offset (or v - z), exact
      if constexpr (Cfg::ZP) {
        // the row's integer zero point: zc holds 128 - z in both halves, so fp16 1024 + z is 0x6480 - (128 - z);
        // the field goes down to bit 0 first (a shift for J > 0)
        constexpr u32 MASK0 = ((1u << P) - 1u) * 0x00010001u;
        const u32 base = 0x64806480u - (zc & 0x00ff00ffu);
        v01 = ptx::hsub2<false>(ptx::lop3<0xea>(SH ? x >> SH : x, MASK0, MAGIC2), base);
        v23 = ptx::hsub2<false>(ptx::lop3<0xea>(x >> (SH + 8), MASK0, MAGIC2), base);
      } else {
        // the field in place: 1024 + v 2^SH per half ((a & b) | c)
        constexpr u32 MASK = (((1u << P) - 1u) << SH) * 0x00010001u;
        const u32 h01 = ptx::lop3<0xea>(x, MASK, MAGIC2), h23 = ptx::lop3<0xea>(x >> 8, MASK, MAGIC2);
        if constexpr (SH == 0) {
          constexpr u32 BASE = f16x2_bits(1024.0 + Cfg::OFFSET, false);
          v01 = ptx::hsub2<false>(h01, BASE);
          v23 = ptx::hsub2<false>(h23, BASE);
        } else {
          constexpr u32 MUL = f16x2_bits(1.0 / (1 << SH), false);
          constexpr u32 ADD = f16x2_bits(-(1024.0 / (1 << SH) + Cfg::OFFSET), false);
          v01 = ptx::hfma2<false>(h01, MUL, ADD);
          v23 = ptx::hfma2<false>(h23, MUL, ADD);
        }
      }
      return ptx::f16x2x2_to_fp8x4<Cfg::OP8 == 2>(v01, v23);
    } else if constexpr (NIBBLES || Cfg::WFLOAT || (FLIP && P == 8)) {
      // (8-bit integers: the host stores two's complement)
      return x;
    } else if constexpr (FLIP) {
      constexpr int SH = 8 - P - P * J;
      constexpr u32 TOP = (((1u << P) - 1u) << (8 - P)) * 0x01010101u;
      // one LOP3, (a & b) ^ c, with the bit-7 constant in a register (SASS takes one immediate:
      // left to itself ptxas splits this into an AND and an XOR)
      return ptx::lop3<0x6a>(SH ? x << SH : x, TOP, 0x80808080u);
    } else {
      constexpr u32 LOW = ((1u << P) - 1u) * 0x01010101u;
      const u32 c = Cfg::ZP ? (zc & 0xffu) * 0x01010101u : static_cast<u32>(128 - Cfg::OFFSET) * 0x01010101u;
      return ptx::lop3<0x3c>(ptx::lop3<0xc0>(J ? x >> (P * J) : x, LOW, 0u) + c, 0x80808080u, 0u);
    }
  }
  // SPLIT: register R's two e4m3 operands (words in order: the register's codes at bits 4 J of each byte)
  template <int R>
  static HUMMING_DEVICE void reg2(const u32 (&w)[WORDS], u32& lo, u32& hi) {
    static_assert(SPLIT, "reg2: INT_FP8_MODE 2");
    constexpr int J = R % PER;
    const u32 x = J ? w[R / PER] >> (P * J) : w[R / PER];
    lo = ptx::lop3<0xea>(x, 0x07070707u, 0x50505050u);  // (a & b) | c: e4m3 0x50 | l = 8 + l
    hi = ptx::lop3<0xae>(x, 0x08080808u, 0xd0d0d0d0u);  // (~a & b) | c: e4m3 0xd8 = -16 (h = 0), 0xd0 = -8
  }
  // SPLIT: the two operand sets of k32 tile KT (as tile's registers), a + b = the codes minus 8
  template <int KT>
  static HUMMING_DEVICE void tile2(const u32 (&w)[WORDS], u32 (&a)[4], u32 (&b)[4]) {
    reg2<4 * KT + 0>(w, a[0], b[0]);
    reg2<4 * KT + 1>(w, a[1], b[1]);
    reg2<4 * KT + 2>(w, a[2], b[2]);
    reg2<4 * KT + 3>(w, a[3], b[3]);
  }
  // the four A registers of k32 tile KT: registers 0, 2 are rows g (z0), 1, 3 rows g + 8 (z1)
  template <int KT>
  static HUMMING_DEVICE void tile(const u32 (&w)[WORDS], u32 (&a)[4], u32 z0, u32 z1) {
    a[0] = reg<4 * KT + 0>(w, z0);
    a[1] = reg<4 * KT + 1>(w, z1);
    a[2] = reg<4 * KT + 2>(w, z0);
    a[3] = reg<4 * KT + 3>(w, z1);
  }
};

}  // namespace dequant
}  // namespace humming
