// humming/kernels/act_quant.cuh -- quantize fp16/bf16 activations [M, K].
//
// Modes (C::MODE): 0 static_tensor (one given scale, read from device memory),
// 1 dynamic_token (one scale per row), 2 dynamic_group (one per row and GROUP
// elements). A dynamic scale is absmax / QMAX in fp32, or 1 when the absmax is
// 0. Codes are encode(x / scale): IEEE division (div_rn), round to nearest even,
// saturation to the format's finite range.
//
// Output formats: 8-bit codes (int8, e4m3, e5m2), or 4-bit codes (int4, e2m1)
// packed two per byte, the even element in the low nibble. Floats use the
// native sm_89+ cvt for e4m3/e5m2 unless C::SOFT_CVT, else the bit-exact
// software encoder of common.cuh. C::OUT16 (1 fp16, 2 bf16): the codes' values
// instead, as 16-bit floats, for GEMMs on 16-bit operands. Token and static
// scales stay apart (the values are exact); dynamic_group folds each group's
// scale into its values over a per-row power of two t >= every group scale of
// the row (written as the row's scale, so x = value * t): values stay within
// the format's range, and are exact where code x scale / t is (e2m1 or e4m3
// codes with e4m3 or e8m0 scales), else rounded once to 16 bits.
//
// Scales are rounded up into their storage format when C::SC_EXP != 0 (e4m3,
// e8m0, fp16, bf16: SC_EXP/SC_MAN/SC_BIAS, saturating at SC_MAX), as the
// reference does.
//
// Work split: a team of ROW_THREADS threads (a warp, or the whole block) owns a
// row. Rows are read with 16-byte loads; any K works: elements before the first
// 16-byte boundary and after the last full vector are done one by one
// (token/static), and rows that are not aligned fall back to narrow accesses.
//
// Config (struct C): THREADS, IN_BF16, MODE, GROUP, OUT_BITS, OUT_FLOAT, EXP,
// MAN, BIAS, QMIN, QMAX, SOFT_CVT, ROW_THREADS, OUT16, SC_EXP, SC_MAN, SC_BIAS,
// SC_MAX.
#pragma once

#include "humming/common.cuh"
#include "humming/gemm/ptx.cuh"

