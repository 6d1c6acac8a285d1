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
