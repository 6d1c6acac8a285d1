#pragma once
// cluster_row: one row, too long for one block, held on chip across a thread block cluster (sm_90).
//
// The C CTAs of a cluster own one row: CTA r holds elements [r * S, (r + 1) * S) of it (S the
// slice capacity, the last slice possibly shorter) in its shared memory, loaded once with
// cp.async (no registers held while the loads are in flight, so a CTA can have its whole slice,
// 32-128 KiB, outstanding). Each CTA reduces its slice to partial statistics, writes them to its
// `exchange` slot, and after one cluster barrier (barrier.cluster.arrive.release / wait.acquire
// through cooperative_groups: the slot written before the barrier is visible to every CTA after
// it) every warp of every CTA reads the C slots through distributed shared memory and combines
// them in the same fixed order, so all CTAs hold identical row statistics. Each CTA then writes
// its slice from shared memory: x crosses DRAM once, y once (split_row reads x twice).
//
// Partial statistics, one cluster exchange per row:
//   softmax kind: (m_c, s_c) with m_c the slice max (fmax: NaN dropped, see below) and
//     s_c = sum exp(x - r_c), r_c = m_c (0 where m_c = -inf, so an all -inf slice gives s_c = 0
//     without computing -inf - -inf). Combined: M = max m_c, S = sum over s_c != 0 of
//     s_c exp(m_c - M). A NaN element makes its s_c NaN, hence S and every output NaN, as the
//     NaN-propagating max of the other kernels does.
//   norm kind: (anchor_c, mean_c, M2_c) of u = (x - anchor_c) * inv_scale, anchor_c the slice's
//     first element or its centre (chunk_moments.cuh: the row's scale, the slice's own anchor, so a
//     far first element of the row costs no accuracy), combined as split_row's row_combine_kernel
//     does (combine_chunk_moments, about CTA 0's anchor or the row's centre).
//
// Vector path (NormParams::vec_ok: rows aligned, lengths whole vectors), and the softmax kind's
// ragged rows (kRagged, NormParams::ragged: odd lengths such as a vocabulary of 50257, offset
// views), which the cluster holds rotated as row_on_chip's ragged kernels do (RaggedRow: CTA r
// holds positions [r * S, (r + 1) * S) of the rotated row, its aligned body copied as 16-byte
// vectors); the launcher hands everything else, float64 and GPUs below sm_90 to split_row.
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#endif

#include "gpuprims/norms/chunk_moments.cuh"
#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/row_stats.cuh"
#include "gpuprims/norms/row_tile.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/ptx_sm80.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace norms {

// The largest cluster sm_90 launches (non-portable; 8 is the portable maximum).
constexpr int kMaxClusterSize = 16;

// kThreads threads per CTA, each owning kVecs 16-byte slots of the CTA's slice in shared memory;
// kMinBlocks: __launch_bounds__' resident CTAs per SM (the register bound).
// kStages 2 (pipelined): two slices per CTA; while a cluster reduces and writes row r from one,
// the copies of its next row (r + clusters) land in the other, so every SM keeps loads in flight
// through the reductions, the cluster barrier and the stores. Meant for a persistent grid (one
// cluster per resident cluster slot, cluster_row_grid_rows); correct with any grid.
// kStoreUnroll: how many slots the store loop unrolls (each slot's weight / bias loads are issued
// that many slots ahead of their use).
template <int kThreads_, int kVecs_, int kMinBlocks_, int kStages_ = 1, int kStoreUnroll_ = 4>
struct ClusterRowConfig {
  static constexpr int kThreads = kThreads_;
  static constexpr int kVecs = kVecs_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr int kStages = kStages_;
  static constexpr int kStoreUnroll = kStoreUnroll_;
  static_assert(kStages == 1 || kStages == 2, "ClusterRowConfig: one or two slices per CTA");
  static constexpr int kSliceVecs = kThreads * kVecs;
  static constexpr int kSliceBytes = kSliceVecs * 16;
  static constexpr int kSmemBytes = kStages * kSliceBytes;  // dynamic shared memory per CTA
  template <class T>
  static constexpr int64_t slice_capacity() {
    return int64_t(kThreads) * kVecs * Vec16<T>::kLanes;
  }
};

