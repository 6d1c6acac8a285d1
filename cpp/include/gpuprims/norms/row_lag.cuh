#pragma once
// row_lag: rows too long for one block in one launch, x read twice but from DRAM once (issue 5,
// docs/norms.md "row_lag"). "auto" runs it for the float32 norm kind (layer_norm, rms_norm) on rows
// beyond cluster_row's reach on sm_90 GPUs with little DRAM bandwidth per SM (variant_row_lag.cu
// says where and why).
//
// A row of n elements is cut into C = ceil(n / S) chunks of S elements (never crossing rows), and
// the rows' chunks are numbered row-major: chunk k is chunk k % C of row k / C. Blocks take tickets
// t = 0, 1, ..., chunks + L - 1 from an atomic counter (not blockIdx: tickets go out in the order
// blocks actually run), L >= C the lag. The block holding ticket t
//   phase A (t < chunks): reads chunk t (16-byte loads past L1, L2 evict_last), reduces it to the
//     partial statistics split_row's chunks give (softmax kind: max and sum exp(x - max); norm
//     kind: the chunk's moments about its own anchor, chunk_moments.cuh) and publishes them:
//     partial[t], then a releasing increment of its row's arrival counter;
//   phase B (t >= L): takes chunk j = t - L, waits (acquire) until all C chunks of j's row have
//     arrived, combines the C partials in a fixed order (every chunk of a row gets the same bits:
//     deterministic), reads chunk j again -- L tickets after phase A read it, so from L2 (evict_first:
//     its last use) -- and writes the output (st.global.cs).
// DRAM sees one read of x and one write of y, as a copy; no block holds a row on chip, and nothing
// but the tail waits for a whole row. The lag is the tuning knob: below about half the resident
// blocks phase B waits for chunks still in flight, far above it the re-read misses L2.
//
// Forward progress, any grid and any residency: the chunks of j's row have tickets <= (row end)
// <= j + C - 1 = t - L + C - 1 <= t - 1 (L >= C). A ticket is handed only to a running block, which
// works on it before any ticket it claims later (kPrefetch claims the next one early, but works on
// it after the current one); phase A never waits, and phase B of ticket t waits only for phase A of
// smaller tickets. By induction on t every ticket completes: the smallest unfinished ticket is the
// one its block is working on, and it waits on nothing unfinished.
//
// Where a row's statistics are combined (RowLagScratch::combined_once): row_lag's phase B combines
// the C partials in every warp that writes a chunk; row_hold may instead let the block whose chunk
// arrives last combine them once and publish the result with a releasing ready flag, which phase B
// awaits instead of the arrival count (lag_publish_partial, lag_write; row_hold.cuh says where).
//
// Scratch (row_lag_scratch_bytes): a 64-bit ticket counter and, per row, an arrival counter and a
// ready flag (all zero at launch: launch_row_lag clears them with one cudaMemsetAsync), the chunks'
// partials, the rows' first elements (norm kind: written by chunk 0's phase A, since with y = x
// chunk 0 may be overwritten before the row's last phase B reads the frame) and the rows' combined
// statistics (PublishedRow).
//
// Vector path only (NormParams::vec_ok and S a whole number of vectors, so every chunk starts
// 16-byte aligned).
#include <cstdint>
#include <limits>

#include <cuda/atomic>
#include <cuda_runtime.h>

#include "gpuprims/norms/chunk_moments.cuh"
#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/row_stats.cuh"
#include "gpuprims/norms/row_tile.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace norms {

// How a chunk read travels: past L1 with an L2 eviction priority: phase A's read is read again
// soon (kFirstRead: evict_last), phase B's for the last time (kSecondRead: evict_first). (Without the
// priorities, or with write-back stores, the harness ran 8-20 % slower: session 12.)
constexpr LoadPolicy kFirstRead = LoadPolicy::kStreamingEvictLast;
constexpr LoadPolicy kSecondRead = LoadPolicy::kL2EvictFirst;

// The arrival counters between blocks of one launch, at GPU scope: the releasing add orders thread
// 0's earlier writes (the partial, the row's first element) before the increment; a thread whose
// acquiring load reads the complete count sees them in its later loads.
using ArrivalCounter = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

