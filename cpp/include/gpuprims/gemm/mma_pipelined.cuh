#pragma once
// mma_pipelined: float16 / bfloat16 on tensor cores through mma.sync m16n8k16, fed by ldmatrix
// from swizzled shared memory that a multi-stage cp.async pipeline fills.
//
// The kernel is a template over its tiling (MmaConfig): a block of kWarpsM x kWarpsN warps computes
// a kTileM x kTileN output tile in kTileK-deep K slices; each warp owns a (kTileM / kWarpsM) x
// (kTileN / kWarpsN) sub-tile as m16n8 accumulator fragments (float32). Per 16-deep step a warp
// issues one ldmatrix.x4 per m16 fragment row of A (16x16), one ldmatrix.x4.trans per pair of n8
// fragments of B (16x16) and one mma.sync per fragment. MmaPipelinedConfig and (large products,
// devices that allow its shared memory) MmaPipelinedLargeConfig below are what the library runs;
// bench/tune/gemm_tune.cu times the same kernel in other tilings.
//
// Pipeline: slices kt+1 .. kt+kStages-1 are in flight (cp.async) while slice kt is multiplied.
// How warps learn that a stage is full and when it may be refilled is the config's Sync policy
// (mma_stage_sync.cuh): with BlockBarrierSync, at the top of step kt a thread waits until its
// copies of slice kt have landed and the block synchronizes, which also proves every warp done
// with slice kt-1, whose stage is then refilled with slice kt+kStages-1; with MbarrierSync, per-stage
// "full" and "empty" mbarriers let each warp wait only for the slice it reads and, at the refill
// (step kRefillStep of the slice), for the warps still reading the stage it overwrites.
// kFragPrefetch loads the head of the next slice's first fragments before the last step's MMAs.
// Within a slice, MmaFragPipe orders a warp's ldmatrix against its MMAs, kSerpentine orders the
// MMAs, and kWholeSlices copies slices that lie inside both matrices without per-chunk checks.
//
// Shared memory, per stage: A as kTileM rows of kTileK values, B as kTileK rows of kTileN values,
// in 16-byte chunks. An ldmatrix phase reads 8 rows at one logical chunk; the swizzles spread them
// over all 32 banks:
//   A, 4 chunks a row (kTileK 32): chunk c of row r at chunk c ^ ((r / 2) % 4) (two rows a 128-byte line)
//   A, 8k chunks a row (kTileK 64, ...) and B (kTileN >= 64): chunk c of row r at c ^ (r % 8)
// With MmaLoad::kPadded / kBulk the rows are stored unswizzled and padded by 16 bytes instead (a
// bulk copy writes a row as it is), which spreads the same 8 rows over all banks too.
//
// Loads: with A and B rows contiguous and 16-byte aligned (dispatch's a_vec_rows / b_vec_rows:
// kAsync), every full 16-byte chunk is one cp.async; chunks that cross the matrix edge, and every
// chunk of other layouts (transposed, strided, misaligned operands), are gathered element by
// element (zero outside the matrix) and stored synchronously into the same place. With
// MmaLoad::kBulk (sm_90, mbarriers), a slice whose A and B rows all lie inside the matrices is instead
// copied by the bulk copy engine, one row a thread, completing on the stage's mbarrier.
//
// Epilogue: either each thread stores its fragments' values straight to C (2-byte stores, 4 lanes
// per 16 bytes of a row), or (kSmemEpilogue) the block stages the converted tile in shared memory
// (rows padded by 16 bytes: the fragment writes of a warp hit 32 distinct banks) and then writes
// whole rows with 16-byte stores where C's rows are contiguous and aligned.
//
// The shared memory is dynamic (up to 227 KiB on sm_90, 163 KiB on sm_80): the launcher raises the
// kernel's limit with configure_mma_kernel() before launching with Cfg::kSmemBytes.
#include <cstdint>
#include <type_traits>

#include "gpuprims/gemm/mma_stage_sync.cuh"
#include "gpuprims/gemm/tile_loop.cuh"
#include "gpuprims/util/ptx_sm80.cuh"
#include "gpuprims/util/ptx_sm90.cuh"

