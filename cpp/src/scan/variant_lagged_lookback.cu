// lagged_lookback: one pass, each tile read twice: from DRAM for its aggregate, L tickets later from
// L2 for its scan (lagged_lookback_scan_kernel.cuh).
#include <algorithm>

#include "gpuprims/scan/lagged_lookback_scan_kernel.cuh"
#include "runners.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

template <class In, class Out, class Op>
struct LaggedLookbackRunner {
  static Status run(const ScanLaunch& l) {
    using Tile = LookbackTile<In, Out, Op>;
    using Acc = typename Tile::Acc;
    const int64_t tiles_per_row = ceil_div(l.layout.len, Tile::kTileItems);
    const int64_t tiles = l.layout.rows * tiles_per_row;
    // A lag beyond the tile count only adds empty blocks (any lag is correct).
    const int64_t lag = std::min(kDefaultLag, tiles);
    StreamScratch scratch;
    unsigned long long* counter;
    TileStatus<Acc> status;
    GPUPRIMS_TRY(zeroed_tile_status(l, tiles, &scratch, &counter, &status));
    const bool vector_ok = vector_path_ok<In, Out>(l);
    // Tickets come from the counter, so grids launched one after another continue the ticket order.
    return for_each_grid(lagged_tickets(tiles, lag, DefaultLagOptions::kSchedule), "scan", l.stream,
                         [&](int64_t, unsigned blocks) {
                           lagged_lookback_scan_kernel<In, Out, Op><<<blocks, kLookbackThreads, 0, l.stream>>>(
                               static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout,
                               tiles_per_row, tiles, lag, counter, status, l.exclusive, vector_ok);
                         });
  }
};

}  // namespace

Status scan_lagged_lookback(const ScanLaunch& l) { return dispatch_scan_types<LaggedLookbackRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
