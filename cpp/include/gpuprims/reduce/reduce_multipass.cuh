#pragma once
// The classic multi-pass ladder (Harris, "Optimizing Parallel Reduction in CUDA"): each block
// reduces a chunk of its row to one partial; the partials are reduced again by the same kernel
// until one value per row is left. Deterministic: chunk boundaries and combination order depend
// only on the sizes. The strategies differ only in how a block reduces its chunk:
//   InterleavedTree  one element per thread; tree with interleaved addressing, `tid % (2s) == 0`
//                    (divergent warps, shared-memory bank conflicts as s grows)
//   SequentialTree   two elements per thread, added while loading; tree with sequential
//                    addressing `tid < s` (contiguous active threads, conflict-free)
//   WarpShuffle      kItems elements per thread, then warp shuffles (block_reduce.cuh): one
//                    shared-memory slot per warp instead of a log2(threads)-step shared tree
#include <cstdint>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/core/error.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/reduce/reduce_common.cuh"
#include "gpuprims/util/math.cuh"

namespace gpuprims {
namespace reduce_detail {

template <class Acc>
struct SharedTree {
  Acc slot[kReduceThreads];
};

struct InterleavedTree {
  static constexpr int kItemsPerBlock = kReduceThreads;
  template <class Acc> using TempStorage = SharedTree<Acc>;

  template <class Acc, class T, class Op>
  __device__ static Acc reduce_chunk(const T* row, const ReduceLayout& layout, int64_t chunk, Op op,
                                     TempStorage<Acc>& temp) {
    const int tid = threadIdx.x;
    const int64_t i = chunk * kItemsPerBlock + tid;
    temp.slot[tid] = i < layout.row_len ? cast_value<Acc>(row[layout.elem_offset(i)])
                                        : Op::template identity<Acc>();
    __syncthreads();
    for (int s = 1; s < kReduceThreads; s *= 2) {
      if (tid % (2 * s) == 0) temp.slot[tid] = op(temp.slot[tid], temp.slot[tid + s]);
      __syncthreads();
    }
    return temp.slot[0];
  }
};

struct SequentialTree {
  static constexpr int kItemsPerBlock = 2 * kReduceThreads;
  template <class Acc> using TempStorage = SharedTree<Acc>;

  template <class Acc, class T, class Op>
  __device__ static Acc reduce_chunk(const T* row, const ReduceLayout& layout, int64_t chunk, Op op,
                                     TempStorage<Acc>& temp) {
    const int tid = threadIdx.x;
    const int64_t i = chunk * kItemsPerBlock + tid;
    temp.slot[tid] = accumulate_scalar(row, layout, i, min_of(layout.row_len, i + kItemsPerBlock),
                                       int64_t(kReduceThreads), op, Op::template identity<Acc>());
    __syncthreads();
    for (int s = kReduceThreads / 2; s > 0; s >>= 1) {
      if (tid < s) temp.slot[tid] = op(temp.slot[tid], temp.slot[tid + s]);
      __syncthreads();
    }
    return temp.slot[0];
  }
};

struct WarpShuffle {
  static constexpr int kItemsPerThread = 8;
  static constexpr int kItemsPerBlock = kItemsPerThread * kReduceThreads;
  template <class Acc> using TempStorage = typename BlockReduce<Acc, kReduceThreads>::TempStorage;

