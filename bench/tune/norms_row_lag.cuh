#pragma once
// row_lag: rows too long for one block in one launch, x read twice but from DRAM once (issue 5).
// A harness-only candidate (bench/tune/norms_cluster_tune.cu): measured in session 12 device runs 1
// and 2 (docs/norms.md "row_lag"), it tied cluster_row for the softmax kind and beat split_row by
// 5-8 points for the float32 norm kind, far from the 80 % target, so the library does not run it.
// It lives here, with the few PTX helpers it needs beyond the library's util/ptx files.
//
// A row of n elements is cut into C = ceil(n / S) chunks of S elements (never crossing rows), and
// the rows' chunks are numbered row-major: chunk k is chunk k % C of row k / C. Blocks take tickets
// t = 0, 1, ..., chunks + L - 1 from an atomic counter (not blockIdx: tickets go out in the order
// blocks actually run), L >= C the lag. The block holding ticket t
//   phase A (t < chunks): reads chunk t (16-byte loads, L2 evict_last), reduces it to the partial
//     statistics split_row's chunks give (softmax kind: max and sum exp(x - max); norm kind: mean
//     and M2 of u in the row's frame) and publishes them: partial[t], then a releasing increment
//     of its row's arrival counter;
//   phase B (t >= L): takes chunk j = t - L, waits (acquire) until all C chunks of j's row have
//     arrived, combines the C partials in a fixed order (every chunk of a row gets the same bits:
//     deterministic), reads chunk j again -- L tickets after phase A read it, so from L2 (evict_first:
//     its last use) -- and writes the output (st.global.cs).
// DRAM sees one read of x and one write of y, as a copy; no block holds a row on chip, and nothing
// but the tail waits for a whole row.
//
// Forward progress, any grid and any residency: the chunks of j's row have tickets <= (row end)
// <= j + C - 1 = t - L + C - 1 <= t - 1 (L >= C). A ticket is handed only to a running block, which
// works on it before any ticket it claims later; phase A never waits, and phase B of ticket t waits
// only for phase A of smaller tickets. By induction on t every ticket completes: the smallest
// unfinished ticket is the one its block is working on, and it waits on nothing unfinished. The
// schedules keep this (LagSchedule): kEarly publishes before it waits; kSplit's phase B of chunk j
// is ticket 2(j + L) + 1, above the tickets 2j' (j' <= j + C - 1) of its row's phase A.
//
// Scratch (row_lag_scratch_bytes): a 64-bit ticket counter and one arrival counter per row (both
// zero at launch: launch_row_lag clears them with one cudaMemsetAsync), the chunks' partials and the
// rows' first elements (norm kind: written by chunk 0's phase A, since with y = x chunk 0 may be
// overwritten before the row's last phase B reads the frame).
//
// Vector path only (NormParams::vec_ok and S a whole number of vectors, so every chunk starts
// 16-byte aligned).
#include <cstdint>
#include <limits>

#include <cuda_runtime.h>

#include "gpuprims/norms/cluster_row.cuh"
#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/row_stats.cuh"
#include "gpuprims/norms/row_tile.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/ptx_sm80.cuh"
#include "gpuprims/util/ptx_sm90.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace norms {

// How a chunk read travels: streaming past L1 (the library's ld.global.nc.L1::no_allocate), with
// an L2 eviction priority where it is read again soon (kKeep: phase A, evict_last) or for the last
// time (kLast: phase B, evict_first). sm_80/90 take the priority as an L2 cache policy
// (createpolicy + .L2::cache_hint); ld's .L2::evict_* qualifiers are for 256-bit loads only.
enum class LagLoad { kStreaming, kKeep, kLast };

template <class T, LagLoad kLoad>
__device__ __forceinline__ Vec16<T> lag_load_vec16(const T* aligned_ptr) {
  uint4 bits;
  if constexpr (kLoad == LagLoad::kStreaming) {
    bits = ptx::ld_global_nc_na_v4(aligned_ptr);
  } else {
    uint64_t policy;
    if constexpr (kLoad == LagLoad::kKeep) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    else asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(bits.x), "=r"(bits.y), "=r"(bits.z), "=r"(bits.w)
                 : "l"(aligned_ptr), "l"(policy));
  }
  Vec16<T> v;
  memcpy(&v, &bits, sizeof(v));
  return v;
}

