#pragma once
// The one-pass kernel: each row is read once into registers, reduced there, and written once.
// kThreadsPerRow threads own a row (for short rows a warp or a group of 4, 8 or 16 of its lanes,
// with kRowsPerBlock rows per block; the whole block for long rows); rows longer than the tile's
// capacity go to the split-row kernels.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "gpuprims/norms/chunk_moments.cuh"
#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/row_staged.cuh"
#include "gpuprims/norms/row_stats.cuh"
#include "gpuprims/norms/row_tile.cuh"
#include "gpuprims/norms/row_tile_packed.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/ptx_sm80.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace norms {

// Vector kernels: at least 512 resident threads per SM (<= 128 registers a thread), so enough
// loads are in flight per SM. The fp16/bf16 softmax kind: at least 1024 (<= 64 registers): its
// 32-value tiles took 79-80 registers unbounded (three 256-thread blocks per SM, 64 bytes in
// flight a thread) and fit 63 without spilling (four blocks). The fp16/bf16 norm kind spills
// under that bound (28-824 bytes, worst with the residual prologue) and keeps 512. The
// element-wise fallback gets no bound: its per-element 64-bit addresses would spill under it.
constexpr int min_blocks_for(int threads, bool vector, int elem_bytes, RowKind kind) {
  const int resident = elem_bytes == 2 && kind == RowKind::kSoftmax ? 1024 : 512;
  return vector && threads <= 512 ? resident / threads : 1;
}

// How a row_on_chip kernel runs (its template argument):
//   kThreadsPerRow, kRowsPerBlock, kVecs: the tile (RowTile); kRowsPerBlock > 1 for groups within
//     a warp only (4, 8, 16 or 32 threads a row).
//   kMinBlocks: __launch_bounds__' resident blocks per SM, i.e. the register bound, for the vector
//     path (the element-wise path gets 1: see min_blocks_for).
//   kPrefetch (vector path, no residual): each group loads the vectors of its next row before it
//     reduces and writes the current one, so its loads stay in flight through the reduction
//     barriers and the stores instead of stopping at every row; block reductions alternate two
//     shared slots (one barrier each instead of two). Meant for a persistent grid
//     (row_on_chip_blocks), every group walking several rows; correct with any grid.
//   kLean (vector path): per-slot bounds, kLanes-way sums, fmax row max, exp_lean and hardware
//     pair rounding of fp16 / bf16 outputs (row_stats.cuh, RowTile::store): fewer instructions
//     per element, which 2-byte types, at twice the elements per byte of fp32, need most.
//   kPacked (with kLean; fp16 / bf16, norm kind, vector path): the row stays in its 16-byte
//     vectors (PackedRowTile, half the tile's registers) and is converted per pass.
//   kFold (with kLean; fp16 / bf16, norm kind, vector path): the row shift folded into per-row
//     constants in the squared-deviation and output passes (chunk_partial, RowOutput): one
//     instruction per element fewer in each.
//   kOnePass (with kLean; fp16 / bf16, norm kind, vector path): the statistics in one pass over
//     the tile with one paired reduction where the row allows it (norm_partial_one_pass): layer_norm
//     4 instructions per element for both sums instead of 6 and one block reduction instead of
//     two; rms_norm 2 instead of 3.
//   kAffinePaths (with kLean; fp16 / bf16, norm kind, vector path): the output pass specialized
//     for layer_norm with weight and bias and for rms_norm with weight (Affine, row_tile.cuh; other
//     cases run the general pass): no per-element selects of the optional affine vectors (two
//     per element), and rms_norm's output without the zero shift and bias (x * rstd * w).
//   kOrigin (with kOnePass): layer_norm's one-pass statistics first try the sums of x and x^2
//     about 0 (origin_stats, row_stats.cuh: 3 instructions per element instead of 4, falling back
//     to the first-element form); a row it accepts has shift 0, and with kAffinePaths its output
//     pass drops x - shift (5.5 instructions per element instead of 6.5, bitwise the same). The
//     add-norms take those sums from their residual prologue (add_residual_vectors), which holds
//     every value anyway: no statistics pass of their own for an accepted row (rms_norm: the sum of
//     x^2 likewise).
//   kStages (with kLean; the add-norms' block tiles on the vector path; 0: off): x and the
//     residual of a block's rows are copied by cp.async into kStages shared-memory stages,
//     kStages - 1 rows ahead of the row the block works on (a persistent grid, as kPrefetch), so
//     the copies stay in flight through the current row's reductions and stores without holding
//     registers (the backward's staged rows, row_backward_staged.cuh; docs/norms.md, "Fused
//     add-norms"). Each thread reads back only the slots it copied, so cp.async.wait_group
//     orders them (no barrier), and a stage is refilled only after this thread has read it.
template <int kThreadsPerRow_, int kRowsPerBlock_, int kVecs_, int kMinBlocks_, bool kPrefetch_, bool kLean_,
          bool kPacked_ = false, bool kFold_ = false, bool kOnePass_ = false, bool kAffinePaths_ = false,
          bool kOrigin_ = false, int kStages_ = 0>
