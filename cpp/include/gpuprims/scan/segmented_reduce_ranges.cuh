#pragma once
// Segmented reduction that stays balanced on any segment lengths: a merge-path partition of the
// n + count "work units" (every item, and every segment's end) into warp tiles of kTileUnits
// units, so each warp reads at most ~kTileUnits items and passes at most ~kTileUnits segment ends
// whatever the lengths (one 2^28-item segment, a million empty ones, power-law mixes). The host
// cannot see the offsets (device memory, no synchronization), so this is decided on the device.
//
// Ownership: a segment belongs to the tile holding its first unit (its first item, or its end
// when empty). A segment of at most kTileUnits items ("short") is read whole by its owner's warp,
// even past the tile's end, and written directly: regular shapes need no second pass. A longer
// segment is cut at tile boundaries: its owner leaves the piece up to the tile's end in
// `trail[t]` (and its id in `trail_seg[t]`), every later tile it covers leaves its piece in
// `lead[t]`, and segmented_reduce_fixup_kernel folds trail, then the leads in tile order, in a
// fixed tree: bitwise reproducible. Offsets that are not nondecreasing give unspecified values,
// but every index stays clamped inside x, out and the partials.
//
// Block tiles (RangeShape's kBlockItems > 0: a block per tile, long pieces read by the whole
// block) are the measured alternative (docs/scan.md "Segmented reduce"); the library uses
// DefaultRangeShape at the end of this file.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/scan/segmented_reduce_kernel.cuh"
#include "gpuprims/util/dependent_launch.cuh"

