#pragma once
// row_backward_lean_kernel: the backward row_on_chip kernel (row_backward.cuh) for the vector path
// only (NormBackwardParams::vec_ok), reworked the way the lean forward was (docs/norms.md,
// "Performance step 2" and "Backward performance"):
//   - dy and the saved row stay as loaded (RowTile::Vectors: fp16 / bf16 packed two to a register,
//     half the registers of a float tile) and are converted lane by lane in each of the two passes
//     over the row (the sums, then dx); xhat and g = dy * weight are recomputed in the second pass;
//   - bounds tested once per 16-byte slot: on the vector path a slot is a whole vector or empty;
//   - the row sums in kBackwardChains independent chains folded pairwise (fold_lanes), not one
//     chain of kVecs * kLanes dependent adds;
//   - dx rounded to fp16 / bf16 two values at a time by the hardware (round_to_vec16);
//   - log_softmax's exp(y) for fp16 / bf16 on the MUFU (exp_lean_flushing, flushing below
//     2^-126), fp32 / fp64 keep exp_of;
//   - block reductions alternating two shared slots (RowGroup::Alternating): one barrier each.
// kPrefetch: the grid is persistent (one wave, as the launcher sizes it) and each group issues
// the 16-byte loads of its next row's dy and saved row (and, norm kind, its mean / rstd) before
// it works on the current row, so they are in flight through the current row's reductions and
// stores: a block no longer stops loading at every row's barriers.
// kSharedColumns (norm kind): the group's running dweight / dbias column sums live in shared
// memory (dynamic, backward_lean_shared_bytes), each thread reading and writing only its own
// slots' columns (so no barrier), instead of 2 * kVecs * kLanes registers a thread.
// Results: dx equals row_backward_kernel's up to the summation order of the row sums (and NaN
// payloads; log_softmax fp16 / bf16 also exp_lean_flushing's error, far below the output's
// rounding); the dweight / dbias partial rows add the same products over the same rows in the
// same order.
#include <cstdint>

#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/row_math.hpp"
#include "gpuprims/norms/row_stats.cuh"
#include "gpuprims/norms/row_tile.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace norms {

// The template argument of row_backward_lean_kernel.
//   kThreadsPerRow, kRowsPerBlock, kVecs: the tile (RowTile); kRowsPerBlock > 1 for warps only.
//   kMinBlocks: __launch_bounds__' minimum resident blocks per SM (the register bound).
//   kPrefetch: load the next row's vectors before reducing the current one (see above).
//   kSharedColumns: dweight / dbias column sums in shared memory (see above).
//   kDeferSaved (softmax kind, without kPrefetch): log_softmax loads y only after dy's row sum is
//     reduced (its first pass reads dy alone): torch's order, each row's reads spread over its
//     two passes rather than both arrays requested at once (issue 5, session 11). Measured
//     slower (session 11 device run 4, docs/norms.md): y's latency is exposed after the reduction.
template <int kThreadsPerRow_, int kRowsPerBlock_, int kVecs_, int kMinBlocks_, bool kPrefetch_,
          bool kSharedColumns_ = false, bool kDeferSaved_ = false>
struct BackwardLeanConfig {
  static constexpr int kThreadsPerRow = kThreadsPerRow_;
  static constexpr int kRowsPerBlock = kRowsPerBlock_;
  static constexpr int kVecs = kVecs_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr bool kPrefetch = kPrefetch_;
  static constexpr bool kSharedColumns = kSharedColumns_;
  static constexpr bool kDeferSaved = kDeferSaved_;
  static constexpr int kThreads = kThreadsPerRow * kRowsPerBlock;
};

// Dynamic shared memory of row_backward_lean_kernel<T, kKind, Cfg> for rows of row_len elements:
// with kSharedColumns (norm kind), a row of column sums per group for each of dweight / dbias
// requested.
template <class Acc, class Cfg>
constexpr size_t backward_lean_shared_bytes(RowKind kind, int64_t row_len, bool dweight, bool dbias) {
  return Cfg::kSharedColumns && kind == RowKind::kNorm
             ? size_t(Cfg::kRowsPerBlock) * size_t(row_len) * sizeof(Acc) * (size_t(dweight) + size_t(dbias))
             : 0;
}

