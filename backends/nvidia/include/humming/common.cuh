// humming/common.cuh -- small device helpers shared by every kernel.
//
// Deliberately free of CUDA headers (no cuda_fp16.h, no cuda/std): NVRTC has
// the built-ins this needs (threadIdx, uint4, __shfl_xor_sync, ...), and every
// header avoided keeps the JIT fast. Half, bf16 and fp8 values travel as raw
// bits (u16 / u8) and are converted with PTX or integer arithmetic here.
//
// Contents: fixed-width integers; fp16/bf16 <-> fp32; exact division without a
// slow-path call; encoders of fp32 to any
// small float (e4m3, e5m2, e2m1, ...; native cvt where the target has one);
// 16/8/4-byte global loads and stores; warp and block reductions.
#pragma once

namespace humming {

// ---------------------------------------------------------------- integers
using i8 = signed char;
using u8 = unsigned char;
using i16 = short;
using u16 = unsigned short;
using i32 = int;
using u32 = unsigned int;
using i64 = long long;
using u64 = unsigned long long;
using uptr = unsigned long long;
static_assert(sizeof(u16) == 2 && sizeof(u32) == 4 && sizeof(u64) == 8 && sizeof(void*) == 8,
              "humming assumes a 64-bit device ABI");

#define HUMMING_DEVICE __device__ __forceinline__

// Sel<C, A, B>::T is A when C holds, else B (no <type_traits> under NVRTC).
template <bool C, typename A, typename B>
struct Sel {
  using T = A;
};
template <typename A, typename B>
struct Sel<false, A, B> {
  using T = B;
};

template <int A, int B>
struct ceil_div_t {
  static constexpr int value = (A + B - 1) / B;
};

// ---------------------------------------------------------------- fp16 / bf16
HUMMING_DEVICE float half_to_float(u16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}

HUMMING_DEVICE float bf16_to_float(u16 b) { return __uint_as_float(static_cast<u32>(b) << 16); }

HUMMING_DEVICE u16 float_to_half(float f) {  // round to nearest even
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

HUMMING_DEVICE u16 float_to_bf16(float f) {  // round to nearest even; NaN stays NaN
  u32 u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<u16>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<u16>(u >> 16);
}

// A 16-bit float element type by flag: BF16 ? bf16 : fp16.
template <bool BF16>
HUMMING_DEVICE float f16_to_float(u16 v) {
  if constexpr (BF16) return bf16_to_float(v);
  else return half_to_float(v);
}

// Eight 16-bit floats held in one 16-byte vector -> fp32.
template <bool BF16>
HUMMING_DEVICE void unpack8(const uint4& v, float (&out)[8]) {
  const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = f16_to_float<BF16>(static_cast<u16>(w[i] & 0xffffu));
    out[2 * i + 1] = f16_to_float<BF16>(static_cast<u16>(w[i] >> 16));
  }
}

// ---------------------------------------------------------------- division
// Correctly rounded a / b (IEEE div.rn) without the division slow-path call,
// so kernels that divide keep no stack frame. Both operands are scaled into
// [1, 2) by their exponents, divided with the hardware's own fast-path sequence
// (reciprocal, one Newton step, one residual correction: exact there), and the
// exponent difference is put back. Results that are fp32 subnormals may differ
// from div.rn in the last subnormal bit (they are below 2^-126: every format
// humming quantizes to encodes them as a signed zero either way). Make one
// Divisor per divisor and divide many values by it.
struct Divisor {
  float mb;        // |b| scaled into [1, 2)
  float r;         // 1 / mb, refined
  float raw_inv;   // 1 / b, exact for b = +-0, +-inf, NaN
  int eb;          // |b| = mb * 2^eb
  u32 sign;        // sign bit of b
  bool finite;     // b finite and non-zero

  HUMMING_DEVICE static float pow2(int e) { return __uint_as_float(static_cast<u32>(e + 127) << 23); }

  // |v| = m * 2^e with m in [1, 2) for finite non-zero v (subnormals too).
  HUMMING_DEVICE static float split(u32 mag, int& e) {
    const bool sub = mag < 0x00800000u;
    const u32 n = sub ? __float_as_uint(__uint_as_float(mag) * 16777216.0f) : mag;
    e = static_cast<int>(n >> 23) - (sub ? 151 : 127);
    return __uint_as_float((n & 0x007fffffu) | 0x3f800000u);
  }

