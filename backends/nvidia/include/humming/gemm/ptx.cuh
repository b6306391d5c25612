// humming/gemm/ptx.cuh -- the PTX the GEMM components are made of.
//
// Asynchronous copies, ldmatrix, mma.sync and packed 16-bit arithmetic, each a
// one-line wrapper named for what it does. 16-bit pairs travel as u32 (low half
// = first element), so no CUDA header is needed.
#pragma once
#include "humming/common.cuh"

namespace humming {
namespace ptx {

// ---------------------------------------------------------------- programmatic dependent launch
// (sm_90+; nothing on older targets, and no-ops on a launch without the programmatic attribute)
// Lets the next kernel of the stream start launching once every CTA of this one has issued it.
HUMMING_DEVICE void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
// Waits until the kernels this launch may overlap have completed and their writes are visible:
// nothing before it may read what they write (activations) or write what they read (outputs,
// the split-K workspace and counters).
HUMMING_DEVICE void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// ---------------------------------------------------------------- cross-CTA flags
// A load of a GPU-scope flag with acquire semantics (sm_70+): what the CTA that released it wrote
// before is visible after it (the stream-K tiles' arrival counters).
HUMMING_DEVICE int ld_acquire_gpu(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// Adds v to a GPU-scope counter with release semantics: what this thread wrote before, and what the threads
// of its CTA wrote before a barrier it passed, is visible to whoever acquires the new value.
HUMMING_DEVICE void red_release_gpu_add(int* p, int v) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
HUMMING_DEVICE void nanosleep(u32 ns) { asm volatile("nanosleep.u32 %0;\n" ::"r"(ns)); }

// ---------------------------------------------------------------- timeline probes (scripts/gpu_trace.py)
// The global nanosecond timer (comparable across SMs) and the SM a CTA runs on.
HUMMING_DEVICE u64 globaltimer() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}
HUMMING_DEVICE u32 smid() {
  u32 s;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(s));
  return s;
}

// Builds with HUMMING_TRACE defined (scripts/gpu_trace.py) stamp a CTA's timeline: thread 0 writes
// the global timer at event `i` (0-6) into word i of its CTA's record of 16 u64 in `trace` (word 7:
// its SM, stamped with event 0; words 8-15 unused). Other builds hold nothing of it.
HUMMING_DEVICE void trace_at(u64* trace, int i) {
#ifdef HUMMING_TRACE
  if (threadIdx.x == 0 && trace != nullptr) {
    const u64 cta = blockIdx.x + gridDim.x * (blockIdx.y + static_cast<u64>(gridDim.y) * blockIdx.z);
    trace[cta * 16 + i] = globaltimer();
    if (i == 0) trace[cta * 16 + 7] = smid();
  }
#else
  (void)trace, (void)i;
#endif
}

// ---------------------------------------------------------------- shared memory addresses
HUMMING_DEVICE u32 smem_addr(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}

// ---------------------------------------------------------------- cp.async (sm_80+)
// Copy 16 bytes global -> shared.
HUMMING_DEVICE void cp_async16(u32 dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
// (No L2::cache_hint variant: with an evict-first policy, ptxas 13.0 can encode
// the cache-policy descriptor in an odd uniform register, which faults on sm_90
// with "illegal instruction" -- seen on the H200 for 2-bit weights.)
// Same, asking L2 to fetch the surrounding PREFETCH bytes (64, 128 or 256) too.
template <int PREFETCH>
HUMMING_DEVICE void cp_async16_prefetch(u32 dst, const void* src) {
  if constexpr (PREFETCH == 256) {
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
  } else if constexpr (PREFETCH == 128) {
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
  } else if constexpr (PREFETCH == 64) {
    asm volatile("cp.async.cg.shared.global.L2::64B [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
  } else {
    cp_async16(dst, src);
  }
}
// Sixteen zero bytes into shared memory, in the same async group (reads nothing).
HUMMING_DEVICE void cp_async16_zfill(u32 dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, 0;\n" ::"r"(dst), "l"(src));
}
// 16 bytes global -> shared when `full`, else sixteen zero bytes (src is not read).
HUMMING_DEVICE void cp_async16_if(u32 dst, const void* src, bool full) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(full ? 16 : 0));
}
// The same through L1 (.ca: the copy allocates there, so CTAs of the SM that read the same
// bytes soon after hit it instead of L2).
HUMMING_DEVICE void cp_async16_ca_if(u32 dst, const void* src, bool full) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(full ? 16 : 0));
}
// Only when `on` (a predicated copy, no branch): 16 bytes, of which the first `bytes`
// (16 or 0) are read and the rest zero-filled.
HUMMING_DEVICE void cp_async16_on(u32 dst, const void* src, bool on, int bytes = 16) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n@p cp.async.cg.shared.global [%0], [%1], 16, %3;\n}\n"
               ::"r"(dst), "l"(src), "r"(static_cast<int>(on)), "r"(bytes));
}
// 8 or 4 bytes when `full`, else zeros (src is not read); through L1: .ca is the
// only form for these sizes.
HUMMING_DEVICE void cp_async8_if(u32 dst, const void* src, bool full) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(full ? 8 : 0));
}
HUMMING_DEVICE void cp_async4_if(u32 dst, const void* src, bool full) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(full ? 4 : 0));
}
HUMMING_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
HUMMING_DEVICE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// ---------------------------------------------------------------- streaming global loads
// Read-only data used once (weights): no L1 allocation. Volatile, so a load
// written ahead of the math it feeds is also issued ahead of it.
// EARLY = true: the coherent form (no .nc), for loads issued ahead of a CTA
// barrier: ptxas may sink a .nc load past bar.sync (the data cannot change),
// which serialized a decode kernel's first weight loads behind its activation
// copies (seen in the H200's SASS), but not a coherent one.
template <bool EARLY = false>
HUMMING_DEVICE void ld_stream_v4(u32 (&v)[4], const void* p) {
  if constexpr (EARLY)
    asm volatile("ld.global.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "l"(p));
  else
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "l"(p));
}
template <bool EARLY = false>
HUMMING_DEVICE void ld_stream_v2(u32 (&v)[2], const void* p) {
  if constexpr (EARLY)
    asm volatile("ld.global.L1::no_allocate.v2.u32 {%0, %1}, [%2];\n" : "=r"(v[0]), "=r"(v[1]) : "l"(p));
  else
    asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];\n" : "=r"(v[0]), "=r"(v[1]) : "l"(p));
}
template <bool EARLY = false>
HUMMING_DEVICE u32 ld_stream_u32(const void* p) {
  u32 v;
  if constexpr (EARLY) asm volatile("ld.global.L1::no_allocate.u32 %0, [%1];\n" : "=r"(v) : "l"(p));
  else asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];\n" : "=r"(v) : "l"(p));
  return v;
}
// Small read-only data shared by neighbouring lanes (scales): through L1.
template <bool EARLY = false>
HUMMING_DEVICE u32 ld_nc_u32(const void* p) {
  u32 v;
  if constexpr (EARLY) asm volatile("ld.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p));
  else asm volatile("ld.global.nc.u32 %0, [%1];\n" : "=r"(v) : "l"(p));
  return v;
}

// ---------------------------------------------------------------- ldmatrix (sm_75+)
HUMMING_DEVICE void ldmatrix_x4(u32 (&r)[4], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
HUMMING_DEVICE void ldmatrix_x2(u32 (&r)[2], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(addr));
}

// ---------------------------------------------------------------- mma.sync
// D(16x8, f32) += A(16x16) * B(16x8), A row-major, B column-major.
template <bool BF16>
HUMMING_DEVICE void mma_m16n8k16(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  if constexpr (BF16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// The same product as two m16n8k8 steps (Turing has no m16n8k16). The A
// fragment of m16n8k16 is {a0a1, a2a3, a4a5, a6a7} = {rows g, g+8} x {k 0-7,
// k 8-15}; m16n8k8 takes {rows g, g+8} of one k half, B likewise one register.
HUMMING_DEVICE void mma_m16n8k16_as_2xk8(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]));
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[2]), "r"(a[3]), "r"(b[1]));
}

