#pragma once
// The tile scan kernel behind three variants. Every block scans one tile (StripedTile) and gets the
// prefix of everything before its tile in its row from one of three sources:
//   kLookback        decoupled look-back: tile ids from an atomic counter, prefix from the tile
//                    status words of earlier tiles (single pass: decoupled_lookback)
//   kPrefixArray     an array of exclusive tile prefixes computed by earlier passes (the third pass
//                    of reduce_then_scan)
//   kWriteAggregate  no prefix; the tile's total goes to an array (the first pass of the
//                    scan-then-propagate warp_shuffle variant)
//
// Forward progress of the look-back: a tile id is taken from a global counter *after* the block is
// running, so every tile a block waits for belongs to a block that was already running before it;
// with blockIdx order a block could wait on a predecessor that was never scheduled. Waiting blocks
// spin only on tiles before theirs, so the chain always resolves.
#include <cstdint>

#include "gpuprims/scan/scan_layout.hpp"
#include "gpuprims/scan/striped_tile.cuh"
#include "gpuprims/scan/tile_status.cuh"
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {
namespace scan_detail {

enum class TilePrefix { kLookback, kPrefixArray, kWriteAggregate };

constexpr int kTileThreads = 256;

// The exclusive prefix of `tile` (warp 0, every lane gets it): walks back 32 tiles at a time, adding
// aggregates until the nearest inclusive prefix, which ends the walk. Tiles before the row's first
// tile count as an inclusive identity.
template <class Acc, class Op>
__device__ Acc look_back(const TileStatus<Acc>& status, int64_t tile, int64_t row_first_tile, int lane) {
  const ScanOperator<Op> op;
  const Acc identity = ScanOperator<Op>::template identity<Acc>();
  Acc prefix = identity;
  for (int64_t end = tile;; end -= kWarpSize) {
    const int64_t predecessor = end - kWarpSize + lane;
    TileFlag flag = kTileInclusive;
    Acc value = identity;
    if (predecessor >= row_first_tile) {
      do {
        flag = status.read(predecessor, &value);
      } while (flag == kTileInvalid);
    }
    const unsigned inclusive = __ballot_sync(0xffffffffu, flag == kTileInclusive);
    // Lanes below the nearest inclusive predecessor are already inside its prefix.
    const int nearest = inclusive ? kWarpSize - 1 - __clz(inclusive) : 0;
    prefix = op(warp_reduce(lane >= nearest ? value : identity, op), prefix);
    if (inclusive) return prefix;
  }
}

template <class In, class Out, class Op, TilePrefix kPrefix>
__global__ void __launch_bounds__(kTileThreads)
tile_scan_kernel(const storage_t<In>* __restrict__ in, Out* __restrict__ out, ScanLayout layout,
                 int64_t tiles_per_row, int64_t tile_base, unsigned long long* tile_counter,
                 TileStatus<scan_acc_t<Out>> status, scan_acc_t<Out>* tile_values, bool exclusive, bool vector_ok) {
  using Tile = StripedTile<In, Out, Op, kTileThreads>;
  using Acc = typename Tile::Acc;
  const ScanOperator<Op> op;
  __shared__ Acc warp_totals[Tile::kWarps];
  __shared__ Acc warp_prefixes[Tile::kWarps];
  __shared__ int64_t tile_id;

  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  int64_t tile = tile_base + blockIdx.x;
  if constexpr (kPrefix == TilePrefix::kLookback) {
    if (threadIdx.x == 0) tile_id = int64_t(atomicAdd(tile_counter, 1ull));
    __syncthreads();
    tile = tile_id;
  }
  const int64_t row = tile / tiles_per_row;
  const int64_t chunk = tile - row * tiles_per_row;
  int64_t in_offset, out_offset;
  layout.row_offsets(row, &in_offset, &out_offset);
  const int64_t begin = chunk * Tile::kTileItems;

  Tile t;
  t.load(in + in_offset, layout.in_step, begin, layout.len, vector_ok, warp, lane);
  const Acc warp_total = t.scan_warp(lane);
  if (lane == 0) warp_totals[warp] = warp_total;
  __syncthreads();

  if (warp == 0) {
    Acc aggregate;
    const Acc warp_exclusive = scan_warp_totals<Acc, Op, Tile::kWarps>(warp_totals, lane, &aggregate);
    Acc prefix = ScanOperator<Op>::template identity<Acc>();
    if constexpr (kPrefix == TilePrefix::kLookback) {
      if (chunk == 0) {
        if (lane == 0) status.publish(tile, kTileInclusive, aggregate);
      } else {
        if (lane == 0) status.publish(tile, kTileAggregate, aggregate);
        prefix = look_back<Acc, Op>(status, tile, tile - chunk, lane);
        if (lane == 0) status.publish(tile, kTileInclusive, op(prefix, aggregate));
      }
    } else if constexpr (kPrefix == TilePrefix::kPrefixArray) {
      if (chunk > 0) prefix = tile_values[tile];  // a row's first tile keeps the identity (-0.0 stays -0.0)
    } else {
      if (lane == 0) tile_values[tile] = aggregate;
    }
    if (lane < Tile::kWarps) warp_prefixes[lane] = op(prefix, warp_exclusive);
  }
  __syncthreads();

  t.store(out + out_offset, layout.out_step, begin, layout.len, vector_ok, warp_prefixes[warp], exclusive,
          begin == 0 && threadIdx.x == 0, warp, lane);
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
  const int64_t row = tile / tiles_per_row;
  const int64_t chunk = tile - row * tiles_per_row;
  int64_t in_offset, out_offset;
  layout.row_offsets(row, &in_offset, &out_offset);

  Tile t;
  t.load(in + in_offset, layout.in_step, chunk * Tile::kTileItems, layout.len, vector_ok, warp, lane);
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