namespace gpuprims {
namespace gemm {

// Byte offset of 16-byte chunk c of row r in a stage's A (rows of kChunks chunks) or B region.
template <int kChunks>
__device__ __forceinline__ int swizzle_rows(int r, int c) {
  if constexpr (kChunks == 4) return r * 64 + ((c ^ ((r >> 1) & 3)) << 4);
  else return r * kChunks * 16 + ((c ^ (r & 7)) << 4);
}

// How the stages are filled: by the chunk loader (cp.async or gathered chunks) into swizzled rows
// or into padded rows, or (sm_90) interior slices by the bulk copy engine into padded rows.
enum class MmaLoad { kSwizzled, kPadded, kBulk };

// How a warp schedules its ldmatrix against its mma.sync within a K slice (issue 6, against the
// "wait" and short-scoreboard stalls Nsight Compute names first):
//   kStep       a step's fragments (all A rows and B), then the step's MMAs: one register set, and
//               any overlap is ptxas's own hoisting of the next step's loads;
//   kDoubleStep two register sets: step s + 1's fragments are issued before step s's MMAs, so a
//               whole step of MMAs covers their latency (24 more registers for 64x32 warp tiles);
//   kRowAhead   every fragment one m16 row of MMAs ahead of its use: A row i + 1 before row i's
//               MMAs, and step s + 1's B and A row 0 before the MMAs of step s's last row, in as
//               many registers as kStep (two 4-register A slots instead of kFragsM, a second B set).
// In the pipelined schedules the stage is released right after its last ldmatrix (before the
// MMAs of the slice's last step or row), not after the last step's loads.
enum class MmaFragPipe { kStep, kDoubleStep, kRowAhead };

template <int kTileM_, int kTileN_, int kTileK_, int kWarpsM_, int kWarpsN_, int kStages_, int kMinBlocks_,
          int kGroupM_, bool kSmemEpilogue_, bool kMbarrier_ = false, int kRefillStep_ = 0, bool kFragPrefetch_ = false,
          MmaLoad kLoad_ = MmaLoad::kSwizzled, MmaFragPipe kFragPipe_ = MmaFragPipe::kStep, bool kSerpentine_ = false,
          bool kWholeSlices_ = false>
struct MmaConfig {
  static constexpr int kTileM = kTileM_, kTileN = kTileN_, kTileK = kTileK_;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_, kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kWarpM = kTileM / kWarpsM, kWarpN = kTileN / kWarpsN;  // a warp's sub-tile
  static constexpr int kFragsM = kWarpM / 16, kFragsN = kWarpN / 8;           // m16 x n8 fragments
  static constexpr int kSteps = kTileK / 16;                                  // 16-deep MMA steps a slice
  static constexpr int kStages = kStages_, kMinBlocks = kMinBlocks_, kGroupM = kGroupM_;
  static constexpr bool kSmemEpilogue = kSmemEpilogue_;
  // Stage synchronization (mma_stage_sync.cuh): a block barrier a slice, or per-stage mbarriers.
  using Sync = typename std::conditional<kMbarrier_, MbarrierSync<kStages_>, BlockBarrierSync<kStages_>>::type;
  // The step of slice kt at whose top the loads of slice kt + kStages - 1 are issued (0 with the
  // block barrier; later steps give slower warps time to release the stage before it is refilled).
  static constexpr int kRefillStep = kRefillStep_;
  // Whether a warp loads the head of the next slice's first fragments (B and A's first m16 row:
  // MmaFragments) into a second register buffer before the MMAs of the slice's last step (within
  // a slice ptxas already hoists the next step's ldmatrix above the MMAs; across the wait for the
  // next slice it cannot). A whole second buffer spills under the 128-register cap.
  static constexpr bool kFragPrefetch = kFragPrefetch_;
  static constexpr MmaFragPipe kFragPipe = kFragPipe_;
  // Whether a step's MMAs run serpentine over the warp's fragments (odd m16 rows right to left):
  // consecutive mma.sync then share an operand register at every turn too (A within a row, B
  // where the row changes), which the operand reuse cache serves without a register-file read.
  static constexpr bool kSerpentine = kSerpentine_;
  // Whether slices that lie wholly inside both matrices (interior tiles, the slice inside K;
  // cp.async path) are copied by one unconditional cp.async a chunk. The general loader checks
  // each chunk against the edges and branches to a gather, a branch region per chunk across
  // which ptxas cannot move the warp's MMAs; one check per slice leaves a straight block.
  static constexpr bool kWholeSlices = kWholeSlices_;
  // Whether interior slices (whole rows of A and B inside the matrices, operands on the cp.async
  // path) are copied by the bulk copy engine (sm_90), one row a thread, completing on the "full"
  // mbarrier by transaction count: no per-chunk cp.async and address arithmetic. Edge slices keep
  // the per-chunk loader. A bulk copy cannot swizzle, so the stage rows are padded instead.
  static constexpr bool kBulkCopy = kLoad_ == MmaLoad::kBulk;
  // Padded rows also let an ldmatrix address be a row base plus a constant per 16-deep step,
  // where the swizzle needs an XOR per step (MmaLoad::kPadded isolates that from the bulk copies).
  static constexpr bool kPaddedRows = kLoad_ != MmaLoad::kSwizzled;
  static constexpr int kChunksA = kTileK / 8, kChunksB = kTileN / 8;  // 16-byte chunks per row
  // Bytes per stage row: dense swizzled rows, or rows padded by 16 bytes, which start 8 rows read
  // at one chunk by an ldmatrix phase in 8 distinct 16-byte bank groups (pitch / 16 is odd).
  static constexpr int kPitchA = kChunksA * 16 + (kPaddedRows ? 16 : 0), kPitchB = kChunksB * 16 + (kPaddedRows ? 16 : 0);
  static constexpr int kStageBytesA = kTileM * kPitchA, kStageBytesB = kTileK * kPitchB;
  static constexpr int kStageBytes = kStageBytesA + kStageBytesB;
  static constexpr int kEpiloguePitch = kTileN * 2 + 16;  // bytes per staged C row
  static constexpr int kEpilogueBytes = kSmemEpilogue ? kTileM * kEpiloguePitch : 0;
  static constexpr int kPipeBytes = kStages * kStageBytes > kEpilogueBytes ? kStages * kStageBytes : kEpilogueBytes;
  static constexpr int kSmemBytes = kPipeBytes + Sync::kSmemBytes;  // the barriers follow the stages
  static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0, "whole ldmatrix.x4 tiles per warp");
  static_assert(kTileK % 16 == 0 && (kChunksA == 4 || kChunksA % 8 == 0) && kChunksB % 8 == 0,
                "the swizzles need 64-byte or 128k-byte A rows and 128k-byte B rows");
  static_assert(kStages >= 2, "a pipeline needs a stage in flight");
  static_assert(kRefillStep >= 0 && kRefillStep < kSteps && (Sync::kRefillAnywhere || kRefillStep == 0),
                "the block barrier proves a stage free only at the top of the next slice");
  static_assert(!kFragPrefetch || kSteps >= 2, "the prefetch buffer is step 0's, busy until step 1");
  static_assert(kFragPipe == MmaFragPipe::kStep || (!kFragPrefetch && kSteps >= 2),
                "the pipelined schedules prefetch within a slice, from its second step on");
  static_assert(!kBulkCopy || (kMbarrier_ && kThreads >= kTileM + kTileK),
                "bulk copies complete on mbarriers, one A or B row a thread");