namespace humming {

struct ActQuantParams {
  const void* x;  // [m, k] fp16 or bf16; row stride ld_x elements
  void* q;        // codes [m, k] (8-bit) or [m, k / 2] (4-bit), or 16-bit values [m, k]; row stride ld_q bytes
  float* scales;  // token: [m] stride ld_s; group: row r's group g at r * ld_s + g * ld_g; static: [1], read
  int m;
  int k;
  long long ld_x;
  long long ld_q;
  long long ld_s;
  long long ld_g;  // group codes: 1 for [m, k / GROUP] (ld_s = k / GROUP); [k / GROUP, ld_g] by group: ld_s = 1
};

namespace act_quant_detail {

enum Mode : int { kStatic = 0, kToken = 1, kGroup = 2 };

// output bytes per two elements: 16-bit values, 8-bit codes, packed 4-bit codes
template <class C>
constexpr int kPairBytes = C::OUT16 ? 4 : C::OUT_BITS == 8 ? 2 : 1;

// where element e (even for packed codes) of an output row starts
template <class C>
HUMMING_DEVICE u8* out_at(u8* row, int e) {
  return row + e * kPairBytes<C> / 2;
}

// a dynamic scale: absmax / QMAX (1 when the absmax is 0), rounded up into its storage format
template <class C>
HUMMING_DEVICE float dynamic_scale(float amax) {
  return amax > 0.f ? round_up_scale<C::SC_EXP, C::SC_MAN, C::SC_BIAS>(div_rn(amax, C::QMAX), C::SC_MAX) : 1.f;
}

template <class C>
HUMMING_DEVICE u32 encode1(float v) {
  if constexpr (C::OUT_FLOAT) return encode_small_float<C::EXP, C::MAN, C::BIAS>(v, C::QMAX);
  else return encode_int<C::OUT_BITS>(v, C::QMIN, C::QMAX);
}

// Two codes, the first in the low bits (16 bits for 8-bit codes, 8 for 4-bit).
template <class C>
HUMMING_DEVICE u32 encode2(float lo, float hi) {
#if HUMMING_HAS_CVT_FP8
  if constexpr (C::OUT_FLOAT && !C::SOFT_CVT && C::OUT_BITS == 8) {
    if constexpr (C::EXP == 4 && C::MAN == 3 && C::BIAS == 7 && C::QMAX == 448.0f) return cvt_e4m3x2(lo, hi);
    if constexpr (C::EXP == 5 && C::MAN == 2 && C::BIAS == 15 && C::QMAX == 57344.0f) return cvt_e5m2x2(lo, hi);
  }
#endif
  return encode1<C>(lo) | (encode1<C>(hi) << C::OUT_BITS);
}

// the format's value nearest v (saturated): the value of encode1(v)
template <class C>
HUMMING_DEVICE float grid_value(float v) {
  if constexpr (C::OUT_FLOAT) {
    return decode_small_float<C::EXP, C::MAN, C::BIAS>(encode_small_float<C::EXP, C::MAN, C::BIAS>(v, C::QMAX));
  } else {
    return fminf(fmaxf(rintf(v), C::QMIN), C::QMAX) + 0.0f;  // (+ 0: an integer code has no -0)
  }
}

template <class C>
HUMMING_DEVICE u32 to16(float v) {
  return C::OUT16 == 2 ? float_to_bf16(v) : float_to_half(v);
}

template <class C>
HUMMING_DEVICE float absmax8(const uint4& v) {
  float f[8];
  unpack8<C::IN_BF16>(v, f);
  float a = 0.f;
#pragma unroll
  for (int i = 0; i < 8; ++i) a = fmaxf(a, fabsf(f[i]));
  return a;
}

// Eight elements (one 16-byte vector) -> codes -> memory at dst (8 bytes for
// 8-bit codes, 4 for 4-bit; OUT16: 16 bytes of values x mul), with one wide
// store when `wide`.
template <class C>
HUMMING_DEVICE void quantize8(const uint4& v, const Divisor& scale, u8* dst, bool wide, float mul = 1.f) {
  float f[8];
  unpack8<C::IN_BF16>(v, f);
  if constexpr (C::OUT16 != 0) {
    u32 h[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      h[i] = to16<C>(grid_value<C>(scale.divide(f[2 * i])) * mul) |
             (to16<C>(grid_value<C>(scale.divide(f[2 * i + 1])) * mul) << 16);
    if (wide) {
      st_global_v4(dst, h[0], h[1], h[2], h[3]);
    } else {
      u16* d = reinterpret_cast<u16*>(dst);
#pragma unroll
      for (int i = 0; i < 4; ++i) d[2 * i] = static_cast<u16>(h[i] & 0xffffu), d[2 * i + 1] = static_cast<u16>(h[i] >> 16);
    }
    return;
  }
  u32 p[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) p[i] = encode2<C>(scale.divide(f[2 * i]), scale.divide(f[2 * i + 1]));
  if constexpr (C::OUT_BITS == 8) {
    const u32 w0 = p[0] | (p[1] << 16), w1 = p[2] | (p[3] << 16);
    if (wide) {
      st_global_v2(dst, w0, w1);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) dst[i] = static_cast<u8>(w0 >> (8 * i)), dst[4 + i] = static_cast<u8>(w1 >> (8 * i));
    }
  } else {
    const u32 w = p[0] | (p[1] << 8) | (p[2] << 16) | (p[3] << 24);
    if (wide) {
      st_global_u32(dst, w);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) dst[i] = static_cast<u8>(w >> (8 * i));
    }
  }
}

// One output byte's worth of elements (1, or a pair for 4-bit codes) at e.
template <class C>
HUMMING_DEVICE void quantize_scalar(const u16* xr, u8* qr, int e, const Divisor& scale) {
  const float a = f16_to_float<C::IN_BF16>(ld_global_nc_u16(xr + e));
  if constexpr (C::OUT16 != 0) {
    reinterpret_cast<u16*>(qr)[e] = static_cast<u16>(to16<C>(grid_value<C>(scale.divide(a))));
  } else if constexpr (C::OUT_BITS == 8) {
    qr[e] = static_cast<u8>(encode1<C>(scale.divide(a)));
  } else {
    const float b = f16_to_float<C::IN_BF16>(ld_global_nc_u16(xr + e + 1));
    qr[e >> 1] = static_cast<u8>(encode2<C>(scale.divide(a), scale.divide(b)));
  }
}

// 16 bytes from a possibly unaligned address.
HUMMING_DEVICE uint4 load8(const u16* p, bool aligned) {
  if (aligned) return ld_global_nc_v4(p);
  u32 w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) w[i] = ld_global_nc_u16(p + 2 * i) | (static_cast<u32>(ld_global_nc_u16(p + 2 * i + 1)) << 16);
  return make_uint4(w[0], w[1], w[2], w[3]);
}