// The arrival counters between blocks of one launch, at GPU scope: the releasing add orders thread
// 0's earlier writes (the partial, the row's first element) before the increment; a thread whose
// acquiring load reads the complete count sees them in its later loads.
__device__ __forceinline__ void lag_release_add(unsigned* ptr, unsigned v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(ptr), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned lag_acquire_load(const unsigned* ptr) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(ptr) : "memory");
  return v;
}

// The order of a ticket's work.
//   kAThenB: phase A of ticket t, then phase B of chunk t - L, in one block.
//   kEarly: phase A's loads (DRAM) and phase B's re-read (L2) issued together, then phase A's
//     reduction and publication, then phase B's wait, combine and stores: the re-read's latency
//     hides behind the DRAM read (both chunks live in registers).
//   kSplit: tickets alternate roles: ticket 2k is phase A of chunk k, ticket 2k + 1 phase B of
//     chunk k - L; a block does one or the other, so DRAM-bound and L2-bound work run in different
//     blocks side by side.
//   kBulk (sm_90): kEarly's order with both reads made by the bulk-copy engine (cp.async.bulk, one
//     instruction per chunk) into two shared-memory buffers: 2 x 32 KiB in flight per block without
//     registers, read back from shared memory by the reduction and the stores.
enum class LagSchedule { kAThenB, kEarly, kSplit, kBulk };

// kThreads threads per block, kVecs 16-byte vectors per thread per chunk (S = kThreads * kVecs *
// 16 / sizeof(T) elements); kMinBlocks: __launch_bounds__' resident blocks per SM.
// kHints: phase A's loads evict_last, phase B's evict_first (else both plain streaming loads).
// kApplyUnroll (kAThenB only): phase B's slots in flight at once, issued after the row's wait (0:
//   the whole chunk re-read before the wait, so its L2 latency overlaps the wait and the combine).
// kPrefetch: a block takes its next ticket while it works on the current one, so the atomic's
//   round trip leaves the ticket's critical path (meant for a persistent grid; correct with any).
template <int kThreads_, int kVecs_, int kMinBlocks_, LagSchedule kSchedule_ = LagSchedule::kAThenB,
          bool kHints_ = true, int kApplyUnroll_ = 4, bool kPrefetch_ = false>
struct RowLagConfig {
  static constexpr int kThreads = kThreads_;
  static constexpr int kVecs = kVecs_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr LagSchedule kSchedule = kSchedule_;
  static constexpr bool kHints = kHints_;
  static constexpr int kApplyUnroll = kApplyUnroll_;
  static constexpr bool kPrefetch = kPrefetch_;
  template <class T>
  static constexpr int64_t chunk_len() {
    return int64_t(kThreads) * kVecs * Vec16<T>::kLanes;
  }
  // Dynamic shared memory per block: kBulk's two chunk buffers.
  static constexpr int kSmemBytes = kSchedule == LagSchedule::kBulk ? 2 * kThreads * kVecs * 16 : 0;
  // Tickets for `chunks` chunks and lag L.
  static constexpr int64_t tickets(int64_t chunks, int64_t lag) {
    return (kSchedule == LagSchedule::kSplit ? 2 : 1) * (chunks + lag);
  }
};

// One chunk as loaded (16-byte vectors of T, converted as read): a tile for chunk_partial's lean
// passes. Slots past len hold the kind's fill (-inf for softmax: the max ignores them; the sums
// check per slot).
template <class T, int kThreads, int kVecs>
struct LagChunk {
  using Value = T;
  using Acc = acc_t<T>;
  static constexpr int kLanes = Vec16<T>::kLanes;
  static constexpr int kSlots = kVecs;

  Vec16<T> q[kVecs];

  __device__ __forceinline__ static int slot_begin(int s, int rank) { return (s * kThreads + rank) * kLanes; }
  __device__ __forceinline__ Acc value(int s, int l) const { return cast_value<Acc>(q[s].lane[l]); }