  // Byte offset of 16-byte chunk c of row r in a stage's A / B region.
  __device__ __forceinline__ static int a_offset(int r, int c) {
    return kPaddedRows ? r * kPitchA + 16 * c : swizzle_rows<kChunksA>(r, c);
  }
  __device__ __forceinline__ static int b_offset(int r, int c) {
    return kPaddedRows ? r * kPitchB + 16 * c : swizzle_rows<kChunksB>(r, c);
  }
};

// The previous library configuration (3 stages of 128x128x32, 8 warps of 64x32, two blocks per SM,
// row-by-row tile order, direct 2-byte C stores: 0.359x cuBLAS at 4096^3 on the H200), kept for the
// A/B in bench/tune/gemm_tune.cu.
using MmaBase = MmaConfig<128, 128, 32, 2, 4, 3, 2, 1, false>;
// What mma_pipelined runs. One line to flip (MmaBase restores the previous kernel;
// bench/tune/gemm_tune.cu times both and the other candidates). Measured on the H200 at 4096^3:
// 64-deep K slices (3 stages of 32 KiB, 96 KiB a block, still two blocks of 8 warps per SM at
// 127 registers) reach 0.423x cuBLAS against 0.359x for MmaBase, the best row of the first sweep:
// half the pipeline waits and barriers per multiply-add. 64x64 warp tiles (less ldmatrix traffic,
// but ~240 registers) did not help, and one block per SM (128x256, 256x128) lost: the barrier of
// each slice then stalls every warp of the SM (docs/gemm.md, "Why mma.sync tops out where it does").
// Second sweep (session 9 device run 8): staging the C tile in shared memory for 16-byte stores
// gains another 5 %: 0.444x against 0.420x for direct 2-byte stores (0.506x vs 0.489x at 1000^3).
// Third and fourth sweeps (session 10 device runs 4-5): per-stage mbarriers instead of the block
// barrier, the next slice's copies issued at the top of the last 16-deep step, gain 2-2.5 % at
// 4096^3 (0.456x vs 0.445x; 0.431x vs 0.422x in the faster-cuBLAS run 5) and 4-7 % at 1000^3
// (0.574x vs 0.550x; 0.451x vs 0.423x), in the same 98 KiB a block. Fifth sweep (session 11
// device run 1): copying slices that lie inside both matrices by unconditional cp.async
// (kWholeSlices) takes 0.450x to 0.519x, +15 %, and the serpentine MMA order adds a little
// (0.521x; 0.526x against 0.540x at 1000^3, where fewer slices are interior).
using MmaPipelinedConfig = MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, /*kMbarrier=*/true, /*kRefillStep=*/3, false,
                                     MmaLoad::kSwizzled, MmaFragPipe::kStep, /*kSerpentine=*/true,
                                     /*kWholeSlices=*/true>;
// What mma_pipelined runs for products of at least a wave of its tiles on devices whose blocks
// may opt in to its shared memory (variant_mma_pipelined.cu): one block of 16 warps of 64x32 a
// SM on 256x128x64 tiles, 4 stages of padded rows (212 KiB; sm_80 allows 163, sm_86/89 99),
// whole slices by unconditional cp.async, every fragment loaded one m16 row of MMAs ahead, in
// serpentine order: 0.552x cuBLAS at 4096^3 in session 11 run 1, the fastest row (0.483x without
// the three inner-loop options, 0.505x with serp + whole alone). ptxas keeps 8 bytes (two values
// read by the epilogue) in local memory, outside the K loop. Operands that need the gather path
// keep MmaPipelinedConfig.
using MmaPipelinedLargeConfig =
    MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, /*kMbarrier=*/true, /*kRefillStep=*/3, false, MmaLoad::kPadded,
              MmaFragPipe::kRowAhead, /*kSerpentine=*/true, /*kWholeSlices=*/true>;

// sm_80's register allocator spills the 64x32 tiling under the 128-register cap of two resident
// blocks (72-80 bytes), sm_90's does not: sm_80 builds keep one block per SM whatever the config asks.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr int kMmaMaxMinBlocks = 1;
#else
constexpr int kMmaMaxMinBlocks = 4;
#endif
constexpr int mma_min_blocks(int wanted) { return wanted < kMmaMaxMinBlocks ? wanted : kMmaMaxMinBlocks; }
// The bulk copy engine is sm_90's: older builds of a kBulkCopy config load every slice by chunks
// (into the same padded rows).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr bool kMmaBulkCopyArch = false;
#else
constexpr bool kMmaBulkCopyArch = true;
#endif

// 8 elements at src, src + stride, ..., the first `count` real, the rest zero, as 16 bytes.
template <class T>
__device__ __forceinline__ uint4 gather_chunk(const T* src, int64_t stride, int count) {
  uint32_t w[4];
#pragma unroll
  for (int e = 0; e < 8; e += 2) {
    const uint32_t lo = e < count ? src[e * stride].bits : 0u;
    const uint32_t hi = e + 1 < count ? src[(e + 1) * stride].bits : 0u;
    w[e / 2] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Copies one 16-byte chunk of 8 elements (count of them inside the matrix) to shared memory.
template <bool kAsync, class T>
__device__ __forceinline__ void copy_chunk(const T* src, int64_t stride, int count, unsigned char* dst) {
  if (kAsync && count == 8) {
    ptx::cp_async_16(ptx::shared_address(dst), src);
  } else {
    *reinterpret_cast<uint4*>(dst) = gather_chunk(src, stride, count);
  }
}

__device__ __forceinline__ int clamp_chunk(int64_t left) { return left <= 0 ? 0 : (left >= 8 ? 8 : static_cast<int>(left)); }

// Streams the K slices of one output tile into the stages. A slice has kTileM x kChunksA chunks of
// A and kTileK x kChunksB of B; thread t copies A chunk t % kChunksA of rows t / kChunksA + i * kRowStepA
// and B chunk t % kChunksB of K rows t / kChunksB + i * kRowStepB. The row steps are multiples of
// 8, so every chunk of a thread has the swizzle of its first one and lies a fixed distance from it,
// in global memory and in the stage alike: a thread keeps one source pointer per operand, advanced
// by one slice per load.
template <class Cfg, bool kAsync, class T>
struct MmaSliceLoader {
  static constexpr int kRowStepA = Cfg::kThreads / Cfg::kChunksA, kPerThreadA = Cfg::kTileM / kRowStepA;
  static constexpr int kRowStepB = Cfg::kThreads / Cfg::kChunksB, kPerThreadB = Cfg::kTileK / kRowStepB;
  static_assert(Cfg::kThreads % Cfg::kChunksA == 0 && Cfg::kTileM % kRowStepA == 0 && kRowStepA % 8 == 0,
                "A: whole rows of chunks per pass, swizzle-invariant row steps");
  static_assert(Cfg::kThreads % Cfg::kChunksB == 0 && Cfg::kTileK % kRowStepB == 0 && kRowStepB % 8 == 0,
                "B: whole rows of chunks per pass, swizzle-invariant row steps");
  const T* a_src;  // A(m0 + t / kChunksA, k0 + 8 (t % kChunksA)) of the next slice
  const T* b_src;  // B(k0 + t / kChunksB, n0 + 8 (t % kChunksB)) of the next slice
  int64_t k_next;  // the next slice's k0
  int a_rows_left;  // rows inside the matrix from this thread's first A row (may be <= 0)
  int b_cols_left;  // columns of this thread's B chunk inside the matrix (may be <= 0)
  int a_offset, b_offset;  // this thread's first chunk in a stage, bytes

  __device__ __forceinline__ MmaSliceLoader(const GemmParams& p, const T* a_tile, const T* b_tile, int m_left,
                                            int n_left, int t) {
    const int ar = t / Cfg::kChunksA, ac = t % Cfg::kChunksA, br = t / Cfg::kChunksB, bc = t % Cfg::kChunksB;
    a_src = a_tile + ar * p.sa.row + (8 * ac) * p.sa.col;
    b_src = b_tile + br * p.sb.row + (8 * bc) * p.sb.col;
    k_next = 0;
    a_rows_left = m_left - ar;
    b_cols_left = n_left - 8 * bc;
    a_offset = Cfg::a_offset(ar, ac);
    b_offset = Cfg::kStageBytesA + Cfg::b_offset(br, bc);
  }

  __device__ __forceinline__ void load_next(const GemmParams& p, unsigned char* stage, int t) {
    const int a_count = clamp_chunk(p.k - k_next - 8 * (t % Cfg::kChunksA));
#pragma unroll
    for (int i = 0; i < kPerThreadA; ++i) {
      copy_chunk<kAsync>(a_src + i * kRowStepA * p.sa.row, p.sa.col, i * kRowStepA < a_rows_left ? a_count : 0,
                         stage + a_offset + i * kRowStepA * Cfg::kPitchA);
    }
    const int b_count = clamp_chunk(b_cols_left);
    const int64_t b_row = k_next + t / Cfg::kChunksB;
#pragma unroll
    for (int i = 0; i < kPerThreadB; ++i) {
      copy_chunk<kAsync>(b_src + i * kRowStepB * p.sb.row, p.sb.col, b_row + i * kRowStepB < p.k ? b_count : 0,
                         stage + b_offset + i * kRowStepB * Cfg::kPitchB);
    }
    advance(p);
  }

  // Copies the next slice, known to lie wholly inside both matrices (kAsync layouts only): every
  // chunk one cp.async, no bounds.
  __device__ __forceinline__ void load_next_whole(const GemmParams& p, unsigned char* stage) {
#pragma unroll
    for (int i = 0; i < kPerThreadA; ++i) {
      ptx::cp_async_16(ptx::shared_address(stage + a_offset + i * kRowStepA * Cfg::kPitchA), a_src + i * kRowStepA * p.sa.row);
    }
#pragma unroll
    for (int i = 0; i < kPerThreadB; ++i) {
      ptx::cp_async_16(ptx::shared_address(stage + b_offset + i * kRowStepB * Cfg::kPitchB), b_src + i * kRowStepB * p.sb.row);
    }
    advance(p);
  }

  // Moves on to the next slice without copying (a bulk copy took this one).
  __device__ __forceinline__ void advance(const GemmParams& p) {
    a_src += Cfg::kTileK * p.sa.col;
    b_src += Cfg::kTileK * p.sb.row;
    k_next += Cfg::kTileK;
  }
};

// Bulk-copies slice k0 .. k0 + kTileK of the interior tile at (z, m0, n0) into the stage at
// stage_shared (Cfg::kBulkCopy): thread t < kTileM copies A row t, the next kTileK threads B row
// t - kTileM, each announcing its bytes on the stage's "full" mbarrier with its arrival; the
// other threads arrive without bytes. The proxy fence orders the stage's earlier generic-proxy
// writes (edge slices, the staged epilogue) before the copy engine's.
template <class Cfg, class T>
__device__ __forceinline__ void bulk_copy_slice(const GemmParams& p, const T* a, const T* b, int64_t z, int64_t m0,
                                                int64_t n0, int64_t k0, uint32_t stage_shared, uint32_t full, int t) {
  static_assert(sizeof(T) == 2, "row bytes below count 2-byte elements");
  if (t < Cfg::kTileM) {
    ptx::fence_proxy_async_shared();
    ptx::mbarrier_arrive_expect_tx(full, Cfg::kTileK * 2);
    ptx::bulk_load_global_to_shared(stage_shared + t * Cfg::kPitchA, a + p.sa.offset(z, m0 + t, k0), Cfg::kTileK * 2,
                                    full);
  } else if (t < Cfg::kTileM + Cfg::kTileK) {
    const int r = t - Cfg::kTileM;
    ptx::fence_proxy_async_shared();
    ptx::mbarrier_arrive_expect_tx(full, Cfg::kTileN * 2);
    ptx::bulk_load_global_to_shared(stage_shared + Cfg::kStageBytesA + r * Cfg::kPitchB,
                                    b + p.sb.offset(z, k0 + r, n0), Cfg::kTileN * 2, full);
  } else {
    ptx::mbarrier_arrive(full);
  }
}

// Fragment (i, j) register e of a warp holds row wm + 16i + g + 8(e / 2), column wn + 8j + 2(lane %
// 4) + e % 2 of the tile (g = lane / 4).
template <class Cfg, class T>
__device__ __forceinline__ void store_fragments_direct(const GemmParams& p, T* c, int64_t z, int64_t m0, int64_t n0,
                                                       int m_left, int n_left, int wm, int wn, int lane,
                                                       const float (&acc)[Cfg::kFragsM][Cfg::kFragsN][4]) {
  const int g = lane / 4, tq = lane % 4;
#pragma unroll
  for (int i = 0; i < Cfg::kFragsM; ++i) {
#pragma unroll
    for (int e2 = 0; e2 < 2; ++e2) {
      const int r = wm + 16 * i + g + 8 * e2;
      if (r >= m_left) continue;
      T* c_row = c + p.sc.offset(z, m0 + r, n0);
#pragma unroll
      for (int j = 0; j < Cfg::kFragsN; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = wn + 8 * j + 2 * tq + e;
          if (col < n_left) c_row[col * p.sc.col] = cast_value<T>(acc[i][j][2 * e2 + e]);
        }
      }
    }
  }
}

// Stages the converted tile in shared memory (which must be free: every warp past its last
// ldmatrix, no cp.async in flight), then writes it row by row: a thread takes 16-byte chunk q % kChunksN
// of row q / kChunksN, one 16-byte store where the chunk is inside and C's rows are contiguous and
// aligned (c_vec_rows), element stores otherwise. Ends with a barrier, after which the shared
// memory is free again.
template <class Cfg, class T>
__device__ __forceinline__ void store_fragments_staged(const GemmParams& p, T* c, int64_t z, int64_t m0, int64_t n0,
                                                       int m_left, int n_left, int wm, int wn, int t,
                                                       const float (&acc)[Cfg::kFragsM][Cfg::kFragsN][4],
                                                       unsigned char* smem) {
  const int lane = t % 32, g = lane / 4, tq = lane % 4;
#pragma unroll
  for (int i = 0; i < Cfg::kFragsM; ++i) {
#pragma unroll
    for (int e2 = 0; e2 < 2; ++e2) {
      unsigned char* row = smem + (wm + 16 * i + g + 8 * e2) * Cfg::kEpiloguePitch;
#pragma unroll
      for (int j = 0; j < Cfg::kFragsN; ++j) {
        const uint32_t lo = cast_value<T>(acc[i][j][2 * e2]).bits, hi = cast_value<T>(acc[i][j][2 * e2 + 1]).bits;
        *reinterpret_cast<uint32_t*>(row + (wn + 8 * j + 2 * tq) * 2) = lo | (hi << 16);
      }
    }
  }
  __syncthreads();
  constexpr int kChunksN = Cfg::kTileN / 8;
  static_assert(Cfg::kTileM * kChunksN % Cfg::kThreads == 0, "whole passes over the tile");
#pragma unroll 4
  for (int q = t; q < Cfg::kTileM * kChunksN; q += Cfg::kThreads) {
    const int r = q / kChunksN, col = 8 * (q % kChunksN);
    if (r >= m_left || col >= n_left) continue;
    const uint4 v = *reinterpret_cast<const uint4*>(smem + r * Cfg::kEpiloguePitch + col * 2);
    T* dst = c + p.sc.offset(z, m0 + r, n0 + col);
    if (p.c_vec_rows && col + 8 <= n_left) {
      *reinterpret_cast<uint4*>(dst) = v;
    } else {
      const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        if (col + e < n_left) dst[e * p.sc.col] = T{static_cast<uint16_t>(w[e / 2] >> (16 * (e % 2)))};
      }
    }
  }
  __syncthreads();
}

// ldmatrix of one 16-deep step's fragments of a warp from the stage at a_stage: A's m16 row i
// (ldmatrix.x4, 16x16) and B's pairs of n8 columns (ldmatrix.x4.trans, 16x16 each).
template <class Cfg>
__device__ __forceinline__ void load_a_fragment(uint32_t (&a)[4], uint32_t a_stage, int step, int i, int wm, int lane) {
  ptx::ldmatrix_x4(a, a_stage + Cfg::a_offset(wm + 16 * i + lane % 16, 2 * step + lane / 16));
}
template <class Cfg>
__device__ __forceinline__ void load_b_fragments(uint32_t (&b)[Cfg::kFragsN / 2][4], uint32_t a_stage, int step, int wn,
                                                 int lane) {
  const uint32_t b_stage = a_stage + Cfg::kStageBytesA;
#pragma unroll
  for (int jp = 0; jp < Cfg::kFragsN / 2; ++jp) {
    ptx::ldmatrix_x4_trans(b[jp], b_stage + Cfg::b_offset(16 * step + lane % 8 + 8 * (lane / 8 % 2),
                                                              (wn + 16 * jp) / 8 + lane / 16));
  }
}

// The MMAs of m16 row i of a step, in the config's order (Cfg::kSerpentine: odd rows backwards).
template <class Cfg, bool kBf16>
__device__ __forceinline__ void mma_row(float (&acc)[Cfg::kFragsM][Cfg::kFragsN][4], int i, const uint32_t (&a)[4],
                                        const uint32_t (&b)[Cfg::kFragsN / 2][4]) {
#pragma unroll
  for (int jj = 0; jj < Cfg::kFragsN; ++jj) {
    const int j = Cfg::kSerpentine && i % 2 == 1 ? Cfg::kFragsN - 1 - jj : jj;
    ptx::mma_m16n8k16<kBf16>(acc[i][j], a, b[j / 2][(j % 2) * 2], b[j / 2][(j % 2) * 2 + 1]);
  }
}

// One 16-deep step's fragments of a warp (MmaFragPipe::kStep / kDoubleStep). load_head() fetches
// what the MMAs of A's first m16 row need (B and that row), load_tail() the other rows: a prefetch
// of the head alone lets a warp start MMAs right after a wait for two thirds fewer registers than
// a whole second buffer.
template <class Cfg>
struct MmaFragments {
  uint32_t a[Cfg::kFragsM][4], b[Cfg::kFragsN / 2][4];

