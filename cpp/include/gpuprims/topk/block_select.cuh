#pragma once
// block_per_row: one block selects the top k of one row, every sweep in one launch. The histogram
// and the candidate buffers live in shared memory; a sweep reads the row from global memory until
// the candidates fit a buffer, then only the buffer (sweep.cuh has the algorithm). A row that fits
// a buffer whole is kept there by sweep 0, so it is read from global memory once.
#include <cstdint>

#include "gpuprims/topk/sweep.cuh"
#include "gpuprims/topk/topk_params.hpp"

namespace gpuprims {
namespace topk_detail {

// The two shapes of the kernel: long rows take 512 threads and 11-bit digits (fewer sweeps over a
// row read from global memory); rows that fit the buffer take 128 threads and 8-bit digits. A
// short row's time goes to what every sweep costs each thread (clearing and scanning the bins,
// barriers), not to its keys: ncu on 16384 x 1024 float32 counted 280 instructions per key with
// 256 threads, and the SMs issue-bound. 256 bins cost a sixth of 2048 to clear and scan.
template <class Key, int kThreadsArg, int kDigitBitsArg>
struct BlockSelectShape {
  static constexpr int kThreads = kThreadsArg;
  using D = Digits<Key, kDigitBitsArg>;
  // Two buffers (read one, write the other) of keys and 32-bit positions in 32 KiB: 2048
  // candidates of 4-byte keys.
  static constexpr int kCapacity = 32768 / (2 * int(sizeof(Key) + sizeof(uint32_t)));
};
template <class Key> using LongRowShape = BlockSelectShape<Key, 512, 11>;
template <class Key> using ShortRowShape = BlockSelectShape<Key, 128, 8>;

// Rows first_row + blockIdx.x; each row shorter than 2^32 (positions are 32-bit in the buffers).
template <class T, class Shape>
__global__ void __launch_bounds__(Shape::kThreads) block_select_kernel(TopkParams p, int64_t first_row) {
  using Key = typename KeyTraits<T>::Key;
  using D = typename Shape::D;
  constexpr int kThreads = Shape::kThreads;
  constexpr int kCapacity = Shape::kCapacity;
  __shared__ unsigned hist[D::kMaxBins];
  __shared__ Key buf_key[2][kCapacity];
  __shared__ uint32_t buf_pos[2][kCapacity];
  __shared__ unsigned counters[4];  // above slots, tie slots, fill of buffer 0, of buffer 1
  __shared__ typename BlockScan<unsigned long long, kThreads>::TempStorage scan_temp;
  __shared__ Choice choice;

  const TopkRows& rows = p.rows;
  const TopkRows::Offsets o = rows.offsets(first_row + blockIdx.x);
  const T* x = static_cast<const T*>(p.x) + o.x;
  const int64_t n = rows.row_len;
  const RowOutput<T> out{static_cast<T*>(p.values) + o.values, rows.values_stride, p.indices + o.indices,
                         rows.indices_stride};

  for (int d = threadIdx.x; d < D::kMaxBins; d += kThreads) hist[d] = 0;
  const bool keep_row = n <= kCapacity;
  if (threadIdx.x < 4) counters[threadIdx.x] = (threadIdx.x == 2 && keep_row) ? unsigned(n) : 0u;
  __syncthreads();
  walk_row<kThreads, kHistogramBytes>(x, rows.x_stride, 0, n, p.largest, [&](bool ok, Key key, int64_t i, auto) {
    if (!ok) return;
    atomicAdd(&hist[D::digit(key, 0)], 1u);
    if (keep_row) {
      buf_key[0][i] = key;
      buf_pos[0][i] = uint32_t(i);
    }
  });
  __syncthreads();
  Threshold<D, Key> th{Key(0), static_cast<unsigned long long>(rows.k), 0};
  th.take(choose_bin<kThreads>(hist, D::bins(0), th.k_rem, scan_temp, choice), 0);
  int source = keep_row ? 0 : -1;  // the buffer this sweep reads, or -1: the row
  for (int sweep = 1;; ++sweep) {
    const bool last = th.last_after(sweep - 1);
    const bool buffer = !last && th.candidates <= static_cast<unsigned long long>(kCapacity);
    const int target = sweep & 1;  // never `source`: sweep - 1 wrote that one (or sweep 0 kept the row in 0)
    // choose_bin ended with a barrier: every thread has read the histogram.
    if (!last) {
      for (int d = threadIdx.x; d < D::kMaxBins; d += kThreads) hist[d] = 0;
    }
    if (threadIdx.x == 0) counters[2 + target] = 0;
    __syncthreads();
    const SweepStep<T, D, unsigned, uint32_t> step{sweep, th.known, th.k_rem, rows.k, last, buffer, hist, &counters[0],
                                                   &counters[1], &counters[2 + target], buf_key[target],
                                                   buf_pos[target], out};
    if (source < 0) {
      walk_row<kThreads, kRankBytes>(x, rows.x_stride, 0, n, p.largest, step);
    } else {
      walk_buffer<kThreads>(buf_key[source], buf_pos[source], 0, int64_t(counters[2 + source]), x, rows.x_stride,
                            step);
    }
    if (last) return;
    __syncthreads();
    th.take(choose_bin<kThreads>(hist, D::bins(sweep), th.k_rem, scan_temp, choice), sweep);
    source = buffer ? target : -1;
  }
}

}  // namespace topk_detail
}  // namespace gpuprims