namespace gpuprims {
namespace scan_detail {

// Per-tile partials of the segments longer than a tile (scratch memory, 2 * sizeof(Acc) + 8 bytes
// per tile).
template <class Acc>
struct RangePartials {
  Acc* lead;           // piece of a long segment that began before the tile
  Acc* trail;          // piece of the long segment that begins in the tile
  int64_t* trail_seg;  // that segment's id, or -1
  int64_t tiles;
};

// The merge-path coordinate of unit d: how many segment ends come before it (i), so that d - i
// items do. Segment i's end is consumed before item j when offset(i + 1) <= j. kWidth lanes
// search together (kWidth-ary search: each round probes kWidth points and keeps the gap where the
// predicate turns false), so two searches share a warp. Returns a value in [max(0, d - n),
// min(d, count)] whatever the offsets hold.
template <int kWidth>
__device__ __forceinline__ int64_t merge_path_search(const Segments& seg, int64_t d, int rank) {
  const int shift = (threadIdx.x % kWarpSize) / kWidth * kWidth;
  const unsigned group_mask = (1ull << kWidth) - 1;
  auto before = [&](int64_t p) { return seg.offset(p + 1) + p + 1 <= d; };  // end of p precedes unit d
  int64_t lo = d - seg.n > 0 ? d - seg.n : 0, hi = d < seg.count ? d : seg.count;
  {
    // First round: kWidth consecutive probes around the answer for equal lengths, d * count /
    // (n + count). With regular offsets the answer is among them, so one round of dependent loads
    // replaces log_kWidth(count) rounds (each an L2 round trip before the tile's first data load);
    // otherwise it narrows [lo, hi] like any round.
    const int64_t guess = int64_t(double(d) * double(seg.count) / double(seg.n + seg.count)) - kWidth / 2;
    const int64_t first = guess < hi - kWidth ? (guess > lo ? guess : lo) : (hi - kWidth > lo ? hi - kWidth : lo);
    const int64_t probes = hi - first < kWidth ? hi - first : kWidth;
    const bool below = lo < hi && rank < probes && before(first + rank);
    const int c = __popc((__ballot_sync(0xffffffffu, below) >> shift) & group_mask);
    if (lo < hi) {
      if (c < probes) hi = first + c;
      if (c > 0) lo = first + c;
    }
  }
  while (__any_sync(0xffffffffu, lo < hi)) {
    const int64_t span = hi - lo;
    const int64_t p = lo + span * rank / kWidth;
    const bool below = lo < hi && before(p);
    const int c = __popc((__ballot_sync(0xffffffffu, below) >> shift) & group_mask);
    if (lo < hi) {
      if (c == 0) {
        hi = lo;
      } else {
        const int64_t last_true = lo + span * (c - 1) / kWidth;
        if (c < kWidth) hi = lo + span * c / kWidth;
        lo = last_true + 1;
        if (lo > hi) lo = hi;  // only with offsets that are not nondecreasing
      }
    }
  }
  return lo;
}

// What a tile reads of segment s, one of i0..i1 touching it (the tile's items are [j0, j1)): the
// segment is active if it has items in the tile or ends there (s < i1 || begins before j1); it is
// "continuing" if it began in an earlier tile, and long if it spans more than a tile. A short
// segment is read whole by the tile holding its start (even past the tile's end); a long one only
// up to the tile's end; a continuing short one not at all (its owner read it). Decreasing offsets
// read as empty segments, so every index stays inside x.
struct SegmentPiece {
  bool active = false, is_long = false, continuing = false;
  int64_t begin = 0, end = 0;
};
template <int kTileUnits>
__device__ __forceinline__ SegmentPiece segment_piece(const Segments& seg, int64_t s, int64_t i1, int64_t j0,
                                                      int64_t j1) {
  SegmentPiece p;
  if (s <= i1 && s < seg.count) {
    const int64_t b = seg.offset(s);
    int64_t e = seg.offset(s + 1);
    e = e < b ? b : e;
    p.active = s < i1 || b < j1;
    p.is_long = e - b > kTileUnits;
    p.continuing = b < j0;
    if (p.active) {
      p.begin = p.continuing ? j0 : b;
      p.end = p.is_long ? (e < j1 ? e : j1) : (p.continuing ? p.begin : e);
      p.end = p.end < p.begin ? p.begin : p.end;
    }
  }
  return p;
}

// The work of warp tile t (all 32 lanes call it). Pieces of at most kLaneItems items are reduced
// by one lane each (left to right); longer ones by the whole warp with group_partial (16-byte
// loads, kUnroll in flight) and a butterfly.
template <class T, class Acc, class Op, int kTileUnits, int kUnroll, int kLaneItems, LoadPolicy kPolicy>
__device__ __forceinline__ void range_tile(const T* __restrict__ x, const Segments& seg, bool vector_ok,
                                           const RangePartials<Acc>& parts, int64_t t) {
  const Op op;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t total = seg.n + seg.count;
  const int64_t d0 = t * kTileUnits, d1 = d0 + kTileUnits < total ? d0 + kTileUnits : total;
  // Lanes 0-15 find the tile's start, lanes 16-31 its end, at the same time.
  const int64_t found = merge_path_search<16>(seg, lane < 16 ? d0 : d1, lane % 16);
  const int64_t i0 = shfl_idx(found, 0), i1 = shfl_idx(found, 16);
  const int64_t j0 = d0 - i0, j1 = d1 - i1;  // the tile's items are [j0, j1)

  // Segments i0..i1 touch the tile: i0 may have begun in an earlier tile ("continuing": then this
  // tile reads its piece only if it is long, into lead[t]); i1 only if it begins before the tile's
  // end (each lane tests its own segment, so no load precedes the batch's).
  int64_t trail_seg = -1;
  Acc trail = Op::template identity<Acc>();
  for (int64_t base = i0; base <= i1; base += kWarpSize) {
    const int64_t s = base + lane;
    const SegmentPiece pc = segment_piece<kTileUnits>(seg, s, i1, j0, j1);
    const bool active = pc.active, is_long = pc.is_long, continuing = pc.continuing;
    const int64_t pb = pc.begin, pe = pc.end;
    Acc v = Op::template identity<Acc>();
    if (pe - pb <= kLaneItems) {
      for (int64_t i = pb; i < pe; ++i) v = op(v, cast_value<Acc>(x[i * seg.step]));
    }
    for (unsigned wide = __ballot_sync(0xffffffffu, pe - pb > kLaneItems); wide != 0; wide &= wide - 1) {
      const int src = __ffs(wide) - 1;
      const Acc r = warp_reduce(group_partial<T, Acc, Op, kWarpSize, kUnroll, kPolicy>(
                                    x, shfl_idx(pb, src), shfl_idx(pe, src), seg.step, vector_ok, lane),
                                op);
      if (lane == src) v = r;
    }
    if (active && continuing && is_long) parts.lead[t] = v;
    const unsigned trails = __ballot_sync(0xffffffffu, active && !continuing && is_long);
    if (trails != 0) {  // only the last segment that begins here can run past the tile
      const int src = __ffs(trails) - 1;
      trail_seg = shfl_idx(s, src);
      trail = shfl_idx(v, src);
    }
    if (active && !continuing && !is_long) store_as(seg.out, s * seg.out_step, seg.out_dtype, v);
  }
  if (lane == 0) {
    parts.trail_seg[t] = trail_seg;
    if (trail_seg >= 0) parts.trail[t] = trail;
  }
}

// Shared memory of a block tile: its merge-path coordinates, the pieces the whole block reduces,
// and the block's trail.
template <class Acc, int kThreads>
struct BlockTileStorage {
  int64_t coord[2];
  int64_t piece_begin[kThreads], piece_end[kThreads];
  int piece_owner[kThreads];
  int pieces;
  Acc value[kThreads];
  int64_t trail_seg;
  Acc trail;
  typename BlockReduce<Acc, kThreads>::TempStorage temp;
};

// The work of block tile t (all kThreads threads call it): like range_tile with a thread per
// segment; pieces over kBlockItems items are read by the whole block (kThreads x 16-byte loads,
// kUnroll in flight each, then the block's fixed tree), so a range inside one long segment
// streams like the per-segment block kernel.
template <class T, class Acc, class Op, int kTileUnits, int kThreads, int kUnroll, int kLaneItems, int kBlockItems,
          LoadPolicy kPolicy>
__device__ __forceinline__ void range_block_tile(const T* __restrict__ x, const Segments& seg, bool vector_ok,
                                                 const RangePartials<Acc>& parts, int64_t t,
                                                 BlockTileStorage<Acc, kThreads>& sm) {
  const Op op;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t total = seg.n + seg.count;
  const int64_t d0 = t * kTileUnits, d1 = d0 + kTileUnits < total ? d0 + kTileUnits : total;
  if (threadIdx.x < kWarpSize) {
    const int64_t found = merge_path_search<16>(seg, lane < 16 ? d0 : d1, lane % 16);
    if (lane == 0) sm.coord[0] = found;
    if (lane == 16) sm.coord[1] = found;
  }
  if (threadIdx.x == 0) {
    sm.pieces = 0;
    sm.trail_seg = -1;
  }
  __syncthreads();
  const int64_t i0 = sm.coord[0], i1 = sm.coord[1];
  const int64_t j0 = d0 - i0, j1 = d1 - i1;
  for (int64_t base = i0; base <= i1; base += kThreads) {
    const int64_t s = base + threadIdx.x;
    const SegmentPiece pc = segment_piece<kTileUnits>(seg, s, i1, j0, j1);
    const bool active = pc.active, is_long = pc.is_long, continuing = pc.continuing;
    const int64_t pb = pc.begin, pe = pc.end;
    const int64_t len = pe - pb;
    Acc v = Op::template identity<Acc>();
    if (len <= kLaneItems) {
      for (int64_t i = pb; i < pe; ++i) v = op(v, cast_value<Acc>(x[i * seg.step]));
    }
    for (unsigned wide = __ballot_sync(0xffffffffu, len > kLaneItems && len <= kBlockItems); wide != 0;
         wide &= wide - 1) {
      const int src = __ffs(wide) - 1;
      const Acc r = warp_reduce(group_partial<T, Acc, Op, kWarpSize, kUnroll, kPolicy>(
                                    x, shfl_idx(pb, src), shfl_idx(pe, src), seg.step, vector_ok, lane),
                                op);
      if (lane == src) v = r;
    }
    if (len > kBlockItems) {  // the list's order does not change any result
      const int k = atomicAdd(&sm.pieces, 1);
      sm.piece_begin[k] = pb;
      sm.piece_end[k] = pe;
      sm.piece_owner[k] = threadIdx.x;
    }
    __syncthreads();
    const int pieces = sm.pieces;
    for (int k = 0; k < pieces; ++k) {
      const Acc part = group_partial<T, Acc, Op, kThreads, kUnroll, kPolicy>(x, sm.piece_begin[k], sm.piece_end[k],
                                                                           seg.step, vector_ok, threadIdx.x);
      const Acc r = BlockReduce<Acc, kThreads>::reduce(part, op, sm.temp);
      if (threadIdx.x == 0) sm.value[sm.piece_owner[k]] = r;
      __syncthreads();  // temp is reused by the next piece
    }
    if (len > kBlockItems) v = sm.value[threadIdx.x];
    if (active && continuing && is_long) parts.lead[t] = v;
    if (active && !continuing && is_long) {  // at most one: the last segment that begins here
      sm.trail_seg = s;
      sm.trail = v;
    }
    if (active && !continuing && !is_long) store_as(seg.out, s * seg.out_step, seg.out_dtype, v);
    __syncthreads();  // every thread has read the list before it is reset
    if (threadIdx.x == 0) sm.pieces = 0;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    parts.trail_seg[t] = sm.trail_seg;
    if (sm.trail_seg >= 0) parts.trail[t] = sm.trail;
  }
  __syncthreads();  // sm is rewritten by the next tile
}

// A block per tile of kTileUnits units.
template <class T, class Acc, class Op, int kTileUnits, int kThreads, int kUnroll, int kLaneItems, int kBlockItems,
          int kMinBlocks, LoadPolicy kPolicy>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
segmented_reduce_block_ranges_kernel(const T* __restrict__ x, Segments seg, bool vector_ok, RangePartials<Acc> parts) {
  __shared__ BlockTileStorage<Acc, kThreads> sm;
#if __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  for (int64_t t = blockIdx.x; t < parts.tiles; t += gridDim.x) {
    range_block_tile<T, Acc, Op, kTileUnits, kThreads, kUnroll, kLaneItems, kBlockItems, kPolicy>(x, seg, vector_ok,
                                                                                                   parts, t, sm);
  }
}

// A warp per tile of kTileUnits units.
template <class T, class Acc, class Op, int kTileUnits, int kThreads, int kUnroll, int kLaneItems, int kMinBlocks,
          LoadPolicy kPolicy>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
segmented_reduce_ranges_kernel(const T* __restrict__ x, Segments seg, bool vector_ok, RangePartials<Acc> parts) {
  static_assert(kThreads % kWarpSize == 0, "whole warps");
#if __CUDA_ARCH__ >= 900
  // Lets a fixup launched with programmatic stream serialization be scheduled during this grid's
  // last wave; it still waits for this grid's completion and memory before reading (below).
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  // A warp per tile; a grid smaller than the tiles' loops (warp-uniform).
  const int64_t warps = int64_t(gridDim.x) * (kThreads / kWarpSize);
  for (int64_t t = int64_t(blockIdx.x) * (kThreads / kWarpSize) + threadIdx.x / kWarpSize; t < parts.tiles;
       t += warps) {
    range_tile<T, Acc, Op, kTileUnits, kUnroll, kLaneItems, kPolicy>(x, seg, vector_ok, parts, t);
  }
}

// One thread per tile: a tile that owns a long segment folds its trail with the leads of the
// tiles up to the segment's last item, in tile order. Chains of at most kLaneChain leads are
// folded by that thread; longer ones (a segment over kLaneChain tiles) by the whole block,
// kUnroll 16-byte loads of leads in flight per thread, then the block's fixed tree.
template <class Acc, class Op, int kTileUnits, int kThreads, int kUnroll, int kLaneChain>
__global__ void __launch_bounds__(kThreads) segmented_reduce_fixup_kernel(Segments seg, RangePartials<Acc> parts) {
  const Op op;
  __shared__ int64_t queue[kThreads];
  __shared__ int queued;
  __shared__ typename BlockReduce<Acc, kThreads>::TempStorage temp;
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();  // the tile kernel's partials (a no-op after a plain launch)
#endif
  if (threadIdx.x == 0) queued = 0;
  __syncthreads();
  auto last_tile = [&](int64_t s, int64_t t) {  // the tile of the segment's last item
    const int64_t last = (s + seg.offset(s + 1) - 1) / kTileUnits;
    return last < t ? t : (last >= parts.tiles ? parts.tiles - 1 : last);
  };
  const int64_t t = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t s = t < parts.tiles ? parts.trail_seg[t] : -1;
  if (s >= 0 && s < seg.count) {
    const int64_t last = last_tile(s, t);
    if (last - t <= kLaneChain) {
      Acc v = parts.trail[t];
      for (int64_t k = t + 1; k <= last; ++k) v = op(v, parts.lead[k]);
      store_as(seg.out, s * seg.out_step, seg.out_dtype, v);
    } else {
      queue[atomicAdd(&queued, 1)] = t;  // the queue's order does not change any result
    }
  }
  __syncthreads();
  for (int q = 0; q < queued; ++q) {
    const int64_t tq = queue[q], sq = parts.trail_seg[tq];
    const Acc part = group_partial<Acc, Acc, Op, kThreads, kUnroll>(parts.lead, tq + 1, last_tile(sq, tq) + 1, 1,
                                                                      true, threadIdx.x);
    const Acc v = BlockReduce<Acc, kThreads>::reduce(part, op, temp);
    if (threadIdx.x == 0) store_as(seg.out, sq * seg.out_step, seg.out_dtype, op(parts.trail[tq], v));
    __syncthreads();  // temp is reused by the next segment
  }
}

// One launch shape of the pair of kernels: tile size in units, threads per block of the tile
// kernel (a warp per tile), loads in flight, the longest piece one lane reduces alone, the
// resident blocks per SM the registers must allow (0: the compiler's choice), and the load path.
template <int kTileUnits_, int kThreads_, int kUnroll_, int kLaneItems_, int kMinBlocks_ = 0,
          LoadPolicy kPolicy_ = LoadPolicy::kReadOnly, int kBlockItems_ = 0>
struct RangeShape {
  static constexpr int kTileUnits = kTileUnits_, kThreads = kThreads_, kUnroll = kUnroll_, kLaneItems = kLaneItems_,
                       kMinBlocks = kMinBlocks_;
  // 0: a warp per tile; else a block per tile, pieces over kBlockItems read by the whole block.
  static constexpr int kBlockItems = kBlockItems_;
  static constexpr LoadPolicy kPolicy = kPolicy_;
  static constexpr int kFixupThreads = 256, kFixupUnroll = 8, kLaneChain = 16;

