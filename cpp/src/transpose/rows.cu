// transpose_rows: copies whose merged dimensions keep one axis fastest on both sides (no
// transposition left): one cudaMemcpyAsync for a contiguous block, row_kernel for rows of at least
// a block's width, short_row_kernel for shorter ones; 16-byte vectors where every row allows them.
#include "gpuprims/transpose/transpose_kernels.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace transpose_detail {

Status transpose_rows(const TransposeLaunch& l) {
  RowParams p;
  GPUPRIMS_TRY(row_params(l.dims, l.axes.j, l.elem_size, l.src, l.dst, "transpose", &p));
  if (p.rows == 1 && p.src_step == 1 && p.dst_step == 1) {
    GPUPRIMS_CUDA_CHECK("transpose", cudaMemcpyAsync(l.dst, l.src, size_t(p.row_len) * l.elem_size,
                                                     cudaMemcpyDeviceToDevice, l.stream));
    return Status::ok();
  }
  const int64_t lanes = 16 / static_cast<int64_t>(l.elem_size);
  const int64_t units = p.vectors ? p.row_len / lanes : p.row_len;
  const int64_t pieces_per_row = (units + kRowPiece - 1) / kRowPiece;
  const auto launch = [&](auto element, auto unit) {
    using E = decltype(element);
    using U = decltype(unit);
    if (units >= kRowThreads) {
      row_kernel<E, U><<<grid_for(p.rows * pieces_per_row), kRowThreads, 0, l.stream>>>(
          p, units, pieces_per_row, FastDivmod64(pieces_per_row));
    } else {
      constexpr int64_t kStep = kRowThreads * kRowUnroll;
      short_row_kernel<E, U><<<grid_for((p.rows * units + kStep - 1) / kStep), kRowThreads, 0, l.stream>>>(
          p, units, FastDivmod64(units));
    }
    return check_launch("transpose", l.stream);
  };
  return visit_element_size(l.elem_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    return p.vectors ? launch(E{}, uint4{}) : launch(E{}, E{});
  });
}

}  // namespace transpose_detail
}  // namespace gpuprims
