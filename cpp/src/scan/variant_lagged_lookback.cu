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
    SinglePassTiles<LookbackTile<In, Out, Op>> tiles;
    GPUPRIMS_TRY(tiles.prepare(l));
    // A lag beyond the tile count only adds empty blocks (any lag is correct).
    const int64_t lag = std::min(kDefaultLag, tiles.count);
    const bool vector_ok = vector_path_ok<In, Out>(l);
    // Tickets come from the counter, so grids launched one after another continue the ticket order.
    return for_each_grid(lagged_tickets(tiles.count, lag, DefaultLagOptions::kSchedule), "scan", l.stream,
                         [&](int64_t, unsigned blocks) {
                           lagged_lookback_scan_kernel<In, Out, Op><<<blocks, kLookbackThreads, 0, l.stream>>>(
                               static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout,
                               tiles.per_row, tiles.count, lag, tiles.counter, tiles.status, l.exclusive,
                               vector_ok);
                         });
  }
};

}  // namespace

Status scan_lagged_lookback(const ScanLaunch& l) { return dispatch_scan_types<LaggedLookbackRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
