// humming/gemm/layout.cuh -- the prepared weight layout "mma_sync_fragment", version 5.
//
// The weight W[N, K] is cut into warp blocks of 16 rows x 64 columns. In a block,
// lane l = 4*g + t of a warp owns 32 values: for k16 tile kt (0..3) and register
// r (0..3), the pair j = 4*kt + r holds
//     row  g + 8*(r & 1),  columns 16*kt + 2*t + 8*(r >> 1) + {0, 1},
// which is exactly the A operand of mma.sync m16n8k16 (a0a1, a2a3, a4a5, a6a7).
//
// A value of B bits is split into power-of-two planes (5 = 4+1, 6 = 4+2,
// 7 = 4+2+1). A plane of P bits takes P 32-bit words per lane; pair j of it sits
// in word j / (16/P) at bit P*q (first element) and 16 + P*q (second element),
// slot q = j % (16/P), so that one shift and one mask put both elements of a
// pair in the low bits of the two 16-bit halves of a register, ready for the
// magic-number conversion. The B words of a lane follow plane order (word i of
// a lane: plane by plane, largest first).
//
// 3-bit values (v4) are not split: each 16-bit half of a lane's three words
// holds five whole 3-bit fields, at bits 0, 3, 6, 9 and 12, and a spare bit 15.
// Pair j < 15 sits in word word3(j) at bit pos3(j) of each half (see below);
// pair 15 is spread over the spare bits, bit b of each of its values at bit 15
// of word b. Fields at bits 0 and 3 are in place for the dequantizer (which wants
// pair j at bit 3 * (j & 1), the fp16 and bf16 mantissas both hold it), the
// others come from two shifts of their word (6 and 12, or 6 and 9 for word 2,
// where pair 15's bit 0 lands too): one LOP3 per pair (three for pair 15) and
// eight shifts per block. (v3 stored them as a 2-bit and a 1-bit plane: two
// LOP3s per pair.)
//
// 4-bit float codes (v5, e2m1 in fp16 and bf16) keep the 4-bit plane's words, but in each 16-bit half a
// code's magnitude and sign are two fields placed for the dequantizer (float4_fields, below), not a nibble.
//
// Storage: a block (B*128 bytes) is stored plane by plane (v3): plane q's P
// words of lane l at word 32*off_q + l*P of the block (word_index), so each lane
// reads each plane with one P-word vector load and a warp's load covers whole
// lines; a width of one plane is [lane][word] (one vector load per lane). 3-bit
// blocks keep the storage of their former planes: words 0-1 of lane l at 2*l,
// word 2 at 64 + l. (v2 stored every width as [lane][word]: for 3, 5, 6 and 7
// bits that took B / VEC loads per lane, each spanning the warp's whole block,
// so the L2 sent each block to the SM up to B times.) Blocks as [N/16][K/64].
// The Python packer (humming_nvidia/layout.py) writes exactly this; tests check
// both sides agree.
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

// The plane holding word i of a lane, and the word's place in its block (see above).
HUMMING_HD constexpr int plane_of_word(int bits, int i, int q = 0) {
  return i < plane_offset(bits, q) + plane_width(bits, q) ? q : plane_of_word(bits, i, q + 1);
}
HUMMING_HD constexpr int word_index(int bits, int lane, int i) {
  return 32 * plane_offset(bits, plane_of_word(bits, i)) + lane * plane_width(bits, plane_of_word(bits, i)) +
         (i - plane_offset(bits, plane_of_word(bits, i)));
}

// Slot of pair j in its word of plane `plane` (the field's first bit is P * slot).
HUMMING_HD constexpr int slot(int bits, int plane, int j) { return j % (16 / plane_width(bits, plane)); }

// 3-bit values: the word and the bit (in each half) of pair j < 15. Even pairs e = j / 2: word e / 3,
// bit 6 * (e % 3); odd pairs o = j / 2: words 0 and 1 at bits 3 and 9 (o < 4), word 2 at bits 3, 9, 12.
HUMMING_HD constexpr int word3(int j) { return (j & 1) ? ((j >> 1) < 4 ? (j >> 1) / 2 : 2) : (j >> 1) / 3; }
HUMMING_HD constexpr int pos3(int j) {
  return (j & 1) ? ((j >> 1) < 4 ? 3 + 6 * ((j >> 1) & 1) : (j >> 1) == 4 ? 3 : (j >> 1) == 5 ? 9 : 12)
                 : 6 * ((j >> 1) % 3);
}

