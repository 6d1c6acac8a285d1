#pragma once
// row_hold: rows too long for one block, in one launch, x read once (issue 5, docs/norms.md
// "row_hold"). "auto" runs it for aligned float32 rows of 65537 (softmax kind: 16385) to 2097152
// elements, in batches of 2^23 elements or more, on sm_90 GPUs (variant_row_hold.cu says where and
// why).
//
// The rows' chunks are numbered and cut as row_lag's (row_lag.cuh: C chunks of S elements per row,
// chunk k is chunk k % C of row k / C), and a persistent grid takes them in ticket order from an
// atomic counter. The block holding ticket t runs row_lag's phase A on chunk t (reads it, publishes
// its partial statistics, releases its row's arrival counter) and keeps the chunk in one of its two
// shared-memory slots. Once both slots are full it runs phase B on its oldest chunk from the slot:
// waits (acquire) for the chunk's row, combines the row's partials (row_lag's lag_write: the same
// bits for every chunk of a row) and writes the output. (For the norm kind, and for softmax rows of
// more than 32 chunks, the block whose chunk arrived last has combined them once and published
// them: hold_combines_once.) Where row_lag reads each chunk again from L2 a fixed number of tickets
// later, here the block that read it writes it: x crosses the memory system once, and phase B's wait lies about one ticket of every resident block after phase A
// (a block takes its next ticket only after its previous one). Chunks arrive in registers and are
// stored into the slot by the threads that read them; float32 softmax holds exp(x - chunk max)
// instead of x (hold_exp_publish). (Bulk copies into the slots, overlapping the next chunk's read
// with the oldest chunk's write, ran until session 42: docs/norms.md, "row_hold's bulk loop".)
//
// Forward progress: the grid is launched cooperatively (all its blocks resident at once) and has at
// least C blocks. A block takes a ticket only with a slot free, and runs phase A of every ticket it
// takes at once, without waiting. Were every block waiting in phase B, every taken ticket would be
// published, so each block's awaited row would be the one row that still has untaken tickets, and
// each block's oldest chunk a different chunk of it taken already: fewer than C blocks. (Without
// co-residency a few running blocks could all wait for a row whose last tickets only blocks that
// cannot start would take. A spill path that took further tickets instead of waiting avoided
// that, but cost 5-7 points at the norm kind's 80 registers, session 21: docs/norms.md.)
//
// Scratch: row_lag's (RowLagScratch), counters cleared by one cudaMemsetAsync per launch. Vector
// path only (NormParams::vec_ok, as row_lag).
#include <cstdint>
#include <limits>
#include <type_traits>

#include <cuda_runtime.h>

#include "gpuprims/norms/row_lag.cuh"