  HUMMING_DEVICE explicit Divisor(float b) {
    const u32 ub = __float_as_uint(b), mag = ub & 0x7fffffffu;
    sign = ub & 0x80000000u;
    finite = mag - 1u < 0x7f7fffffu;
    asm("rcp.approx.f32 %0, %1;" : "=f"(raw_inv) : "f"(b));
    mb = split(finite ? mag : 0x3f800000u, eb);
    float r0;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r0) : "f"(mb));
    r = fmaf(r0, fmaf(r0, -mb, 1.0f), r0);
  }

  HUMMING_DEVICE float divide(float a) const {
    if (!finite) return a * raw_inv;  // IEEE results for b = 0, inf, NaN
    const u32 ua = __float_as_uint(a), mag = ua & 0x7fffffffu;
    const u32 s = (ua ^ sign) & 0x80000000u;
    if (!(mag - 1u < 0x7f7fffffu)) return __uint_as_float(mag | s);  // a = +-0, +-inf, NaN
    int ea;
    const float ma = split(mag, ea);
    const float y = ma * r;
    const float q = fmaf(r, fmaf(-mb, y, ma), y);  // = RN(ma / mb)
    const int n = max(min(ea - eb, 254), -160);
    const int n1 = n >> 1;
    return __uint_as_float(__float_as_uint(q * pow2(n1) * pow2(n - n1)) | s);
  }
};

HUMMING_DEVICE float div_rn(float a, float b) { return Divisor(b).divide(a); }

// ---------------------------------------------------------------- small floats
// Saturating round-to-nearest-even encoder of fp32 into a signed small float
// with MAN mantissa bits and exponent bias BIAS, for any EXP (e4m3, e5m2, e2m1,
// e3m2, e2m3, ...). Values beyond max_finite encode to +-max_finite; NaN encodes
// to the all-ones code. Returns the code in the low EXP+MAN+1 bits.
template <int EXP, int MAN, int BIAS>
HUMMING_DEVICE u32 encode_small_float(float v, float max_finite) {
  constexpr int SIGN_SHIFT = EXP + MAN;
  const u32 sign = (__float_as_uint(v) >> 31) << SIGN_SHIFT;
  float a = fabsf(v);
  if (a != a) return (1u << (SIGN_SHIFT + 1)) - 1u;
  a = fminf(a, max_finite);
  constexpr int EMIN = 1 - BIAS;  // exponent of the smallest normal
  // 2^EMIN and 2^(MAN - EMIN) as exact floats (biased exponent fields).
  const float min_normal = __uint_as_float(static_cast<u32>(EMIN + 127) << 23);
  if (a < min_normal) {  // subnormal (or zero): a multiple of 2^(EMIN - MAN)
    const float to_units = __uint_as_float(static_cast<u32>(MAN - EMIN + 127) << 23);
    return sign | static_cast<u32>(__float2uint_rn(a * to_units));  // 2^MAN becomes the min normal
  }
  constexpr int DROP = 23 - MAN;
  u32 b = __float_as_uint(a);
  b += (1u << (DROP - 1)) - 1u + ((b >> DROP) & 1u);  // ties to even
  const u32 e = (b >> 23) - 127u + static_cast<u32>(BIAS);
  const u32 m = (b >> DROP) & ((1u << MAN) - 1u);
  return sign | (e << MAN) | m;
}

// The value of a code of that format (any code encode_small_float returns; the
// all-ones NaN code of formats that have one is not expected here).
template <int EXP, int MAN, int BIAS>
HUMMING_DEVICE float decode_small_float(u32 code) {
  constexpr int SIGN_SHIFT = EXP + MAN;
  const u32 e = (code >> MAN) & ((1u << EXP) - 1u), m = code & ((1u << MAN) - 1u);
  // normal: (2^MAN + m) * 2^(e - BIAS - MAN); subnormal (e = 0): m * 2^(1 - BIAS - MAN)
  const float units = static_cast<float>(e ? (1u << MAN) | m : m);
  const int ex = (e ? static_cast<int>(e) : 1) - BIAS - MAN;
  const float v = units * __uint_as_float(static_cast<u32>(ex + 127) << 23);
  return ((code >> SIGN_SHIFT) & 1u) ? -v : v;
}

