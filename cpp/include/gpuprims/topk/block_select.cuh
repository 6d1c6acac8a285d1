#pragma once
// block_per_row: one block selects the top k of one row, every sweep in one launch. The histogram
// and the candidate buffers live in shared memory; a sweep reads the row from global memory until
// the candidates fit a buffer (kCapacity), then only the buffer (sweep.cuh has the algorithm).
#include <cstdint>

#include "gpuprims/topk/sweep.cuh"
#include "gpuprims/topk/topk_params.hpp"

namespace gpuprims {
namespace topk_detail {

template <class Key>
struct BlockSelectShape {
  // Two buffers (read one, write the other) of keys and 32-bit positions in 32 KiB: 2048
  // candidates of 4-byte keys; with the 8 KiB histogram, five blocks fit an SM's shared memory.
  static constexpr int kCapacity = 32768 / (2 * int(sizeof(Key) + sizeof(uint32_t)));
};

// Rows first_row + blockIdx.x; each row shorter than 2^32 (positions are 32-bit in the buffers).
template <class T, int kThreads>
__global__ void __launch_bounds__(kThreads) block_select_kernel(TopkParams p, int64_t first_row) {
  using Key = typename KeyTraits<T>::Key;
  using D = Digits<Key>;
  constexpr int kCapacity = BlockSelectShape<Key>::kCapacity;
  constexpr int kHistItems = items_per_thread<T, 32>(), kItems = items_per_thread<T, 16>();
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
  if (threadIdx.x < 4) counters[threadIdx.x] = 0;
  __syncthreads();
  histogram_row<kThreads, kHistItems>(x, rows.x_stride, 0, n, p.largest, hist);
  __syncthreads();
  Choice c = choose_bin<kThreads>(hist, D::bins(0), static_cast<unsigned long long>(rows.k), scan_temp, choice);
  Key known = Key(c.bin);
  unsigned long long k_rem = static_cast<unsigned long long>(rows.k) - c.above;
  int source = -1;  // the buffer this sweep reads, or -1: the row
  for (int sweep = 1;; ++sweep) {
    const bool last = sweep == D::kPasses || c.count == k_rem;
    const bool buffer = !last && c.count <= static_cast<unsigned long long>(kCapacity);
    const int target = sweep & 1;  // never `source`: sweep - 1 wrote that one
    // choose_bin ended with a barrier: every thread has read the histogram.
    if (!last) {
      for (int d = threadIdx.x; d < D::kMaxBins; d += kThreads) hist[d] = 0;
    }
    if (threadIdx.x == 0) counters[2 + target] = 0;
    __syncthreads();
    const SweepStep<T, unsigned, uint32_t> step{sweep, known, k_rem, rows.k, last, buffer, hist, &counters[0],
                                                &counters[1], &counters[2 + target], buf_key[target],
                                                buf_pos[target], out};
    if (source < 0) {
      walk_row<kThreads, kItems>(x, rows.x_stride, 0, n, p.largest, step);
    } else {
      walk_buffer<kThreads>(buf_key[source], buf_pos[source], 0, int64_t(counters[2 + source]), x, rows.x_stride,
                            step);
    }
    if (last) return;
    __syncthreads();
    c = choose_bin<kThreads>(hist, D::bins(sweep), k_rem, scan_temp, choice);
    known = Key((known << D::width(sweep)) | Key(c.bin));
    k_rem -= c.above;
    source = buffer ? target : -1;
  }
}

}  // namespace topk_detail
}  // namespace gpuprims
