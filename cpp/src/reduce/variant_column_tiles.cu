// The column_tiles variant: reductions along an outer axis, coalesced across neighbouring outputs.
#include "gpuprims/core/stream.hpp"
#include "gpuprims/reduce/reduce_column_tiles.cuh"
#include "launch.hpp"
#include "single_pass_workspace.hpp"

namespace gpuprims {
namespace reduce_detail {
namespace {

// Blocks of 256 threads per SM the grid aims for (8 = 2048 resident threads).
constexpr int kColumnBlocksPerSm = 8;

template <class T, class Acc, class Op>
struct ColumnTilesRunner {
  static Status run(const ReduceLaunch& a) {
    const ReduceLayout& layout = a.layout;
    if (layout.num_rows == 0) return Status::ok();
    const int64_t tiles = ceil_div<int64_t>(layout.num_rows, kTileWidth);
    const int64_t target = int64_t(a.sm_count) * kColumnBlocksPerSm;
    // Split the reduced dimension only while each split keeps several unrolled sweeps of work.
    const int64_t max_splits = max_of<int64_t>(1, layout.row_len / (kTileRows * kColumnUnroll * 4));
    const int64_t splits = min_of<int64_t>(min_of<int64_t>(max_of<int64_t>(1, target / tiles), max_splits), 65535);

    {
      SinglePassWorkspace<Acc> ws;
      if (splits > 1) GPUPRIMS_TRY(ws.take(a, layout.num_rows * splits, tiles));
      const dim3 grid(static_cast<unsigned>(min_of<int64_t>(tiles, int64_t(1) << 30)), static_cast<unsigned>(splits));
      ReduceKernelParams<T> p{static_cast<const T*>(a.in), layout, a.out, a.out_dtype};
      reduce_column_tiles_kernel<T, Acc, Op><<<grid, kColumnThreads, 0, a.stream>>>(p, ws.partials, ws.tickets);
    }
    return check_launch("reduce", a.stream);
  }
};

}  // namespace

Status reduce_column_tiles(const ReduceLaunch& launch) { return dispatch_reduce_types<ColumnTilesRunner>(launch); }

}  // namespace reduce_detail
}  // namespace gpuprims
