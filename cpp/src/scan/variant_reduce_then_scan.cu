// reduce_then_scan: three passes with a fixed combination order (bitwise deterministic): the total
// of every tile, an exclusive scan of those totals (recursively, same scheme), and a rescan of every
// tile starting from its prefix. Reads the input twice.
#include "runners.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

template <class In, class Out, class Op>
struct ReduceThenScanRunner {
  static Status run(const ScanLaunch& l) {
    using Tile = StripedTile<In, Out, Op, kTileThreads>;
    using Acc = typename Tile::Acc;
    const int64_t tiles_per_row = ceil_div(l.layout.len, Tile::kTileItems);
    const int64_t tiles = l.layout.rows * tiles_per_row;
    StreamScratch scratch;
    GPUPRIMS_TRY(scratch.allocate(std::size_t(tiles) * sizeof(Acc), l.device, l.stream, "scan"));
    auto* values = static_cast<Acc*>(scratch.data());
    const auto* in = static_cast<const storage_t<In>*>(l.in);
    const bool vector_ok = vector_path_ok<In, Out>(l);
    if (tiles_per_row == 1) {  // nothing before any tile: one pass
      return for_each_grid(tiles, "scan", l.stream, [&](int64_t base, unsigned blocks) {
        tile_scan_kernel<In, Out, Op, TilePrefix::kWriteAggregate><<<blocks, kTileThreads, 0, l.stream>>>(
            in, static_cast<Out*>(l.out), l.layout, tiles_per_row, base, values, l.exclusive, vector_ok);
      });
    }
    GPUPRIMS_TRY(for_each_grid(tiles, "scan", l.stream, [&](int64_t base, unsigned blocks) {
      tile_reduce_kernel<In, Out, Op><<<blocks, kTileThreads, 0, l.stream>>>(in, l.layout, tiles_per_row, base, values,
                                                                            vector_ok);
    }));
    GPUPRIMS_TRY((scan_tile_values<ReduceThenScanRunner, Acc, Op>(l, values, tiles_per_row)));
    return for_each_grid(tiles, "scan", l.stream, [&](int64_t base, unsigned blocks) {
      tile_scan_kernel<In, Out, Op, TilePrefix::kPrefixArray><<<blocks, kTileThreads, 0, l.stream>>>(
          in, static_cast<Out*>(l.out), l.layout, tiles_per_row, base, values, l.exclusive, vector_ok);
    });
  }
};

}  // namespace

Status scan_reduce_then_scan(const ScanLaunch& l) { return dispatch_scan_types<ReduceThenScanRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
