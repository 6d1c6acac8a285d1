#pragma once
// The warptile kernel (blocktile_128.cuh) with a Stream-K last wave, against wave quantization.
//
// A 4096^3 product has 512 tiles of 128x256; on 132 SMs at one block each that is 3.88 waves,
// and the fourth wave leaves 16 SMs idle for a quarter of the run. Here a persistent grid of
// exactly the resident blocks (G) runs floor(tiles / G) waves of whole tiles (data-parallel) and
// splits the K loops of the remaining tiles ("split tiles") evenly over all G blocks: their K
// slices, in units of `unit_slices` slices, are laid end to end (tile after tile) and block s
// takes units [s * S / G, (s + 1) * S / G) of the S in all, parts of at most two tiles when fewer
// tiles than blocks are split. (streamk_schedule's waves = 2 splits one more wave's worth of tiles:
// fewer whole tiles, the same balance, more fix-up traffic.)
//
// A split tile's pieces: a block whose range ends inside a tile (its last piece) writes that
// piece's 128x256 float32 partial to its own workspace slot and adds the piece's unit count to the
// tile's flag (release); the block whose range holds the tile's last unit (the "finisher") waits
// until the flag counts every unit before its own (acquire), adds the other pieces' partials in
// slot order (fixed by the shape and G alone: bitwise the same from run to run) to its own, and
// stores the tile. Each block has at most one unfinished piece (only a range's last piece can stop
// inside a tile), so one slot a block suffices.
//
// Forward progress without assuming that all G blocks are resident at once: a block's role comes
// from a ticket (atomicInc at its start), not from blockIdx. Pieces of one tile belong to
// consecutive tickets and the finisher holds the largest, so a block waits only on blocks with
// smaller tickets, which took theirs earlier and are therefore running or done; and every block
// runs its unfinished piece (which never waits) before anything else, so each awaited partial is
// published without that block waiting on anything.
//
// No per-launch reset: atomicInc(ticket, G - 1) wraps to 0 after the G-th ticket, and each
// finisher sets its tile's flag back to 0 after reading it (no other block touches it again in
// the launch), so the counters are zero whenever no launch is running (stream_counters'
// contract). The partial slots need no zeroing: each is written before its flag is raised.
#include <cuda/atomic>

#include "gpuprims/gemm/blocktile_128.cuh"

