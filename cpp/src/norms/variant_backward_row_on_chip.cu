// Backward row_on_chip: dy and the saved row held in registers, dx in one pass, dweight / dbias as
// per-group partial sums reduced by backward_column_sums. On the vector path, the softmax kind's
// block tiles run the lean kernel with a block per row (row_grid_shape); the norm kind's block
// tiles run the staged kernel (row_backward_staged.cuh) where staged_shape configures one and its
// stages fit the device's shared memory; the other vector-path tiles run the lean kernel
// (row_backward_lean.cuh) with a persistent grid when kLeanBackward is set.
#include "gpuprims/core/stream.hpp"
#include "gpuprims/norms/row_backward.cuh"
#include "gpuprims/norms/row_backward_lean.cuh"
#include "gpuprims/norms/row_backward_staged.cuh"
#include "gpuprims/util/math.cuh"
#include "backward_launch.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

// The one-line flip (docs/norms.md, "Backward performance"): true runs the vector path through
// row_backward_lean_kernel (row_backward_lean.cuh) with the configuration of lean_config below;
// false through row_backward_kernel, as before. The element-wise path always runs the latter.
constexpr bool kLeanBackward = true;

// The lean configuration of a tile, from the H200 run of bench/tune/norms_backward_tune.cu (run 9,
// % of copy at 16384 x 8192 / 65536 x 4096; docs/norms.md, "Backward performance"):
//   4-byte types prefetch the next row, except the 1024-thread norm tile (64-register bound:
//     prefetch spills there, 57.7 % against 86.3 % for layer_norm at 8192); column sums in
//     registers (shared memory measured 1-2 points lower).
//   2-byte types do not prefetch (bf16 softmax at 8192: 55.9 % with, 89.2 % without: the extra
//     registers halve the resident blocks); the norm kind keeps its column sums in shared memory
//     and holds twice the values in half the threads (kHalveThreads: 59.8 / 66.4 % layer_norm,
//     77.7 / 83.8 % rms_norm, against 44.6 / 52.0 and 49.8 / 57.0 before).
//   float64 (not measured): the softmax kind prefetches; the norm kind keeps its column sums in
//     shared memory without prefetch (in registers its 1024-thread tile spills 80 bytes).
template <class T, RowKind kKind, int kThreads>
constexpr bool kLeanPrefetch =
    kKind == RowKind::kSoftmax ? sizeof(T) != 2 : sizeof(T) == 4 && kThreads != 1024;
template <class T, RowKind kKind>
constexpr bool kLeanSharedColumns = kKind == RowKind::kNorm && sizeof(T) != 4;
// Block tiles (not warps) of the 2-byte norm kind run half the threads with twice the values each.
template <class T, RowKind kKind, int kRowsPerBlock>
constexpr bool kHalveThreads = sizeof(T) == 2 && kKind == RowKind::kNorm && kRowsPerBlock == 1;

template <class T, RowKind kKind, int kThreadsPerRow, int kRowsPerBlock, int kVecs>
using LeanConfig = BackwardLeanConfig<
    kHalveThreads<T, kKind, kRowsPerBlock> ? kThreadsPerRow / 2 : kThreadsPerRow, kRowsPerBlock,
    kHalveThreads<T, kKind, kRowsPerBlock> ? 2 * kVecs : kVecs, 1,
    kLeanPrefetch<T, kKind, kThreadsPerRow * kRowsPerBlock>, kLeanSharedColumns<T, kKind>>;