  template <LagLoad kLoad>
  __device__ __forceinline__ void load(const T* chunk, int len, int rank, T fill) {
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      if (slot_begin(s, rank) < len) {
        q[s] = lag_load_vec16<T, kLoad>(chunk + slot_begin(s, rank));
      } else {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) q[s].lane[l] = fill;
      }
    }
  }

  template <class F>
  __device__ __forceinline__ Acc sum_of_vectors(int len, int rank, F f) const {
    return sum_tile_vectors(*this, len, rank, f);
  }

  __device__ __forceinline__ Acc max_dropping_nan() const {
    Acc acc[kLanes];
#pragma unroll
    for (int l = 0; l < kLanes; ++l) acc[l] = value(0, l);
#pragma unroll
    for (int s = 1; s < kVecs; ++s) {
#pragma unroll
      for (int l = 0; l < kLanes; ++l) acc[l] = fmax(acc[l], value(s, l));
    }
    return fold_lanes(acc, FmaxOp{});
  }
};

// A chunk in shared memory as the bulk copy lays it out (contiguous: thread rank's slot s is vector
// s * kThreads + rank, LagChunk's layout), seen as a tile for chunk_partial's lean passes: slots
// past len are never read (the max and the sums check them).
template <class T, int kThreads, int kVecs>
struct SharedLagChunk : SharedSlice<T, kThreads, kVecs> {
  using Base = SharedSlice<T, kThreads, kVecs>;
  int len, rank;
  __device__ __forceinline__ SharedLagChunk(Vec16<T>* buffer, int len_, int rank_) : Base{buffer + rank_}, len(len_),
                                                                                        rank(rank_) {}
  __device__ __forceinline__ typename Base::Acc max_dropping_nan() const { return Base::max_dropping_nan(len, rank); }
};

// The scratch of one launch, carved from one buffer of row_lag_scratch_bytes.
template <class Acc>
struct RowLagScratch {
  unsigned long long* ticket;  // zero at launch
  unsigned* arrived;           // per row, zero at launch
  RowStats<Acc>* partial;      // per chunk
  Acc* first;                  // per row: x[row][0] (norm kind)
};

// Bytes to clear at the start of the buffer (the counters), and the whole buffer.
inline size_t row_lag_counter_bytes(int64_t rows) { return 8 + 4 * size_t(rows); }
template <class Acc>
size_t row_lag_scratch_bytes(int64_t rows, int64_t chunks) {
  const size_t counters = (row_lag_counter_bytes(rows) + 15) / 16 * 16;
  return counters + size_t(chunks) * sizeof(RowStats<Acc>) + size_t(rows) * sizeof(Acc);
}
template <class Acc>
RowLagScratch<Acc> row_lag_scratch(void* buffer, int64_t rows, int64_t chunks) {
  char* base = static_cast<char*>(buffer);
  RowLagScratch<Acc> s;
  s.ticket = reinterpret_cast<unsigned long long*>(base);
  s.arrived = reinterpret_cast<unsigned*>(base + 8);
  s.partial = reinterpret_cast<RowStats<Acc>*>(base + (row_lag_counter_bytes(rows) + 15) / 16 * 16);
  s.first = reinterpret_cast<Acc*>(s.partial + chunks);
  return s;
}

// The row statistics from its C published partials, the same bits on every warp that calls it:
// lane i folds chunks i, i + 32, ... in order, then a butterfly (warp_reduce).
//   softmax: M = max m_c (NaN-propagating), S = sum over s_c != 0 of s_c exp(m_c - M);
//   norm: mean = sum n_c mean_c / n, M2 = sum M2_c + n_c (mean_c - mean)^2 (Chan et al., as
//   split_row's row_combine_kernel), in u.
// The partials are read through L2 (__ldcg): they were written by other SMs during this launch.
template <RowKind kKind, class Acc>
__device__ __forceinline__ RowStats<Acc> combine_row_partials(const RowStats<Acc>* part, int chunks,
                                                              int64_t chunk_len, int64_t n, int lane) {
  if constexpr (kKind == RowKind::kSoftmax) {
    Acc m = -std::numeric_limits<Acc>::infinity();
    for (int c = lane; c < chunks; c += kWarpSize) m = nan_max(m, __ldcg(&part[c].a));
    m = warp_reduce(m, NanMaxOp{});
    Acc s = Acc(0);
    for (int c = lane; c < chunks; c += kWarpSize) {
      const Acc b = __ldcg(&part[c].b);
      if (b != Acc(0)) s += b * exp_of(__ldcg(&part[c].a) - m);
    }
    return {m, warp_reduce(s, SumOp{})};
  } else {
    const auto count = [=](int c) { return Acc(min_of<int64_t>(chunk_len, n - c * chunk_len)); };
    Acc total = Acc(0);
    for (int c = lane; c < chunks; c += kWarpSize) total += count(c) * __ldcg(&part[c].a);
    const Acc mean = mean_of(warp_reduce(total, SumOp{}), n);
    Acc m2 = Acc(0);
    for (int c = lane; c < chunks; c += kWarpSize) {
      const Acc d = __ldcg(&part[c].a) - mean;
      m2 += __ldcg(&part[c].b) + count(c) * d * d;
    }
    return {mean, warp_reduce(m2, SumOp{})};
  }
}

