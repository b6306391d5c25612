// humming/kernels/gemm_mma_sync.cuh -- dense GEMM y = x @ W^T on mma.sync (sm_75+).
//
// Slots (each a compile-time choice in Cfg, chosen by the planner):
//   loader     : CP_ASYNC ? multi-stage cp.async pipeline : plain loads (sm_75)
//   dequantizer: gemm/dequant.cuh (int_bittrick / float_rebias, group scales, zero points;
//                DequantBytes for byte operands)
//   mma        : m16n8k16 (f16 or bf16), or 2 x m16n8k8 (K8MMA, Turing); OP8: m16n8k32 on
//                byte operands (int8 into int32 partial sums, fp8 into fp32), m16n8k64 on
//                int4 operands (OP8 == 4, into int32)
//   scheduler  : data-parallel tiles over (N, M) x split-K over gridDim.z; split-K
//                partials are reduced in fp32, in a fixed order, by the last CTA of
//                each tile (deterministic, no second kernel); or (SK, cp.async warpgroup
//                tiles) stream-K: equal runs of the (tile, K step) space per resident CTA,
//                a cut tile summed in K order by its first CTA (run_wg_sk)
//   epilogue   : fp32 x out_mul x channel scale x activation scale + bias -> fp16/bf16
//
// Weights are the A operand (N maps to MMA rows), activations the B operand
// (tokens map to the MMA's n = 8), so a decode batch of 1-8 tokens wastes no rows.
//
// Cfg: BM BN BK WM WN WK STAGES | BITS WFLOAT FEXP FMAN OFFSET ZP GSCALE GROUP GS_ROWS |
//      BF16 OUT_BF16 HAS_CHAN ACT_SCALE HAS_BIAS CP_ASYNC K8MMA OP8 THREADS
#pragma once
#include "humming/common.cuh"
#include "humming/gemm/dequant.cuh"
#include "humming/gemm/layout.cuh"
#include "humming/gemm/ptx.cuh"
#include "humming/gemm/tma.cuh"
#include "humming/gemm/wgmma.cuh"

namespace humming {

struct GemmParams {
  const void* x;          // activations [M, lda]: 16-bit values, or int8 / fp8 / packed int4 codes (OP8)
  const u32* w;           // packed weights [Np/16][Kp/64][BITS][32]
  const void* sz;         // group scales [groups][Np]: u16 scale, or u32 (scale, aux) with zero points
  const float* chan;      // [Np] per-channel multiplier (channel scale x global), or null
  const float* act_scale; // [M] per-token or [1] per-tensor activation scale, [groups, M rounded up to 4] by
                          // group (ACT_SCALE 3), or null
  const float* bias;      // [N] fp32, or null
  void* y;                // output [M, ldy], 16-bit
  float* ws;              // split-K partials [gridDim.z][M][Np]
  int* counters;          // split-K arrival counters [m_tiles * n_tiles], zero between launches
  int M, N, K;            // logical problem (K, Kp, lda in 16-bit units: 2 values for OP8 1-3, 4 for 4)
  int Np, Kp;             // padded weight (multiples of 16 and 128 units)
  int lda, ldy;           // row strides in elements (units)
  int groups;             // rows of sz
  int k_steps_per_split;  // BK steps per gridDim.z slice
  float out_mul;          // global multiplier (tensor scale, exponent re-bias)
  u64* trace;             // HUMMING_TRACE builds: 16 words per CTA (ptx::trace_at), or null
  int tma_rows;           // TMA tiles: rows of the tensor map's box, min(BM, M) (CLUSTER > 1: each CTA's
                          // share of them, rounded up to 8 rows)
  int early_w;            // cp.async warpgroup tiles: the launch goes programmatically, so a split one
                          // copies its first stages' weights before the wait too (unsplit ones always do)
  TensorMap tmap;         // TMA warpgroup tiles: the activations [M, K] as a 2D tensor map (the host's),
                          // at byte 128 (the next 64-byte boundary; the entry checks the struct's size)
  // MoE GEMM (Cfg::MOE): the rows are the routed (token, expert) pairs sorted by expert, each expert's run
  // padded to whole BM-row blocks; block b of rows multiplies expert expert_ids[b] (-1: an unused block,
  // whose CTAs return at once). The weights, scales, channel multipliers and bias are the experts' stacked,
  // each expert's this many elements after the previous one's.
  const int* expert_ids;  // [gridDim.y], or null (dense)
  i64 w_estride;          // u32 words of packed weights per expert
  i64 sz_estride;         // bytes of group scales per expert
  int chan_estride;       // floats of channel multipliers per expert
  int bias_estride;       // floats of bias per expert
  // Cfg::XGATHER (MoE, 16-bit activations): routed row r is read from x at element offset x_rows[r] (the token's
  // row, moe_route's XOFF). A padding row holds -1 - o, o the offset of some row of x: the rings and stage_x skip
  // it (its shared row keeps stale values), the cp.async loaders copy row o (a predicate more in their setup
  // spilled the 256-token tiles); either way no one reads its results, rows being independent, and padding rows
  // do not all read one address. null: the rows of x in order, as without XGATHER.
  const int* x_rows;      // [M], or null
  int experts;            // MoE: E; a block's expert outside [0, E) (-1: unused, or held elsewhere) returns at once
                          // (humming.ops.moe's direct routing passes the caller's ids as expert_ids)
};

// (configs name only the fields they use: HUMMING_CFG_FIELD_OR_ZERO, common.cuh)
HUMMING_CFG_FIELD_OR_ZERO(MoeOf, MOE)          // (0: dense)
HUMMING_CFG_FIELD_OR_ZERO(XgatherOf, XGATHER)  // (0: the rows of x in order)
HUMMING_CFG_FIELD_OR_ZERO(AGroupOf, AGROUP)    // (ACT_SCALE 3 only)
HUMMING_CFG_FIELD_OR_ZERO(KgOf, KG)            // (0: one group of warps along K)

template <typename Cfg>
struct GemmMmaSync {
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  static constexpr int WM = Cfg::WM, WN = Cfg::WN, WK = Cfg::WK;
  static constexpr int STAGES = Cfg::STAGES;
  static constexpr int BITS = Cfg::BITS;
  // Operands: 0 fp16/bf16 (m16n8k16); bytes (m16n8k32): 1 int8 (s32 accumulators), 2 e4m3, 3 e5m2;
  // 4 int4 (m16n8k64, s32). The kernel counts K in 16-bit units: one value of a 16-bit
  // operand, two of a byte operand, four of an int4 one. A block (16 rows x 64 units) and
  // an activation row's 128 bytes per block are the same either way; a lane holds WPL
  // words of a block.
  static constexpr int OP8 = Cfg::OP8;
  static constexpr bool BYTES = OP8 != 0;  // (sub-16-bit operands: bytes or nibbles)
  static constexpr bool INT_OP = OP8 == 1 || OP8 == 4;  // integer MMAs: int32 partial sums
  static constexpr int KU = OP8 == 4 ? 4 : BYTES ? 2 : 1;  // K values per unit
  static constexpr int WPL = KU * Cfg::BITS;
  using PT = typename Sel<INT_OP, int, float>::T;  // partial sums: int32 for integer MMAs
  static constexpr int THREADS = 32 * WM * WN * WK;
  static constexpr int TM = BM / WM;       // tokens per warp
  static constexpr int TN = BN / WN;       // weight rows per warp
  static constexpr int KB = BK / 64;       // 64-column blocks per stage
  static constexpr int KBW = KB / WK;      // ... per warp
  static constexpr int NT = TN / 16;       // 16-row blocks per warp
  static constexpr int MT = TM / 8;        // 8-token groups per warp
  static constexpr int SZB = Cfg::ZP ? 4 : 2;  // bytes per group-scale entry
  static constexpr int GS_ROWS = Cfg::GSCALE ? Cfg::GS_ROWS : 0;
  // KG (cp.async warpgroup tiles, Tile.kg): groups of THREADS threads along K in one CTA, each working as a CTA of its
  // own -- its share of the CTA's K steps through stages of its own (its region of GROUP_BYTES) -- and their
  // partial tiles summed in shared memory before the epilogue (run_wg). tix(): this thread inside its group;
  // group_sync(): a barrier of its group alone (named barrier 1 + group; __syncthreads with one group).
  static constexpr int KG = KgOf<Cfg>::value > 1 ? KgOf<Cfg>::value : 1;
  static_assert(Cfg::THREADS == THREADS * KG, "THREADS must be 32 * WM * WN * WK (times KG)");
  static_assert(KG <= 4, "at most four groups along K");
  // (unsigned, as threadIdx.x: one group compiles as before; with groups the signed remainder, whose main loop of the
  // 16-token tile is one group's, 339 instructions against 338, where the unsigned one's took 387)
  static HUMMING_DEVICE unsigned tix() {
    if constexpr (KG > 1) return static_cast<unsigned>(static_cast<int>(threadIdx.x) % THREADS);
    else return threadIdx.x;
  }
  static HUMMING_DEVICE void group_sync() {
    if constexpr (KG > 1) asm volatile("bar.sync %0, %1;\n" ::"r"(1 + static_cast<int>(threadIdx.x) / THREADS), "n"(THREADS) : "memory");
    else __syncthreads();
  }
  static_assert(BM % (8 * WM) == 0 && BN % (16 * WN) == 0 && BK % 64 == 0 && KB % WK == 0, "tile shape");
  static_assert(!Cfg::GSCALE || Cfg::GROUP % 16 == 0, "group scales need groups of a multiple of 16");

  static constexpr int A_BYTES = BM * BK * 2;
  static constexpr int W_BYTES = (BN / 16) * KB * WPL * 128;
  static constexpr int S_BYTES = GS_ROWS * BN * SZB;
  // ACT_SCALE 3: a stage also holds its blocks' activation group scales of the tile's tokens, XS_ROWS rows of BM
  // fp32 (one per group the stage's blocks lie in; block kb reads row xs_row(kb)), copied like the activations
  // from scales laid out by group, [groups, M rounded up to 4] (humming.ops.act_quant's group_major)
  static constexpr int AGROUP = AGroupOf<Cfg>::value;
  static constexpr int XS_GPB = Cfg::ACT_SCALE == 3 ? AGROUP / 128 : 1;  // 64-unit blocks per group
  static constexpr int XS_ROWS = Cfg::ACT_SCALE != 3 ? 0 : KB % XS_GPB == 0 ? KB / XS_GPB : XS_GPB % KB == 0 ? 1 : KB;
  static HUMMING_DEVICE constexpr int xs_row(int kb) {
    return KB % XS_GPB == 0 ? kb / XS_GPB : XS_GPB % KB == 0 ? 0 : kb;
  }
  static HUMMING_DEVICE constexpr int xs_block(int r) { return XS_ROWS == KB ? r : r * XS_GPB; }  // row r's first block
  static constexpr int XS_BYTES = XS_ROWS * BM * 4;
  // MoE (Cfg::MOE): the expert of this CTA's block of rows, and the weights, scales, channel multipliers and
  // bias where that expert's begin (dense: the parameters' own)
  static constexpr bool MOE = MoeOf<Cfg>::value != 0;
  static HUMMING_DEVICE i64 expert(const GemmParams& p) {
    if constexpr (MOE) return __ldg(p.expert_ids + blockIdx.y);
    else return 0;
  }
  static HUMMING_DEVICE const u32* w_of(const GemmParams& p) {
    if constexpr (MOE) return p.w + expert(p) * p.w_estride;
    else return p.w;
  }
  static HUMMING_DEVICE const char* sz_of(const GemmParams& p) {
    if constexpr (MOE) return static_cast<const char*>(p.sz) + expert(p) * p.sz_estride;
    else return static_cast<const char*>(p.sz);
  }
  static HUMMING_DEVICE const float* chan_of(const GemmParams& p) {
    if constexpr (MOE) return p.chan + expert(p) * p.chan_estride;
    else return p.chan;
  }
  static HUMMING_DEVICE const float* bias_of(const GemmParams& p) {
    if constexpr (MOE) return p.bias + expert(p) * p.bias_estride;
    else return p.bias;
  }
  // XGATHER (MoE, 16-bit activations): the routed rows read from their tokens' rows of x (GemmParams::x_rows),
  // so that no gather kernel writes them first. x_row(p, r): row r's x_rows entry (negative: padding). Each is read
  // once, where a thread sets up its copies (Loader::init, stage_x), and each turn by the lean rings (XTURN), whose
  // warps skip padding rows. (Copying one row for every padding row would read one address many times over, which
  // made a 64-token tile 1.5x slower: see Loader.)
  static constexpr bool XGATHER = XgatherOf<Cfg>::value != 0;
  static_assert(!XGATHER || (MOE && Cfg::OP8 == 0 && Cfg::ACT_SCALE == 0 && !Cfg::TMA),
                "the gathering loads take the 16-bit activations of MoE launches, by cp.async or plain loads");
  static HUMMING_DEVICE int x_row(const GemmParams& p, int r) { return p.x_rows ? __ldg(p.x_rows + r) : r * p.lda; }
  // WG (sm_90a): one warpgroup MMA (m64 x BM tokens x k16) per k16 step of every four warps,
  // the weights' A fragments from registers, the activations read from shared memory in
  // 128-byte swizzle atoms (gemm/wgmma.cuh), so each stage starts on a 1024-byte boundary
  static constexpr bool WG = Cfg::WG != 0;
  static constexpr int STAGE_BYTES = WG ? (A_BYTES + W_BYTES + S_BYTES + XS_BYTES + 1023) / 1024 * 1024
                                        : A_BYTES + W_BYTES + S_BYTES + XS_BYTES;
  static constexpr int BN_PAD = BN + 4;
  static constexpr int SPLIT_U = (BM * BN / 4 + THREADS - 1) / THREADS < 4 ? (BM * BN / 4 + THREADS - 1) / THREADS : 4;
  static constexpr int RED_BYTES = BM * BN_PAD * 4;
  // TMA (WG tiles): one thread fills each stage with bulk copies completing on the stage's
  // mbarrier (gemm/tma.cuh), kept after the stages and the reduction buffer
  static constexpr bool TMA = WG && Cfg::TMA != 0;
  // stream-K (cp.async warpgroup tiles): a 1-D grid whose CTAs take equal runs of the (tile, K step)
  // space, a tile shared between CTAs summed by its first CTA once the others' parts arrive (run_wg_sk)
  static constexpr bool SK = WG && Cfg::SK != 0;
  // CLUSTER (TMA tiles, 1, 2 or 4): the CTAs of a cluster hold neighbouring row blocks of the same
  // tokens and K slice; each loads its share of every stage's activation rows and multicasts it to
  // all of them (the activations cross L2 once per cluster instead of once per CTA)
  static constexpr int CLUSTER = Cfg::CLUSTER;
  static_assert(CLUSTER == 1 || (TMA && (CLUSTER == 2 || CLUSTER == 4) && BM % (8 * CLUSTER) == 0),
                "clusters: 2 or 4 TMA warpgroup CTAs, each loading a multiple of 8 of the tile's token rows");
  static constexpr int BAR_OFF = (STAGE_BYTES * STAGES > RED_BYTES) ? STAGE_BYTES * STAGES : RED_BYTES;
  static constexpr int GROUP_BYTES = (BAR_OFF + 1023) / 1024 * 1024;  // (KG > 1: each group's stages, then its partial tile)
  static_assert(KG == 1 || (WG && !TMA && !SK && CLUSTER == 1),
                "groups along K (KG): cp.async warpgroup tiles, no TMA, stream-K or clusters");
  // (TMA: a "full" barrier per stage; with more than one warpgroup or CTA an "empty" one per stage too)
  static constexpr int SMEM_BYTES = (KG > 1 ? KG * GROUP_BYTES : BAR_OFF) + (TMA ? (WN > 4 || CLUSTER > 1 ? 128 : 64) : 0) + (WG ? 1024 : 0);
  static_assert(!TMA || STAGES <= 8, "TMA tiles: at most 8 stages (their barriers' 64 bytes)");
  static_assert(A_BYTES % 16 == 0 && W_BYTES % 16 == 0 && S_BYTES % 16 == 0 && XS_BYTES % 16 == 0,
                "16-byte aligned stage parts");

  // group scales multiply the dequantized weights (SCALE_W), or the fp32
  // partial sums of each group (SCALE_ACC: fewer operations for few tokens, and exact)
  static constexpr bool SCALE_ACC = Cfg::GSCALE && Cfg::SCALE_ACC;
  static constexpr bool SCALE_W = Cfg::GSCALE && !Cfg::SCALE_ACC;
  // With few MMA tiles per warp, one accumulator per k16 position keeps four
  // independent MMA chains in flight (an MMA waits for the previous one that
  // updates the same registers); they are summed when a group (or the slice) ends.
  // The rings (STREAM >= 3) keep one chain, except for 4-bit float codes in groups of 32 (MXFP4), whose
  // loops dequantize longest and fold every two k16 tiles: two chains there (H200, M=1, kernel alone: 5 %
  // faster on the planner's rings; int2 / int3 / int4 g128 within 1 %). (Groups of 16 fold after every
  // tile: a second chain would only add the sums.)
  static constexpr int KC = Cfg::WG ? 1
                            : Cfg::STREAM >= 3 ? ((Cfg::WFLOAT && Cfg::BITS == 4 && Cfg::GSCALE && Cfg::GROUP == 32) ? 2 : 1)
                            : (NT * MT <= 2) ? (Cfg::STREAM ? 2 : 4) : 1;
  // integer MMAs (int8, int4) always accumulate int32 partial sums, folded into the fp32
  // accumulators at the end of each group and at least every FOLD8 units (|sum| < 2^31:
  // products are below 2^14 in magnitude, so 2^16 values per fold leave room)
  static constexpr bool PARTIAL = SCALE_ACC || KC > 1 || INT_OP;
  static constexpr int FOLD8 = 1 << 15;
  static_assert(!BYTES || !SCALE_W, "byte operands take group scales on the partial sums");
  using DQ = dequant::Dequant<Cfg, SCALE_W>;
  using DQB = dequant::DequantBytes<Cfg>;

