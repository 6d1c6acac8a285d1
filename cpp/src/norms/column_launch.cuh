#pragma once
// The block shapes of the columns kernels (column_rows.cuh, column_backward.cuh, column_staged.cuh)
// by row length, and their launch -- staged or in registers: shared by the forward
// (variant_columns.cu) and the backward (variant_backward_columns.cu).
#include <algorithm>
#include <cstdint>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/norms/column_rows.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace norms {

// A block of kGroups groups of 32 adjacent rows, kSlices warps a row, kHeld elements a thread held
// in registers (0: rows read again on every pass).
template <int kSlices_, int kGroups_, int kHeld_>
struct ColumnBlock {
  static constexpr int kSlices = kSlices_;
  static constexpr int kGroups = kGroups_;
  static constexpr int kHeld = kHeld_;
};

// The block's shape by row length: each thread holds up to kHeld elements in registers (one read),
// as few warps a row as that allows (each exchange costs two barriers and a loop over the warps):
// rows of up to kHeld elements a thread each (no exchange), 8 groups of 32 rows a block; up to 2,
// 4, 8, 16, 32 x kHeld elements 2, 4, 8, 16, 32 warps a row (float64: at most 16), 256 threads a
// block or more. Longer rows stream (two reads) through 32 warps (float64: 16, under 128
// registers; 64 spilled), so that few groups (axis 0 of a wide matrix: 4096 columns are 128
// blocks) still keep 32 warps an SM loading, and a block reads its 32 rows soon enough for pass 2
// to find them in L2. Session 48, H200, % of copy (forward, kHeld 16): rows of 21 float32 elements
// read 18.1 with one 8-warp group, two reads (run 2), 30.4 with two 4-warp groups, two reads
// (run 3), 26.2 held (run 4), 41.5 with this table (run 5); layer_norm of 96 elements 26.1 on 16
// warps, held (run 4), 50.0 (run 5). run(ColumnBlock<...>{}) for the shape of rows of n elements.
// The most warps a row: 32 (float64: 16, under its 128-register bound).
template <class T>
constexpr int kColumnWideSlices = sizeof(T) == 8 ? 16 : 32;
// The longest rows a held shape takes (kHeld > 0); longer ones stream.
template <class T, int kHeld>
constexpr int64_t kColumnHeldLen = int64_t(kColumnWideSlices<T>) * kHeld;

template <class T, int kHeld, class Run>
Status run_column_block(int64_t n, Run run) {
  constexpr int kWide = kColumnWideSlices<T>;
  if (n <= 1 * kHeld) return run(ColumnBlock<1, 8, kHeld>{});
  if (n <= 2 * kHeld) return run(ColumnBlock<2, 4, kHeld>{});
  if (n <= 4 * kHeld) return run(ColumnBlock<4, 2, kHeld>{});
  if (n <= 8 * kHeld) return run(ColumnBlock<8, 1, kHeld>{});
  if (n <= 16 * kHeld) return run(ColumnBlock<16, 1, kHeld>{});
  if (n <= kColumnHeldLen<T, kHeld>) return run(ColumnBlock<kWide, 1, kHeld>{});
  return run(ColumnBlock<kWide, 1, 0>{});
}

// One launch of a columns kernel taking (Params, ColumnShape) with Block's shape, `blocks` blocks
// and `smem` bytes of dynamic shared memory.
template <class Block, class Params>
Status launch_column_grid(const void* kernel, const Params& params, const ColumnShape& shape, int64_t blocks,
                          int64_t smem, const char* op, cudaStream_t stream) {
  Params p = params;
  ColumnShape s = shape;
  void* args[] = {&p, &s};
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(kernel, dim3(grid_for(blocks)),
                                           dim3(kColumnLanes, Block::kSlices, Block::kGroups), args, size_t(smem), stream));
  return check_launch(op, stream);
}

