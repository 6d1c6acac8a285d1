#pragma once
// Host drivers of the scan variants (included by the variant_*.cu translation units): type
// dispatch, scratch, grid sizing and the multi-pass schemes.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "gpuprims/core/stream.hpp"
#include "gpuprims/scan/row_scans.cuh"
#include "gpuprims/scan/tile_status.cuh"
#include "gpuprims/scan/textbook_scans.cuh"
#include "gpuprims/scan/tile_scan_kernel.cuh"
#include "dispatch_types.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace scan_detail {

// The contiguous layout of an array of per-tile values: `rows` rows of `tiles_per_row`.
inline ScanLayout tile_values_layout(int64_t rows, int64_t tiles_per_row) {
  ScanLayout t;
  t.len = tiles_per_row;
  t.rows = rows;
  t.row_ndim = 1;
  t.row_shape[0] = rows;
  t.row_in_strides[0] = tiles_per_row;
  t.row_out_strides[0] = tiles_per_row;
  return t;
}

// An exclusive scan of the per-tile values, in place, by the same variant.
template <template <class, class, class> class Runner, class Acc, class Op>
Status scan_tile_values(const ScanLaunch& l, Acc* values, int64_t tiles_per_row) {
  ScanLaunch sub = l;
  sub.in = values;
  sub.out = values;
  sub.in_dtype = sub.out_dtype = dtype_of<Acc>::value;
  sub.exclusive = true;
  sub.layout = tile_values_layout(l.layout.rows, tiles_per_row);
  return Runner<Acc, Acc, Op>::run(sub);
}

// Launches `tiles` blocks of a blockIdx-indexed tile kernel, in grids of at most 2^31 - 1 blocks.
template <class Launch>
Status for_each_grid(int64_t tiles, const char* op, cudaStream_t stream, Launch&& launch) {
  constexpr int64_t kMaxGrid = (int64_t(1) << 31) - 1;
  for (int64_t base = 0; base < tiles; base += kMaxGrid) {
    launch(base, unsigned(std::min(kMaxGrid, tiles - base)));
    GPUPRIMS_TRY(check_launch(op, stream));
  }
  return Status::ok();
}

// Whether a tile's 16-byte vector path may run: unit steps and 16-byte aligned rows in both arrays.
template <class In, class Out>
bool vector_path_ok(const ScanLaunch& l) {
  using S = storage_t<In>;
  const ScanLayout& t = l.layout;
  return t.in_step == 1 && t.out_step == 1 && reinterpret_cast<uintptr_t>(l.in) % 16 == 0 &&
         reinterpret_cast<uintptr_t>(l.out) % 16 == 0 && t.rows_aligned(t.row_in_strides, 16 / sizeof(S)) &&
         t.rows_aligned(t.row_out_strides, std::max<int64_t>(1, 16 / sizeof(Out)));
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline std::size_t align_up(std::size_t bytes) { return (bytes + 255) & ~std::size_t(255); }

// A single pass's scratch: the tile counter, then `words` status words (a TileStatus or CountStatus
// of tile_status.cuh), zeroed on the launch's stream by one memset, so every launch, also inside a
// CUDA graph, starts from "no tile published". The scratch lives as long as the object.
template <class StatusWords>
struct CounterAndStatus {
  unsigned long long* counter = nullptr;
  StatusWords status{};
  StreamScratch scratch;

  Status allocate(int64_t words, int device, cudaStream_t stream, const char* op) {
    constexpr std::size_t kCounterBytes = 256;
    const std::size_t bytes = kCounterBytes + align_up(StatusWords::bytes(words));
    GPUPRIMS_TRY(scratch.allocate(bytes, device, stream, op));
    GPUPRIMS_CUDA_CHECK(op, cudaMemsetAsync(scratch.data(), 0, bytes, stream));
    counter = static_cast<unsigned long long*>(scratch.data());
    status = StatusWords::at(static_cast<char*>(scratch.data()) + kCounterBytes, words);
    return Status::ok();
  }
};

// The single-pass scans' tiles (Tile::kTileItems items, never across rows), a status word each.
template <class Tile>
struct SinglePassTiles : CounterAndStatus<TileStatus<typename Tile::Acc>> {
  int64_t per_row = 0, count = 0;

  Status prepare(const ScanLaunch& l) {
    per_row = ceil_div(l.layout.len, Tile::kTileItems);
    count = l.layout.rows * per_row;
    return this->allocate(count, l.device, l.stream, "scan");
  }
};

}  // namespace scan_detail
}  // namespace gpuprims
