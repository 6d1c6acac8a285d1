// decoupled_lookback: one pass, each tile's prefix from the status words of the tiles before it.
#include "gpuprims/scan/lookback_scan_kernel.cuh"
#include "runners.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

template <class In, class Out, class Op>
struct LookbackRunner {
  static Status run(const ScanLaunch& l) {
    SinglePassTiles<LookbackTile<In, Out, Op>> tiles;
    GPUPRIMS_TRY(tiles.prepare(l));
    const bool vector_ok = vector_path_ok<In, Out>(l);
    return for_each_grid(tiles.count, "scan", l.stream, [&](int64_t, unsigned blocks) {
      lookback_scan_kernel<In, Out, Op><<<blocks, kLookbackThreads, 0, l.stream>>>(
          static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout, tiles.per_row, tiles.counter,
          tiles.status, l.exclusive, vector_ok);
    });
  }
};

}  // namespace

Status scan_decoupled_lookback(const ScanLaunch& l) { return dispatch_scan_types<LookbackRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