  template <class Acc, class T, class Op>
  __device__ static Acc reduce_chunk(const T* row, const ReduceLayout& layout, int64_t chunk, Op op,
                                     TempStorage<Acc>& temp) {
    const int64_t i = chunk * kItemsPerBlock + threadIdx.x;
    const Acc v = accumulate_scalar(row, layout, i, min_of(layout.row_len, chunk * kItemsPerBlock + kItemsPerBlock),
                                    int64_t(kReduceThreads), op, Op::template identity<Acc>());
    return BlockReduce<Acc, kReduceThreads>::reduce(v, op, temp);
  }
};

// One pass: block (x, y) reduces chunk x of rows y, y + gridDim.y, ... Writes partials[row][x] or,
// on the last pass (partials == nullptr), the final value of the row.
template <class Strategy, class T, class Acc, class Op>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_chunks_kernel(ReduceKernelParams<T> p, Acc* partials) {
  __shared__ typename Strategy::template TempStorage<Acc> temp;
  const Op op;
  for (int64_t row = blockIdx.y; row < p.layout.num_rows; row += gridDim.y) {
    const Acc v = Strategy::template reduce_chunk<Acc>(p.in + p.layout.in_row_offset(row), p.layout,
                                                       blockIdx.x, op, temp);
    if (threadIdx.x == 0) {
      if (partials != nullptr) partials[row * gridDim.x + blockIdx.x] = v;
      else store_as(p.out, p.layout.out_offset(row), p.out_dtype, v);
    }
    __syncthreads();
  }
}

// The layout that reads `len` partials per row from a dense [num_rows][len] buffer and writes the
// rows where `layout` writes them.
inline ReduceLayout partials_layout(const ReduceLayout& layout, int64_t len) {
  ReduceLayout p = layout;
  p.row_len = len;
  p.row_contiguous = true;
  p.red_ndim = 1;
  p.red_sizes[0] = len;
  p.red_strides[0] = 1;
  int64_t stride = len;
  for (int d = p.keep_ndim - 1; d >= 0; --d) {
    p.keep_in_strides[d] = stride;
    stride *= p.keep_sizes[d];
  }
  return p;
}

inline dim3 chunk_grid(int64_t chunks, int64_t rows) {
  return dim3(static_cast<unsigned>(chunks), static_cast<unsigned>(min_of<int64_t>(rows, 65535)));
}

template <class Strategy, class T, class Acc, class Op>
Status run_multipass(const T* in, const ReduceLayout& layout, void* out, DType out_dtype, int device,
                     cudaStream_t stream, const char* op_name) {
  constexpr int64_t kItems = Strategy::kItemsPerBlock;
  const int64_t rows = layout.num_rows;
  int64_t chunks = max_of<int64_t>(1, ceil_div(layout.row_len, kItems));
  if (rows == 0) return Status::ok();

  // Two ping-pong partial buffers: pass k writes what pass k + 1 reads.
  const int64_t first = chunks > 1 ? rows * chunks : 0;
  const int64_t second = chunks > kItems ? rows * ceil_div(chunks, kItems) : 0;
  StreamScratch scratch;
  if (first > 0) {
    GPUPRIMS_TRY(scratch.allocate(sizeof(Acc) * (first + second), device, stream, op_name));
  }
  Acc* buffers[2] = {static_cast<Acc*>(scratch.data()), static_cast<Acc*>(scratch.data()) + first};

  ReduceKernelParams<T> p{in, layout, out, out_dtype};
  Acc* dst = chunks > 1 ? buffers[0] : nullptr;
  reduce_chunks_kernel<Strategy, T, Acc, Op><<<chunk_grid(chunks, rows), kReduceThreads, 0, stream>>>(p, dst);
  GPUPRIMS_TRY(check_launch(op_name, stream));

  for (int pass = 1; chunks > 1; ++pass) {
    const int64_t len = chunks;
    chunks = ceil_div(len, kItems);
    Acc* src = dst;
    dst = chunks > 1 ? buffers[pass % 2] : nullptr;
    ReduceKernelParams<Acc> q{src, partials_layout(layout, len), out, out_dtype};
    reduce_chunks_kernel<Strategy, Acc, Acc, Op><<<chunk_grid(chunks, rows), kReduceThreads, 0, stream>>>(q, dst);
    GPUPRIMS_TRY(check_launch(op_name, stream));
  }
  return Status::ok();
}

}  // namespace reduce_detail
}  // namespace gpuprims