struct RowOnChipConfig {
  static constexpr int kThreadsPerRow = kThreadsPerRow_;
  static constexpr int kRowsPerBlock = kRowsPerBlock_;
  static constexpr int kThreads = kThreadsPerRow_ * kRowsPerBlock_;
  static constexpr int kVecs = kVecs_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr bool kPrefetch = kPrefetch_;
  static constexpr bool kLean = kLean_;
  static constexpr bool kPacked = kPacked_;
  static constexpr bool kFold = kFold_;
  static constexpr bool kOnePass = kOnePass_;
  static constexpr bool kAffinePaths = kAffinePaths_;
  static constexpr bool kOrigin = kOrigin_;
  static constexpr int kStages = kStages_;
};

// The configuration row_on_chip ran before kPrefetch / kLean (kept for the A/B in
// bench/tune/norms_forward_tune.cu and as the flip-back): one row per group, grid = groups.
template <class T, RowKind kKind, int kThreadsPerRow, int kRowsPerBlock, int kVecs>
using ClassicRowOnChip = RowOnChipConfig<kThreadsPerRow, kRowsPerBlock, kVecs,
                                         min_blocks_for(kThreadsPerRow * kRowsPerBlock, true, sizeof(T), kKind),
                                         false, false>;

// Whether row_on_chip_kernel<T, kKind, Cfg, kVector, kResidual> prefetches, and how many
// shared-memory stages it runs; either wants the persistent grid of row_on_chip_blocks.
template <class Cfg, bool kVector, bool kResidual>
constexpr bool row_on_chip_prefetches = Cfg::kPrefetch && kVector && !kResidual;
template <class Cfg, bool kVector, bool kResidual>
constexpr int row_on_chip_stages = kResidual && kVector && Cfg::kLean && Cfg::kRowsPerBlock == 1 ? Cfg::kStages : 0;
template <class Cfg, bool kVector, bool kResidual>
constexpr bool row_on_chip_persistent =
    row_on_chip_prefetches<Cfg, kVector, kResidual> || row_on_chip_stages<Cfg, kVector, kResidual> > 0;

// Dynamic shared memory of that kernel for rows of row_len elements: per stage, x's row then the
// residual's.
template <class T, class Cfg, bool kVector, bool kResidual>
constexpr size_t row_on_chip_shared_bytes(int64_t row_len) {
  return size_t(row_on_chip_stages<Cfg, kVector, kResidual>) * 2 * size_t(row_len) * sizeof(T);
}