// kLanes accumulators as one aligned vector, so a slot's column sums move between shared memory
// and registers in 16-byte accesses (a slot's columns start at a multiple of kLanes elements).
template <class Acc, int kLanes>
struct alignas(16) ColumnSlot {
  Acc v[kLanes];
};

// Independent chains of a thread's row sums: 4 (or kLanes if fewer) cuts the dependent adds per
// row by 4 while costing 4 registers per sum, where kLanes chains cost 8 for fp16 / bf16.
template <int kLanes>
constexpr int kBackwardChains = kLanes < 4 ? kLanes : 4;

// The statistics of one row of the norm kind (mean 0 for rms_norm, whose mean pointer is null).
template <class Acc>
struct BackwardRowStats {
  Acc mean;
  Acc rstd;
  __device__ __forceinline__ static BackwardRowStats load(const NormBackwardParams& p, int64_t row) {
    return {p.center ? static_cast<const Acc*>(p.mean)[row] : Acc(0), static_cast<const Acc*>(p.rstd)[row]};
  }
};

// One group's dweight / dbias partial rows (row `group` of each buffer requested) from this
// thread's slots: column_w(k, l, e) and column_b(k, l, e) give the column sums of lane l of slot k,
// column e. Every group writes its rows, zeros when it had no rows: the column sums read them all.
// Shared by the lean and staged kernels, which keep those sums in registers or shared memory.
template <class Tile, class ColumnW, class ColumnB>
__device__ __forceinline__ void write_partial_rows(const NormBackwardParams& p, int64_t group, int len, int rank,
                                                   ColumnW column_w, ColumnB column_b) {
  using Acc = typename Tile::Acc;
  Acc* pw = static_cast<Acc*>(p.dweight_partial);
  Acc* pb = static_cast<Acc*>(p.dbias_partial);
  const int64_t first = group * len;
#pragma unroll
  for (int k = 0; k < Tile::kSlots; ++k) {
    const int e0 = Tile::slot_begin(k, rank);
    if (e0 >= len) continue;
#pragma unroll
    for (int l = 0; l < Tile::kLanes; ++l) {
      if (pw != nullptr) pw[first + e0 + l] = column_w(k, l, e0 + l);
      if (pb != nullptr) pb[first + e0 + l] = column_b(k, l, e0 + l);
    }
  }
}

// dy and the saved row of one row as loaded 16-byte vectors (the prefetch buffer).
template <class Tile>
struct BackwardRowVectors {
  typename Tile::Vectors dy, saved;
  __device__ __forceinline__ void load(const NormBackwardParams& p, int64_t row, int len, int rank) {
    dy.load(static_cast<const typename Tile::Value*>(p.dy) + p.dy_layout.x_row_offset(row), len, rank);
    saved.load(static_cast<const typename Tile::Value*>(p.saved) + p.saved_layout.x_row_offset(row), len, rank);
  }
};

