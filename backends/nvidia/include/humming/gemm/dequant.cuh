// humming/gemm/dequant.cuh -- weight codes -> 16-bit MMA operands.
//
// Two variants, chosen by the planner:
//   int_bittrick : integers of 1-8 bits. A pair of codes sits in the low bits of
//                  the two halves of a register (layout.cuh); OR-ing the exponent
//                  of 1024 (fp16, 0x6400) or 128 (bf16, 0x4300) makes each half
//                  exactly MAGIC + code, and one packed subtraction of
//                  MAGIC + offset (or MAGIC + zero point) leaves the signed value,
//                  exact. 8-bit codes in bf16 (7 mantissa bits) go through fp32.
//   float_rebias : signed float formats of at most 8 bits. Moving the sign to bit
//                  15 and the exponent-mantissa bits up to align the mantissas
//                  gives a 16-bit float equal to value * 2^(bias16 - bias); that
//                  constant factor is folded into the scales by the host.
// Then an optional per-group scale (and zero point) per row:
//   no zero point : w = t * s
//   int zero point: t = r - (MAGIC + z), w = t * s          (aux = MAGIC + z)
//   float zero pt : t = r - MAGIC,       w = fma(t, s, aux) (aux = -z * s)
#pragma once
#include "humming/gemm/layout.cuh"
#include "humming/gemm/ptx.cuh"

namespace humming {
namespace dequant {

enum ZeroPoint { kZpNone = 0, kZpInt = 1, kZpFloat = 2 };

// Cfg: BITS, WFLOAT, FEXP, FMAN, OFFSET, ZP, GSCALE, BF16.
template <typename Cfg>
struct Dequant {
  static constexpr bool BF16 = Cfg::BF16;
  static constexpr int BITS = Cfg::BITS;
  static constexpr u32 MAGIC = BF16 ? 0x4300u : 0x6400u;  // 128.0 / 1024.0
  static constexpr bool VIA_FP32 = !Cfg::WFLOAT && BF16 && BITS == 8;
  static_assert(Cfg::WFLOAT || BITS <= 8, "integers of at most 8 bits");
  static_assert(!Cfg::WFLOAT || (Cfg::FEXP <= (BF16 ? 8 : 5) && Cfg::FMAN <= (BF16 ? 7 : 10)),
                "float weights must fit the 16-bit compute type's exponent and mantissa");

  // Pair J -> one A register (both halves), given the row's scale `s` and
  // auxiliary word `aux` (both 16-bit pairs, same value in both halves).
  template <int J>
  static HUMMING_DEVICE u32 pair(const u32 (&w)[BITS], u32 s, u32 aux) {
    const u32 x = layout::extract_pair<BITS, J>(w);
    if constexpr (Cfg::WFLOAT) {
      constexpr u32 MAG = ((1u << (BITS - 1)) - 1u) * 0x00010001u;
      constexpr u32 SIGN = (1u << (BITS - 1)) * 0x00010001u;
      constexpr int MSHIFT = (BF16 ? 7 : 10) - Cfg::FMAN;
      const u32 r = ((x & MAG) << MSHIFT) | ((x & SIGN) << (16 - BITS));
      if constexpr (Cfg::GSCALE) return ptx::hmul2<BF16>(r, s);
      else return r;
    } else if constexpr (VIA_FP32) {
      // exact integer -> fp32 by the 2^23 trick, then one rounding to bf16
      const float lo = __uint_as_float(0x4b000000u | (x & 0xffu)) - 8388608.0f;
      const float hi = __uint_as_float(0x4b000000u | (x >> 16)) - 8388608.0f;
      const float sf = bf16_to_float(static_cast<u16>(s));
      const float af = bf16_to_float(static_cast<u16>(aux));
      float a, b;
      if constexpr (Cfg::ZP == kZpNone) {
        a = (lo - float(Cfg::OFFSET)) * (Cfg::GSCALE ? sf : 1.0f);
        b = (hi - float(Cfg::OFFSET)) * (Cfg::GSCALE ? sf : 1.0f);
      } else if constexpr (Cfg::ZP == kZpInt) {  // aux = z
        a = (lo - af) * sf;
        b = (hi - af) * sf;
      } else {  // aux = -z * s
        a = fmaf(lo, sf, af);
        b = fmaf(hi, sf, af);
      }
      return ptx::pack2<true>(a, b);
    } else {
      const u32 r = x | (MAGIC * 0x00010001u);
      if constexpr (Cfg::ZP == kZpNone) {
        constexpr u32 SUB = (MAGIC + Cfg::OFFSET) * 0x00010001u;  // exact: OFFSET < 128
        const u32 t = ptx::hsub2<BF16>(r, SUB);
        if constexpr (Cfg::GSCALE) return ptx::hmul2<BF16>(t, s);
        else return t;
      } else if constexpr (Cfg::ZP == kZpInt) {
        return ptx::hmul2<BF16>(ptx::hsub2<BF16>(r, aux), s);
      } else {
        const u32 t = ptx::hsub2<BF16>(r, MAGIC * 0x00010001u);
        return ptx::hfma2<BF16>(t, s, aux);
      }
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

}  // namespace dequant
}  // namespace humming