namespace gpuprims {
namespace gemm {

// Where the split tiles go and who runs the whole ones:
//   kSplitFirst  split tiles first in TileOrder, each block runs its pieces, then its whole tiles
//   kSplitLast   split tiles last, each block runs its whole tiles, then its pieces
//   kSplitOnly   split tiles last, this launch runs only them: the whole tiles are left to a
//                blocked_128_kernel launch before it (tile_end = StreamKSchedule::split_begin),
//                so the full waves keep that kernel's code (fewer registers, no schedule)
enum class StreamKMode { kSplitFirst, kSplitLast, kSplitOnly };

// What the library's warptile variant runs on the 16-byte loaders (variant_warptile.cu): the
// harness row "hybrid small w1 u2" (bench/tune/gemm_tune.cu; docs/gemm.md, sixth sweep): the
// 128x128 tiling at two blocks per SM, the whole waves by blocked_128_kernel and the tiles past
// them split in units of two 16-deep slices by a second launch. H200, 4096^3: 0.873x / 0.869x
// cuBLAS against 0.868x / 0.861x for the plain 128x256 tiling; 1000^3 (64 tiles, all split):
// 0.840x / 0.811x against 0.541x / 0.528x.
struct WarptileStreamK {
  using Config = WarptileSmallConfig;
  static constexpr int kWaves = 1, kUnitSlices = 2;
  static constexpr StreamKMode kMode = StreamKMode::kSplitOnly;
};

// What one launch splits, computed on the host (streamk_schedule) for a grid of `grid` blocks.
struct StreamKSchedule {
  int64_t split_begin, split_tiles;  // TileOrder tiles [split_begin, + split_tiles) are split
  int64_t whole_begin, whole_tiles;  // tiles [whole_begin, + whole_tiles) run whole in this launch
  int64_t units_per_tile;            // ceil(K slices / unit_slices)
  int64_t units;                     // split_tiles * units_per_tile: the S above
  int64_t unit_k;                    // K per unit: unit_slices * kTileK
  bool whole_first;                  // a block runs its whole tiles before its pieces
  float* partials;                   // one kTileM x kTileN slot per block
  unsigned int* counters;            // [0]: the ticket; [1 + x]: the units published for split tile x
};

// waves: how many waves' worth of tiles are split: 1 splits the tiles past the last full wave
// (none when the tiles fill whole waves), 2 one wave more (when there are that many).
template <class Cfg>
inline StreamKSchedule streamk_schedule(const GemmParams& p, int64_t grid, int waves, int unit_slices,
                                        StreamKMode mode, float* partials, unsigned int* counters) {
  StreamKSchedule w{};
  const int64_t tiles = (p.m + Cfg::kTileM - 1) / Cfg::kTileM * ((p.n + Cfg::kTileN - 1) / Cfg::kTileN) * p.batch;
  const int64_t rest = tiles % grid;
  w.unit_k = int64_t(unit_slices) * Cfg::kTileK;
  w.units_per_tile = (p.k + w.unit_k - 1) / w.unit_k;
  w.split_tiles = rest == 0 || w.units_per_tile == 0 ? 0 : rest + (waves - 1) * grid;  // K = 0: nothing to split
  if (w.split_tiles > tiles) w.split_tiles = rest;
  w.units = w.split_tiles * w.units_per_tile;
  w.split_begin = mode == StreamKMode::kSplitFirst ? 0 : tiles - w.split_tiles;
  w.whole_begin = mode == StreamKMode::kSplitFirst ? w.split_tiles : 0;
  w.whole_tiles = mode == StreamKMode::kSplitOnly ? 0 : tiles - w.split_tiles;
  w.whole_first = mode == StreamKMode::kSplitLast;
  w.partials = partials;
  w.counters = counters;
  return w;
}

// The split tiles' unit ranges of tickets: block s owns units [begin(s), begin(s + 1)).
struct StreamKRanges {
  int64_t units, grid;
  __device__ __forceinline__ int64_t begin(int64_t s) const { return s * units / grid; }
  // The block owning unit g: the largest s with begin(s) <= g, i.e. s * units < (g + 1) * grid.
  __device__ __forceinline__ int64_t owner(int64_t g) const { return ((g + 1) * grid - 1) / units; }
};

// A partial slot in thread-major float4 chunks: chunk q of thread t at (q * kThreads + t) * 4, so a
// warp writes and reads 512 consecutive bytes per chunk.
template <class Cfg>
__device__ __forceinline__ float* partial_chunk(float* slot, int q, int t) {
  return slot + (int64_t(q) * Cfg::kThreads + t) * 4;
}

template <class Cfg>
__device__ __forceinline__ void write_partial(float* slot, int t, const float (&acc)[Cfg::kThreadM][Cfg::kThreadN]) {
#pragma unroll
  for (int i = 0; i < Cfg::kThreadM; ++i) {
#pragma unroll
    for (int j = 0; j < Cfg::kThreadN; j += 4) {
      __stcg(reinterpret_cast<float4*>(partial_chunk<Cfg>(slot, (i * Cfg::kThreadN + j) / 4, t)),
             make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
    }
  }
}

// Through L2 (__ldcg): the slot was written by another SM, whose data this SM's L1 does not track.
template <class Cfg>
__device__ __forceinline__ void add_partial(const float* slot, int t, float (&acc)[Cfg::kThreadM][Cfg::kThreadN]) {
#pragma unroll
  for (int i = 0; i < Cfg::kThreadM; ++i) {
#pragma unroll
    for (int j = 0; j < Cfg::kThreadN; j += 4) {
      const float4 v = __ldcg(reinterpret_cast<const float4*>(
          partial_chunk<Cfg>(const_cast<float*>(slot), (i * Cfg::kThreadN + j) / 4, t)));
      acc[i][j] += v.x;
      acc[i][j + 1] += v.y;
      acc[i][j + 2] += v.z;
      acc[i][j + 3] += v.w;
    }
  }
}

// One work item of a block: a piece of split tile `split` (units [u0, u1) of it) or, with split
// = -1, a whole tile; `tile` = -1 past the block's last item.
struct StreamKItem {
  TileOrigin tile_origin;  // filled by the kernel
  int64_t tile, split, u0, u1;
};

// Item `item` of the block holding ticket s: its pieces of split tiles (the unfinished one first),
// then its whole tiles s, s + G, ... (or the whole tiles first: whole_first).
__device__ __forceinline__ StreamKItem streamk_item(const StreamKSchedule& w, int64_t grid, int64_t s, int64_t item) {
  const StreamKRanges ranges{w.units, grid};
  const int64_t upt = w.units_per_tile;
  int64_t unit_lo = 0, unit_hi = 0, first = 0, last = -1;
  if (w.units > 0) {
    unit_lo = ranges.begin(s);
    unit_hi = ranges.begin(s + 1);
    if (unit_lo < unit_hi) {
      first = unit_lo / upt;
      last = (unit_hi - 1) / upt;
    }
  }
  const bool open_end = last >= first && unit_hi < (last + 1) * upt;  // the last piece is unfinished
  const int64_t pieces = last - first + 1;
  const int64_t whole = s < w.whole_tiles ? (w.whole_tiles - 1 - s) / grid + 1 : 0;
  StreamKItem it{{0, 0, 0}, -1, -1, 0, upt};
  const int64_t piece = w.whole_first ? item - whole : item;
  if (piece >= 0 && piece < pieces) {
    const int64_t x = open_end ? (piece == 0 ? last : first + piece - 1) : first + piece;
    it.split = x;
    it.u0 = (unit_lo > x * upt ? unit_lo : x * upt) - x * upt;
    it.u1 = (unit_hi < (x + 1) * upt ? unit_hi : (x + 1) * upt) - x * upt;
    it.tile = w.split_begin + x;
  } else if (item < pieces + whole) {
    it.tile = w.whole_begin + s + (w.whole_first ? item : item - pieces) * grid;
  }
  return it;
}

// Launch with exactly the grid streamk_schedule was given (more blocks than are resident would not
// hang, see above, but only queue) and the 16-byte loaders' layout (dispatch's a_vec_rows and
// b_vec_rows).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, (blocked_min_blocks<Cfg, true>()))
    warptile_streamk_kernel(GemmParams p, StreamKSchedule w) {
  constexpr int kSliceA = Cfg::kTileK * Cfg::kLda, kSliceB = Cfg::kTileK * Cfg::kTileN;  // words
  static_assert(2 * (kSliceA + kSliceB) * 4 <= 48 * 1024, "static shared memory is limited to 48 KiB");
  __shared__ __align__(16) float as[2 * kSliceA];
  __shared__ __align__(16) float bs[2 * kSliceB];
  // Thread 0 works out the schedule and hands each item over in shared memory: the 128
  // accumulators and the loop leave no registers for it (kept in every thread, it spilled).
  __shared__ unsigned int ticket;
  __shared__ StreamKItem cur;
  const int t = threadIdx.x;
  const ThreadBlockMap<Blocked128Step::kWarptile, Cfg> map(t);
  const int64_t grid = gridDim.x;
  if (t == 0) ticket = atomicInc(w.counters, static_cast<unsigned int>(grid - 1));
  for (int64_t item = 0;; ++item) {
    __syncthreads();  // everyone is done with the previous item's `cur` (and `ticket` is visible)
    if (t == 0) {
      cur = streamk_item(w, grid, ticket, item);
      if (cur.tile >= 0) cur.tile_origin = TileOrder<Cfg::kTileM, Cfg::kTileN, Cfg::kGroupM>(p).origin(cur.tile);
    }
    __syncthreads();
    if (cur.tile < 0) break;
    float acc[Cfg::kThreadM][Cfg::kThreadN] = {};
    {
      const TileOrigin o = cur.tile_origin;
      const int64_t k_begin = cur.u0 * w.unit_k, k_end = cur.u1 * w.unit_k < p.k ? cur.u1 * w.unit_k : p.k;
      Blocked128Slices<Cfg, true> slices(p, o.z, o.m0, o.n0, t, k_begin);
      multiply_k_range<Cfg>(p, slices, k_begin, k_end, as, bs, t, map, acc);
    }
    const int64_t x = cur.split, u0 = cur.u0, u1 = cur.u1;
    if (x >= 0) {
      const int64_t s = ticket;
      cuda::atomic_ref<unsigned int, cuda::thread_scope_device> flag(w.counters[1 + x]);
      if (u1 < w.units_per_tile) {
        // Unfinished: publish. Every thread's fence orders its slot writes before thread 0's
        // release add (after the barrier), which the finisher's acquire load pairs with.
        write_partial<Cfg>(w.partials + s * (Cfg::kTileM * Cfg::kTileN), t, acc);
        __threadfence();
        __syncthreads();
        if (t == 0) flag.fetch_add(static_cast<unsigned int>(u1 - u0), cuda::memory_order_release);
        continue;
      }
      if (u0 > 0) {
        if (t == 0) {
          while (flag.load(cuda::memory_order_acquire) != static_cast<unsigned int>(u0)) __nanosleep(64);
          flag.store(0, cuda::memory_order_relaxed);  // reset for the next launch (nobody else reads it)
        }
        __syncthreads();  // thread 0's acquire, then the whole block reads the slots
        const StreamKRanges ranges{w.units, grid};
        for (int64_t r = ranges.owner(x * w.units_per_tile); r < s; ++r) {
          if (ranges.begin(r) < ranges.begin(r + 1)) add_partial<Cfg>(w.partials + r * (Cfg::kTileM * Cfg::kTileN), t, acc);
        }
      }
    }
    const TileOrigin o = cur.tile_origin;
    store_outputs(p, o.z, o.m0, o.n0, map, acc);
  }
}

}  // namespace gemm
}  // namespace gpuprims
