#pragma once
// The single-pass scan: decoupled look-back (Merrill & Garland, 2016).
//
// Each block takes a tile id from a global counter, scans its tile in registers (StripedTile),
// publishes the tile's aggregate, looks back over the status words of earlier tiles of its row for
// the exclusive prefix, publishes its inclusive prefix and stores the tile.
//
// Forward progress: ids come from the counter in the order blocks start, never from blockIdx, so a
// tile only ever waits for smaller ids, each held by a block that is already running and waits on
// smaller ids only: the chain always advances. (Measured and dropped: persistent blocks that fetch
// their next tile during the look-back. A prefetched tile publishes its aggregate only after the
// block's current look-back, so successors wait a whole look-back per tile: 4x slower on H200.)
//
// Memory ordering of the status words: tile_status.cuh.
#include <cstdint>

#include "gpuprims/scan/scan_layout.hpp"
#include "gpuprims/scan/striped_tile.cuh"
#include "gpuprims/scan/tile_shapes.hpp"
#include "gpuprims/scan/tile_status.cuh"
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {
namespace scan_detail {

constexpr int kLookbackPerLane = 4;  // predecessors each lane inspects per step: 128 tiles per step

// How a look-back step reads its 32 * kPerLane predecessors.
enum class LookbackReads {
  kSerial,    // each lane waits for one read before issuing the next: kPerLane round trips per step
  kParallel,  // each lane issues all kPerLane reads, then spins on those that found nothing yet
};
// Measured on the H200 (bench/tune/scan_lookback_tune.cu and compact_tune.cu, against CUB in the
// same programs): 8192-item tiles are faster with serial reads (scan 0.965x CUB vs 0.885x parallel;
// compaction 1.05x vs 0.94x), 4096-item tiles with parallel ones (compaction 0.935x vs 0.865x).
// With serial reads the nearest predecessors are polled last, after the far ones' round trips, so
// they have usually published by then; parallel reads make a step one round trip, which pays off
// where tiles are small and many. A __nanosleep of 32-500 ns between polls changed nothing
// measurable (docs/scan.md), so the walk polls without one.

// The exclusive prefix of `tile` (warp 0; every lane gets it) from a TileStatus-like `status`
// (publish/read of (flag, Acc)): walks back 32 * kPerLane tiles per step, combining aggregates until
// the nearest inclusive prefix, which ends the walk. Tiles before the row's first count as an
// inclusive identity.
// Each group of 32 predecessors is folded into the lane's running value as soon as it has been read,
// and the warp meets at a ballot after every group, so with serial reads one group's flag and value
// are live at a time, not kPerLane of each (the walk runs while the block's whole tile sits in
// registers). Measured: 1.003-1.016x CUB for the unchanged 4-block tile against 0.954-0.977x with
// all groups read before the first ballot (bench/tune/scan_bulk_tune.cu, session 10 device runs 3
// and 4); why it is that much faster is not established (docs/scan.md).
template <class Acc, class Op, int kPerLane = kLookbackPerLane, LookbackReads kReads = LookbackReads::kSerial,
          class Status>
__device__ Acc look_back(const Status& status, int64_t tile, int64_t row_first_tile, int lane) {
  const ScanOperator<Op> op;
  const Acc identity = ScanOperator<Op>::template identity<Acc>();
  Acc prefix = identity;
  for (int64_t end = tile;; end -= kWarpSize * kPerLane) {
    const int64_t farthest = end - kPerLane * kWarpSize + lane;  // this lane's predecessor in group 0
    TileFlag flag[kPerLane];
    Acc value[kPerLane];
    auto issue = [&](int j) {
      value[j] = identity;
      const int64_t predecessor = farthest + j * kWarpSize;
      flag[j] = predecessor >= row_first_tile ? status.read(predecessor, &value[j]) : kTileInclusive;
    };
    if constexpr (kReads == LookbackReads::kParallel) {
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) issue(j);
    }
    Acc mine = identity;
    bool found = false;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {  // group kPerLane - 1 is nearest to the tile
      if constexpr (kReads == LookbackReads::kSerial) issue(j);
      while (flag[j] == kTileInvalid) flag[j] = status.read(farthest + j * kWarpSize, &value[j]);
      // The nearest inclusive predecessor so far: everything before it is already inside its prefix.
      const unsigned inclusive = __ballot_sync(0xffffffffu, flag[j] == kTileInclusive);
      if (inclusive) {
        found = true;
        mine = lane >= kWarpSize - 1 - __clz(inclusive) ? value[j] : identity;
      } else {
        mine = op(mine, value[j]);
      }
    }
    prefix = op(warp_reduce(mine, op), prefix);
    if (found) return prefix;
  }
}

// Items per thread: 32 where items and accumulators are at most 4 bytes (a 32 KB tile of int32 or
// float32), else 16. Larger tiles mean fewer tiles in flight, so the look-back walks fewer
// predecessors to reach an inclusive prefix, and each tile's fixed costs (the counter, the block
// barriers, the walk) are spread over more bytes.
template <class In, class Out>
constexpr int lookback_items() {
  return lookback_items_for(sizeof(storage_t<In>), sizeof(scan_acc_t<Out>), sizeof(Out));
}

// The look-back tile folds its group prefixes into its items at the warp scan (StripedTile's
// kFoldPrefix): 8 live registers fewer per thread, which removed the 24-byte spill at the 64-register
// cut and measured 0.967-0.991x CUB against 0.954-0.977x without (bench/tune/scan_bulk_tune.cu,
// session 10 device run 3, int32 and float32 at 2^28 and 2^31 + 17).
constexpr bool kLookbackFoldPrefix = true;

template <class In, class Out, class Op, int kThreads = kLookbackThreads, int kItems = lookback_items<In, Out>(),
          bool kFoldPrefix = kLookbackFoldPrefix>
using LookbackTile = StripedTile<In, Out, Op, kThreads, kItems, kFoldPrefix>;

// Resident blocks per SM the register budget is cut for: a tile spends much of its life in latency
// (the counter, the look-back), so more tiles in flight keep more bytes in flight. 5 (48 registers)
// for 32-bit items and accumulators: with the folded tile and the lean walk it spills 16-24 bytes
// there and still ran 1.018-1.043x CUB against 0.993-1.014x at 4 blocks (64 registers, no spill)
// (bench/tune/scan_bulk_tune.cu, session 10 device run 4). The float16/bfloat16 tiles
// (conversions) and 64-bit accumulators spilled at 64 and 80 registers (ptxas -warn-spills, before
// the folded tile), so they keep 3 and 2.
template <class In, class Out>
constexpr int lookback_min_blocks() {
  return sizeof(storage_t<In>) == 4 && sizeof(Out) == 4 ? 5 : (lookback_items<In, Out>() == 32 ? 3 : 2);
}

// The template's shape parameters default to the library's choice; bench/tune/scan_lookback_tune.cu
// sweeps them.
template <class In, class Out, class Op, int kThreads = kLookbackThreads, int kItems = lookback_items<In, Out>(),
          int kMinBlocks = lookback_min_blocks<In, Out>(), int kPerLane = kLookbackPerLane,
          LookbackReads kReads = LookbackReads::kSerial, bool kFoldPrefix = kLookbackFoldPrefix>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
lookback_scan_kernel(const storage_t<In>* in, Out* out, ScanLayout layout,
                     int64_t tiles_per_row, unsigned long long* tile_counter, TileStatus<scan_acc_t<Out>> status,
                     bool exclusive, bool vector_ok) {
  using Tile = LookbackTile<In, Out, Op, kThreads, kItems, kFoldPrefix>;
  using Acc = typename Tile::Acc;
  const ScanOperator<Op> op;
  __shared__ Acc warp_totals[Tile::kWarps];
  __shared__ Acc warp_prefixes[Tile::kWarps];
  __shared__ int64_t tile_id;

  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (threadIdx.x == 0) tile_id = int64_t(atomicAdd(tile_counter, 1ull));
  __syncthreads();
  const int64_t tile = tile_id;
  const TileCoords c = layout.tile_coords(tile, tiles_per_row, Tile::kTileItems);

  Tile t;
  t.load(in + c.in_offset, layout.in_step, c.begin, layout.len, vector_ok, warp, lane);
  Acc aggregate;
  const Acc warp_exclusive = scan_tile_block(t, warp_totals, warp, lane, &aggregate, exclusive);
  if (warp == 0) {
    Acc prefix = ScanOperator<Op>::template identity<Acc>();
    if (c.chunk == 0) {
      if (lane == 0) status.publish(tile, kTileInclusive, aggregate);
    } else {
      if (lane == 0) status.publish(tile, kTileAggregate, aggregate);
      prefix = look_back<Acc, Op, kPerLane, kReads>(status, tile, tile - c.chunk, lane);
      if (lane == 0) status.publish(tile, kTileInclusive, op(prefix, aggregate));
    }
    if (lane < Tile::kWarps) warp_prefixes[lane] = op(prefix, warp_exclusive);
  }
  __syncthreads();

  t.store(out + c.out_offset, layout.out_step, c.begin, layout.len, vector_ok, warp_prefixes[warp], exclusive,
          c.begin == 0 && threadIdx.x == 0, warp, lane);
}

}  // namespace scan_detail
}  // namespace gpuprims