// The resident blocks per SM that row_on_chip_kernel's register bound asks for (__launch_bounds__):
// the configuration's on the vector path, 1 on the element-wise one (per-element addresses would
// spill under a tighter bound). The fp16 / bf16 norm kind's ragged kernels ask for half: their
// rotated loads and stores around the packed tile spilled 92-228 bytes under the tuned
// tiles' 64 registers and 72 under 96 (the 128-thread tile; ptxas, CUDA 13.0, sm_90a); at 128 none.
template <class T, RowKind kKind, class Cfg, bool kVector, bool kRagged>
constexpr int row_on_chip_min_blocks() {
  if (!kVector) return 1;
  if (kRagged && kKind == RowKind::kNorm && sizeof(T) == 2) return Cfg::kMinBlocks > 1 ? Cfg::kMinBlocks / 2 : 1;
  return Cfg::kMinBlocks;
}

// kVector: p.vec_ok, as a template argument so that each instantiation holds one access path
// (with both, the scalar path's addresses inflate the register count of the vector one).
// kResidual (norm kind): the row is x + residual, rounded to T, also written to p.sum.
// Out (softmax kind, vector path): y's dtype where it differs from x's, softmax(x, dtype=Out):
// x rounded to Out as it is loaded, the result written as Out (RowTile's Out).
// kRagged (vector path, p.ragged): unit-stride rows that are not whole aligned vectors, held
// rotated so that their aligned body takes 16-byte accesses (RaggedRow, row_tile.cuh); the norm
// kind's tile skips the empty lanes of the slot around position len in its lean passes
// (kPartialSlots), where the softmax kind's fill (-inf) is neutral.
// Staged (a StagedRuns, row_staged.cuh; with kRagged, Out = T, rows_back_to_back; void: not
// staged): the rows lie back to back, and the block copies runs of whole rows into shared memory
// and back with 16-byte accesses, the next runs in flight while it works on one (StagedRuns::run);
// each row is read from and written to its place in the stage as a ragged row. Persistent grid.
template <class T, RowKind kKind, class Cfg, bool kVector, bool kResidual = false, class Out = T, bool kRagged = false,
          class Staged = void>