  __device__ __forceinline__ void load_head(uint32_t a_stage, int step, int wm, int wn, int lane) {
    load_a_fragment<Cfg>(a[0], a_stage, step, 0, wm, lane);
    load_b_fragments<Cfg>(b, a_stage, step, wn, lane);
  }
  __device__ __forceinline__ void load_tail(uint32_t a_stage, int step, int wm, int lane) {
#pragma unroll
    for (int i = 1; i < Cfg::kFragsM; ++i) load_a_fragment<Cfg>(a[i], a_stage, step, i, wm, lane);
  }
  __device__ __forceinline__ void load(uint32_t a_stage, int step, int wm, int wn, int lane) {
#pragma unroll
    for (int i = 0; i < Cfg::kFragsM; ++i) load_a_fragment<Cfg>(a[i], a_stage, step, i, wm, lane);
    load_b_fragments<Cfg>(b, a_stage, step, wn, lane);
  }

  template <bool kBf16>
  __device__ __forceinline__ void multiply(float (&acc)[Cfg::kFragsM][Cfg::kFragsN][4]) const {
#pragma unroll
    for (int i = 0; i < Cfg::kFragsM; ++i) mma_row<Cfg, kBf16>(acc, i, a[i], b);
  }
};

// One slice (stage at a_stage, already ready) in a pipelined schedule (Cfg::kFragPipe, above):
// refill() is called at the top of step Cfg::kRefillStep, release() right after the slice's last
// ldmatrix.
template <class Cfg, bool kBf16, class Refill, class Release>
__device__ __forceinline__ void mma_slice_pipelined(uint32_t a_stage, float (&acc)[Cfg::kFragsM][Cfg::kFragsN][4],
                                                    int wm, int wn, int lane, Refill&& refill, Release&& release) {
  constexpr int kSteps = Cfg::kSteps, kRows = Cfg::kFragsM;
  if constexpr (Cfg::kFragPipe == MmaFragPipe::kDoubleStep) {
    MmaFragments<Cfg> f[2];
    f[0].load(a_stage, 0, wm, wn, lane);
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      if (s == Cfg::kRefillStep) refill();
      if (s + 1 < kSteps) {
        f[(s + 1) % 2].load(a_stage, s + 1, wm, wn, lane);
        if (s + 2 == kSteps) release();
      }
      f[s % 2].template multiply<kBf16>(acc);
    }
  } else {
    static_assert(Cfg::kFragPipe == MmaFragPipe::kRowAhead, "kStep runs in the kernel's own loop");
    // Fragment q = s * kRows + i (A row i of step s) lives in A slot q % 2; step s's B in set s % 2.
    uint32_t a[2][4], b[2][Cfg::kFragsN / 2][4];
    load_b_fragments<Cfg>(b[0], a_stage, 0, wn, lane);
    load_a_fragment<Cfg>(a[0], a_stage, 0, 0, wm, lane);
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      if (s == Cfg::kRefillStep) refill();
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        const int q = s * kRows + i;
        if (i + 1 < kRows) {
          load_a_fragment<Cfg>(a[(q + 1) % 2], a_stage, s, i + 1, wm, lane);
        } else if (s + 1 < kSteps) {
          load_b_fragments<Cfg>(b[(s + 1) % 2], a_stage, s + 1, wn, lane);
          load_a_fragment<Cfg>(a[(q + 1) % 2], a_stage, s + 1, 0, wm, lane);
        }
        if (q + 2 == kSteps * kRows) release();  // fragment q + 1, the slice's last, is in flight
        mma_row<Cfg, kBf16>(acc, i, a[q % 2], b[s % 2]);
      }
    }
  }
}