// Where chunk j lies: its row, its index in the row, its first element and its length.
struct LagChunkPos {
  int64_t row, begin;
  int c, len;
};
template <int64_t kLen>
__device__ __forceinline__ LagChunkPos lag_chunk_pos(int64_t j, int chunks_per_row, int64_t n) {
  LagChunkPos at;
  at.row = j / chunks_per_row;
  at.c = static_cast<int>(j - at.row * chunks_per_row);
  at.begin = at.c * kLen;
  at.len = static_cast<int>(min_of<int64_t>(kLen, n - at.begin));
  return at;
}

// Phase A's or phase B's read of chunk j into `chunk` (kKeep / kLast, or kStreaming without hints).
template <class T, RowKind kKind, class Cfg, LagLoad kLoad>
__device__ __forceinline__ void lag_load(const NormParams& p, int chunks_per_row, int64_t j,
                                         LagChunk<T, Cfg::kThreads, Cfg::kVecs>& chunk) {
  const LagChunkPos at = lag_chunk_pos<Cfg::template chunk_len<T>()>(j, chunks_per_row, p.layout.row_len);
  const T* xc = static_cast<const T*>(p.x) + p.layout.x_row_offset(at.row) + at.begin;
  chunk.template load<kLoad>(xc, at.len, threadIdx.x, cast_value<T>(tile_fill<kKind, acc_t<T>>()));
}

// Phase A after lag_load: the chunk's partial, published. The block's threads all call it (block
// reductions); thread 0 stores the partial (and, for chunk 0 of a norm row, the row's first
// element) and then increments the row's arrival counter with release semantics.
template <class T, RowKind kKind, class Cfg, class Tile, class Reduce>
__device__ __forceinline__ void lag_publish(const NormParams& p, const RowLagScratch<acc_t<T>>& s, int chunks_per_row,
                                            int64_t t, const Tile& chunk, Reduce& reduce) {
  using Acc = acc_t<T>;
  const int64_t n = p.layout.row_len;
  const LagChunkPos at = lag_chunk_pos<Cfg::template chunk_len<T>()>(t, chunks_per_row, n);
  const T* xr = static_cast<const T*>(p.x) + p.layout.x_row_offset(at.row);
  const Acc first = kKind == RowKind::kNorm ? row_first(xr, n) : Acc(0);
  const RowStats<Acc> part = chunk_partial<kKind, true, is_half_like<T>::value>(
      chunk, at.len, threadIdx.x, make_row_frame(first, p.center), p.center, reduce);
  if (threadIdx.x == 0) {
    s.partial[t] = part;
    if (kKind == RowKind::kNorm && at.c == 0) s.first[at.row] = first;
    lag_release_add(s.arrived + at.row, 1u);
  }
}

