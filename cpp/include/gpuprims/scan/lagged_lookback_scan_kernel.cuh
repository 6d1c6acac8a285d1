#pragma once
// The lagged single-pass scan: every tile is read twice, once from DRAM for its aggregate and once,
// L tickets later, from L2 for its scan, so that the DRAM read never waits for a prefix.
//
// Tickets come from a global counter (T tiles, lag L). In the A-then-B schedule the block holding
// ticket t = 0 .. T + L - 1 runs
//  * phase A (t < T): loads tile t, reduces it and publishes its aggregate at once (the row's first
//    tile publishes it as its inclusive prefix);
//  * phase B (t >= L): tile j = t - L: looks back over the status words of the tiles before j for its
//    exclusive prefix, publishes j's inclusive prefix (its aggregate is in its own status word since
//    phase A), reloads tile j (read from DRAM L tickets ago, so an L2 hit while L tiles plus the tiles
//    in flight fit in L2), scans it with the prefix and stores it.
// DRAM traffic stays one read and one write of the data (a copy's); the L2 serves the second read.
// The walk of phase B finds the aggregates of tiles j-1, j-2, ... published L tickets ago and the
// inclusive prefix of j-1 published one ticket ago, so it rarely waits on a DRAM read. The split
// schedule gives the two phases to separate blocks: ticket 2k runs phase A of tile k, ticket 2k + 1
// phase B of tile k - L (T + L tickets of each kind).
//
// Forward progress: phase A waits for nothing. Phase B of tile j waits only for the status words of
// tiles < j, whose aggregates are published by phase A under tickets smaller than B's own (j < j + L;
// 2i < 2(j + L) + 1 in the split schedule), i.e. by blocks that drew their tickets earlier, are
// therefore running, and reach their phase A without waiting (A comes first in its block). So every
// aggregate a walk needs is published whatever the scheduler does, and every walk ends (at the
// row's first tile at the latest). Any L >= 0 is correct (L = 0 is the plain look-back with a
// reload); L is a runtime argument.
//
// Memory ordering of the status words: tile_status.cuh (one relaxed 64-bit word for 32-bit
// accumulators; flag with release / acquire and two value slots for 64-bit ones). A tile's word goes
// from invalid to aggregate (phase A) to inclusive (phase B); in the two-slot layout the inclusive
// prefix has a slot of its own, so a reader that saw the aggregate flag still reads the aggregate.
#include <cstdint>

#include "gpuprims/scan/lookback_scan_kernel.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace scan_detail {

// Who does what with a ticket. (Measured and dropped, session 12 device run 1, commit 8a35041: a
// block issuing the DRAM loads of tile t, running phase B of tile t - L while they fly, then
// reducing tile t -- two tiles in registers, 2 blocks/SM: 0.77-0.78x CUB; and phase B walking back
// before its reload rather than while the reload flies: 0.99-1.00x against 1.07x.)
enum class LagSchedule {
  kAThenB,  // ticket t: phase A of tile t, then phase B of tile t - L (one tile in registers at a time)
  kSplit,   // ticket 2k: phase A of tile k; ticket 2k + 1: phase B of tile k - L (lighter blocks)
};

// The schedule and the cache hints of the three memory streams: the DRAM read of phase A, the
// reload of phase B, the store.
template <LagSchedule kSchedule_, LoadPolicy kFirstLoad_, LoadPolicy kReload_, StorePolicy kStore_>
struct LagOptions {
  static constexpr LagSchedule kSchedule = kSchedule_;
  static constexpr LoadPolicy kFirstLoad = kFirstLoad_;
  static constexpr LoadPolicy kReload = kReload_;
  static constexpr StorePolicy kStore = kStore_;
};
using DefaultLagOptions =
    LagOptions<LagSchedule::kSplit, LoadPolicy::kL2EvictLast, LoadPolicy::kL2EvictFirst, StorePolicy::kStreaming>;