__global__ void __launch_bounds__(Cfg::kThreads, (row_on_chip_min_blocks<T, kKind, Cfg, kVector, kRagged>()))
row_on_chip_kernel(NormParams p) {
  static_assert(std::is_same<Out, T>::value || (kKind == RowKind::kSoftmax && kVector && !kResidual && !Cfg::kPrefetch),
                "a converting row_on_chip kernel is a softmax-kind vector kernel");
  static_assert(!kRagged || (kVector && !kResidual && !Cfg::kPrefetch),
                "a ragged row_on_chip kernel is a vector kernel without residual or prefetch");
  constexpr bool kStaged = !std::is_void<Staged>::value;
  static_assert(!kStaged || (kRagged && std::is_same<Out, T>::value), "a staged row_on_chip kernel is a ragged one, Out = T");
  constexpr int kThreadsPerRow = Cfg::kThreadsPerRow, kRowsPerBlock = Cfg::kRowsPerBlock;
  constexpr bool kPrefetch = row_on_chip_prefetches<Cfg, kVector, kResidual>;
  constexpr bool kLean = Cfg::kLean && kVector;
  // Elsewhere kPacked does not apply: the softmax kind rewrites its tile (softmax_exponentiate)
  // and the non-lean passes read every lane.
  constexpr bool kPacked = Cfg::kPacked && kLean && kKind == RowKind::kNorm && is_half_like<T>::value;
  constexpr bool kFold = Cfg::kFold && kLean && kKind == RowKind::kNorm && is_half_like<T>::value;
  constexpr bool kOnePass = Cfg::kOnePass && kLean && kKind == RowKind::kNorm && is_half_like<T>::value;
  constexpr bool kAffinePaths = Cfg::kAffinePaths && kLean && kKind == RowKind::kNorm && is_half_like<T>::value;
  constexpr bool kOrigin = Cfg::kOrigin && kOnePass;
  constexpr bool kPartialSlots = kRagged && kKind == RowKind::kNorm;
  using Tile = std::conditional_t<kPacked, PackedRowTile<T, kThreadsPerRow, Cfg::kVecs, kPartialSlots>,
                                  RowTile<T, kThreadsPerRow, Cfg::kVecs, Out,
                                          /*kInterleaved=*/!kVector && kKind == RowKind::kNorm && !kResidual,
                                          kPartialSlots>>;
  using Acc = typename Tile::Acc;
  using Group = RowGroup<Acc, kThreadsPerRow>;
  static_assert(Group::kIsWarp || kRowsPerBlock == 1, "a block-wide group owns the whole block");
  __shared__ typename Group::TempStorage temp[kPrefetch ? 2 : 1];
  __shared__ typename RowGroup<SumPair<Acc>, kThreadsPerRow>::TempStorage pair_temp;  // kOnePass
  auto reduce = [&] {
    if constexpr (kPrefetch) return typename Group::Alternating{temp};
    else return typename Group::Synced{temp[0]};
  }();
  constexpr int kStages = row_on_chip_stages<Cfg, kVector, kResidual>;

  const RowLayout& layout = p.layout;
  const int len = static_cast<int>(layout.row_len);  // <= Tile::kCapacity, checked by the host
  const int rank = threadIdx.x % kThreadsPerRow;
  const T* x = static_cast<const T*>(p.x);
  Out* y = static_cast<Out*>(p.y);
  const int64_t step = int64_t(gridDim.x) * kRowsPerBlock;
  int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kThreadsPerRow;
  // kPrefetch: the vectors of `row` (and its first element, the norm kind's frame), loaded one
  // iteration ahead.
  typename Tile::Vectors next;
  Acc next_first = Acc(0);
  const auto prefetch = [&](int64_t r) {
    const T* xr = x + layout.x_row_offset(r);
    next.load(xr, len, rank);
    if constexpr (kKind == RowKind::kNorm) next_first = row_first(xr, len);
  };
  if constexpr (kPrefetch) {
    if (row < layout.num_rows) prefetch(row);
  }
  // kStages: stage s holds x's row at s * 2 * len elements and the residual's after it (len is a
  // whole number of vectors on the vector path, so every slot is 16-byte aligned). issue() copies
  // this thread's slots of row r into stage s as one commit group (empty past the last row, so
  // every iteration commits one group and the wait below counts the same).
  extern __shared__ __align__(16) unsigned char row_stage_smem[];
  const auto stage_x = [&](int s) { return reinterpret_cast<T*>(row_stage_smem) + int64_t(s) * 2 * len; };
  const auto issue = [&](int64_t r, int s) {
    if (r < layout.num_rows) {
      const T* xr = x + layout.x_row_offset(r);
      const T* rr = static_cast<const T*>(p.residual) + p.residual_layout.x_row_offset(r);
#pragma unroll
      for (int k = 0; k < Cfg::kVecs; ++k) {
        const int e0 = Tile::slot_begin(k, rank);
        if (e0 >= len) continue;
        ptx::cp_async_16(ptx::shared_address(stage_x(s) + e0), xr + e0);
        ptx::cp_async_16(ptx::shared_address(stage_x(s) + len + e0), rr + e0);
      }
    }
    ptx::cp_async_commit();
  };
  int stage = 0;  // kStages: the stage of `row`
  if constexpr (kStages > 0) {
#pragma unroll
    for (int i = 0; i < kStages - 1; ++i) issue(row + i * step, i);
  }
  // The loop bound is uniform over the group that owns a row, so the group's reductions (and a
  // block's __syncthreads) are reached by all of its threads.
  // One row: x's at xr, y's at y_row() (global memory, or the row's place in a Staged stage; y's
  // row offset is taken where the row is stored, as the loop body took it before it was a lambda).
  const auto process = [&](int64_t row, const T* xr, auto y_row) {
    [[maybe_unused]] const RaggedRow ragged = kRagged ? ragged_row(xr, len) : RaggedRow{0, 0};
    Tile tile;
    // The affine vectors are the norm kind's, where Out is T (the softmax kind's ragged stores
    // pass null ones the compiler sees).
    const auto store = [&](auto affine, auto f) {
      if constexpr (kRagged) {
        constexpr bool kAffine = kKind == RowKind::kNorm;
        store_tile_vectors<kLean, decltype(affine)::value, true>(
            tile, y_row(), 0, len, rank, kAffine ? static_cast<const Out*>(p.weight) : nullptr,
            kAffine ? static_cast<const Out*>(p.bias) : nullptr, f, ragged);
      } else {
        tile.template store<kLean, decltype(affine)::value>(y_row(), layout.y_elem_stride, 0, len,
                                                            rank, kVector, static_cast<const Out*>(p.weight),
                                                            p.weight_stride, static_cast<const Out*>(p.bias),
                                                            p.bias_stride, f);
      }
    };
    [[maybe_unused]] Acc first = Acc(0);
    if constexpr (kStages > 0) {
      issue(row + (kStages - 1) * step, stage == 0 ? kStages - 1 : stage - 1);  // the stage read last iteration
      ptx::cp_async_wait<kStages - 1>();  // this row's group has landed
      typename Tile::Vectors staged;
      staged.template load<LoadPolicy::kShared>(stage_x(stage), len, rank);
      tile.unpack(staged, len, rank, tile_fill<kKind, Acc>());
    } else if constexpr (kPrefetch) {
      tile.unpack(next, len, rank, tile_fill<kKind, Acc>());
      first = next_first;
      if (row + step < layout.num_rows) prefetch(row + step);
    } else if constexpr (kRagged) {
      tile.template load_ragged<kStaged ? LoadPolicy::kShared : LoadPolicy::kReadOnly>(xr, ragged, len, rank,
                                                                                 tile_fill<kKind, Acc>());
    } else {
      tile.load(xr, layout.x_elem_stride, 0, len, rank, kVector, tile_fill<kKind, Acc>());
    }
    if constexpr (kKind == RowKind::kSoftmax) {
      if (!p.log) {  // uniform over the grid: every thread of a group takes the same path
        const Acc inv_sum = softmax_exponentiate<kLean>(tile, len, rank, reduce);
        const auto scaled = [inv_sum](Acc e, Acc, Acc) { return e * inv_sum; };
        // Not `store` for aligned rows: its affine pointers are p's (null at run time here), and
        // the literal nulls leave the aligned kernels without the per-slot tests (ptxas: one
        // float64 tile spilled 24 bytes with them).
        if constexpr (kRagged) {
          store(std::integral_constant<Affine, Affine::kAny>{}, scaled);
        } else {
          tile.template store<kLean>(y_row(), layout.y_elem_stride, 0, len, rank, kVector, nullptr,
                                     1, nullptr, 1, scaled);
        }
        return;
      }
    }
    RowFrame<Acc> frame;
    [[maybe_unused]] SumPair<Acc> prologue_sums{Acc(0), Acc(0)};  // kOrigin && kResidual: add_residual_vectors'
    if constexpr (kResidual) {
      static_assert(kKind == RowKind::kNorm, "the residual sum is a norm-kind prologue");
      const RowLayout& rl = p.residual_layout;
      const T* rr = static_cast<const T*>(p.residual) + rl.x_row_offset(row);
      T* sum = static_cast<T*>(p.sum);
      if constexpr (kLean) {
        T* sr = sum + rl.y_row_offset(row);
        // kStages: the residual's row as this thread copied it into the row's stage.
        constexpr LoadPolicy kFrom = kStages > 0 ? LoadPolicy::kShared : LoadPolicy::kReadOnly;
        const T* from = kStages > 0 ? stage_x(stage) + len : rr;
        if (!kOrigin || p.center) prologue_sums = add_residual_vectors<true, kFrom>(tile, from, sr, len, rank);
        else prologue_sums = add_residual_vectors<false, kFrom>(tile, from, sr, len, rank);  // rms_norm: x^2 only
      } else {
        tile.add_rounded(rr, rl.x_elem_stride, 0, len, rank, kVector);
        tile.store(sum + rl.y_row_offset(row), rl.y_elem_stride, 0, len, rank, kVector, nullptr, 1, nullptr, 1,
                   [](Acc v, Acc, Acc) { return v; });
      }
      // The frame from the sum's first element, as row_frame would read it from a stored sum.
      const Acc first_sum = len > 0 ? cast_value<Acc>(cast_value<T>(cast_value<Acc>(xr[0]) + cast_value<Acc>(rr[0])))
                                    : Acc(0);
      frame = make_row_frame(first_sum, p.center);
    } else if constexpr (kPrefetch) {
      frame = make_row_frame(first, p.center);
    } else {
      frame = row_frame(xr, len, p.center);
    }
    RowStats<Acc> stats;
    if constexpr (kOnePass) {
      typename RowGroup<SumPair<Acc>, kThreadsPerRow>::Synced reduce_pair{pair_temp};
      bool done = false;
      if constexpr (kOrigin && kResidual) {  // the prologue's sums; as norm_partial_one_pass's origin pass
        if (p.center) {
          done = origin_stats(reduce_pair(prologue_sums, PairSumOp{}), len, frame, stats);
        } else {
          const Acc s2 = reduce(prologue_sums.b, SumOp{});
          const Acc inv = frame.inv_scale;
          stats = {Acc(0), s2 * inv * inv};
          done = s2 - s2 == Acc(0);  // else the scaled pass, as norm_partial_one_pass
        }
      }
      if (!done) stats = norm_partial_one_pass<kOrigin && !kResidual>(tile, len, rank, frame, p.center, reduce, reduce_pair);
    } else {
      stats = row_partial<kKind, kLean, kFold>(tile, len, rank, frame, p.center, reduce);
    }
    if constexpr (kKind == RowKind::kNorm) {
      stats = norm_row_stats(stats, frame, len, p.eps);
      if (rank == 0) write_row_stats(p, row, stats, frame.shift);
    }
    const RowOutput<kKind, Acc, kFold> out(stats, frame.shift, p.log);
    if constexpr (kAffinePaths) {  // uniform branches: p is the same for every thread
      if (p.center && p.weight != nullptr && p.bias != nullptr) {
        if constexpr (kOrigin && kFold) {
          if (frame.shift == Acc(0)) {  // RowOutput's value without the subtraction of the zero shift
            const Acc rstd = stats.b, centered_mean = out.centered_mean;
            store(std::integral_constant<Affine, Affine::kWeightBias>{},
                  [=](Acc v, Acc w, Acc b) { return fma(fma(v, rstd, -centered_mean), w, b); });
            return;
          }
        }
        store(std::integral_constant<Affine, Affine::kWeightBias>{}, out);
        return;
      }
      if (!p.center && p.weight != nullptr && p.bias == nullptr) {
        // rms_norm: RowOutput's value with shift, mean and bias 0 (signed zeros aside).
        const Acc rstd = stats.b;
        store(std::integral_constant<Affine, Affine::kWeight>{}, [rstd](Acc v, Acc w, Acc) { return v * rstd * w; });
        return;
      }
    }
    store(std::integral_constant<Affine, Affine::kAny>{}, out);
  };
  if constexpr (kStaged) {
    Staged::template run<T, Cfg>(layout, x, y, len, row_stage_smem, process);
  } else {
    for (; row < layout.num_rows; row += step, stage = stage + 1 < kStages ? stage + 1 : 0) {
      process(row, x + layout.x_row_offset(row), [&] { return y + layout.y_row_offset(row); });
    }
  }
}

