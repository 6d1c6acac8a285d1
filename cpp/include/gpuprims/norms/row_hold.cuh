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
// (a block takes its next ticket only after its previous one). Chunks arrive in registers
// (row_hold_register_loop) or, where variant_row_hold.cu prefers it, by bulk copies that overlap the
// next chunk's read with the oldest chunk's write (row_hold_bulk_loop).
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
#include "gpuprims/util/ptx_sm90.cuh"

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
// slot_begin) lies at v * kThreads + r, whether the thread stored it or a bulk copy brought it.
template <class T, class Cfg>
__device__ __forceinline__ Vec16<T>* held_slot(Vec16<T>* held, int slot) {
  return held + slot * Cfg::kVecs * Cfg::kThreads;
}

// Phase B's read of a held chunk: the calling thread's vectors of slot `slot` into `chunk` (no fill
// past the chunk's end: lag_write writes only the valid slots).
template <class T, class Cfg>
__device__ __forceinline__ void read_held(Vec16<T>* held, int slot, LagChunk<T, Cfg::kThreads, Cfg::kVecs>& chunk) {
  const Vec16<T>* const from = held_slot<T, Cfg>(held, slot);
#pragma unroll
  for (int v = 0; v < Cfg::kVecs; ++v) chunk.q[v] = from[v * Cfg::kThreads + threadIdx.x];
}

// The sm_90 loop of row_hold_kernel (kBulk; variant_row_hold.cu says where it runs): chunks arrive
// by bulk copies (cp.async.bulk, completing on one mbarrier per slot) in memory order, which is the
// register loop's slot layout, so a block's next chunk can be in flight while it writes its oldest.
// A block holding chunks a < b takes its next ticket c and starts c's copy into a's slot (a read
// into registers first) before a's phase B when b's row lies past a's: then c's row does too, so
// a's wait never waits for c, which the block publishes only after it. Otherwise it writes a first
// and then takes c, as the register loop does. Forward progress extends the argument at the head
// of this file: a block waiting for row r holds at most one unpublished chunk, of a row after r, so in
// the earliest row any block waits for every taken chunk is published.
template <class T, RowKind kKind, class Cfg>
__device__ __forceinline__ void row_hold_bulk_loop(const NormParams& p, const RowLagScratch<kKind, acc_t<T>>& s,
                                                   int chunks_per_row, int64_t chunks, Vec16<T>* held) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Chunk = LagChunk<T, Cfg::kThreads, Cfg::kVecs>;
  constexpr int64_t kLen = Cfg::template chunk_len<T>();
  LagReducers<acc_t<T>, Cfg::kThreads> reducers = lag_reducers<acc_t<T>, Cfg::kThreads>();
  __shared__ long long ticket_slot[2];
  __shared__ long long held_chunk[kHeldSlots];  // written by thread 0, read after a later barrier
  __shared__ long long held_row[kHeldSlots];    // the rows of held_chunk[]
  __shared__ uint64_t landed[kHeldSlots];       // a slot's copy complete
  const int64_t n = p.layout.row_len;
  const T fill = cast_value<T>(tile_fill<kKind, acc_t<T>>());
  if (threadIdx.x == 0) {
    for (int i = 0; i < kHeldSlots; ++i) ptx::mbarrier_init(&landed[i], 1);
    ptx::fence_mbarrier_init();
  }
  __syncthreads();
  // Thread 0 takes a ticket into ticket_slot[i] and notes its chunk's bytes in next_copy[i] (none
  // past the last chunk); copy(slot, i) starts them into a slot once every thread's reads of the
  // slot are behind a barrier. Two steps, so that the ticket's arithmetic happens before a chunk's
  // registers are live, and through shared memory, so that nothing stays live beside them (eight
  // more registers across phase B spilled 32 bytes in the float32 norm kernel).
  struct Copy {
    const T* src;
    uint32_t bytes;
  };
  __shared__ Copy next_copy[2];
  const auto take = [&](int i) {
    const long long t = static_cast<long long>(atomicAdd(s.ticket, 1ull));
    ticket_slot[i] = t;
    if (t < chunks) {
      const LagChunkPos at = lag_chunk_pos<kLen>(t, chunks_per_row, n);
      next_copy[i] = {static_cast<const T*>(p.x) + p.layout.x_row_offset(at.row) + at.begin,
                      static_cast<uint32_t>(at.len) * static_cast<uint32_t>(sizeof(T))};
    }
  };
  const auto copy = [&](int slot, int i) {
    if (ticket_slot[i] >= chunks) return;
    const Copy c = next_copy[i];
    ptx::fence_proxy_async_shared();
    ptx::mbarrier_arrive_expect_tx(&landed[slot], c.bytes);
    if (c.bytes != 0) ptx::bulk_load_global_to_shared(held_slot<T, Cfg>(held, slot), c.src, c.bytes, &landed[slot]);
  };
  unsigned parity = 0;  // bit i: the phase of landed[i] to wait for next
  // Phase A of chunk t, copied into `slot`: wait for the copy, read it (the fill past its end),
  // publish its partial.
  const auto publish = [&](int slot, int64_t t) {
    ptx::mbarrier_wait(&landed[slot], (parity >> slot) & 1u);
    parity ^= 1u << slot;
    const LagChunkPos at = lag_chunk_pos<kLen>(t, chunks_per_row, n);
    Chunk chunk;
    chunk.template load<LoadPolicy::kShared>(reinterpret_cast<const T*>(held_slot<T, Cfg>(held, slot)), at.len,
                                             threadIdx.x, fill);
    lag_publish<T, kKind, Cfg>(p, s, chunks_per_row, t, chunk, reducers.reduce, reducers.reduce_pair);
    if (threadIdx.x == 0) {
      held_chunk[slot] = t;
      held_row[slot] = at.row;
    }
  };
  // Both slots' copies in flight before either's phase A (phase A waits for nothing).
  if (threadIdx.x == 0) {
    take(0);
    copy(0, 0);
    take(1);
    copy(1, 1);
  }
  __syncthreads();
  int count = 0, oldest = 0;  // the held (published) chunks: slot oldest, then the other
  bool tickets_left = true, prologue = true;
  int64_t incoming = ticket_slot[0];  // being copied into slot (oldest + count) % 2
  for (;;) {
    if (tickets_left) {
      if (incoming < chunks) {
        publish((oldest + count) & 1, incoming);
        ++count;
      } else {
        tickets_left = false;
      }
    }
    if (prologue) {
      prologue = false;
      incoming = ticket_slot[1];
      continue;
    }
    if (count == 0) break;
    __syncthreads();  // held_chunk[], ticket_slot[0]; every thread past its last use of them
    const int64_t a = held_chunk[oldest];
    // With tickets left both slots are full (count == 2).
    const bool early = tickets_left && held_row[oldest ^ 1] != held_row[oldest];
    if (early && threadIdx.x == 0) take(0);
    Chunk chunk;
    read_held<T, Cfg>(held, oldest, chunk);
    if (early) {
      __syncthreads();  // slot `oldest` read by every thread
      if (threadIdx.x == 0) copy(oldest, 0);
    }
    lag_write<T, kKind, Cfg>(p, s, chunks_per_row, a, chunk);
    --count;
    if (tickets_left) {
      if (!early) {
        __syncthreads();
        if (threadIdx.x == 0) {
          take(0);
          copy(oldest, 0);
        }
      }
      __syncthreads();  // ticket_slot[0]
      incoming = ticket_slot[0];
    }
    oldest ^= 1;
  }