template <class T, RowKind kKind, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
row_backward_lean_kernel(NormBackwardParams p) {
  using Tile = RowTile<T, Cfg::kThreadsPerRow, Cfg::kVecs>;
  using Acc = typename Tile::Acc;
  using Group = RowGroup<Acc, Cfg::kThreadsPerRow>;
  using Stats = BackwardRowStats<Acc>;
  using Slot = ColumnSlot<Acc, Tile::kLanes>;
  constexpr int kVecs = Cfg::kVecs;
  constexpr int kLanes = Tile::kLanes;
  constexpr int kChains = kBackwardChains<kLanes>;
  static_assert(Group::kIsWarp || Cfg::kRowsPerBlock == 1, "a block-wide group owns the whole block");
  static_assert(!Cfg::kDeferSaved || (kKind == RowKind::kSoftmax && !Cfg::kPrefetch), "see BackwardLeanConfig");
  __shared__ typename Group::TempStorage slots[2];
  typename Group::Alternating reduce{slots};

  const RowLayout& dl = p.dy_layout;
  const int len = static_cast<int>(dl.row_len);  // <= Tile::kCapacity, checked by the launcher
  const int rank = threadIdx.x % Cfg::kThreadsPerRow;
  const int group = threadIdx.x / Cfg::kThreadsPerRow;
  const int64_t stride = int64_t(gridDim.x) * Cfg::kRowsPerBlock;
  const T* weight = static_cast<const T*>(p.weight);
  T* dx = static_cast<T*>(p.dx);
  const auto at = [](const Vec16<T>& q, int l) { return cast_value<Acc>(q.lane[l]); };
  const auto weight_at = [&](const Vec16<T>& w, int l) { return weight != nullptr ? at(w, l) : Acc(1); };

  // Column sums of dy * xhat and dy over this group's rows (norm kind): in registers, or with
  // kSharedColumns in this group's rows of the dynamic shared memory (then one unused register row).
  constexpr int kColumnVecs = Cfg::kSharedColumns ? 1 : kVecs;
  Acc dw[kColumnVecs][kLanes] = {};
  Acc db[kColumnVecs][kLanes] = {};
  extern __shared__ __align__(16) unsigned char column_smem[];  // 16: ColumnSlot accesses
  Acc* shared_dw = nullptr;
  Acc* shared_db = nullptr;
  if constexpr (Cfg::kSharedColumns && kKind == RowKind::kNorm) {
    // dweight's rows (if requested), then dbias's. Each thread only touches its own slots'
    // columns, first zeroing them, so no barrier orders these accesses.
    Acc* next_rows = reinterpret_cast<Acc*>(column_smem);
    if (p.dweight_partial != nullptr) shared_dw = next_rows + int64_t(group) * len, next_rows += Cfg::kRowsPerBlock * len;
    if (p.dbias_partial != nullptr) shared_db = next_rows + int64_t(group) * len;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int e0 = Tile::slot_begin(k, rank);
      if (e0 >= len) continue;
      if (shared_dw != nullptr) *reinterpret_cast<Slot*>(shared_dw + e0) = Slot{};
      if (shared_db != nullptr) *reinterpret_cast<Slot*>(shared_db + e0) = Slot{};
    }
  }

  // The loop bound is uniform over the group that owns a row, so every thread of a block reaches
  // the same barriers.
  int64_t row = int64_t(blockIdx.x) * Cfg::kRowsPerBlock + group;
  BackwardRowVectors<Tile> next;
  Stats next_stats{};
  if constexpr (Cfg::kPrefetch) {
    if (row < dl.num_rows) {
      next.load(p, row, len, rank);
      if constexpr (kKind == RowKind::kNorm) next_stats = Stats::load(p, row);
    }
  }
  for (; row < dl.num_rows; row += stride) {
    // dy and the saved row as loaded (packed: 2-byte types take half the registers of floats),
    // converted lane by lane where used.
    BackwardRowVectors<Tile> cur;
    Stats stats{};
    if constexpr (Cfg::kPrefetch) {
      cur = next;
      stats = next_stats;
      if (row + stride < dl.num_rows) {
        next.load(p, row + stride, len, rank);
        if constexpr (kKind == RowKind::kNorm) next_stats = Stats::load(p, row + stride);
      }
    } else if constexpr (Cfg::kDeferSaved) {
      cur.dy.load(static_cast<const T*>(p.dy) + dl.x_row_offset(row), len, rank);
      if (!p.log) cur.saved.load(static_cast<const T*>(p.saved) + p.saved_layout.x_row_offset(row), len, rank);
    } else {
      cur.load(p, row, len, rank);
      if constexpr (kKind == RowKind::kNorm) stats = Stats::load(p, row);
    }
    const auto& gq = cur.dy.q;
    const auto& sq = cur.saved.q;
    T* out = dx + dl.y_row_offset(row);

    if constexpr (kKind == RowKind::kSoftmax) {
      Acc part[kChains] = {};
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        if (Tile::slot_begin(k, rank) >= len) continue;
#pragma unroll
        for (int l = 0; l < kLanes; ++l) part[l % kChains] += softmax_backward_term(at(sq[k], l), at(gq[k], l), p.log);
      }
      const Acc sum = reduce(fold_lanes(part, SumOp{}), SumOp{});
      if constexpr (Cfg::kDeferSaved) {
        if (p.log) cur.saved.load(static_cast<const T*>(p.saved) + p.saved_layout.x_row_offset(row), len, rank);
      }
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int e0 = Tile::slot_begin(k, rank);
        if (e0 >= len) continue;
        Acc o[kLanes];
#pragma unroll
        for (int l = 0; l < kLanes; ++l) {
          // softmax_backward_out, with exp_lean_flushing for log_softmax's exp(y).
          const Acc y = at(sq[k], l), d = at(gq[k], l);
          o[l] = p.log ? d - exp_lean_flushing<T>(y) * sum : y * (d - sum);
        }
        store_vec16(out + e0, round_to_vec16<T>(o));
      }
    } else {
      // The weight's vector at e0 (unset without a weight: weight_at reads 1), read in each pass
      // (from L1: every row reads it); the compiler may keep it across passes or rows instead.
      const auto weight_vec = [&](int e0) {
        Vec16<T> w;
        if (weight != nullptr) w = load_vec16<T, LoadPolicy::kReadOnly>(weight + e0);
        return w;
      };
      const auto xhat_at = [&](int k, int l) { return (at(sq[k], l) - stats.mean) * stats.rstd; };
      Acc part_g[kChains] = {}, part_gx[kChains] = {};
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int e0 = Tile::slot_begin(k, rank);
        if (e0 >= len) continue;  // slots past the row add nothing
        const Vec16<T> w = weight_vec(e0);
        Acc dwk[kLanes], dbk[kLanes];
#pragma unroll
        for (int l = 0; l < kLanes; ++l) {
          const Acc d = at(gq[k], l), xhat = xhat_at(k, l);
          dwk[l] = d * xhat;
          dbk[l] = d;
          const Acc gv = d * weight_at(w, l);
          part_g[l % kChains] += gv;
          part_gx[l % kChains] += gv * xhat;
        }
        if constexpr (Cfg::kSharedColumns) {
          if (shared_dw != nullptr) {
            Slot c = *reinterpret_cast<const Slot*>(shared_dw + e0);
#pragma unroll
            for (int l = 0; l < kLanes; ++l) c.v[l] += dwk[l];
            *reinterpret_cast<Slot*>(shared_dw + e0) = c;
          }
          if (shared_db != nullptr) {
            Slot c = *reinterpret_cast<const Slot*>(shared_db + e0);
#pragma unroll
            for (int l = 0; l < kLanes; ++l) c.v[l] += dbk[l];
            *reinterpret_cast<Slot*>(shared_db + e0) = c;
          }
        } else {
#pragma unroll
          for (int l = 0; l < kLanes; ++l) {
            dw[k][l] += dwk[l];
            db[k][l] += dbk[l];
          }
        }
      }
      // rms_norm (no centering) runs one reduction per row; Alternating carries its turn across rows.
      const Acc mean_g = p.center ? mean_of(reduce(fold_lanes(part_g, SumOp{}), SumOp{}), len) : Acc(0);
      const Acc mean_gx = mean_of(reduce(fold_lanes(part_gx, SumOp{}), SumOp{}), len);
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int e0 = Tile::slot_begin(k, rank);
        if (e0 >= len) continue;
        const Vec16<T> w = weight_vec(e0);
        Acc o[kLanes];
#pragma unroll
        for (int l = 0; l < kLanes; ++l) {
          o[l] = norm_backward_out(at(gq[k], l) * weight_at(w, l), xhat_at(k, l), stats.rstd, mean_g, mean_gx);
        }
        store_vec16(out + e0, round_to_vec16<T>(o));
      }
    }
  }

  if constexpr (kKind == RowKind::kNorm) {
    const int64_t group_index = int64_t(blockIdx.x) * Cfg::kRowsPerBlock + group;
    if constexpr (Cfg::kSharedColumns) {
      write_partial_rows<Tile>(
          p, group_index, len, rank, [&](int, int, int e) { return shared_dw[e]; },
          [&](int, int, int e) { return shared_db[e]; });
    } else {
      write_partial_rows<Tile>(
          p, group_index, len, rank, [&](int k, int l, int) { return dw[k][l]; },
          [&](int k, int l, int) { return db[k][l]; });
    }
  }
}

}  // namespace norms
}  // namespace gpuprims
