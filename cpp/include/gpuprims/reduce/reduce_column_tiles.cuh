#pragma once
// Reductions along an outer axis (a column sum of a row-major matrix): neighbouring outputs are
// adjacent in memory, each output's own elements are far apart.
//
// A block owns a tile of kTileWidth consecutive outputs and one slice of the reduced dimension.
// Lane tx of a warp takes outputs tx, tx + 32, tx + 64, tx + 96 of the tile, so for every reduced
// index a warp reads kTileWidth adjacent elements (512 bytes of float32: four whole lines per DRAM
// page opened, where one output per lane read a single 128-byte line); threadIdx.y walks the
// reduced index, kColumnUnroll steps in flight. The kTileRows partial sums of a column meet in
// shared memory. When there are too few tiles to fill the GPU the reduced dimension is split across
// gridDim.y blocks; their per-column partials are combined, in split order, by the last block of
// the tile to finish (an atomic ticket, with the fences described in reduce_vectorized.cuh), so
// results stay run-to-run deterministic. Any strides work; only adjacency makes it fast.
#include <cstdint>

#include "gpuprims/reduce/reduce_common.cuh"
#include "gpuprims/util/math.cuh"

namespace gpuprims {
namespace reduce_detail {

constexpr int kColumnOutputsPerLane = 4;
constexpr int kTileWidth = 32 * kColumnOutputsPerLane;
constexpr int kTileRows = 8;
constexpr int kColumnUnroll = 2;
constexpr int kColumnThreads = 32 * kTileRows;

template <class T, class Acc, class Op>
__global__ void __launch_bounds__(kColumnThreads)
    reduce_column_tiles_kernel(ReduceKernelParams<T> p, Acc* partials, unsigned int* tickets) {
  __shared__ Acc slice[kTileRows][kTileWidth + 1];
  __shared__ bool is_last_block;
  const Op op;
  const ReduceLayout& layout = p.layout;
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const int64_t num_tiles = ceil_div<int64_t>(layout.num_rows, kTileWidth);
  const int64_t splits = gridDim.y;
  const int64_t per_split = ceil_div<int64_t>(layout.row_len, splits);
  const int64_t begin = blockIdx.y * per_split;
  const int64_t end = min_of(layout.row_len, begin + per_split);

  for (int64_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const T* in_rows[kColumnOutputsPerLane];
    Acc acc[kColumnOutputsPerLane];
#pragma unroll
    for (int o = 0; o < kColumnOutputsPerLane; ++o) {
      const int64_t row = min_of(tile * kTileWidth + tx + 32 * o, layout.num_rows - 1);  // clamp: read, never stored
      in_rows[o] = p.in + layout.in_row_offset(row);
      acc[o] = Op::template identity<Acc>();
    }
    int64_t i = begin + ty;
    for (; i + (kColumnUnroll - 1) * kTileRows < end; i += kColumnUnroll * kTileRows) {
      T v[kColumnUnroll][kColumnOutputsPerLane];
#pragma unroll
      for (int u = 0; u < kColumnUnroll; ++u) {
        const int64_t off = layout.elem_offset(i + u * kTileRows);
#pragma unroll
        for (int o = 0; o < kColumnOutputsPerLane; ++o) v[u][o] = in_rows[o][off];
      }
#pragma unroll
      for (int u = 0; u < kColumnUnroll; ++u) {
#pragma unroll
        for (int o = 0; o < kColumnOutputsPerLane; ++o) acc[o] = op(acc[o], cast_value<Acc>(v[u][o]));
      }
    }
    for (; i < end; i += kTileRows) {
      const int64_t off = layout.elem_offset(i);
#pragma unroll
      for (int o = 0; o < kColumnOutputsPerLane; ++o) acc[o] = op(acc[o], cast_value<Acc>(in_rows[o][off]));
    }
#pragma unroll
    for (int o = 0; o < kColumnOutputsPerLane; ++o) slice[ty][tx + 32 * o] = acc[o];
    __syncthreads();

    // Warp 0 folds the kTileRows partials of each column and finishes the tile.
    if (ty == 0) {
#pragma unroll
      for (int o = 0; o < kColumnOutputsPerLane; ++o) {
        for (int y = 1; y < kTileRows; ++y) acc[o] = op(acc[o], slice[y][tx + 32 * o]);
        const int64_t row = tile * kTileWidth + tx + 32 * o;
        if (row >= layout.num_rows) continue;
        if (splits == 1) {
          store_as(p.out, layout.out_offset(row), p.out_dtype, acc[o]);
        } else {
          partials[row * splits + blockIdx.y] = acc[o];
        }
      }
    }
    if (splits > 1) {
      if (ty == 0) __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) is_last_block = atomicAdd(&tickets[tile], 1u) == splits - 1;
      __syncthreads();
      if (is_last_block && ty == 0) {
        __threadfence();
#pragma unroll
        for (int o = 0; o < kColumnOutputsPerLane; ++o) {
          const int64_t row = tile * kTileWidth + tx + 32 * o;
          if (row >= layout.num_rows) continue;
          Acc total = Op::template identity<Acc>();
          for (int64_t s = 0; s < splits; ++s) total = op(total, load_published(&partials[row * splits + s]));
          store_as(p.out, layout.out_offset(row), p.out_dtype, total);
        }
        if (tx == 0) tickets[tile] = 0;  // return the ticket to zero (see stream_counters)
      }
    }
    __syncthreads();  // slice and is_last_block are reused by the next tile
  }
}

}  // namespace reduce_detail
}  // namespace gpuprims
