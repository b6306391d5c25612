// humming/gemm/tma.cuh -- Hopper bulk copies into shared memory that complete on an mbarrier (sm_90a).
//
// One thread fills a pipeline stage with a few bulk copies: the activations through the
// tensor-memory accelerator (a 2D tensor map built by the host, which also swizzles the rows
// into the 128-byte atoms the warpgroup MMA reads, and zero-fills rows past M and columns past
// K), the weights and their scales as plain contiguous runs. The stage's mbarrier is told the
// bytes to expect; it completes its phase when they have all landed, and the threads that wait
// on that phase then see them (generic loads and the wgmma's async-proxy reads alike).
// (PTX ISA §9.7.9.25 cp.async.bulk, cp.async.bulk.tensor; §9.7.13.15 mbarrier.)
#pragma once
#include "humming/common.cuh"

namespace humming {

// The host's CUtensorMap, carried inside the kernel parameters (a __grid_constant__ struct, so
// the copies can name it by its parameter-space address).
struct alignas(64) TensorMap {
  u64 opaque[16];
};

namespace tma {

HUMMING_DEVICE void init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialized barriers visible to the async proxy (the copies' completions).
HUMMING_DEVICE void fence_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// Arrives on `bar` (its one expected arrival) and adds `bytes` to the transaction count the
// phase waits for.
HUMMING_DEVICE void arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// Arrives on `bar` (one of its expected arrivals; release: this thread's and the retired wgmmas'
// reads of the stage come before the phase completes).
HUMMING_DEVICE void arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Returns once the phase of `bar` with parity `parity` has completed.
HUMMING_DEVICE void wait(u32 bar, u32 parity) {
  u32 done;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// `bytes` (a multiple of 16) from global `src` (16-byte aligned) to shared `dst`, counted on `bar`.
HUMMING_DEVICE void load_1d(u32 dst, const void* src, u32 bytes, u32 bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

// The box of tensor map `map` at element coordinates (c0 innermost, c1) to shared `dst`
// (1024-byte aligned for the 128-byte swizzle), counted on `bar`.
HUMMING_DEVICE void load_2d(u32 dst, const TensorMap* map, int c0, int c1, u32 bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// ---- clusters (CTAs along N sharing each stage's activations: GemmMmaSync::CLUSTER; the K slices of
// a split-K tile summing their partial tiles: GemmMmaSync::cluster_finish)

// This CTA's rank in its cluster.
HUMMING_DEVICE u32 cluster_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// The number of CTAs in this CTA's cluster (1 when the launch has no clusters).
HUMMING_DEVICE u32 cluster_size() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(r));
  return r;
}

// Four floats at this CTA's shared address `at` in the shared memory of cluster CTA `cta`
// (distributed shared memory: the same CTA-relative address in the peer).
HUMMING_DEVICE float4 ld_cluster_f4(u32 at, u32 cta) {
  float4 v;
  asm volatile(
      "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %4, %5;\nld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [ra];\n}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(at), "r"(cta)
      : "memory");
  return v;
}

// Every thread of every CTA of the cluster arrives, then waits for all (release / acquire at cluster
// scope: barrier inits before the peers' copies and arrivals, the last arrivals before a CTA exits).
HUMMING_DEVICE void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// cluster_sync without the release: for a barrier that orders nothing but this CTA's completed reads of
// its peers' shared memory before they exit (a release would wait for this CTA's global stores: a
// MEMBAR.GPU ahead of the arrival, SASS sm_90a).
HUMMING_DEVICE void cluster_sync_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}

// Arrives on the barrier at `bar` (this CTA's shared address) of cluster CTA `cta`. It only says that
// this warpgroup's reads of a stage are over (its wgmmas retired, its weight loads consumed) before a
// peer's bulk copies overwrite the stage, so the default CTA-scope release is enough: a cluster-scope
// one costs a MEMBAR.GPU per arrival (SASS, sm_90a).
HUMMING_DEVICE void arrive_remote(u32 bar, u32 cta) {
  asm volatile(
      "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\nmbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::
          "r"(bar),
      "r"(cta)
      : "memory");
}

// load_2d into shared `dst` of every cluster CTA in `mask`, each counting the bytes on its barrier at
// offset `bar` (the same CTA-relative addresses in each).
HUMMING_DEVICE void load_2d_multicast(u32 dst, const TensorMap* map, int c0, int c1, u32 bar, u16 mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}

}  // namespace tma
}  // namespace humming