// One CTA's slice in shared memory, seen by thread `rank`: its slot s is the 16-byte vector
// s * kThreads + rank of the slice (the RowTile layout, so a warp's slot is 512 contiguous bytes:
// conflict-free 16-byte shared accesses, coalesced global ones). Each thread reads and writes only
// its own slots, so no block barrier separates its loads from its passes.
// value(s, l) / slot_begin / sum_of_vectors make it a tile for sum_tile_vectors and chunk_partial
// (row_tile.cuh, row_stats.cuh); the 16-byte shared load of value(s, l) is the
// same for every lane l of a slot, and the passes' unrolled lane loops read it once.
// Out (softmax kind; RowTile's Out): the slice holds x's T, its values are rounded to Out as read,
// and the results are written as Out.
template <class T, int kThreads, int kVecs, class Out = T>
struct SharedSlice {
  using Input = T;
  using Value = Out;
  using Acc = acc_t<Out>;
  static constexpr int kLanes = Vec16<T>::kLanes;
  static constexpr int kSlots = kVecs;

  Vec16<T>* mine;  // this thread's slot 0 in the dynamic shared memory

  __device__ __forceinline__ static int slot_begin(int s, int rank) { return (s * kThreads + rank) * kLanes; }

  __device__ __forceinline__ Vec16<T> vec(int s) const {
    const uint4 bits = *reinterpret_cast<const uint4*>(mine + s * kThreads);
    Vec16<T> v;
    memcpy(&v, &bits, sizeof(v));
    return v;
  }
  __device__ __forceinline__ static Acc from_input(T x) { return input_as<Out>(x); }
  __device__ __forceinline__ Acc value(int s, int l) const { return from_input(vec(s).lane[l]); }

  // Starts the copies of elements [0, len) of an aligned slice (len a whole number of vectors).
  __device__ __forceinline__ void load_async(const T* slice, int len, int rank) {
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      if (slot_begin(s, rank) < len) ptx::cp_async_16(ptx::shared_address(mine + s * kThreads), slice + slot_begin(s, rank));
    }
    ptx::cp_async_commit();
  }

  // Starts the copies of elements [0, len) of a ragged slice (the softmax kind's kRagged: the
  // positions of `ragged`, a RaggedRow of the row at `row` from the slice's first position on).
  // Whole vectors of the row's aligned body are copied as load_async's; the one or two slots
  // around the seam are read element by element by their thread and stored to its slot, their
  // positions past len filled with -inf (neutral in the max and the sums, never stored).
  __device__ __forceinline__ void load_async_ragged(const T* row, RaggedRow ragged, int len, int rank) {
    const T fill = cast_value<T>(-std::numeric_limits<acc_t<T>>::infinity());
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      const int e0 = slot_begin(s, rank);
      if (e0 >= len) continue;
      if (ragged.whole_vector<kLanes>(e0)) {
        ptx::cp_async_16(ptx::shared_address(mine + s * kThreads), row + ragged.rot + e0);
      } else {
        Vec16<T> q;
        ragged.load_seam(row, e0, len, fill, q.lane);
        uint4 bits;
        memcpy(&bits, &q, sizeof(bits));
        *reinterpret_cast<uint4*>(mine + s * kThreads) = bits;
      }
    }
    ptx::cp_async_commit();
  }

  template <class F>
  __device__ __forceinline__ Acc sum_of_vectors(int len, int rank, F f) const {
    return sum_tile_vectors(*this, len, rank, f);
  }

  // fmax over the valid slots in kLanes chains (-inf for a thread with none): NaN dropped, as the
  // lean max of row_on_chip (the NaN reaches the sum instead).
  __device__ __forceinline__ Acc max_dropping_nan(int len, int rank) const {
    Acc acc[kLanes];
#pragma unroll
    for (int l = 0; l < kLanes; ++l) acc[l] = -std::numeric_limits<Acc>::infinity();
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      if (slot_begin(s, rank) >= len) continue;
      const Vec16<T> q = vec(s);
#pragma unroll
      for (int l = 0; l < kLanes; ++l) acc[l] = fmax(acc[l], from_input(q.lane[l]));
    }
    return fold_lanes(acc, FmaxOp{});
  }

  // float32 only (an Acc fits the slot): replaces each valid value v by f(v) and returns the sum
  // of the f(v) (kLanes chains, sum_tile_vectors' order), so the output pass reuses them.
  template <class F>
  __device__ __forceinline__ Acc transform_sum(int len, int rank, F f) {
    static_assert(std::is_same<T, Acc>::value && std::is_same<Out, Acc>::value,
                  "transform_sum: the slot holds T, which must be Acc");
    Acc acc[kLanes];
#pragma unroll
    for (int l = 0; l < kLanes; ++l) acc[l] = Acc(0);
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      if (slot_begin(s, rank) >= len) continue;
      Vec16<T> q = vec(s);
#pragma unroll
      for (int l = 0; l < kLanes; ++l) {
        q.lane[l] = f(q.lane[l]);
        acc[l] += q.lane[l];
      }
      uint4 bits;
      memcpy(&bits, &q, sizeof(bits));
      *reinterpret_cast<uint4*>(mine + s * kThreads) = bits;
    }
    return fold_lanes(acc, SumOp{});
  }
};

