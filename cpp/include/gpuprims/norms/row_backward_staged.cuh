#pragma once
// row_backward_staged_kernel: the backward row_on_chip kernel for the norm kind's block tiles on
// the vector path (NormBackwardParams::vec_ok), with the rows staged through shared memory by
// cp.async instead of held in registers (docs/norms.md, "Backward performance: staged rows").
// Since session 16 the library runs the softmax kind's block tiles with a block per row instead
// (variant_backward_row_on_chip.cu); its softmax-kind path (kSavedLead included) stays for the
// A/B rows of bench/tune/norms_backward_tune.cu.
//
// Why: the register-tiled kernels (row_backward.cuh, row_backward_lean.cuh) have loads in flight
// only between a row's first load and its reduction; through the reductions, the barriers and
// the dx stores a block issues nothing, and the 2-byte norm kind, whose dweight / dbias column
// sums take most of its registers, has one or two blocks per SM to cover that. Here each thread
// copies its own 16-byte slots of dy and of the saved row into one of kStages shared-memory
// stages, kStages - 1 rows ahead of the row it works on: those copies stay in flight through the
// current row's reductions and stores, and cost no registers while they do. A thread reads back
// only the slots it copied itself, so cp.async.wait_group alone orders them (no barrier); stage
// s is rewritten only after this thread has read it in the previous iteration.
//
// With the tiles out of the registers, the norm kind keeps its column sums of dy * xhat and dy in
// registers (kVecs * kLanes each) and its weight vectors too (read once per kernel; or from L1
// in each pass, kWeightInRegisters = false, to spare registers); layer_norm's
// two row sums go through one block reduction of a pair (one barrier per row, not two); the next
// row's mean / rstd are loaded one row ahead. Per-element work as in the lean kernel (row sums in
// kBackwardChains chains, pairwise rounding of dx, exp_lean_flushing for fp16 / bf16 log_softmax).
// Results: dx equals row_backward_lean_kernel's up to the order of the row sums; the partial rows
// add the same products over the same rows in the same order.
#include <cstddef>
#include <cstdint>

#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/row_backward_lean.cuh"
#include "gpuprims/norms/row_math.hpp"
#include "gpuprims/norms/row_stats.cuh"
#include "gpuprims/norms/row_tile.cuh"
#include "gpuprims/util/ptx_sm80.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace norms {

// The template argument of row_backward_staged_kernel: a block of kThreads threads per row with
// kVecs 16-byte slots of each input a thread, kStages shared-memory stages (rows in flight:
// kStages - 1 ahead of the current one), kMinBlocks the register bound of __launch_bounds__,
// kWeightInRegisters: the norm kind's weight vectors held in registers for the whole kernel (else
// read in each pass from L1, where every row reads them: 4 registers a slot fewer);
// kFoldedOutput: the norm kind's dx as rstd * g - rstd * mean(g) - rstd^2 * mean(g * xhat) * (x -
// mean), the per-row factors computed once (three instructions an element where xhat and
// norm_backward_out take five; rounding differs from row_backward_kernel's by an ulp or so);
// kHoldRow: the norm kind's g = dy * weight and xhat of the first pass kept in registers (2 *
// kVecs * kLanes floats) for the output pass, which then reads neither the stage nor the weight
// and converts nothing: 3 instructions an element (norm_backward_out; 2 with kFoldedOutput) where
// the recomputation takes 9 and two shared-memory reads a slot. For the tile whose register bound
// leaves room (the bf16 8192 tile: 512 threads, one block per SM at 96 of its 128 registers).
// kSavedLead (softmax kind; -1: kStages - 1, with dy): how many rows ahead log_softmax's saved
// row y is copied, as its own commit group, where dy stays kStages - 1 rows ahead. Its first pass
// reads dy alone, so with a lead of 0 y's row is requested only when its row starts and lands
// during dy's sum and reduction: torch's schedule (dy's pass, then y's), the reads of one row
// spread over its two passes instead of both arrays' requested together (issue 5, session 11).
// softmax (whose first pass reads y) keeps y with dy.
// kStreamingStores: dx stored with st.global.cs (written once, evict-first).
// Both measured in session 11 device run 4 (docs/norms.md): neither beats the defaults.
template <int kThreads_, int kVecs_, int kStages_, int kMinBlocks_ = 1, bool kWeightInRegisters_ = true,
          bool kFoldedOutput_ = false, bool kHoldRow_ = false, int kSavedLead_ = -1, bool kStreamingStores_ = false>
