#pragma once
// Reductions along an outer axis (a column sum of a row-major matrix): neighbouring outputs are
// adjacent in memory, each output's own elements are far apart.
//
// A block owns a tile of kTileWidth consecutive outputs and one slice of the reduced dimension:
// threadIdx.x walks the outputs, so every warp load reads kTileWidth adjacent elements (one
// 128-byte line for 4-byte types); threadIdx.y walks the reduced index, kColumnUnroll loads in
// flight per thread. The kTileRows partial sums of a column meet in shared memory. When there are
// too few tiles to fill the GPU, the reduced dimension is split across gridDim.y blocks; their
// per-column partials are combined, in split order, by the last block of the tile to finish (an
// atomic ticket, with the fences described in reduce_vectorized.cuh), so results stay run-to-run
// deterministic.
#include <cstdint>

#include "gpuprims/reduce/reduce_common.cuh"
#include "gpuprims/util/math.cuh"

namespace gpuprims {
namespace reduce_detail {

constexpr int kTileWidth = 32;
constexpr int kTileRows = 16;
constexpr int kColumnUnroll = 4;
constexpr int kColumnThreads = kTileWidth * kTileRows;

template <class T, class Acc, class Op>
__global__ void __launch_bounds__(kColumnThreads)
    reduce_column_tiles_kernel(ReduceKernelParams<T> p, Acc* partials, unsigned int* tickets) {
  __shared__ Acc slice[kTileRows][kTileWidth + 1];
  __shared__ bool is_last_block;
  const Op op;
  const ReduceLayout& layout = p.layout;
  const int tx = threadIdx.x % kTileWidth, ty = threadIdx.x / kTileWidth;
  const int64_t num_tiles = ceil_div<int64_t>(layout.num_rows, kTileWidth);
  const int64_t splits = gridDim.y;
  const int64_t per_split = ceil_div<int64_t>(layout.row_len, splits);
  const int64_t begin = blockIdx.y * per_split;
  const int64_t end = min_of(layout.row_len, begin + per_split);

  for (int64_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const int64_t row = tile * kTileWidth + tx;
    Acc acc = Op::template identity<Acc>();
    if (row < layout.num_rows) {
      const T* in_row = p.in + layout.in_row_offset(row);
      int64_t i = begin + ty;
      for (; i + (kColumnUnroll - 1) * kTileRows < end; i += kColumnUnroll * kTileRows) {
        T v[kColumnUnroll];
#pragma unroll
        for (int u = 0; u < kColumnUnroll; ++u) v[u] = in_row[layout.elem_offset(i + u * kTileRows)];
#pragma unroll
        for (int u = 0; u < kColumnUnroll; ++u) acc = op(acc, cast_value<Acc>(v[u]));
      }
      for (; i < end; i += kTileRows) acc = op(acc, cast_value<Acc>(in_row[layout.elem_offset(i)]));
    }
    slice[ty][tx] = acc;
    __syncthreads();
    const bool column_owner = ty == 0 && row < layout.num_rows;
    if (ty == 0) {
#pragma unroll
      for (int y = 1; y < kTileRows; ++y) acc = op(acc, slice[y][tx]);
    }
    if (splits == 1) {
      if (column_owner) store_as(p.out, layout.out_offset(row), p.out_dtype, acc);
    } else {
      if (column_owner) {
        partials[row * splits + blockIdx.y] = acc;
        __threadfence();
      }
      __syncthreads();
      if (threadIdx.x == 0) is_last_block = atomicAdd(&tickets[tile], 1u) == splits - 1;
      __syncthreads();
      if (is_last_block) {
        if (column_owner) {
          __threadfence();
          Acc total = Op::template identity<Acc>();
#pragma unroll 4
          for (int64_t s = 0; s < splits; ++s) total = op(total, load_published(&partials[row * splits + s]));
          store_as(p.out, layout.out_offset(row), p.out_dtype, total);
        }
        if (threadIdx.x == 0) tickets[tile] = 0;  // return the ticket to zero (see stream_counters)
      }
    }
    __syncthreads();  // slice and is_last_block are reused by the next tile
  }
}

}  // namespace reduce_detail
}  // namespace gpuprims