// Blocks to launch for `num_rows` rows: one per group of rows; for a prefetching kernel
// (row_on_chip_prefetches) at most one wave (resident_per_sm blocks on each of sm_count SMs),
// every group then walking its rows with the next one in flight (a wider grid would give most
// groups a single row: nothing to prefetch).
template <class Cfg>
inline int64_t row_on_chip_blocks(int64_t num_rows, bool prefetches, int resident_per_sm, int sm_count) {
  const int64_t groups = (num_rows + Cfg::kRowsPerBlock - 1) / Cfg::kRowsPerBlock;
  if (!prefetches) return groups;
  const int64_t wave = int64_t(resident_per_sm > 0 ? resident_per_sm : 1) * sm_count;
  return groups < wave ? groups : wave;
}

// ---------------------------------------------------------------------------------------------
// Split rows: chunk statistics -> per-row combine -> normalize. Chunk c of a row covers elements
// [c * kCapacity, ...) of it; grid = (chunks, rows), the rows in a grid-stride loop over y.
// kVector as for row_on_chip_kernel.

// Pass 1: partial[row * chunks + c] = the partial of chunk c (chunk_partial_of: the norm kind's
// moments about the chunk's own anchor, chunk_moments.cuh).
template <class T, RowKind kKind, int kThreads, int kVecs, bool kVector>
__global__ void __launch_bounds__(kThreads)
chunk_stats_kernel(NormParams p, ChunkPartial<kKind, acc_t<T>>* partial) {
  using Tile = RowTile<T, kThreads, kVecs>;
  using Acc = typename Tile::Acc;
  using Group = RowGroup<Acc, kThreads>;
  using PairGroup = RowGroup<SumPair<Acc>, kThreads>;
  __shared__ typename Group::TempStorage temp;
  __shared__ typename PairGroup::TempStorage pair_temp;  // the norm kind's
  const RowLayout& layout = p.layout;
  const int64_t chunks = gridDim.x, begin = int64_t(blockIdx.x) * Tile::kCapacity;
  const int len = static_cast<int>(min_of<int64_t>(Tile::kCapacity, layout.row_len - begin));
  for (int64_t row = blockIdx.y; row < layout.num_rows; row += gridDim.y) {
    const T* xr = static_cast<const T*>(p.x) + layout.x_row_offset(row);
    Tile tile;
    tile.load(xr, layout.x_elem_stride, begin, len, threadIdx.x, kVector, tile_fill<kKind, Acc>());
    const RowFrame<Acc> frame = chunk_frame(xr, layout.x_elem_stride, layout.row_len, begin, len, p.center);
    typename Group::Synced reduce{temp};
    typename PairGroup::Synced reduce_pair{pair_temp};
    const ChunkPartial<kKind, Acc> s =
        chunk_partial_of<kKind, false>(tile, len, threadIdx.x, frame, p.center, reduce, reduce_pair);
    if (threadIdx.x == 0) partial[row * chunks + blockIdx.x] = s;
  }
}