// Writes out(value, weight, bias) for the slice's valid slots to y's row `y_row` from element
// `begin` (16-byte aligned; the affine vectors, if any, contiguous and aligned, indexed from
// `begin`). kRagged (the softmax kind's ragged slice, no affine vectors): the slice holds the
// positions of `ragged` (SharedSlice::load_async_ragged), whole vectors of the row's body
// leave as below, the seam's valid lanes element by element. store_tile_vectors'
// arithmetic, but each slot leaves as one st.global.cs.v4 (__stcs: streamed, y is not read
// again): with the slot read from shared memory between the stores, nvcc (13.0) split
// store_tile_vectors' 16-byte store into four 4-byte ones here. kUnroll slots at a time: fully
// unrolled, nvcc hoists every slot's weight and bias loads (their L2 latency overlapped, at the
// cost of registers: 4 bytes of spill in the float16 / bfloat16 norm kind under three CTAs per SM).
// A converting slice (Out other than T: no affine vectors) writes each slot's kLanes outputs as 8
// or 32 bytes (store_lanes).
template <int kUnroll, bool kRagged = false, class Slice, class F>
__device__ __forceinline__ void store_slice(const Slice& slice, typename Slice::Value* y_row, int64_t begin, int len,
                                            int rank, const typename Slice::Value* weight,
                                            const typename Slice::Value* bias, F out,
                                            RaggedRow ragged = RaggedRow{0, 0}) {
  using T = typename Slice::Value;
  using Acc = typename Slice::Acc;
  constexpr bool kConverts = !std::is_same<typename Slice::Input, T>::value;
#pragma unroll(kUnroll)
  for (int s = 0; s < Slice::kSlots; ++s) {
    const int e0 = Slice::slot_begin(s, rank);
    if (e0 >= len) continue;
    [[maybe_unused]] Vec16<T> w, b;
    if constexpr (!kConverts) {
      if (weight != nullptr) w = load_vec16<T, LoadPolicy::kReadOnly>(weight + begin + e0);
      if (bias != nullptr) b = load_vec16<T, LoadPolicy::kReadOnly>(bias + begin + e0);
    }
    const auto v = slice.vec(s);
    Acc o[Slice::kLanes];
    T q[Slice::kLanes];
#pragma unroll
    for (int l = 0; l < Slice::kLanes; ++l) {
      Acc wl = Acc(1), bl = Acc(0);
      if constexpr (!kConverts) {
        wl = weight != nullptr ? cast_value<Acc>(w.lane[l]) : Acc(1);
        bl = bias != nullptr ? cast_value<Acc>(b.lane[l]) : Acc(0);
      }
      o[l] = out(Slice::from_input(v.lane[l]), wl, bl);
    }
    round_lanes(o, q);
    if constexpr (kRagged) ragged.store_slot</*kStreaming=*/true>(y_row, e0, len, q);
    else store_lanes</*kStreaming=*/true>(y_row + begin + e0, q);
  }
}

// The row statistics from the C partials, lane l of every warp holding CTA l's (valid: l < C): a
// butterfly over the warp (warp_reduce) gives every lane, warp and CTA the same bits.
//   softmax: (M, S) as above.
//   norm: (mean_u, M2_u) of the whole row about frame.shift (norm_row_stats follows); frame: in,
//     the row's scale; out, with the row's shift (kCentred, kChunkCentred: CTA 0's centre, lane
//     0's, or the row's centre; else the row's first element, as every CTA's frame already holds).
// count: the elements of CTA l's slice (0 beyond C).
template <RowKind kKind, bool kCentred, class Acc>
__device__ __forceinline__ RowStats<Acc> combine_cluster_partials(ChunkPartial<kKind, Acc> part, Acc count, bool valid,
                                                                  int64_t row_len, RowFrame<Acc>& frame, bool center) {
  if constexpr (kKind == RowKind::kSoftmax) {
    const Acc m = warp_reduce(valid ? part.a : -std::numeric_limits<Acc>::infinity(), NanMaxOp{});
    const Acc term = valid && part.b != Acc(0) ? part.b * exp_of(part.a - m) : Acc(0);
    return {m, warp_reduce(term, SumOp{})};
  } else {
    if constexpr (kCentred) frame.shift = __shfl_sync(0xffffffffu, part.shift, 0);
    return combine_chunk_moments<kCentred>(
        frame, row_len, center, [&](auto f) { return warp_reduce(valid ? f(count, part) : Acc(0), SumOp{}); });
  }
}

