#pragma once
// Scans for layouts where a tile per block idles: many rows of moderate length (one block or one warp
// per row). Strided axes with adjacent rows have column_tiles.cuh.
#include <cstdint>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/scan/scan_layout.hpp"
#include "gpuprims/scan/scan_ops.hpp"
#include "gpuprims/scan/striped_tile.cuh"
#include "gpuprims/warp/warp_scan.cuh"

namespace gpuprims {
namespace scan_detail {

constexpr int kRowScanThreads = 256;

// A warp scans its row in steps of one warp-wide striped tile (32 lanes x 16 items, 16-byte loads
// when the row allows), carrying the running total from step to step.
template <class In, class Out, class Op>
__global__ void __launch_bounds__(kRowScanThreads)
warp_per_row_kernel(const storage_t<In>* in, Out* out, ScanLayout layout, bool exclusive,
                    bool vector_ok) {
  using Tile = StripedTile<In, Out, Op, kWarpSize>;
  using Acc = typename Tile::Acc;
  const ScanOperator<Op> op;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t warps = int64_t(gridDim.x) * (kRowScanThreads / kWarpSize);
  for (int64_t row = int64_t(blockIdx.x) * (kRowScanThreads / kWarpSize) + threadIdx.x / kWarpSize; row < layout.rows;
       row += warps) {
    int64_t in_offset, out_offset;
    layout.row_offsets(row, &in_offset, &out_offset);
    Acc carry = ScanOperator<Op>::template identity<Acc>();
    for (int64_t begin = 0; begin < layout.len; begin += Tile::kTileItems) {
      Tile t;
      t.load(in + in_offset, layout.in_step, begin, layout.len, vector_ok, 0, lane);
      const Acc total = t.scan_warp(lane);
      t.store(out + out_offset, layout.out_step, begin, layout.len, vector_ok, carry, exclusive,
              begin == 0 && lane == 0, 0, lane);
      carry = op(carry, total);
    }
  }
}

// A block scans its row as one striped tile of kThreads x 16 items (rows longer than the tile in
// tiles, carrying the running total), the warp totals scanned through shared memory. With a block
// per row, the blocks in flight read one contiguous window of whole rows, like the norms' row
// kernels: at 4096 x 8192 float32 90.1-90.5 % of copy against warp_per_row's 84.0-84.4 %, whose
// warps each stream their own row (bench/tune/row_scan_tune.cu, docs/scan.md "Row scans"). The
// grid is a block per row (a persistent grid of two waves ran at 87 %), rows past 2^31 - 1 looping.
constexpr int kBlockRowItemsPerThread = 16;  // block_per_row_kernel's tile: kThreads x this
template <class In, class Out, class Op, int kThreads>
__global__ void __launch_bounds__(kThreads)
block_per_row_kernel(const storage_t<In>* in, Out* out, ScanLayout layout, bool exclusive,
                     bool vector_ok) {
  using Tile = StripedTile<In, Out, Op, kThreads, kBlockRowItemsPerThread, true>;
  using Acc = typename Tile::Acc;
  const ScanOperator<Op> op;
  __shared__ Acc warp_totals[Tile::kWarps];
  __shared__ Acc warp_prefix[Tile::kWarps + 1];  // [kWarps]: the tile's total
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  for (int64_t row = blockIdx.x; row < layout.rows; row += gridDim.x) {
    int64_t in_offset, out_offset;
    layout.row_offsets(row, &in_offset, &out_offset);
    Acc carry = ScanOperator<Op>::template identity<Acc>();
    for (int64_t begin = 0; begin < layout.len; begin += Tile::kTileItems) {
      Tile t;
      t.load(in + in_offset, layout.in_step, begin, layout.len, vector_ok, warp, lane);
      Acc aggregate;
      const Acc warp_exclusive = scan_tile_block(t, warp_totals, warp, lane, &aggregate, exclusive);
      if (warp == 0) {
        if (lane < Tile::kWarps) warp_prefix[lane] = warp_exclusive;
        if (lane == 0) warp_prefix[Tile::kWarps] = aggregate;
      }
      __syncthreads();
      t.store(out + out_offset, layout.out_step, begin, layout.len, vector_ok, op(carry, warp_prefix[warp]), exclusive,
              begin == 0 && threadIdx.x == 0, warp, lane);
      carry = op(carry, warp_prefix[Tile::kWarps]);
      __syncthreads();  // the next tile reuses warp_totals and warp_prefix
    }
  }
}

}  // namespace scan_detail
}  // namespace gpuprims
