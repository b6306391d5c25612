// scripts/probes/wgmma_rate.cuh -- how fast one SM retires wgmma.mma_async m64nNk16 with A from registers
// (the warpgroup tiles' instruction), with nothing else to do: a timing probe for scripts/gpu_wgmma_rate.py,
// not a library kernel (it reaches the JIT through HUMMING_INCLUDE_PATH).
//
// Each warpgroup of the CTA issues ITERS groups of GROUP wgmmas (k16 steps 0-3 of one 64-column atom of
// a B operand of N columns in shared memory), CHAINS accumulator sets taking them in turn, and retires
// them with wait_group WAIT after each commit -- the main loop of the warpgroup tiles without their loads
// or dequantization. REDEF 1: the A fragments are rewritten (an xor with the loop count) before each
// group's fence, while WAIT groups may still be in flight, as the tiles' dequantization does. Thread 0
// of each CTA records its clock64 span; the accumulators feed a store that never happens.
#pragma once

#include "humming/common.cuh"
#include "humming/gemm/ptx.cuh"
#include "humming/gemm/wgmma.cuh"
#include "rate_params.cuh"

namespace humming {

template <class C>
HUMMING_DEVICE void wgmma_rate(const RateParams& p) {
  constexpr int N = C::N, CH = C::CHAINS;
  static_assert(C::GROUP % CH == 0, "wgmma_rate: GROUP a multiple of CHAINS");
  extern __shared__ __align__(16) char smem_raw[];
  const u32 raw = ptx::smem_addr(smem_raw);
  char* smem = smem_raw + (((raw + 1023u) & ~1023u) - raw);  // (the host asks 1 KB more)
  for (int i = threadIdx.x; i < N * 128 / 4; i += C::THREADS)
    reinterpret_cast<u32*>(smem)[i] = 0x3c003c00u ^ (static_cast<u32>(i) & 0x00ff00ffu);
  wgmma::fence_proxy_shared();
  __syncthreads();
  const u64 desc0 = wgmma::desc_k_sw128(ptx::smem_addr(smem));
  u32 a[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u};
  float d[CH][N / 2];
#pragma unroll
  for (int c = 0; c < CH; ++c)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) d[c][i] = 0.0f;
  const long long t0 = clock64();
  for (int it = 0; it < p.iters; ++it) {
    if constexpr (C::REDEF) {
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] ^= static_cast<u32>(it & 1);
    }
    wgmma::fence();
#pragma unroll
    for (int g = 0; g < C::GROUP; ++g)
      wgmma::Mma<N, wgmma::kF16>::run(d[g % CH], a, desc0 + static_cast<u64>((g % 4) * 2), 1);
    wgmma::commit();
    wgmma::wait<C::WAIT>();
  }
  wgmma::wait<0>();
  const long long t1 = clock64();
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < CH; ++c)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) s += d[c][i];
  if (s == p.never) *p.sink = s;
  if (threadIdx.x == 0) p.spans[blockIdx.x] = t1 - t0;
}

}  // namespace humming
