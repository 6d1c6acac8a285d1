#pragma once
// Column tiles: single-pass scans along a strided axis whose rows are adjacent in memory (axis 0 of
// a C-contiguous matrix; in ScanLayout's words: `rows` columns, each walked with step in_step, and
// neighbouring "rows" one element apart). The array is cut into tiles of `width` adjacent columns by
// `groups` x kColumnTileItems items of the axis (width x groups = 256 threads; tile_shapes.hpp's
// column_tile_groups picks the shape from the axis length, the column count and the item size); a
// block scans one tile in registers, lanes owning adjacent columns, so every warp load reads 16 or
// more neighbouring elements of a line of the array.
//
// Between the tiles of one column strip runs a decoupled look-back (Merrill & Garland, 2016; the
// 1-D form is lookback_scan_kernel.cuh), one per column: each column of a tile has its own status
// word (tile_status.cuh, same packing and memory ordering), so a column's aggregate and inclusive
// prefix publish and read with one relaxed access, as the 1-D scan's do. A column's walk is serial
// (one predecessor per step): ids are handed out segment by segment, so the tile before one in its
// strip started `strips` ids earlier, and in the steady state it has published its inclusive prefix,
// or its aggregate with its own predecessor's inclusive prefix behind it, by the time the walk
// reads it (docs/scan.md, "Scans along a strided axis", has the measurements).
//
// Forward progress: tile ids come from a global counter in the order blocks start, never from
// blockIdx, and a tile's predecessors have smaller ids, so every tile waited on belongs to a block
// that is already running and publishes its aggregate without waiting on anything.
//
// In place (out = x): a block loads its whole tile before it stores anything, and tiles are
// disjoint, so no item is read after it was overwritten (scan_layout.hpp: no __restrict__).
#include <cstdint>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/scan/scan_layout.hpp"
#include "gpuprims/scan/scan_ops.hpp"
#include "gpuprims/scan/tile_shapes.hpp"
#include "gpuprims/scan/tile_status.cuh"

namespace gpuprims {
namespace scan_detail {

template <class In, class Out, class Op>
__global__ void __launch_bounds__(kColumnTileThreads)
column_tiles_kernel(const storage_t<In>* in, Out* out, ScanLayout layout, int groups, int64_t strips,
                    unsigned long long* tile_counter, TileStatus<scan_acc_t<Out>> status, bool exclusive) {
  using Acc = scan_acc_t<Out>;
  const ScanOperator<Op> op;
  const Acc identity = ScanOperator<Op>::template identity<Acc>();
  __shared__ int64_t tile_id;
  __shared__ Acc group_totals[kColumnTileThreads];  // [group][column of the tile]
  __shared__ Acc column_prefix[kColumnTileThreads];

  if (threadIdx.x == 0) tile_id = int64_t(atomicAdd(tile_counter, 1ull));
  __syncthreads();
  const int width = kColumnTileThreads / groups;  // columns of the tile
  const int64_t tile = tile_id;
  const int64_t segment = tile / strips;
  const int64_t strip = tile - segment * strips;
  const int lane_column = threadIdx.x % width;
  const int group = threadIdx.x / width;
  const int64_t column = strip * width + lane_column;
  const bool column_ok = column < layout.rows;
  int64_t in_offset = 0, out_offset = 0;
  if (column_ok) layout.row_offsets(column, &in_offset, &out_offset);
  // this thread's first item along the axis
  const int64_t first = (segment * groups + group) * int64_t(kColumnTileItems);

  // Every load is issued before the first add, then the thread's items become their inclusive scan.
  // `valid`: how many of its items this thread has (none past the column's end or for a column past
  // the last). The loads step one pointer along the column: with an address computed per item the kernels held
  // 80-104 registers (2-3 blocks an SM), with the stepped pointer 48-64 (4-5 blocks); session 46
  // device runs 2 and 3, H200: int32 into int64 8192 x 4096 37.6 -> 73.5 % of copy, bfloat16 into
  // float32 8192 x 8192 31.1 -> 64.4.
  const int64_t left = column_ok ? layout.len - first : 0;
  const int valid = left < kColumnTileItems ? int(left > 0 ? left : 0) : kColumnTileItems;
  const storage_t<In>* x = in + in_offset + first * layout.in_step;
  Acc items[kColumnTileItems];
#pragma unroll
  for (int j = 0; j < kColumnTileItems; ++j) {
    items[j] = j < valid ? cast_value<Acc>(*x) : identity;
    x += layout.in_step;
  }
#pragma unroll
  for (int j = 1; j < kColumnTileItems; ++j) items[j] = op(items[j - 1], items[j]);
  group_totals[threadIdx.x] = items[kColumnTileItems - 1];
  __syncthreads();

  // One thread per column publishes the tile's aggregate and walks back along its column.
  if (group == 0 && column_ok) {
    Acc aggregate = group_totals[lane_column];
    for (int g = 1; g < groups; ++g) aggregate = op(aggregate, group_totals[g * width + lane_column]);
    const int64_t word = segment * layout.rows + column;  // status words are laid out like the columns
    Acc prefix = identity;
    if (segment == 0) {
      status.publish(word, kTileInclusive, aggregate);
    } else {
      status.publish(word, kTileAggregate, aggregate);
      for (int64_t predecessor = word - layout.rows;; predecessor -= layout.rows) {  // one segment back
        Acc value;
        TileFlag flag;
        while ((flag = status.read(predecessor, &value)) == kTileInvalid) {
        }
        prefix = op(value, prefix);
        if (flag == kTileInclusive) break;  // segment 0 always publishes an inclusive prefix
      }
      status.publish(word, kTileInclusive, op(prefix, aggregate));
    }
    column_prefix[lane_column] = prefix;
  }
  __syncthreads();
  if (!column_ok) return;

  Acc carry = column_prefix[lane_column];  // everything of the column before this thread's items
  for (int g = 0; g < group; ++g) carry = op(carry, group_totals[g * width + lane_column]);
#pragma unroll
  for (int j = 0; j < kColumnTileItems; ++j) {
    const int64_t i = first + j;
    if (i >= layout.len) break;
    const Acc v = !exclusive ? op(carry, items[j])
                  : i == 0   ? ScanOperator<Op>::template public_identity<Out, Acc>()
                  : j == 0   ? carry
                             : op(carry, items[j - 1]);
    out[out_offset + i * layout.out_step] = cast_value<Out>(v);
  }
}

}  // namespace scan_detail
}  // namespace gpuprims
