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

// Widening scans (bool / int8 / int16 / int32 items into int64 results, float16 / bfloat16 into
// float32, ...): a lane's group of kVec items is more than 16 bytes of output, so the tile's own
// store (StripedTile::store) writes each lane's group as kVec * sizeof(Out) / 16 vectors, every warp
// instruction 32 pieces of 16 bytes at a stride of kVec * sizeof(Out) bytes (128 for int8 into
// int64). Phase B stores such tiles from the slot instead, read across the warp's lanes so that each
// warp instruction writes 512 contiguous bytes (HeldItems::store_transposed). Session 45 device run
// 4 (H200, bench/tune/scan_widen_tune.cu, 2^28 items, % of a cudaMemcpy's bytes a second, the tile's
// store -> transposed, library blocks an SM): int8 into int64 29.5 -> 70.0-70.6 (the look-back and
// torch.cumsum read 24 %), int16 into int64 44.5-45.1 -> 75.2-76.2, int32 into int64 69.3-69.6 ->
// 81.9-82.3, float16 into float32 73.2-73.4 -> 89.2-89.4.
template <class In, class Out>
constexpr bool held_transposes() {
  return held_transposes_for(sizeof(storage_t<In>), sizeof(scan_acc_t<Out>), sizeof(Out));
}

// A tile's items as 16-byte vectors in a slot: thread r's vector v at v * kThreads + (r ^ swizzle(v))
// (a warp's access covers 512 contiguous bytes, conflict-free). kTransposed: the slot is also read
// across lanes (store_transposed), where a quarter-warp reads kSwizzle consecutive lanes' vectors,
// 8 / kSwizzle consecutive ones of each: swizzle(v) = (v * kSwizzle) & 7 puts those 8 in 8 different
// 16-byte bank groups, as it does the 8 lanes of a quarter-warp's own vectors. Without it, 8 vectors
// of one lane (int8 into int64) would fall in one bank group.
template <class Tile, int kThreads, bool kTransposed = false>
struct HeldItems {
  using Acc = typename Tile::Acc;
  using Out = typename Tile::Output;
  static constexpr int kAccPerVector = 16 / int(sizeof(Acc));
  static constexpr int kVectors = Tile::kItems * int(sizeof(Acc)) / 16;
  static_assert(Tile::kItems * sizeof(Acc) % 16 == 0, "a thread's items fill whole 16-byte vectors");
  static constexpr int kSlotBytes = kVectors * kThreads * 16;
  static constexpr int kSwizzle = kTransposed ? 8 * kAccPerVector / Tile::kVec : 0;
  static_assert(!kTransposed || (kSwizzle >= 1 && kSwizzle <= 8 && sizeof(Out) == sizeof(Acc) && Tile::kFoldsPrefix),
                "a transposed slot holds whole output vectors of a prefix-folded tile");

  __device__ static int index(int v, int r) { return v * kThreads + (r ^ ((v * kSwizzle) & 7)); }

  __device__ static void store(uint4* slot, const Tile& t) {
    uint4 q[kVectors];
    memcpy(q, t.item, sizeof(q));
#pragma unroll
    for (int v = 0; v < kVectors; ++v) slot[index(v, threadIdx.x)] = q[v];
  }
  __device__ static void load(const uint4* slot, Tile& t) {
    uint4 q[kVectors];
#pragma unroll
    for (int v = 0; v < kVectors; ++v) q[v] = slot[index(v, threadIdx.x)];
    memcpy(t.item, q, sizeof(q));
  }