// The softmax kind's block tiles on the vector path (softmax / log_softmax backward have no column
// sums, so no partial rows to bound): the lean kernel without prefetch, a block per row (torch's
// grid), several resident per SM, each at its own phase of load, reduction and store. H200,
// session 16 device run 2 (bench/tune/norms_backward_tune.cu, 6 samples each; docs/norms.md,
// "Backward performance: a block per row"), against the staged kernel it replaces there:
// softmax / log_softmax fp32 16384 x 8192 0.375 / 0.372 against 0.403 / 0.406 ms (16 values a
// thread, y after dy's sum), 65536 x 4096 0.732 / 0.740 against 0.799 / 0.805 (8 values); bf16
// (16 values) 16384 x 8192 0.194 / 0.195 against 0.200 / 0.201, 65536 x 4096 0.375 / 0.375
// against 0.414 / 0.415. Values a thread for a tile of `capacity` elements (0: not configured,
// float64 keeps the persistent lean kernel) and kDeferSaved (log_softmax loads y after dy's sum).
struct RowGridShape {
  int values;
  bool defer_saved;
};
template <class T>
constexpr RowGridShape row_grid_shape(int capacity) {
  if (sizeof(T) == 8) return {0, false};
  if (sizeof(T) == 2) return {16, false};
  return capacity > 4096 ? RowGridShape{16, true} : RowGridShape{8, false};
}
template <class T, int kCapacity>
constexpr RowGridShape kRowGridShape = row_grid_shape<T>(kCapacity);
template <class T, int kCapacity>
using RowGridConfig = BackwardLeanConfig<kCapacity / kRowGridShape<T, kCapacity>.values, 1,
                                         kRowGridShape<T, kCapacity>.values / Vec16<T>::kLanes, 1, false, false,
                                         kRowGridShape<T, kCapacity>.defer_saved>;

// The one-line flip of the staged kernel (docs/norms.md, "Backward performance: staged rows"):
// true runs the norm kind's block tiles of the vector path through row_backward_staged_kernel
// where staged_shape below configures it; false leaves them to the lean kernel, as before.
constexpr bool kStagedBackward = true;

// The staged kernel's shape for a norm-kind block tile of `capacity` elements (kThreadsPerRow *
// kVecs * kLanes: rows up to 4096 or 8192): values a thread (0: no staged kernel), stages, the
// register bound in blocks per SM, kHoldRow / kFoldedOutput (row_backward_staged.cuh). From the
// H200 runs of bench/tune/norms_backward_tune.cu (% of copy, 16384 x 8192 / 65536 x 4096;
// docs/norms.md, "Backward performance: staged rows" and "... session 11"):
//   fp32: 8 values a thread (the register tile's block), two stages (93.1-97.8 at 8192); the 4096
//     tile three stages with two blocks per SM (92.6-97.1; unbounded it also runs two, at 64
//     registers: 92.0-92.4) (session 10 run 2);
//   bf16: 8192 two stages of 16 values holding g and xhat for the output pass, folded
//     (session 11 run 1: layer_norm 86.3-87.2, rms_norm 93.8-94.9 against 78.3-79.2 / 87.8-89.0
//     without; 32 values under a two-block bound 62-74), 4096 three stages of 32 values in 128
//     threads (three blocks per SM: 90.6-95.3; 16 values 84.9-91.7);
//   fp16 follows bf16; float64 (not measured) keeps the lean kernel.
struct StagedShape {
  int values, stages, min_blocks;
  bool hold = false, folded = false;
};
template <class T>
constexpr StagedShape staged_shape(int capacity) {
  const bool long_rows = capacity > 4096;
  if (sizeof(T) == 8) return {0, 0, 1};
  if (sizeof(T) == 4) return long_rows ? StagedShape{8, 2, 1} : StagedShape{8, 3, 2};
  return long_rows ? StagedShape{16, 2, 1, true, true} : StagedShape{32, 3, 1};
}
template <class T, int kCapacity>
constexpr StagedShape kStagedShape = staged_shape<T>(kCapacity);
template <class T, int kCapacity>
using StagedConfig = BackwardStagedConfig<
    kCapacity / kStagedShape<T, kCapacity>.values, kStagedShape<T, kCapacity>.values / Vec16<T>::kLanes,
    kStagedShape<T, kCapacity>.stages, kStagedShape<T, kCapacity>.min_blocks, true, kStagedShape<T, kCapacity>.folded,
    kStagedShape<T, kCapacity>.hold>;