// The smallest value of an unsigned-use small float (EXP exponent bits, MAN
// mantissa bits, bias BIAS; subnormals below 2^(1 - BIAS)) that is >= v > 0,
// saturated at max_finite: how a scale is rounded into its storage format so that
// dividing by it never pushes an element past the element format's range (e4m3,
// e8m0, fp16, bf16 scales). EXP == 0: fp32, v itself.
template <int EXP, int MAN, int BIAS>
HUMMING_DEVICE float round_up_scale(float v, float max_finite) {
  if constexpr (EXP == 0) {
    return v;
  } else {
    // the grid step 2^(e - MAN) at v's exponent e (the subnormal step below 2^EMIN), kept
    // inside fp32's normal range (bf16's subnormal steps are not: a coarser step there)
    constexpr int EMIN = 1 - BIAS;
    constexpr int ELO = EMIN > MAN - 126 ? EMIN : MAN - 126, EHI = MAN + 126;
    const u32 b = __float_as_uint(v);
    int e = static_cast<int>((b >> 23) & 0xffu) - 127;  // floor(log2 v) for normal fp32 v
    e = e < ELO ? ELO : (e > EHI ? EHI : e);
    const float ulp = __uint_as_float(static_cast<u32>(e - MAN + 127) << 23);
    const float inv = __uint_as_float(static_cast<u32>(MAN - e + 127) << 23);
    const float r = ceilf(v * inv) * ulp;  // exact: scaling by powers of two
    return fminf(r, max_finite);
  }
}

// The smallest power of two >= v (v > 0, finite; fp32 subnormals give 2^-126).
HUMMING_DEVICE float pow2_ceil(float v) {
  const u32 b = __float_as_uint(v);
  const u32 r = (b + 0x007fffffu) & 0xff800000u;
  return __uint_as_float(r ? r : 0x00800000u);
}

// Native two-at-a-time conversions: first argument -> low byte. Only for
// targets whose PTX has them (sm_89 and newer); callers check
// HUMMING_HAS_CVT_FP8 or pass a software flag.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 890)
#define HUMMING_HAS_CVT_FP8 1
HUMMING_DEVICE u32 cvt_e4m3x2(float lo, float hi) {
  u16 r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}
HUMMING_DEVICE u32 cvt_e5m2x2(float lo, float hi) {
  u16 r;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}
#else
#define HUMMING_HAS_CVT_FP8 0
#endif

// fp32 -> signed integer code of BITS bits (two's complement, low bits),
// rounded to nearest even and saturated to [QMIN, QMAX].
template <int BITS>
HUMMING_DEVICE u32 encode_int(float v, float qmin, float qmax) {
  const float r = fminf(fmaxf(rintf(v), qmin), qmax);
  return static_cast<u32>(__float2int_rn(r)) & ((1u << BITS) - 1u);
}

// ---------------------------------------------------------------- memory
HUMMING_DEVICE uint4 ld_global_nc_v4(const void* p) {  // 16 bytes, read-only path
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

HUMMING_DEVICE u16 ld_global_nc_u16(const void* p) {
  u16 v;
  asm volatile("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}

HUMMING_DEVICE void st_global_v2(void* p, u32 a, u32 b) {  // 8 bytes
  asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(a), "r"(b) : "memory");
}

HUMMING_DEVICE void st_global_v4(void* p, u32 a, u32 b, u32 c, u32 d) {  // 16 bytes
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

HUMMING_DEVICE void st_global_u32(void* p, u32 a) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(a) : "memory");
}

HUMMING_DEVICE bool is_aligned(const void* p, int bytes) {
  return (reinterpret_cast<uptr>(p) & static_cast<uptr>(bytes - 1)) == 0;
}

// ---------------------------------------------------------------- reductions
// Max over WIDTH consecutive lanes (WIDTH a power of two <= 32); every lane of
// the warp must call it.
template <int WIDTH = 32>
HUMMING_DEVICE float warp_max(float v) {
  static_assert(WIDTH >= 1 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0, "WIDTH: power of two <= 32");
#pragma unroll
  for (int o = WIDTH / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Max over a block of THREADS threads (all must call it, once per `scratch`).
template <int THREADS>
HUMMING_DEVICE float block_max(float v, float* scratch /* [THREADS / 32] shared */) {
  static_assert(THREADS % 32 == 0, "THREADS: a multiple of 32");
  v = warp_max<32>(v);
  if constexpr (THREADS > 32) {
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    v = scratch[0];
#pragma unroll
    for (int i = 1; i < THREADS / 32; ++i) v = fmaxf(v, scratch[i]);
  }
  return v;
}

// NAME<Cfg>::value: Cfg::FIELD where the config has it, else 0 (a kernel's config names only the optional fields
// it uses, so that the sources of kernels without them stay as they were)
#define HUMMING_CFG_FIELD_OR_ZERO(NAME, FIELD)                   \
  template <typename C, typename = void>                         \
  struct NAME {                                                  \
    static constexpr int value = 0;                              \
  };                                                             \
  template <typename C>                                          \
  struct NAME<C, decltype(void(C::FIELD))> {                     \
    static constexpr int value = C::FIELD;                       \
  };

}  // namespace humming