// Tiles between a tile's two reads. Too short, and phase B waits for phase A's DRAM reads of the
// tiles just before it: in the split schedule a tile's two phases are 2L + 1 tickets apart, and
// 4 x 132 = 528 blocks are in flight on an H200. Too long, and the tiles no longer wait in L2: 384
// tiles of 32 KB are 12 MiB, plus ~8 MiB of tiles in flight, of the H200's 50 MB. Measured on the
// H200 (bench/tune/scan_lagged_tune.cu, session 12 device run 2, split, 4 blocks/SM, x CUB, int32):
// L = 128 0.978-0.981, 192 1.048, 256 1.069-1.073, 384 1.076-1.080 (float32 1.069-1.072, 2^31 + 17
// 1.081); run 1 (A-then-B, 5 blocks/SM): 512 and 1024 11-18 % slower than 256.
constexpr int64_t kDefaultLag = 384;

// Resident blocks per SM the register budget is cut for: 4 (64 registers) for 32-bit items and
// results, where 5 (48 registers) spilled 40-96 bytes and lost 10-20 % (session 12 device run 1);
// the look-back's 3 and 2 for the wider tiles.
template <class In, class Out>
constexpr int lagged_min_blocks() {
  return sizeof(storage_t<In>) == 4 && sizeof(Out) == 4 ? 4 : lookback_min_blocks<In, Out>();
}

// Blocks (tickets) a launch of `tiles` tiles with lag `lag` takes.
inline int64_t lagged_tickets(int64_t tiles, int64_t lag, LagSchedule schedule) {
  return (schedule == LagSchedule::kSplit ? 2 : 1) * (tiles + lag);
}

template <class Acc, int kWarps>
struct LaggedShared {
  Acc warp_sums[kWarps];      // phase A's per-warp reductions
  Acc warp_totals[kWarps];    // phase B's per-warp scan totals
  Acc warp_prefixes[kWarps];  // phase B's per-warp exclusive prefixes, the tile's prefix included
  int64_t ticket;
};

// Phase A's end: reduces the loaded tile (every thread) and publishes its aggregate (warp 0, lane 0).
template <class Tile, class Status>
__device__ void publish_tile_aggregate(const Tile& t, int64_t tile, int64_t chunk, typename Tile::Acc* warp_sums,
                                       const Status& status, int warp, int lane) {
  using Acc = typename Tile::Acc;
  const ScanOperator<typename Tile::Operator> op;
  const Acc warp_sum = warp_reduce(t.reduce_thread(), op);
  if (lane == 0) warp_sums[warp] = warp_sum;
  __syncthreads();
  if (warp == 0) {
    const Acc identity = ScanOperator<typename Tile::Operator>::template identity<Acc>();
    const Acc aggregate = warp_reduce(lane < Tile::kWarps ? warp_sums[lane] : identity, op);
    if (lane == 0) status.publish(tile, chunk == 0 ? kTileInclusive : kTileAggregate, aggregate);
  }
}

