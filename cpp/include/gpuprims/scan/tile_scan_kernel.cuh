#pragma once
// The tile scan kernel of the multi-pass variants. Every block scans one tile (StripedTile) and
// gets the prefix of everything before its tile in its row from one of two sources:
//   kPrefixArray     an array of exclusive tile prefixes computed by earlier passes (the third pass
//                    of reduce_then_scan)
//   kWriteAggregate  no prefix; the tile's total goes to an array (the first pass of the
//                    scan-then-propagate warp_shuffle variant)
// The single pass (decoupled look-back) is lookback_scan_kernel.cuh.
#include <cstdint>

#include "gpuprims/scan/scan_layout.hpp"
#include "gpuprims/scan/striped_tile.cuh"
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {
namespace scan_detail {

enum class TilePrefix { kPrefixArray, kWriteAggregate };

constexpr int kTileThreads = 256;

template <class In, class Out, class Op, TilePrefix kPrefix>
__global__ void __launch_bounds__(kTileThreads)
tile_scan_kernel(const storage_t<In>* in, Out* out, ScanLayout layout,
                 int64_t tiles_per_row, int64_t tile_base, scan_acc_t<Out>* tile_values, bool exclusive,
                 bool vector_ok) {
  using Tile = StripedTile<In, Out, Op, kTileThreads>;
  using Acc = typename Tile::Acc;
  const ScanOperator<Op> op;
  __shared__ Acc warp_totals[Tile::kWarps];
  __shared__ Acc warp_prefixes[Tile::kWarps];

  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int64_t tile = tile_base + blockIdx.x;
  const TileCoords c = layout.tile_coords(tile, tiles_per_row, Tile::kTileItems);

  Tile t;
  t.load(in + c.in_offset, layout.in_step, c.begin, layout.len, vector_ok, warp, lane);
  Acc aggregate;
  const Acc warp_exclusive = scan_tile_block(t, warp_totals, warp, lane, &aggregate);
  if (warp == 0) {
    Acc prefix = ScanOperator<Op>::template identity<Acc>();
    if constexpr (kPrefix == TilePrefix::kPrefixArray) {
      if (c.chunk > 0) prefix = tile_values[tile];  // a row's first tile keeps the identity (-0.0 stays -0.0)
    } else {
      if (lane == 0) tile_values[tile] = aggregate;
      prefix = ScanOperator<Op>::template stored_identity<Out, Acc>();  // the local scan is stored, then propagated
    }
    if (lane < Tile::kWarps) warp_prefixes[lane] = op(prefix, warp_exclusive);
  }
  __syncthreads();

  t.store(out + c.out_offset, layout.out_step, c.begin, layout.len, vector_ok, warp_prefixes[warp], exclusive,
          c.begin == 0 && threadIdx.x == 0, warp, lane);
}

// The first pass of reduce_then_scan: each tile's total.
template <class In, class Out, class Op>
__global__ void __launch_bounds__(kTileThreads)
tile_reduce_kernel(const storage_t<In>* __restrict__ in, ScanLayout layout, int64_t tiles_per_row, int64_t tile_base,
                   scan_acc_t<Out>* tile_values, bool vector_ok) {
  using Tile = StripedTile<In, Out, Op, kTileThreads>;
  using Acc = typename Tile::Acc;
  const ScanOperator<Op> op;
  __shared__ Acc warp_totals[Tile::kWarps];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int64_t tile = tile_base + blockIdx.x;
  const TileCoords c = layout.tile_coords(tile, tiles_per_row, Tile::kTileItems);

  Tile t;
  t.load(in + c.in_offset, layout.in_step, c.begin, layout.len, vector_ok, warp, lane);
  const Acc warp_total = warp_reduce(t.reduce_thread(), op);
  if (lane == 0) warp_totals[warp] = warp_total;
  __syncthreads();
  if (warp == 0) {
    Acc aggregate;
    scan_warp_totals<Acc, Op, Tile::kWarps>(warp_totals, lane, &aggregate);
    if (lane == 0) tile_values[tile] = aggregate;
  }
}

}  // namespace scan_detail
}  // namespace gpuprims
