// humming/gemm/layout.cuh -- the prepared weight layout "mma_sync_fragment", version 2.
//
// The weight W[N, K] is cut into warp blocks of 16 rows x 64 columns. In a block,
// lane l = 4*g + t of a warp owns 32 values: for k16 tile kt (0..3) and register
// r (0..3), the pair j = 4*kt + r holds
//     row  g + 8*(r & 1),  columns 16*kt + 2*t + 8*(r >> 1) + {0, 1},
// which is exactly the A operand of mma.sync m16n8k16 (a0a1, a2a3, a4a5, a6a7).
//
// A value of B bits is split into power-of-two planes (3 = 2+1, 5 = 4+1,
// 6 = 4+2, 7 = 4+2+1). A plane of P bits takes P 32-bit words per lane; pair j
// of it sits in word j / (16/P) at bit P*(j % (16/P)) (first element) and
// 16 + P*(j % (16/P)) (second element), so that one shift and one mask put both
// elements of a pair in the low bits of the two 16-bit halves of a register,
// ready for the magic-number conversion. The B words of a lane follow plane
// order; a block is stored as [lane][word] (B*128 bytes: one vector load per
// lane, conflict-free in shared memory), blocks as [N/16][K/64]. The Python packer
// (humming_nvidia/layout.py) writes exactly this; tests check both sides agree.
//
// Group scales (and zero points) are [groups][Np] entries of 2 bytes (4 with
// zero points: scale | zero << 16); within each 16-row block the rows are
// stored in the order 0, 8, 1, 9, ..., 7, 15, so the two rows of lane group g
// (g and g + 8) are one aligned 4-byte (8-byte) word.
//
// Byte operands (int8 / fp8 MMA, m16n8k32): a block is 16 rows x 128 columns
// (the kernel's 64 K units of two bytes). Lane l = 4*g + t owns 16 registers of
// four codes: register R = 4*kt + r, byte i holds
//     row  g + 8*(r & 1),  column 32*kt + 4*t + 16*(r >> 1) + i,
// the A operand of mma.sync m16n8k32 for k32 tile kt. B-bit codes (B = 1, 2, 4,
// 8) are packed 8/B registers per word, register j of word q (register 8/B*q + j)
// taking bits 8*i + B*j for its byte i: 2*B words per lane, stored like the
// 16-bit operand's ([lane][word], blocks [N/16][K/128]); see DequantBytes.
//
// int4 operands (int4 MMA, m16n8k64): a block is 16 rows x 256 columns (64 units of
// four values). Register R = 4*kt + r of lane 4*g + t holds, in nibble e (bits 4e..4e+3),
//   W[g + 8*(r & 1)][64*kt + 8*t + 32*(r >> 1) + e]
// as a two's-complement code: word R of the lane is register R itself (16 words per
// lane, [lane][word], blocks [N/16][K/256]; layout.pack_nibbles).
//
// This header compiles as plain C++ too, so the layout can be tested on a CPU.
#pragma once

#ifndef HUMMING_HD
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define HUMMING_HD __host__ __device__ __forceinline__
#else
#define HUMMING_HD inline
#endif
#endif

namespace humming {
namespace layout {

constexpr int kBlockRows = 16;
constexpr int kBlockCols = 64;
constexpr int kPairsPerLane = 16;

// Plane widths of a B-bit value, largest first, and their bit offsets.
HUMMING_HD constexpr int num_planes(int bits) {
  return (bits & 8 ? 1 : 0) + (bits & 4 ? 1 : 0) + (bits & 2 ? 1 : 0) + (bits & 1 ? 1 : 0);
}
HUMMING_HD constexpr int plane_width(int bits, int i) {
  // i-th set bit of `bits`, from the top
  return i == 0 ? (bits & 8 ? 8 : bits & 4 ? 4 : bits & 2 ? 2 : 1)
                : plane_width(bits - plane_width(bits, 0), i - 1);
}
HUMMING_HD constexpr int plane_offset(int bits, int i) {  // also the plane's first word
  return i == 0 ? 0 : plane_width(bits, i - 1) + plane_offset(bits, i - 1);
}

// Both elements of pair J, each in the low bits of one 16-bit half.
template <int BITS, int J, int PLANE = 0>
HUMMING_HD unsigned extract_pair(const unsigned (&w)[BITS]) {
  constexpr int P = plane_width(BITS, PLANE);
  constexpr int PER_WORD = 16 / P;
  constexpr int WORD = plane_offset(BITS, PLANE) + J / PER_WORD;
  constexpr int SHIFT = P * (J % PER_WORD);
  constexpr unsigned MASK = ((1u << P) - 1u) * 0x00010001u;
  constexpr int OFFSET = plane_offset(BITS, PLANE);
  const unsigned part = ((w[WORD] >> SHIFT) & MASK) << OFFSET;
  if constexpr (PLANE + 1 < num_planes(BITS)) {
    return part | extract_pair<BITS, J, PLANE + 1>(w);
  } else {
    return part;
  }
}

}  // namespace layout
}  // namespace humming
