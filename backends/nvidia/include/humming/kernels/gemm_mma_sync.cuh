// humming/kernels/gemm_mma_sync.cuh -- dense GEMM y = x @ W^T on mma.sync (sm_75+).
//
// Slots (each a compile-time choice in Cfg, chosen by the planner):
//   loader     : CP_ASYNC ? multi-stage cp.async pipeline : plain loads (sm_75)
//   dequantizer: gemm/dequant.cuh (int_bittrick / float_rebias, group scales, zero points)
//   mma        : m16n8k16 (f16 or bf16), or 2 x m16n8k8 (K8MMA, Turing)
//   scheduler  : data-parallel tiles over (N, M) x split-K over gridDim.z; split-K
//                partials are reduced in fp32, in a fixed order, by the last CTA of
//                each tile (deterministic, no second kernel)
//   epilogue   : fp32 x out_mul x channel scale x activation scale + bias -> fp16/bf16
//
// Weights are the A operand (N maps to MMA rows), activations the B operand
// (tokens map to the MMA's n = 8), so a decode batch of 1-8 tokens wastes no rows.
//
// Cfg: BM BN BK WM WN WK STAGES | BITS WFLOAT FEXP FMAN OFFSET ZP GSCALE GROUP GS_ROWS |
//      BF16 OUT_BF16 HAS_CHAN ACT_SCALE HAS_BIAS CP_ASYNC K8MMA THREADS
#pragma once
#include "humming/common.cuh"
#include "humming/gemm/dequant.cuh"
#include "humming/gemm/layout.cuh"
#include "humming/gemm/ptx.cuh"

namespace humming {

struct GemmParams {
  const void* x;          // activations [M, lda], 16-bit
  const u32* w;           // packed weights [Np/16][Kp/64][BITS][32]
  const void* sz;         // group scales [groups][Np]: u16 scale, or u32 (scale, aux) with zero points
  const float* chan;      // [Np] per-channel multiplier (channel scale x global), or null
  const float* act_scale; // [M] per-token or [1] per-tensor activation scale, or null
  const float* bias;      // [N] fp32, or null
  void* y;                // output [M, ldy], 16-bit
  float* ws;              // split-K partials [gridDim.z][M][Np]
  int* counters;          // split-K arrival counters [m_tiles * n_tiles], zero between launches
  int M, N, K;            // logical problem
  int Np, Kp;             // padded weight (multiples of 16 and 64)
  int lda, ldy;           // row strides in elements
  int groups;             // rows of sz
  int k_steps_per_split;  // BK steps per gridDim.z slice
  float out_mul;          // global multiplier (tensor scale, exponent re-bias)
};

template <typename Cfg>
struct GemmMmaSync {
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  static constexpr int WM = Cfg::WM, WN = Cfg::WN, WK = Cfg::WK;
  static constexpr int STAGES = Cfg::STAGES;
  static constexpr int BITS = Cfg::BITS;
  static constexpr int THREADS = 32 * WM * WN * WK;
  static constexpr int TM = BM / WM;       // tokens per warp
  static constexpr int TN = BN / WN;       // weight rows per warp
  static constexpr int KB = BK / 64;       // 64-column blocks per stage
  static constexpr int KBW = KB / WK;      // ... per warp
  static constexpr int NT = TN / 16;       // 16-row blocks per warp
  static constexpr int MT = TM / 8;        // 8-token groups per warp
  static constexpr int SZB = Cfg::ZP ? 4 : 2;  // bytes per group-scale entry
  static constexpr int GS_ROWS = Cfg::GSCALE ? Cfg::GS_ROWS : 0;
  static_assert(Cfg::THREADS == THREADS, "THREADS must be 32 * WM * WN * WK");
  static_assert(BM % (8 * WM) == 0 && BN % (16 * WN) == 0 && BK % 64 == 0 && KB % WK == 0, "tile shape");
  static_assert(!Cfg::GSCALE || Cfg::GROUP % 16 == 0, "group scales need groups of a multiple of 16");

  static constexpr int A_BYTES = BM * BK * 2;
  static constexpr int W_BYTES = (BN / 16) * KB * BITS * 128;
  static constexpr int S_BYTES = GS_ROWS * BN * SZB;
  static constexpr int STAGE_BYTES = A_BYTES + W_BYTES + S_BYTES;
  static constexpr int BN_PAD = BN + 4;
  static constexpr int RED_BYTES = BM * BN_PAD * 4;
  static constexpr int SMEM_BYTES = (STAGE_BYTES * STAGES > RED_BYTES) ? STAGE_BYTES * STAGES : RED_BYTES;
  static_assert(A_BYTES % 16 == 0 && W_BYTES % 16 == 0 && S_BYTES % 16 == 0, "16-byte aligned stage parts");

