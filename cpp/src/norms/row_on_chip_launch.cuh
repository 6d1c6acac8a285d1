#pragma once
// The row_on_chip launch and its tile shapes, shared by variant_row_on_chip.cu (the forward ops) and
// variant_add_norm.cu (the same kernels with the residual-add prologue).
#include <string>

#include "gpuprims/norms/row_on_chip.cuh"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace norms {

template <class T, RowKind kKind, bool kResidual, int kThreadsPerRow, int kRowsPerBlock, int kVecs>
Status launch_row_on_chip(const NormLaunch& l) {
  const void* kernel = l.params.vec_ok
      ? reinterpret_cast<const void*>(
            &row_on_chip_kernel<T, kKind, kThreadsPerRow, kRowsPerBlock, kVecs, true, kResidual>)
      : reinterpret_cast<const void*>(
            &row_on_chip_kernel<T, kKind, kThreadsPerRow, kRowsPerBlock, kVecs, false, kResidual>);
  const int64_t groups = ceil_div<int64_t>(l.params.layout.num_rows, kRowsPerBlock);
  NormParams params = l.params;
  void* args[] = {&params};
  const char* op = norm_op_name(l.op);
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(kernel, dim3(grid_for(groups)), dim3(kThreadsPerRow * kRowsPerBlock),
                                           args, 0, l.stream));
  return check_launch(op, l.stream);
}

// Four tile shapes, the smallest that holds the row. Each thread holds a fixed number of values
// whatever the dtype (16-byte vectors: 4 fp32, 8 fp16/bf16, 2 fp64), so capacities are in elements:
//   a warp per row, 4 rows per block, 16 values per thread:    512 elements
//   a block of 128 threads, 32 values per thread:             4096 elements (16 float64 values, 2048)
//   a block of 256 threads, 32 values per thread:             8192 elements (at most 128 registers
//                                                              a thread: 16 float64 values, 4096)
//   a block of 1024 threads, 16 values per thread:           16384 elements (64 registers a thread:
//                                                              8 float64 values, 8192)
// A warp per short row keeps every thread busy without block-wide synchronization. The bytes a
// thread has in flight are its *filled* slots, while its registers are set by the tile's size: a
// 4096-element bf16 row in the 256-thread tile fills half of every thread's slots (32 bytes of
// loads a thread for 32 registers of values), so rows up to 4096 elements get a 128-thread tile
// that is full (64 bytes of bf16, 128 of fp32 a thread) and twice the blocks per SM to overlap one
// block's reductions with another's loads. Longer rows go to split_row.
// kResidual: add_layer_norm / add_rms_norm, whose rows must fit (row_on_chip_capacity).
template <class T, RowKind kKind, bool kResidual>
Status run_row_on_chip(const NormLaunch& l) {
  constexpr int kLanes = Vec16<T>::kLanes;
  const int64_t n = l.params.layout.row_len;
  if (n <= 32 * 16) return launch_row_on_chip<T, kKind, kResidual, 32, 4, 16 / kLanes>(l);
  constexpr int kMidValues = sizeof(T) == 8 ? 16 : 32;
  if (n <= 128 * kMidValues) return launch_row_on_chip<T, kKind, kResidual, 128, 1, kMidValues / kLanes>(l);
  if (n <= 256 * kMidValues) return launch_row_on_chip<T, kKind, kResidual, 256, 1, kMidValues / kLanes>(l);
  constexpr int kBigValues = sizeof(T) == 8 ? 8 : 16;
  static_assert(1024 * kBigValues == kRowOnChipCapacity / (sizeof(T) == 8 ? 2 : 1), "launch.hpp's capacity");
  if (n <= 1024 * kBigValues) return launch_row_on_chip<T, kKind, kResidual, 1024, 1, kBigValues / kLanes>(l);
  if constexpr (kResidual) {
    return value_error(std::string(norm_op_name(l.op)) + ": a residual row beyond row_on_chip's capacity");
  } else {
    return norms_split_row(l);
  }
}

}  // namespace norms
}  // namespace gpuprims