// Phase B: tile `tile` (its aggregate already published) reloaded, its prefix looked back for and
// its inclusive prefix published while the reload is in flight, then scanned and stored.
template <class Options, int kPerLane, class Tile, class Status, class Out>
__device__ void scan_lagged_tile(Tile& t, int64_t tile, const TileCoords& c, const typename Tile::S* in, Out* out,
                                 const ScanLayout& layout, const Status& status, bool exclusive, bool vector_ok,
                                 LaggedShared<typename Tile::Acc, Tile::kWarps>& sh, int warp, int lane) {
  using Acc = typename Tile::Acc;
  using Op = typename Tile::Operator;
  const ScanOperator<Op> op;
  t.template load<Options::kReload>(in + c.in_offset, layout.in_step, c.begin, layout.len, vector_ok, warp, lane);
  Acc prefix = ScanOperator<Op>::template identity<Acc>();
  if (warp == 0 && lane == 0 && c.chunk == 0) {
    // A row's first tile needs no prefix, but phase A of this tile (an earlier ticket, another
    // block) may still be reading it: with out == in (in place) the store below must wait until
    // its aggregate is published, i.e. its loads were consumed (the barrier before the store
    // holds the block here).
    Acc unused = prefix;
    while (status.read(tile, &unused) == kTileInvalid) {
    }
  }
  if (warp == 0 && c.chunk != 0) {
    Acc aggregate = prefix;
    // Lane 0's read of the tile's own word travels while the warp walks back.
    TileFlag own = lane == 0 ? status.read(tile, &aggregate) : kTileAggregate;
    prefix = look_back<Acc, Op, kPerLane>(status, tile, tile - c.chunk, lane);
    if (lane == 0) {
      while (own == kTileInvalid) own = status.read(tile, &aggregate);
      status.publish(tile, kTileInclusive, op(prefix, aggregate));
    }
  }
  Acc unused_aggregate;
  const Acc warp_exclusive = scan_tile_block(t, sh.warp_totals, warp, lane, &unused_aggregate, exclusive);
  if (warp == 0 && lane < Tile::kWarps) sh.warp_prefixes[lane] = op(prefix, warp_exclusive);
  __syncthreads();
  t.template store<Options::kStore>(out + c.out_offset, layout.out_step, c.begin, layout.len, vector_ok,
                                    sh.warp_prefixes[warp], exclusive, c.begin == 0 && threadIdx.x == 0, warp, lane);
}

// Launch with lagged_tickets(tiles, lag, Options::kSchedule) blocks of kThreads threads and the
// counter and the `tiles` status words zeroed. The tile shape defaults to the look-back's.
template <class In, class Out, class Op, class Options = DefaultLagOptions, int kThreads = kLookbackThreads,
          int kItems = lookback_items<In, Out>(), int kMinBlocks = lagged_min_blocks<In, Out>(),
          int kPerLane = kLookbackPerLane>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
lagged_lookback_scan_kernel(const storage_t<In>* in, Out* out, ScanLayout layout,
                            int64_t tiles_per_row, int64_t tiles, int64_t lag, unsigned long long* tile_counter,
                            TileStatus<scan_acc_t<Out>> status, bool exclusive, bool vector_ok) {
  using Tile = LookbackTile<In, Out, Op, kThreads, kItems>;
  using Acc = typename Tile::Acc;
  __shared__ LaggedShared<Acc, Tile::kWarps> sh;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (threadIdx.x == 0) sh.ticket = int64_t(atomicAdd(tile_counter, 1ull));
  __syncthreads();
  const int64_t ticket = sh.ticket;

  // Both tiles' coordinates before any tile is in registers, in both schedules (ptxas -v, nvcc 13.0,
  // int32: A-then-B at 5 blocks/SM spilled 148 bytes, against 256 with B's coordinates computed
  // inside phase B; the split schedule at 4 blocks/SM none, against 16 with only its own tile's).
  const bool split = Options::kSchedule == LagSchedule::kSplit;
  const bool has_a = split ? ticket % 2 == 0 && ticket / 2 < tiles : ticket < tiles;
  const bool has_b = split ? ticket % 2 == 1 && ticket / 2 >= lag : ticket >= lag;
  const int64_t tile_a = split ? ticket / 2 : ticket, tile_b = tile_a - lag;
  const TileCoords ca = layout.tile_coords(has_a ? tile_a : 0, tiles_per_row, Tile::kTileItems);
  const TileCoords cb = layout.tile_coords(has_b ? tile_b : 0, tiles_per_row, Tile::kTileItems);

  Tile t;
  if (has_a) {
    t.template load<Options::kFirstLoad>(in + ca.in_offset, layout.in_step, ca.begin, layout.len, vector_ok, warp,
                                         lane);
    publish_tile_aggregate(t, tile_a, ca.chunk, sh.warp_sums, status, warp, lane);
  }
  if (has_b)
    scan_lagged_tile<Options, kPerLane>(t, tile_b, cb, in, out, layout, status, exclusive, vector_ok, sh, warp, lane);
}

}  // namespace scan_detail
}  // namespace gpuprims