// grid = (C, rows or fewer), cluster = (C, 1, 1), dynamic shared memory Cfg::kSmemBytes; the rows
// in a grid-stride loop over y (uniform over the cluster, whose CTAs share blockIdx.y).
// Built for sm_90 only: below it the body is empty and the launcher never runs it.
// Out (softmax kind): y's dtype where it differs from x's (SharedSlice's Out).
// kRagged (softmax kind, p.ragged): rows held rotated (RaggedRow), as the header says.
template <class T, RowKind kKind, class Cfg, class Out = T, bool kRagged = false>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) cluster_row_kernel(NormParams p) {
  static_assert(std::is_same<Out, T>::value || kKind == RowKind::kSoftmax, "a converting cluster_row is softmax-kind");
  static_assert(!kRagged || kKind == RowKind::kSoftmax, "a ragged cluster_row is softmax-kind");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Slice = SharedSlice<T, Cfg::kThreads, Cfg::kVecs, Out>;
  using Acc = acc_t<Out>;
  using Group = RowGroup<Acc, Cfg::kThreads>;
  constexpr int64_t kCapacity = Cfg::template slice_capacity<T>();
  using PairGroup = RowGroup<SumPair<Acc>, Cfg::kThreads>;
  extern __shared__ uint4 cluster_row_slice[];
  __shared__ typename Group::TempStorage temp;
  __shared__ typename PairGroup::TempStorage pair_temp;  // the norm kind's
  // Slot `turn` is rewritten two rows later, after the cluster barrier of the row in between,
  // which every CTA reaches only once it has read this row's slots.
  __shared__ ChunkPartial<kKind, Acc> exchange[2];
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  const int csize = static_cast<int>(cluster.num_blocks());
  const int crank = static_cast<int>(cluster.block_rank());
  const int rank = threadIdx.x, lane = threadIdx.x % kWarpSize;

  const RowLayout& layout = p.layout;
  const int64_t n = layout.row_len, begin = crank * kCapacity;
  const int len = static_cast<int>(max_of<int64_t>(0, min_of<int64_t>(kCapacity, n - begin)));
  const Acc lane_count = Acc(max_of<int64_t>(0, min_of<int64_t>(kCapacity, n - lane * kCapacity)));
  Vec16<T>* const base = reinterpret_cast<Vec16<T>*>(cluster_row_slice) + rank;
  // The slice's positions of a ragged row at xr (the launcher keeps n within int).
  const auto ragged_slice = [&](const T* xr) { return ragged_row(xr, static_cast<int>(n)).from(static_cast<int>(begin)); };
  // Starts the copies of row r's slice into the stage at `stage`.
  const auto load_row = [&](Vec16<T>* stage, int64_t r) {
    const T* xr = static_cast<const T*>(p.x) + layout.x_row_offset(r);
    if constexpr (kRagged) Slice{stage}.load_async_ragged(xr, ragged_slice(xr), len, rank);
    else Slice{stage}.load_async(xr + begin, len, rank);
  };
  typename Group::Synced reduce{temp};
  typename PairGroup::Synced reduce_pair{pair_temp};
  int turn = 0;
  // A slice's previous row's stores consumed every value this thread read from its slots before
  // new copies into them are issued (in-order issue), so overwriting them needs no barrier.
  if constexpr (Cfg::kStages == 2) {
    if (blockIdx.y < layout.num_rows) load_row(base, blockIdx.y);
  }
  for (int64_t row = blockIdx.y; row < layout.num_rows; row += gridDim.y) {
    const T* xr = static_cast<const T*>(p.x) + layout.x_row_offset(row);
    Out* yr = static_cast<Out*>(p.y) + layout.y_row_offset(row);
    // Stage: the slice this row was copied into (turn alternates with every row, as the stages).
    Slice slice{base + (Cfg::kStages == 2 ? turn : 0) * Cfg::kSliceVecs};
    if constexpr (Cfg::kStages == 2) {
      const int64_t next = row + gridDim.y;
      if (next < layout.num_rows) load_row(base + (turn ^ 1) * Cfg::kSliceVecs, next);
      else ptx::cp_async_commit();  // an empty group, so that the wait below leaves exactly one pending
    } else {
      load_row(base, row);
    }
    // Read by every CTA before the cluster barrier: with out= x, CTA 0 writes x[row][0] (the row's
    // scale) and each CTA its slice's first element (its anchor) only after it.
    RowFrame<Acc> frame = kKind == RowKind::kNorm ? chunk_frame(xr, 1, n, begin, len, p.center) : RowFrame<Acc>{};
    ptx::cp_async_wait<Cfg::kStages - 1>();  // this row's copies (by this thread) have landed

    ChunkPartial<kKind, Acc> part;
    Acc ref = Acc(0);  // softmax kind: r_c
    if constexpr (kKind == RowKind::kSoftmax) {
      const Acc m = reduce(slice.max_dropping_nan(len, rank), FmaxOp{});
      ref = m == -std::numeric_limits<Acc>::infinity() ? Acc(0) : m;
      Acc s;
      if constexpr (std::is_same<T, float>::value && std::is_same<Out, float>::value) {
        // float32 softmax keeps exp(x - r_c) in the slice: one exponential per element.
        s = p.log ? slice.sum_of_vectors(len, rank, [ref](Acc v) { return exp_of(v - ref); })
                  : slice.transform_sum(len, rank, [ref](Acc v) { return exp_of(v - ref); });
      } else {
        s = slice.sum_of_vectors(len, rank, [ref](Acc v) { return exp_lean<Out>(v - ref); });
      }
      part = {m, reduce(s, SumOp{})};
    } else {
      part = chunk_partial_of<kKind, true>(slice, len, rank, frame, p.center, reduce, reduce_pair);
    }
    if (rank == 0) exchange[turn] = part;
    cluster.sync();
    const bool valid = lane < csize;
    const ChunkPartial<kKind, Acc> lane_part =
        valid ? *cluster.map_shared_rank(&exchange[turn], lane) : ChunkPartial<kKind, Acc>{};
    const RowStats<Acc> total =
        combine_cluster_partials<kKind, kChunkCentred<T>>(lane_part, lane_count, valid, n, frame, p.center);
    turn ^= 1;

    const Out* weight = static_cast<const Out*>(p.weight);  // the norm kind's, where Out is T
    const Out* bias = static_cast<const Out*>(p.bias);
    if constexpr (kKind == RowKind::kSoftmax) {
      [[maybe_unused]] const RaggedRow ragged = kRagged ? ragged_slice(xr) : RaggedRow{0, 0};
      const auto store = [&](auto out) {
        store_slice<Cfg::kStoreUnroll, kRagged>(slice, yr, begin, len, rank, nullptr, nullptr, out, ragged);
      };
      if (p.log) {
        store(RowOutput<kKind, Acc>(total, Acc(0), true));
      } else {
        // out = exp(x - r_c) * exp(r_c - M) / S. An all -inf slice (m_c = -inf): 0 when the row
        // has a finite max, NaN when the whole row is -inf (M = -inf, S = 0), as softmax_out.
        const Acc inv_sum = reciprocal_of(total.b);
        const Acc scale = part.a == -std::numeric_limits<Acc>::infinity()
                              ? (total.a == -std::numeric_limits<Acc>::infinity() ? std::numeric_limits<Acc>::quiet_NaN()
                                                                                  : Acc(0) * inv_sum)
                              : exp_of(part.a - total.a) * inv_sum;
        if constexpr (std::is_same<T, float>::value && std::is_same<Out, float>::value) {
          store([scale](Acc e, Acc, Acc) { return e * scale; });
        } else {
          store([scale, ref](Acc v, Acc, Acc) { return exp_lean<Out>(v - ref) * scale; });
        }
      }
    } else {
      const RowStats<Acc> stats = norm_row_stats(total, frame, n, p.eps);
      if (crank == 0 && rank == 0) write_row_stats(p, row, stats, frame.shift);
      store_slice<Cfg::kStoreUnroll>(slice, yr, begin, len, rank, weight, bias, RowOutput<kKind, Acc>(stats, frame.shift, false));
    }
  }
  cluster.sync();  // no CTA exits (freeing its shared memory) while another may still read its slots
#endif
}

}  // namespace norms
}  // namespace gpuprims