  // d += a * b on this kernel's MMA: one m16n8k16 (two m16n8k8 on Turing), one
  // m16n8k32 of byte operands (int8 into int32, fp8 into fp32), or one m16n8k64 of int4
  // operands (into int32)
  template <typename T>
  static HUMMING_DEVICE void mma(T (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
    if constexpr (OP8 == 4) ptx::mma_m16n8k64_s4(d, a, b);
    else if constexpr (OP8 == 1) ptx::mma_m16n8k32_s8(d, a, b);
    else if constexpr (OP8 == 2 || OP8 == 3) ptx::mma_m16n8k32_f8<OP8 == 3>(d, a, b);
    else if constexpr (Cfg::K8MMA) ptx::mma_m16n8k16_as_2xk8(d, a, b);
    else ptx::mma_m16n8k16<Cfg::BF16>(d, a, b);
  }

  // ------------------------------------------------------------------ loading
  // Every thread copies the same chunks of every stage, so their offsets are
  // computed once; a stage only adds the step to two base pointers.
  static constexpr int A_CPR = BK / 8;                        // 16-byte chunks per activation row
  static constexpr int A_CHUNKS = BM * A_CPR;
  static constexpr int A_IT = (A_CHUNKS + THREADS - 1) / THREADS;
  static constexpr int W_CPB = WPL * 8;                      // 16-byte chunks per 16x64 block
  static constexpr int W_CHUNKS = (BN / 16) * KB * W_CPB;
  static constexpr int W_IT = (W_CHUNKS + THREADS - 1) / THREADS;
  static constexpr int S_CPR = BN * SZB / 16;
  static constexpr int S_CHUNKS = GS_ROWS * S_CPR;
  static constexpr int S_IT = (S_CHUNKS + THREADS - 1) / THREADS;
  static constexpr int XS_CHUNKS = XS_ROWS * BM / 4;  // (ACT_SCALE 3: four tokens' scales per chunk)
  static_assert(XS_CHUNKS <= THREADS, "activation group scales: one chunk per thread at most");

  // A thread copies chunk c = tid + i * THREADS of each part of a stage. Its sources
  // are one base pointer per part (advanced by a stage's step) plus constant offsets;
  // activation rows past M are not copied (their shared rows hold stale values, whose
  // results are never stored: MMA columns are independent), and only the stage that
  // crosses K checks columns. (Copying row M - 1 for them instead made M = 33 on a
  // 64-token tile 1.5x slower than M = 64 on the H200: many copies of one address.)
  struct Loader {
    const u16* a_src;  // next global source of this thread's first activation chunk
    u32 a_rel[A_IT];   // element offset of each chunk from a_src (never negative: zero-extended, one register)
    int a_col[A_IT];   // its column inside a stage
    u32 a_dst[A_IT];   // its (swizzled) byte offset in a stage
    u32 a_live;        // bit i: chunk i's row is below M
    const u32* w_src;  // next global source of the first weight chunk
    int w_rel[W_IT];   // word offset of each chunk from w_src
    int n0;            // the tile's first weight row (read by stream-K tiles only; the others take blockIdx.x)
    int xs_tok;        // ACT_SCALE 3: the first token of this thread's scale chunk (-1: none; past M: zero-filled)
    const char* sz;    // MoE: the block's expert's group scales (dense tiles read the parameters' own)

    HUMMING_DEVICE void init(const GemmParams& p, int m0, int n0, int kstep0) {
      const int tid = tix();
      const int k0 = kstep0 * BK;
      const int kblocks = p.Kp / 64;
      this->n0 = n0;
      xs_tok = static_cast<int>(tid) < XS_CHUNKS ? m0 + (tid % (BM / 4)) * 4 : -1;
      const int row0 = m0 + tid / A_CPR < p.M ? m0 + tid / A_CPR : p.M - 1;
      // (XGATHER: offsets from x's first row; the host keeps x's elements below 2^31)
      a_src = static_cast<const u16*>(p.x) + (XGATHER ? 0 : static_cast<i64>(row0) * p.lda) + k0;
      a_live = 0;
#pragma unroll
      for (int i = 0; i < A_IT; ++i) {
        const int c = tid + i * THREADS;
        const int r = c / A_CPR, cc = c % A_CPR;
        const int row = m0 + r < p.M ? m0 + r : p.M - 1;
        a_live |= (m0 + r < p.M ? 1u : 0u) << i;
        if constexpr (XGATHER) {
          const int at = has_chunk(i, A_CHUNKS) ? x_row(p, row) : 0;
          a_rel[i] = (at < 0 ? -1 - at : at) + cc * 8;  // (a padding row: the row of x its entry names)
        } else {
          a_rel[i] = (row - row0) * p.lda + cc * 8;
        }
        // (WG: 64-column atoms of BM rows of 128 bytes, one after another)
        a_dst[i] = WG ? ((cc / 8) * BM * 128 + r * 128 + ((cc % 8) ^ (r & 7)) * 16)
                      : (r * A_CPR + (cc ^ (r & 7))) * 16;
        a_col[i] = cc * 8;
      }
      // The host pads Np to a multiple of BN and Kp to a multiple of BK, so every
      // weight chunk of every stage is in range: no checks on the hot path.
      w_src = w_of(p) + (static_cast<i64>(n0 / 16) * kblocks + k0 / 64) * (WPL * 32);
      if constexpr (MOE) sz = sz_of(p);
#pragma unroll
      for (int i = 0; i < W_IT; ++i) {
        const int c = tid + i * THREADS;
        const int blk = c / W_CPB, cc = c % W_CPB;
        const int nb = blk / KB, kb = blk % KB;
        w_rel[i] = (nb * kblocks + kb) * (WPL * 32) + cc * 4;
      }
    }
  };
  // stage offset of this thread's weight chunk i, less 16 * tid (added once per stage)
  static HUMMING_DEVICE constexpr u32 w_dst(int i) { return A_BYTES + (i * THREADS) * 16; }
  static HUMMING_DEVICE bool has_chunk(int i, int chunks) {  // chunk i of this thread exists
    return (i + 1) * THREADS <= chunks || static_cast<int>(tix()) + i * THREADS < chunks;
  }

  // 16 bytes global -> shared; `full`: all 16 bytes are in range (else zero-filled)
  static HUMMING_DEVICE void copy16(u32 dst, const void* src, bool full) {
    if constexpr (Cfg::CP_ASYNC) {
      if (full) {
        ptx::cp_async16(dst, src);
      } else {
        ptx::cp_async16_zfill(dst, src);
      }
    } else {
      uint4 v;
      v.x = v.y = v.z = v.w = 0u;
      if (full) v = *reinterpret_cast<const uint4*>(src);
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y), "r"(v.z),
                   "r"(v.w));
    }
  }

  // ACT_SCALE 3: the row of activation group scales [groups, M rounded up to 4] of the group that holds K unit
  // `ku` (past the last group: the last one, finite; the activations there are zeros)
  static HUMMING_DEVICE const float* act_scale_row(const GemmParams& p, int ku) {
    const int groups = (p.K * KU + AGROUP - 1) / AGROUP;
    const int g = ku * KU / AGROUP < groups ? ku * KU / AGROUP : groups - 1;
    return p.act_scale + static_cast<i64>(g) * ((p.M + 3) & ~3);
  }

  // Issue the copies of k-step `kstep` into `stage`, then advance the sources.
  // PARTS: LOAD_X the activations, LOAD_W the weights and their group scales (both by default; the
  // warpgroup tiles issue their first stages' weights before the wait for the previous kernel, run_wg)
  static constexpr int LOAD_X = 1, LOAD_W = 2;
  template <int PARTS = LOAD_X | LOAD_W>
  static HUMMING_DEVICE void load_stage(const GemmParams& p, Loader& L, u32 smem_base, int stage, int kstep) {
    const u32 base = smem_base + stage * STAGE_BYTES;
    const int k0 = kstep * BK;
    if constexpr (!(PARTS & LOAD_X)) {
    } else if constexpr (Cfg::CP_ASYNC) {  // predicated copies (no branches); past K: zero-filled
      const bool inside = k0 + BK <= p.K;  // the whole stage lies inside K
#pragma unroll
      for (int i = 0; i < A_IT; ++i)
        if (has_chunk(i, A_CHUNKS))
          ptx::cp_async16_on(base + L.a_dst[i], L.a_src + L.a_rel[i], L.a_live >> i & 1u,
                             inside || k0 + L.a_col[i] < p.K ? 16 : 0);
    } else {
#pragma unroll
      for (int i = 0; i < A_IT; ++i)
        if (has_chunk(i, A_CHUNKS) && (L.a_live >> i & 1u))
          copy16(base + L.a_dst[i], L.a_src + L.a_rel[i], k0 + L.a_col[i] < p.K);
    }
    if constexpr (PARTS & LOAD_X) {
      L.a_src += BK;
      if constexpr (XS_ROWS > 0) {
        if (L.xs_tok >= 0) {
          const int r = tix() / (BM / 4);
          const float* src = act_scale_row(p, k0 + xs_block(r) * 64);
          const bool ok = L.xs_tok < p.M;  // (chunks start on multiples of 4: a chunk below M lies inside the rows)
          copy16(base + A_BYTES + W_BYTES + S_BYTES + tix() * 16, ok ? src + L.xs_tok : src, ok);
        }
      }
    }
    if constexpr (!(PARTS & LOAD_W)) return;
    const u32 wb = base + tix() * 16;
#pragma unroll
    for (int i = 0; i < W_IT; ++i) {
      if (has_chunk(i, W_CHUNKS)) {
        if constexpr (Cfg::CP_ASYNC) ptx::cp_async16_prefetch<Cfg::L2_PREFETCH>(wb + w_dst(i), L.w_src + L.w_rel[i]);
        else copy16(wb + w_dst(i), L.w_src + L.w_rel[i], true);
      }
    }
    L.w_src += KB * WPL * 32;
    if constexpr (Cfg::GSCALE) {
      const int tid = tix();
      const char* sz = MOE ? L.sz : static_cast<const char*>(p.sz);
      const int g0 = k0 / Cfg::GROUP;
#pragma unroll
      for (int i = 0; i < S_IT; ++i) {
        const int c = tid + i * THREADS;
        if (S_CHUNKS % THREADS == 0 || c < S_CHUNKS) {
          const int r = c / S_CPR, cc = c % S_CPR;
          const int g = g0 + r;
          const int nbyte = SK ? L.n0 * SZB + cc * 16 : blockIdx.x * BN * SZB + cc * 16;
          const bool ok = (g < p.groups) && (nbyte < p.Np * SZB);
          copy16(base + A_BYTES + W_BYTES + c * 16, sz + (ok ? static_cast<i64>(g) * p.Np * SZB + nbyte : 0), ok);
        }
      }
    }
  }

  // ------------------------------------------------------------------ compute
  // One lane's WPL words of a 16x64 block. Layout v3 (layout.cuh) stores them plane by plane: plane Q's
  // P words of lane l at 32 * off_Q + l * P of the block, one aligned P-word vector per plane. Callers
  // point at block + lane * WPL (the [lane][word] order, which one-plane widths keep); word i then sits
  // at that + plane_delta<Q>() + i (0 for one plane). Q, P, off: compile time; the delta a
  // loop-invariant register.
  static constexpr int NPL = BYTES ? 1 : layout::num_planes(BITS);
  template <int Q> static constexpr int PL_OFF = NPL == 1 ? 0 : layout::plane_offset(BITS, Q);
  template <int Q> static constexpr int PL_W = NPL == 1 ? WPL : layout::plane_width(BITS, Q);
  template <int Q> static constexpr int PL_VEC = PL_W<Q> % 4 == 0 ? 4 : PL_W<Q> % 2 == 0 ? 2 : 1;
  template <int Q>
  static HUMMING_DEVICE int plane_delta() {
    if constexpr (NPL == 1) return 0;
    else return 31 * PL_OFF<Q> - static_cast<int>(tix() & 31u) * (WPL - PL_W<Q>);
  }
  template <int Q = 0>
  static HUMMING_DEVICE void load_words(const u32* src, u32 (&w)[WPL]) {
    constexpr int V = PL_VEC<Q>;
    const u32* s = src + plane_delta<Q>();
#pragma unroll
    for (int i = PL_OFF<Q>; i < PL_OFF<Q> + PL_W<Q>; i += V) {
      if constexpr (V == 4) {
        const uint4 v = *reinterpret_cast<const uint4*>(s + i);
        w[i] = v.x, w[i + 1] = v.y, w[i + 2] = v.z, w[i + 3] = v.w;
      } else if constexpr (V == 2) {
        const uint2 v = *reinterpret_cast<const uint2*>(s + i);
        w[i] = v.x, w[i + 1] = v.y;
      } else {
        w[i] = s[i];
      }
    }
    if constexpr (Q + 1 < NPL) load_words<Q + 1>(src, w);
  }

  // Row-pair scale (and aux) words for group row `gi`; `col` = the 16-row block's
  // first column + 2g: rows g and g + 8 sit side by side (the scale layout).
  static HUMMING_DEVICE void load_scale(const char* s_s, int gi, int col, u32 (&s)[2], u32 (&aux)[2]) {
    if constexpr (Cfg::ZP) {
      const uint2 v = *reinterpret_cast<const uint2*>(s_s + (gi * BN + col) * 4);
      s[0] = ptx::dup2(v.x), aux[0] = ptx::dup2(v.x >> 16);
      s[1] = ptx::dup2(v.y), aux[1] = ptx::dup2(v.y >> 16);
    } else {
      const u32 v = *reinterpret_cast<const u32*>(s_s + (gi * BN + col) * 2);
      s[0] = ptx::dup2(v), s[1] = ptx::dup2(v >> 16);
      aux[0] = aux[1] = 0;
    }
  }

  // group row (within the stage's scale rows) of k16 tile kt of block kb
  static HUMMING_DEVICE int group_row(int k0, int kb, int kt) {
    constexpr int G = Cfg::GROUP;
    if constexpr (G % BK == 0) return 0;                       // the stage lies in one group
    else if constexpr (BK % G == 0) return (kb * 64 + kt * 16) / G;  // stages start on a group
    else return (k0 + kb * 64 + kt * 16) / G - k0 / G;
  }

  // The row-pair scale (and aux) words of each k16 tile kt of block kb of a stage for the
  // dequantizer (scales on the weights, or zero points), zeros where it takes none; `col` =
  // the 16-row block's first column + 2g.
  static HUMMING_DEVICE void block_scales(const char* s_s, int k0, int kb, int col, u32 (&s)[4][2],
                                          u32 (&aux)[4][2]) {
    if constexpr (Cfg::GSCALE && (SCALE_W || Cfg::ZP)) {
      if constexpr (Cfg::GROUP % 64 == 0 && (BK % Cfg::GROUP == 0 || Cfg::GROUP % BK == 0)) {
        load_scale(s_s, group_row(k0, kb, 0), col, s[0], aux[0]);
#pragma unroll
        for (int kt = 1; kt < 4; ++kt)
#pragma unroll
          for (int h = 0; h < 2; ++h) s[kt][h] = s[0][h], aux[kt][h] = aux[0][h];
      } else {
#pragma unroll
        for (int kt = 0; kt < 4; ++kt) load_scale(s_s, group_row(k0, kb, kt), col, s[kt], aux[kt]);
      }
    } else {
#pragma unroll
      for (int kt = 0; kt < 4; ++kt) s[kt][0] = s[kt][1] = aux[kt][0] = aux[kt][1] = 0;
    }
  }

