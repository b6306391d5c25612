// humming/kernels/stream_read.cuh -- read a buffer once, as fast as plain loads go.
//
// The benchmark's practical bandwidth floor: the time to stream a workload's
// weight bytes through the SMs with nothing else to do. Each thread walks the
// buffer in 16-byte vectors with a grid-wide stride, UNROLL loads in flight
// before any is used, through the read-only path. The values are folded into
// an xor that is stored only when it equals a value the host never expects,
// so the loads cannot be removed and nothing is written in practice.
//
// Config (struct C): THREADS, UNROLL, RUN. RUN = 0: the grid-wide stride (the whole
// GPU sweeps the buffer in order: what the benchmark's floor uses). RUN > 0: each warp
// reads runs of RUN 512-byte blocks, one block per warp load (a lane's 16 bytes each),
// UNROLL blocks in flight, as a decode kernel's warp streams its own run of weights:
// the same bytes, read as many scattered sequential streams (the host rounds the
// buffer to whole runs).
#pragma once

#include "humming/common.cuh"
#include "humming/gemm/ptx.cuh"

namespace humming {

struct StreamReadParams {
  const uint4* src;  // 16-byte aligned buffer of num_vecs vectors
  u64 num_vecs;
  u32* sink;         // one u32, written only when the xor equals `never`
  u32 never;
  u32 pad_;
  u64* trace;        // HUMMING_TRACE builds: 16 words per CTA (ptx::trace_at: event 0 entry, 4 exit), or null
};

// Not volatile (unlike ld_global_nc_v4): the compiler may then issue all UNROLL
// loads before the first xor instead of interleaving them.
HUMMING_DEVICE uint4 ld_stream_v4(const uint4* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

template <class C>
HUMMING_DEVICE void stream_read_runs(const StreamReadParams& p) {
  constexpr int U = C::UNROLL;
  constexpr u64 RV = static_cast<u64>(C::RUN) * 32;  // 16-byte vectors per run
  const u64 warps = static_cast<u64>(gridDim.x) * (C::THREADS / 32);
  const u64 lane = threadIdx.x & 31;
  u32 acc = 0;
  for (u64 r = static_cast<u64>(blockIdx.x) * (C::THREADS / 32) + threadIdx.x / 32; r * RV < p.num_vecs; r += warps) {
    const uint4* run = p.src + r * RV + lane;
#pragma unroll 1  // (UNROLL loads, then their use: UNROLL blocks in flight, no more)
    for (u64 j = 0; j < RV; j += 32 * U) {  // (RUN is a multiple of UNROLL)
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = ld_stream_v4(run + j + u * 32);
#pragma unroll
      for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  }
  if (acc == p.never) *p.sink = acc;
}

template <class C>
HUMMING_DEVICE void stream_read_body(const StreamReadParams& p) {
  if constexpr (C::RUN > 0) {
    static_assert(C::RUN % C::UNROLL == 0, "stream_read: RUN a multiple of UNROLL");
    stream_read_runs<C>(p);
    return;
  }
  constexpr int U = C::UNROLL;
  const u64 stride = static_cast<u64>(gridDim.x) * C::THREADS;
  u64 i = static_cast<u64>(blockIdx.x) * C::THREADS + threadIdx.x;
  u32 acc = 0;
  for (; i + (U - 1) * stride < p.num_vecs; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = ld_stream_v4(p.src + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < p.num_vecs; i += stride) {
    const uint4 v = ld_stream_v4(p.src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == p.never) *p.sink = acc;
}

template <class C>
HUMMING_DEVICE void stream_read(const StreamReadParams& p) {
  ptx::trace_at(p.trace, 0);
  stream_read_body<C>(p);
  ptx::trace_at(p.trace, 4);
}

}  // namespace humming