  using DQ = dequant::Dequant<Cfg>;

  // ------------------------------------------------------------------ loading
  static HUMMING_DEVICE void copy16(u32 dst, const void* src, bool valid, u64 policy) {
    if constexpr (Cfg::CP_ASYNC) {
      if (policy) ptx::cp_async16_stream(dst, src, valid ? 16 : 0, policy);
      else ptx::cp_async16(dst, src, valid ? 16 : 0);
    } else {
      uint4 v;
      v.x = v.y = v.z = v.w = 0u;
      if (valid) v = *reinterpret_cast<const uint4*>(src);
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y), "r"(v.z),
                   "r"(v.w));
    }
  }

  static HUMMING_DEVICE void load_stage(const GemmParams& p, char* smem, int stage, int kstep, int m0, int n0,
                                        u64 wpolicy) {
    const int tid = threadIdx.x;
    char* base = smem + stage * STAGE_BYTES;
    const int k0 = kstep * BK;
    // activations: BM rows x BK/8 chunks, chunk c of row r stored at c ^ (r & 7)
    {
      const u32 a_s = ptx::smem_addr(base);
      const u16* x = static_cast<const u16*>(p.x);
      constexpr int CPR = BK / 8;
#pragma unroll
      for (int c = tid; c < BM * CPR; c += THREADS) {
        const int r = c / CPR, cc = c % CPR;
        const int m = m0 + r, k = k0 + cc * 8;
        const bool ok = (m < p.M) && (k < p.K);
        const u16* src = ok ? x + static_cast<i64>(m) * p.lda + k : x;
        copy16(a_s + (r * CPR + (cc ^ (r & 7))) * 16, src, ok, 0);
      }
    }
    // weights: (BN/16) x KB blocks of BITS*128 bytes
    {
      const u32 w_s = ptx::smem_addr(base + A_BYTES);
      constexpr int CPB = BITS * 8;  // 16-byte chunks per block
      const int kblocks = p.Kp / 64;
#pragma unroll
      for (int c = tid; c < (BN / 16) * KB * CPB; c += THREADS) {
        const int blk = c / CPB, cc = c % CPB;
        const int nb = n0 / 16 + blk / KB, kb = k0 / 64 + blk % KB;
        const bool ok = (nb < p.Np / 16) && (kb < kblocks);
        const u32* src = ok ? p.w + (static_cast<i64>(nb) * kblocks + kb) * (BITS * 32) + cc * 4 : p.w;
        copy16(w_s + c * 16, src, ok, wpolicy);
      }
    }
    // group scales: GS_ROWS rows of BN entries, starting at group k0 / GROUP
    if constexpr (Cfg::GSCALE) {
      const u32 s_s = ptx::smem_addr(base + A_BYTES + W_BYTES);
      const char* sz = static_cast<const char*>(p.sz);
      constexpr int CPR = BN * SZB / 16;
      const int g0 = k0 / Cfg::GROUP;
#pragma unroll
      for (int c = tid; c < GS_ROWS * CPR; c += THREADS) {
        const int r = c / CPR, cc = c % CPR;
        const int g = g0 + r;
        const int nbyte = n0 * SZB + cc * 16;
        const bool ok = (g < p.groups) && (nbyte < p.Np * SZB);
        const char* src = ok ? sz + (static_cast<i64>(g) * p.Np) * SZB + nbyte : sz;
        copy16(s_s + c * 16, src, ok, 0);
      }
    }
  }

  // ------------------------------------------------------------------ compute
  static HUMMING_DEVICE void compute_stage(const char* base, int k0, float (&acc)[NT][MT][4], int wm, int wn,
                                           int wk, int lane) {
    const u32 a_s = ptx::smem_addr(base);
    const u32* w_s = reinterpret_cast<const u32*>(base + A_BYTES);
    const char* s_s = base + A_BYTES + W_BYTES;
    const int g = lane >> 2;
    const int g0 = Cfg::GSCALE ? k0 / Cfg::GROUP : 0;
#pragma unroll
    for (int kbw = 0; kbw < KBW; ++kbw) {
      const int kb = wk * KBW + kbw;
      u32 a[NT][4][4];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int blk = (wn * NT + nt) * KB + kb;
        u32 w[BITS];
#pragma unroll
        for (int i = 0; i < BITS; ++i) w[i] = w_s[(blk * BITS + i) * 32 + lane];
        u32 s[4][2], aux[4][2];
#pragma unroll
        for (int kt = 0; kt < 4; ++kt) {
          if constexpr (Cfg::GSCALE) {
            const int gi = (k0 + kb * 64 + kt * 16) / Cfg::GROUP - g0;
            const int col = (wn * NT + nt) * 16 + g;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              if constexpr (Cfg::ZP) {
                const u32 v = *reinterpret_cast<const u32*>(s_s + (gi * BN + col + 8 * h) * 4);
                s[kt][h] = ptx::dup2(v);
                aux[kt][h] = ptx::dup2(v >> 16);
              } else {
                const u32 v = *reinterpret_cast<const u16*>(s_s + (gi * BN + col + 8 * h) * 2);
                s[kt][h] = ptx::dup2(v);
                aux[kt][h] = 0;
              }
            }
          } else {
            s[kt][0] = s[kt][1] = aux[kt][0] = aux[kt][1] = 0;
          }
        }
        DQ::template tile<0>(w, a[nt][0], s[0][0], s[0][1], aux[0][0], aux[0][1]);
        DQ::template tile<1>(w, a[nt][1], s[1][0], s[1][1], aux[1][0], aux[1][1]);
        DQ::template tile<2>(w, a[nt][2], s[2][0], s[2][1], aux[2][0], aux[2][1]);
        DQ::template tile<3>(w, a[nt][3], s[3][0], s[3][1], aux[3][0], aux[3][1]);
      }