  // acc[nt] += (sum of the partial chains of nt) * (sf0 for row g, sf1 for row g+8); part = 0
  static HUMMING_DEVICE void fold(float (&acc)[NT][MT][4], PT (&part)[KC][NT][MT][4], int nt, float sf0,
                                  float sf1) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        float sum = static_cast<float>(part[0][nt][mt][q]);
#pragma unroll
        for (int c = 1; c < KC; ++c) sum += static_cast<float>(part[c][nt][mt][q]);
        acc[nt][mt][q] = fmaf(sum, (q >> 1) ? sf1 : sf0, acc[nt][mt][q]);
#pragma unroll
        for (int c = 0; c < KC; ++c) part[c][nt][mt][q] = PT(0);
      }
  }

  // the group scales of rows col and col + 1 of group row gi (the 16-bit scale of an entry), in fp32
  static HUMMING_DEVICE void row_pair_scales(const char* s_s, int gi, int col, float (&sf)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) sf[h] = f16_to_float<Cfg::BF16>(*reinterpret_cast<const u16*>(s_s + (gi * BN + col + h) * SZB));
  }

  // acc += (sum of the partial chains) * s (the rows' group scales in fp32, or 1), part = 0
  static HUMMING_DEVICE void flush(const char* s_s, int gi, float (&acc)[NT][MT][4],
                                   PT (&part)[KC][NT][MT][4], int wn, int g) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      float sf[2] = {1.0f, 1.0f};
      if constexpr (SCALE_ACC) row_pair_scales(s_s, gi, (wn * NT + nt) * 16 + 2 * g, sf);  // rows g, g + 8 side by side
      fold(acc, part, nt, sf[0], sf[1]);
    }
  }

  // k16 tile `kt` (a constant once the caller's loop is unrolled) of one 16x64 block
  static HUMMING_DEVICE void dequant_tile(int kt, const u32 (&w)[WPL], u32 (&a)[4], const u32 (&s)[2],
                                          const u32 (&aux)[2]) {
    if constexpr (BYTES) {  // aux: the rows' zero-point words (scales go on the partial sums)
      switch (kt) {
        case 0: DQB::template tile<0>(w, a, aux[0], aux[1]); break;
        case 1: DQB::template tile<1>(w, a, aux[0], aux[1]); break;
        case 2: DQB::template tile<2>(w, a, aux[0], aux[1]); break;
        default: DQB::template tile<3>(w, a, aux[0], aux[1]); break;
      }
    } else {
      switch (kt) {
        case 0: DQ::template tile<0>(w, a, s[0], s[1], aux[0], aux[1]); break;
        case 1: DQ::template tile<1>(w, a, s[0], s[1], aux[0], aux[1]); break;
        case 2: DQ::template tile<2>(w, a, s[0], s[1], aux[0], aux[1]); break;
        default: DQ::template tile<3>(w, a, s[0], s[1], aux[0], aux[1]); break;
      }
    }
  }

  // `issue()` is called once, after the first k16 tile's MMAs: the next stage's copies
  // then start behind the first MMAs instead of holding them back.
  template <typename Issue>
  static HUMMING_DEVICE void compute_stage(const char* base, int k0, bool last_stage, float (&acc)[NT][MT][4],
                                           PT (&part)[KC][NT][MT][4], int wm, int wn, int wk, int lane,
                                           const u32 (&b_off)[4], Issue&& issue) {
    const u32 a_s = ptx::smem_addr(base);
    const u32* w_s = reinterpret_cast<const u32*>(base + A_BYTES);
    const char* s_s = base + A_BYTES + W_BYTES;
    const int g = lane >> 2;
#pragma unroll
    for (int kbw = 0; kbw < KBW; ++kbw) {
      const int kb = wk * KBW + kbw;
      // this block's weight words and row scales; the operands of each k16 tile are
      // dequantized just before its MMAs (fewer live registers for wide warp tiles)
      u32 w[NT][WPL];
      u32 s[NT][4][2], aux[NT][4][2];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int blk = (wn * NT + nt) * KB + kb;
        load_words(w_s + (blk * 32 + lane) * WPL, w[nt]);
        block_scales(s_s, k0, kb, (wn * NT + nt) * 16 + 2 * g, s[nt], aux[nt]);
      }
#pragma unroll
      for (int kt = 0; kt < 4; ++kt) {
        u32 a[NT][4];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) dequant_tile(kt, w[nt], a[nt], s[nt][kt], aux[nt][kt]);
        u32 b[MT][2];
        // b_off[kt] holds this lane's row and swizzled chunk for k16 tile kt of block 0;
        // block kb is 8 chunks (128 bytes) further, and the XOR swizzle keeps that offset.
        if constexpr (MT % 2 == 0) {
#pragma unroll
          for (int mt = 0; mt < MT; mt += 2) {
            u32 r[4];
            ptx::ldmatrix_x4(r, a_s + b_off[kt] + kb * 128 + mt * 8 * A_CPR * 16);
            b[mt][0] = r[0];
            b[mt][1] = r[1];
            b[mt + 1][0] = r[2];
            b[mt + 1][1] = r[3];
          }
        } else {
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            u32 r[2];
            ptx::ldmatrix_x2(r, a_s + b_off[kt] + kb * 128 + mt * 8 * A_CPR * 16);
            b[mt][0] = r[0];
            b[mt][1] = r[1];
          }
        }
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            if constexpr (PARTIAL) mma(part[kt % KC][nt][mt], a[nt], b[mt]);
            else mma(acc[nt][mt], a[nt], b[mt]);
          }
        }
        if (kbw == 0 && kt == 0) issue();
        if constexpr (PARTIAL) {
          const int k_next = k0 + kb * 64 + kt * 16 + 16;
          const bool end_of_group = (SCALE_ACC && (k_next % Cfg::GROUP) == 0) || (INT_OP && k_next % FOLD8 == 0);
          // with WK > 1 a warp's share of a stage need not end on a group boundary (nor
          // its next share continue the same group): flush at the end of every share
          const bool end_of_slice = (last_stage || WK > 1) && kbw == KBW - 1 && kt == 3;
          if (end_of_group || end_of_slice) flush(s_s, SCALE_ACC ? group_row(k0, kb, kt) : 0, acc, part, wn, g);
        }
      }
    }
  }

  // ------------------------------------------------------------------ epilogue
  // 16 bytes from L2 only (other CTAs wrote them); volatile, so they stay behind the fences
  static HUMMING_DEVICE float4 ld_cg4(const float* q) {
    float4 v;
    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(q));
    return v;
  }

  static HUMMING_DEVICE float finish(const GemmParams& p, float v, int m, int n) {
    v *= p.out_mul;
    if constexpr (Cfg::HAS_CHAN) v *= chan_of(p)[n];
    if constexpr (Cfg::ACT_SCALE == 1) v *= p.act_scale[m];
    if constexpr (Cfg::ACT_SCALE == 2) v *= p.act_scale[0];
    if constexpr (Cfg::HAS_BIAS) v += bias_of(p)[n];
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

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // split K with the tile's K slices launched as one cluster (1 x 1 x gridDim.z CTAs: Launcher,
  // cluster_split): each slice keeps its partial tile in its shared memory, and after a cluster
  // barrier each CTA sums its share of the tile's column quads over the slices' tiles, in slice
  // order (the same sums as the workspace path), through distributed shared memory, and stores
  // them; a second barrier keeps every tile in place until its peers have read it. No global
  // workspace, no fence, no counter, and the epilogue runs on every slice instead of the last.
  static HUMMING_DEVICE void cluster_finish(const GemmParams& p, const float* red, int m0, int n0) {
    constexpr int V = BN / 4;  // column quads per row
    const u32 slices = gridDim.z, rank = tma::cluster_rank();
    tma::cluster_sync();  // (release / acquire: every slice's partial tile is visible to the cluster)
    ptx::trace_at(p.trace, 5);
    const u32 tile = ptx::smem_addr(red);
    const int quads = ((p.M - m0) < BM ? (p.M - m0) : BM) * V;  // (the tile's rows inside M, shared out)
    const int per = (quads + static_cast<int>(slices) - 1) / static_cast<int>(slices);
    const int q_end = (static_cast<int>(rank) + 1) * per < quads ? (static_cast<int>(rank) + 1) * per : quads;
    for (int i = static_cast<int>(rank) * per + tix(); i < q_end; i += THREADS) {
      const int m = i / V, n = 4 * (i % V);
      const int gm = m0 + m, gn = n0 + n;
      if (gn >= p.N) continue;
      const u32 at = tile + static_cast<u32>(m * BN_PAD + n) * 4u;
      float4 s = tma::ld_cluster_f4(at, 0);
#pragma unroll 4
      for (u32 z = 1; z < slices; ++z) {
        const float4 t = tma::ld_cluster_f4(at, z);
        s.x += t.x, s.y += t.y, s.z += t.z, s.w += t.w;
      }
      store_out(p, gm, gn, finish(p, s.x, gm, gn), gn + 1 < p.N ? finish(p, s.y, gm, gn + 1) : 0.0f);
      if (gn + 2 < p.N)
        store_out(p, gm, gn + 2, finish(p, s.z, gm, gn + 2), gn + 3 < p.N ? finish(p, s.w, gm, gn + 3) : 0.0f);
    }
    tma::cluster_sync_relaxed();  // (the peers have read this CTA's tile: their loads' values are used)
  }
#endif

  // This CTA's K slice (split-K over gridDim.z): its first stage and its number of stages.
  static HUMMING_DEVICE void k_slice(const GemmParams& p, int& ks_begin, int& nsteps) {
    const int ksteps = (p.Kp + BK - 1) / BK;
    ks_begin = blockIdx.z * p.k_steps_per_split;
    const int ks_end = ksteps < ks_begin + p.k_steps_per_split ? ksteps : ks_begin + p.k_steps_per_split;
    nsteps = ks_end > ks_begin ? ks_end - ks_begin : 0;
  }

  static HUMMING_DEVICE void run(const GemmParams& p) {
    extern __shared__ __align__(16) char smem[];
    const int tid = tix(), lane = tid & 31, warp = tid >> 5;
    const int wk = warp / (WM * WN), wmn = warp % (WM * WN);
    const int wm = wmn / WN, wn = wmn % WN;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM;
    int ks_begin, nsteps;
    k_slice(p, ks_begin, nsteps);

    Loader L;
    L.init(p, m0, n0, ks_begin);
    const u32 smem_base = ptx::smem_addr(smem);

    float acc[NT][MT][4];
    PT part[KC][NT][MT][4];
#pragma unroll
    for (int i = 0; i < NT; ++i)
#pragma unroll
      for (int j = 0; j < MT; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          acc[i][j][q] = 0.0f;
#pragma unroll
          for (int c = 0; c < KC; ++c) part[c][i][j][q] = PT(0);
        }

    // ldmatrix addresses of this lane for the four k16 tiles of a block
    u32 b_off[4];
    {
      const int i = MT % 2 == 0 ? (lane >> 3) : ((lane >> 3) & 1);
      const int row = wm * TM + (MT % 2 == 0 ? (i >> 1) * 8 : 0) + (lane & 7);
#pragma unroll
      for (int kt = 0; kt < 4; ++kt) {
        const int chunk = kt * 2 + (i & 1);
        b_off[kt] = (row * A_CPR + (chunk ^ (row & 7))) * 16;
      }
    }

    // ---- main loop: STAGES-deep pipeline
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < nsteps) load_stage(p, L, smem_base, s, ks_begin + s);
      if constexpr (Cfg::CP_ASYNC) ptx::cp_async_commit();
    }
    // (stage slots rotate: `rd` is read now, `wr` (the slot read last turn) refilled)
    for (int it = 0, rd = 0, wr = STAGES - 1; it < nsteps; ++it) {
      if constexpr (Cfg::CP_ASYNC) ptx::cp_async_wait<STAGES - 2>();
      __syncthreads();
      const int nxt = it + STAGES - 1;
      compute_stage(smem + rd * STAGE_BYTES, (ks_begin + it) * BK, it == nsteps - 1, acc, part, wm, wn, wk, lane,
                    b_off, [&] {
                      if (nxt < nsteps) load_stage(p, L, smem_base, wr, ks_begin + nxt);
                      if constexpr (Cfg::CP_ASYNC) ptx::cp_async_commit();
                    });
      wr = rd;
      rd = rd + 1 == STAGES ? 0 : rd + 1;
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

    ptx::trace_at(p.trace, 3);  // (the main loop done)
    finish_tile(p, red, m0, n0);
  }

  // ---- the BM x BN fp32 tile `red` (shared, row stride BN_PAD) -> output:
  // split-K partials are published and the last CTA of the tile sums them in
  // slice order; then scales, bias and the 16-bit store.
  // (`parts` partial tiles make the tile, this CTA's is number `part`, in K order, and `tile` indexes the
  // arrival counter: the K slices of a split launch (gridDim.z, blockIdx.z, its x, y), or a stream-K run's)
  static HUMMING_DEVICE void finish_tile(const GemmParams& p, float* red, int m0, int n0) {
    finish_tile(p, red, m0, n0, static_cast<int>(gridDim.z), static_cast<int>(blockIdx.z),
                static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x));
  }
  static HUMMING_DEVICE void finish_tile(const GemmParams& p, float* red, int m0, int n0, int parts, int part,
                                         int tile, int** arrive = nullptr) {
    const int tid = tix();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (!SK && gridDim.z > 1 && CLUSTER == 1 && tma::cluster_size() == gridDim.z) {
      cluster_finish(p, red, m0, n0);
      return;
    }
#endif
    if (parts > 1) {
      // split K: every CTA writes its partial tile, the last of the tile's slices sums them
      // in slice order (its own from shared memory), four columns per load and up to SPLIT_U
      // loads per slice in flight per thread (one dependent load at a time per element left
      // the L2 latency exposed 16-32 times per thread: a quarter of the warps' stall samples
      // of a 64-token warpgroup kernel split two ways, H200). Np is a multiple of 64 and BN
      // of 16, so a column quad is all inside or all outside the padded width.
      __shared__ int last;
      constexpr int V = BN / 4;  // column quads per row
      const int zc = part;
      auto quad = [&](int i, int& m, int& n) {
        m = i / V, n = 4 * (i % V);
        return m0 + m < p.M && n0 + n < p.Np;
      };
      // (stream-K: the tile's head, part 0, is its first CTA's last piece, so the other parts -- the first
      // pieces of the CTAs after it, or their whole runs -- are done or under way: that CTA sums the tile,
      // waiting for their arrivals, without publishing its own part; the others publish theirs and go on,
      // thread 0 releasing the arrival once the CTA's next piece has issued its first copies (`arrive`).
      // Every CTA of the launch is resident at once (Launcher.stream_k_ctas), and no CTA waits before its
      // last piece, so the waits end.)
      const bool finisher = SK && part == 0;
      if (!finisher) {
        for (int i = tid; i < BM * V; i += THREADS) {
          int m, n;
          if (quad(i, m, n)) {
            const float4 v = *reinterpret_cast<const float4*>(red + m * BN_PAD + n);
            float* q = p.ws + (static_cast<i64>(zc) * p.M + m0 + m) * p.Np + n0 + n;
            asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(q), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                         : "memory");
          }
        }
        if constexpr (!SK) __threadfence();
      }
      group_sync();
      if constexpr (SK) {
        if (!finisher) {  // (the barrier above orders every thread's part before thread 0's release)
          *arrive = p.counters + tile;
          return;
        }
        if (tid == 0) {
          int* ctr = p.counters + tile;
          while (ptx::ld_acquire_gpu(ctr) < parts - 1) ptx::nanosleep(64);
          *ctr = 0;  // (every other part has arrived: ready for the next launch)
        }
        group_sync();
      } else {
        if (tid == 0) {
          int* ctr = p.counters + tile;
          const int prev = atomicAdd(ctr, 1);
          last = (prev == parts - 1);
          if (last) *ctr = 0;  // ready for the next launch (and graph replays)
        }
        group_sync();
        if (!last) return;
      }
      ptx::trace_at(p.trace, 5);  // (this CTA sums the tile's slices; 8: fenced, 9: its thread 0 done, 10: all)
      __threadfence();
      ptx::trace_at(p.trace, 8);
      constexpr int U = SPLIT_U;
      for (int i0 = tid; i0 < BM * V; i0 += U * THREADS) {
        float4 acc[U];
#pragma unroll
        for (int u = 0; u < U; ++u) acc[u] = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int z = 0; z < parts; ++z) {
          float4 t[U];
#pragma unroll
          for (int u = 0; u < U; ++u) {
            int m, n;
            const bool ok = i0 + u * THREADS < BM * V && quad(i0 + u * THREADS, m, n);
            t[u] = !ok ? make_float4(0.f, 0.f, 0.f, 0.f)
                 : z == zc ? *reinterpret_cast<const float4*>(red + m * BN_PAD + n)
                           : ld_cg4(p.ws + (static_cast<i64>(z) * p.M + m0 + m) * p.Np + n0 + n);
          }
#pragma unroll
          for (int u = 0; u < U; ++u) acc[u].x += t[u].x, acc[u].y += t[u].y, acc[u].z += t[u].z, acc[u].w += t[u].w;
        }
#pragma unroll  // (each thread rewrites only the quads it read)
        for (int u = 0; u < U; ++u) {
          int m, n;
          if (i0 + u * THREADS < BM * V && quad(i0 + u * THREADS, m, n))
            *reinterpret_cast<float4*>(red + m * BN_PAD + n) = acc[u];
        }
      }
      ptx::trace_at(p.trace, 9);
      group_sync();
      ptx::trace_at(p.trace, 10);
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

  // ================================================================== register streaming
  // Cfg::STREAM == 1 (decode, BM <= 16): each warp owns one 16-row block (WN =
  // BN / 16 warps along N) and one contiguous run of 64-column blocks of the
  // CTA's K slice (WK warps along K). It loads its weight words, and the
  // group-scale words they need, into a register ring of STAGES blocks ahead of
  // the MMAs, with no barrier in the main loop. The activations of the CTA's K
  // slice are staged in shared memory once, overlapping the first weight loads
  // (rows past M read the last valid row: nothing undefined enters the MMAs).
  // The WK partial tiles are summed in a fixed order, then finish_tile.
  // Shared memory (set per launch): max(min(BM, M) x slice x 2 bytes,
  // WK x BM x BN_PAD x 4) rounded to 16 (run_ring: then the warps' rings).
  //
  // Integer codes go into the MMA raw where the dequantizer allows (RAW: one
  // LOP3 per pair of weights, MAGIC + v * 2^sub); a second MMA per k16 tile on a
  // constant operand (MAGIC + offset * 2^sub, or MAGIC + z * 2^sub with integer
  // zero points) accumulates what to take away, and the fold at the end of each
  // group computes (sum - correction) * 2^-sub * scale in fp32.
  static constexpr int NSC = (Cfg::GROUP % 64 == 0) ? 1 : 4;  // scale entries per block (per k16 tile if 4)
  static constexpr int SW = Cfg::ZP ? 2 : 1;                   // scale words per entry
  static constexpr int RING = STAGES;
  static constexpr int STREAM_RED_BYTES = WK * BM * BN_PAD * 4;
  static constexpr bool RAW = Cfg::STREAM && !BYTES && DQ::RAW_OK;
  // 1- and 2-bit codes: raw in a ring's one-token loop only (one_corr), dequantized elsewhere; not
  // under a floor of 64 registers (16-warp rings at two CTAs per SM: that copy spilled 8 bytes there)
  static constexpr int REG_BUDGET = Cfg::MIN_BLOCKS ? 65536 / (Cfg::THREADS * Cfg::MIN_BLOCKS) : 255;
  static constexpr bool RAW_ONE = Cfg::STREAM && !BYTES && DQ::RAW_ONE_OK && REG_BUDGET > 64;
  static constexpr float RAW_F0 = RAW ? 1.0f / (1 << DQ::SUB0) : 1.0f;  // rows g
  static constexpr float RAW_F1 = RAW ? 1.0f / (1 << DQ::SUB1) : 1.0f;  // rows g+8
  // weights of block `src` (this lane's WPL words, addressed as load_words says) into registers
  // (EARLY: a load ahead of the CTA barrier after the activation staging, see ptx::ld_stream_v4)
  template <bool EARLY = false, int Q = 0>
  static HUMMING_DEVICE void stream_words(const u32* src, u32 (&w)[WPL]) {
    constexpr int V = PL_VEC<Q>;
    const u32* s = src + plane_delta<Q>();
#pragma unroll
    for (int i = PL_OFF<Q>; i < PL_OFF<Q> + PL_W<Q>; i += V) {
      if constexpr (V == 4) {
        u32 v[4];
        ptx::ld_stream_v4<EARLY>(v, s + i);
        w[i] = v[0], w[i + 1] = v[1], w[i + 2] = v[2], w[i + 3] = v[3];
      } else if constexpr (V == 2) {
        u32 v[2];
        ptx::ld_stream_v2<EARLY>(v, s + i);
        w[i] = v[0], w[i + 1] = v[1];
      } else {
        w[i] = ptx::ld_stream_u32<EARLY>(s + i);
      }
    }
    if constexpr (Q + 1 < NPL) stream_words<EARLY, Q + 1>(src, w);
  }

  // a lane's WPL words of a slot in shared memory (run_ring with STREAM == 3; `at`: the slot + lane * WPL
  // words, the slot holding the block's words as stored)
  template <int Q = 0>
  static HUMMING_DEVICE void ring_read(u32 at, u32 (&w)[WPL]) {
    constexpr int V = PL_VEC<Q>;
    const u32 a = at + 4 * plane_delta<Q>();
#pragma unroll
    for (int i = PL_OFF<Q>; i < PL_OFF<Q> + PL_W<Q>; i += V) {
      if constexpr (V == 4) {
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(w[i]), "=r"(w[i + 1]), "=r"(w[i + 2]), "=r"(w[i + 3]) : "r"(a + i * 4));
      } else if constexpr (V == 2) {
        asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(w[i]), "=r"(w[i + 1]) : "r"(a + i * 4));
      } else {
        asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(w[i]) : "r"(a + i * 4));
      }
    }
    if constexpr (Q + 1 < NPL) ring_read<Q + 1>(at, w);
  }

  // cp.async of a lane's WPL words of a block (`src`, as load_words says) into a slot at `dst` (the slot
  // + lane * WPL words), zero-filled unless `ok`
  template <int Q = 0>
  static HUMMING_DEVICE void copy_words(u32 dst, const u32* src, bool ok) {
    constexpr int V = PL_VEC<Q>;
    const int dlt = plane_delta<Q>();
#pragma unroll
    for (int i = PL_OFF<Q>; i < PL_OFF<Q> + PL_W<Q>; i += V) {
      if constexpr (V == 4) ptx::cp_async16_if(dst + 4 * (dlt + i), src + dlt + i, ok);
      else if constexpr (V == 2) ptx::cp_async8_if(dst + 4 * (dlt + i), src + dlt + i, ok);
      else ptx::cp_async4_if(dst + 4 * (dlt + i), src + dlt + i, ok);
    }
    if constexpr (Q + 1 < NPL) copy_words<Q + 1>(dst, src, ok);
  }

  // scale words of global k-block `kb` for this lane's rows (sp: the entry of row g
  // in group 0; row g+8 follows 8 entries on): without zero points one word
  // (row g scale | row g+8 scale << 16), else (scale, zero) per row
  // group row of entry e of global k-block kb (padded K: the last group, any finite scale)
  static HUMMING_DEVICE u32 group_of(const GemmParams& p, int kb, int e) {
    const u32 gi = (static_cast<u32>(kb) * 64u + e * 16u) / static_cast<u32>(Cfg::GROUP);
    return gi < static_cast<u32>(p.groups - 1) ? gi : static_cast<u32>(p.groups - 1);
  }

  template <bool EARLY = false>
  static HUMMING_DEVICE void stream_scales(const GemmParams& p, const char* sp, int kb, u32 (&sc)[NSC][SW]) {
    if constexpr (Cfg::GSCALE) {
#pragma unroll
      for (int e = 0; e < NSC; ++e) {
        const char* at = sp + static_cast<u64>(group_of(p, kb, e)) * static_cast<u32>(p.Np * SZB);
        if constexpr (Cfg::ZP) {
          sc[e][0] = ptx::ld_nc_u32<EARLY>(at);
          sc[e][SW - 1] = ptx::ld_nc_u32<EARLY>(at + 4);
        } else {
          sc[e][0] = ptx::ld_nc_u32<EARLY>(at);  // rows g, g + 8 side by side
        }
      }
    }
  }

  // Ring slot d <- block kb (this lane's weight words from wsrc, its rows' scale words)
  template <bool EARLY = false>
  static HUMMING_DEVICE void ring_load(const GemmParams& p, const u32* wsrc, const char* sp, int kb, u32 (&wr)[WPL],
                                       u32 (&sr)[NSC][SW]) {
    stream_words<EARLY>(wsrc, wr);
    stream_scales<EARLY>(p, sp, kb, sr);
  }

  // block words and scale words out of a ring slot
  static HUMMING_DEVICE void ring_take(const u32 (&wr)[WPL], const u32 (&sr)[NSC][SW], u32 (&w)[WPL],
                                       u32 (&sc)[NSC][SW]) {
#pragma unroll
    for (int i = 0; i < WPL; ++i) w[i] = wr[i];
#pragma unroll
    for (int e = 0; e < NSC; ++e)
#pragma unroll
      for (int i = 0; i < SW; ++i) sc[e][i] = sr[e][i];
  }

  // acc += (sum of the chains - corr) * f_h (rows g: h = 0, rows g + 8: h = 1);
  // chains and corr = 0. EVEN (one token): only the even columns' sums, the token's
  // (column 2t of lane t: token 0 in lane 0; the odd ones stay 0, and are never stored).
  // (KN: the chains, KC, or a ring's one-token loop's ONE_KC)
  template <bool EVEN = false, bool R = RAW, int KN = KC>
  static HUMMING_DEVICE void fold_stream(float (&acc)[NT][MT][4], PT (&part)[KN][NT][MT][4],
                                         float (&corr)[MT][4], const float (&f)[2]) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        float sum = static_cast<float>(part[0][0][mt][q]);
