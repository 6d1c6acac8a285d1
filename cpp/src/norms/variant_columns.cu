// columns: rows that lie side by side (column_rows.cuh); row_on_chip for every other layout.
#include "gpuprims/norms/column_rows.cuh"
#include "launch.hpp"
#include "layout.hpp"

namespace gpuprims {
namespace norms {

namespace {

// The block's shape by row length: each thread holds up to kColumnHeld elements in registers (one
// read), as few warps a row as that allows (each exchange costs two barriers and a loop over the
// warps): rows of up to 16 elements a thread each (no exchange), 8 groups of 32 rows a block; up to
// 32, 64, 128, 256, 512 elements 2, 4, 8, 16, 32 warps a row (float64 half the lengths), 256
// threads a block or more. Longer rows stream (two reads) through 32 warps (float64: 16, under 128
// registers; 64 spilled), so that few groups (axis 0 of a wide matrix: 4096 columns are 128 blocks)
// still keep 32 warps an SM loading, and a block reads its 32 rows soon enough for pass 2 to find
// them in L2. Session 48, H200, % of copy: rows of 21 float32 elements read 18.1 with one 8-warp
// group, two reads (run 2), 30.4 with two 4-warp groups, two reads (run 3), 26.2 held (run 4);
// layer_norm of 96 elements 26.1 on 16 warps, held (run 4).
template <class T>
constexpr int kColumnHeld = sizeof(T) == 8 ? 8 : 16;  // float64: 16 held spilled 600 bytes at 128 registers

template <class T, RowKind kKind, int kSlices, int kGroups, int kHeld>
Status launch_columns(const NormLaunch& l, const ColumnShape& shape) {
  NormParams params = l.params;
  ColumnShape s = shape;
  void* args[] = {&params, &s};
  const char* op = norm_op_name(l.op);
  const int64_t blocks = (shape.groups + kGroups - 1) / kGroups;
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(reinterpret_cast<const void*>(&column_rows_kernel<T, kKind, kSlices, kGroups, kHeld>),
                                           dim3(grid_for(blocks)), dim3(kColumnLanes, kSlices, kGroups), args, 0,
                                           l.stream));
  return check_launch(op, l.stream);
}

template <class T, RowKind kKind>
Status launch_columns(const NormLaunch& l, const ColumnShape& shape) {
  const int64_t n = l.params.layout.row_len;
  constexpr int kWide = sizeof(T) == 8 ? 16 : 32;
  constexpr int kHeld = kColumnHeld<T>;
  if (n <= 1 * kHeld) return launch_columns<T, kKind, 1, 8, kHeld>(l, shape);
  if (n <= 2 * kHeld) return launch_columns<T, kKind, 2, 4, kHeld>(l, shape);
  if (n <= 4 * kHeld) return launch_columns<T, kKind, 4, 2, kHeld>(l, shape);
  if (n <= 8 * kHeld) return launch_columns<T, kKind, 8, 1, kHeld>(l, shape);
  if (n <= 16 * kHeld) return launch_columns<T, kKind, 16, 1, kHeld>(l, shape);
  if (n <= kWide * kHeld) return launch_columns<T, kKind, kWide, 1, kHeld>(l, shape);
  return launch_columns<T, kKind, kWide, 1, 0>(l, shape);
}

}  // namespace

Status norms_columns(const NormLaunch& l) {
  ColumnShape shape;
  if (!rows_side_by_side(l.params.layout, &shape)) return norms_row_on_chip(l);
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (row_kind(l.op) == RowKind::kSoftmax) return launch_columns<T, RowKind::kSoftmax>(l, shape);
    return launch_columns<T, RowKind::kNorm>(l, shape);
  });
}

}  // namespace norms
}  // namespace gpuprims