template <class C>
HUMMING_DEVICE void token_row(const ActQuantParams& p, long long row, int lane) {
  constexpr int G = C::ROW_THREADS;
  constexpr int PACK = (C::OUT_BITS == 4 && !C::OUT16) ? 2 : 1;  // elements per output unit
  const u16* xr = static_cast<const u16*>(p.x) + row * p.ld_x;
  u8* qr = static_cast<u8*>(p.q) + row * p.ld_q;
  const int k = p.k;
  // The row is: `pre` elements before its first 16-byte boundary, `nvec`
  // vectors of 8, then a tail; the loose elements (pre and tail, at most 14)
  // are numbered 0..nloose-1 and done one output byte at a time.
  int pre = static_cast<int>(((16u - (static_cast<u32>(reinterpret_cast<uptr>(xr)) & 15u)) & 15u) >> 1);
  if (pre > k) pre = k;
  if (PACK == 2 && (pre & 1)) pre = k;  // packed pairs need vectors at even elements: all loose
  const int nvec = (k - pre) >> 3;
  const int tail = pre + (nvec << 3);
  const int nloose = pre + (k - tail);
  const u16* xv = xr + pre;
  auto loose = [&](int i) { return i < pre ? i : tail + (i - pre); };

  // A row of at most one vector per thread (the host sizes teams so for K <= 8192) is
  // loaded once and kept in registers: one memory round trip before the reduction, none after.
  const bool one = nvec <= G;
  uint4 v0 = make_uint4(0u, 0u, 0u, 0u);
  if (one && lane < nvec) v0 = ld_global_nc_v4(xv + 8 * lane);
  float scale;
  if constexpr (C::MODE == kToken) {
    // Pass 1: absmax. Pass 2 reads the row again (unless it is held); it is in L1/L2 by then.
    float amax = one ? absmax8<C>(v0) : 0.f;
#pragma unroll 2
    for (int v = lane; !one && v < nvec; v += G) amax = fmaxf(amax, absmax8<C>(ld_global_nc_v4(xv + 8 * v)));
#pragma unroll 1
    for (int i = lane; i < nloose; i += G)
      amax = fmaxf(amax, fabsf(f16_to_float<C::IN_BF16>(ld_global_nc_u16(xr + loose(i)))));
    if constexpr (G == 32) {
      amax = warp_max<32>(amax);
    } else {
      __shared__ float scratch[G / 32];
      amax = block_max<G>(amax, scratch);
    }
    scale = dynamic_scale<C>(amax);
    if (lane == 0) p.scales[row * p.ld_s] = scale;
  } else {
    scale = *p.scales;
  }
  const Divisor divisor(scale);

  u8* qv = out_at<C>(qr, pre);
  constexpr int VB = 4 * kPairBytes<C>;  // output bytes per vector of 8
  const bool wide = is_aligned(qv, VB);
  if (one) {
    if (lane < nvec) quantize8<C>(v0, divisor, qv + lane * VB, wide);
  } else {
#pragma unroll 1
    for (int v = lane; v < nvec; v += G) quantize8<C>(ld_global_nc_v4(xv + 8 * v), divisor, qv + v * VB, wide);
  }
#pragma unroll 1
  for (int i = PACK * lane; i < nloose; i += PACK * G) quantize_scalar<C>(xr, qr, loose(i), divisor);
}