#pragma unroll
        for (int c = 1; c < KN; ++c) sum += static_cast<float>(part[c][0][mt][q]);
        if constexpr (R) sum -= corr[mt][q];
        if (!EVEN || (q & 1) == 0) acc[0][mt][q] = fmaf(sum, f[q >> 1], acc[0][mt][q]);
#pragma unroll
        for (int c = 0; c < KN; ++c) part[c][0][mt][q] = PT(0);
        if constexpr (R) corr[mt][q] = 0.0f;
      }
  }

  // a fold's row factors f_h: the rows' group scale in scale entry `sc` (the raw codes'
  // 2^-sub, a constant per row half, is applied once, in reduce_wk_and_finish)
  static HUMMING_DEVICE void fold_factors(const u32 (&sc)[SW], float (&f)[2]) {
    f[0] = f[1] = 1.0f;
    if constexpr (SCALE_ACC) {
      f[0] = f16_to_float<Cfg::BF16>(static_cast<u16>(sc[0] & 0xffffu));
      f[1] = f16_to_float<Cfg::BF16>(static_cast<u16>(Cfg::ZP ? (sc[SW - 1] & 0xffffu) : (sc[0] >> 16)));
    }
  }

  // Raw codes: the correction MMA's A operand, register r's magic number + offset * 2^sub (or + z * 2^sub
  // with integer zero points, from the scale entry `sc`; rows g: r = 0, 2, rows g+8: 1, 3), the same in
  // every column (Dequant::raw_magic: MAGIC, except for 1- and 2-bit codes)
  static HUMMING_DEVICE void raw_corr_operand(const u32 (&sc)[SW], u32 (&ac)[4]) {
    constexpr bool BF = Cfg::BF16;
    // (registers 2, 3 repeat 0, 1 but for FIELD_MAGIC; the constants are constexpr: computed inside the
    // expressions they changed the SASS of kernels whose values had not changed)
    constexpr u32 m0 = dequant::f16x2_bits(DQ::raw_magic(0), BF), m1 = dequant::f16x2_bits(DQ::raw_magic(1), BF);
    constexpr u32 m2 = dequant::f16x2_bits(DQ::raw_magic(2), BF), m3 = dequant::f16x2_bits(DQ::raw_magic(3), BF);
    if constexpr (Cfg::ZP) {  // exact: small integers
      const u32 z0 = ptx::dup2(sc[0] >> 16), z1 = ptx::dup2(sc[SW - 1] >> 16);
      ac[0] = ptx::hfma2<BF>(z0, dequant::f16x2_bits(1 << DQ::SUB0, BF), m0);
      ac[1] = ptx::hfma2<BF>(z1, dequant::f16x2_bits(1 << DQ::SUB1, BF), m1);
      if constexpr (DQ::FIELD_MAGIC) {  // (sub 0)
        ac[2] = ptx::hfma2<BF>(z0, dequant::f16x2_bits(1.0, BF), m2);
        ac[3] = ptx::hfma2<BF>(z1, dequant::f16x2_bits(1.0, BF), m3);
      }
    } else {
      constexpr u32 c[4] = {raw_corr_const(0), raw_corr_const(1), raw_corr_const(2), raw_corr_const(3)};
      ac[0] = c[0], ac[1] = c[1];
      if constexpr (DQ::FIELD_MAGIC) ac[2] = c[2], ac[3] = c[3];
    }
    if constexpr (!DQ::FIELD_MAGIC) ac[2] = ac[0], ac[3] = ac[1];
  }
  static HUMMING_HD constexpr u32 raw_corr_const(int r) {  // (no zero points)
    return dequant::f16x2_bits(DQ::raw_magic(r) + double(Cfg::OFFSET) * (1 << DQ::sub_at(r)), Cfg::BF16);
  }

  // The A operands of k16 tile kt (a constant once the caller's loop is unrolled)
  // of a streamed block: raw codes (RAW) and the correction MMA's constant operand
  // (MAGIC + offset * 2^sub, or MAGIC + z * 2^sub per row with integer zero
  // points), else the dequantized weights (zero points taken away, no scale).
  // sc: the tile's scale entry.
  template <bool R = RAW>
  static HUMMING_DEVICE void stream_operands(int kt, const u32 (&w)[WPL], const u32 (&sc)[SW], u32 (&a)[4],
                                             u32 (&ac)[4]) {
    if constexpr (BYTES) {
      const u32 z0 = Cfg::ZP ? ptx::dup2(sc[0] >> 16) : 0u, z1 = Cfg::ZP ? ptx::dup2(sc[SW - 1] >> 16) : 0u;
      switch (kt) {
        case 0: DQB::template tile<0>(w, a, z0, z1); break;
        case 1: DQB::template tile<1>(w, a, z0, z1); break;
        case 2: DQB::template tile<2>(w, a, z0, z1); break;
        default: DQB::template tile<3>(w, a, z0, z1); break;
      }
      ac[0] = ac[1] = ac[2] = ac[3] = 0u;
    } else if constexpr (R) {
      switch (kt) {
        case 0: DQ::template tile_raw<0>(w, a); break;
        case 1: DQ::template tile_raw<1>(w, a); break;
        case 2: DQ::template tile_raw<2>(w, a); break;
        default: DQ::template tile_raw<3>(w, a); break;
      }
      raw_corr_operand(sc, ac);
    } else {
      u32 s2[2] = {0u, 0u}, aux[2] = {0u, 0u};
      if constexpr (Cfg::ZP) aux[0] = ptx::dup2(sc[0] >> 16), aux[1] = ptx::dup2(sc[SW - 1] >> 16);
      dequant_tile(kt, w, a, s2, aux);
      ac[0] = ac[1] = ac[2] = ac[3] = 0u;
    }
  }

  // one 64-column block: global index kb; b_off: this lane's ldmatrix addresses in it
  // (fold at its end when `last`; constant once the caller's loop is unrolled)
  static HUMMING_DEVICE void stream_block(const u32 (&w)[WPL], const u32 (&sc)[NSC][SW], int kb, bool last,
                                          const u32 (&b_off)[4], float (&acc)[NT][MT][4],
                                          PT (&part)[KC][NT][MT][4], float (&corr)[MT][4]) {
    u32 bx[4][MT][2];
    if constexpr (MT == 1) {  // one x4 load covers two k16 tiles
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        u32 r[4];
        ptx::ldmatrix_x4(r, b_off[h]);
        bx[2 * h][0][0] = r[0], bx[2 * h][0][1] = r[1], bx[2 * h + 1][0][0] = r[2], bx[2 * h + 1][0][1] = r[3];
      }
    }
