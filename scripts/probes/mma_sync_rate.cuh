// scripts/probes/mma_sync_rate.cuh -- how fast one SM sub-partition retires mma.sync m16n8k16 (fp16, fp32
// accumulators), the instruction of the register rings and the 16-row tiles, with nothing else to do: a timing
// probe for scripts/gpu_wgmma_rate.py (its mma.sync rows), not a library kernel (it reaches the JIT through
// HUMMING_INCLUDE_PATH).
//
// Each warp issues ITERS groups of GROUP m16n8k16 MMAs into CHAINS accumulator sets in turn (a chain's MMAs depend
// on each other through the accumulators, the chains do not). REDEF 1: the A fragment is rewritten (an xor with
// the loop count) before each group, as a ring's dequantization writes the weights' fragments. At one token a
// ring uses one of the eight columns of each MMA, so the weights an SM multiplies per cycle at this rate
// (16 x 16 per MMA) bound its one-token loop however fast the memory is. Thread 0 of each CTA records its
// clock64 span; the accumulators feed a store that never happens.
#pragma once

#include "humming/common.cuh"
#include "humming/gemm/ptx.cuh"
#include "rate_params.cuh"

namespace humming {

template <class C>
HUMMING_DEVICE void mma_sync_rate(const RateParams& p) {
  constexpr int CH = C::CHAINS;
  static_assert(C::GROUP % CH == 0, "mma_sync_rate: GROUP a multiple of CHAINS");
  u32 a[4] = {0x3c003c00u, 0x3c003c00u ^ threadIdx.x, 0x3c003c00u, 0x3c003c00u};
  const u32 b[2] = {0x3c003c00u, 0x3c003c00u ^ (threadIdx.x & 0x00ff00ffu)};
  float d[CH][4];
#pragma unroll
  for (int c = 0; c < CH; ++c)
#pragma unroll
    for (int i = 0; i < 4; ++i) d[c][i] = 0.0f;
  const long long t0 = clock64();
  for (int it = 0; it < p.iters; ++it) {
    if constexpr (C::REDEF) {
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] ^= static_cast<u32>(it & 1);
    }
#pragma unroll
    for (int g = 0; g < C::GROUP; ++g) ptx::mma_m16n8k16<false>(d[g % CH], a, b);
  }
  const long long t1 = clock64();
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < CH; ++c)
#pragma unroll
    for (int i = 0; i < 4; ++i) s += d[c][i];
  if (s == p.never) *p.sink = s;
  if (threadIdx.x == 0) p.spans[blockIdx.x] = t1 - t0;
}

}  // namespace humming
