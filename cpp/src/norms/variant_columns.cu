// columns: rows that lie side by side (column_rows.cuh); row_on_chip for every other layout.
#include "column_launch.cuh"
#include "launch.hpp"
#include "layout.hpp"

namespace gpuprims {
namespace norms {

namespace {

// Elements a thread holds (float64 8: 16 held spilled 600 bytes at 128 registers).
template <class T>
constexpr int kColumnHeld = sizeof(T) == 8 ? 8 : 16;

template <class T, RowKind kKind>
Status launch_columns(const NormLaunch& l, const ColumnShape& shape) {
  return run_column_block<T, kColumnHeld<T>>(l.params.layout.row_len, [&](auto block) {
    using B = decltype(block);
    const void* kernel = reinterpret_cast<const void*>(&column_rows_kernel<T, kKind, B::kSlices, B::kGroups, B::kHeld>);
    return launch_column_kernel<B>(kernel, l.params, shape, norm_op_name(l.op),
                                   l.stream);
  });
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
