// humming/kernels/moe_route.cuh -- the three small kernels around an MoE GEMM (humming.ops.moe).
//
// An MoE GEMM runs as the dense GEMM of the routed rows: the (token, expert) pairs sorted by expert, each
// expert's run padded to whole blocks of BM rows (the GEMM tile's), each block naming its expert.
//
//   moe_route   (one CTA): counts each expert's pairs, scans their blocks, and writes each block's expert
//                (-1 past the used ones), each pair's row (num_rows for an expert held elsewhere, id < 0),
//                and each row's pair (-1: padding). A pair's place inside its expert's run is the order of
//                an atomic counter: rows are independent in the GEMM, so the results do not depend on it.
//   moe_gather  (a warp per row): the routed rows of the activations, 16-bit values copied from the pair's
//                token row (x [M, K]: row pair / topk; x [M, topk, K]: row pair), zeros in the padding rows;
//                with PERM (act order: a K permutation per expert) in the column order of the block's expert.
//   moe_act     (a thread per output column, rows strided over gridDim.y): the gated activation of an MLP's
//                gate/up rows [rows, 2I] -> [rows, I] in fp32 (ACT 0 silu(gate) up, 1 tanh-GELU(gate) up,
//                2 gpt-oss's clamped SwiGLU (up + 1) gate sigmoid(alpha gate)), the gate the first half of a
//                row or (INTERLEAVED) its even columns; rounded once to 16 bits.
//   moe_combine (a thread per output column, token rows strided over gridDim.y): the pairs' rows of the GEMM's output gathered back, times
//                their top-k weight (Cfg::WEIGHTED), summed over the token's pairs in fp32 (Cfg::REDUCE);
//                a pair of an absent expert contributes zeros (direct routing, ids given: one outside [0, E)).
//
// Programmatic dependent launch (sm_90+; humming.ops.moe launches them so where the GEMM's launcher would): each
// kernel lets the next one start launching at once and waits for the previous one before its first access to
// global memory, so a call's launches overlap each other's start and drain, nothing more. (The wait covers the
// kernels before the previous one too: that one could not finish before its own wait returned.)
//
// Config (struct C): THREADS; moe_route: IDS64 (int64 ids), XOFF (src as offsets in x); moe_gather: VEC (16-byte copies: K, the row
// strides and both bases multiples of 8 elements; not with PERM), PERM (each expert's column order); moe_act:
// OUT_BF16, ACT, INTERLEAVED; moe_combine: OUT_BF16, WEIGHTED, REDUCE.
#pragma once

#include "humming/common.cuh"
#include "humming/gemm/ptx.cuh"