// Pair J of 3-bit values, both elements at bit SUB of their 16-bit halves, the other bits zero.
template <int J, int SUB>
HUMMING_HD unsigned field3(const unsigned (&w)[3]) {
  constexpr unsigned H = 0x00010001u;
  if constexpr (J < 15) {
    static_assert(pos3(J) >= SUB, "3-bit fields move down");
    return (w[word3(J)] >> (pos3(J) - SUB)) & ((7u << SUB) * H);
  } else {
    static_assert(SUB <= 13, "pair 15's bits move down");
    return ((w[0] >> (15 - SUB)) & ((1u << SUB) * H)) | ((w[1] >> (14 - SUB)) & ((2u << SUB) * H)) |
           ((w[2] >> (13 - SUB)) & ((4u << SUB) * H));
  }
}

// 4-bit float codes in a 16-bit compute type whose magnitude goes to bit MS (v5: e2m1, MS = 9 in fp16 and 6
// in bf16): a code's magnitude (value bits 0-2) and sign (bit 3) are two fields, so that its fp16 / bf16 bits
// (magnitude at MS, sign at 15) are a shift and a mask away. Pair j sits in word j / 4, in each 16-bit half
// (q = j % 4) its magnitude at bit f4_mag(q) and its sign at f4_sign(q):
//     q       0        1        2    3
//     mag     0        3        MS   12
//     sign    15 - MS  16 - MS  15   17 - MS
// which fill the 16 bits once for MS = 6 and 9. Pairs 0 and 2 move whole (one shift and one LOP3; pair 2 no
// shift), pairs 1 and 3 as two fields (two shifts, two LOP3s): five shifts and six LOP3s per word, where the
// nibbles of the 4-bit plane took seven and eight. (No placement of the four fields of a word moves more than
// two codes whole: a search over all of them, for both MS.)
HUMMING_HD constexpr bool float4_fields(int bits, int ms) { return bits == 4 && (ms == 6 || ms == 9); }
HUMMING_HD constexpr int f4_mag(int q, int ms) { return q == 0 ? 0 : q == 1 ? 3 : q == 2 ? ms : 12; }
HUMMING_HD constexpr int f4_sign(int q, int ms) { return q == 2 ? 15 : 15 - ms + (q == 3 ? 2 : q); }

// x >> S for S >= 0, x << -S else
template <int S>
HUMMING_HD unsigned shift_right(unsigned x) {
  if constexpr (S > 0) return x >> S;
  else if constexpr (S < 0) return x << -S;
  else return x;
}

// Pair J of 4-bit float codes (float4_fields) with each element's magnitude at bit MS of its half and its
// sign at bit 15, the other bits zero: the 16-bit float's bits up to the exponent re-bias.
template <int J, int MS>
HUMMING_HD unsigned float4_pair(const unsigned (&w)[4]) {
  static_assert(float4_fields(4, MS), "4-bit float fields: magnitudes at bit 6 or 9");
  constexpr unsigned H = 0x00010001u, MAG = (7u << MS) * H, SIGN = 0x8000u * H;
  constexpr int q = J % 4, a = f4_mag(q, MS) - MS, b = f4_sign(q, MS) - 15;
  const unsigned x = w[J / 4];
  if constexpr (a == b) return shift_right<a>(x) & (MAG | SIGN);
  else return (shift_right<a>(x) & MAG) | (shift_right<b>(x) & SIGN);
}

// Both elements of pair J, each in the low bits of one 16-bit half.
template <int BITS, int J, int PLANE = 0>
HUMMING_HD unsigned extract_pair(const unsigned (&w)[BITS]) {
  if constexpr (BITS == 3) {
    return field3<J, 0>(w);
  } else {
    constexpr int P = plane_width(BITS, PLANE);
    constexpr int PER_WORD = 16 / P;
    constexpr int WORD = plane_offset(BITS, PLANE) + J / PER_WORD;
    constexpr int SHIFT = P * slot(BITS, PLANE, J);
    constexpr unsigned MASK = ((1u << P) - 1u) * 0x00010001u;
    constexpr int OFFSET = plane_offset(BITS, PLANE);
    const unsigned part = ((w[WORD] >> SHIFT) & MASK) << OFFSET;
    if constexpr (PLANE + 1 < num_planes(BITS)) {
      return part | extract_pair<BITS, J, PLANE + 1>(w);
    } else {
      return part;
    }
  }
}

}  // namespace layout
}  // namespace humming