// Pass 2: one block per row folds the row's `chunks` partials (thread t takes chunks t, t + kThreads,
// ... in order, then a fixed-shape block reduction: deterministic) into row_stats[row] (softmax:
// (max, sum); norm: (mean - shift, rstd) and row_shift[row]), and writes the statistics outputs.
//   softmax: M = max m_c, S = sum s_c * exp(m_c - M)   (chunks of -inf carry s_c = 0)
//   norm:    combine_chunk_moments (chunk_moments.cuh), about chunk 0's anchor or the row's centre
template <class T, RowKind kKind, int kThreads>
__global__ void __launch_bounds__(kThreads)
row_combine_kernel(NormParams p, const ChunkPartial<kKind, acc_t<T>>* partial, int64_t chunks, int64_t chunk_len,
                   RowStats<acc_t<T>>* row_stats, acc_t<T>* row_shift) {
  using Acc = acc_t<T>;
  using Group = RowGroup<Acc, kThreads>;
  __shared__ typename Group::TempStorage temp;
  const int64_t n = p.layout.row_len;
  for (int64_t row = blockIdx.x; row < p.layout.num_rows; row += gridDim.x) {
    const ChunkPartial<kKind, Acc>* part = partial + row * chunks;
    RowStats<Acc> out;
    if constexpr (kKind == RowKind::kSoftmax) {
      Acc m = -std::numeric_limits<Acc>::infinity();
      for (int64_t c = threadIdx.x; c < chunks; c += kThreads) m = nan_max(m, part[c].a);
      m = Group::all(m, NanMaxOp{}, temp);
      Acc s = Acc(0);
      for (int64_t c = threadIdx.x; c < chunks; c += kThreads) {
        if (part[c].b != Acc(0)) s += part[c].b * exp_of(part[c].a - m);
      }
      s = Group::all(s, SumOp{}, temp);
      out = {m, s};
    } else {
      const auto count = [=](int64_t c) { return Acc(min_of<int64_t>(chunk_len, n - c * chunk_len)); };
      const T* xr = static_cast<const T*>(p.x) + p.layout.x_row_offset(row);
      RowFrame<Acc> frame = row_frame(xr, n, p.center);  // the row's scale; x is not yet written (out= x)
      frame.shift = part[0].shift;
      const RowStats<Acc> moments = combine_chunk_moments<kChunkCentred<T>>(frame, n, p.center, [&](auto f) {
        Acc acc = Acc(0);
        for (int64_t c = threadIdx.x; c < chunks; c += kThreads) acc += f(count(c), part[c]);
        return Group::all(acc, SumOp{}, temp);
      });
      out = norm_row_stats(moments, frame, n, p.eps);
      if (threadIdx.x == 0) {
        write_row_stats(p, row, out, frame.shift);
        row_shift[row] = frame.shift;
      }
    }
    if (threadIdx.x == 0) row_stats[row] = out;
  }
}