#pragma unroll
      for (int kt = 0; kt < 4; ++kt) {
        u32 b[MT][2];
        const int chunk0 = kb * 8 + kt * 2;
        constexpr int CPR = BK / 8;
        if constexpr (MT % 2 == 0) {
#pragma unroll
          for (int mt = 0; mt < MT; mt += 2) {
            const int i = lane >> 3;
            const int row = wm * TM + (mt + (i >> 1)) * 8 + (lane & 7);
            const int chunk = chunk0 + (i & 1);
            u32 r[4];
            ptx::ldmatrix_x4(r, a_s + (row * CPR + (chunk ^ (row & 7))) * 16);
            b[mt][0] = r[0];
            b[mt][1] = r[1];
            b[mt + 1][0] = r[2];
            b[mt + 1][1] = r[3];
          }
        } else {
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            const int i = (lane >> 3) & 1;
            const int row = wm * TM + mt * 8 + (lane & 7);
            const int chunk = chunk0 + i;
            u32 r[2];
            ptx::ldmatrix_x2(r, a_s + (row * CPR + (chunk ^ (row & 7))) * 16);
            b[mt][0] = r[0];
            b[mt][1] = r[1];
          }
        }
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            if constexpr (Cfg::K8MMA) ptx::mma_m16n8k16_as_2xk8(acc[nt][mt], a[nt][kt], b[mt]);
            else ptx::mma_m16n8k16<Cfg::BF16>(acc[nt][mt], a[nt][kt], b[mt]);
          }
        }
      }
    }
  }

  // ------------------------------------------------------------------ epilogue
  static HUMMING_DEVICE float ld_cg(const float* q) {  // L2 only: other CTAs wrote it
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];\n" : "=f"(v) : "l"(q));
    return v;
  }

  static HUMMING_DEVICE float finish(const GemmParams& p, float v, int m, int n) {
    v *= p.out_mul;
    if constexpr (Cfg::HAS_CHAN) v *= p.chan[n];
    if constexpr (Cfg::ACT_SCALE == 1) v *= p.act_scale[m];
    if constexpr (Cfg::ACT_SCALE == 2) v *= p.act_scale[0];
    if constexpr (Cfg::HAS_BIAS) v += p.bias[n];
    return v;
  }

  static HUMMING_DEVICE void store_out(const GemmParams& p, int m, int n, float v0, float v1) {
    u16* y = static_cast<u16*>(p.y) + static_cast<i64>(m) * p.ldy + n;
    const u32 pr = ptx::pack2<Cfg::OUT_BF16>(v0, v1);
    if (n + 1 < p.N && ((p.ldy & 1) == 0)) {
      *reinterpret_cast<u32*>(y) = pr;
    } else {
      y[0] = static_cast<u16>(pr & 0xffffu);
      if (n + 1 < p.N) y[1] = static_cast<u16>(pr >> 16);
    }
  }

  static HUMMING_DEVICE void run(const GemmParams& p) {
    extern __shared__ __align__(16) char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wk = warp / (WM * WN), wmn = warp % (WM * WN);
    const int wm = wmn / WN, wn = wmn % WN;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM;
    const int ksteps = (p.Kp + BK - 1) / BK;
    const int ks_begin = blockIdx.z * p.k_steps_per_split;
    const int ks_end = ksteps < ks_begin + p.k_steps_per_split ? ksteps : ks_begin + p.k_steps_per_split;
    const int nsteps = ks_end > ks_begin ? ks_end - ks_begin : 0;

    u64 wpolicy = 0;
    if constexpr (Cfg::CP_ASYNC) wpolicy = ptx::evict_first_policy();

    float acc[NT][MT][4];
#pragma unroll
    for (int i = 0; i < NT; ++i)
#pragma unroll
      for (int j = 0; j < MT; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

    // ---- main loop: STAGES-deep pipeline
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < nsteps) load_stage(p, smem, s, ks_begin + s, m0, n0, wpolicy);
      if constexpr (Cfg::CP_ASYNC) ptx::cp_async_commit();
    }
    for (int it = 0; it < nsteps; ++it) {
      if constexpr (Cfg::CP_ASYNC) ptx::cp_async_wait<STAGES - 2>();
      __syncthreads();
      const int nxt = it + STAGES - 1;
      if (nxt < nsteps) load_stage(p, smem, nxt % STAGES, ks_begin + nxt, m0, n0, wpolicy);
      if constexpr (Cfg::CP_ASYNC) ptx::cp_async_commit();
      compute_stage(smem + (it % STAGES) * STAGE_BYTES, (ks_begin + it) * BK, acc, wm, wn, wk, lane);
    }
    if constexpr (Cfg::CP_ASYNC) ptx::cp_async_wait<0>();
    __syncthreads();

    // ---- reduce the WK warp slices into a BM x BN fp32 tile, in a fixed order
    float* red = reinterpret_cast<float*>(smem);
    const int g = lane >> 2, t = lane & 3;