// The grid is one wave of resident blocks (rows in a grid-stride loop), so the number of partial
// rows, and with it the column-sum work, is bounded by the device, not by the number of rows;
// with per_row_grid (softmax kind: no partial rows) a block per row group, up to the grid limit.
// smem: the kernel's dynamic shared memory.
template <RowKind kKind>
Status launch_backward(const NormBackwardLaunch& l, const void* kernel, int threads, int rows_per_block,
                       size_t smem, bool per_row_grid = false) {
  const char* op = norm_op_name(l.op);
  if (smem > 0) {
    GPUPRIMS_CUDA_CHECK(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  }
  const int64_t row_groups = ceil_div<int64_t>(l.params.dy_layout.num_rows, rows_per_block);
  int64_t blocks = grid_for(row_groups);
  if (!per_row_grid) {
    int per_sm = 0;
    GPUPRIMS_CUDA_CHECK(op, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    blocks = min_of<int64_t>(int64_t(max_of(per_sm, 1)) * l.sm_count, row_groups);
  }
  const int64_t groups = blocks * rows_per_block;
  NormBackwardParams params = l.params;
  StreamScratch scratch;
  GPUPRIMS_TRY(allocate_backward_partials(l, groups, &params, &scratch));
  void* args[] = {&params};
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(threads), args, smem,
                                           l.stream));
  GPUPRIMS_TRY(check_launch(op, l.stream));
  if (kKind == RowKind::kSoftmax) return Status::ok();
  return backward_column_sums(l, params.dweight_partial, params.dbias_partial, groups);
}

// The opt-in shared memory per block of the launch's device, queried only when a kernel needs some.
Status shared_fits(const NormBackwardLaunch& l, size_t smem, bool* fits) {
  int smem_max = 0;
  if (smem > 0) {
    GPUPRIMS_CUDA_CHECK(norm_op_name(l.op),
                        cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, l.device));
  }
  *fits = smem <= size_t(smem_max);
  return Status::ok();
}

// One tile on the vector path: the staged kernel for block tiles that staged_shape configures,
// when its stages fit the device's opt-in shared memory per block; else the lean kernel when
// flipped on and its shared memory fits (column sums of an 8192-element fp32 row: 64 KiB a
// block); else, and on the element-wise path, row_backward_kernel.
template <class T, RowKind kKind, int kThreadsPerRow, int kRowsPerBlock, int kVecs, bool kVector>
Status launch_tile(const NormBackwardLaunch& l) {
  constexpr int kThreads = kThreadsPerRow * kRowsPerBlock;
  const int64_t n = l.params.dy_layout.row_len;
  bool fits = false;
  constexpr int kCapacity = kThreadsPerRow * kVecs * Vec16<T>::kLanes;
  if constexpr (kKind == RowKind::kSoftmax && kVector && kRowsPerBlock == 1 && kRowGridShape<T, kCapacity>.values > 0) {
    using Cfg = RowGridConfig<T, kCapacity>;
    return launch_backward<kKind>(l, reinterpret_cast<const void*>(&row_backward_lean_kernel<T, kKind, Cfg>),
                                     Cfg::kThreads, 1, 0, /*per_row_grid=*/true);
  }
  if constexpr (kStagedBackward && kKind == RowKind::kNorm && kVector && kRowsPerBlock == 1 &&
                kStagedShape<T, kCapacity>.values > 0) {
    using Cfg = StagedConfig<T, kCapacity>;
    const size_t smem = backward_staged_shared_bytes<T, Cfg>(n);
    GPUPRIMS_TRY(shared_fits(l, smem, &fits));
    if (fits) {
      return launch_backward<kKind>(l, reinterpret_cast<const void*>(&row_backward_staged_kernel<T, kKind, Cfg>),
                                       Cfg::kThreads, 1, smem);
    }
  }
  if constexpr (kLeanBackward && kVector) {
    using Cfg = LeanConfig<T, kKind, kThreadsPerRow, kRowsPerBlock, kVecs>;
    const size_t smem = backward_lean_shared_bytes<acc_t<T>, Cfg>(kKind, n, l.dweight != nullptr, l.dbias != nullptr);
    GPUPRIMS_TRY(shared_fits(l, smem, &fits));
    if (fits) {
      return launch_backward<kKind>(l, reinterpret_cast<const void*>(&row_backward_lean_kernel<T, kKind, Cfg>),
                                       Cfg::kThreads, kRowsPerBlock, smem);
    }
  }
  return launch_backward<kKind>(
      l, reinterpret_cast<const void*>(&row_backward_kernel<T, kKind, kThreadsPerRow, kRowsPerBlock, kVecs, kVector>),
      kThreads, kRowsPerBlock, 0);
}