#pragma unroll
    for (int kt = 0; kt < 4; ++kt) {
      const int e = NSC == 1 ? 0 : kt;
      u32 a[4], ac[4];  // the weights' operand, and (RAW) the correction MMA's constant one
      stream_operands(kt, w, sc[NSC == 1 ? 0 : kt], a, ac);
      if constexpr (MT == 2) {
        u32 r[4];
        ptx::ldmatrix_x4(r, b_off[kt]);
        bx[kt][0][0] = r[0], bx[kt][0][1] = r[1], bx[kt][1][0] = r[2], bx[kt][1][1] = r[3];
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        mma(part[kt % KC][0][mt], a, bx[kt][mt]);
        if constexpr (RAW) mma(corr[mt], ac, bx[kt][mt]);
      }
      const bool end_of_group = SCALE_ACC && ((kb * 64 + kt * 16 + 16) % Cfg::GROUP) == 0;
      // raw codes carry MAGIC x sum(x) in the chains: fold at least every 4 blocks so
      // the fp32 cancellation stays ~2^-14 of a 256-column sum (linear: any
      // fold point is exact in value, the group's scale applies to both parts)
      const bool periodic = (RAW && kt == 3 && (kb & 3) == 3) || (INT_OP && kt == 3 && ((kb + 1) * 64) % FOLD8 == 0);
      if (end_of_group || periodic || (last && kt == 3)) {
        float f[2];
        fold_factors(sc[e], f);
        fold_stream(acc, part, corr, f);
      }
    }
  }

  // the first RING blocks (global index kb0 on) of weights and scales into the ring
  // (wp: block 0 of the slice, which is global block kb0; base: the warp's first block)
  static HUMMING_DEVICE void ring_fill(const GemmParams& p, const u32* wp, const char* sp, int kb0, int base, int n,
                                       u32 (&wr)[RING][WPL], u32 (&sr)[RING][NSC][SW]) {
#pragma unroll
    for (int d = 0; d < RING; ++d) {
      const int at = base + d;
      if (d < n) ring_load<true>(p, wp + at * (WPL * 32), sp, kb0 + at, wr[d], sr[d]);
    }
  }

  // The CTA's activations for its K slice into shared memory: rows x nkb blocks of
  // swizzled 16-byte chunks (row stride slice x 128 bytes; past K zero-filled),
  // one cp.async group where there is cp.async.
  static HUMMING_DEVICE void stage_x(const GemmParams& p, u32 base, int m0, int rows, int kb_begin, int nkb,
                                     int slice) {
    const int cpr = nkb * 8;
    const int total = rows * cpr;
    const u16* x = static_cast<const u16*>(p.x);
    for (int i = tix(); i < total; i += THREADS) {
      const int r = i / cpr, c = i - r * cpr;
      const int k = kb_begin * 64 + c * 8;
      if constexpr (XGATHER) {
        const int at = x_row(p, m0 + r);
        if (at >= 0) copy16(base + r * slice * 128 + ((c ^ (r & 7)) * 16), x + at + k, k < p.K);
      } else {
        copy16(base + r * slice * 128 + ((c ^ (r & 7)) * 16), x + static_cast<i64>(m0 + r) * p.lda + k, k < p.K);
      }
    }
    if constexpr (Cfg::CP_ASYNC) ptx::cp_async_commit();
  }

  // Ring tiles (XTURN): this warp's share of the activations of blocks [j0, j0 + RING) of its K run
  // of blocks [lo, lo + n) of the slice (rows wn, wn + WN, ... of the tile; a lane's 16-byte pieces
  // lane, lane + 32, ... of each row's turn), at the places stage_x puts them, as one cp.async
  // group, through L1: every CTA reads the same activations at about the same time, and the SM's
  // other CTAs then find them there (H200, M=1, traced: 2-10 % faster than through L2 only;
  // requesting two turns ahead instead of one gained nothing). `xs`: the lane's first piece of
  // row wn (x + (m0 + wn) lda + (kb_begin + lo) 64 + 8 lane); `kleft`: the columns of the row
  // from there on (zero-filled past them); `xdst`: where that piece goes (x_turn_dst). With
  // WN > 1 the warp's first row takes straight-line code (one token: the only one), further
  // rows a loop.
  // With a window (XWIN turns per K run, see run_ring) `stride` and `lo` are the window's (row
  // stride and the run's first block in shared memory) and `xo` the turn's place in it; else the
  // slice's, and xo == j0.
  static HUMMING_DEVICE u32 x_turn_dst(u32 base, int stride, int lo, int r) {
    const int lane = tix() & 31;  // (piece c = (lo + j0) 8 + lane + 32 u: its low three bits are lane's)
    return base + r * stride * 128 + (lo * 8 + (lane & ~7) + ((lane ^ r) & 7)) * 16;
  }
  // XGATHER with x_rows (`xr`: x_rows + m0, else null): `xs` is the lane's first piece of x's first row, and row r
  // starts xr[r] elements on, or is a padding row, not copied (read each turn, from L1: a register more across the
  // loop spilled the lean rings; the same for every lane, so the skip is the warp's).
  template <bool ONE = false>  // (one token: row 0 only)
  static HUMMING_DEVICE void stage_x_turn(const u16* xs, int lda, int kleft, u32 xdst, u32 base, int rows, int stride,
                                          int lo, int n, int j0, int xo, int wn, const int* xr = nullptr) {
    constexpr int PR = STAGES * 8;  // 16-byte pieces of a row per turn (STAGES == RING)
    const int lane = tix() & 31;
    auto row = [&](u32 dst, const u16* src) {
#pragma unroll
      for (int u = 0; u < (PR + 31) / 32; ++u) {
        const int q = lane + 32 * u;
        if ((PR % 32 == 0 || q < PR) && j0 + q / 8 < n) {
          const int kk = (j0 * 8 + 32 * u) * 8;
          ptx::cp_async16_ca_if(dst + xo * 128 + 32 * u * 16, src + kk, kk < kleft);
        }
      }
    };
    // (WN == 1: row r into its place, `src` the lane's first piece of it)
    auto row1 = [&](int r, const u16* src) {
#pragma unroll
      for (int u = 0; u < (PR + 31) / 32; ++u) {
        const int q = lane + 32 * u;
        if ((PR % 32 == 0 || q < PR) && j0 + q / 8 < n) {
          const int c = (lo + xo) * 8 + q;  // the piece's place in the row in shared memory
          const int kk = (j0 * 8 + 32 * u) * 8;
          ptx::cp_async16_ca_if(base + r * stride * 128 + ((c ^ (r & 7)) * 16), src + kk, kk < kleft);
        }
      }
    };
    if constexpr (WN == 1) {  // (one warp per K run: rows 0, 1, ... of the tile; XGATHER with x_rows: each from
      // its entry, a padding row skipped)
      auto one = [&](int r) {
        const u16* src = xs + static_cast<i64>(r) * lda;
        if constexpr (XGATHER) {
          if (xr) {
            const int at = __ldg(xr + r);
            src = at < 0 ? nullptr : xs + at;
          }
          if (!src) return;
        }
        row1(r, src);
      };
      // Several tokens: the plain loop, which keeps the short-K tile of eight slots within its 128 registers, where
      // the straight-line first row spills 8-24 bytes. One token: row 0 alone. ptxas unrolled that loop into seven
      // rows' copies and their checks, 100-190 instructions a turn that the one-token loop paid (the rings of one
      // warp per K run on sm_80-sm_120: int4 per channel 310-510 -> 180-250 a turn of four blocks; int4 g128 fp16
      // with eight slots 480-670 -> 390-480 a turn of eight). Straight-line code with four slots; a loop kept
      // rolled with eight (straight-line, they spilled 16 bytes on sm_90a), but for bf16, which keeps the unrolled
      // loop (rolled, it spilled 8 bytes there, 3 accesses a turn).
      if constexpr (ONE && STAGES <= 4) {
        one(0);
      } else if constexpr (ONE && !Cfg::BF16) {
#pragma unroll 1
        for (int r = 0; r < rows; ++r) one(r);
      } else {
        for (int r = 0; r < rows; ++r) one(r);
      }
    } else if constexpr (XGATHER) {  // (each row from its x_rows entry, or in order without them; padding rows
      // skipped)
      auto src_of = [&](int r, int from) -> const u16* {  // (`from`: the row xs starts without x_rows, wn's)
        if (xr) {
          const int at = __ldg(xr + r);
          return at < 0 ? nullptr : xs + at;
        }
        return xs + static_cast<i64>(r - from) * lda;
      };
      if (wn < rows) {
        const u16* src = src_of(wn, wn);
        if (src) row(xdst, src);
        if constexpr (!ONE && 2 * WN >= BM) {  // (one further row at most: behind its check, as for rows in order)
          const int r = wn + WN;
          src = r < rows ? src_of(r, wn) : nullptr;
          if (src) row(x_turn_dst(base, stride, lo, r), src);
        } else if constexpr (!ONE) {
#pragma unroll 1
          for (int r = wn + WN; r < rows; r += WN) {
            src = src_of(r, wn);
            if (src) row(x_turn_dst(base, stride, lo, r), src);
          }
        }
      }
    } else if (wn < rows) {
      row(xdst, xs);
      if constexpr (!ONE) {  // (its further rows, at most BM / WN of them: unrolled, the source stepped WN rows
        // at a time. The loop over them compiled to twice as many copy sites and the logic around them, about
        // 100 instructions a turn more (H200 / A100 plans at 2-8 tokens); with each source from its row index
        // the 3-bit rings of 128 registers took 8 bytes of stack. Gathered rows (above): one further row behind
        // its check likewise; more keep the loop -- unrolled, their loads of x_rows made the MoE loops longer)
        const u16* src = xs;
#pragma unroll
        for (int i = 1; i < (BM + WN - 1) / WN; ++i) {
          const int r = wn + i * WN;
          if (r >= rows) break;
          src += static_cast<i64>(WN) * lda;
          row(x_turn_dst(base, stride, lo, r), src);
        }
      }
    }
    ptx::cp_async_commit();
  }

  // The WN warps of K run `wk` (named barrier 1 + wk; one warp: its lanes).
  static HUMMING_DEVICE void x_group_sync(int wk) {
    if constexpr (WN == 1) {
      __syncwarp();
    } else {
      asm volatile("bar.sync %0, %1;\n" ::"r"(1 + wk), "n"(WN * 32) : "memory");
    }
  }

  // This lane's ldmatrix addresses of the activations of block 0 (at `base`, as
  // stage_x lays them out): MT == 1: k16 tiles (2h, 2h + 1) per x4 (b_off[0..1]);
  // MT == 2: one k16 tile, both 8-token groups per x4. Rows past the valid ones
  // read the last valid row.
  static HUMMING_DEVICE void stream_x_offsets(u32 base, int rows, int slice, u32 (&b_off)[4]) {
    const int lane = tix() & 31;
#pragma unroll
    for (int kt = 0; kt < 4; ++kt) {
      int row, chunk;
      if constexpr (MT == 1) {
        row = lane & 7;
        chunk = (2 * (kt & 1) + (lane >> 4)) * 2 + ((lane >> 3) & 1);
      } else {
        row = (lane >> 4) * 8 + (lane & 7);
        chunk = kt * 2 + ((lane >> 3) & 1);
      }
      row = row < rows ? row : rows - 1;
      b_off[kt] = base + row * slice * 128 + ((chunk ^ (row & 7)) * 16);
    }
  }

  // Stream tiles' epilogue: the raw codes' 2^-sub per row half, then the WK warps'
  // partial 16-row tiles summed in a fixed order in shared memory (over the
  // activations: every warp is done with them), then finish_tile.
  static HUMMING_DEVICE void reduce_wk_and_finish(const GemmParams& p, char* smem, const float (&acc)[NT][MT][4],
                                                  int wn, int wk, int m0, int n0) {
    const int g = (tix() & 31) >> 2, t = tix() & 3;
    __syncthreads();
    float* red = reinterpret_cast<float*>(smem);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int nn = wn * 16 + g + 8 * (q >> 1);
        const int m = mt * 8 + 2 * t + (q & 1);
        red[(wk * BM + m) * BN_PAD + nn] = acc[0][mt][q] * ((q >> 1) ? RAW_F1 : RAW_F0);
      }
    __syncthreads();
    if constexpr (WK > 1) {
      for (int i = tix(); i < BM * BN; i += THREADS) {
        const int m = i / BN, nn = i % BN;
        float v = red[m * BN_PAD + nn];
        for (int w = 1; w < WK; ++w) v += red[(w * BM + m) * BN_PAD + nn];
        red[m * BN_PAD + nn] = v;
      }
      __syncthreads();
    }
    finish_tile(p, red, m0, n0);
  }

  static HUMMING_DEVICE void run_stream(const GemmParams& p) {
    static_assert(NT == 1 && WM == 1 && MT <= 2, "stream tiles: 16 weight rows and at most 16 tokens per warp");
    static_assert(!Cfg::GSCALE || SCALE_ACC, "stream tiles apply group scales to the fp32 partial sums");
    extern __shared__ __align__(16) char smem[];
    const int tid = tix(), lane = tid & 31, warp = tid >> 5;
    const int wn = warp % WN, wk = warp / WN;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM;
    const int rows = (p.M - m0) < BM ? (p.M - m0) : BM;
    const int kblocks = p.Kp / 64;
    const int slice = p.k_steps_per_split * KB;  // 64-column blocks per CTA slice (row stride / 128 B)
    const int kb_begin = blockIdx.z * slice;
    const int nkb = (kblocks - kb_begin) < slice ? (kblocks - kb_begin) : slice;
    const int per = (nkb + WK - 1) / WK;
    const int lo = (wk * per) < nkb ? wk * per : nkb;
    const int n = ((lo + per) < nkb ? lo + per : nkb) - lo;  // this warp's blocks
    const int g = lane >> 2;
    const char* sp = sz_of(p) + static_cast<i64>(n0 + wn * 16 + 2 * g) * SZB;

    // ---- the first RING blocks of weights (and scales) into registers, then the
    // CTA's activations (one cp.async group)
    const u32* wp = w_of(p) + (static_cast<i64>(n0 / 16 + wn) * kblocks + kb_begin) * (WPL * 32) + lane * WPL;
    u32 wr[RING][WPL];  // the register ring
    u32 sr[RING][NSC][SW];
    ring_fill(p, wp, sp, kb_begin, lo, n, wr, sr);
    stage_x(p, ptx::smem_addr(smem), m0, rows, kb_begin, nkb, slice);
    if constexpr (Cfg::CP_ASYNC)  // (behind a branch: see run_ring)
      if (rows > 0) ptx::cp_async_wait<0>();
    __syncthreads();

    u32 b_off[4];  // ldmatrix addresses at block 0 of the slice
    stream_x_offsets(ptx::smem_addr(smem), rows, slice, b_off);

    float acc[NT][MT][4], corr[MT][4];
    PT part[KC][NT][MT][4];
#pragma unroll
    for (int j = 0; j < MT; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        acc[0][j][q] = 0.0f;
        corr[j][q] = 0.0f;
#pragma unroll
        for (int c = 0; c < KC; ++c) part[c][0][j][q] = PT(0);
      }

    // ---- main loop: slot d of the ring holds block j0 + d; once its math is
    // issued it is refilled with block j0 + d + RING. Steady state first (no
    // bounds checks), then the last two ring turns.
    int j0 = 0;
    for (; j0 + 2 * RING <= n; j0 += RING) {
      const int base = lo + j0, next = base + RING;  // slice-local blocks of d = 0
      u32 bb[4];
#pragma unroll
      for (int kt = 0; kt < 4; ++kt) bb[kt] = b_off[kt] + base * 128;
#pragma unroll
      for (int d = 0; d < RING; ++d) {
        u32 w[WPL], sc[NSC][SW], bd[4];
#pragma unroll
        for (int kt = 0; kt < 4; ++kt) bd[kt] = bb[kt] + d * 128;
        ring_take(wr[d], sr[d], w, sc);
        stream_block(w, sc, kb_begin + base + d, false, bd, acc, part, corr);
        const int at = next + d;
        ring_load(p, wp + at * (WPL * 32), sp, kb_begin + at, wr[d], sr[d]);
      }
    }
    for (; j0 < n; j0 += RING) {
      const int base = lo + j0, next = base + RING;  // slice-local blocks of d = 0
#pragma unroll
      for (int d = 0; d < RING; ++d) {
        const int j = j0 + d;
        if (j < n) {
          u32 w[WPL], sc[NSC][SW], bd[4];
#pragma unroll
          for (int kt = 0; kt < 4; ++kt) bd[kt] = b_off[kt] + (base + d) * 128;
          ring_take(wr[d], sr[d], w, sc);
          stream_block(w, sc, kb_begin + base + d, j == n - 1, bd, acc, part, corr);
          if (j + RING < n) {
            const int at = next + d;
            ring_load(p, wp + at * (WPL * 32), sp, kb_begin + at, wr[d], sr[d]);
          }
        }
      }
    }
    reduce_wk_and_finish(p, smem, acc, wn, wk, m0, n0);
  }
  // ================================================================== lean ring (STREAM == 3: shared memory, 4: registers)
  // The streaming scheduler of run_stream with a lean main loop: each warp keeps
  // STAGES slots of its own in shared memory, each slot one 64-column block of
  // its 16 rows (weights, then the block's group-scale words), filled by
  // cp.async copies (one commit group per block), so STAGES - 1 blocks are in
  // flight per warp without holding a register. Each lane copies exactly the
  // words it will read (its WPL weight words, its rows' scale words), so its
  // own cp.async.wait_group is all the ordering it needs: no barrier, not even
  // __syncwarp, in the loop. Few registers per thread, so many warps per SM
  // (the tile's `occupancy` CTAs) keep the memory busy.
  //
  // Blocks go in chunks of RING_FP (1, 2 or 4) that never straddle a scale
  // group, so the fold of the fp32 partial sums sits at a place known at
  // compile time (the host keeps every warp's first block a multiple of
  // RING_FP; k-blocks come in pairs, Kp being a multiple of 128). A chunk's
  // scale entry is copied with its first block only.
  //
  // Raw integer codes (RAW) carry MAGIC + offset (or + z) times 2^sub in every
  // product: a correction MMA per k16 tile on the constant operand (as in
  // run_stream) accumulates what each fold takes away; one token takes the sums
  // of its activations instead, one MMA of ones per 256 columns (one_sums). (Summing the activations once per CTA
  // instead costs ~4 M instructions per block where the MMAs cost 4 WN: measured
  // slower on the H200 for the decode tiles.)
  // a slot: [lane][WPL words] of weights, then [lane][NSC entries][SW words] of scales
  static constexpr int RING_SLOT = WPL * 128 + (Cfg::GSCALE ? 32 * NSC * SW * 4 : 0);
  static constexpr int G64 = Cfg::GROUP / 64;
  static constexpr int RING_FP = !Cfg::GSCALE ? 4 : (Cfg::GROUP % 64 != 0) ? 1 : (G64 % 4 == 0) ? 4 : (G64 % 2 == 0) ? 2 : 1;
  // groups that neither divide 64 nor are multiples of it: a fold per k16 tile
  static constexpr bool FOLD_EVERY_TILE = NSC == 4 && 64 % Cfg::GROUP != 0;
  // scale entries addressed from one pointer per ring turn (see run_ring): group scales of
  // 64, 128 or 256 columns (a whole number of groups per fold chunk: FAST_SC), or of 16 or 32
  // (whole groups per block, GPB of them: FAST_SC4, each block's entries of its own groups)
  static constexpr bool FAST_SC = Cfg::GSCALE && NSC == 1 && RING_FP % G64 == 0;
  static constexpr bool FAST_SC4 = Cfg::GSCALE && NSC == 4 && 64 % Cfg::GROUP == 0;
  static constexpr int GPB = FAST_SC4 ? 64 / Cfg::GROUP : 1;  // groups per block (FAST_SC4)
  static constexpr int EPG = FAST_SC4 ? Cfg::GROUP / 16 : 1;  // ... and k16 entries per group
  // the group of the warp's block jb (FAST_SC, FAST_SC4), counted from the group of its block 0
  static HUMMING_DEVICE constexpr int block_group(int jb) { return FAST_SC4 ? jb * GPB : jb / (FAST_SC ? G64 : 1); }

  // One 64-column block out of its slot: dequantize, multiply (and the correction
  // MMA for raw codes, R); with NSC == 4 the folds inside the block (EVEN: one token's column only).
  template <bool R = RAW, bool EVEN = false, int KN = KC>
  static HUMMING_DEVICE void ring_block(const u32 (&w)[WPL], const u32 (&sc)[NSC][SW], u32 bo0, u32 bo1,
                                        u32 bo2, u32 bo3, float (&acc)[NT][MT][4], PT (&part)[KN][NT][MT][4],
                                        float (&corr)[MT][4], bool one) {
    u32 bx[4][MT][2];
    if constexpr (MT == 1) {  // one x4 load covers two k16 tiles
      u32 r[4];
      ptx::ldmatrix_x4(r, bo0);
      bx[0][0][0] = r[0], bx[0][0][1] = r[1], bx[1][0][0] = r[2], bx[1][0][1] = r[3];
      ptx::ldmatrix_x4(r, bo1);
      bx[2][0][0] = r[0], bx[2][0][1] = r[1], bx[3][0][0] = r[2], bx[3][0][1] = r[3];
    } else {
      const u32 bo[4] = {bo0, bo1, bo2, bo3};
#pragma unroll
      for (int kt = 0; kt < 4; ++kt) {
        u32 r[4];
        ptx::ldmatrix_x4(r, bo[kt]);
        bx[kt][0][0] = r[0], bx[kt][0][1] = r[1], bx[kt][1][0] = r[2], bx[kt][1][1] = r[3];
      }
    }
#pragma unroll
    for (int kt = 0; kt < 4; ++kt) {
      u32 a[4], ac[4];  // the weights' operand, and (RAW) the correction MMA's constant one
      stream_operands<R>(kt, w, sc[NSC == 1 ? 0 : kt], a, ac);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        mma(part[kt % KN][0][mt], a, bx[kt][mt]);
        if constexpr (R) {
          if (!one) mma(corr[mt], ac, bx[kt][mt]);  // (one token: a chunk's correction at once, one_corr)
        }
      }
      if constexpr (NSC == 4) {  // groups of 16, 32: fold where one ends; 48, 80, ...: every k16 tile
        if (FOLD_EVERY_TILE || (kt * 16 + 16) % Cfg::GROUP == 0) {
          float f[2];
          fold_factors(sc[kt], f);
          fold_stream<EVEN, R, KN>(acc, part, corr, f);
        }
      }
    }
  }

  // One token (ONE_CORR: raw codes, group scales of 128 columns or more, or none): what a chunk's per-tile
  // correction MMAs would accumulate is (MAGIC + offset x 2^sub) -- or MAGIC + z x 2^sub -- times the sum
  // S of the token's activations over the chunk, per row half. S comes from one MMA per 256 columns: its
  // A operand holds the k16 tiles of 128 columns as rows 0-7 and those of the next 128 as rows 8-15 (x4
  // ldmatrix rows at 16-column steps of the token's row, which is not swizzled; `at`: this lane's), its
  // B operand ones, so row r of the product is tile r's sum; the sum over the eight rows (lanes four
  // apart) is S. one_sums: SPLIT (chunks of 128 columns) the two 128-column sums apart, else (chunks of
  // 256) their sum, the second counted when `both`; `two`: the next 128 columns lie in the turn (else
  // rows 8-15 are zeros, not read; past the warp's run the caller points those lanes at this chunk
  // again). (Before: one MMA per 128 columns whose B operand held the eight tiles as columns and a
  // constant A, then the quad sums: two more shuffles and the constants' moves; one_corr_cols.)
  // (RAW_ONE: 1- and 2-bit codes take raw codes and these sums in that loop only, see Dequant::RAW_ONE_OK)
  static constexpr bool ONE_CORR = (RAW || RAW_ONE) && MT == 1 && NSC == 1 && RING_FP >= 2;
  // One token of codes in groups of 32 (MXFP4 among them), folded twice per block, takes its own copy of the
  // loop too, whose folds take the token's column only (EVEN): half their FMAs. (Groups of 16, NVFP4: with
  // that copy the 16-warp ring spilled 8 bytes at its 128 registers on sm_90a.)
  static constexpr bool ONE_FOLD = NSC == 4 && MT == 1 && Cfg::GROUP == 32;
  // That copy keeps two MMA chains where its folds come every 256 columns (per channel, groups of 256 or more):
  // one chain there is 16 dependent MMAs per fold (H200, M=1, through the bench, one chain -> two, us: int2 per
  // channel 8192x8192 9.95 -> 7.75, 4096x14336 9.67 -> 7.63, 14336x4096 9.96 -> 7.73; int4 per channel 11.7 ->
  // 10.5, 11.1 -> 9.75, 11.4 -> 9.80; int3 per channel 10.0 -> 9.24, 8.72 -> 8.16, 10.4 -> 9.06; int4 g256 10.7 ->
  // 10.4, 10.1 -> 9.74, 10.2 -> 9.84; gpu_run.sh s36c). Two chains in the other copy lost at 4 tokens (int4 g256
  // 11.5 -> 12.2, int3 per channel 10.5 -> 10.7), so it keeps KC, as does the short-K tile of one warp per K run
  // (WN == 1: int4 per channel and g256 on 4096x4096, 4.34 -> 4.44 and 4.19 -> 4.30 us with two). Groups of 128
  // (eight MMAs per fold) keep one too: two chains there (gpu_run.sh s37l, M=1, us) left int2 and int4 within
  // 0.05 on 8192x8192 and 4096x14336 and lost on 14336x4096 (int2 8.05 -> 8.22) and for int3 (9.10 -> 9.36,
  // 8.93 -> 9.43).
  static constexpr int ONE_KC = ONE_CORR && RING_FP == 4 && WN > 1 ? 2 : KC;
  template <bool SPLIT>
  static HUMMING_DEVICE void one_sums(u32 at, u32 at2, bool two, bool both, float (&s)[2]) {
    u32 a[4];
    if (two) {
      ptx::ldmatrix_x4(a, at);
    } else {  // (`at2`: lanes 0-15 at tiles 0-7)
      u32 r[2];
      ptx::ldmatrix_x2(r, at2);
      a[0] = r[0], a[2] = r[1], a[1] = a[3] = 0u;
    }
    const u32 ones[2] = {dequant::f16x2_bits(1.0, Cfg::BF16), dequant::f16x2_bits(1.0, Cfg::BF16)};
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    mma(d, a, ones);
    if constexpr (SPLIT) {
      s[0] = d[0], s[1] = d[2];  // tile g of each 128 columns
#pragma unroll
      for (int m = 4; m < 32; m *= 2) {
        s[0] += __shfl_xor_sync(0xffffffffu, s[0], m);
        s[1] += __shfl_xor_sync(0xffffffffu, s[1], m);
      }
    } else {
      s[0] = both ? d[0] + d[2] : d[0];
#pragma unroll
      for (int m = 4; m < 32; m *= 2) s[0] += __shfl_xor_sync(0xffffffffu, s[0], m);
    }
  }
  // one_corr_cols' MMAs: d[q] of rows g (q = 0, 1) and g + 8 (q = 2, 3), columns 2 t, 2 t + 1 (the quad's lanes
  // t hold the chunk's eight tiles between them)
  static HUMMING_DEVICE void one_corr_mma(const u32 (&sc)[SW], u32 at2, u32 at, bool second, float (&d)[4]) {
    u32 ac[4];
    raw_corr_operand(sc, ac);
    d[0] = d[1] = d[2] = d[3] = 0.0f;
    if constexpr (RING_FP == 2) {
      u32 b[2];
      ptx::ldmatrix_x2(b, at2);
      mma(d, ac, b);
    } else {
      u32 r[4];  // (at: tiles 0-7 k 0-7, tiles 8-15 k 0-7, tiles 0-7 k 8-15, tiles 8-15 k 8-15)
      ptx::ldmatrix_x4(r, at);
      const u32 b0[2] = {r[0], r[2]}, b1[2] = {r[1], r[3]};
      mma(d, ac, b0);
      if (second) mma(d, ac, b1);
    }
  }
  // HUMMING_LAZY_CORR builds (a diagnostic variant, not planned: HUMMING_GEMM_DEFINES=HUMMING_LAZY_CORR builds
  // it, gpu_run.sh s79l times it against the plain build through the bench): the one-token loops that take one_corr_cols leave its quad sums
  // to the end. A fold adds f_h x d (four FFMAs) to four lazy sums instead of taking f_h x (part - corr), whose
  // corr costs four FADDs, four shuffles and four more FADDs a chunk; the quads sum the lazy sums once, after
  // the loop, and acc takes them away (sum_g f_g (part_g - c S_g) = sum_g f_g part_g - quad sum of sum_g f_g d_g:
  // f_h is the same across a quad, whose lanes share row g).
#ifdef HUMMING_LAZY_CORR
  static constexpr bool LAZY_CORR = true;
#else
  static constexpr bool LAZY_CORR = false;
