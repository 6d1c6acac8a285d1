#pragma once
// The first rungs of the ladder: block scans from the textbooks, one scalar load per item, made
// device-wide by scan-then-propagate (each tile's total goes to an array that is scanned in turn,
// then added to every item of the following tiles: propagate_kernel).
//
//  hillis_steele_kernel  Hillis & Steele (1986): log2(n) steps, each item adds the item 2^k before
//                        it. O(n log n) work, a barrier per step, double-buffered shared memory.
//  blelloch_kernel       Blelloch (1990): up-sweep builds a reduction tree in place, down-sweep
//                        turns it into an exclusive scan. O(n) work; shared memory padded by one
//                        word every 32 (index + index/32) so the tree's power-of-two strides do not
//                        fall into one bank.
#include <cstdint>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/scan/scan_layout.hpp"
#include "gpuprims/scan/scan_ops.hpp"

namespace gpuprims {
namespace scan_detail {

constexpr int kTextbookThreads = 512;

template <class Acc, class Op, class S>
__device__ __forceinline__ Acc load_or_identity(const S* row, int64_t i, int64_t step, int64_t len) {
  return i < len ? cast_value<Acc>(row[i * step]) : ScanOperator<Op>::template identity<Acc>();
}

// Writes an item's scanned value; the row's first item of an exclusive scan is the public identity.
template <class Acc, class Op, class Out>
__device__ __forceinline__ void store_scanned(Out* row, int64_t i, int64_t step, int64_t len, Acc inclusive,
                                              Acc exclusive, bool is_exclusive) {
  if (i >= len) return;
  const Acc first = ScanOperator<Op>::template public_identity<Out, Acc>();
  const Acc v = !is_exclusive ? inclusive : (i == 0 ? first : exclusive);
  row[i * step] = cast_value<Out>(v);
}

template <class In, class Out, class Op>
__global__ void __launch_bounds__(kTextbookThreads)
hillis_steele_kernel(const storage_t<In>* in, Out* out, ScanLayout layout,
                     int64_t tiles_per_row, int64_t tile_base, scan_acc_t<Out>* tile_totals, bool exclusive) {
  using Acc = scan_acc_t<Out>;
  const ScanOperator<Op> op;
  __shared__ Acc buffer[2][kTextbookThreads];
  const int tid = threadIdx.x;
  const int64_t tile = tile_base + blockIdx.x;
  const TileCoords c = layout.tile_coords(tile, tiles_per_row, kTextbookThreads);
  const int64_t i = c.begin + tid;

  int current = 0;
  buffer[0][tid] = load_or_identity<Acc, Op>(in + c.in_offset, i, layout.in_step, layout.len);
  for (int distance = 1; distance < kTextbookThreads; distance <<= 1) {
    __syncthreads();
    Acc v = buffer[current][tid];
    if (tid >= distance) v = op(buffer[current][tid - distance], v);
    buffer[current ^ 1][tid] = v;
    current ^= 1;
  }
  __syncthreads();
  const Acc inclusive = buffer[current][tid];
  const Acc before = tid > 0 ? buffer[current][tid - 1] : ScanOperator<Op>::template stored_identity<Out, Acc>();
  store_scanned<Acc, Op>(out + c.out_offset, i, layout.out_step, layout.len, inclusive, before, exclusive);
  if (tid == kTextbookThreads - 1) tile_totals[tile] = inclusive;
}

template <class In, class Out, class Op>
__global__ void __launch_bounds__(kTextbookThreads)
blelloch_kernel(const storage_t<In>* in, Out* out, ScanLayout layout,
                int64_t tiles_per_row, int64_t tile_base, scan_acc_t<Out>* tile_totals, bool exclusive) {
  using Acc = scan_acc_t<Out>;
  constexpr int kItems = 2 * kTextbookThreads;
  const ScanOperator<Op> op;
  auto padded = [](int index) { return index + (index >> 5); };
  __shared__ Acc tree[kItems + kItems / 32];
  const int tid = threadIdx.x;
  const int64_t tile = tile_base + blockIdx.x;
  const TileCoords c = layout.tile_coords(tile, tiles_per_row, kItems);

  const int a = tid, b = tid + kTextbookThreads;  // two items per thread, half a tile apart
  const Acc xa = load_or_identity<Acc, Op>(in + c.in_offset, c.begin + a, layout.in_step, layout.len);
  const Acc xb = load_or_identity<Acc, Op>(in + c.in_offset, c.begin + b, layout.in_step, layout.len);
  tree[padded(a)] = xa;
  tree[padded(b)] = xb;

  // Up-sweep: after the step with `stride`, tree[k*2*stride + 2*stride - 1] holds the total of its
  // 2*stride items.
  for (int stride = 1, active = kItems / 2; active > 0; stride <<= 1, active >>= 1) {
    __syncthreads();
    if (tid < active) {
      const int right = (2 * tid + 2) * stride - 1;
      tree[padded(right)] = op(tree[padded(right - stride)], tree[padded(right)]);
    }
  }
  __syncthreads();
  if (tid == 0) {
    tile_totals[tile] = tree[padded(kItems - 1)];
    tree[padded(kItems - 1)] = ScanOperator<Op>::template stored_identity<Out, Acc>();
  }
  // Down-sweep: each node passes its prefix to its left child and prefix + left total to its right.
  for (int stride = kItems / 2, active = 1; stride > 0; stride >>= 1, active <<= 1) {
    __syncthreads();
    if (tid < active) {
      const int right = (2 * tid + 2) * stride - 1, left = right - stride;
      const Acc left_total = tree[padded(left)];
      tree[padded(left)] = tree[padded(right)];
      tree[padded(right)] = op(tree[padded(right)], left_total);
    }
  }
  __syncthreads();
  const Acc before_a = tree[padded(a)], before_b = tree[padded(b)];
  store_scanned<Acc, Op>(out + c.out_offset, c.begin + a, layout.out_step, layout.len, op(before_a, xa), before_a, exclusive);
  store_scanned<Acc, Op>(out + c.out_offset, c.begin + b, layout.out_step, layout.len, op(before_b, xb), before_b, exclusive);
}

// Scan-then-propagate's last pass: combines each tile's exclusive prefix (tile_prefixes) into the
// items it scanned locally. The row's first tile has nothing before it and is skipped.
template <class Out, class Op>
__global__ void propagate_kernel(Out* __restrict__ out, ScanLayout layout, int64_t tiles_per_row, int64_t tile_base,
                                 int64_t tile_items, const scan_acc_t<Out>* tile_prefixes) {
  using Acc = scan_acc_t<Out>;
  const ScanOperator<Op> op;
  const int64_t tile = tile_base + blockIdx.x;
  const TileCoords c = layout.tile_coords(tile, tiles_per_row, tile_items);
  if (c.begin == 0) return;
  const Acc prefix = tile_prefixes[tile];
  Out* row = out + c.out_offset;
  const int64_t end = c.begin + tile_items < layout.len ? c.begin + tile_items : layout.len;
  for (int64_t i = c.begin + threadIdx.x; i < end; i += blockDim.x) {
    Out& item = row[i * layout.out_step];
    item = cast_value<Out>(op(prefix, cast_value<Acc>(item)));
  }
}

}  // namespace scan_detail
}  // namespace gpuprims