  // A full tile on the vector path, from its slot (a prefix-folded tile's scanned items): warp
  // instruction c of warp w writes output vector c * 32 + lane of the warp's items, op(prefix, item)
  // each, as StripedTile::store computes them (the row's first exclusive value the public identity,
  // written by thread 0 as there).
  template <class Op, StorePolicy kPolicy>
  __device__ static void store_transposed(const uint4* slot, Out* tile_out, Acc prefix, bool exclusive,
                                          bool row_start, int warp, int lane) {
    const ScanOperator<Op> op;
    Out* const warp_out = tile_out + warp * kWarpSize * Tile::kItems;
#pragma unroll
    for (int c = 0; c < kVectors; ++c) {
      const int i = (c * kWarpSize + lane) * kAccPerVector;  // the vector's first item in the warp's
      const int g = i / (kWarpSize * Tile::kVec);
      const int rem = i - g * kWarpSize * Tile::kVec;
      const int k = g * Tile::kVec + rem % Tile::kVec;  // its place among the source lane's items
      const uint4 q = slot[index(k / kAccPerVector, warp * kWarpSize + rem / Tile::kVec)];
      Acc a[kAccPerVector];
      memcpy(a, &q, sizeof(q));
      Vec16<Out> o;
#pragma unroll
      for (int j = 0; j < kAccPerVector; ++j) o.lane[j] = cast_value<Out>(op(prefix, a[j]));
      if (c == 0 && exclusive && row_start) o.lane[0] = cast_value<Out>(ScanOperator<Op>::template public_identity<Out, Acc>());
      store_vec16<Out, kPolicy>(warp_out + i, o);
    }
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
// into 64 bits (bool, int8, int16, ...) keep the look-back's 16-item tile, at 3 blocks an SM (two 32
// KiB slots, 80 registers: int16 into int64 with the transposed store took 85 at the former bound of
// 2 and ran 61.3-62.2 % of copy against 75.2-76.2 % at 3, no spill; session 45 device run 4, H200,
// bench/tune/scan_widen_tune.cu, 2^28 items).
template <class In, class Out>
constexpr bool held_twelve_items() {
  return held_twelve_items_for(sizeof(storage_t<In>), sizeof(scan_acc_t<Out>));
}
template <class In, class Out>
constexpr int held_items() {
  return held_items_for(sizeof(storage_t<In>), sizeof(scan_acc_t<Out>), sizeof(Out));
}
template <class In, class Out>
constexpr int held_min_blocks() {
  return held_twelve_items<In, Out>() ? 4 : kHeldScanMinBlocks;
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
// kTransposed: full tiles of widening scans stored from the slot across lanes (held_transposes).
template <class In, class Out, class Op, int kThreads = kLookbackThreads, int kItems = held_items<In, Out>(),
          int kMinBlocks = held_min_blocks<In, Out>(), int kPerLane = kHeldScanPerLane,
          bool kTransposed = held_transposes<In, Out>()>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
held_lookback_scan_kernel(const storage_t<In>* in, Out* out, ScanLayout layout, int64_t tiles_per_row, int64_t tiles,
                          unsigned long long* tile_counter, TileStatus<scan_acc_t<Out>> status, bool exclusive,
                          bool vector_ok) {
  using Tile = LookbackTile<In, Out, Op, kThreads, kItems>;
  using Acc = typename Tile::Acc;
  using Held = HeldItems<Tile, kThreads, kTransposed>;
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
    const bool row_start = c.begin == 0 && threadIdx.x == 0;
    if (kTransposed && vector_ok && c.begin + Tile::kTileItems <= layout.len) {
      __syncthreads();
      Held::template store_transposed<Op, kHeldScanStore>(slot_at(oldest), out + c.out_offset + c.begin,
                                                          sh.warp_prefixes[warp], exclusive, row_start, warp, lane);
    } else {
      Tile t;
      Held::load(slot_at(oldest), t);
      __syncthreads();
      t.template store<kHeldScanStore>(out + c.out_offset, layout.out_step, c.begin, layout.len, vector_ok,
                                       sh.warp_prefixes[warp], exclusive, row_start, warp, lane);
    }
    if (++oldest == kHeldScanSlots) oldest = 0;
    --count;
  }
}

}  // namespace scan_detail
}  // namespace gpuprims