#endif
  // one_corr_cols: one MMA per 128 columns whose B operand holds the chunk's eight k16 tiles as its columns
  // (x2 at `at2`; x4 at `at` with chunks of 256 columns, `second`: the second 128 counted) and A the constant
  // MAGIC + offset x 2^sub (or + z x 2^sub), then the sums of a row's eight columns across the quad
  static HUMMING_DEVICE void one_corr_cols(const u32 (&sc)[SW], u32 at2, u32 at, bool second, float (&corr)[MT][4]) {
    float d[4];
    one_corr_mma(sc, at2, at, second, d);
    float s0 = d[0] + d[1], s1 = d[2] + d[3];  // rows g, g + 8
    s0 += __shfl_xor_sync(0xffffffffu, s0, 1);
    s1 += __shfl_xor_sync(0xffffffffu, s1, 1);
    s0 += __shfl_xor_sync(0xffffffffu, s0, 2);
    s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
    corr[0][0] = corr[0][1] = s0;
    corr[0][2] = corr[0][3] = s1;
  }
  // corr <- (MAGIC + offset x 2^sub_h) x S, per row half h (zero points: z_h from the chunk's scale entry)
  static HUMMING_DEVICE void one_corr(const u32 (&sc)[SW], float sum, float (&corr)[MT][4]) {
    static_assert(!DQ::FIELD_MAGIC, "one magic number per row half");
    float c0 = float(DQ::MAGIC_F + double(Cfg::OFFSET) * (1 << DQ::SUB0));
    float c1 = float(DQ::MAGIC_F + double(Cfg::OFFSET) * (1 << DQ::SUB1));
    if constexpr (Cfg::ZP) {  // (exact: small integers)
      c0 = fmaf(f16_to_float<Cfg::BF16>(static_cast<u16>(sc[0] >> 16)), float(1 << DQ::SUB0), float(DQ::MAGIC_F));
      c1 = fmaf(f16_to_float<Cfg::BF16>(static_cast<u16>(sc[SW - 1] >> 16)), float(1 << DQ::SUB1), float(DQ::MAGIC_F));
    }
    corr[0][0] = corr[0][1] = c0 * sum;
    corr[0][2] = corr[0][3] = c1 * sum;
  }

  // (a launch of one token takes its own copy of the loop where ONE_CORR applies: the per-tile correction
  // MMAs left out at compile time, not predicated off; both copies end in the one epilogue)
  static HUMMING_DEVICE void run_ring(const GemmParams& p) {
    extern __shared__ __align__(16) char smem[];
    float acc[NT][MT][4];
    if constexpr (ONE_CORR || ONE_FOLD) {
      if (p.M == 1) ring_loop<true>(p, acc);
      else ring_loop<false>(p, acc);
    } else {
      ring_loop<false>(p, acc);
    }
    ptx::trace_at(p.trace, 3);  // (warp 0's loop done)
    const int warp = tix() >> 5;
    reduce_wk_and_finish(p, smem, acc, warp % WN, warp / WN, blockIdx.y * BM, blockIdx.x * BN);
  }

  // run_ring's prologue and main loop: this warp's sums into acc
  template <bool ONE>
  static HUMMING_DEVICE void ring_loop(const GemmParams& p, float (&acc)[NT][MT][4]) {
    static_assert(NT == 1 && WM == 1 && MT <= 2, "ring tiles: 16 weight rows and at most 16 tokens per warp");
    static_assert(!Cfg::GSCALE || SCALE_ACC, "ring tiles apply group scales to the fp32 partial sums");
    constexpr bool REGS = Cfg::STREAM == 4;  // slots in registers (plain loads), else shared memory (cp.async)
    static_assert(REGS || Cfg::CP_ASYNC, "shared-memory ring tiles need cp.async");
    // Register rings on cp.async targets load the activations turn by turn: the WN warps that share
    // a K run (the same activations) copy the next turn's share of it while they compute this turn,
    // and wait for it (their own copies, then a barrier of the group) as the turn starts. Staging
    // the whole slice before the loop took 2-2.8 us on the H200 (every CTA reads the same row at
    // once; scripts/gpu_trace.py), with nothing but the first ring of weights in flight meanwhile.
    constexpr bool XTURN = REGS && Cfg::CP_ASYNC;
    static_assert(!XTURN || WN == 1 || WK <= 15, "a named barrier per K run");
    // XWIN > 0 (XTURN only): each K run keeps a window of XWIN turns of activations in shared memory,
    // turn t in place t % XWIN (refilled once the run's warps have passed the barrier of turn t + 1 -
    // XWIN, after their reads of it), instead of its whole run: the CTA's shared memory no longer grows
    // with the slice, so a batch of 9-16 tokens needs no K split for its activations.
    constexpr int XWIN = Cfg::XWIN;
    static_assert(XWIN == 0 || (XTURN && XWIN >= 2), "an activation window: two turns or more, register rings on cp.async");

    static_assert(RING >= 2 && RING % RING_FP == 0, "a ring of at least two slots, whole chunks");
    extern __shared__ __align__(16) char smem[];
    const int tid = tix(), lane = tid & 31, warp = tid >> 5;
    const int wn = warp % WN, wk = warp / WN;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM;
    const int rows = (p.M - m0) < BM ? (p.M - m0) : BM;
    const int kblocks = p.Kp / 64;
    const int slice = p.k_steps_per_split * KB;  // 64-column blocks per CTA slice (a multiple of RING_FP)
    const int kb_begin = blockIdx.z * slice;
    const int nkb = (kblocks - kb_begin) < slice ? (kblocks - kb_begin) : slice;
    const int per = ((nkb + WK - 1) / WK + RING_FP - 1) / RING_FP * RING_FP;  // chunks never straddle warps
    const int lo = (wk * per) < nkb ? wk * per : nkb;
    const int n = ((lo + per) < nkb ? lo + per : nkb) - lo;  // this warp's blocks (even)
    const int g = lane >> 2;

    // ---- shared memory: activations (rows x nkb blocks, swizzled 16-byte chunks;
    // later the partial tiles), then the warps' rings
    const int rows_alloc = p.M < BM ? p.M : BM;
    const int xstride = XWIN ? WK * XWIN * RING : slice;  // blocks per activation row in shared memory
    const int xlo = XWIN ? wk * XWIN * RING : lo;         // ... before this warp's K run
    const int x_bytes = rows_alloc * xstride * 128;
    const u32 base = ptx::smem_addr(smem);
    const u32 ring = base + ((x_bytes > STREAM_RED_BYTES ? x_bytes : STREAM_RED_BYTES) + 15) / 16 * 16 +
                     (REGS ? 0 : warp * (RING * RING_SLOT));
    // the activations: cp.async group 0 (shared-memory rings; register rings issue their
    // first weight loads first, below, and wait for the previous kernel after them)
    if constexpr (!REGS) {
      ptx::pdl_wait();
      ptx::trace_at(p.trace, 1);
      stage_x(p, base, m0, rows, kb_begin, nkb, slice);
    }

    // ---- this lane's copy jobs: its weight words of each block, its rows' scale words
    const int kb0 = kb_begin + lo;  // global k-block of the warp's block 0
    const u32* wsrc = w_of(p) + (static_cast<i64>(n0 / 16 + wn) * kblocks + kb0) * (WPL * 32) + lane * WPL;
    const char* srow = sz_of(p) + static_cast<i64>(n0 + wn * 16 + 2 * g) * SZB;
    const u32 np_bytes = static_cast<u32>(p.Np * SZB);
    const u32 w_at = lane * WPL * 4;                                        // this lane's words in a slot
    const u32 s_at = WPL * 128 + lane * NSC * SW * 4;                       // ... and its scale words
    u32 wreg[REGS ? RING : 1][WPL], sreg[REGS ? RING : 1][NSC][SW];  // the register slots (REGS)
    // FAST_SC: the warp's blocks start on a group boundary, so its block jb lies in group
    // gw + jb / G64 and a chunk's scale words sit at sw0 + (jb / G64) x np_bytes: one
    // multiply-add per chunk from a pointer per ring turn. FAST_SC4 alike: block jb holds
    // groups gw + jb x GPB + i (i < GPB), at sw0 + (jb x GPB + i) x np_bytes. Past the last
    // group (the padded K, whose activations are zeros) nothing is loaded: a register slot
    // keeps a finite scale (zeroed first), a shared one is zero-filled.
    const int gw = FAST_SC ? kb0 / G64 : FAST_SC4 ? kb0 * GPB : 0;
    const int gleft = p.groups - gw;  // groups from the warp's first on
    const char* sw0 = srow + static_cast<u64>(gw) * np_bytes;
    if constexpr (REGS && (FAST_SC || FAST_SC4)) {
#pragma unroll
      for (int d = 0; d < RING; ++d)
#pragma unroll
        for (int e = 0; e < NSC; ++e) sreg[d][e][0] = sreg[d][e][SW - 1] = 0u;
    }
    // issue block `jb` (this lane's weight words at `src`) into slot `d` if `ok` (jb < n:
    // no bytes are read past the warp's last block; cp.async zero-fills, a group per
    // block). FAST_SC, FAST_SC4: the scale words of the block's first group at `sat`; its group i
    // (from the turn's first) is `g0` + i, loaded where that is below `gl`.
    // (`early`, a literal at every call: the loads issued ahead of the activations' barrier)
    auto issue = [&](bool early, int d, const u32* src, int jb, bool ok, bool scales, const char* sat, int g0, int gl) {
      const u32 slot = ring + d * RING_SLOT;
      if constexpr (REGS) {
        if (ok) early ? stream_words<true>(src, wreg[d]) : stream_words<false>(src, wreg[d]);
        if constexpr (Cfg::GSCALE) {
          if (scales) {
            if constexpr (FAST_SC || FAST_SC4) {  // (FAST_SC4: entry e of group e / EPG, loaded at its first)
#pragma unroll
              for (int e = 0; e < NSC; e += EPG) {
                const char* at = sat + static_cast<u64>(e / EPG) * np_bytes;
                if (g0 + e / EPG < gl) {
                  sreg[d][e][0] = early ? ptx::ld_nc_u32<true>(at) : ptx::ld_nc_u32<false>(at);
                  if constexpr (Cfg::ZP)
                    sreg[d][e][SW - 1] = early ? ptx::ld_nc_u32<true>(at + 4) : ptx::ld_nc_u32<false>(at + 4);
                }
              }
            } else if (ok) {
#pragma unroll
              for (int e = 0; e < NSC; ++e) {
                const u32 gi = (static_cast<u32>(kb0 + jb) * 64u + e * 16u) / static_cast<u32>(Cfg::GROUP);
                const u32 gc = gi < static_cast<u32>(p.groups) ? gi : static_cast<u32>(p.groups - 1);
                const char* at = srow + static_cast<u64>(gc) * np_bytes;  // (padded K: any finite scale)
                sreg[d][e][0] = early ? ptx::ld_nc_u32<true>(at) : ptx::ld_nc_u32<false>(at);
                if constexpr (Cfg::ZP)
                  sreg[d][e][SW - 1] = early ? ptx::ld_nc_u32<true>(at + 4) : ptx::ld_nc_u32<false>(at + 4);
              }
            }
          }
        }
        return;
      }
      copy_words(slot + w_at, src, ok);
      if constexpr (Cfg::GSCALE) {
        if (scales) {
          if constexpr (FAST_SC || FAST_SC4) {
#pragma unroll
            for (int e = 0; e < NSC; e += EPG) {
              const char* at = sat + static_cast<u64>(e / EPG) * np_bytes;
              if constexpr (Cfg::ZP) ptx::cp_async8_if(slot + s_at + e * 8, at, g0 + e / EPG < gl);
              else ptx::cp_async4_if(slot + s_at + e * 4, at, g0 + e / EPG < gl);
            }
          } else {
#pragma unroll
            for (int e = 0; e < NSC; ++e) {  // rows g, g + 8: one aligned word (two with zero points)
              const u32 gi = (static_cast<u32>(kb0 + jb) * 64u + e * 16u) / static_cast<u32>(Cfg::GROUP);
              const bool in = ok && gi < static_cast<u32>(p.groups);  // padded K past the last group: zeros
              const char* at = srow + static_cast<u64>(in ? gi : 0u) * np_bytes;
              if constexpr (Cfg::ZP) ptx::cp_async8_if(slot + s_at + e * 8, at, in);
              else ptx::cp_async4_if(slot + s_at + e * 4, at, in);
            }
          }
        }
      }
      ptx::cp_async_commit();
    };
    // a chunk's scale entry travels with its first block (every block's with NSC == 4)
    constexpr bool EVERY = NSC > 1 || RING_FP == 1;
#pragma unroll
    for (int d = 0; d < RING - 1; ++d)
      issue(true, d, wsrc + d * (WPL * 32), d, d < n, EVERY || d % RING_FP == 0,
            sw0 + static_cast<u64>(block_group(d)) * np_bytes, block_group(d), d < n ? gleft : 0);
    const int xcol = (kb_begin + lo) * 64 + 8 * lane;  // XTURN: this lane's first piece of its rows' runs
    // (XGATHER with x_rows: each row from its entry, stage_x_turn's xr, read after the wait for the previous kernel,
    // which wrote them; xs then starts at x's first row)
    const int* xr = XGATHER && p.x_rows ? p.x_rows + m0 : nullptr;
    const u16* xs = static_cast<const u16*>(p.x) + (xr ? 0 : static_cast<i64>(m0 + wn) * p.lda) + xcol;
    const int xleft = p.K - xcol;
    const u32 xdst = x_turn_dst(base, xstride, xlo, wn);
    if constexpr (XTURN) {
      ptx::pdl_wait();  // (the weight loads above are in flight; activations, outputs and workspace follow)
      ptx::trace_at(p.trace, 1);
      stage_x_turn<ONE>(xs, p.lda, xleft, xdst, base, rows, xstride, xlo, n, 0, 0, wn, xr);  // the first turn's
    } else if constexpr (REGS) {  // (plain loads: the whole slice, then a barrier)
      ptx::pdl_wait();
      ptx::trace_at(p.trace, 1);
      stage_x(p, base, m0, rows, kb_begin, nkb, slice);
      __syncthreads();
    } else {
      ptx::cp_async_wait<RING - 1>();
      __syncthreads();
    }
    ptx::trace_at(p.trace, 2);  // (the activations staged; XTURN: the first turn's copies issued)

    u32 b_off[4];  // ldmatrix addresses at the warp's block 0
    stream_x_offsets(base + xlo * 128, rows, xstride, b_off);
    // one token (ONE_CORR): the chunks' activation sums (one_sums, one_corr_cols); this lane's ldmatrix
    // row at the warp's block 0 (row 0 is not swizzled: 16-byte piece c at c x 16)
    constexpr bool one = ONE_CORR && ONE;
    constexpr bool raw = RAW || (one && RAW_ONE);  // raw codes in this copy of the loop
    // (x4: matrices tiles 0-7 k 0-7, tiles 8-15 k 0-7, tiles 0-7 k 8-15, tiles 8-15 k 8-15 -- the A operand's
    // registers in order; x2, lanes 0-15: tiles 0-7 k 0-7, k 8-15)
    const u32 b_one = base + xlo * 128 + (2 * (lane & 7) + ((lane >> 4) & 1) + 16 * ((lane >> 3) & 1)) * 16;
    const u32 b_one2 = base + xlo * 128 + (2 * (lane & 7) + ((lane >> 3) & 1)) * 16;
    const u32 b_one_hi = ((lane >> 3) & 1) * 256;  // (the lanes of tiles 8-15 in b_one)

    float corr[MT][4], osum[2];  // (osum: one token's activation sums, one_sums)
    // (LAZY_CORR: the folds' lazy correction sums, rows g and g + 8 by column 2 t, 2 t + 1)
    constexpr bool lazy = one && LAZY_CORR && (WN == 1 || DQ::FIELD_MAGIC) && NSC == 1;
    float lz[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    constexpr int KN = one ? ONE_KC : KC;
    PT part[KN][NT][MT][4];
#pragma unroll
    for (int j = 0; j < MT; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        acc[0][j][q] = corr[j][q] = 0.0f;
#pragma unroll
        for (int c = 0; c < KN; ++c) part[c][0][j][q] = PT(0);
      }

    // ---- main loop, one ring turn (STAGES blocks) per iteration: block d of the
    // turn sits in slot d; once it has landed, block d + STAGES - 1 goes into the
    // slot block d - 1 used. Slots, sources and ldmatrix offsets are constants.
    // Steady-state turns (every block of the turn and every block issued ahead inside
    // the warp's run and its groups) go without bounds checks; the last turns check.
    // (Pointers and bounds are carried from turn to turn: the loads take constant offsets.)
    // (CHECKED is a literal at both calls: once inlined, the unchecked turn has no checks)
    auto turn = [&](int j0, const u32* wturn, const char* sturn, int nl, int gl, const bool CHECKED) {
      if constexpr (XTURN) {  // this turn's activations landed (this thread's copies, then its group's),
        ptx::cp_async_wait<0>();  // and the next turn's requested (an empty group past the run)
        x_group_sync(wk);
        const int xn = XWIN ? (j0 / RING + 1) % XWIN * RING : j0 + RING;  // (the next turn's place)
        // (rings of eight warps along N below sm_90 form x_rows + m0 again each turn from the parameter: carried
        // across the loop, the 64-bit pointer spilled their 128-row ring of one warp along K on sm_80 / sm_89, a
        // stack load a turn; sm_90a and newer keep it without a spill, 11 instructions a turn fewer on sm_90a)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
        constexpr bool XR_AGAIN = XGATHER && WN >= 8;
#else
        constexpr bool XR_AGAIN = false;
#endif
        stage_x_turn<ONE>(xs, p.lda, xleft, xdst, base, rows, xstride, xlo, n, j0 + RING, xn, wn,
                          XR_AGAIN ? (p.x_rows ? p.x_rows + m0 : nullptr) : xr);
      }
      const int xo = XWIN ? j0 / RING % XWIN * RING : j0;  // this turn's place
      const u32 bturn0 = b_off[0] + xo * 128, bturn1 = b_off[1] + xo * 128;
      const u32 bturn2 = b_off[2] + xo * 128, bturn3 = b_off[3] + xo * 128;
#pragma unroll
      for (int c = 0; c < RING / RING_FP; ++c) {
        if (CHECKED && c > 0 && c * RING_FP >= nl) break;
        u32 sc[NSC][SW];
        float dc[4];  // (lazy: the chunk's one_corr_mma)
#pragma unroll
        for (int b = 0; b < RING_FP; ++b) {
          const int d = c * RING_FP + b;  // block of the turn
          if (CHECKED && b >= 2 && d >= nl) break;  // n is even: only the second pair of a 4-block chunk can run past it
          const u32 rd = ring + d * RING_SLOT;
          const int ahead = d + RING - 1;
          if constexpr (!REGS) ptx::cp_async_wait<RING - 2>();
          u32 w[WPL];
          if constexpr (REGS) {  // take slot d before block d + STAGES - 1 lands in slot d - 1
#pragma unroll
            for (int i = 0; i < WPL; ++i) w[i] = wreg[d][i];
            if constexpr (Cfg::GSCALE) {
              if (EVERY || b == 0) {
#pragma unroll
                for (int e = 0; e < NSC; ++e)  // (FAST_SC4: a group's entries from its first)
#pragma unroll
                  for (int i = 0; i < SW; ++i) sc[e][i] = sreg[d][e / EPG * EPG][i];
              }
            }
          }
          issue(false, ahead % RING, wturn + ahead * (WPL * 32), j0 + ahead, !CHECKED || ahead < nl,
                EVERY || ahead % RING_FP == 0, sturn + static_cast<u64>(block_group(ahead)) * np_bytes,
                block_group(ahead), !CHECKED ? (1 << 30) : ahead < nl ? gl : 0);
          if constexpr (!REGS) ring_read(rd + w_at, w);
          if constexpr (Cfg::GSCALE && !REGS) {
            if (EVERY || b == 0) {
#pragma unroll
              for (int e = 0; e < NSC; ++e) {
                if (e % EPG != 0) {  // (FAST_SC4: a group's entries from its first)
#pragma unroll
                  for (int i = 0; i < SW; ++i) sc[e][i] = sc[e - e % EPG][i];
                } else if constexpr (Cfg::ZP) {
                  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n"
                               : "=r"(sc[e][0]), "=r"(sc[e][SW - 1]) : "r"(rd + s_at + e * 8));
                } else {
                  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(sc[e][0]) : "r"(rd + s_at + e * 4));
                }
              }
            }
          }
          ring_block<raw, ONE && ONE_FOLD, KN>(w, sc, bturn0 + d * 128, bturn1 + d * 128, bturn2 + d * 128,
                                               bturn3 + d * 128, acc, part, corr, one);
        }
        if constexpr (one) {  // (chunks of 128 columns: the sums of two at the first; of 256: one's)
          constexpr int NCH = RING / RING_FP;
          const u32 at = b_one + (xo + c * RING_FP) * 128, at2 = b_one2 + (xo + c * RING_FP) * 128;
          if constexpr (WN == 1 || DQ::FIELD_MAGIC) {  // (the short-K tile of eight slots, one warp per K run,
            // at 128 registers: one_sums spilled 8-16 bytes in its loops there, on sm_80 and sm_90a; it keeps
            // one_corr_cols. 1- and 2-bit codes: their magic numbers differ by k half, which one_sums' sums
            // of the activations cannot take)
            if constexpr (lazy) {
              one_corr_mma(sc[0], at2, at, !CHECKED || c * RING_FP + 2 < nl, dc);
            } else {
              one_corr_cols(sc[0], at2, at, !CHECKED || c * RING_FP + 2 < nl, corr);
            }
          } else {
            if constexpr (RING_FP == 4) {
              one_sums<false>(at, at2, true, !CHECKED || c * RING_FP + 2 < nl, osum);
            } else if (c % 2 == 0) {  // (the next chunk read only where it lies in the run -- past it shared
              // memory may end, the slice being a whole number of chunks, not of pairs: else this one again)
              const bool in = !CHECKED || (c + 1) * RING_FP < nl;
              one_sums<true>(in ? at : at - b_one_hi, at2, c + 1 < NCH, true, osum);
            }
            one_corr(sc[0], osum[RING_FP == 4 ? 0 : c % 2], corr);
          }
        }
        if constexpr (NSC == 1) {
          float f[2];
          if constexpr (Cfg::GSCALE) {
            fold_factors(sc[0], f);
          } else {
            const u32 none[SW] = {};
            fold_factors(none, f);
          }
          // (one token: the token's column only; not on the short-K tile of eight slots, one warp per K
          // run, which sits at 128 registers: there ptxas then spilled 8 bytes)
          fold_stream<(one && WN > 1), raw && !lazy, KN>(acc, part, corr, f);
          if constexpr (lazy) {
#pragma unroll
            for (int q = 0; q < 4; ++q) lz[q] = fmaf(f[q >> 1], dc[q], lz[q]);
          }
        }
      }
    };
    const u32* wturn = wsrc;
    const char* sturn = sw0;
    const u64 sstep = static_cast<u64>(block_group(RING)) * np_bytes;  // (FAST_SC: RING is a multiple of G64)
    int j0 = 0, nl = n, gl = gleft;  // blocks and groups left from the turn's first block on
    // (without FAST_SC or FAST_SC4 the scale loads clamp their group themselves; with them the steady
    // turns' loads, up to block 2 RING - 2's last group, lie before the last group's end)
    constexpr int GL_STEADY = FAST_SC || FAST_SC4 ? block_group(2 * RING - 2) + GPB - 1 : -(1 << 30);
#pragma unroll 1
    for (; nl >= 2 * RING - 1 && gl > GL_STEADY; j0 += RING, wturn += RING * (WPL * 32), sturn += sstep, nl -= RING,
                                                 gl -= block_group(RING))
      turn(j0, wturn, sturn, nl, gl, false);