template <class C>
HUMMING_DEVICE void group_row(const ActQuantParams& p, long long row, int lane) {
  constexpr int G = C::ROW_THREADS;
  constexpr int GS = C::GROUP;
  constexpr int L = GS / 8 < 32 ? GS / 8 : 32;  // lanes sharing a group
  constexpr int VPL = GS / 8 / L;                // vectors per lane
  static_assert(GS % 8 == 0 && L >= 1 && (L & (L - 1)) == 0 && GS == 8 * L * VPL,
                "GROUP: 8, 16, 32, 64, 128, 256 or a multiple of 256");
  constexpr int GPI = G / L;  // groups per team per iteration
  const u16* xr = static_cast<const u16*>(p.x) + row * p.ld_x;
  u8* qr = static_cast<u8*>(p.q) + row * p.ld_q;
  const bool aligned = is_aligned(xr, 16);
  const bool wide = is_aligned(qr, 4 * kPairBytes<C>);
  const int ngroups = p.k / GS;
  const int sub = lane % L;
  // 16-bit values: pass 1 finds the row's power of two t >= every group scale; pass 2
  // (the row again, from L1/L2) writes code x (scale / t), exact powers of two apart.
  // Codes: one pass (2), writing each group's scale.
  constexpr bool VALUES = C::OUT16 != 0;
  // group gi's vectors into vals (if active) -> its scale (the team's lanes L at a time)
  auto load_group = [&](int gi, bool active, uint4 (&vals)[VPL]) {
    float amax = 0.f;
#pragma unroll
    for (int j = 0; j < VPL; ++j) {
      vals[j] = make_uint4(0u, 0u, 0u, 0u);
      if (active) {
        vals[j] = load8(xr + gi * GS + 8 * (sub + j * L), aligned);
        amax = fmaxf(amax, absmax8<C>(vals[j]));
      }
    }
    return dynamic_scale<C>(warp_max<L>(amax));
  };
  auto quantize_group = [&](int gi, const uint4 (&vals)[VPL], float scale, float mul) {
    const Divisor divisor(scale);
#pragma unroll
    for (int j = 0; j < VPL; ++j) quantize8<C>(vals[j], divisor, out_at<C>(qr, gi * GS + 8 * (sub + j * L)), wide, mul);
  };
  // (VALUES) the team's largest scale -> the row's t, stored; returns 1 / t (exact: t = 2^e, |e| < 127)
  __shared__ float scratch[G / 32];
  auto row_factor = [&](float smax) {
    if constexpr (G == 32) smax = warp_max<32>(smax);
    else smax = block_max<G>(smax, scratch);
    const float t = pow2_ceil(smax);
    if (lane == 0) p.scales[row * p.ld_s] = t;
    return __uint_as_float(0x7f000000u - __float_as_uint(t));
  };
  float smax = 0.f, inv_t = 1.f;
  auto pass = [&](const int what) {  // 1: the largest scale, 2: the outputs (a constant once inlined)
    for (int g0 = 0; g0 < ngroups; g0 += GPI) {  // same trip count for the whole team
      const int gi = g0 + lane / L;
      const bool active = gi < ngroups;
      uint4 vals[VPL];
      const float scale = load_group(gi, active, vals);
      if (!active) continue;
      if (what == 1) {
        smax = fmaxf(smax, scale);
        continue;
      }
      if (!VALUES && sub == 0) p.scales[row * p.ld_s + gi * p.ld_g] = scale;
      quantize_group(gi, vals, scale, VALUES ? scale * inv_t : 1.f);
    }
  };
  if constexpr (VALUES) {
    if (ngroups <= GPI) {  // one group (or none) per lane team: the row loaded once, held in registers
      const int gi = lane / L;
      const bool active = gi < ngroups;
      uint4 vals[VPL];
      const float scale = load_group(gi, active, vals);
      const float it = row_factor(active ? scale : 0.f);
      if (active) quantize_group(gi, vals, scale, scale * it);
      return;
    }
    pass(1);
    inv_t = row_factor(smax);
  }
  pass(2);
}

}  // namespace act_quant_detail

template <class C>
HUMMING_DEVICE void act_quant(const ActQuantParams& p) {
  using namespace act_quant_detail;
  constexpr int G = C::ROW_THREADS;
  static_assert(G == 32 || G == C::THREADS, "ROW_THREADS: 32 (a warp per row) or THREADS (a block per row)");
  static_assert(C::THREADS % 32 == 0, "THREADS: a multiple of 32");
  static_assert(C::OUT_BITS == 8 || C::OUT_BITS == 4, "OUT_BITS: 8 or 4");
  // the GEMM after this kernel, launched programmatically, may start now: it streams its first weights while
  // the activations are quantized, and waits (griddepcontrol.wait: this grid complete, its writes visible)
  // before it reads them
  ptx::pdl_launch_dependents();
  const int lane = static_cast<int>(threadIdx.x) % G;
  const long long row = static_cast<long long>(blockIdx.x) * (C::THREADS / G) + threadIdx.x / G;
  if (row >= p.m) return;  // whole teams leave together
  if constexpr (C::MODE == kGroup) group_row<C>(p, row, lane);
  else token_row<C>(p, row, lane);
}

}  // namespace humming