// Phase B of chunk j: wait for its row, combine, write out(x) for every valid slot, x's vector v
// from vec(v) (a register of a chunk read earlier, or a load issued here). Warps work
// independently: each warp's lane 0 waits (acquire) and __syncwarp orders the warp's later loads
// after it.
template <class T, RowKind kKind, class Cfg, int kUnroll, class Vec>
__device__ __forceinline__ void lag_write(const NormParams& p, const RowLagScratch<acc_t<T>>& s, int chunks_per_row,
                                          int64_t j, Vec vec) {
  using Acc = acc_t<T>;
  using Chunk = LagChunk<T, Cfg::kThreads, Cfg::kVecs>;
  constexpr int64_t kLen = Cfg::template chunk_len<T>();
  const RowLayout& layout = p.layout;
  const int64_t n = layout.row_len;
  const LagChunkPos at = lag_chunk_pos<kLen>(j, chunks_per_row, n);
  const int rank = threadIdx.x, lane = threadIdx.x % kWarpSize;
  if (lane == 0) {
    while (lag_acquire_load(s.arrived + at.row) < unsigned(chunks_per_row)) __nanosleep(64);
  }
  __syncwarp();
  const RowStats<Acc> total =
      combine_row_partials<kKind>(s.partial + at.row * chunks_per_row, chunks_per_row, kLen, n, lane);
  RowStats<Acc> stats = total;
  Acc shift = Acc(0);
  if constexpr (kKind == RowKind::kNorm) {
    const RowFrame<Acc> frame = make_row_frame(__ldcg(s.first + at.row), p.center);
    stats = norm_row_stats(total, frame, n, p.eps);
    shift = frame.shift;
    if (at.c == 0 && rank == 0) write_row_stats(p, at.row, stats, shift);
  }
  const RowOutput<kKind, Acc> out(stats, shift, p.log);
  T* yc = static_cast<T*>(p.y) + layout.y_row_offset(at.row) + at.begin;
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
#pragma unroll(kUnroll)
  for (int v = 0; v < Cfg::kVecs; ++v) {
    const int e0 = Chunk::slot_begin(v, rank);
    if (e0 >= at.len) continue;
    const Vec16<T> q = vec(v);
    Vec16<T> w, b;
    if (weight != nullptr) w = load_vec16<T, LoadPolicy::kReadOnly>(weight + at.begin + e0);
    if (bias != nullptr) b = load_vec16<T, LoadPolicy::kReadOnly>(bias + at.begin + e0);
    Acc o[Chunk::kLanes];
#pragma unroll
    for (int l = 0; l < Chunk::kLanes; ++l) {
      o[l] = out(cast_value<Acc>(q.lane[l]), weight != nullptr ? cast_value<Acc>(w.lane[l]) : Acc(1),
                 bias != nullptr ? cast_value<Acc>(b.lane[l]) : Acc(0));
    }
    store_vec16<T, StorePolicy::kStreaming>(yc + e0, round_to_vec16<T>(o));
  }
}

// Phase B from a chunk re-read (lag_load) before the wait.
template <class T, RowKind kKind, class Cfg>
__device__ __forceinline__ void lag_write_loaded(const NormParams& p, const RowLagScratch<acc_t<T>>& s,
                                                 int chunks_per_row, int64_t j,
                                                 const LagChunk<T, Cfg::kThreads, Cfg::kVecs>& chunk) {
  lag_write<T, kKind, Cfg, Cfg::kVecs>(p, s, chunks_per_row, j, [&](int v) { return chunk.q[v]; });
}

// Phase B with the re-read issued after the wait, kApplyUnroll slots at a time.
template <class T, RowKind kKind, class Cfg>
__device__ __forceinline__ void lag_write_streaming(const NormParams& p, const RowLagScratch<acc_t<T>>& s,
                                                    int chunks_per_row, int64_t j) {
  constexpr LagLoad kLoad = Cfg::kHints ? LagLoad::kLast : LagLoad::kStreaming;
  using Chunk = LagChunk<T, Cfg::kThreads, Cfg::kVecs>;
  const LagChunkPos at = lag_chunk_pos<Cfg::template chunk_len<T>()>(j, chunks_per_row, p.layout.row_len);
  const T* xc = static_cast<const T*>(p.x) + p.layout.x_row_offset(at.row) + at.begin;
  lag_write<T, kKind, Cfg, Cfg::kApplyUnroll>(p, s, chunks_per_row, j, [&](int v) {
    return lag_load_vec16<T, kLoad>(xc + Chunk::slot_begin(v, threadIdx.x));
  });
}

// kBulk's per-block state: the two chunk buffers (dynamic shared memory, [0] phase A, [1] phase B),
// an mbarrier per buffer completing once per copy, and each barrier's next phase parity (the same
// in every thread: every thread sees the same tickets). A buffer is refilled only after the next
// ticket's block barrier, which every thread passes after its reads of the buffer.
struct LagBulkState {
  uint64_t* loaded;  // two mbarriers in shared memory
  uint32_t parity[2] = {0, 0};
  __device__ __forceinline__ void init() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ uint64_t barriers[2];
    loaded = barriers;
    if (threadIdx.x == 0) {
      ptx::mbarrier_init(&loaded[0], 1);
      ptx::mbarrier_init(&loaded[1], 1);
      ptx::fence_mbarrier_init();
    }
#endif
  }
};