#pragma unroll 1
    for (; j0 < n; j0 += RING, wturn += RING * (WPL * 32), sturn += sstep, nl -= RING, gl -= block_group(RING))
      turn(j0, wturn, sturn, nl, gl, true);
    if constexpr (lazy) {  // (the quad's lanes hold the eight tiles' columns: their sums, once)
      float s0 = lz[0] + lz[1], s1 = lz[2] + lz[3];
      s0 += __shfl_xor_sync(0xffffffffu, s0, 1);
      s1 += __shfl_xor_sync(0xffffffffu, s1, 1);
      s0 += __shfl_xor_sync(0xffffffffu, s0, 2);
      s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
      acc[0][0][0] -= s0, acc[0][0][1] -= s0, acc[0][0][2] -= s1, acc[0][0][3] -= s1;
    }
    if constexpr (!REGS) ptx::cp_async_wait<0>();
    // (RAW_ONE codes take no 2^-sub per row half, which the epilogue applies to RAW kernels: FIELD_MAGIC)
    static_assert(!(raw && !RAW) || (DQ::FIELD_MAGIC && DQ::SUB0 == 0 && DQ::SUB1 == 0), "1- and 2-bit raw codes");
  }

  // ================================================================== warpgroup MMA (sm_90a)
  // Cfg::WG: the prefill pipeline of run() (cp.async stages, the same loader and weight
  // layout), but each group of four warps (64 weight rows, warp w of the group its 16-row
  // block; or 128 rows in two such sets, see wg_block) issues one wgmma m64 x BM x k16 per
  // k16 step and 64 rows: each warp dequantizes its A
  // fragment into registers exactly as for mma.sync, and the hardware reads the BM
  // tokens' activations (B, K-major) from the stage through a descriptor, so a weight
  // fragment is dequantized once for all BM tokens and no ldmatrix is issued. One group
  // (a block's four wgmmas) stays in flight while the next block is dequantized
  // (wait_group 1). Stages are refilled two behind (LEAD = STAGES - 2 ahead): when the
  // barrier of a step passes, every warpgroup has finished all but its newest group, which
  // reads the previous stage, so the stage refilled is free. The copies land through the
  // generic proxy and the wgmmas read through the async proxy, so each thread fences its
  // landed copies before the barrier (as the PTX memory model asks).
  // With TMA on one warpgroup (four warps) a stage is refilled one behind instead: the
  // refill of the stage read in step it - 1 is issued in step it after the wait that retires
  // that step's last group, and a group retires only once all four warps have issued it, so
  // they have all read the stage (their weight loads feed the fragments the group reads).
  // With more warpgroups the same holds for each, and each tells thread 0 so: at that point
  // one thread of each warpgroup arrives on the stage's "empty" barrier (EMPTY_BARS, one
  // arrival per warpgroup per use), on which thread 0 waits before refilling the stage; no
  // barrier per step.
  static constexpr bool SYNC_STEP = !TMA;
  // In a cluster (CLUSTER > 1) each stage's refill writes the activations into every CTA of the
  // cluster, so each warpgroup arrives on the stage's empty barrier of every CTA (CLUSTER x WN / 4
  // arrivals per use), and each CTA's thread 0 waits on its own before refilling. Stages are then
  // refilled two behind: in step it a warpgroup arrives for the stage step it - 1 read, and the
  // refill waits for the arrivals on the stage of step it - 2, a step's slack for the peers.
  static constexpr int LEAD = SYNC_STEP || CLUSTER > 1 ? STAGES - 2 : STAGES - 1;
  static constexpr bool EMPTY_BARS = TMA && (WN > 4 || CLUSTER > 1);
  // SHARED_REFILL (TMA on one warpgroup, no cluster): the four warps share each refill (tma_stage's `part`)
  // rather than thread 0 issuing all of it: a refill is about a third of a stage's instructions, each copy in
  // its own uniform-register loop, and the warpgroup's wgmmas wait for its slowest warp (H100, int4 g128
  // through the bench, twice: M = 40 / 64, 8192x8192 23.7-24.0 / 24.4-24.7 us against 25.2-25.3 / 25.4-25.7,
  // 14336x4096 22.9-23.1 / 23.2-23.4 against 24.4-24.5 / 24.6-24.7; lane 0 of warp blockIdx.x % 4 issuing
  // all of it instead: no change; this code compiles to the machine code of the copy measured, gpu_run.sh
  // s65r's alt2). Any warp may refill a stage once its own wait has retired the group that read it: a group
  // retires only once all four warps have issued it. (Clusters keep thread 0's refill: shared there too -- warp
  // 0 alone waiting on the stage's empty barrier before its multicast -- tied, as did each warp's weight copies
  // in one runtime loop, 72 instructions a stage fewer: H100, gpu_run.sh s66b / s66c, sixty-eighth session.)
  static constexpr bool SHARED_REFILL = TMA && WN == 4 && CLUSTER == 1;

  // TMA: thread 0 (`part` -1), or lane 0 of warp `part` its share of them (SHARED_REFILL), fills `stage`
  // with k-step `kstep`: the activation atoms through the tensor
  // map (columns past K arrive as zeros; the box has min(BM, M) rows, so a batch of fewer
  // tokens than BM reads no rows past M -- their shared rows hold stale values, whose results
  // are never stored, as in load_stage: H200, M=33 on the 64-token tile read 33.9 us with
  // boxes of 64 rows, 31 of them zero-filled, against 25.7 at M=64), each 16-row block's KB weight blocks
  // (contiguous in the packed layout) and the stage's group-scale rows (the last group's row
  // stands in for rows past the last group: finite, and their weights are the zero padding)
  // as contiguous runs; the stage's barrier expects all their bytes. Shares: warp 0 the barrier's arrival
  // with its byte count and the activations, warp w the 16-row weight blocks nb with nb % 4 == w, warp 3 the
  // scale rows. A share's copies may complete before warp 0's arrival: the barrier's byte count goes below
  // zero meanwhile, which PTX allows, and the phase cannot complete before that arrival (its only one).
  static HUMMING_DEVICE void tma_stage(const GemmParams& p, u32 smem_base, u32 bars, int stage, int kstep, int m0,
                                       int n0) {
    const int part = SHARED_REFILL ? static_cast<int>(tix() >> 5) : -1;  // (the issuing warp's share)
    const u32 base = smem_base + stage * STAGE_BYTES;
    const u32 bar = bars + stage * 8;
    const int k0 = kstep * BK;
    // (ACT_SCALE 3: the tile's tokens below M rounded up to 4 of each scale row)
    const int xs_bytes = XS_ROWS > 0 ? (((p.M + 3) & ~3) - m0 < BM ? ((p.M + 3) & ~3) - m0 : BM) * 4 : 0;
    if (part <= 0) {
      tma::arrive_expect_tx(bar, KB * 128 * p.tma_rows * CLUSTER + W_BYTES + S_BYTES + XS_ROWS * xs_bytes);
      if constexpr (CLUSTER > 1) {  // this CTA's share of the rows, into every CTA of the cluster
        const int r0 = static_cast<int>(tma::cluster_rank()) * p.tma_rows;
#pragma unroll
        for (int kb = 0; kb < KB; ++kb)
          tma::load_2d_multicast(base + (kb * BM + r0) * 128, &p.tmap, k0 + kb * 64, m0 + r0, bar,
                                 static_cast<u16>((1u << CLUSTER) - 1));
      } else {
#pragma unroll
        for (int kb = 0; kb < KB; ++kb) tma::load_2d(base + kb * BM * 128, &p.tmap, k0 + kb * 64, m0, bar);
      }
    }
    const int kblocks = p.Kp / 64;
    const u32* w = p.w + (static_cast<i64>(n0 / 16) * kblocks + k0 / 64) * (WPL * 32);
#pragma unroll
    for (int nb = 0; nb < BN / 16; ++nb)
      if (part < 0 || nb % 4 == part)
        tma::load_1d(base + A_BYTES + nb * (KB * WPL * 128), w + static_cast<i64>(nb) * kblocks * (WPL * 32),
                     KB * WPL * 128, bar);
    if (part < 0 || part == 3) {
      if constexpr (Cfg::GSCALE) {
        const char* sz = static_cast<const char*>(p.sz) + static_cast<i64>(n0) * SZB;
#pragma unroll
        for (int r = 0; r < GS_ROWS; ++r) {
          const int g = k0 / Cfg::GROUP + r < p.groups ? k0 / Cfg::GROUP + r : p.groups - 1;
          tma::load_1d(base + A_BYTES + W_BYTES + r * (BN * SZB), sz + static_cast<i64>(g) * p.Np * SZB, BN * SZB,
                       bar);
        }
      }
      if constexpr (XS_ROWS > 0) {
#pragma unroll
        for (int r = 0; r < XS_ROWS; ++r)
          tma::load_1d(base + A_BYTES + W_BYTES + S_BYTES + r * BM * 4,
                       act_scale_row(p, k0 + xs_block(r) * 64) + m0, xs_bytes, bar);
      }
    }
  }

  // `a`: the A fragments of a stage's KB blocks (block kb uses a[kb]); it lives across
  // stages so that the fragments an in-flight group reads stay allocated until the
  // wait_group that retires it (the empty asm after each wait "reads" the retired block's):
  // ptxas does not keep them apart across the main loop's back edge by itself (seen on
  // the H200 with one block per stage: stale fragments).
  //
  // NCH accumulator sets per warp (Cfg::CHAINS): k16 step kt of a block goes to set kt % NCH, so NCH
  // chains of dependent wgmmas are in flight instead of one (summed after the main loop).
  static constexpr int NCH = WG ? Cfg::CHAINS : 1;
  static_assert(NCH == 1 || NCH == 2 || NCH == 4, "wgmma tiles: 1, 2 or 4 accumulator chains");

  // NT (1 or 2) 16-row blocks per warp: block t of warp wn is the tile's block
  // (wn / 4 * NT + t) * 4 + wn % 4, so that the t-th wgmma of a warpgroup covers 64
  // consecutive rows; a warpgroup's NT wgmmas of a k16 step share the activations'
  // descriptor and are independent chains (NT = 2: 128 rows per warpgroup).
  static HUMMING_DEVICE int wg_block(int wn, int t) { return ((wn >> 2) * NT + t) * 4 + (wn & 3); }

  // Byte operands (OP8 1: int8 into int32, 2 / 3: fp8 into fp32; m64 x BM x k32 per wgmma, a
  // block's four k32 steps as one group): int8 without group scales accumulates the whole K
  // slice in int32 (the host keeps a slice within FOLD8 units, so |sum| < 2^30). With group
  // scales (whole blocks per group), and for fp8 always, each block's group writes one partial
  // set (its first wgmma overwrites it), which is folded into the fp32 accumulators (times its
  // rows' group scales, read when the block was dequantized) once the next block is
  // dequantized: there the warpgroup waits for all its wgmmas (wait_group 0), folds, then issues
  // the next block. fp8 wgmmas keep fewer bits than fp32 in their accumulators (H200, e4m3 per
  // channel, K = 8192: 4-6e-3 of the largest output without the fold, 2.5e-4 through fp16
  // operands), so the block's sum is promoted every 128 values. (With two partial sets and the
  // fold behind a wait_group 1, ptxas 13.0 serializes every wgmma, C7514: accumulators read while
  // a group is in flight.)
  //
  // 16-bit operands fold the same way where the planner applies their group scales to the fp32
  // sums (SCALE_ACC, Tile.fold: scale groups of whole 64-column blocks): the dequantizer then skips
  // the packed multiply by the scale (one of its three operations per pair of int4 weights), and the
  // fold costs 4 x (tokens / 8) FMAs per block and lane (per two blocks: FOLD_SPAN), so the planner
  // takes it for few tokens.
  static constexpr bool WG_FOLD = WG && (BYTES ? (Cfg::GSCALE || !INT_OP) : SCALE_ACC);
  static constexpr int WG_KIND = OP8 == 1 ? wgmma::kS8 : OP8 == 2 ? wgmma::kE4M3 : OP8 == 3 ? wgmma::kE5M2
                                 : Cfg::BF16 ? wgmma::kBF16 : wgmma::kF16;
  // Byte operands in groups of half a block (32 units: 64 values) fold two partial sets per block: its
  // first two k32 steps write set 0, the last two set 1, one group each; both are folded, each times
  // its own group's scales, after the next block's dequantization, behind the same wait_group 0.
  static constexpr int GSUB = WG_FOLD && BYTES && Cfg::GSCALE && Cfg::GROUP % 64 != 0 ? 2 : 1;
  // ACT_SCALE 3 (byte operands of the warpgroup tiles that fold): activation scales per token and group of
  // Cfg::AGROUP values (a multiple of the 128 of a block), applied with the weights' in each block's fold
  static constexpr bool AGS = Cfg::ACT_SCALE == 3;
  static_assert(!AGS || (WG && BYTES && WG_FOLD && GSUB == 1), "activation group scales: byte warpgroup tiles that "
                "fold per block");
  static constexpr int NSET = WG_FOLD ? GSUB : NCH;  // accumulator sets the wgmmas write
  // Integer codes made e4m3 operands two per register (DequantBytes' INT_FP8_MODE 2: 8 + the low three bits,
  // and -16 or -8 by the top bit): each k32 step issues a second wgmma, on the second operand set, into the
  // same partial sums; the second set's fragments (a2) live beside the first's. (Summing the two sets' wgmmas
  // apart, two chains of four per block instead of one of eight, measured the same: gpu_run.sh s56d.)
  static constexpr bool SPLIT8 = dequant::IntFp8ModeOf<Cfg>::value == 2;
  static_assert(!SPLIT8 || (WG && BYTES && WG_FOLD), "INT_FP8_MODE 2: byte warpgroup tiles that fold");
  static constexpr int A2KB = SPLIT8 ? KB : 1, A2NT = SPLIT8 ? NT : 1;
  // 128-token tiles of two sets hold 192 accumulators per thread: they retire the previous block's group before
  // dequantizing the next, so that one block's A fragments are live instead of two (16 registers: the 255 of
  // ptxas' limit, with a 48-byte spill in the main loop otherwise). (Those of activation group scales did too
  // while the scales came from global memory: 16-32 bytes of stack otherwise; copied into the stages, 226
  // registers without it.)
#ifndef HUMMING_WAIT_FIRST
#define HUMMING_WAIT_FIRST 1
#endif
  // (HUMMING_WAIT_FIRST=2: every byte tile that folds, for measurements)
  static constexpr bool WAIT_FIRST = HUMMING_WAIT_FIRST == 2 ? (WG_FOLD && BYTES)
                                     : HUMMING_WAIT_FIRST && GSUB == 2 && BM == 128;
  static_assert(!WG_FOLD || !Cfg::GSCALE || Cfg::GROUP % 64 == 0 || (BYTES && Cfg::GROUP % 32 == 0),
                "wgmma tiles that fold: group scales over whole 64-unit blocks (bytes: or halves of one)");
  // 16-bit operands that fold, four blocks per stage, groups of whole pairs of blocks, one warpgroup per
  // CTA: the two blocks of a group chain their wgmmas into one partial set (no wait between them), folded
  // once per group -- one wait_group 0 and one fold per two blocks (H200, int4 g128, kernel alone: 3-9 %
  // faster than a fold per block at 16 tokens, 1-4 % at one). Block kb is dequantized while blocks kb - 1
  // and kb - 2 may be in flight; their fragments a[kb - 1], a[kb - 2] differ from a[kb] with four blocks
  // per stage, so two is the most. It costs 14-40 more registers per thread: the eight-warp tile of 32
  // tokens (WG_32_DEEP_TWO, 118 -> 132) then held one CTA per SM instead of two (28672x8192, M=32: 50.1 ->
  // 75.8 us through the bench), so CTAs of more than one warpgroup fold per block; so do 1- and 2-bit
  // codes, whose small stages let more CTAs share an SM, so that registers bound them (int2 g128: the
  // 16-token tile of 128 rows would go from three CTAs per SM to two, the 8-token one of 64 rows six to five).