// The three tiles for kValues values per thread: a warp per row (4 rows per block), then blocks
// of kMidThreads and kBigThreads threads; longer rows run two_pass.
template <class T, RowKind kKind, int kValues, int kMidThreads, int kBigThreads, bool kVector>
Status run_tiles(const NormBackwardLaunch& l) {
  constexpr int kVecs = kValues / Vec16<T>::kLanes;
  static_assert(kVecs >= 1 && kVecs * Vec16<T>::kLanes == kValues, "whole 16-byte vectors per thread");
  const int64_t n = l.params.dy_layout.row_len;
  if (n <= 32 * kValues) return launch_tile<T, kKind, 32, 4, kVecs, kVector>(l);
  if (n <= kMidThreads * kValues) return launch_tile<T, kKind, kMidThreads, 1, kVecs, kVector>(l);
  if (n <= kBigThreads * kValues) return launch_tile<T, kKind, kBigThreads, 1, kVecs, kVector>(l);
  return norms_backward_two_pass(l);
}

// Tile shapes: two tiles are live (dy and the saved row) plus, for norms, two column accumulators
// (dweight, dbias), so 8 fp32 values each keep the thread within 64 registers while a 1024-thread
// block still holds 8192 elements; float64 values take two registers each: 4 values per thread.
//   a warp per row, 4 rows per block:   256 elements (float64: 128)
//   512 threads:                       4096 (float64: 2048)
//   1024 threads:                      8192 (float64: 4096); longer rows run two_pass.
// 2-byte types on the vector path hold 16 values (two 16-byte vectors of each input) in groups of
// half the threads (a warp up to 512, then 256 and 512 threads), with the same capacities, so the
// same rows go to two_pass: with 8, a bf16 thread had only 16 bytes of each input in flight for
// the per-thread overhead an fp32 thread spends on 32 (see docs/norms.md). Their element-wise
// path keeps 8 values: with 16, its per-element addresses spill the 512-thread norm tile.
template <class T, RowKind kKind>
Status run(const NormBackwardLaunch& l) {
  if constexpr (sizeof(T) == 2) {
    if (l.params.vec_ok) return run_tiles<T, kKind, 16, 256, 512, true>(l);
    return run_tiles<T, kKind, 8, 512, 1024, false>(l);
  } else {
    constexpr int kValues = sizeof(T) == 8 ? 4 : 8;
    return l.params.vec_ok ? run_tiles<T, kKind, kValues, 512, 1024, true>(l)
                           : run_tiles<T, kKind, kValues, 512, 1024, false>(l);
  }
}

}  // namespace

Status norms_backward_row_on_chip(const NormBackwardLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return row_kind(l.op) == RowKind::kSoftmax ? run<T, RowKind::kSoftmax>(l) : run<T, RowKind::kNorm>(l);
  });
}

}  // namespace norms
}  // namespace gpuprims
