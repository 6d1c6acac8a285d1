// warp_per_row: a warp per row instead of tiles.
#include "runners.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

// Enough resident blocks to fill the GPU several times; the kernels loop over the remaining rows.
unsigned row_grid(int64_t rows, int64_t rows_per_block, int sm_count) {
  return unsigned(std::max<int64_t>(1, std::min<int64_t>(ceil_div(rows, rows_per_block), int64_t(sm_count) * 32)));
}

template <class In, class Out, class Op>
struct WarpPerRowRunner {
  static Status run(const ScanLaunch& l) {
    warp_per_row_kernel<In, Out, Op><<<row_grid(l.layout.rows, kRowScanThreads / kWarpSize, l.sm_count),
                                       kRowScanThreads, 0, l.stream>>>(
        static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout, l.exclusive,
        vector_path_ok<In, Out>(l));
    return check_launch("scan", l.stream);
  }
};

}  // namespace

Status scan_warp_per_row(const ScanLaunch& l) { return dispatch_scan_types<WarpPerRowRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