// kThreads threads per block, kVecs 16-byte vectors per thread per chunk (S = kThreads * kVecs *
// 16 / sizeof(T) elements); kMinBlocks: __launch_bounds__' resident blocks per SM.
// kPrefetch: a block takes its next ticket while it works on the current one, so the atomic's
//   round trip leaves the ticket's critical path (meant for a persistent grid; correct with any).
// Phase B re-reads its whole chunk before the row's wait, so the L2 latency overlaps the wait and
// the combination. (Re-reading 4 slots at a time after the wait ran within 3 points of it either
// way on the H200 without the prefetched ticket, session 12, docs/norms.md "row_lag"; the
// prefetching schedule the library runs was tuned with the whole re-read first.)
template <int kThreads_, int kVecs_, int kMinBlocks_, bool kPrefetch_>
struct RowLagConfig {
  static constexpr int kThreads = kThreads_;
  static constexpr int kVecs = kVecs_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr bool kPrefetch = kPrefetch_;
  template <class T>
  static constexpr int64_t chunk_len() {
    return int64_t(kThreads) * kVecs * Vec16<T>::kLanes;
  }
  // C: chunks per row of row_len elements (at least one, for empty rows).
  template <class T>
  static constexpr int64_t chunks_per_row(int64_t row_len) {
    return max_of<int64_t>(1, ceil_div(row_len, chunk_len<T>()));
  }
};

