// decoupled_lookback: one pass, each tile's prefix from the status words of the tiles before it.
#include "gpuprims/scan/lookback_scan_kernel.cuh"
#include "runners.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

template <class In, class Out, class Op>
struct LookbackRunner {
  static Status run(const ScanLaunch& l) {
    using Tile = LookbackTile<In, Out, Op>;
    using Acc = typename Tile::Acc;
    const int64_t tiles_per_row = ceil_div(l.layout.len, Tile::kTileItems);
    const int64_t tiles = l.layout.rows * tiles_per_row;
    StreamScratch scratch;
    unsigned long long* counter;
    TileStatus<Acc> status;
    GPUPRIMS_TRY(zeroed_tile_status(l, tiles, &scratch, &counter, &status));
    const bool vector_ok = vector_path_ok<In, Out>(l);
    return for_each_grid(tiles, "scan", l.stream, [&](int64_t, unsigned blocks) {
      lookback_scan_kernel<In, Out, Op><<<blocks, kLookbackThreads, 0, l.stream>>>(
          static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout, tiles_per_row, counter, status,
          l.exclusive, vector_ok);
    });
  }
};

}  // namespace

Status scan_decoupled_lookback(const ScanLaunch& l) { return dispatch_scan_types<LookbackRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
