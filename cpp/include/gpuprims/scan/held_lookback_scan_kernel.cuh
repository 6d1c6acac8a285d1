#pragma once
// The held single-pass scan: every tile is read once, from DRAM, and kept in shared memory by the
// block that read it until its prefix is cheap to find (the norms' row_hold, row_hold.cuh, applied to
// the look-back).
//
// A persistent grid takes tiles in ticket order from a global counter. The block holding ticket t
//  * phase A: loads tile t, scans it within each warp (StripedTile, group prefixes folded in),
//    stores the scanned items into one of its shared-memory slots (each thread its own vectors, so
//    no barrier guards them), scans the warp totals and publishes the tile's aggregate at once (a
//    row's first tile: its inclusive prefix);
//  * once all its slots are full, phase B on its oldest tile: looks back for the exclusive prefix,
//    publishes the inclusive one, and stores the held items with the prefix applied.
// Between a block's tickets every other resident block takes one, so a held tile's predecessors
// published their aggregates about a round of tickets earlier and the walk rarely waits; the lagged
// scan (lagged_lookback_scan_kernel.cuh) gets the same effect by reading each tile twice (the second
// read from L2), this one by keeping it on chip: the data crosses the memory system once, as in a copy.
//
// Forward progress: a block takes a ticket only with a slot free and runs its phase A at once,
// without waiting, so every ticket taken is published by a running block. Phase B of tile j waits
// only for tiles < j, taken earlier, hence published or about to be. No co-residency is needed (a
// plain launch), and any grid size is correct.
//
// Memory ordering: the status words of the look-back (tile_status.cuh). In place (out == in) a tile's
// store overwrites only items its own threads read in phase A.
#include <cstdint>
#include <cstring>

#include "gpuprims/scan/lookback_scan_kernel.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace scan_detail {

constexpr int kHeldScanSlots = 2;

// Phase A's read: the tile is not read again, so it is not allocated in L1. The stores stream
// (st.global.cs), as the lagged scan's.
constexpr LoadPolicy kHeldScanRead = LoadPolicy::kStreaming;
constexpr StorePolicy kHeldScanStore = StorePolicy::kStreaming;

// A tile's items as 16-byte vectors in a slot: thread r's vector v at v * kThreads + r (a warp's
// access covers 512 contiguous bytes, conflict-free).
template <class Tile, int kThreads>
struct HeldItems {
  using Acc = typename Tile::Acc;
  static constexpr int kVectors = Tile::kItems * int(sizeof(Acc)) / 16;
  static_assert(Tile::kItems * sizeof(Acc) % 16 == 0, "a thread's items fill whole 16-byte vectors");
  static constexpr int kSlotBytes = kVectors * kThreads * 16;

  __device__ static void store(uint4* slot, const Tile& t) {
    uint4 q[kVectors];
    memcpy(q, t.item, sizeof(q));
#pragma unroll
    for (int v = 0; v < kVectors; ++v) slot[v * kThreads + threadIdx.x] = q[v];
  }
  __device__ static void load(const uint4* slot, Tile& t) {
    uint4 q[kVectors];
#pragma unroll
    for (int v = 0; v < kVectors; ++v) q[v] = slot[v * kThreads + threadIdx.x];
    memcpy(t.item, q, sizeof(q));
  }
};

template <class Acc, int kWarps>
struct HeldScanShared {
  Acc warp_totals[kWarps];                   // phase A: the warps' totals
  Acc warp_prefixes[kWarps];                 // phase B: each warp's prefix, the tile's included
  Acc held_prefixes[kHeldScanSlots][kWarps];  // per slot: each warp's exclusive prefix in its tile
  Acc held_aggregate[kHeldScanSlots];
  long long held_tile[kHeldScanSlots];
  long long ticket[2];  // slot `turn` is rewritten two tickets later, after the barrier in between
};

// The shape, measured on the H200 (bench/tune/scan_held_tune.cu, session 43 device runs 1-2, int32
// and float32 inclusive sums of 2^28 items, x CUB InclusiveSum in the same program): the look-back's
// 256 x 32 tile, two 32 KiB slots, 3 blocks an SM (80 registers, 192 KiB of slots an SM), and a
// 32-tile window: 1.215-1.220x at 89.4-89.9 % of cudaMemcpy (2^31 + 17 int32: 1.214x), against
// 1.170-1.177x with a 64-tile window, 1.110-1.118x with 128 and 0.985-0.992x with 256. A walk's
// groups are read one after another, farthest first, and the nearest 32 predecessors nearly always
// hold an inclusive prefix, so each extra group is an L2 round trip on the path to the block's
// stores. 256 x 24 tiles at 4 blocks an SM: 1.171-1.175x; 256 x 16 at 5: 1.170-1.175x; the grid
// cut to 2 blocks an SM: 0.952-0.955x (128-tile window).
constexpr int kHeldScanMinBlocks = 3;
constexpr int kHeldScanPerLane = 1;

