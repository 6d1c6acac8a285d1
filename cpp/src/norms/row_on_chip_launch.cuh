#pragma once
// The row_on_chip launch and its tile shapes, shared by variant_row_on_chip.cu (the forward ops) and
// variant_add_norm.cu (the same kernels with the residual-add prologue).
#include <string>
#include <type_traits>

#include "gpuprims/norms/row_on_chip.cuh"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace norms {

// Performance step 2 (docs/norms.md): the 4096- and 8192-element tiles of float32 / float16 /
// bfloat16 prefetch each group's next row in a persistent grid and run the lean per-element path
// (BlockTile below). false: every tile runs the classic configuration of runs 7-15.
// bench/tune/norms_forward_tune.cu times both.
constexpr bool kRowOnChipTuned = false;

// The block tile for rows of up to 32 * kThreads elements (kThreads 128 or 256; float64: 16 *
// kThreads). Classic: kThreads threads with 32 values each (16 for float64). Tuned: 2 * kThreads
// threads with 16 values each, prefetching and lean, at most 64 registers (1024 resident threads
// per SM: 64 KiB of float32 / 32 KiB of bfloat16 next-row loads in flight per SM while the rows
// before them are reduced and written), except the fp16 / bf16 norm kind, which spilled 28 bytes
// at that bound and keeps 32 values per thread at 128 registers (512 threads: the same bytes in
// flight). float64 and the residual (add-norm) kernels stay classic.
template <class T, RowKind kKind, bool kResidual, int kThreads>
struct BlockTile {
  static constexpr int kLanes = Vec16<T>::kLanes;
  static constexpr bool kTuned = kRowOnChipTuned && !kResidual && sizeof(T) <= 4;
  static constexpr bool kSixteenValues = !(sizeof(T) == 2 && kKind == RowKind::kNorm);
  using Tuned = std::conditional_t<kSixteenValues,
                                   RowOnChipConfig<2 * kThreads, 1, 16 / kLanes, 1024 / (2 * kThreads), true, true>,
                                   RowOnChipConfig<kThreads, 1, 32 / kLanes, 512 / kThreads, true, true>>;
  using Classic = ClassicRowOnChip<T, kKind, kThreads, 1, (sizeof(T) == 8 ? 16 : 32) / kLanes>;
  using type = std::conditional_t<kTuned, Tuned, Classic>;
  static_assert(type::kThreads * type::kVecs * kLanes == kThreads * (sizeof(T) == 8 ? 16 : 32), "capacity");
};

// A prefetching kernel runs one persistent wave (row_on_chip_blocks); the others a block per group.
template <class T, RowKind kKind, bool kResidual, class Cfg>
Status launch_row_on_chip(const NormLaunch& l) {
  const char* op = norm_op_name(l.op);
  const bool vector = l.params.vec_ok;
  const void* kernel = vector ? reinterpret_cast<const void*>(&row_on_chip_kernel<T, kKind, Cfg, true, kResidual>)
                              : reinterpret_cast<const void*>(&row_on_chip_kernel<T, kKind, Cfg, false, kResidual>);
  const bool prefetches = vector && row_on_chip_prefetches<Cfg, true, kResidual>;
  int per_sm = 1;
  if (prefetches) {
    GPUPRIMS_CUDA_CHECK(op, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Cfg::kThreads, 0));
  }
  const int64_t blocks = row_on_chip_blocks<Cfg>(l.params.layout.num_rows, prefetches, per_sm, l.sm_count);
  NormParams params = l.params;
  void* args[] = {&params};
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(kernel, dim3(grid_for(blocks)), dim3(Cfg::kThreads), args, 0, l.stream));
  return check_launch(op, l.stream);
}

// Four tile shapes, the smallest that holds the row. Each thread holds a fixed number of values
// whatever the dtype (16-byte vectors: 4 fp32, 8 fp16/bf16, 2 fp64), so capacities are in elements:
//   a warp per row, 4 rows per block, 16 values per thread:    512 elements
//   a block tile (BlockTile) for up to 4096 elements (float64 2048) and one for up to 8192 (4096)
//   a block of 1024 threads, 16 values per thread:           16384 elements (64 registers a thread:
//                                                              8 float64 values, 8192)
// A warp per short row keeps every thread busy without block-wide synchronization. The bytes a
// thread has in flight are its *filled* slots, while its registers are set by the tile's size: a
// 4096-element bf16 row in the 8192-element tile fills half of every thread's slots, so rows up to
// 4096 elements get a tile half as wide that is full, and twice the blocks per SM to overlap one
// block's reductions with another's loads. Longer rows go to split_row.
// kResidual: add_layer_norm / add_rms_norm, whose rows must fit (row_on_chip_capacity).
template <class T, RowKind kKind, bool kResidual>
Status run_row_on_chip(const NormLaunch& l) {
  constexpr int kLanes = Vec16<T>::kLanes;
  const int64_t n = l.params.layout.row_len;
  if (n <= 32 * 16) {
    return launch_row_on_chip<T, kKind, kResidual, ClassicRowOnChip<T, kKind, 32, 4, 16 / kLanes>>(l);
  }
  constexpr int kMidValues = sizeof(T) == 8 ? 16 : 32;
  if (n <= 128 * kMidValues) {
    return launch_row_on_chip<T, kKind, kResidual, typename BlockTile<T, kKind, kResidual, 128>::type>(l);
  }
  if (n <= 256 * kMidValues) {
    return launch_row_on_chip<T, kKind, kResidual, typename BlockTile<T, kKind, kResidual, 256>::type>(l);
  }
  constexpr int kBigValues = sizeof(T) == 8 ? 8 : 16;
  static_assert(1024 * kBigValues == kRowOnChipCapacity / (sizeof(T) == 8 ? 2 : 1), "launch.hpp's capacity");
  if (n <= 1024 * kBigValues) {
    return launch_row_on_chip<T, kKind, kResidual, ClassicRowOnChip<T, kKind, 1024, 1, kBigValues / kLanes>>(l);
  }
  if constexpr (kResidual) {
    return value_error(std::string(norm_op_name(l.op)) + ": a residual row beyond row_on_chip's capacity");
  } else {
    return norms_split_row(l);
  }
}

}  // namespace norms
}  // namespace gpuprims
