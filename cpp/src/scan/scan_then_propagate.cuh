#pragma once
// Scan-then-propagate, the device-wide scheme of the textbook variants: every tile scans its own
// items and writes its total; the totals are scanned (recursively, same scheme); each tile after a
// row's first adds its prefix to its items (propagate_kernel). Reads and writes the output twice.
// Float16/bfloat16 results are rounded once after the tile scan and again after the propagation.
#include "runners.cuh"

namespace gpuprims {
namespace scan_detail {

// TilePass<In, Out, Op>: kTileItems and launch(l, base, blocks, tiles_per_row, totals).
template <template <class, class, class> class TilePass>
struct ScanThenPropagate {
  template <class In, class Out, class Op>
  struct Runner {
    static Status run(const ScanLaunch& l) {
      using Pass = TilePass<In, Out, Op>;
      using Acc = scan_acc_t<Out>;
      const int64_t tiles_per_row = ceil_div(l.layout.len, Pass::kTileItems);
      const int64_t tiles = l.layout.rows * tiles_per_row;
      StreamScratch scratch;
      GPUPRIMS_TRY(scratch.allocate(std::size_t(tiles) * sizeof(Acc), l.device, l.stream, "scan"));
      auto* totals = static_cast<Acc*>(scratch.data());
      GPUPRIMS_TRY(for_each_grid(tiles, "scan", l.stream, [&](int64_t base, unsigned blocks) {
        Pass::launch(l, base, blocks, tiles_per_row, totals);
      }));
      if (tiles_per_row == 1) return Status::ok();
      GPUPRIMS_TRY((scan_tile_values<Runner, Acc, Op>(l, totals, tiles_per_row)));
      return for_each_grid(tiles, "scan", l.stream, [&](int64_t base, unsigned blocks) {
        propagate_kernel<Out, Op><<<blocks, 256, 0, l.stream>>>(static_cast<Out*>(l.out), l.layout, tiles_per_row,
                                                                base, Pass::kTileItems, totals);
      });
    }
  };
};

}  // namespace scan_detail
}  // namespace gpuprims
