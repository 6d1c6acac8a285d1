#pragma once
// Atomic rungs of the ladder. Each row owns one accumulator in scratch memory, set to the identity,
// combined into with atomics, then converted to the output dtype.
//   atomic_naive      one atomic per element: every element contends for the same address
//   atomic_per_block  grid-stride loop + warp-shuffle block reduce, one atomic per block
// Float sums through atomics depend on the order in which blocks arrive: results may differ in the
// last bits from run to run (the variants say so; "auto" never picks them).
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/core/error.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/reduce/reduce_common.cuh"
#include "gpuprims/util/math.cuh"

namespace gpuprims {
namespace reduce_detail {

template <class A> struct AtomicWord;
template <> struct AtomicWord<float> { using type = unsigned int; };
template <> struct AtomicWord<double> { using type = unsigned long long; };
template <> struct AtomicWord<int64_t> { using type = unsigned long long; };
template <> struct AtomicWord<uint64_t> { using type = unsigned long long; };

// *addr = op(*addr, v), atomically. Sums use the hardware add (integer adds wrap identically in
// signed and unsigned form); integer min/max use the hardware min/max; everything else (float
// min/max with NaN propagation, products) a compare-and-swap loop.
template <class Op, class Acc>
__device__ __forceinline__ void atomic_combine(Acc* addr, Acc v) {
  using Word = typename AtomicWord<Acc>::type;
  if constexpr (Op::kIsSum && std::is_floating_point<Acc>::value) {
    atomicAdd(addr, v);
  } else if constexpr (Op::kIsSum) {
    atomicAdd(reinterpret_cast<Word*>(addr), static_cast<Word>(v));
  } else if constexpr (std::is_same<Op, Min>::value && std::is_same<Acc, int64_t>::value) {
    atomicMin(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
  } else if constexpr (std::is_same<Op, Max>::value && std::is_same<Acc, int64_t>::value) {
    atomicMax(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
  } else if constexpr (std::is_same<Op, Min>::value && std::is_same<Acc, uint64_t>::value) {
    atomicMin(reinterpret_cast<Word*>(addr), static_cast<Word>(v));
  } else if constexpr (std::is_same<Op, Max>::value && std::is_same<Acc, uint64_t>::value) {
    atomicMax(reinterpret_cast<Word*>(addr), static_cast<Word>(v));
  } else {
    Word* word = reinterpret_cast<Word*>(addr);
    Word seen = *reinterpret_cast<volatile Word*>(word);
    while (true) {
      Acc current;
      memcpy(&current, &seen, sizeof(Acc));
      const Acc next = Op()(current, v);
      Word desired;
      memcpy(&desired, &next, sizeof(Acc));
      if (desired == seen) return;
      const Word prior = atomicCAS(word, seen, desired);
      if (prior == seen) return;
      seen = prior;
    }
  }
}

template <class Acc, class Op>
__global__ void fill_identity_kernel(Acc* acc, int64_t rows) {
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x)
    acc[r] = Op::template identity<Acc>();
}

template <class Acc>
__global__ void store_rows_kernel(const Acc* acc, ReduceLayout layout, void* out, DType out_dtype) {
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < layout.num_rows;
       r += int64_t(gridDim.x) * blockDim.x)
    store_as(out, layout.out_offset(r), out_dtype, acc[r]);
}

template <class T, class Acc, class Op>
__global__ void __launch_bounds__(kReduceThreads)
    atomic_naive_kernel(ReduceKernelParams<T> p, Acc* acc) {
  const int64_t total = p.layout.num_rows * p.layout.row_len;
  for (int64_t e = blockIdx.x * int64_t(kReduceThreads) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * kReduceThreads) {
    const int64_t row = e / p.layout.row_len, i = e % p.layout.row_len;
    const T* in_row = p.in + p.layout.in_row_offset(row);
    atomic_combine<Op>(&acc[row], cast_value<Acc>(in_row[p.layout.elem_offset(i)]));
  }
}

template <class T, class Acc, class Op>
__global__ void __launch_bounds__(kReduceThreads)
    atomic_per_block_kernel(ReduceKernelParams<T> p, Acc* acc) {
  using BR = BlockReduce<Acc, kReduceThreads>;
  __shared__ typename BR::TempStorage temp;
  const Op op;
  const int64_t gtid = blockIdx.x * int64_t(kReduceThreads) + threadIdx.x;
  const int64_t gstride = int64_t(gridDim.x) * kReduceThreads;
  for (int64_t row = blockIdx.y; row < p.layout.num_rows; row += gridDim.y) {
    Acc v = accumulate_scalar(p.in + p.layout.in_row_offset(row), p.layout, gtid, p.layout.row_len, gstride,
                              op, Op::template identity<Acc>());
    v = BR::reduce(v, op, temp);
    if (threadIdx.x == 0) atomic_combine<Op>(&acc[row], v);
    __syncthreads();
  }
}

enum class AtomicScheme { kPerElement, kPerBlock };

template <AtomicScheme kScheme, class T, class Acc, class Op>
Status run_atomic(const T* in, const ReduceLayout& layout, void* out, DType out_dtype, int device, int sm_count,
                  cudaStream_t stream, const char* op_name) {
  const int64_t rows = layout.num_rows;
  if (rows == 0) return Status::ok();
  StreamScratch scratch;
  GPUPRIMS_TRY(scratch.allocate(sizeof(Acc) * rows, device, stream, op_name));
  Acc* acc = static_cast<Acc*>(scratch.data());
  const auto row_blocks = static_cast<unsigned>(min_of<int64_t>(ceil_div<int64_t>(rows, kReduceThreads), 65535));

  fill_identity_kernel<Acc, Op><<<row_blocks, kReduceThreads, 0, stream>>>(acc, rows);
  GPUPRIMS_TRY(check_launch(op_name, stream));
  ReduceKernelParams<T> p{in, layout, out, out_dtype};
  if (layout.row_len > 0) {
    if constexpr (kScheme == AtomicScheme::kPerElement) {
      const int64_t blocks = min_of<int64_t>(ceil_div<int64_t>(rows * layout.row_len, kReduceThreads),
                                             int64_t(sm_count) * 32);
      atomic_naive_kernel<T, Acc, Op><<<static_cast<unsigned>(blocks), kReduceThreads, 0, stream>>>(p, acc);
    } else {
      const int64_t per_row = max_of<int64_t>(
          1, min_of<int64_t>(ceil_div<int64_t>(int64_t(sm_count) * 4, rows),
                             ceil_div<int64_t>(layout.row_len, kReduceThreads * 4)));
      const dim3 grid(static_cast<unsigned>(per_row), static_cast<unsigned>(min_of<int64_t>(rows, 65535)));
      atomic_per_block_kernel<T, Acc, Op><<<grid, kReduceThreads, 0, stream>>>(p, acc);
    }
    GPUPRIMS_TRY(check_launch(op_name, stream));
  }
  store_rows_kernel<Acc><<<row_blocks, kReduceThreads, 0, stream>>>(acc, layout, out, out_dtype);
  return check_launch(op_name, stream);
}

}  // namespace reduce_detail
}  // namespace gpuprims
