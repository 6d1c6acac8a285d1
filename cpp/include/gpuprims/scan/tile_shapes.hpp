#pragma once
// The single-pass scans' tile shapes by item sizes (input storage, accumulator, output), in one
// place for the kernels' templates (lookback_scan_kernel.cuh, held_lookback_scan_kernel.cuh) and the
// host's "auto" rule (src/scan/dispatch.cpp), which knows only the dtypes. Why each shape:
// lookback_items (lookback_scan_kernel.cuh), held_items and held_transposes
// (held_lookback_scan_kernel.cuh).
#include <cstddef>

namespace gpuprims {
namespace scan_detail {

constexpr int kLookbackThreads = 256;

// Column tiles: a block of kColumnTileThreads threads is `width` adjacent columns by 256 / width
// groups of threads along the axis, each scanning kColumnTileItems consecutive items of its column.
// column_tile_groups picks the shape: as many groups as the axis fills, so that short axes keep
// every thread busy with more columns, up to 16 (tiles of 16 columns x 256 items: few links in each
// column's chain of prefixes, which limit arrays of few columns, and 128-byte row pieces of 8-byte
// items), or up to 4 (64 columns x 64 items: longer row pieces) for items of 1-4 bytes in arrays of
// kColumnTileWideColumns columns or more. Session 46 device run 3 (H200, % of copy, up to 4 / up to
// 16 groups): float32 2^17 x 1024 74.0 / 81.5, 2^20 x 64 50.2 / 66.1, 2^22 x 16 14.5 / 50.8; int64
// 8192 x 4096 84.3 / 90.3; float32 4096 x 8192 79.0 / 80.4, 1000 x 100000 82.2 / 76.1, int32 into
// int64 8192 x 4096 73.5 / 68.4, bfloat16 into float32 8192 x 8192 64.4 / 60.1, bool into int64 4096
// x 8192 63.9 / 58.5, 256 x (64 x 4096) 83.6 / 71.2 (docs/scan.md, "Scans along a strided axis").
constexpr int kColumnTileThreads = 256;
constexpr int kColumnTileItems = 16;
constexpr long long kColumnTileWideColumns = 4096;
constexpr int column_tile_groups(long long len, long long columns, std::size_t item_bytes) {
  const int most = columns >= kColumnTileWideColumns && item_bytes < 8 ? 4 : 16;
  int groups = 1;
  while (groups < most && static_cast<long long>(groups) * kColumnTileItems < len) groups *= 2;
  return groups;
}

// Items per thread of the look-back tile: 32 where items, accumulators and results are at most 4
// bytes, else 16.
constexpr int lookback_items_for(std::size_t in, std::size_t acc, std::size_t out) {
  return in <= 4 && acc <= 4 && out <= 4 ? 32 : 16;
}

// The held scan's 64-bit accumulators of 4- and 8-byte items take 12 items a thread.
constexpr bool held_twelve_items_for(std::size_t in, std::size_t acc) { return acc == 8 && in >= 4; }
constexpr int held_items_for(std::size_t in, std::size_t acc, std::size_t out) {
  return held_twelve_items_for(in, acc) ? 12 : lookback_items_for(in, acc, out);
}

// Whether the held scan stores full tiles across lanes: a lane's 16-byte load of items is more
// than 16 bytes of results, whole accumulators.
constexpr bool held_transposes_for(std::size_t in, std::size_t acc, std::size_t out) {
  return 16 / in * out > 16 && out == acc;
}

}  // namespace scan_detail
}  // namespace gpuprims