// One kBulk ticket: thread 0 starts the copies of chunk t (phase A) and chunk t - L (phase B); the
// block reduces and publishes the first once it lands, then writes the second.
template <class T, RowKind kKind, class Cfg, class Reduce>
__device__ __forceinline__ void lag_bulk_ticket(const NormParams& p, const RowLagScratch<acc_t<T>>& s,
                                                int chunks_per_row, int64_t lag, int64_t chunks, int64_t t,
                                                Reduce& reduce, LagBulkState& bulk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Slice = SharedLagChunk<T, Cfg::kThreads, Cfg::kVecs>;
  constexpr int64_t kLen = Cfg::template chunk_len<T>();
  extern __shared__ uint4 row_lag_buffers[];
  Vec16<T>* const buffer[2] = {reinterpret_cast<Vec16<T>*>(row_lag_buffers),
                               reinterpret_cast<Vec16<T>*>(row_lag_buffers) + Cfg::kThreads * Cfg::kVecs};
  const int64_t n = p.layout.row_len;
  const bool has[2] = {t < chunks, t >= lag};
  const int64_t j[2] = {t, t - lag};
  if (threadIdx.x == 0) {
#pragma unroll
    for (int b = 0; b < 2; ++b) {
      if (!has[b]) continue;
      const LagChunkPos at = lag_chunk_pos<kLen>(j[b], chunks_per_row, n);
      const uint32_t bytes = static_cast<uint32_t>(at.len * sizeof(T));
      ptx::mbarrier_arrive_expect_tx(&bulk.loaded[b], bytes);
      ptx::bulk_load_global_to_shared(buffer[b], static_cast<const T*>(p.x) + p.layout.x_row_offset(at.row) + at.begin,
                                      bytes, &bulk.loaded[b]);
    }
  }
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    if (!has[b]) continue;
    ptx::mbarrier_wait(&bulk.loaded[b], bulk.parity[b]);
    bulk.parity[b] ^= 1;
    const Slice slice(buffer[b], lag_chunk_pos<kLen>(j[b], chunks_per_row, n).len, threadIdx.x);
    if (b == 0) lag_publish<T, kKind, Cfg>(p, s, chunks_per_row, t, slice, reduce);
    else lag_write<T, kKind, Cfg, Cfg::kVecs>(p, s, chunks_per_row, t - lag, [&](int v) { return slice.vec(v); });
  }
#endif
}

