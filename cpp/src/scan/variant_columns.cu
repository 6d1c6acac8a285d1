// columns: tiles of adjacent columns along a strided axis, a decoupled look-back per column.
#include "gpuprims/scan/column_tiles.cuh"
#include "runners.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

template <class In, class Out, class Op>
struct ColumnsRunner {
  static Status run(const ScanLaunch& l) {
    using ColumnStatus = TileStatus<scan_acc_t<Out>>;
    const int groups = column_tile_groups(l.layout.len, l.layout.rows, sizeof(storage_t<In>));
    const int64_t strips = ceil_div(l.layout.rows, kColumnTileThreads / groups);
    const int64_t segments = ceil_div(l.layout.len, int64_t(groups) * kColumnTileItems);
    const int64_t words = segments * l.layout.rows;
    // The tile counter, then a status word per column and segment, zeroed by one memset on the
    // launch's stream (every launch, also inside a CUDA graph, starts from "no tile published").
    const std::size_t counter_bytes = 256, bytes = counter_bytes + ColumnStatus::bytes(words);
    StreamScratch scratch;
    GPUPRIMS_TRY(scratch.allocate(bytes, l.device, l.stream, "scan"));
    GPUPRIMS_CUDA_CHECK("scan", cudaMemsetAsync(scratch.data(), 0, bytes, l.stream));
    auto* counter = static_cast<unsigned long long*>(scratch.data());
    const ColumnStatus status = ColumnStatus::at(static_cast<char*>(scratch.data()) + counter_bytes, words);
    return for_each_grid(strips * segments, "scan", l.stream, [&](int64_t, unsigned blocks) {
      column_tiles_kernel<In, Out, Op><<<blocks, kColumnTileThreads, 0, l.stream>>>(
          static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout, groups, strips, counter, status,
          l.exclusive);
    });
  }
};

}  // namespace

Status scan_columns(const ScanLaunch& l) { return dispatch_scan_types<ColumnsRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