// 64-bit accumulators: 256 x 12 tiles (24 KiB slots) at 4 blocks an SM (64 registers). Session 44
// device run 5 (H200, bench/tune/scan_held_tune.cu --wide, int64 / float64 inclusive sums of 2^27
// items, 16-byte status words, x CUB InclusiveSum in the same program, two passes): 12 x 4
// 1.063-1.066x / 1.083-1.086x (93.0 / 89.8 % of a copy kernel); 12 x 3 1.028-1.031 / 1.078-1.081;
// 16 x 3 1.030-1.033 / 0.998-1.003; 16 x 2 (the shape until then) 0.956-0.958 / 1.012-1.017; 8 x 4
// 1.005-1.011 / 1.057-1.060; 8 x 6 0.938-0.943 / 0.988-0.991; the look-back 0.960-0.961 / 0.881-0.884.
// 12 items a thread are whole 16-byte loads of 4- and 8-byte items only: 1- and 2-byte items summed
// into 64 bits (bool, int8, int16, ...) keep the look-back's 16-item tile at 2 blocks an SM (80
// registers; unmeasured).
template <class In, class Out>
constexpr bool held_twelve_items() {
  return sizeof(scan_acc_t<Out>) == 8 && sizeof(storage_t<In>) >= 4;
}
template <class In, class Out>
constexpr int held_items() {
  return held_twelve_items<In, Out>() ? 12 : lookback_items<In, Out>();
}
template <class In, class Out>
constexpr int held_min_blocks() {
  return sizeof(scan_acc_t<Out>) <= 4 ? kHeldScanMinBlocks : (held_twelve_items<In, Out>() ? 4 : 2);
}
template <class In, class Out, class Op>
using HeldTile = LookbackTile<In, Out, Op, kLookbackThreads, held_items<In, Out>()>;

// Dynamic shared memory of held_lookback_scan_kernel<In, Out, Op, kThreads, kItems, ...> (by default
// the library's shape).
template <class In, class Out, class Op, int kThreads = kLookbackThreads, int kItems = held_items<In, Out>()>
constexpr int held_scan_smem_bytes() {
  return kHeldScanSlots * HeldItems<LookbackTile<In, Out, Op, kThreads, kItems>, kThreads>::kSlotBytes;
}

// Launch with any number of blocks (at most the resident ones are useful), kThreads threads,
// held_scan_smem_bytes() of dynamic shared memory, and the counter and the `tiles` status words
// zeroed.
template <class In, class Out, class Op, int kThreads = kLookbackThreads, int kItems = held_items<In, Out>(),
          int kMinBlocks = held_min_blocks<In, Out>(), int kPerLane = kHeldScanPerLane>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
held_lookback_scan_kernel(const storage_t<In>* in, Out* out, ScanLayout layout, int64_t tiles_per_row, int64_t tiles,
                          unsigned long long* tile_counter, TileStatus<scan_acc_t<Out>> status, bool exclusive,
                          bool vector_ok) {
  using Tile = LookbackTile<In, Out, Op, kThreads, kItems>;
  using Acc = typename Tile::Acc;
  using Held = HeldItems<Tile, kThreads>;
  const ScanOperator<Op> op;
  extern __shared__ uint4 held_vectors[];  // kHeldScanSlots slots of Held::kSlotBytes
  __shared__ HeldScanShared<Acc, Tile::kWarps> sh;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  auto slot_at = [&](int slot) { return held_vectors + slot * (Held::kSlotBytes / 16); };

  // The same in every thread: the held tiles are slots oldest, oldest + 1, ... (count of them).
  int count = 0, oldest = 0;
  bool tickets_left = true;
  for (int turn = 0;; turn ^= 1) {
    if (tickets_left) {
      if (threadIdx.x == 0) sh.ticket[turn] = static_cast<long long>(atomicAdd(tile_counter, 1ull));
      __syncthreads();
      const int64_t tile = sh.ticket[turn];
      if (tile < tiles) {
        int slot = oldest + count;
        if (slot >= kHeldScanSlots) slot -= kHeldScanSlots;
        const TileCoords c = layout.tile_coords(tile, tiles_per_row, Tile::kTileItems);
        Tile t;
        t.template load<kHeldScanRead>(in + c.in_offset, layout.in_step, c.begin, layout.len, vector_ok, warp, lane);
        // scan_tile_block's steps, with the slot's store between the warp scan and the barrier: the
        // items are final once scanned, and their registers are free across the wait.
        const Acc warp_total = t.scan_warp(lane, exclusive);
        Held::store(slot_at(slot), t);
        if (lane == 0) sh.warp_totals[warp] = warp_total;
        __syncthreads();
        if (warp == 0) {
          Acc aggregate;
          const Acc warp_exclusive = scan_warp_totals<Acc, Op, Tile::kWarps>(sh.warp_totals, lane, &aggregate);
          if (lane == 0) status.publish(tile, c.chunk == 0 ? kTileInclusive : kTileAggregate, aggregate);
          if (lane < Tile::kWarps) sh.held_prefixes[slot][lane] = warp_exclusive;
          if (lane == 0) {
            sh.held_aggregate[slot] = aggregate;
            sh.held_tile[slot] = tile;
          }
        }
        if (++count < kHeldScanSlots) continue;
      } else {
        tickets_left = false;
      }
    }
    if (count == 0) break;
    // The oldest slot's tile, prefixes and aggregate (written by warp 0 before a barrier since).
    __syncthreads();
    const int64_t tile = sh.held_tile[oldest];
    const TileCoords c = layout.tile_coords(tile, tiles_per_row, Tile::kTileItems);
    if (warp == 0) {
      Acc prefix = ScanOperator<Op>::template identity<Acc>();
      if (c.chunk != 0) {
        prefix = look_back<Acc, Op, kPerLane>(status, tile, tile - c.chunk, lane);
        if (lane == 0) status.publish(tile, kTileInclusive, op(prefix, sh.held_aggregate[oldest]));
      }
      if (lane < Tile::kWarps) sh.warp_prefixes[lane] = op(prefix, sh.held_prefixes[oldest][lane]);
    }
    Tile t;
    Held::load(slot_at(oldest), t);
    __syncthreads();
    t.template store<kHeldScanStore>(out + c.out_offset, layout.out_step, c.begin, layout.len, vector_ok,
                                     sh.warp_prefixes[warp], exclusive, c.begin == 0 && threadIdx.x == 0, warp, lane);
    if (++oldest == kHeldScanSlots) oldest = 0;
    --count;
  }
}

}  // namespace scan_detail
}  // namespace gpuprims
