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

}  // namespace tma
}  // namespace humming