#endif
}

// The loop of row_hold_kernel on any GPU: a block reads its chunk into registers and stores it into
// the slot (each thread its own vectors, so no barrier guards them).
template <class T, RowKind kKind, class Cfg>
__device__ __forceinline__ void row_hold_register_loop(const NormParams& p, const RowLagScratch<kKind, acc_t<T>>& s,
                                                       int chunks_per_row, int64_t chunks, Vec16<T>* held) {
  using Chunk = LagChunk<T, Cfg::kThreads, Cfg::kVecs>;
  auto [reduce, reduce_pair] = lag_reducers<acc_t<T>, Cfg::kThreads>();
  // Slot `turn` is rewritten two tickets later, after the barrier of the ticket in between.
  __shared__ long long ticket_slot[2];
  __shared__ long long held_chunk[kHeldSlots];  // written by thread 0, read after a later barrier
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
        Vec16<T>* const into = held_slot<T, Cfg>(held, slot);
#pragma unroll
        for (int v = 0; v < Cfg::kVecs; ++v) into[v * Cfg::kThreads + threadIdx.x] = chunk.q[v];
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
    read_held<T, Cfg>(held, oldest, chunk);
    lag_write<T, kKind, Cfg>(p, s, chunks_per_row, held_chunk[oldest], chunk);
    if (++oldest == kHeldSlots) oldest = 0;
    --count;
  }
}

// Cfg: RowLagConfig's shape (kPrefetch unused: a block takes a ticket only when it can run it).
// Launch cooperatively with at least chunks_per_row blocks (launch_row_hold).
template <class T, RowKind kKind, class Cfg, bool kBulk>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
row_hold_kernel(NormParams p, RowLagScratch<kKind, acc_t<T>> s, int chunks_per_row, int64_t chunks) {
  extern __shared__ uint4 held_vectors[];  // kHeldSlots chunks, each in memory order
  Vec16<T>* held = reinterpret_cast<Vec16<T>*>(held_vectors);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  constexpr bool kBulkHere = false;  // no bulk copies: the register loop, the same function
#else
  constexpr bool kBulkHere = kBulk;
#endif
  if constexpr (kBulkHere) {
    row_hold_bulk_loop<T, kKind, Cfg>(p, s, chunks_per_row, chunks, held);
  } else {
    row_hold_register_loop<T, kKind, Cfg>(p, s, chunks_per_row, chunks, held);
  }
}

// Launches row_hold_kernel on `stream`, cooperatively, on min(blocks, chunks) blocks: `blocks` at
// most the resident ones (per SM x SMs) and at least C, else cudaErrorCooperativeLaunchTooLarge /
// cudaErrorInvalidValue (the kernel not launched; neither error is sticky). scratch: row_lag_scratch_bytes<kKind, acc_t<T>>(rows,
// rows * C) bytes, its counters cleared here (stream-ordered). The kernel's dynamic shared memory
// limit must be set (row_hold_smem_bytes) on the device.
template <class T, RowKind kKind, class Cfg, bool kBulk>
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
  return cudaLaunchKernelEx(&config, row_hold_kernel<T, kKind, Cfg, kBulk>, p, row_lag_scratch<kKind, Acc>(scratch, rows, chunks),
                            static_cast<int>(per_row), chunks);
}

}  // namespace norms
}  // namespace gpuprims
