#pragma once
// The block shapes of the columns kernels (column_rows.cuh, column_backward.cuh, column_staged.cuh)
// by row length, and their launch -- staged or in registers: shared by the forward
// (variant_columns.cu) and the backward (variant_backward_columns.cu).
#include <algorithm>
#include <cstdint>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/norms/column_staged.cuh"
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

// A columns launch: its kernel, blocks and bytes of dynamic shared memory.
struct ColumnLaunchPlan {
  const void* kernel = nullptr;
  int64_t blocks = 0;
  int64_t smem = 0;
};

// The blocks of Block's shape resident at once, each looping over steps (kernel with smem bytes of
// dynamic shared memory, which the device's shared memory per block must hold): the staged kernels
// (each block's next step is copied while it works on this one) and the norm kind's backward (a
// partial row of column sums per group of the grid).
template <class Block, class Launch>
Status plan_column_resident(const Launch& l, const ColumnShape& shape, const void* kernel, int64_t smem,
                            ColumnLaunchPlan* plan) {
  const char* op = norm_op_name(l.op);
  const int64_t steps = (shape.groups + Block::kGroups - 1) / Block::kGroups;
  const int threads = kColumnLanes * Block::kSlices * Block::kGroups;
  if (smem > 0) {
    GPUPRIMS_CUDA_CHECK(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  }
  int per_sm = 0;
  GPUPRIMS_CUDA_CHECK(op, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, size_t(smem)));
  *plan = {kernel, std::min<int64_t>(steps, int64_t(std::max(per_sm, 1)) * l.sm_count), smem};
  return Status::ok();
}

// Whether the device's shared memory per block holds a staged launch's `smem` bytes of stages.
inline Status column_stages_fit(int device, int64_t smem, bool* fit) {
  int optin = 0;
  GPUPRIMS_TRY(shared_memory_per_block_optin(device, &optin));
  *fit = smem <= optin;
  return Status::ok();
}

// The norm kind's backward launch of Block's shape: `staged_kernel` (null where the layout cannot be
// staged or the shape has no staged kernel) with `staged_smem` bytes where the device's shared
// memory per block holds them, otherwise `register_kernel`; a resident grid either way.
template <class Block, class Launch>
Status plan_column_block(const Launch& l, const ColumnShape& shape, const void* staged_kernel, int64_t staged_smem,
                         const void* register_kernel, ColumnLaunchPlan* plan) {
  bool fit = false;
  if (staged_kernel != nullptr) GPUPRIMS_TRY(column_stages_fit(l.device, staged_smem, &fit));
  if (fit) return plan_column_resident<Block>(l, shape, staged_kernel, staged_smem, plan);
  return plan_column_resident<Block>(l, shape, register_kernel, 0, plan);
}

// Launches `plan` for `l` with `params` (l's, or a copy carrying the backward's partial buffers).
template <class Block, class Launch, class Params>
Status launch_column_plan(const Launch& l, const Params& params, const ColumnShape& shape, const ColumnLaunchPlan& plan) {
  return launch_column_grid<Block>(plan.kernel, params, shape, plan.blocks, plan.smem, norm_op_name(l.op), l.stream);
}

// A register kernel of Block's shape with l's params: a block per step of Block::kGroups groups.
template <class Block, class Launch>
Status launch_column_registers(const Launch& l, const ColumnShape& shape, const void* kernel) {
  const int64_t steps = (shape.groups + Block::kGroups - 1) / Block::kGroups;
  return launch_column_plan<Block>(l, l.params, shape, ColumnLaunchPlan{kernel, steps, 0});
}

// Elements of a row a thread takes in the staged kernels of the forward and the softmax kind's
// backward: their rows are in the tile, not in registers, so they split a row among fewer warps than
// the register kernels (which hold 16 elements a thread forward, 8 backward): fewer threads repeat
// a step's per-row work (the row's offsets, its frame, the exchanges, the barriers) for the same
// elements. ncu, session 51 run 1 (H200): log_softmax_backward of 150 float16 channels on 32 warps
// of 5 elements issued 0.75 warp instructions a cycle per scheduler (SM 74 % busy) with DRAM 23 %
// busy -- bound by instructions, not bytes (run 2, on 8 warps of 19: 101 against 206 µs, still
// 0.79 a cycle).
// Session 51 run 2 (H200, the strided-axis probes, % of copy, 8 / 16 a thread -> 32): the forward
// log_softmax of 150 float16 channels 27.9 -> 41.2 (2.25x torch), ConvNeXt's layer_norm 57.2 ->
// 65.0 (bfloat16 25.3 -> 30.4), rms_norm of 64 float32 channels 69.3 -> 75.5 (bfloat16 30.6 ->
// 34.7), softmax of 64 channels, 32 wide 33.2 -> 44.9, of 256 channels 72.1 -> 78.3; the backward
// log_softmax of 150 float16 channels 26.7 -> 40.8 with 16 -> 56.3 with 32 (0.60x -> 1.26x torch
// autograd). The staged rows are those the register shapes hold (the fallback where shared memory
// cannot hold the stages), so at this share they take at most half the warps.
template <class T>
constexpr int kColumnStagedShare = sizeof(T) == 8 ? 16 : 32;

// Runs the staged kernel of the shape kColumnStagedShare gives rows of n elements, for rows longer
// than kColumnStagedMinLen and up to kMaxLen (the caller's register shapes' held length):
// kernel_of(block) the kernel of that shape, staging kArrays arrays, on the blocks resident at once.
// *launched stays false for other rows and where the device's shared memory per block cannot hold
// the stages: the caller runs its register kernels.
template <class T, int64_t kMaxLen, int kArrays, class Launch, class KernelOf>
Status launch_column_staged(const Launch& l, const ColumnShape& shape, int64_t n, KernelOf kernel_of, bool* launched) {
  if (n <= kColumnStagedMinLen || n > kMaxLen) return Status::ok();
  return run_column_block<T, kColumnStagedShare<T>>(n, [&](auto block) -> Status {
    using B = decltype(block);
    // Shapes for shorter or longer rows only are never launched here
    if constexpr (column_block_staged<B>() && B::kSlices * B::kHeld / 2 < kMaxLen) {
      const int64_t smem = column_staged_bytes<T, B::kGroups, kArrays>(n);
      bool fit = false;
      GPUPRIMS_TRY(column_stages_fit(l.device, smem, &fit));
      if (!fit) return Status::ok();
      ColumnLaunchPlan plan;
      GPUPRIMS_TRY(plan_column_resident<B>(l, shape, kernel_of(block), smem, &plan));
      *launched = true;
      return launch_column_plan<B>(l, l.params, shape, plan);
    }
    return Status::ok();
  });
}

}  // namespace norms
}  // namespace gpuprims