// D(16x8, s32) += A(16x32, s8) * B(32x8, s8). Byte for byte the fragments are
// those of m16n8k16 with each 16-bit element replaced by two consecutive-K
// int8s, so the same ldmatrix.b16 loads and weight register layout serve both.
HUMMING_DEVICE void mma_m16n8k32_s8(int (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// D(16x8, s32) += A(16x64, s4) * B(64x8, s4) (sm_80+; native on sm_80-sm_89): the m16n8k32
// fragments with each byte holding two consecutive-K nibbles, the lower K in the low nibble.
HUMMING_DEVICE void mma_m16n8k64_s4(int (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// D(16x8, f32) += A(16x32, fp8) * B(32x8, fp8) (sm_89+; E5M2 picks e5m2 for both), same fragments.
template <bool E5M2>
HUMMING_DEVICE void mma_m16n8k32_f8(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  if constexpr (E5M2) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// ---------------------------------------------------------------- bit tricks
// d = lut(a, b, c): any 3-input boolean function in one instruction.
template <int LUT>
HUMMING_DEVICE u32 lop3(u32 a, u32 b, u32 c) {
  u32 d;
  asm("lop3.b32 %0, %1, %2, %3, %4;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(LUT));
  return d;
}
// (a & b) | c
HUMMING_DEVICE u32 and_or(u32 a, u32 b, u32 c) { return lop3<(0xF0 & 0xCC) | 0xAA>(a, b, c); }

// ---------------------------------------------------------------- packed 16-bit arithmetic
// fp16 pairs: sm_53+. bf16 pairs: fma.rn.bf16x2 is sm_80+, sub/mul only sm_90+,
// so bf16 sub/mul are written as fma with 1.0 / -0.0.
template <bool BF16>
HUMMING_DEVICE u32 hsub2(u32 a, u32 b) {
  u32 d;
  if constexpr (BF16) {
    const u32 one = 0x3f803f80u, nb = b ^ 0x80008000u;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(one), "r"(nb));
  } else {
    asm("sub.rn.f16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
  }
  return d;
}
template <bool BF16>
HUMMING_DEVICE u32 hmul2(u32 a, u32 b) {
  u32 d;
  if constexpr (BF16) {
    const u32 mz = 0x80008000u;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(mz));
  } else {
    asm("mul.rn.f16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
  }
  return d;
}
template <bool BF16>
HUMMING_DEVICE u32 hfma2(u32 a, u32 b, u32 c) {
  u32 d;
  if constexpr (BF16) {
    asm("fma.rn.bf16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  } else {
    asm("fma.rn.f16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  }
  return d;
}
// Two fp32 -> one 16-bit pair (lo, hi), round to nearest even.
template <bool BF16>
HUMMING_DEVICE u32 pack2(float lo, float hi) {
  if constexpr (BF16) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    // (no bf16 conversion before sm_80: bf16 outputs of fp16 operands on Turing, in software)
    return static_cast<u32>(float_to_bf16(lo)) | (static_cast<u32>(float_to_bf16(hi)) << 16);
#else
    u32 d;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
#endif
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    u32 d;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
#else
    return static_cast<u32>(float_to_half(lo)) | (static_cast<u32>(float_to_half(hi)) << 16);
#endif
  }
}
// Byte permute: byte i of the result is byte (SEL >> 4i) & 7 of {b, a} (a the low word).
template <u32 SEL>
HUMMING_DEVICE u32 prmt(u32 a, u32 b) {
  u32 d;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "n"(SEL));
  return d;
}
// Two fp8 codes (E4M3: e4m3, else e5m2; the first in the low byte of `codes`, the
// second in the next byte, upper bits ignored) -> their fp16 values, exact, low half
// first: one F2FP.F16.E4M3/E5M2.UNPACK_B. sm_89 and later only (the host plans this
// only where the capability file declares the conversion native).
template <bool E4M3>
HUMMING_DEVICE u32 fp8x2_to_f16x2(u32 codes) {
  u32 d;
  const unsigned short c = static_cast<unsigned short>(codes);
  if constexpr (E4M3) {
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(d) : "h"(c));
  } else {
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;\n" : "=r"(d) : "h"(c));
  }
  return d;
}
// Two fp16 pairs -> four fp8 codes (E4M3: e4m3, else e5m2), rounded to nearest and saturated
// (exact for the small integers the byte dequantizer makes): lo's two in bytes 0, 1, hi's in
// bytes 2, 3. Two F2FP, the second merging into the first's register. sm_89 and later only.
template <bool E4M3>
HUMMING_DEVICE u32 f16x2x2_to_fp8x4(u32 lo, u32 hi) {
  u32 d;
  if constexpr (E4M3) {
    asm("{\n .reg .b16 l, h;\n cvt.rn.satfinite.e4m3x2.f16x2 l, %1;\n cvt.rn.satfinite.e4m3x2.f16x2 h, %2;\n"
        " mov.b32 %0, {l, h};\n}\n" : "=r"(d) : "r"(lo), "r"(hi));
  } else {
    asm("{\n .reg .b16 l, h;\n cvt.rn.satfinite.e5m2x2.f16x2 l, %1;\n cvt.rn.satfinite.e5m2x2.f16x2 h, %2;\n"
        " mov.b32 %0, {l, h};\n}\n" : "=r"(d) : "r"(lo), "r"(hi));
  }
  return d;
}
// A 16-bit value broadcast to both halves.
HUMMING_DEVICE u32 dup2(u32 h16) { return (h16 & 0xffffu) * 0x00010001u; }

}  // namespace ptx
}  // namespace humming