// One chunk as loaded (16-byte vectors of T, converted as read): a tile for chunk_partial's lean
// passes (tile_max_dropping_nan, sum_tile_vectors). Slots past len hold the kind's fill (-inf for softmax: the max ignores them; the sums
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

  template <LoadPolicy kLoad>
  __device__ __forceinline__ void load(const T* chunk, int len, int rank, T fill) {
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      if (slot_begin(s, rank) < len) {
        q[s] = load_vec16<T, kLoad>(chunk + slot_begin(s, rank));
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
};

// A row's statistics as phase B applies them: the softmax kind's (max, sum); the norm kind's
// norm_row_stats and the frame's shift.
template <class Acc>
struct PublishedRow {
  RowStats<Acc> stats;
  Acc shift;
};

// The scratch of one launch, carved from one buffer of row_lag_scratch_bytes.
template <RowKind kKind, class Acc>
struct RowLagScratch {
  unsigned long long* ticket;         // zero at launch
  unsigned* arrived;                  // per row, zero at launch
  unsigned* ready;                    // per row, zero at launch; 1 once published holds the row
  ChunkPartial<kKind, Acc>* partial;  // per chunk
  Acc* first;                         // per row: x[row][0] (norm kind: the row's scale)
  PublishedRow<Acc>* published;       // per row, where combined_once
  bool combined_once;                 // the row's last-arriving chunk combines it (else every phase B warp)
};

// Bytes to clear at the start of the buffer (the counters), and the whole buffer.
inline size_t row_lag_counter_bytes(int64_t rows) { return 8 + 8 * size_t(rows); }
template <RowKind kKind, class Acc>
size_t row_lag_scratch_bytes(int64_t rows, int64_t chunks) {
  const size_t counters = (row_lag_counter_bytes(rows) + 15) / 16 * 16;
  return counters + size_t(chunks) * sizeof(ChunkPartial<kKind, Acc>) + size_t(rows) * sizeof(Acc) +
         size_t(rows) * sizeof(PublishedRow<Acc>);
}
template <RowKind kKind, class Acc>
RowLagScratch<kKind, Acc> row_lag_scratch(void* buffer, int64_t rows, int64_t chunks, bool combined_once) {
  char* base = static_cast<char*>(buffer);
  RowLagScratch<kKind, Acc> s;
  s.ticket = reinterpret_cast<unsigned long long*>(base);
  s.arrived = reinterpret_cast<unsigned*>(base + 8);
  s.ready = s.arrived + rows;
  s.partial = reinterpret_cast<ChunkPartial<kKind, Acc>*>(base + (row_lag_counter_bytes(rows) + 15) / 16 * 16);
  s.first = reinterpret_cast<Acc*>(s.partial + chunks);
  s.published = reinterpret_cast<PublishedRow<Acc>*>(s.first + rows);  // Acc-aligned, as PublishedRow
  s.combined_once = combined_once;
  return s;
}

// A published partial, read through L2 (__ldcg): other SMs wrote it during this launch.
template <class Acc>
__device__ __forceinline__ RowStats<Acc> load_published(const RowStats<Acc>* p) {
  return {__ldcg(&p->a), __ldcg(&p->b)};
}
template <class Acc>
__device__ __forceinline__ ChunkMoments<Acc> load_published(const ChunkMoments<Acc>* p) {
  return {__ldcg(&p->shift), __ldcg(&p->mean), __ldcg(&p->m2)};
}
template <class Acc>
__device__ __forceinline__ PublishedRow<Acc> load_published(const PublishedRow<Acc>* p) {
  return {load_published(&p->stats), __ldcg(&p->shift)};
}

// The row's C published partials as one warp folds them: lane i < 32 loads chunk i's once, right
// after the row's wait, and every pass of the combination folds it from a register; chunks i + 32,
// i + 64, ... (rows of more than 32 chunks) are loaded as the folds reach them. Loading the
// partials in every pass put two or three dependent L2 round trips on phase B's critical path:
// float32 256 x 262144 layer_norm / rms_norm ran at 70.2-71.2 / 77.5-78.4 % of copy that way, at
// 76.1-78.3 / 81.3-83.5 % this way (H100, bench/tune/norms_cluster_tune.cu, session 18 runs 2-3,
// L = 5R/8 and 3R/4).
template <RowKind kKind, class Acc>
struct HeldPartials {
  using Partial = ChunkPartial<kKind, Acc>;
  const Partial* part;
  int chunks, lane;
  Partial held{};  // lanes >= chunks: unused

  __device__ __forceinline__ HeldPartials(const Partial* p, int c, int l) : part(p), chunks(c), lane(l) {
    if (lane < chunks) held = load_published(part + lane);
  }
  // op over f(c, partial of chunk c) for this lane's chunks c = lane, lane + 32, ..., in that order,
  // from acc.
  template <class F, class Op>
  __device__ __forceinline__ Acc fold(Acc acc, F f, Op op) const {
    if (lane < chunks) acc = op(acc, f(lane, held));
    for (int c = lane + kWarpSize; c < chunks; c += kWarpSize) acc = op(acc, f(c, load_published(part + c)));
    return acc;
  }
};

// The row statistics from its C published partials, the same bits on every warp that calls it:
// lane i folds chunks i, i + 32, ... in order (HeldPartials), then a butterfly (warp_reduce).
//   softmax: M = max m_c (NaN-propagating), S = sum over s_c != 0 of s_c exp(m_c - M);
//   norm: (mean_u, M2_u) about frame.shift by combine_chunk_moments (chunk_moments.cuh), as
//     split_row's row_combine_kernel; frame: in, the row's scale (and, for kCentred = false, its
//     shift); out, with the row's final shift (kCentred: about chunk 0's anchor or the row's centre).
template <RowKind kKind, bool kCentred, class Acc>
__device__ __forceinline__ RowStats<Acc> combine_row_partials(const ChunkPartial<kKind, Acc>* part, int chunks,
                                                              int64_t chunk_len, int64_t n, int lane,
                                                              RowFrame<Acc>& frame, bool center) {
  const HeldPartials<kKind, Acc> held(part, chunks, lane);
  if constexpr (kKind == RowKind::kSoftmax) {
    const Acc m = warp_reduce(
        held.fold(-std::numeric_limits<Acc>::infinity(), [](int, const RowStats<Acc>& pc) { return pc.a; }, NanMaxOp{}),
        NanMaxOp{});
    const Acc s = held.fold(
        Acc(0), [=](int, const RowStats<Acc>& pc) { return pc.b != Acc(0) ? pc.b * exp_of(pc.a - m) : Acc(0); },
        SumOp{});
    return {m, warp_reduce(s, SumOp{})};
  } else {
    const auto count = [=](int c) { return Acc(min_of<int64_t>(chunk_len, n - c * chunk_len)); };
    if constexpr (kCentred) frame.shift = gpuprims::shfl_idx(held.held.shift, 0);  // chunk 0's anchor
    return combine_chunk_moments<kCentred>(frame, n, center, [&](auto f) {
      return warp_reduce(held.fold(Acc(0), [&](int c, const ChunkMoments<Acc>& m) { return f(count(c), m); }, SumOp{}),
                         SumOp{});
    });
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

// The statistics of `row` from its C published partials (combine_row_partials), the same bits in
// every warp that calls it, after an acquire that saw all C arrivals.
template <class T, RowKind kKind>
__device__ __forceinline__ PublishedRow<acc_t<T>> combine_row(const NormParams& p,
                                                              const RowLagScratch<kKind, acc_t<T>>& s, int64_t row,
                                                              int chunks_per_row, int64_t chunk_len, int lane) {
  using Acc = acc_t<T>;
  const int64_t n = p.layout.row_len;
  // The row's scale (and, for float16 / bfloat16, its shift) from its first element as phase A
  // read it: with out = x, chunk 0 may have been written by now.
  RowFrame<Acc> frame = kKind == RowKind::kNorm ? make_row_frame(__ldcg(s.first + row), p.center) : RowFrame<Acc>{};
  const RowStats<Acc> total = combine_row_partials<kKind, kChunkCentred<T>>(
      s.partial + row * chunks_per_row, chunks_per_row, chunk_len, n, lane, frame, p.center);
  if constexpr (kKind == RowKind::kNorm) {
    return {norm_row_stats(total, frame, n, p.eps), frame.shift};
  } else {
    return {total, Acc(0)};
  }
}

// Lane 0 of the calling warp spins until `word` reaches `value` (acquire); __syncwarp orders the
// warp's later loads after it.
__device__ __forceinline__ void await_at_least(unsigned& word, unsigned value, int lane) {
  if (lane == 0) {
    while (ArrivalCounter(word).load(cuda::memory_order_acquire) < value) __nanosleep(64);
  }
  __syncwarp();
}

// Phase A's or phase B's read of chunk j into `chunk`.
template <class T, RowKind kKind, class Cfg, LoadPolicy kLoad>
__device__ __forceinline__ void lag_load(const NormParams& p, int chunks_per_row, int64_t j,
                                         LagChunk<T, Cfg::kThreads, Cfg::kVecs>& chunk) {
  const LagChunkPos at = lag_chunk_pos<Cfg::template chunk_len<T>()>(j, chunks_per_row, p.layout.row_len);
  const T* xc = static_cast<const T*>(p.x) + p.layout.x_row_offset(at.row) + at.begin;
  chunk.template load<kLoad>(xc, at.len, threadIdx.x, cast_value<T>(tile_fill<kKind, acc_t<T>>()));
}

// Phase A's publication of chunk t (at) of the row at xr: thread 0 stores its partial (and, for
// chunk 0 of a norm row, the row's first element, the one read of xr) and then increments the
// row's arrival counter with release semantics. Where combined_once, the increment also acquires,
// and warp 0 of the block whose chunk arrived last (the increment that completes the count saw
// every other chunk's release) combines the row's partials and publishes them with a releasing
// store of the row's ready flag.
template <class T, RowKind kKind>
__device__ __forceinline__ void lag_publish_partial(const NormParams& p, const RowLagScratch<kKind, acc_t<T>>& s,
                                                    int64_t t, const LagChunkPos& at, const T* xr,
                                                    const ChunkPartial<kKind, acc_t<T>>& part, int chunks_per_row,
                                                    int64_t chunk_len) {
  const int lane = threadIdx.x;
  if (lane >= kWarpSize) return;
  unsigned arrived_before = 0;
  if (lane == 0) {
    s.partial[t] = part;
    if (kKind == RowKind::kNorm && at.c == 0) s.first[at.row] = row_first(xr, p.layout.row_len);
    ArrivalCounter counter(s.arrived[at.row]);
    if (s.combined_once) {
      arrived_before = counter.fetch_add(1u, cuda::memory_order_acq_rel);
    } else {
      counter.fetch_add(1u, cuda::memory_order_release);
    }
  }
  if (!s.combined_once) return;
  arrived_before = __shfl_sync(0xffffffffu, arrived_before, 0);
  if (arrived_before + 1 != unsigned(chunks_per_row)) return;
  __syncwarp();  // lane 0's acquire before the other lanes' loads of the partials
  const PublishedRow<acc_t<T>> row = combine_row<T, kKind>(p, s, at.row, chunks_per_row, chunk_len, lane);
  if (lane == 0) {
    s.published[at.row] = row;
    ArrivalCounter(s.ready[at.row]).store(1u, cuda::memory_order_release);
  }
}

// Phase A after lag_load: the chunk's partial, published (lag_publish_partial). The block's
// threads all call it (block reductions). With out = x, x[row][0] and the chunk's own first
// element are still x here: chunk 0's phase B, the only one to overwrite x[row][0], waits for
// every chunk's phase A, and a chunk's own phase B comes later.
template <class T, RowKind kKind, class Cfg, class Tile, class Reduce, class PairReduce>
__device__ __forceinline__ void lag_publish(const NormParams& p, const RowLagScratch<kKind, acc_t<T>>& s,
                                            int chunks_per_row, int64_t t, const Tile& chunk, Reduce& reduce,
                                            PairReduce& reduce_pair) {
  using Acc = acc_t<T>;
  const int64_t n = p.layout.row_len;
  const LagChunkPos at = lag_chunk_pos<Cfg::template chunk_len<T>()>(t, chunks_per_row, n);
  const T* xr = static_cast<const T*>(p.x) + p.layout.x_row_offset(at.row);
  const RowFrame<Acc> frame =
      kKind == RowKind::kNorm ? chunk_frame(xr, 1, n, at.begin, at.len, p.center) : RowFrame<Acc>{};
  lag_publish_partial<T, kKind>(p, s, t, at, xr,
                                chunk_partial_of<kKind, true>(chunk, at.len, threadIdx.x, frame, p.center, reduce,
                                                              reduce_pair),
                                chunks_per_row, Cfg::template chunk_len<T>());
}

// Phase B of chunk j, re-read into `chunk` (lag_load) before the call: wait for its row's partials
// and combine them (or, where combined_once, wait for its published statistics), write out(x) for
// every valid slot. Warps work independently (await_at_least).
// kExpHeld (softmax, not log_softmax; row_hold's float32 chunks): `chunk` holds exp(x - chunk_max)
// as phase A computed them for the chunk's sum (hold_exp_publish), and the outputs are those times
// exp(chunk_max - max) / sum, one product per element in place of an exponential.
template <class T, RowKind kKind, class Cfg, bool kExpHeld = false>
__device__ __forceinline__ void lag_write(const NormParams& p, const RowLagScratch<kKind, acc_t<T>>& s,
                                          int chunks_per_row, int64_t j,
                                          const LagChunk<T, Cfg::kThreads, Cfg::kVecs>& chunk,
                                          acc_t<T> chunk_max = acc_t<T>(0)) {
  static_assert(!kExpHeld || kKind == RowKind::kSoftmax, "only softmax outputs scale an exponential");
  using Acc = acc_t<T>;
  constexpr int64_t kLen = Cfg::template chunk_len<T>();
  const RowLayout& layout = p.layout;
  const int64_t n = layout.row_len;
  const LagChunkPos at = lag_chunk_pos<kLen>(j, chunks_per_row, n);
  const int rank = threadIdx.x, lane = threadIdx.x % kWarpSize;
  PublishedRow<Acc> row;
  if (s.combined_once) {
    await_at_least(s.ready[at.row], 1u, lane);
    row = load_published(s.published + at.row);
  } else {
    await_at_least(s.arrived[at.row], unsigned(chunks_per_row), lane);
    row = combine_row<T, kKind>(p, s, at.row, chunks_per_row, kLen, lane);
  }
  const RowStats<Acc> stats = row.stats;
  const Acc shift = row.shift;
  if constexpr (kKind == RowKind::kNorm) {
    if (at.c == 0 && rank == 0) write_row_stats(p, at.row, stats, shift);
  }
  // store_tile_vectors<true, Affine::kAny, StorePolicy::kStreaming> computes the same; called here
  // it made ptxas spill 10 bytes in the bfloat16 norm kernel for sm_80 (CUDA 13.0), this loop none.
  using Chunk = LagChunk<T, Cfg::kThreads, Cfg::kVecs>;
  const RowOutput<kKind, Acc> out(stats, shift, p.log);
  // exp(m_c - M) / S: 0 for a chunk of -inf in a row with finite values (its held values are 0
  // too), NaN for a row of -inf (1 / 0 times exp(NaN)), a NaN or +inf (S NaN), as RowOutput gives.
  const Acc held_scale = kExpHeld ? exp_of(chunk_max - stats.a) * out.scale_or_shift : Acc(0);
  T* yc = static_cast<T*>(p.y) + layout.y_row_offset(at.row) + at.begin;
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
#pragma unroll
  for (int v = 0; v < Cfg::kVecs; ++v) {
    const int e0 = Chunk::slot_begin(v, rank);
    if (e0 >= at.len) continue;
    Vec16<T> w, b;
    if (!kExpHeld && weight != nullptr) w = load_vec16<T, LoadPolicy::kReadOnly>(weight + at.begin + e0);
    if (!kExpHeld && bias != nullptr) b = load_vec16<T, LoadPolicy::kReadOnly>(bias + at.begin + e0);
    Acc o[Chunk::kLanes];
#pragma unroll
    for (int l = 0; l < Chunk::kLanes; ++l) {
      if constexpr (kExpHeld) {
        o[l] = chunk.value(v, l) * held_scale;
      } else {
        o[l] = out(chunk.value(v, l), weight != nullptr ? cast_value<Acc>(w.lane[l]) : Acc(1),
                   bias != nullptr ? cast_value<Acc>(b.lane[l]) : Acc(0));
      }
    }
    store_vec16<T, StorePolicy::kStreaming>(yc + e0, round_to_vec16<T>(o));
  }
}

// The block reductions of a ticketed chunk kernel's phase A (row_lag, row_hold; lag_publish): each
// alternates between two shared storages, so consecutive calls need no barrier between them.
template <class Acc, int kThreads>
struct LagReducers {
  typename RowGroup<Acc, kThreads>::Alternating reduce;
  typename RowGroup<SumPair<Acc>, kThreads>::Alternating reduce_pair;  // the norm kind's chunk moments
};
template <class Acc, int kThreads>
__device__ __forceinline__ LagReducers<Acc, kThreads> lag_reducers() {
  __shared__ typename RowGroup<Acc, kThreads>::TempStorage temp[2];
  __shared__ typename RowGroup<SumPair<Acc>, kThreads>::TempStorage pair_temp[2];
  return {{temp}, {pair_temp}};
}

// grid: any number of blocks (one per ticket, or a persistent wave); each takes tickets until
// they run out. chunks_per_row = C, lag = L >= C, chunks = rows * C.
template <class T, RowKind kKind, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
row_lag_kernel(NormParams p, RowLagScratch<kKind, acc_t<T>> s, int chunks_per_row, int64_t lag, int64_t chunks) {
  using Chunk = LagChunk<T, Cfg::kThreads, Cfg::kVecs>;
  auto [reduce, reduce_pair] = lag_reducers<acc_t<T>, Cfg::kThreads>();
  // Slot `turn` is rewritten two tickets later, after the barrier of the ticket in between, which
  // every thread reaches only once it has read the slot.
  __shared__ long long ticket_slot[2];
  const int64_t total = chunks + lag;
  const auto take = [&] { return static_cast<long long>(atomicAdd(s.ticket, 1ull)); };
  // kPrefetch: thread 0's claimed next ticket. A claimed ticket waits behind its block's current
  // one, which is smaller, so the forward-progress argument holds.
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
    if (t < chunks) {
      lag_load<T, kKind, Cfg, kFirstRead>(p, chunks_per_row, t, chunk);
      lag_publish<T, kKind, Cfg>(p, s, chunks_per_row, t, chunk, reduce, reduce_pair);
    }
    if (t >= lag) {
      lag_load<T, kKind, Cfg, kSecondRead>(p, chunks_per_row, t - lag, chunk);
      lag_write<T, kKind, Cfg>(p, s, chunks_per_row, t - lag, chunk);
    }
  }
}

// Launches row_lag_kernel on `stream` with `blocks` blocks (<= 0: one per ticket) and lag L
// (clamped to >= C). scratch: row_lag_scratch_bytes<kKind, acc_t<T>>(rows, rows * C) bytes; its counters are
// cleared here (stream-ordered). Returns the first CUDA error.
template <class T, RowKind kKind, class Cfg>
cudaError_t launch_row_lag(const NormParams& p, void* scratch, int64_t lag, int64_t blocks, cudaStream_t stream) {
  using Acc = acc_t<T>;
  const int64_t rows = p.layout.num_rows;
  const int64_t per_row = Cfg::template chunks_per_row<T>(p.layout.row_len);
  const int64_t chunks = rows * per_row;
  lag = max_of(lag, per_row);
  const int64_t tickets = chunks + lag;
  blocks = blocks <= 0 ? tickets : min_of(blocks, tickets);
  const cudaError_t e = cudaMemsetAsync(scratch, 0, row_lag_counter_bytes(rows), stream);
  if (e != cudaSuccess) return e;
  const RowLagScratch<kKind, Acc> s = row_lag_scratch<kKind, Acc>(scratch, rows, chunks, /*combined_once=*/false);
  const unsigned grid = static_cast<unsigned>(min_of<int64_t>(blocks, 0x7fffffff));
  row_lag_kernel<T, kKind, Cfg><<<grid, Cfg::kThreads, 0, stream>>>(p, s, static_cast<int>(per_row), lag, chunks);
  return cudaGetLastError();
}

}  // namespace norms
}  // namespace gpuprims
