// columns: rows that lie side by side (column_rows.cuh), staged through shared memory where the
// layout allows (column_staged.cuh); row_on_chip for every other layout.
#include "gpuprims/norms/column_staged.cuh"
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
  const int64_t n = l.params.layout.row_len;
  // Staged where the layout allows and rows are longer than kColumnStagedMinLen (up to the register
  // shapes' held length), else in registers.
  if (rows_side_by_side_staged(l.params.layout, l.params.x, l.dtype)) {
    bool launched = false;
    const Status status = launch_column_staged<T, kColumnHeldLen<T, kColumnHeld<T>>, 1>(
        l, shape, n,
        [](auto block) {
          using B = decltype(block);
          return reinterpret_cast<const void*>(&column_staged_kernel<T, kKind, B::kSlices, B::kGroups>);
        },
        &launched);
    if (!status.is_ok() || launched) return status;
  }
  return run_column_block<T, kColumnHeld<T>>(n, [&](auto block) {
    using B = decltype(block);
    return launch_column_registers<B>(
        l, shape, reinterpret_cast<const void*>(&column_rows_kernel<T, kKind, B::kSlices, B::kGroups, B::kHeld>));
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
