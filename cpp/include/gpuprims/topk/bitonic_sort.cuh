#pragma once
// sorted=True: each row's k results sorted by rank (key descending, then index ascending, so the
// order is the same on every run), by a bitonic network over the row padded to a power of two P.
// Runs of up to kTile entries sort in shared memory (sort_tiles_kernel); longer rows merge with
// global compare-exchange steps (sort_step_kernel) between tile passes, the classic split of the
// network: stage `size` (2, 4, ..., P) compares entries `stride` apart (size/2, ..., 1), in
// ascending rank where (index & size) == 0 and descending elsewhere.
#include <cstdint>

#include "gpuprims/topk/radix_keys.hpp"
#include "gpuprims/topk/topk_params.hpp"

namespace gpuprims {
namespace topk_detail {

constexpr int kSortTile = 2048;
constexpr int kSortMaxThreads = 512;  // a block sorts one tile, up to two entries per thread per step

// Padding entries rank below every real one (key 0 and the largest position).
constexpr int64_t kPadPosition = INT64_MAX;

template <class Key>
__device__ __forceinline__ bool ranks_before(Key ka, int64_t pa, Key kb, int64_t pb) {
  return ka > kb || (ka == kb && pa < pb);
}

// Puts entries i < j in rank order when `ascending`, reversed otherwise.
template <class Key>
__device__ __forceinline__ void compare_exchange(Key* keys, int64_t* pos, int64_t i, int64_t j, bool ascending) {
  const Key ki = keys[i], kj = keys[j];
  const int64_t pi = pos[i], pj = pos[j];
  if (ranks_before(kj, pj, ki, pi) == ascending) {
    keys[i] = kj;
    keys[j] = ki;
    pos[i] = pj;
    pos[j] = pi;
  }
}

// The lower entry of compare pair q at a power-of-two stride: q's bits below the stride stay, the
// ones above move up one place (the stride bit is 0).
template <class I>
__device__ __forceinline__ I lower_of_pair(I q, I stride) {
  return ((q & ~(stride - 1)) << 1) | (q & (stride - 1));
}

// Row scratch for rows longer than one tile: `padded` keys and positions per row of the batch.
struct SortScratch {
  void* keys;
  int64_t* pos;
  int64_t padded;  // P, a power of two
};

// Where a tile pass reads its entries: the row of x itself (the sort variant: all row_len
// elements ranked), the k results, or the scratch of an earlier pass.
enum class SortSource { kRow, kResults, kScratch };

// One block per (tile, row of the batch), of tile/2 threads up to kSortMaxThreads: loads the tile
// (entries beyond the source's count are padding), runs stages size_lo .. size_hi of the network
// on it (strides below the tile, directions from the entry's index in the row), and stores it (to
// the results when `to_results`: the first k entries, values gathered from x by position; else to
// scratch).
template <class T>
__global__ void __launch_bounds__(kSortMaxThreads)
    sort_tiles_kernel(TopkParams p, SortScratch scratch, int64_t first_row, int64_t size_lo, int64_t size_hi,
                      SortSource from, bool to_results) {
  using Key = typename KeyTraits<T>::Key;
  __shared__ Key keys[kSortTile];
  __shared__ int64_t pos[kSortTile];
  const TopkRows& rows = p.rows;
  const int64_t r = blockIdx.y;
  const int64_t tile_len = scratch.padded < kSortTile ? scratch.padded : kSortTile;
  const int64_t tile_start = int64_t(blockIdx.x) * tile_len;
  const TopkRows::Offsets o = rows.offsets(first_row + r);
  const T* x = static_cast<const T*>(p.x) + o.x;
  T* values = static_cast<T*>(p.values) + o.values;
  int64_t* indices = p.indices + o.indices;
  Key* row_keys = static_cast<Key*>(scratch.keys) + r * scratch.padded;
  int64_t* row_pos = scratch.pos + r * scratch.padded;

  for (int64_t t = threadIdx.x; t < tile_len; t += blockDim.x) {
    const int64_t i = tile_start + t;
    if (from == SortSource::kScratch) {
      keys[t] = row_keys[i];
      pos[t] = row_pos[i];
    } else if (from == SortSource::kRow) {
      const bool real = i < rows.row_len;
      keys[t] = real ? KeyTraits<T>::ranked_key(x[i * rows.x_stride], p.largest) : Key(0);
      pos[t] = real ? i : kPadPosition;
    } else {
      const bool real = i < rows.k;
      keys[t] = real ? KeyTraits<T>::ranked_key(values[i * rows.values_stride], p.largest) : Key(0);
      pos[t] = real ? indices[i * rows.indices_stride] : kPadPosition;
    }
  }
  __syncthreads();
  for (int64_t size = size_lo; size <= size_hi; size <<= 1) {
    for (int stride = int(size < tile_len ? size : tile_len) / 2; stride > 0; stride >>= 1) {
      for (int q = threadIdx.x; q < int(tile_len) / 2; q += blockDim.x) {
        const int i = lower_of_pair(q, stride);
        compare_exchange(keys, pos, i, i + stride, ((tile_start + i) & size) == 0);
      }
      __syncthreads();
    }
  }
  for (int64_t t = threadIdx.x; t < tile_len; t += blockDim.x) {
    const int64_t i = tile_start + t;
    if (to_results) {
      if (i < rows.k) {
        values[i * rows.values_stride] = x[pos[t] * rows.x_stride];
        indices[i * rows.indices_stride] = pos[t];
      }
    } else {
      row_keys[i] = keys[t];
      row_pos[i] = pos[t];
    }
  }
}

// One compare-exchange step of stage `size` at `stride` (>= one tile) over every row of the batch.
template <class Key>
__global__ void sort_step_kernel(SortScratch scratch, int64_t batch_rows, int64_t size, int64_t stride) {
  const int64_t pairs_per_row = scratch.padded / 2;  // a power of two
  const int row_shift = __ffsll(pairs_per_row) - 1;
  const int64_t total = batch_rows * pairs_per_row;
  for (int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; g < total; g += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = g >> row_shift, q = g & (pairs_per_row - 1);
    const int64_t i = lower_of_pair(q, stride);
    compare_exchange(static_cast<Key*>(scratch.keys) + r * scratch.padded, scratch.pos + r * scratch.padded, i,
                     i + stride, (i & size) == 0);
  }
}

}  // namespace topk_detail
}  // namespace gpuprims
