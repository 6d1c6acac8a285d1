#pragma once
// One scan tile held in registers in warp-striped order: kItems items per thread (16 by default),
// loaded and stored with 16-byte vectors that a warp issues as fully coalesced 512-byte requests.
//
// Warp w of the block owns items [w*32*kItems, (w+1)*32*kItems) of the tile, cut into kGroups groups of
// 32*kVec items; lane l holds items l*kVec .. l*kVec+kVec-1 of each group. A thread scans each of
// its vectors serially, a warp scan of the vector totals makes each group's prefix, and a carry
// runs from group to group; the block then scans its warp totals (block_scan_warp_totals).
//
// kFoldPrefix: scan_warp folds each group's prefix within the warp into its items at once (in the
// exclusive form when the scan is exclusive), so the tile keeps no per-group prefixes until its
// store: kGroups fewer live registers (the look-back tile otherwise spills 24 bytes at its 64-register
// cap, ptxas -v, nvcc 13.0).
#include <cstdint>
#include <cstring>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/scan/scan_ops.hpp"
#include "gpuprims/util/vec.cuh"
#include "gpuprims/warp/warp_scan.cuh"

namespace gpuprims {
namespace scan_detail {

template <class In, class Out, class Op, int kThreads, int kItemsPerThread = 16, bool kFoldPrefix = false>
struct StripedTile {
  using Acc = scan_acc_t<Out>;
  using Output = Out;
  using Operator = Op;
  using S = storage_t<In>;
  static constexpr bool kFoldsPrefix = kFoldPrefix;
  static constexpr int kVec = 16 / sizeof(S);  // items per 16-byte load
  static constexpr int kGroups = kItemsPerThread / kVec;
  static constexpr int kItems = kVec * kGroups;
  static constexpr int kWarps = kThreads / kWarpSize;
  static constexpr int kTileItems = kThreads * kItems;
  static_assert(kGroups >= 1 && kItems == kItemsPerThread && kWarps <= kWarpSize, "tile shape");

  Acc item[kGroups][kVec];
  Acc group_prefix[kFoldPrefix ? 1 : kGroups];  // after scan_warp: what precedes each group within the warp

  __device__ static int offset(int warp, int lane, int g) { return warp * kWarpSize * kItems + g * kWarpSize * kVec + lane * kVec; }

  // Items past `len` read as the identity. The vector path needs a full tile, step 1 and a 16-byte
  // aligned row (the caller's `vector_ok`); kPolicy is its cache hint (vec.cuh).
  template <LoadPolicy kPolicy = LoadPolicy::kReadOnly>
  __device__ void load(const S* row, int64_t step, int64_t begin, int64_t len, bool vector_ok, int warp, int lane) {
    if (vector_ok && begin + kTileItems <= len) {
#pragma unroll
      for (int g = 0; g < kGroups; ++g) {
        const Vec16<S> v = load_vec16<S, kPolicy>(row + begin + offset(warp, lane, g));
#pragma unroll
        for (int j = 0; j < kVec; ++j) item[g][j] = cast_value<Acc>(v.lane[j]);
      }
    } else {
#pragma unroll
      for (int g = 0; g < kGroups; ++g) {
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const int64_t i = begin + offset(warp, lane, g) + j;
          item[g][j] = i < len ? cast_value<Acc>(row[i * step]) : ScanOperator<Op>::template identity<Acc>();
        }
      }
    }
  }

  // Scans the items in place (inclusive within each vector), fills group_prefix and returns the
  // warp's total. With kFoldPrefix the items become the warp's scan itself (exclusive ones when
  // `exclusive`), and group_prefix stays unused.
  __device__ Acc scan_warp(int lane, bool exclusive = false) {
    const ScanOperator<Op> op;
    Acc carry = ScanOperator<Op>::template identity<Acc>();
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
#pragma unroll
      for (int j = 1; j < kVec; ++j) item[g][j] = op(item[g][j - 1], item[g][j]);
      const Acc inclusive = warp_inclusive_scan(item[g][kVec - 1], op, lane);
      Acc lane_exclusive = shfl_up(inclusive, 1);
      if (lane == 0) lane_exclusive = ScanOperator<Op>::template identity<Acc>();
      const Acc base = op(carry, lane_exclusive);
      if constexpr (kFoldPrefix) {
        if (exclusive) {
#pragma unroll
          for (int j = kVec - 1; j > 0; --j) item[g][j] = op(base, item[g][j - 1]);
          item[g][0] = base;
        } else {
#pragma unroll
          for (int j = 0; j < kVec; ++j) item[g][j] = op(base, item[g][j]);
        }
      } else {
        group_prefix[g] = base;
      }
      carry = op(carry, shfl_idx(inclusive, kWarpSize - 1));
    }
    return carry;
  }