template <class T, bool kAsync, class Cfg = MmaPipelinedConfig>
__global__ void __launch_bounds__(Cfg::kThreads, mma_min_blocks(Cfg::kMinBlocks)) mma_pipelined_kernel(GemmParams p) {
  constexpr bool kBf16 = std::is_same<T, bfloat16_t>::value;
  constexpr int kStages = Cfg::kStages, kSteps = Cfg::kSteps;
  extern __shared__ __align__(128) unsigned char smem[];  // Cfg::kSmemBytes
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int wm = warp / Cfg::kWarpsN * Cfg::kWarpM, wn = warp % Cfg::kWarpsN * Cfg::kWarpN;  // the warp's sub-tile
  const uint32_t smem_shared = ptx::shared_address(smem);
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* c = static_cast<T*>(p.c);
  const typename Cfg::Sync sync(smem_shared + Cfg::kPipeBytes, t, Cfg::kThreads);
  uint32_t g0 = 0;  // running index (mma_stage_sync.cuh) of the current tile's first K slice
  for_each_tile<Cfg::kTileM, Cfg::kTileN, Cfg::kGroupM>(p, [&](int64_t z, int64_t m0, int64_t n0) {
    const int m_left = clamp_left(p.m, m0, Cfg::kTileM), n_left = clamp_left(p.n, n0, Cfg::kTileN);
    const T* a_tile = a + p.sa.offset(z, m0, 0);
    const T* b_tile = b + p.sb.offset(z, 0, n0);
    // 32 bits hold the slice count of any K that fits in memory (2^31 slices: K = 2^37 at 64 deep).
    const int k_slices = static_cast<int>((p.k + Cfg::kTileK - 1) / Cfg::kTileK);
    float acc[Cfg::kFragsM][Cfg::kFragsN][4] = {};  // [m16 fragment][n8 fragment][register]
    MmaSliceLoader<Cfg, kAsync, T> loader(p, a_tile, b_tile, m_left, n_left, t);
    const auto stage_of = [&](uint32_t g) { return smem_shared + (g % kStages) * static_cast<uint32_t>(Cfg::kStageBytes); };
    const bool interior = m_left == Cfg::kTileM && n_left == Cfg::kTileN;
    // Copies the tile's slice `slice` (nothing past K) into its stage.
    const auto refill = [&](int slice) {
      const uint32_t g = g0 + static_cast<uint32_t>(slice);
      const bool any = slice < k_slices;
      if (any) {
        sync.before_refill(g);
        if constexpr (Cfg::kBulkCopy && kAsync && kMmaBulkCopyArch) {
          const int64_t k0 = static_cast<int64_t>(slice) * Cfg::kTileK;
          if (interior && k0 + Cfg::kTileK <= p.k) {
            bulk_copy_slice<Cfg>(p, a, b, z, m0, n0, k0, stage_of(g), sync.full_of(g % kStages), t);
            loader.advance(p);
            return;
          }
        }
        unsigned char* stage = smem + (g % kStages) * Cfg::kStageBytes;
        if (Cfg::kWholeSlices && kAsync && interior && static_cast<int64_t>(slice + 1) * Cfg::kTileK <= p.k) {
          loader.load_next_whole(p, stage);
        } else {
          loader.load_next(p, stage, t);
        }
      }
      sync.loaded(g, any);
    };
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) refill(s);
    // kStep schedule (the pipelined ones keep their fragments in mma_slice_pipelined). With
    // prefetch, frag[1] holds step 0's fragments, whose head the previous slice's last step (or the
    // prologue) loaded; frag[0] holds every other step's.
    MmaFragments<Cfg> frag[Cfg::kFragPrefetch ? 2 : 1];
    if constexpr (Cfg::kFragPrefetch) {
      if (k_slices > 0) {
        sync.ready(g0);
        frag[1].load_head(stage_of(g0), 0, wm, wn, lane);
      }
    }
    for (int kt = 0; kt < k_slices; ++kt) {
      const uint32_t g = g0 + static_cast<uint32_t>(kt);
      if constexpr (Cfg::kFragPipe != MmaFragPipe::kStep) {
        sync.ready(g);
        mma_slice_pipelined<Cfg, kBf16>(
            stage_of(g), acc, wm, wn, lane, [&] { refill(kt + kStages - 1); }, [&] { sync.released(g, lane); });
      } else {
        if constexpr (!Cfg::kFragPrefetch) sync.ready(g);
#pragma unroll
        for (int step = 0; step < kSteps; ++step) {
          if (step == Cfg::kRefillStep) refill(kt + kStages - 1);
          MmaFragments<Cfg>& f = frag[Cfg::kFragPrefetch && step == 0 ? 1 : 0];
          if (Cfg::kFragPrefetch && step == 0) f.load_tail(stage_of(g), step, wm, lane);
          else f.load(stage_of(g), step, wm, wn, lane);
          if (step == kSteps - 1) {
            sync.released(g, lane);
            // The next slice's head is in flight before this step's MMAs, which then cover the
            // ldmatrix latency after the wait instead of stalling on it.
            if (Cfg::kFragPrefetch && kt + 1 < k_slices) {
              sync.ready(g + 1);
              frag[Cfg::kFragPrefetch ? 1 : 0].load_head(stage_of(g + 1), 0, wm, wn, lane);
            }
          }
          f.template multiply<kBf16>(acc);
        }
      }
    }
    if constexpr (Cfg::Sync::kRunningIndex) g0 += static_cast<uint32_t>(k_slices);
    ptx::cp_async_wait<0>();
    __syncthreads();  // every stage is free: for the staged epilogue and the next tile's prologue
    if constexpr (Cfg::kSmemEpilogue) {
      store_fragments_staged<Cfg>(p, c, z, m0, n0, m_left, n_left, wm, wn, t, acc, smem);
    } else {
      store_fragments_direct<Cfg>(p, c, z, m0, n0, m_left, n_left, wm, wn, lane, acc);
    }
  });
}

#if defined(__CUDACC__)
// Lets the kernel use Cfg::kSmemBytes of dynamic shared memory where that exceeds the default
// 48 KiB. A per-function attribute of the current device's context, neither synchronizing nor a
// stream operation (so it is legal during graph capture): launchers set it before every launch,
// which also covers every device a process uses.
template <class T, bool kAsync, class Cfg>
cudaError_t configure_mma_kernel() {
  if constexpr (Cfg::kSmemBytes <= 48 * 1024) {
    return cudaSuccess;
  } else {
    return cudaFuncSetAttribute(mma_pipelined_kernel<T, kAsync, Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                Cfg::kSmemBytes);
  }
}
#endif

}  // namespace gemm
}  // namespace gpuprims