namespace humming {

// The start of every kernel here (see the header's note on programmatic launch).
HUMMING_DEVICE void moe_pdl_enter() {
  ptx::pdl_launch_dependents();
  ptx::pdl_wait();
}

struct MoeRouteParams {
  const void* ids;   // [n] int32 (int64 with IDS64): each pair's expert, < 0 for one held elsewhere
  i64* rows;         // [n] out: each pair's row among the routed rows (num_rows = max_blocks * bm: none)
  int* expert_ids;   // [max_blocks] out: each block's expert, -1 past the used blocks
  int* src;          // [max_blocks * bm] out: each row's pair, -1 for a padding row
  int n;             // pairs (tokens x topk)
  int experts;       // E (the kernel's dynamic shared memory holds 2 E ints)
  int bm;            // rows per block
  int max_blocks;    // the host's static bound on the blocks (humming.ops.moe.max_blocks)
  // XOFF: src holds each row's element offset in x instead of its pair, (pair / div) x ldx, and for a padding row
  // -1 - (r mod x's rows) x ldx: the GEMM then reads the routed rows from x itself (GemmParams::x_rows, XGATHER)
  int div, ldx;
};

struct MoeGatherParams {
  const u16* x;      // token rows, 16-bit values, row stride ldx
  u16* xs;           // [num_rows, k] out, row stride ldxs
  const int* src;    // [num_rows]: moe_route's
  const i64* map;    // or null; else pair i's row of x is map[i] (another routing's rows: an MLP's second GEMM)
  int num_rows;
  int k;             // values per row
  int ldx, ldxs;     // row strides in values
  int div;           // pairs per row of x: topk for x [M, K], 1 for x [M, topk, K] (and with map)
  // PERM: row r's column c is x's column perm[e * k + c] of its token row, e = expert_ids[r / bm] the expert of
  // its block; an index of kx or more (x's columns: the gaps of padded scale groups) reads a zero
  const int* perm;        // [E, k] int32
  const int* expert_ids;  // [num_rows / bm]: moe_route's
  int bm, kx;
};

struct MoeActParams {
  const u16* y;      // [rows, 2 inter] gate/up rows, 16-bit, row stride ldy
  u16* a;            // [rows, inter] out
  int rows, inter, ldy;
  float alpha, limit;  // ACT 2
};

struct MoeCombineParams {
  const u16* ys;     // [num_rows, n] the GEMM's output (16-bit), row stride ldy
  const i64* rows;   // [m * topk]: moe_route's
  const float* w;    // [m * topk] top-k weights (WEIGHTED), fp32
  u16* y;            // out: [m, n] (REDUCE) or [m, topk, n], rows of n values
  int m, topk, n;
  int ldy;
  int num_rows;
  const int* ids;    // or null; else each pair's expert (direct routing: rows are fixed, not the routing's), and a
  int experts;       // pair whose expert is outside [0, experts) contributes zeros (the GEMM skipped its block)
};

template <class C>
HUMMING_DEVICE int moe_id(const MoeRouteParams& p, int i) {
  if constexpr (C::IDS64) {
    const i64 v = static_cast<const i64*>(p.ids)[i];
    return v < 0 ? -1 : v >= p.experts ? p.experts : static_cast<int>(v);
  } else {
    return static_cast<const int*>(p.ids)[i];
  }
}

template <class C>
HUMMING_DEVICE void moe_route(const MoeRouteParams& p) {
  moe_pdl_enter();
  constexpr int T = C::THREADS;
  static_assert(T % 32 == 0 && T <= 1024, "moe_route: whole warps, at most 32 of them");
  extern __shared__ int route_smem[];
  int* count = route_smem;              // [E] pairs per expert
  int* cursor = route_smem + p.experts;  // [E] the next row of each expert
  __shared__ int warp_part[32];
  __shared__ int total_blocks;
  const int tid = threadIdx.x, E = p.experts;
  const int num_rows = p.max_blocks * p.bm;
  for (int e = tid; e < E; e += T) count[e] = 0;
  // (XOFF: a padding row -1 - o, o the offset of token row r mod the rows of x, so that padding rows the GEMM
  // copies do not all read one address)
  const int x_rows = p.n / p.div > 0 ? p.n / p.div : 1;
  for (int r = tid; r < num_rows; r += T) p.src[r] = C::XOFF ? -1 - r % x_rows * p.ldx : -1;
  if (tid == 0) total_blocks = 0;
  __syncthreads();
  for (int i = tid; i < p.n; i += T) {
    const int e = moe_id<C>(p, i);
    if (e >= 0 && e < E) atomicAdd(&count[e], 1);
  }
  __syncthreads();
  // an exclusive scan of the experts' blocks: each thread a run of C experts, the runs' sums scanned by warps
  const int per = (E + T - 1) / T, e0 = tid * per, e1 = e0 + per < E ? e0 + per : E;
  int mine = 0;
  for (int e = e0; e < e1; ++e) mine += (count[e] + p.bm - 1) / p.bm;
  const int lane = tid & 31, warp = tid >> 5;
  int incl = mine;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const int v = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += v;
  }
  if (lane == 31) warp_part[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    const int w = lane < T / 32 ? warp_part[lane] : 0;
    int wi = w;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int v = __shfl_up_sync(0xffffffffu, wi, o);
      if (lane >= o) wi += v;
    }
    if (lane < T / 32) warp_part[lane] = wi - w;  // (exclusive: the blocks of the warps before)
  }
  __syncthreads();
  int block = warp_part[warp] + incl - mine;  // this thread's first block
  for (int e = e0; e < e1; ++e) {
    const int b = (count[e] + p.bm - 1) / p.bm;
    cursor[e] = block * p.bm;
    for (int j = 0; j < b; ++j) p.expert_ids[block + j] = e;
    block += b;
  }
  if (e0 < E && e1 == E) total_blocks = block;  // (the thread of the last expert)
  __syncthreads();
  for (int b = total_blocks + tid; b < p.max_blocks; b += T) p.expert_ids[b] = -1;
  for (int i = tid; i < p.n; i += T) {
    const int e = moe_id<C>(p, i);
    i64 r = num_rows;
    if (e >= 0 && e < E) {
      r = atomicAdd(&cursor[e], 1);
      p.src[r] = C::XOFF ? i / p.div * p.ldx : i;
    }
    p.rows[i] = r;
  }
}

