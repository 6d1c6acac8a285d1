#pragma once
// row_hold: rows too long for one block, in one launch, x read once (issue 5, docs/norms.md
// "row_hold"). "auto" runs it for aligned float32 rows of 65537 to 524288 elements on sm_90 GPUs
// (variant_row_hold.cu says where and why).
//
// The rows' chunks are numbered and cut as row_lag's (row_lag.cuh: C chunks of S elements per row,
// chunk k is chunk k % C of row k / C), and a persistent grid takes them in ticket order from an
// atomic counter. The block holding ticket t runs row_lag's phase A on chunk t (reads it, publishes
// its partial statistics, releases its row's arrival counter) and keeps the chunk in one of its two
// shared-memory slots. Once both slots are full it runs phase B on its oldest chunk from the slot:
// waits (acquire) for the chunk's row, combines the row's partials (row_lag's lag_write: the same
// bits for every chunk of a row) and writes the output. Where row_lag reads each chunk again from
// L2 a fixed number of tickets later, here the block that read it writes it: x crosses the memory
// system once, and phase B's wait lies about one ticket of every resident block after phase A
// (a block takes its next ticket only after its previous one).
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

// Cfg: RowLagConfig's shape (kPrefetch unused: a block takes a ticket only when it can run it).
// Launch cooperatively with at least chunks_per_row blocks (launch_row_hold).
template <class T, RowKind kKind, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
row_hold_kernel(NormParams p, RowLagScratch<kKind, acc_t<T>> s, int chunks_per_row, int64_t chunks) {
  using Chunk = LagChunk<T, Cfg::kThreads, Cfg::kVecs>;
  auto [reduce, reduce_pair] = lag_reducers<acc_t<T>, Cfg::kThreads>();
  // Slot `turn` is rewritten two tickets later, after the barrier of the ticket in between.
  __shared__ long long ticket_slot[2];
  __shared__ long long held_chunk[kHeldSlots];  // written by thread 0, read after a later barrier
  extern __shared__ uint4 held_vectors[];       // kHeldSlots chunks, each thread's own vectors
  Vec16<T>* held = reinterpret_cast<Vec16<T>*>(held_vectors);
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
        // Stored before the partial's reductions, so the chunk's registers are free in them.
#pragma unroll
        for (int v = 0; v < Cfg::kVecs; ++v) held[(slot * Cfg::kVecs + v) * Cfg::kThreads + threadIdx.x] = chunk.q[v];
        lag_publish<T, kKind, Cfg>(p, s, chunks_per_row, t, chunk, reduce, reduce_pair);
        if (threadIdx.x == 0) held_chunk[slot] = t;
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
#pragma unroll
    for (int v = 0; v < Cfg::kVecs; ++v) chunk.q[v] = held[(oldest * Cfg::kVecs + v) * Cfg::kThreads + threadIdx.x];
    lag_write<T, kKind, Cfg>(p, s, chunks_per_row, held_chunk[oldest], chunk);
    if (++oldest == kHeldSlots) oldest = 0;
    --count;
  }
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
  return cudaLaunchKernelEx(&config, row_hold_kernel<T, kKind, Cfg>, p, row_lag_scratch<kKind, Acc>(scratch, rows, chunks),
                            static_cast<int>(per_row), chunks);
}

}  // namespace norms
}  // namespace gpuprims
