#pragma once
// split_row: several blocks per row, one launch per sweep (sweep.cuh has the algorithm). Each
// block histograms its slice of the row in shared memory and adds it to the row's global
// histogram; the last block of the row to finish (a completion ticket) chooses the bin and writes
// the row's state for the next launch. Candidates go to a global buffer once they are at most the
// buffer's capacity.
#include <cstdint>

#include "gpuprims/topk/sweep.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/topk/topk_params.hpp"

namespace gpuprims {
namespace topk_detail {

constexpr int kMaxSweeps = 8;  // 64-bit keys: six digits, then the last sweep

// One row's progress, zeroed before sweep 0 (a memset), written between launches by the row's
// last block of each histogram sweep.
struct SplitRowState {
  unsigned long long above_slots, tie_slots;
  unsigned long long buffer_fill[2];     // sweep s writes buffer s & 1
  unsigned long long known;              // the k-th largest key's digits through the last chosen one
  unsigned long long k_rem;
  unsigned blocks_done[kMaxSweeps];      // completion tickets of each sweep
  unsigned last_sweep;                   // 0 while unknown; sweeps beyond it do nothing
  unsigned reads_buffer;                 // the next sweep reads the buffer the last one wrote
  unsigned writes_buffer;                // the next sweep copies its candidates to a buffer
};

struct SplitScratch {
  SplitRowState* state;                  // one per row of the batch
  unsigned long long* hist;              // Digits::kMaxBins per row of the batch, zeroed
  void* buf_key;                         // per row: two buffers of `capacity` keys
  unsigned long long* buf_pos;           // likewise, positions
  int64_t capacity;
};

// Grid: (blocks_per_row, rows of the batch); the row's slice for blockIdx.x of the row (sweeps
// that read it) or of the buffer.
template <class T, int kThreads>
__global__ void __launch_bounds__(kThreads) split_sweep_kernel(TopkParams p, SplitScratch scratch, int64_t first_row,
                                                              int sweep) {
  using Key = typename KeyTraits<T>::Key;
  using D = Digits<Key>;
  __shared__ unsigned hist[D::kMaxBins];
  __shared__ unsigned long long total[D::kMaxBins];
  __shared__ typename BlockScan<unsigned long long, kThreads>::TempStorage scan_temp;
  __shared__ Choice choice;
  __shared__ bool is_last_block;

  const TopkRows& rows = p.rows;
  const int64_t r = blockIdx.y;
  SplitRowState& st = scratch.state[r];
  unsigned long long* row_hist = scratch.hist + r * D::kMaxBins;
  Key* keys = static_cast<Key*>(scratch.buf_key) + r * 2 * scratch.capacity;
  unsigned long long* positions = scratch.buf_pos + r * 2 * scratch.capacity;

  // The state the previous launch left (sweep 0 starts from the k-th key unknown).
  const unsigned last_sweep = sweep == 0 ? 0u : st.last_sweep;
  if (last_sweep != 0 && unsigned(sweep) > last_sweep) return;
  const bool last = sweep != 0 && unsigned(sweep) == last_sweep;
  const Key known = sweep == 0 ? Key(0) : Key(st.known);
  const unsigned long long k_rem = sweep == 0 ? static_cast<unsigned long long>(rows.k) : st.k_rem;
  const bool reads_buffer = sweep != 0 && st.reads_buffer != 0;
  const bool writes_buffer = sweep != 0 && st.writes_buffer != 0;
  const int target = sweep & 1;
  const int source = target ^ 1;

  const TopkRows::Offsets o = rows.offsets(first_row + r);
  const T* x = static_cast<const T*>(p.x) + o.x;
  const RowOutput<T> out{static_cast<T*>(p.values) + o.values, rows.values_stride, p.indices + o.indices,
                         rows.indices_stride};
  const int64_t length = reads_buffer ? int64_t(st.buffer_fill[source]) : rows.row_len;
  // A buffer, mostly short, goes to the first blocks in slices of at least kMinBufferSlice; the
  // blocks left without a slice only take their ticket.
  constexpr int64_t kMinBufferSlice = 2048;
  int64_t slice = ceil_div<int64_t>(length, gridDim.x);
  if (reads_buffer && slice < kMinBufferSlice) slice = kMinBufferSlice;
  const int64_t begin = slice * blockIdx.x < length ? slice * blockIdx.x : length;
  const int64_t end = begin + slice < length ? begin + slice : length;
  const bool idle = begin == end;

  if (!last && !idle) {
    for (int d = threadIdx.x; d < D::kMaxBins; d += kThreads) hist[d] = 0;
    __syncthreads();
  }
  if (idle) {
    // nothing to read: no keys to output or count
  } else if (sweep == 0) {
    walk_row<kThreads, kHistogramBytes>(x, rows.x_stride, begin, end, p.largest, [&](bool ok, Key key, int64_t, auto) {
      if (ok) atomicAdd(&hist[D::digit(key, 0)], 1u);
    });
  } else {
    const SweepStep<T, D, unsigned long long, unsigned long long> step{
        sweep, known, k_rem, rows.k, last, writes_buffer, hist, &st.above_slots, &st.tie_slots,
        &st.buffer_fill[target], keys + target * scratch.capacity, positions + target * scratch.capacity, out};
    if (reads_buffer) {
      walk_buffer<kThreads>(keys + source * scratch.capacity, positions + source * scratch.capacity, begin, end, x,
                            rows.x_stride, step);
    } else {
      walk_row<kThreads, kRankBytes>(x, rows.x_stride, begin, end, p.largest, step);
    }
  }
  if (last) return;

  // This block's counts into the row's histogram; the last block to finish chooses the bin.
  __syncthreads();
  for (int d = threadIdx.x; !idle && d < D::kMaxBins; d += kThreads) {
    if (hist[d] != 0) atomicAdd(&row_hist[d], static_cast<unsigned long long>(hist[d]));
  }
  __threadfence();  // release: our histogram and buffer writes before the ticket
  __syncthreads();
  if (threadIdx.x == 0) is_last_block = atomicAdd(&st.blocks_done[sweep], 1u) == gridDim.x - 1;
  __syncthreads();
  if (!is_last_block) return;
  __threadfence();  // acquire: the other blocks' counts, which came before their tickets
  for (int d = threadIdx.x; d < D::kMaxBins; d += kThreads) {
    total[d] = __ldcg(&row_hist[d]);
    row_hist[d] = 0;  // zero again for the next sweep (no other block of this sweep is left)
  }
  __syncthreads();
  Threshold<D, Key> th{known, k_rem, 0};
  th.take(choose_bin<kThreads>(total, D::bins(sweep), k_rem, scan_temp, choice), sweep);
  if (threadIdx.x == 0) {
    const bool next_last = th.last_after(sweep);
    st.known = th.known;
    st.k_rem = th.k_rem;
    st.last_sweep = next_last ? unsigned(sweep + 1) : 0u;
    st.reads_buffer = writes_buffer ? 1u : 0u;
    st.writes_buffer = (!next_last && th.candidates <= static_cast<unsigned long long>(scratch.capacity)) ? 1u : 0u;
    st.buffer_fill[source] = 0;  // the next sweep's target; every block of this one has read its fill
  }
}

}  // namespace topk_detail
}  // namespace gpuprims