struct BackwardStagedConfig {
  static constexpr int kThreads = kThreads_;
  static constexpr int kThreadsPerRow = kThreads_;
  static constexpr int kRowsPerBlock = 1;
  static constexpr int kVecs = kVecs_;
  static constexpr int kStages = kStages_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr bool kWeightInRegisters = kWeightInRegisters_;
  static constexpr bool kFoldedOutput = kFoldedOutput_;
  static constexpr bool kHoldRow = kHoldRow_;
  static constexpr int kSavedLead = kSavedLead_ < 0 ? kStages_ - 1 : kSavedLead_;
  static constexpr bool kStreamingStores = kStreamingStores_;
  static_assert(kStages >= 2, "one stage being read, at least one in flight");
  static_assert(kSavedLead < kStages, "y's row lands in a stage whose previous row has been read");
};

// Dynamic shared memory of row_backward_staged_kernel<T, kind, Cfg> for rows of row_len elements
// (a multiple of the vector width on the vector path): per stage, dy's row then the saved row.
template <class T, class Cfg>
constexpr size_t backward_staged_shared_bytes(int64_t row_len) {
  return size_t(Cfg::kStages) * 2 * size_t(row_len) * sizeof(T);
}

template <class T, RowKind kKind, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
row_backward_staged_kernel(NormBackwardParams p) {
  using Tile = RowTile<T, Cfg::kThreads, Cfg::kVecs>;  // the slot layout (slot_begin) and lane count
  using Acc = typename Tile::Acc;
  using Stats = BackwardRowStats<Acc>;
  using Group = RowGroup<Acc, Cfg::kThreads>;
  using PairGroup = RowGroup<SumPair<Acc>, Cfg::kThreads>;
  constexpr int kVecs = Cfg::kVecs;
  constexpr int kLanes = Tile::kLanes;
  constexpr int kChains = kBackwardChains<kLanes>;
  constexpr int kStages = Cfg::kStages;
  static_assert(!Group::kIsWarp, "block tiles only: warp tiles keep row_backward_lean_kernel");
  // Split: y's copies in their own commit groups, Cfg::kSavedLead rows ahead (softmax kind).
  constexpr bool kSplit = Cfg::kSavedLead < kStages - 1;
  constexpr int kLead = Cfg::kSavedLead;
  static_assert(!kSplit || kKind == RowKind::kSoftmax, "the norm kind's first pass reads both inputs");
  constexpr StorePolicy kStore = Cfg::kStreamingStores ? StorePolicy::kStreaming : StorePolicy::kDefault;
  __shared__ typename Group::TempStorage slots[2];
  __shared__ typename PairGroup::TempStorage pair_slots[2];
  typename Group::Alternating reduce{slots};
  typename PairGroup::Alternating reduce_pair{pair_slots};
  extern __shared__ __align__(16) unsigned char stage_smem[];
  T* const stages = reinterpret_cast<T*>(stage_smem);

  const RowLayout& dl = p.dy_layout;
  const RowLayout& sl = p.saved_layout;
  const int len = static_cast<int>(dl.row_len);  // <= Tile::kCapacity, checked by the launcher
  const int rank = threadIdx.x;
  const int64_t stride = gridDim.x;
  const T* dy = static_cast<const T*>(p.dy);
  const T* saved = static_cast<const T*>(p.saved);
  const T* weight = static_cast<const T*>(p.weight);
  T* dx = static_cast<T*>(p.dx);
  const auto at = [](const Vec16<T>& q, int l) { return cast_value<Acc>(q.lane[l]); };
  const auto stage_dy = [&](int s) { return stages + int64_t(s) * 2 * len; };
  const auto stage_saved = [&](int s) { return stages + (int64_t(s) * 2 + 1) * len; };
  const auto read = [](const T* slot) { return *reinterpret_cast<const Vec16<T>*>(slot); };

  // This thread's slots of row r (dy's and / or the saved row's) into stage s, as one commit group
  // (empty outside the rows, so that the group count, and with it the waits below, is the same in
  // every iteration).
  const auto issue = [&](int64_t r, int s, bool with_dy, bool with_saved) {
    if (r >= 0 && r < dl.num_rows) {
      const T* dyr = dy + dl.x_row_offset(r);
      const T* sr = saved + sl.x_row_offset(r);
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int e0 = Tile::slot_begin(k, rank);
        if (e0 >= len) continue;
        if (with_dy) ptx::cp_async_16(ptx::shared_address(stage_dy(s) + e0), dyr + e0);
        if (with_saved) ptx::cp_async_16(ptx::shared_address(stage_saved(s) + e0), sr + e0);
      }
    }
    ptx::cp_async_commit();
  };
  // One iteration's copies for the row `row` in stage s: without kSplit one group, both inputs of
  // the row kStages - 1 ahead; with it two groups: for log_softmax y of the row kLead ahead, then
  // dy of the row kStages - 1 ahead, so that dy of the current row has 2 * (kStages - 1) groups
  // after it and y 2 * kLead + 1; for softmax, whose first pass reads y, an empty group, then both
  // inputs of the row kStages - 1 ahead (the same counts, y with dy).
  const auto issue_ahead = [&](int64_t row, int s) {
    const int last = s == 0 ? kStages - 1 : s - 1;  // (s + kStages - 1) % kStages: read last iteration
    if constexpr (kSplit) {
      issue(row + kLead * stride, (s + kLead) % kStages, false, p.log);
      issue(row + (kStages - 1) * stride, last, true, !p.log);
    } else {
      issue(row + (kStages - 1) * stride, last, true, true);
    }
  };

  // Norm kind: the column sums in registers for the whole kernel, and the weight's vectors
  // (unset without a weight: weight_at reads 1) there too or read per pass (kWeightInRegisters).
  constexpr bool kHeldWeight = Cfg::kWeightInRegisters && kKind == RowKind::kNorm;
  Vec16<T> held_w[kHeldWeight ? kVecs : 1];
  Acc dw[kVecs][kLanes] = {};
  Acc db[kVecs][kLanes] = {};
  if constexpr (kHeldWeight) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int e0 = Tile::slot_begin(k, rank);
      if (weight != nullptr && e0 < len) held_w[k] = load_vec16<T, LoadPolicy::kReadOnly>(weight + e0);
    }
  }
  const auto weight_vec = [&](int k, int e0) {
    if constexpr (kHeldWeight) {
      return held_w[k];
    } else {
      Vec16<T> v;
      if (weight != nullptr) v = load_vec16<T, LoadPolicy::kReadOnly>(weight + e0);
      return v;
    }
  };
  const auto weight_at = [&](const Vec16<T>& wk, int l) { return weight != nullptr ? at(wk, l) : Acc(1); };

  int64_t row = blockIdx.x;
  if constexpr (kSplit) {
    // The iterations before the first, so that every row's groups sit where the waits expect them
    // (rows before the first are empty groups).
#pragma unroll
    for (int i = 1 - kStages; i < 0; ++i) issue_ahead(row + i * stride, i + kStages);
  } else {
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) issue(row + s * stride, s, true, true);
  }
  Stats next_stats{};
  if (kKind == RowKind::kNorm && row < dl.num_rows) next_stats = Stats::load(p, row);

  // The loop bound is uniform over the block, so every thread reaches the same barriers.
  for (int s = 0; row < dl.num_rows; row += stride, s = s + 1 == kStages ? 0 : s + 1) {
    issue_ahead(row, s);
    // This thread's copies of the current row's dy have landed, and its y's unless it is
    // log_softmax's under kSplit (its first pass reads dy alone).
    ptx::cp_async_wait<kSplit ? 2 * (kStages - 1) : kStages - 1>();
    const T* gr = stage_dy(s);
    const T* sr = stage_saved(s);
    T* out = dx + dl.y_row_offset(row);

    if constexpr (kKind == RowKind::kSoftmax) {
      Acc part[kChains] = {};
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int e0 = Tile::slot_begin(k, rank);
        if (e0 >= len) continue;
        const Vec16<T> g = read(gr + e0);
        if (p.log) {
#pragma unroll
          for (int l = 0; l < kLanes; ++l) part[l % kChains] += at(g, l);
        } else {
          const Vec16<T> y = read(sr + e0);
#pragma unroll
          for (int l = 0; l < kLanes; ++l) part[l % kChains] += at(g, l) * at(y, l);
        }
      }
      const Acc sum = reduce(fold_lanes(part, SumOp{}), SumOp{});
      if constexpr (kSplit) {
        if (p.log) ptx::cp_async_wait<2 * kLead + 1>();  // y's copies, requested at most kLead rows ago
      }
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int e0 = Tile::slot_begin(k, rank);
        if (e0 >= len) continue;
        const Vec16<T> g = read(gr + e0), y = read(sr + e0);
        Acc o[kLanes];
#pragma unroll
        for (int l = 0; l < kLanes; ++l) {
          o[l] = p.log ? at(g, l) - exp_lean_flushing<T>(at(y, l)) * sum : at(y, l) * (at(g, l) - sum);
        }
        store_vec16<T, kStore>(out + e0, round_to_vec16<T>(o));
      }
    } else {
      const Stats stats = next_stats;
      if (row + stride < dl.num_rows) next_stats = Stats::load(p, row + stride);
      Acc part_g[kChains] = {}, part_gx[kChains] = {};
      constexpr int kHeld = Cfg::kHoldRow ? kVecs : 1;
      Acc held_g[kHeld][kLanes], held_xhat[kHeld][kLanes];  // kHoldRow: the first pass's g and xhat
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int e0 = Tile::slot_begin(k, rank);
        if (e0 >= len) continue;  // slots past the row add nothing
        const Vec16<T> g = read(gr + e0), x = read(sr + e0), wk = weight_vec(k, e0);
#pragma unroll
        for (int l = 0; l < kLanes; ++l) {
          const Acc d = at(g, l), xhat = (at(x, l) - stats.mean) * stats.rstd;
          dw[k][l] += d * xhat;
          db[k][l] += d;
          const Acc gv = d * weight_at(wk, l);
          part_g[l % kChains] += gv;
          part_gx[l % kChains] += gv * xhat;
          if constexpr (Cfg::kHoldRow) held_g[k][l] = gv, held_xhat[k][l] = xhat;
        }
      }
      Acc mean_g = Acc(0), mean_gx;
      if (p.center) {
        const SumPair<Acc> sums = reduce_pair(SumPair<Acc>{fold_lanes(part_g, SumOp{}), fold_lanes(part_gx, SumOp{})},
                                              PairSumOp{});
        mean_g = mean_of(sums.a, len);
        mean_gx = mean_of(sums.b, len);
      } else {
        mean_gx = mean_of(reduce(fold_lanes(part_gx, SumOp{}), SumOp{}), len);
      }
      // kFoldedOutput: dx = rstd * g - out_shift - out_scale * (x - mean); with kHoldRow, where
      // xhat is held, dx = rstd * g - out_shift - (rstd * mean_gx) * xhat.
      const Acc out_shift = stats.rstd * mean_g, out_scale = stats.rstd * stats.rstd * mean_gx;
      const Acc held_scale = stats.rstd * mean_gx;
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int e0 = Tile::slot_begin(k, rank);
        if (e0 >= len) continue;
        Acc o[kLanes];
        if constexpr (Cfg::kHoldRow) {
#pragma unroll
          for (int l = 0; l < kLanes; ++l) {
            const Acc gv = held_g[k][l], xhat = held_xhat[k][l];
            o[l] = Cfg::kFoldedOutput ? stats.rstd * gv - (out_shift + held_scale * xhat)
                                      : norm_backward_out(gv, xhat, stats.rstd, mean_g, mean_gx);
          }
        } else {
          const Vec16<T> g = read(gr + e0), x = read(sr + e0), wk = weight_vec(k, e0);
#pragma unroll
          for (int l = 0; l < kLanes; ++l) {
            const Acc gv = at(g, l) * weight_at(wk, l);
            if constexpr (Cfg::kFoldedOutput) {
              o[l] = (stats.rstd * gv - out_shift) - out_scale * (at(x, l) - stats.mean);
            } else {
              const Acc xhat = (at(x, l) - stats.mean) * stats.rstd;
              o[l] = norm_backward_out(gv, xhat, stats.rstd, mean_g, mean_gx);
            }
          }
        }
        store_vec16<T, kStore>(out + e0, round_to_vec16<T>(o));
      }
    }
  }
  ptx::cp_async_wait<0>();  // the empty tail groups: nothing may be in flight at exit

  if constexpr (kKind == RowKind::kNorm) {
    write_partial_rows<Tile>(
        p, blockIdx.x, len, rank, [&](int k, int l, int) { return dw[k][l]; },
        [&](int k, int l, int) { return db[k][l]; });
  }
}

}  // namespace norms
}  // namespace gpuprims