template <class C>
HUMMING_DEVICE void moe_gather(const MoeGatherParams& p) {
  moe_pdl_enter();
  const int row = static_cast<int>(blockIdx.x) * (C::THREADS / 32) + static_cast<int>(threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= p.num_rows) return;
  int s = p.src[row];
  u16* dst = p.xs + static_cast<i64>(row) * p.ldxs;
  const u16* from = nullptr;
  if (s >= 0) from = p.x + (p.map ? p.map[s] : static_cast<i64>(s / p.div)) * p.ldx;
  if constexpr (C::PERM) {
    static_assert(!C::VEC, "moe_gather: PERM copies value by value");
    const int e = s >= 0 ? p.expert_ids[row / p.bm] : -1;
    const int* cols = p.perm + static_cast<i64>(e < 0 ? 0 : e) * p.k;
    for (int c = lane; c < p.k; c += 32) {
      const int j = e >= 0 ? __ldg(cols + c) : p.kx;
      dst[c] = j < p.kx ? from[j] : static_cast<u16>(0);
    }
  } else if constexpr (C::VEC) {
    uint4* d = reinterpret_cast<uint4*>(dst);
    for (int c = lane; c < p.k / 8; c += 32)
      d[c] = s >= 0 ? ld_global_nc_v4(from + 8 * c) : make_uint4(0, 0, 0, 0);
  } else {
    for (int c = lane; c < p.k; c += 32) dst[c] = s >= 0 ? from[c] : static_cast<u16>(0);
  }
}

template <class C>
HUMMING_DEVICE void moe_act(const MoeActParams& p) {
  moe_pdl_enter();
  const int col = static_cast<int>(blockIdx.x) * C::THREADS + static_cast<int>(threadIdx.x);
  if (col >= p.inter) return;
  for (int r = blockIdx.y; r < p.rows; r += gridDim.y) {
    const u16* row = p.y + static_cast<i64>(r) * p.ldy;
    const u16 hg = row[C::INTERLEAVED ? 2 * col : col], hu = row[C::INTERLEAVED ? 2 * col + 1 : p.inter + col];
    float g = C::OUT_BF16 ? bf16_to_float(hg) : half_to_float(hg);
    float u = C::OUT_BF16 ? bf16_to_float(hu) : half_to_float(hu);
    float v;
    if constexpr (C::ACT == 0) {
      v = g / (1.f + __expf(-g)) * u;
    } else if constexpr (C::ACT == 1) {
      v = 0.5f * g * (1.f + tanhf(0.7978845608028654f * (g + 0.044715f * g * g * g))) * u;
    } else {
      g = fminf(g, p.limit);
      u = fminf(fmaxf(u, -p.limit), p.limit);
      v = (u + 1.f) * g / (1.f + __expf(-p.alpha * g));
    }
    p.a[static_cast<i64>(r) * p.inter + col] = C::OUT_BF16 ? float_to_bf16(v) : float_to_half(v);
  }
}

template <class C>
HUMMING_DEVICE void combine_row(const MoeCombineParams& p, int m, int col);

template <class C>
HUMMING_DEVICE void moe_combine(const MoeCombineParams& p) {
  moe_pdl_enter();
  const int col = static_cast<int>(blockIdx.x) * C::THREADS + static_cast<int>(threadIdx.x);
  if (col >= p.n) return;
  for (int m = blockIdx.y; m < p.m; m += gridDim.y) combine_row<C>(p, m, col);
}

template <class C>
HUMMING_DEVICE void combine_row(const MoeCombineParams& p, int m, int col) {
  float acc = 0.f;
  for (int j = 0; j < p.topk; ++j) {
    const int pair = m * p.topk + j;
    const i64 r = p.rows[pair];
    float v = 0.f;
    if (r < p.num_rows && (!p.ids || static_cast<unsigned>(p.ids[pair]) < static_cast<unsigned>(p.experts))) {
      const u16 h = p.ys[r * p.ldy + col];
      v = C::OUT_BF16 ? bf16_to_float(h) : half_to_float(h);
      if constexpr (C::WEIGHTED) v *= p.w[pair];
    }
    if constexpr (C::REDUCE) {
      acc += v;
    } else {
      p.y[static_cast<i64>(pair) * p.n + col] = C::OUT_BF16 ? float_to_bf16(v) : float_to_half(v);
    }
  }
  if constexpr (C::REDUCE) p.y[static_cast<i64>(m) * p.n + col] = C::OUT_BF16 ? float_to_bf16(acc) : float_to_half(acc);
}

}  // namespace humming