#pragma unroll 1
    for (int w = 0; w < WK; ++w) {
      if (wk == w) {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              const int n = wn * TN + nt * 16 + g + 8 * (q >> 1);
              const int m = wm * TM + mt * 8 + 2 * t + (q & 1);
              float* dst = red + m * BN_PAD + n;
              *dst = (w == 0) ? acc[nt][mt][q] : *dst + acc[nt][mt][q];
            }
      }
      __syncthreads();
    }

    // ---- split-K: publish the partial tile; the last CTA of the tile reduces in order
    if (gridDim.z > 1) {
      __shared__ int last;
      for (int i = tid; i < BM * BN; i += THREADS) {
        const int m = i / BN, n = i % BN;
        if (m0 + m < p.M && n0 + n < p.Np)
          p.ws[(static_cast<i64>(blockIdx.z) * p.M + m0 + m) * p.Np + n0 + n] = red[m * BN_PAD + n];
      }
      __threadfence();
      __syncthreads();
      if (tid == 0) {
        int* ctr = p.counters + blockIdx.y * gridDim.x + blockIdx.x;
        const int prev = atomicAdd(ctr, 1);
        last = (prev == static_cast<int>(gridDim.z) - 1);
        if (last) *ctr = 0;  // ready for the next launch (and graph replays)
      }
      __syncthreads();
      if (!last) return;
      __threadfence();
      for (int i = tid; i < BM * BN; i += THREADS) {
        const int m = i / BN, n = i % BN;
        if (m0 + m < p.M && n0 + n < p.Np) {
          float v = 0.0f;
          for (int z = 0; z < static_cast<int>(gridDim.z); ++z)
            v += ld_cg(p.ws + (static_cast<i64>(z) * p.M + m0 + m) * p.Np + n0 + n);
          red[m * BN_PAD + n] = v;
        }
      }
      __syncthreads();
    }

    // ---- epilogue: pairs along N, coalesced
    for (int i = tid; i < BM * (BN / 2); i += THREADS) {
      const int m = i / (BN / 2), n = 2 * (i % (BN / 2));
      const int gm = m0 + m, gn = n0 + n;
      if (gm < p.M && gn < p.N) {
        const float v0 = finish(p, red[m * BN_PAD + n], gm, gn);
        const float v1 = (gn + 1 < p.N) ? finish(p, red[m * BN_PAD + n + 1], gm, gn + 1) : 0.0f;
        store_out(p, gm, gn, v0, v1);
      }
    }
  }
};

template <typename Cfg>
HUMMING_DEVICE void gemm_mma_sync(const GemmParams& p) {
  GemmMmaSync<Cfg>::run(p);
}

}  // namespace humming