  static int64_t tiles(const Segments& seg) {
    const int64_t t = (seg.n + seg.count + kTileUnits - 1) / kTileUnits;
    return t > 0 ? t : 1;
  }
  // lead, trail and trail_seg, 8 bytes a tile each, at 256-byte boundaries (the fixup reads leads
  // as 16-byte vectors)
  static std::size_t scratch_bytes(int64_t tiles) {
    return 3 * align(std::size_t(tiles) * 8);
  }
  template <class Acc>
  static RangePartials<Acc> partials(void* scratch, int64_t tiles) {
    static_assert(sizeof(Acc) <= 8, "partials hold at most 8-byte accumulators");
    char* p = static_cast<char*>(scratch);
    const std::size_t stride = align(std::size_t(tiles) * 8);
    return {reinterpret_cast<Acc*>(p), reinterpret_cast<Acc*>(p + stride), reinterpret_cast<int64_t*>(p + 2 * stride),
            tiles};
  }
  // The fixup kernel of an (Acc, Op), for attribute queries (its binary version: the overlapped
  // launch needs the wait that only its sm_90+ builds contain).
  template <class Acc, class Op>
  static const void* fixup_kernel() {
    return reinterpret_cast<const void*>(
        &segmented_reduce_fixup_kernel<Acc, Op, kTileUnits, kFixupThreads, kFixupUnroll, kLaneChain>);
  }
  // The tile kernel, then the fixup of segments longer than a tile, stream-ordered after it;
  // `overlap` launches the fixup with programmatic stream serialization (sm_90: its blocks are
  // scheduled during the tile kernel's last wave and wait there, hiding the launch gap; only where
  // the fixup's binary is sm_90 or newer, see fixup_kernel);
  // `max_blocks` > 0 caps the tile kernel's grid (persistent warps looping over tiles).
  template <class T, class Acc, class Op>
  static cudaError_t launch(const T* x, const Segments& seg, bool vector_ok, const RangePartials<Acc>& parts,
                            cudaStream_t stream, bool overlap, int64_t max_blocks = 0) {
    constexpr int kTilesPerBlock = kBlockItems > 0 ? 1 : kThreads / kWarpSize;
    int64_t blocks = (parts.tiles + kTilesPerBlock - 1) / kTilesPerBlock;
    if (max_blocks > 0 && blocks > max_blocks) blocks = max_blocks;  // the tiles are looped over
    if constexpr (kBlockItems > 0) {
      segmented_reduce_block_ranges_kernel<T, Acc, Op, kTileUnits, kThreads, kUnroll, kLaneItems, kBlockItems,
                                           kMinBlocks, kPolicy>
          <<<unsigned(blocks), kThreads, 0, stream>>>(x, seg, vector_ok, parts);
    } else {
      segmented_reduce_ranges_kernel<T, Acc, Op, kTileUnits, kThreads, kUnroll, kLaneItems, kMinBlocks, kPolicy>
          <<<unsigned(blocks), kThreads, 0, stream>>>(x, seg, vector_ok, parts);
    }
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    return launch_dependent(segmented_reduce_fixup_kernel<Acc, Op, kTileUnits, kFixupThreads, kFixupUnroll, kLaneChain>,
                            dim3(unsigned((parts.tiles + kFixupThreads - 1) / kFixupThreads)), dim3(kFixupThreads),
                            stream, overlap, seg, parts);
  }

 private:
  static std::size_t align(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
};

// The library's shape (cpp/src/scan/segmented_reduce.cu; bench/tune/segmented_reduce_tune.cu,
// docs/scan.md "Segmented reduce"): warp tiles of 4096 units, 3 resident 256-thread blocks per SM
// (80 registers, no spill; the unconstrained build gets 48 registers and spills, 0.84x CUB on
// 65536 x 4096 against 0.97x), streaming loads.
using DefaultRangeShape = RangeShape<4096, 256, 4, 16, 3, LoadPolicy::kStreaming>;

}  // namespace scan_detail
}  // namespace gpuprims
