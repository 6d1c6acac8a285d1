#pragma once
// The single-pass scan: decoupled look-back (Merrill & Garland, 2016) with persistent blocks.
//
// Each block loops: it takes tile ids from a global counter, scans its tile in registers
// (StripedTile), publishes the tile's aggregate, looks back over the status words of earlier tiles
// of its row for the exclusive prefix, publishes its inclusive prefix and stores the tile. While
// warp 0 looks back, the block's loads for its *next* tile are already in flight (taken from the
// counter one tile ahead), so the look-back's latency overlaps memory traffic instead of idling it.
//
// Forward progress: ids come from the counter in the order blocks ask, never from blockIdx, so a
// tile only ever waits for smaller ids, each held by a block that is already running. The smallest
// unfinished tile is always some block's current tile (a block takes its next id only after its
// current one), and it waits on finished tiles only: the chain always advances.
//
// Memory ordering of the status words: tile_status.cuh.
#include <cstdint>

#include "gpuprims/scan/scan_layout.hpp"
#include "gpuprims/scan/striped_tile.cuh"
#include "gpuprims/scan/tile_status.cuh"
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {
namespace scan_detail {

constexpr int kLookbackThreads = 256;
constexpr int kLookbackPerLane = 4;  // predecessors each lane inspects per step: 128 tiles per step

// The exclusive prefix of `tile` (warp 0; every lane gets it): walks back 128 tiles per step,
// combining aggregates until the nearest inclusive prefix, which ends the walk. Tiles before the
// row's first count as an inclusive identity.
template <class Acc, class Op>
__device__ Acc look_back(const TileStatus<Acc>& status, int64_t tile, int64_t row_first_tile, int lane) {
  const ScanOperator<Op> op;
  const Acc identity = ScanOperator<Op>::template identity<Acc>();
  Acc prefix = identity;
  for (int64_t end = tile;; end -= kWarpSize * kLookbackPerLane) {
    TileFlag flag[kLookbackPerLane];
    Acc value[kLookbackPerLane];
#pragma unroll
    for (int j = 0; j < kLookbackPerLane; ++j) {  // group j = 3 is nearest to the tile
      const int64_t predecessor = end - (kLookbackPerLane - j) * kWarpSize + lane;
      flag[j] = kTileInclusive;
      value[j] = identity;
      if (predecessor >= row_first_tile) {
        unsigned backoff = 32;
        while ((flag[j] = status.read(predecessor, &value[j])) == kTileInvalid) {
          __nanosleep(backoff);  // the predecessor is still loading: do not flood L2 with polls
          backoff = backoff < 512 ? 2 * backoff : backoff;
        }
      }
    }
    // The nearest inclusive predecessor: everything before it is already inside its prefix.
    int nearest_group = -1, nearest_lane = 0;
#pragma unroll
    for (int j = 0; j < kLookbackPerLane; ++j) {
      const unsigned inclusive = __ballot_sync(0xffffffffu, flag[j] == kTileInclusive);
      if (inclusive) {
        nearest_group = j;
        nearest_lane = kWarpSize - 1 - __clz(inclusive);
      }
    }
    Acc mine = identity;
#pragma unroll
    for (int j = 0; j < kLookbackPerLane; ++j) {
      const bool counted = j > nearest_group || (j == nearest_group && lane >= nearest_lane);
      if (counted) mine = op(mine, value[j]);
    }
    prefix = op(warp_reduce(mine, op), prefix);
    if (nearest_group >= 0) return prefix;
  }
}

template <class In, class Out, class Op>
__global__ void __launch_bounds__(kLookbackThreads)
lookback_scan_kernel(const storage_t<In>* __restrict__ in, Out* __restrict__ out, ScanLayout layout,
                     int64_t tiles_per_row, int64_t tiles, unsigned long long* tile_counter,
                     TileStatus<scan_acc_t<Out>> status, bool exclusive, bool vector_ok) {
  using Tile = StripedTile<In, Out, Op, kLookbackThreads>;
  using Acc = typename Tile::Acc;
  const ScanOperator<Op> op;
  __shared__ Acc warp_totals[Tile::kWarps];
  __shared__ Acc warp_prefixes[Tile::kWarps];
  __shared__ int64_t tile_ids[2];  // double-buffered: the slot being read is never the one written

  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (threadIdx.x == 0) tile_ids[0] = int64_t(atomicAdd(tile_counter, 1ull));
  __syncthreads();
  int64_t tile = tile_ids[0];
  if (tile >= tiles) return;

  struct Where {
    int64_t chunk, in_offset, out_offset, begin;
  };
  auto where = [&](int64_t t) {
    Where w;
    const int64_t row = t / tiles_per_row;
    w.chunk = t - row * tiles_per_row;
    layout.row_offsets(row, &w.in_offset, &w.out_offset);
    w.begin = w.chunk * Tile::kTileItems;
    return w;
  };
  Where at = where(tile);
  Tile current;
  current.load(in + at.in_offset, layout.in_step, at.begin, layout.len, vector_ok, warp, lane);

  for (int slot = 1;; slot ^= 1) {
    if (threadIdx.x == 0) tile_ids[slot] = int64_t(atomicAdd(tile_counter, 1ull));
    const Acc warp_total = current.scan_warp(lane);
    if (lane == 0) warp_totals[warp] = warp_total;
    __syncthreads();  // warp totals and the next tile id are visible

    const int64_t next = tile_ids[slot];
    Tile upcoming;
    Where next_at{};
    if (next < tiles) {  // prefetch: these loads fly while warp 0 looks back
      next_at = where(next);
      upcoming.load(in + next_at.in_offset, layout.in_step, next_at.begin, layout.len, vector_ok, warp, lane);
    }

    if (warp == 0) {
      Acc aggregate;
      const Acc warp_exclusive = scan_warp_totals<Acc, Op, Tile::kWarps>(warp_totals, lane, &aggregate);
      Acc prefix = ScanOperator<Op>::template identity<Acc>();
      if (at.chunk == 0) {
        if (lane == 0) status.publish(tile, kTileInclusive, aggregate);
      } else {
        if (lane == 0) status.publish(tile, kTileAggregate, aggregate);
        prefix = look_back<Acc, Op>(status, tile, tile - at.chunk, lane);
        if (lane == 0) status.publish(tile, kTileInclusive, op(prefix, aggregate));
      }
      if (lane < Tile::kWarps) warp_prefixes[lane] = op(prefix, warp_exclusive);
    }
    __syncthreads();  // the tile's prefixes are visible

    current.store(out + at.out_offset, layout.out_step, at.begin, layout.len, vector_ok, warp_prefixes[warp],
                  exclusive, at.begin == 0 && threadIdx.x == 0, warp, lane);
    if (next >= tiles) return;
    current = upcoming;
    tile = next;
    at = next_at;
  }
}

}  // namespace scan_detail
}  // namespace gpuprims