namespace gpuprims {
namespace norms {

// Phase A's read: x is not read again, so it is not allocated in L1 (ld.global.nc.L1::no_allocate).
constexpr LoadPolicy kHoldRead = LoadPolicy::kStreaming;
// Chunks a block holds in shared memory.
constexpr int kHeldSlots = 2;

template <class T, class Cfg>
constexpr int row_hold_smem_bytes() {
  return kHeldSlots * Cfg::kVecs * Cfg::kThreads * static_cast<int>(sizeof(Vec16<T>));
}

// Slot `slot` of a block's held chunks: a chunk in memory order, so thread r's vector v (LagChunk's
// slot_begin) lies at v * kThreads + r.
template <class T, class Cfg>
__device__ __forceinline__ Vec16<T>* held_slot(Vec16<T>* held, int slot) {
  return held + slot * Cfg::kVecs * Cfg::kThreads;
}

// The block's copy of its chunk in slot `into` (memory order, as held_slot).
template <class T, int kThreads, int kVecs>
__device__ __forceinline__ void store_held(Vec16<T>* into, const LagChunk<T, kThreads, kVecs>& chunk) {
#pragma unroll
  for (int v = 0; v < kVecs; ++v) into[v * kThreads + threadIdx.x] = chunk.q[v];
}

// Softmax (not log_softmax) of float32 rows holds exponentials: phase A computes exp(x - m_c) for
// its chunk's sum anyway, so it keeps those in the slot instead of x, and phase B multiplies each
// by exp(m_c - M) / S (lag_write's kExpHeld) instead of evaluating exp(x - M): one exponential an
// element instead of two. (Rounding: x - m_c and m_c - M are both <= 0 and sum to x - M, so the
// exponent's rounding is that of x - M; one more product is rounded.) float16 / bfloat16 chunks
// keep x: their exponentials would be rounded to the 2-byte type. log_softmax's output needs x.
template <class T, RowKind kKind>
constexpr bool kMayHoldExp = kKind == RowKind::kSoftmax && std::is_same<T, float>::value;
template <class T, RowKind kKind>
__device__ __forceinline__ bool holds_exp(const NormParams& p) {
  return kMayHoldExp<T, kKind> && !p.log;
}

// Phase A of ticket t where the block holds exponentials (holds_exp): `chunk` (x as read) becomes
// exp(x - m_c), stored into `into`, summed in chunk_partial's order (the same partial bits as
// lag_publish's) and published. Returns m_c. A chunk of -inf (m_c = -inf) holds 0s; the fill past
// the chunk's end (-inf) becomes 0, never written out. (row_stats.cuh's softmax_exponentiate does
// the same for a whole row held in a RowTile, where a row of -inf may turn into NaNs: its output is
// NaN anyway. A chunk of -inf can sit in a row with finite values, whose outputs must be 0 there.)
template <class T, RowKind kKind, class Cfg, class Reduce>
__device__ __forceinline__ acc_t<T> hold_exp_publish(const NormParams& p, const RowLagScratch<kKind, acc_t<T>>& s,
                                                     int chunks_per_row, int64_t t,
                                                     LagChunk<T, Cfg::kThreads, Cfg::kVecs>& chunk, Vec16<T>* into,
                                                     Reduce& reduce) {
  using Acc = acc_t<T>;
  static_assert(kMayHoldExp<T, kKind>, "exponentials are held for float32 softmax only");
  const LagChunkPos at = lag_chunk_pos<Cfg::template chunk_len<T>()>(t, chunks_per_row, p.layout.row_len);
  const Acc m = tile_max<true>(chunk, reduce);
  const Acc base = m == -std::numeric_limits<Acc>::infinity() ? Acc(0) : m;
#pragma unroll
  for (int v = 0; v < Cfg::kVecs; ++v) {
#pragma unroll
    for (int l = 0; l < Vec16<T>::kLanes; ++l) chunk.q[v].lane[l] = exp_of(chunk.q[v].lane[l] - base);
  }
  store_held(into, chunk);
  Acc sum = reduce(sum_tile_vectors(chunk, at.len, threadIdx.x, [](Acc e) { return e; }), SumOp{});
  if (m == -std::numeric_limits<Acc>::infinity()) sum = Acc(0);
  lag_publish_partial<T, kKind>(p, s, t, at, nullptr, ChunkPartial<kKind, Acc>{m, sum}, chunks_per_row,
                                Cfg::template chunk_len<T>());
  return m;
}

// Phase A of ticket t on `chunk` (x as read) held in slot `into`: exponentials where the block
// holds them (hold_exp_publish), else x, published. Returns m_c where exponentials are held, else 0.
template <class T, RowKind kKind, class Cfg, class Reduce, class PairReduce>
__device__ __forceinline__ acc_t<T> hold_publish(const NormParams& p, const RowLagScratch<kKind, acc_t<T>>& s,
                                                 int chunks_per_row, int64_t t,
                                                 LagChunk<T, Cfg::kThreads, Cfg::kVecs>& chunk, Vec16<T>* into,
                                                 Reduce& reduce, PairReduce& reduce_pair) {
  if constexpr (kMayHoldExp<T, kKind>) {  // hold_exp_publish compiles for these kinds only
    if (holds_exp<T, kKind>(p)) return hold_exp_publish<T, kKind, Cfg>(p, s, chunks_per_row, t, chunk, into, reduce);
  }
  // Stored before the partial's reductions, so the chunk's registers are free in them.
  store_held(into, chunk);
  lag_publish<T, kKind, Cfg>(p, s, chunks_per_row, t, chunk, reduce, reduce_pair);
  return acc_t<T>(0);
}

// Phase B of held chunk j (read_held), whose max is chunk_max where the block holds exponentials.
template <class T, RowKind kKind, class Cfg>
__device__ __forceinline__ void hold_write(const NormParams& p, const RowLagScratch<kKind, acc_t<T>>& s,
                                           int chunks_per_row, int64_t j,
                                           const LagChunk<T, Cfg::kThreads, Cfg::kVecs>& chunk, acc_t<T> chunk_max) {
  if (holds_exp<T, kKind>(p)) {
    lag_write<T, kKind, Cfg, kMayHoldExp<T, kKind>>(p, s, chunks_per_row, j, chunk, chunk_max);
  } else {
    lag_write<T, kKind, Cfg>(p, s, chunks_per_row, j, chunk);
  }
}

// Phase B's read of a held chunk: the calling thread's vectors of slot `slot` into `chunk` (no fill
// past the chunk's end: lag_write writes only the valid slots).
template <class T, class Cfg>
__device__ __forceinline__ void read_held(Vec16<T>* held, int slot, LagChunk<T, Cfg::kThreads, Cfg::kVecs>& chunk) {
  const Vec16<T>* const from = held_slot<T, Cfg>(held, slot);
#pragma unroll
  for (int v = 0; v < Cfg::kVecs; ++v) chunk.q[v] = from[v * Cfg::kThreads + threadIdx.x];
}

// Cfg: RowLagConfig's shape (kPrefetch unused: a block takes a ticket only when it can run it).
// Launch cooperatively with at least chunks_per_row blocks (launch_row_hold). A block reads its chunk
// into registers and stores it into the slot (each thread its own vectors, so no barrier guards
// them).
template <class T, RowKind kKind, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
row_hold_kernel(NormParams p, RowLagScratch<kKind, acc_t<T>> s, int chunks_per_row, int64_t chunks) {
  extern __shared__ uint4 held_vectors[];  // kHeldSlots chunks, each in memory order
  Vec16<T>* const held = reinterpret_cast<Vec16<T>*>(held_vectors);
  using Chunk = LagChunk<T, Cfg::kThreads, Cfg::kVecs>;
  auto [reduce, reduce_pair] = lag_reducers<acc_t<T>, Cfg::kThreads>();
  // Slot `turn` is rewritten two tickets later, after the barrier of the ticket in between.
  __shared__ long long ticket_slot[2];
  __shared__ long long held_chunk[kHeldSlots];  // written by thread 0, read after a later barrier
  __shared__ acc_t<T> held_max[kHeldSlots];     // their maxima, where the block holds exponentials
  // The same in every thread: the held chunks are slots oldest, oldest + 1, ... (count of them).
  int count = 0, oldest = 0;
  bool tickets_left = true;
  for (int turn = 0;; turn ^= 1) {
    if (tickets_left) {
      if (threadIdx.x == 0) ticket_slot[turn] = static_cast<long long>(atomicAdd(s.ticket, 1ull));
      __syncthreads();
      const int64_t t = ticket_slot[turn];
      if (t < chunks) {
        Chunk chunk;
        lag_load<T, kKind, Cfg, kHoldRead>(p, chunks_per_row, t, chunk);
        int slot = oldest + count;
        if (slot >= kHeldSlots) slot -= kHeldSlots;
        const acc_t<T> m = hold_publish<T, kKind, Cfg>(p, s, chunks_per_row, t, chunk, held_slot<T, Cfg>(held, slot),
                                                       reduce, reduce_pair);
        if (threadIdx.x == 0) {
          held_chunk[slot] = t;
          held_max[slot] = m;
        }
        if (++count < kHeldSlots) continue;
      } else {
        tickets_left = false;
      }
    }
    if (count == 0) break;
    // held_chunk[oldest]; and the block's phase A done before any warp's phase B (in session 21's
    // measurements no slower than letting warps run ahead).
    __syncthreads();
    Chunk chunk;
    read_held<T, Cfg>(held, oldest, chunk);
    hold_write<T, kKind, Cfg>(p, s, chunks_per_row, held_chunk[oldest], chunk, held_max[oldest]);
    if (++oldest == kHeldSlots) oldest = 0;
    --count;
  }
}

// Whether a row's last-arriving chunk combines its statistics once for every phase B of the row
// (RowLagScratch::combined_once): always for the norm kind, whose combination (chunk moments about
// a common shift) is long; for the softmax kind where C > 32, where each lane of every combining
// warp folds partials loaded one after another. Session 44 device runs 1-2 (H200,
// bench/tune/norms_cluster_tune.cu, % of copy, every warp combining -> combined once):
//   layer_norm / rms_norm 256 x 262144 (C = 32) 64.9-65.6 -> 72.6-73.6 / 72.7-73.9 -> 78.8-79.9;
//     640 x 100000 (C = 13) 68.2 -> 69.6 / 75.1 -> 74.9; 2048 x 32768 (C = 4) 68.3 -> 69.2 / 74.2 -> 74.5;
//     128 x 524288 (C = 64) 50.8 -> 70.9 / 58.1 -> 76.9; 32 x 2097152 (C = 256) 24.1 -> 58.3 / 26.0 -> 67.9;
//   softmax 256 x 262144 85.2-86.6 -> 81.8-83.2 (log_softmax 84.7-85.6 -> 80.8-81.8); 640 x 100000
//     83.4 -> 78.0; 2048 x 32768 83.8 -> 82.2; but 128 x 524288 78.6 -> 81.7, 64 x 1048576 (C = 128)
//     63.0 -> 78.9, 32 x 2097152 46.2 -> 72.2.
template <RowKind kKind>
constexpr bool hold_combines_once(int64_t chunks_per_row) {
  return kKind == RowKind::kNorm || chunks_per_row > kWarpSize;
}

// Launches row_hold_kernel on `stream`, cooperatively, on min(blocks, chunks) blocks: `blocks` at
// most the resident ones (per SM x SMs) and at least C, else cudaErrorCooperativeLaunchTooLarge /
// cudaErrorInvalidValue (the kernel not launched; neither error is sticky). scratch: row_lag_scratch_bytes<kKind, acc_t<T>>(rows,
// rows * C) bytes, its counters cleared here (stream-ordered). The kernel's dynamic shared memory
// limit must be set (row_hold_smem_bytes) on the device.
template <class T, RowKind kKind, class Cfg>
cudaError_t launch_row_hold(const NormParams& p, void* scratch, int64_t blocks, cudaStream_t stream) {
  using Acc = acc_t<T>;
  const int64_t rows = p.layout.num_rows;
  const int64_t per_row = Cfg::template chunks_per_row<T>(p.layout.row_len);
  const int64_t chunks = rows * per_row;
  const int64_t grid = min_of(blocks, chunks);
  if (grid < per_row || grid > 0x7fffffff || per_row > 0x7fffffff) return cudaErrorInvalidValue;
  const cudaError_t e = cudaMemsetAsync(scratch, 0, row_lag_counter_bytes(rows), stream);
  if (e != cudaSuccess) return e;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(grid));
  config.blockDim = dim3(Cfg::kThreads);
  config.dynamicSmemBytes = row_hold_smem_bytes<T, Cfg>();
  config.stream = stream;
  cudaLaunchAttribute cooperative;
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, row_hold_kernel<T, kKind, Cfg>, p, row_lag_scratch<kKind, Acc>(scratch, rows, chunks, hold_combines_once<kKind>(per_row)),
                            static_cast<int>(per_row), chunks);
}

}  // namespace norms
}  // namespace gpuprims