#ifndef HUMMING_FOLD_SPAN
#define HUMMING_FOLD_SPAN 2
#endif
  static constexpr int FOLD_SPAN = WG_FOLD && !BYTES && KB == 4 && WN == 4 && BITS >= 3 && Cfg::GROUP % 128 == 0
                                       ? HUMMING_FOLD_SPAN : 1;
  static_assert(FOLD_SPAN == 1 || FOLD_SPAN == 2, "wgmma folds: every block or every two");

  // acc += part * (the rows' group scales f[j][0] for row g, f[j][1] for g + 8; 1 without group scales),
  // for each partial set j
  // (AGS: times the block's activation group scale of each token, xs[mt][h] for token mt * 8 + 2 * c4 + h)
  static HUMMING_DEVICE void fold_wg(float (&acc)[NT][MT][4], PT (&part)[NSET][NT][MT][4],
                                     const float (&f)[GSUB][NT][2], const float (&xs)[AGS ? MT : 1][2]) {
    wgmma::fence_regs<GSUB * NT * MT * 4>(&part[0][0][0][0]);  // (read only after the wait that retired them)
#pragma unroll
    for (int j = 0; j < GSUB; ++j)
#pragma unroll
      for (int t = 0; t < NT; ++t)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            float sc = 1.0f;
            if constexpr (Cfg::GSCALE) sc = f[j][t][q >> 1];
            if constexpr (AGS) sc *= xs[mt][q & 1];
            if constexpr (Cfg::GSCALE || AGS) acc[t][mt][q] = fmaf(static_cast<float>(part[j][t][mt][q]), sc, acc[t][mt][q]);
            else acc[t][mt][q] += static_cast<float>(part[j][t][mt][q]);
          }
  }

  // AGS: the activation group scales of the stage's block kb for this thread's tokens (the stage's copy, xs_row;
  // tokens past M: stale or zero-filled, their sums are not stored), one 8-byte shared load per token pair
  static HUMMING_DEVICE void act_group_scales(const char* xs_s, int kb, int lane, float (&xs)[AGS ? MT : 1][2]) {
    if constexpr (AGS) {
      const u32 row = ptx::smem_addr(xs_s) + xs_row(kb) * BM * 4 + (lane & 3) * 8;
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        float2 v;
        asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(row + mt * 32));
        xs[mt][0] = v.x;
        xs[mt][1] = v.y;
      }
    } else {
      xs[0][0] = xs[0][1] = 1.0f;
    }
  }

  template <typename Issue>
  static HUMMING_DEVICE void compute_stage_wg(const char* base, int k0, bool first,
                                              float (&acc)[NT][MT][4],
                                              PT (&wacc)[NSET][NT][MT][4], u32 (&a)[KB][NT][4][4],
                                              u32 (&a2)[A2KB][A2NT][4][4],
                                              float (&fs)[2][GSUB][NT][2], float (&xs)[AGS ? MT : 1][2], int wn,
                                              int lane, Issue&& issue) {
    static_assert((NT == 1 || NT == 2) && WM == 1 && WK == 1 && WN % 4 == 0 && (BYTES || WG_FOLD || !PARTIAL) &&
                      OP8 != 4 &&
                      !Cfg::K8MMA,
                  "wgmma tiles: one or two 16-row blocks per warp, warps along N in groups of four, 16-bit, "
                  "int8 or fp8 operands");
    static_assert(KB == 2 || KB == 4, "wgmma tiles: two or four 64-column blocks per stage (BK = 128 or 256)");
    const u32 a_s = ptx::smem_addr(base);
    const u32* w_s = reinterpret_cast<const u32*>(base + A_BYTES);
    const char* s_s = base + A_BYTES + W_BYTES;
    const int g = lane >> 2;
    const u64 desc0 = wgmma::desc_k_sw128(a_s);
#pragma unroll
    for (int kb = 0; kb < KB; ++kb) {
      const bool fold_here = WG_FOLD && kb % FOLD_SPAN == 0;  // (kb: unrolled, so known here)
      auto retire = [&] {  // the previous group's blocks: retired, then folded
        wgmma::wait<0>();
#pragma unroll
        for (int j = 1; j <= FOLD_SPAN; ++j)
#pragma unroll
          for (int t = 0; t < NT; ++t) {
            wgmma::keep(a[(kb + KB - j) % KB][t]);
            if constexpr (SPLIT8) wgmma::keep(a2[(kb + KB - j) % KB][t]);
          }
        if (kb > 0 || !first) fold_wg(acc, wacc, fs[(kb & 1) ^ 1], xs);  // (block kb - 1's rows: the group's)
        // AGS: block kb's activation scales, from the stage, for its fold
        act_group_scales(base + A_BYTES + W_BYTES + S_BYTES, kb, lane, xs);
      };
      if constexpr (WAIT_FIRST) {
        if (fold_here) retire();
      }
      // the block's A fragments first (NT x four), then its wgmmas as one group
      u32 (&af)[NT][4][4] = a[kb];
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        const int nb = wg_block(wn, t);
        u32 w[WPL];
        u32 sc[4][2], aux[4][2];
        load_words(w_s + ((nb * KB + kb) * 32 + lane) * WPL, w);
        block_scales(s_s, k0, kb, nb * 16 + 2 * g, sc, aux);
        if constexpr (WG_FOLD && Cfg::GSCALE)  // rows g and g + 8 of the block's group(s) (side by side)
#pragma unroll
          for (int j = 0; j < GSUB; ++j)
            row_pair_scales(s_s, group_row(k0, kb, j * (4 / GSUB)), nb * 16 + 2 * g, fs[kb & 1][j][t]);
        if constexpr (SPLIT8) {
          DQB::template tile2<0>(w, af[t][0], a2[kb][t][0]);
          DQB::template tile2<1>(w, af[t][1], a2[kb][t][1]);
          DQB::template tile2<2>(w, af[t][2], a2[kb][t][2]);
          DQB::template tile2<3>(w, af[t][3], a2[kb][t][3]);
          wgmma::pin(a2[kb][t]);
        } else {
#pragma unroll
          for (int kt = 0; kt < 4; ++kt) dequant_tile(kt, w, af[t][kt], sc[kt], aux[kt]);
        }
        wgmma::pin(af[t]);
      }
      if constexpr (!WAIT_FIRST) {
        if (fold_here) retire();
      }
      // the wgmmas' descriptors and scale-d flags, computed above the fence (ptxas C7513: nothing may
      // define a wgmma's input registers between the fence and the wgmma)
      u64 desc[4];
      int keep_d[4];
#pragma unroll
      for (int kt = 0; kt < 4; ++kt) {  // atom kb of the stage, k16 (bytes: k32) step kt: 32 bytes per step
        desc[kt] = desc0 + static_cast<u64>((kb * BM * 128 + kt * 32) >> 4);
        keep_d[kt] = fold_here && kt % (4 / GSUB) == 0 ? 0 : 1;  // (each set's first wgmma overwrites it)
        asm volatile("" : "+l"(desc[kt]), "+r"(keep_d[kt])::"memory");
      }
      wgmma::fence();
#pragma unroll
      for (int kt = 0; kt < 4; ++kt)
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          PT* d = &wacc[WG_FOLD ? kt / (4 / GSUB) : kt % NSET][t][0][0];
          wgmma::Mma<BM, WG_KIND>::run(d, af[t][kt], desc[kt], keep_d[kt]);
          if constexpr (SPLIT8) wgmma::Mma<BM, WG_KIND>::run(d, a2[kb][t][kt], desc[kt], 1);
        }
      wgmma::commit();
      if constexpr (!WG_FOLD) {
        wgmma::wait<1>();
#pragma unroll
        for (int t = 0; t < NT; ++t) wgmma::keep(a[(kb + KB - 1) % KB][t]);  // the previous block's group is retired only now
      }
      // the refill: after block 0 (two blocks per stage); after block 1 with four (with the loader
      // between blocks 0 and 1 there, ptxas 13.0 serializes every folded wgmma, C7513)
      if (kb == (KB == 4 ? 1 : 0)) issue();
    }
  }

  static HUMMING_DEVICE void run_wg(const GemmParams& p) {
    static_assert(BM == 8 || BM == 16 || BM == 32 || BM == 64 || BM == 128 || BM == 160 || BM == 192 || BM == 224 ||
                      BM == 256,
                  "wgmma tiles: BM of 8, 16, 32, 64, 128, 160, 192, 224 or 256 tokens");
    static_assert(STAGES >= 3, "wgmma tiles: at least 3 stages (refilled two behind)");
    static_assert(!SK || (!TMA && CLUSTER == 1), "stream-K: cp.async warpgroup tiles without clusters");
    extern __shared__ __align__(16) char smem_raw[];
    const u32 raw = ptx::smem_addr(smem_raw);
    char* smem = smem_raw + (((raw + 1023u) & ~1023u) - raw);  // the host asks 1 KB more
    const int tid = tix();
    const u32 smem_base = ptx::smem_addr(smem);
    if constexpr (TMA) {
      const u32 bars = smem_base + BAR_OFF;  // the full barriers, then (EMPTY_BARS) the empty ones
      const u32 empties = bars + 64;
      if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
          tma::init(bars + s * 8, 1);
          if constexpr (EMPTY_BARS) tma::init(empties + s * 8, WN / 4 * CLUSTER);
        }
        tma::fence_init();
      }
      if constexpr (CLUSTER > 1) tma::cluster_sync();  // (the peers' barriers before any copy or arrival)
      else __syncthreads();
    }
    if constexpr (SK) {
      run_wg_sk(p, smem, smem_base);
    } else {
      int ks_begin, nsteps;
      k_slice(p, ks_begin, nsteps);
      // (KG > 1: this group's share of the slice's steps, through its region of shared memory; its number read
      // through a shuffle from lane 0, so that the compiler knows it the same in every lane of a warp and keeps the
      // region's addresses -- the wgmmas' descriptors -- in uniform registers: from threadIdx.x they took 32 R2UR
      // moves and about 50 IMADs more per stage of the 16-token tile, 411 instructions against 338)
      const int kg = KG > 1 ? __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / THREADS, 0) : 0;
      const int lo = kg * nsteps / KG, hi = (kg + 1) * nsteps / KG;
      wg_tile(p, smem + kg * GROUP_BYTES, smem_base + kg * GROUP_BYTES, blockIdx.y * BM, blockIdx.x * BN, ks_begin + lo,
              hi - lo, true, static_cast<int>(gridDim.z), static_cast<int>(blockIdx.z),
              static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x));
    }
  }

  // Stream-K (Cfg::SK): the launch's gridDim.x CTAs split the space of (tile, K step) pairs -- tiles
  // numbered m_tile x n_tiles + n_tile, each with its K steps in order -- into equal runs, so that every
  // SM gets the same work whatever the number of tiles (a 28672-row layer's 224 tiles of 128 rows put
  // two CTAs on 92 of the H200's SMs and one on 40). A run is one or more pieces, each a part of one tile
  // (a whole tile finishes at once); a tile cut between CTAs is summed, in K order, by its first CTA
  // once the others' parts have arrived (finish_tile: parts in the workspace as split-K's, [part][M][Np],
  // one counter per tile). Unit u belongs to the CTA c with floor(c T / G) <= u < floor((c + 1) T / G), i.e.
  // c = ((u + 1) G - 1) / T, so every CTA knows a tile's first and last CTA, hence its part count.
  static HUMMING_DEVICE void run_wg_sk(const GemmParams& p, char* smem, u32 smem_base) {
    const int ksteps = (p.Kp + BK - 1) / BK;
    const int n_tiles = p.Np / BN;  // (the launcher checks that BN divides Np)
    const int total = (p.M + BM - 1) / BM * n_tiles * ksteps, G = static_cast<int>(gridDim.x);
    const int bid = static_cast<int>(blockIdx.x);
    const int end = static_cast<int>((static_cast<i64>(bid) + 1) * total / G);
    auto owner = [&](int u) { return static_cast<int>((static_cast<i64>(u + 1) * G - 1) / total); };
    bool first = true;
    int* arrive = nullptr;  // (a published part whose arrival thread 0 has still to release)
#pragma unroll 1
    for (int u = static_cast<int>(static_cast<i64>(bid) * total / G); u < end; first = false) {
      const int t = u / ksteps, k0 = u - t * ksteps;
      const int n = end - u < ksteps - k0 ? end - u : ksteps - k0;
      const int c0 = owner(t * ksteps), c1 = owner((t + 1) * ksteps - 1);
      wg_tile(p, smem, smem_base, (t / n_tiles) * BM, (t % n_tiles) * BN, k0, n, first, c1 - c0 + 1, bid - c0, t,
              &arrive);
      u += n;
      __syncthreads();  // (the finished tile's shared memory holds the next piece's stages)
    }
    if (arrive != nullptr && tix() == 0) ptx::red_release_gpu_add(arrive, 1);
  }

  // One tile's K steps [ks_begin, ks_begin + nsteps) (all of it, a split launch's slice or a stream-K
  // piece) through the warpgroup MMAs, then finish_tile; `first`: the CTA's first piece (it waits for
  // the previous kernel), parts / part / tile: finish_tile's.
  static HUMMING_DEVICE void wg_tile(const GemmParams& p, char* smem, u32 smem_base, int m0, int n0, int ks_begin,
                                     int nsteps, bool first, int parts, int part, int tile, int** arrive = nullptr) {
    const int tid = tix(), lane = tid & 31, wn = tid >> 5;
    const bool refills = SHARED_REFILL ? lane == 0 : tid == 0;  // (TMA: a thread that issues refills, tma_stage)
    Loader L;
    if constexpr (!TMA) L.init(p, m0, n0, ks_begin);
    const u32 bars = smem_base + BAR_OFF;  // the full barriers, then (EMPTY_BARS) the empty ones
    const u32 empties = bars + 64;

    u32 a[KB][NT][4][4] = {};  // A fragments of a stage's blocks (see compute_stage_wg)
    u32 a2[A2KB][A2NT][4][4] = {};  // SPLIT8: their second operand set
    constexpr int ACC = NT * MT * 4;  // accumulators of one chain
    PT wacc[NSET][NT][MT][4];  // what the wgmmas write: the chains, or (WG_FOLD) the two blocks' partial sums
    float acc[NT][MT][4];      // WG_FOLD: the folded sums
    float fs[2][GSUB][NT][2];  // WG_FOLD: the group scales of the last two blocks' rows
    float xs[AGS ? MT : 1][2];  // AGS: the activation group scales of the block in flight (its tokens)
#pragma unroll
    for (int i = 0; i < NSET * ACC; ++i) (&wacc[0][0][0][0])[i] = PT(0);
#pragma unroll
    for (int i = 0; i < ACC; ++i) (&acc[0][0][0])[i] = 0.0f;
    wgmma::fence_regs<NSET * ACC>(&wacc[0][0][0][0]);  // (the zeros are written before the first wgmma's fence)

    // fill stage slot `slot` with step `s` of the slice (cp.async: a group per call, empty past
    // the slice, so that the waits count the same groups)
    auto fill = [&](int slot, int s) {
      if constexpr (TMA) {
        if (refills && s < nsteps) tma_stage(p, smem_base, bars, slot, ks_begin + s, m0, n0);
      } else {
        if (s < nsteps) load_stage(p, L, smem_base, slot, ks_begin + s);
        ptx::cp_async_commit();
      }
    };
    if constexpr (!TMA) {
      if (gridDim.z == 1 || p.early_w) {  // K not split, or a programmatic launch (Launcher._call): the
        // first stages' weights and scales (written by no kernel after preparation) before the wait for
        // the previous kernel, their activations after it; group 0 holds every weight of the prologue
#pragma unroll
        for (int s = 0; s < LEAD; ++s)
          if (s < nsteps) load_stage<LOAD_W>(p, L, smem_base, s, ks_begin + s);
        if (first) {  // (a stream-K CTA's later pieces: the previous kernel is done)
          ptx::pdl_wait();
          ptx::trace_at(p.trace, 1);
        }
#pragma unroll
        for (int s = 0; s < LEAD; ++s) {
          if (s < nsteps) load_stage<LOAD_X>(p, L, smem_base, s, ks_begin + s);
          ptx::cp_async_commit();
        }
        if constexpr (SK) {  // (the previous piece's part, published: its release waits for those writes)
          if (*arrive != nullptr && tid == 0) ptx::red_release_gpu_add(*arrive, 1);
          *arrive = nullptr;
        }
      } else {  // (split launches that go plainly: stage by stage after the wait, so that the first block's
        // math waits for its own copies only; the early weights cost them 2-3 %: H200, 4096x4096 M=16
        // 7.59 -> 7.86 us, 7.78 -> 7.88 in the twenty-seventh session)
        ptx::pdl_wait();
        ptx::trace_at(p.trace, 1);
#pragma unroll
        for (int s = 0; s < LEAD; ++s) fill(s, s);
      }
    } else if (refills) {  // (TMA: the issuing threads' prologue as one branch)
#pragma unroll
      for (int s = 0; s < LEAD; ++s) fill(s, s);
    }
    for (int it = 0, rd = 0, wr = LEAD, ph = 0; it < nsteps; ++it) {
      if constexpr (TMA) {
        tma::wait(bars + rd * 8, ph);
      } else {
        ptx::cp_async_wait<LEAD - 1>();
        wgmma::fence_proxy_shared();  // (the stage's cp.async writes, then the wgmmas' async-proxy reads)
      }
      if constexpr (SYNC_STEP) group_sync();
      const int nxt = it + LEAD;
      compute_stage_wg(smem + rd * STAGE_BYTES, (ks_begin + it) * BK, it == 0, acc, wacc, a, a2, fs, xs, wn, lane, [&] {
        if constexpr (EMPTY_BARS) {  // slot wr is the one step it - 1 read (LEAD = STAGES - 1), its
          // (it - 1) / STAGES-th use: this warpgroup's wait has just retired that step's last group
          if (it > 0 && nxt < nsteps) {
            const u32 empty = empties + wr * 8;
            if constexpr (CLUSTER > 1) {
              if ((tid & 127) == 0 && it - 1 + STAGES < nsteps) {  // step it - 1's stage (refilled in step it + 1)
                const u32 prev = empties + (rd == 0 ? STAGES - 1 : rd - 1) * 8;
#pragma unroll
                for (int c = 0; c < CLUSTER; ++c) tma::arrive_remote(prev, c);
              }
              // slot wr: step it - 2's stage (then only async-proxy writes)
              if (tid == 0 && it > 1) tma::wait(empty, ((it - 2) / STAGES) & 1);
            } else {
              if ((tid & 127) == 0) tma::arrive(empty);
              if (tid == 0) tma::wait(empty, ((it - 1) / STAGES) & 1);
            }
          }
        }
        fill(wr, nxt);
      });
      wr = wr + 1 == STAGES ? 0 : wr + 1;
      if (++rd == STAGES) rd = 0, ph ^= 1;
    }
    wgmma::wait<0>();
    wgmma::fence_regs<NSET * ACC>(&wacc[0][0][0][0]);
    if constexpr (!TMA) ptx::cp_async_wait<0>();
    // (TMA: every copy issued has landed, each was waited on; a cluster's CTAs also wait for the peers'
    // last arrivals on their barriers: no CTA exits, or reuses its stages, while a peer may still arrive)
    if constexpr (CLUSTER > 1) tma::cluster_sync();
    else group_sync();

    if constexpr (WG_FOLD) {
      if (nsteps > 0) fold_wg(acc, wacc, fs[1], xs);  // (the slice's last block: block KB - 1 (odd) of its last stage)
    } else {
#pragma unroll
      for (int c = 1; c < NCH; ++c)
#pragma unroll
        for (int i = 0; i < ACC; ++i) (&wacc[0][0][0][0])[i] += (&wacc[c][0][0][0])[i];
#pragma unroll
      for (int i = 0; i < ACC; ++i) (&acc[0][0][0])[i] = static_cast<float>((&wacc[0][0][0][0])[i]);
    }
    float* red = reinterpret_cast<float*>(smem);
    const int g = lane >> 2, c4 = lane & 3;
#pragma unroll
    for (int t = 0; t < NT; ++t)
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int n = wg_block(wn, t) * 16 + g + 8 * (q >> 1);
          const int m = mt * 8 + 2 * c4 + (q & 1);
          red[m * BN_PAD + n] = acc[t][mt][q];
        }
    __syncthreads();
    if constexpr (KG > 1) {  // (every group's partial tile, each at the start of its region: summed into group 0's
      // in group order, each sum by one thread, then group 0 finishes the tile)
      const int kg = static_cast<int>(threadIdx.x) / THREADS;
      red = reinterpret_cast<float*>(smem - kg * GROUP_BYTES);
      for (int i = static_cast<int>(threadIdx.x); i < BM * BN; i += KG * THREADS) {
        const int m = i / BN, n = i % BN;
        float v = red[m * BN_PAD + n];
#pragma unroll
        for (int j = 1; j < KG; ++j) v += red[j * (GROUP_BYTES / 4) + m * BN_PAD + n];
        red[m * BN_PAD + n] = v;
      }
      __syncthreads();
      if (kg != 0) return;
    }
    ptx::trace_at(p.trace, 3);  // (the main loop done)
    finish_tile(p, red, m0, n0, parts, part, tile, arrive);
  }
};

// Programmatic dependent launch (the host launches the decode tiles with it on sm_90+, from a tile's
// second launch on; Launcher.pdl): the next kernel may start launching at once, and this one waits
// for the previous kernel before its first read of anything but the prepared weight (which no
// kernel writes after preparation): the register rings and the cp.async warpgroup tiles issue their
// first weight loads before that wait. (Without the launch attribute the wait returns at once.)
template <typename Cfg>
HUMMING_DEVICE void gemm_mma_sync_run(const GemmParams& p) {
  ptx::trace_at(p.trace, 0);  // (HUMMING_TRACE builds: entry, after the wait, ..., exit)
  ptx::pdl_launch_dependents();
  if constexpr (Cfg::STREAM >= 3) {
    GemmMmaSync<Cfg>::run_ring(p);  // (waits itself)
  } else if constexpr (Cfg::WG && !Cfg::TMA) {
    GemmMmaSync<Cfg>::run_wg(p);  // (waits itself, after its first weight copies)
  } else {
    ptx::pdl_wait();
    ptx::trace_at(p.trace, 1);
    if constexpr (Cfg::WG) GemmMmaSync<Cfg>::run_wg(p);
    else if constexpr (Cfg::STREAM) GemmMmaSync<Cfg>::run_stream(p);
    else GemmMmaSync<Cfg>::run(p);
  }
  ptx::trace_at(p.trace, 4);
}

// The entry. A dense launch runs the tiles on the parameters as they are. An MoE launch (Cfg::MOE) is the
// dense GEMM of the sorted, padded rows (humming.ops.moe), each BM-row block against its own expert: the
// CTAs of an unused block return, the others read their weights, scales, channel multipliers and bias at
// their expert's (GemmMmaSync::w_of, ...; the parameters stay in the parameter space). An MoE launch may go
// programmatically (sm_90+, as humming.ops.moe's small kernels around it do): its CTAs wait for the previous
// kernel before reading anything, expert_ids included (the routing wrote it), so no weight load goes early.
// The host gives MoE kernels no TMA, stream-K or N-cluster tiles (cp.async stages instead: gemm_mma_sync.moe_tile).
template <typename Cfg>
HUMMING_DEVICE void gemm_mma_sync(const GemmParams& p) {
  // (stage tiles: the launch's dynamic shared memory, the host's smem_bytes, holds what the kernel lays out)
  static_assert(Cfg::STREAM != 0 || Cfg::SMEM_BYTES >= GemmMmaSync<Cfg>::SMEM_BYTES,
                "the host's shared memory (gemm_mma_sync.smem_bytes) is less than the kernel's stages need");
  if constexpr (MoeOf<Cfg>::value) {
    static_assert(!Cfg::TMA && !Cfg::SK && Cfg::CLUSTER == 1, "MoE tiles load by cp.async, one CTA per tile");
    ptx::pdl_launch_dependents();
    ptx::pdl_wait();  // (the later waits return at once)
    // (every K slice of an unused block: its counters stay 0)
    if (static_cast<unsigned>(__ldg(p.expert_ids + blockIdx.y)) >= static_cast<unsigned>(p.experts)) return;
  }
  gemm_mma_sync_run<Cfg>(p);
}

}  // namespace humming

