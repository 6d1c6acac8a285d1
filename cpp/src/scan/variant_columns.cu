// columns: tiles of adjacent columns along a strided axis, a decoupled look-back per column.
#include "gpuprims/scan/column_tiles.cuh"
#include "runners.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

template <class In, class Out, class Op>
struct ColumnsRunner {
  static Status run(const ScanLaunch& l) {
    const int groups = column_tile_groups(l.layout.len, l.layout.rows, sizeof(storage_t<In>));
    const int64_t strips = ceil_div(l.layout.rows, kColumnTileThreads / groups);
    const int64_t segments = ceil_div(l.layout.len, int64_t(groups) * kColumnTileItems);
    // a status word per column and segment, laid out like the columns
    CounterAndStatus<TileStatus<scan_acc_t<Out>>> scratch;
    GPUPRIMS_TRY(scratch.allocate(segments * l.layout.rows, l.device, l.stream, "scan"));
    return for_each_grid(strips * segments, "scan", l.stream, [&](int64_t, unsigned blocks) {
      column_tiles_kernel<In, Out, Op><<<blocks, kColumnTileThreads, 0, l.stream>>>(
          static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout, groups, strips, scratch.counter,
          scratch.status, l.exclusive);
    });
  }
};

}  // namespace

Status scan_columns(const ScanLaunch& l) { return dispatch_scan_types<ColumnsRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
