#pragma once
// "window": many small blocks in blockIdx order, each reducing one contiguous chunk of its row
// (WindowShape: 512 threads x 4 16-byte loads, 32 KiB), so the blocks in flight read one window of
// the array as the hardware schedules them; each block writes its partial and exits, with no fence
// or ticket, and a second launch combines a row's partials in index order. The partition depends
// only on the shape, so float results are run-to-run bitwise identical.
//
// Why (bench/tune/reduce_window_tune.cu, 2^28 int32 / float32 sums, calls back to back over four
// rotated 1 GiB inputs, CUB in the same program): on an H100 (session 14 run 5) this shape ran at
// 1.014-1.020x cub::DeviceReduce::Sum where vectorized (a chunk per block, whole waves) ran at
// 0.992-0.997x and bulk_copy at 0.981-0.988x; on an H200 (session 13 run 7) at 0.999-1.001x, level
// with bulk_copy (1.000-1.002x). The same small blocks ending in a fence and a ticket (the
// single-pass form) lost 17 points on the H200, hence the second launch. The library kernels in the
// benchmark (python -m gpuprims.bench reduce, H100, session 14 run 8): int32 1.009x, float32 1.014x
// CUB; vectorized 0.997x / 0.991x, bulk_copy 0.983x / 0.987x in the same run.
#include <cstdint>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/reduce/reduce_common.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace reduce_detail {

struct WindowShape {
  static constexpr int kThreads = 512;
  static constexpr int kUnroll = 4;          // 16-byte loads in flight per thread: the whole chunk at once
  static constexpr int kCombineThreads = 1024;
};

// Chunk `part` of a contiguous row: vectors [part, part + 1) * kThreads * kUnroll of the row's
// 16-byte aligned body, every thread's kUnroll loads issued before its first add, one accumulator
// per vector lane. (Written out rather than taken from accumulate_vectorized: through that loop, with
// one vector's lanes chained into one accumulator, the float32 kernel ran at 0.80x CUB against this
// form's 1.018-1.020x on an H100, session 14 run 7, where the int32 kernels differed by 0.5 %.) Part
// 0 also takes the scalars before the body (the head, up to the first 16-byte boundary) and after
// its last whole vector (the tail). Parts past the body add nothing: the grid is sized from the row
// length, which no row's body exceeds.
template <int kThreads, int kUnroll, class Acc, class T, class Op>
__device__ __forceinline__ Acc accumulate_window_chunk(const T* row, int64_t n, int64_t part, int tid, Op op) {
  constexpr int kLanes = Vec16<T>::kLanes;
  const int64_t head = aligned_head(row, n);
  const T* body = row + head;
  const int64_t num_vec = (n - head) / kLanes;
  const int64_t first = part * (int64_t(kThreads) * kUnroll);
  Acc lane_acc[kLanes];
#pragma unroll
  for (int l = 0; l < kLanes; ++l) lane_acc[l] = Op::template identity<Acc>();
  if (first + int64_t(kThreads) * kUnroll <= num_vec) {
    Vec16<T> x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x[u] = load_vec16<T, LoadPolicy::kReadOnly>(body + (first + u * kThreads + tid) * kLanes);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) fold_vector<kLanes>(lane_acc, x[u], op);
  } else {
    for (int64_t v = first + tid; v < num_vec; v += kThreads) {
      fold_vector<kLanes>(lane_acc, load_vec16<T, LoadPolicy::kReadOnly>(body + v * kLanes), op);
    }
  }
  if (part == 0) {
    if (tid < head) lane_acc[0] = op(lane_acc[0], cast_value<Acc>(row[tid]));
    const int64_t tail = head + num_vec * kLanes + tid;
    if (tail < n) lane_acc[0] = op(lane_acc[0], cast_value<Acc>(row[tail]));
  }
#pragma unroll
  for (int l = 1; l < kLanes; ++l) lane_acc[0] = op(lane_acc[0], lane_acc[l]);
  return lane_acc[0];
}

// Grid (parts, rows): block (part, row) reduces chunk `part` of the row and stores the row's
// result when the row is one chunk, else its partial at partials[row * parts + part].
template <class T, class Acc, class Op, int kThreads = WindowShape::kThreads, int kUnroll = WindowShape::kUnroll>
__global__ void __launch_bounds__(kThreads) reduce_window_kernel(ReduceKernelParams<T> p, Acc* partials) {
  using BR = BlockReduce<Acc, kThreads>;
  __shared__ typename BR::TempStorage temp;
  const Op op;
  const ReduceLayout& layout = p.layout;
  const int64_t parts = gridDim.x;
  for (int64_t row = blockIdx.y; row < layout.num_rows; row += gridDim.y) {
    Acc acc = accumulate_window_chunk<kThreads, kUnroll, Acc>(p.in + layout.in_row_offset(row), layout.row_len,
                                                              blockIdx.x, threadIdx.x, op);
    acc = BR::reduce(acc, op, temp);
    if (threadIdx.x == 0) {
      if (parts == 1) store_as(p.out, layout.out_offset(row), p.out_dtype, acc);
      else partials[row * parts + blockIdx.x] = acc;
    }
    __syncthreads();  // temp is reused by the next row
  }
}

// A block per row (looping over rows): the row's `parts` partials combined by combine_published (in
// index order per thread, then the block tree); the launch boundary orders reduce_window_kernel's
// stores before these loads.
template <class T, class Acc, class Op, int kThreads = WindowShape::kCombineThreads>
__global__ void __launch_bounds__(kThreads)
    reduce_window_combine_kernel(ReduceKernelParams<T> p, const Acc* partials, int64_t parts) {
  using BR = BlockReduce<Acc, kThreads>;
  __shared__ typename BR::TempStorage temp;
  const Op op;
  for (int64_t row = blockIdx.x; row < p.layout.num_rows; row += gridDim.x) {
    const Acc acc = combine_published<kThreads>(partials + row * parts, parts, op, temp);
    if (threadIdx.x == 0) store_as(p.out, p.layout.out_offset(row), p.out_dtype, acc);
    __syncthreads();  // temp is reused by the next row
  }
}

}  // namespace reduce_detail
}  // namespace gpuprims