  // The thread's total, without scanning (the reduce pass of reduce-then-scan).
  __device__ Acc reduce_thread() const {
    const ScanOperator<Op> op;
    Acc total = item[0][0];
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
#pragma unroll
      for (int j = (g == 0 ? 1 : 0); j < kVec; ++j) total = op(total, item[g][j]);
    return total;
  }

  // Writes prefix ∘ group_prefix ∘ item (inclusive) or the value before each item (exclusive).
  // `row_start` marks the thread holding the row's first item, whose exclusive value is the
  // public identity. kPolicy is the vector path's store hint (vec.cuh).
  template <StorePolicy kPolicy = StorePolicy::kDefault>
  __device__ void store(Out* row, int64_t step, int64_t begin, int64_t len, bool vector_ok, Acc prefix,
                        bool exclusive, bool row_start, int warp, int lane) const {
    const ScanOperator<Op> op;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      Out v[kVec];
      if constexpr (kFoldPrefix) {
#pragma unroll
        for (int j = 0; j < kVec; ++j) v[j] = cast_value<Out>(op(prefix, item[g][j]));
      } else {
        const Acc base = op(prefix, group_prefix[g]);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const Acc value = exclusive ? (j == 0 ? base : op(base, item[g][j - 1])) : op(base, item[g][j]);
          v[j] = cast_value<Out>(value);
        }
      }
      if (exclusive && row_start && g == 0)
        v[0] = cast_value<Out>(ScanOperator<Op>::template public_identity<Out, Acc>());
      const int64_t first = begin + offset(warp, lane, g);
      constexpr int kBytes = kVec * sizeof(Out);
      if constexpr (kBytes % 16 == 0) {
        if (vector_ok && begin + kTileItems <= len) {
          Vec16<Out> chunks[kBytes / 16];
          memcpy(chunks, v, kBytes);
#pragma unroll
          for (int c = 0; c < kBytes / 16; ++c)
            store_vec16<Out, kPolicy>(row + first + c * Vec16<Out>::kLanes, chunks[c]);
          continue;
        }
      }
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        if (first + j < len) row[(first + j) * step] = v[j];
    }
  }
};

// Block-level scan of the warp totals by warp 0: returns (to warp 0's lanes) the exclusive prefix of
// warp `lane` and, through *aggregate, the tile's total.
template <class Acc, class Op, int kWarps>
__device__ __forceinline__ Acc scan_warp_totals(const Acc* warp_totals, int lane, Acc* aggregate) {
  const ScanOperator<Op> op;
  const Acc identity = ScanOperator<Op>::template identity<Acc>();
  const Acc inclusive = warp_inclusive_scan(lane < kWarps ? warp_totals[lane] : identity, op, lane);
  *aggregate = shfl_idx(inclusive, kWarps - 1);
  const Acc exclusive = shfl_up(inclusive, 1);
  return lane == 0 ? identity : exclusive;
}

// The block-wide scan of a loaded tile: scans it in place (per warp), then warp 0 scans the warp
// totals. Call with every thread; returns, to warp 0's lanes, the exclusive prefix of warp `lane`,
// and sets *aggregate (in warp 0) to the tile's total. `warp_totals` is shared memory of kWarps;
// `exclusive` matters to kFoldPrefix tiles only (see StripedTile::scan_warp).
template <class Tile>
__device__ __forceinline__ typename Tile::Acc scan_tile_block(Tile& t, typename Tile::Acc* warp_totals, int warp,
                                                              int lane, typename Tile::Acc* aggregate,
                                                              bool exclusive = false) {
  using Acc = typename Tile::Acc;
  const Acc warp_total = t.scan_warp(lane, exclusive);
  if (lane == 0) warp_totals[warp] = warp_total;
  __syncthreads();
  Acc warp_exclusive = ScanOperator<typename Tile::Operator>::template identity<Acc>();
  if (warp == 0) warp_exclusive = scan_warp_totals<Acc, typename Tile::Operator, Tile::kWarps>(warp_totals, lane, aggregate);
  return warp_exclusive;
}

}  // namespace scan_detail
}  // namespace gpuprims