// Rows of more elements than this are staged where the layout allows (column_staged.cuh); shorter
// ones stay in registers. Session 49 run 2 (H200, % of copy, register kernels of session 48 run 5
// -> staged): softmax over 21 float32 channels 41.5 -> 40.6, bfloat16 21.5 -> 19.4, its backward
// 65.8 -> 43.9; 16 channels 46.1 -> 42.2; layer_norm over 3 channels 18.2 -> 9.8 (a step of so few
// bytes is mostly barriers); from 64 elements on it gained: rms_norm 64 float32 68.4 -> 69.7,
// bfloat16 23.9 -> 30.8, layer_norm 96 float32 50.0 -> 57.3, bfloat16 21.3 -> 25.4, log_softmax
// 150 float16 17.5 -> 27.1 (backward 14.9 -> 26.8), softmax 256 float32 40.8 -> 70.7.
constexpr int64_t kColumnStagedMinLen = 32;

// Whether Block's shape has a staged kernel (column_staged.cuh): rows the registers would hold,
// some of them longer than kColumnStagedMinLen (a shape for shorter rows only would never launch one).
template <class Block>
constexpr bool column_block_staged() {
  return Block::kHeld > 0 && Block::kSlices * Block::kHeld > kColumnStagedMinLen;
}

// Which kernel a columns launch of Block's shape for `l` (a NormLaunch or NormBackwardLaunch) runs,
// on how many blocks, with how many bytes of dynamic shared memory: `staged_kernel` (null where the
// layout cannot be staged or the shape has no staged kernel) with `staged_smem` bytes on a grid of
// the blocks resident at once (each block's next step is copied while it works on this one) where
// the device's shared memory per block holds them; otherwise `register_kernel`, a block per step of
// Block::kGroups groups, or with `resident` the blocks resident at once, each looping over steps
// (the norm kind's backward: a partial row of column sums per group of the grid).
struct ColumnLaunchPlan {
  const void* kernel = nullptr;
  int64_t blocks = 0;
  int64_t smem = 0;
};

template <class Block, class Launch>
Status plan_column_block(const Launch& l, const ColumnShape& shape, const void* staged_kernel, int64_t staged_smem,
                         const void* register_kernel, bool resident, ColumnLaunchPlan* plan) {
  const char* op = norm_op_name(l.op);
  const int64_t steps = (shape.groups + Block::kGroups - 1) / Block::kGroups;
  int optin = 0;
  if (staged_kernel != nullptr) GPUPRIMS_TRY(shared_memory_per_block_optin(l.device, &optin));
  const bool staged = staged_kernel != nullptr && staged_smem <= optin;
  *plan = {staged ? staged_kernel : register_kernel, steps, staged ? staged_smem : 0};
  if (!staged && !resident) return Status::ok();
  const int threads = kColumnLanes * Block::kSlices * Block::kGroups;
  if (staged) {
    GPUPRIMS_CUDA_CHECK(op, cudaFuncSetAttribute(staged_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 int(staged_smem)));
  }
  int per_sm = 0;
  GPUPRIMS_CUDA_CHECK(op, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, plan->kernel, threads,
                                                                          size_t(plan->smem)));
  plan->blocks = std::min<int64_t>(steps, int64_t(std::max(per_sm, 1)) * l.sm_count);
  return Status::ok();
}

// Launches `plan` for `l` with `params` (l's, or a copy carrying the backward's partial buffers).
template <class Block, class Launch, class Params>
Status launch_column_plan(const Launch& l, const Params& params, const ColumnShape& shape, const ColumnLaunchPlan& plan) {
  return launch_column_grid<Block>(plan.kernel, params, shape, plan.blocks, plan.smem, norm_op_name(l.op), l.stream);
}

// A columns launch of Block's shape (plan_column_block, no resident register grid) with l's params.
template <class Block, class Launch>
Status launch_column_block(const Launch& l, const ColumnShape& shape, const void* staged_kernel, int64_t staged_smem,
                           const void* register_kernel) {
  ColumnLaunchPlan plan;
  GPUPRIMS_TRY(plan_column_block<Block>(l, shape, staged_kernel, staged_smem, register_kernel, false, &plan));
  return launch_column_plan<Block>(l, l.params, shape, plan);
}

}  // namespace norms
}  // namespace gpuprims