// Pass 3: reload the chunk and write it with the row's statistics. Nothing is reduced here, so the
// element-wise path streams element by element instead of filling a tile (which, with no reduction
// to separate loads from stores, the compiler would schedule into hundreds of live registers).
// The shift comes from pass 2, not from x: with out= x, chunk 0 of the row may already be written.
template <class T, RowKind kKind, int kThreads, int kVecs, bool kVector>
__global__ void __launch_bounds__(kThreads)
chunk_apply_kernel(NormParams p, const RowStats<acc_t<T>>* row_stats, const acc_t<T>* row_shift) {
  using Tile = RowTile<T, kThreads, kVecs>;
  using Acc = typename Tile::Acc;
  const RowLayout& layout = p.layout;
  const int64_t begin = int64_t(blockIdx.x) * Tile::kCapacity;
  const int len = static_cast<int>(min_of<int64_t>(Tile::kCapacity, layout.row_len - begin));
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  for (int64_t row = blockIdx.y; row < layout.num_rows; row += gridDim.y) {
    const T* xr = static_cast<const T*>(p.x) + layout.x_row_offset(row);
    T* yr = static_cast<T*>(p.y) + layout.y_row_offset(row);
    const Acc shift = kKind == RowKind::kNorm ? row_shift[row] : Acc(0);
    const RowOutput<kKind, Acc> out(row_stats[row], shift, p.log);
    if constexpr (kVector) {
      Tile tile;
      tile.load(xr, 1, begin, len, threadIdx.x, true, tile_fill<kKind, Acc>());
      tile.store(yr, 1, begin, len, threadIdx.x, true, weight, 1, bias, 1, out);
    } else {
#pragma unroll 1
      for (int i = threadIdx.x; i < len; i += kThreads) {
        const int64_t e = begin + i;
        const Acc w = weight != nullptr ? cast_value<Acc>(weight[e * p.weight_stride]) : Acc(1);
        const Acc b = bias != nullptr ? cast_value<Acc>(bias[e * p.bias_stride]) : Acc(0);
        yr[e * layout.y_elem_stride] = cast_value<T>(out(cast_value<Acc>(xr[e * layout.x_elem_stride]), w, b));
      }
    }
  }
}

}  // namespace norms
}  // namespace gpuprims
