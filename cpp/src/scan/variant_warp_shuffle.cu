// warp_shuffle: the striped tile scan (16 items per thread, 16-byte loads, warp-shuffle scans)
// inside scan-then-propagate: the multi-block scheme before the single pass.
#include "scan_then_propagate.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

template <class In, class Out, class Op>
struct WarpShufflePass {
  static constexpr int64_t kTileItems = StripedTile<In, Out, Op, kTileThreads>::kTileItems;
  static void launch(const ScanLaunch& l, int64_t base, unsigned blocks, int64_t tiles_per_row, scan_acc_t<Out>* totals) {
    tile_scan_kernel<In, Out, Op, TilePrefix::kWriteAggregate><<<blocks, kTileThreads, 0, l.stream>>>(
        static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout, tiles_per_row, base, totals,
        l.exclusive, vector_path_ok<In, Out>(l));
  }
};

}  // namespace

Status scan_warp_shuffle(const ScanLaunch& l) {
  return dispatch_scan_types<ScanThenPropagate<WarpShufflePass>::Runner>(l);
}

}  // namespace scan_detail
}  // namespace gpuprims