// grid: any number of blocks (the launcher: one per ticket, or a persistent wave); each takes
// tickets until they run out. chunks_per_row = C, lag = L >= C, chunks = rows * C.
template <class T, RowKind kKind, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
row_lag_kernel(NormParams p, RowLagScratch<acc_t<T>> s, int chunks_per_row, int64_t lag, int64_t chunks) {
  using Acc = acc_t<T>;
  using Chunk = LagChunk<T, Cfg::kThreads, Cfg::kVecs>;
  using Group = RowGroup<Acc, Cfg::kThreads>;
  constexpr LagLoad kFirst = Cfg::kHints ? LagLoad::kKeep : LagLoad::kStreaming;
  constexpr LagLoad kSecond = Cfg::kHints ? LagLoad::kLast : LagLoad::kStreaming;
  __shared__ typename Group::TempStorage temp[2];
  // Slot `turn` is rewritten two tickets later, after the barrier of the ticket in between, which
  // every thread reaches only once it has read the slot.
  __shared__ long long ticket_slot[2];
  typename Group::Alternating reduce{temp};
  LagBulkState bulk;
  if constexpr (Cfg::kSchedule == LagSchedule::kBulk) bulk.init();  // published by the loop's first barrier
  const int64_t total = Cfg::tickets(chunks, lag);
  const auto take = [&] { return static_cast<long long>(atomicAdd(s.ticket, 1ull)); };
  // kPrefetch: thread 0's claimed next ticket. A claimed ticket waits behind its block's current
  // one, which is smaller, so the forward-progress argument holds: the smallest unfinished ticket
  // is always the one its block is working on.
  long long next = Cfg::kPrefetch && threadIdx.x == 0 ? take() : 0;
  for (int turn = 0;; turn ^= 1) {
    if (threadIdx.x == 0) {
      if constexpr (Cfg::kPrefetch) {
        ticket_slot[turn] = next;
        if (next < total) next = take();
      } else {
        ticket_slot[turn] = take();
      }
    }
    __syncthreads();
    const int64_t t = ticket_slot[turn];
    if (t >= total) break;
    Chunk chunk;
    if constexpr (Cfg::kSchedule == LagSchedule::kBulk) {
      lag_bulk_ticket<T, kKind, Cfg>(p, s, chunks_per_row, lag, chunks, t, reduce, bulk);
    } else if constexpr (Cfg::kSchedule == LagSchedule::kSplit) {
      const int64_t k = t >> 1;
      if ((t & 1) == 0) {
        if (k < chunks) {
          lag_load<T, kKind, Cfg, kFirst>(p, chunks_per_row, k, chunk);
          lag_publish<T, kKind, Cfg>(p, s, chunks_per_row, k, chunk, reduce);
        }
      } else if (k >= lag) {
        lag_load<T, kKind, Cfg, kSecond>(p, chunks_per_row, k - lag, chunk);
        lag_write_loaded<T, kKind, Cfg>(p, s, chunks_per_row, k - lag, chunk);
      }
    } else if constexpr (Cfg::kSchedule == LagSchedule::kEarly) {
      Chunk again;
      if (t < chunks) lag_load<T, kKind, Cfg, kFirst>(p, chunks_per_row, t, chunk);
      if (t >= lag) lag_load<T, kKind, Cfg, kSecond>(p, chunks_per_row, t - lag, again);
      if (t < chunks) lag_publish<T, kKind, Cfg>(p, s, chunks_per_row, t, chunk, reduce);
      if (t >= lag) lag_write_loaded<T, kKind, Cfg>(p, s, chunks_per_row, t - lag, again);
    } else {
      if (t < chunks) {
        lag_load<T, kKind, Cfg, kFirst>(p, chunks_per_row, t, chunk);
        lag_publish<T, kKind, Cfg>(p, s, chunks_per_row, t, chunk, reduce);
      }
      if (t >= lag) {
        if constexpr (Cfg::kApplyUnroll == 0) {
          lag_load<T, kKind, Cfg, kSecond>(p, chunks_per_row, t - lag, chunk);
          lag_write_loaded<T, kKind, Cfg>(p, s, chunks_per_row, t - lag, chunk);
        } else {
          lag_write_streaming<T, kKind, Cfg>(p, s, chunks_per_row, t - lag);
        }
      }
    }
  }
}

// Launches row_lag_kernel on `stream` with `blocks` blocks (<= 0: one per ticket) and lag L
// (clamped to >= C). scratch: row_lag_scratch_bytes(rows, rows * C) bytes; its counters are
// cleared here (stream-ordered). Returns the first CUDA error.
template <class T, RowKind kKind, class Cfg>
cudaError_t launch_row_lag(const NormParams& p, void* scratch, int64_t lag, int64_t blocks, cudaStream_t stream) {
  using Acc = acc_t<T>;
  const int64_t rows = p.layout.num_rows;
  const int64_t per_row = max_of<int64_t>(1, ceil_div(p.layout.row_len, Cfg::template chunk_len<T>()));
  const int64_t chunks = rows * per_row;
  lag = max_of(lag, per_row);
  const int64_t tickets = Cfg::tickets(chunks, lag);
  blocks = blocks <= 0 ? tickets : min_of(blocks, tickets);
  cudaError_t e = cudaMemsetAsync(scratch, 0, row_lag_counter_bytes(rows), stream);
  if (e != cudaSuccess) return e;
  const RowLagScratch<Acc> s = row_lag_scratch<Acc>(scratch, rows, chunks);
  if (Cfg::kSmemBytes > 48 * 1024) {
    e = cudaFuncSetAttribute(row_lag_kernel<T, kKind, Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             Cfg::kSmemBytes);
    if (e != cudaSuccess) return e;
  }
  const unsigned grid = static_cast<unsigned>(min_of<int64_t>(blocks, 0x7fffffff));
  row_lag_kernel<T, kKind, Cfg><<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(p, s, static_cast<int>(per_row), lag,
                                                                                  chunks);
  return cudaGetLastError();
}

}  // namespace norms
}  // namespace gpuprims
