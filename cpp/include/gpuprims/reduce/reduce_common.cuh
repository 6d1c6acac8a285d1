#pragma once
// Pieces every reduce kernel shares: the parameter block and the per-thread accumulation loop over
// a strided (or contiguous) row.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/core/numeric.hpp"
#include "gpuprims/reduce/reduce_layout.hpp"
#include "gpuprims/reduce/reduce_ops.hpp"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace reduce_detail {

constexpr int kReduceThreads = 256;

template <class T>
struct ReduceKernelParams {
  const T* in;          // element (0, ..., 0), negative strides already flipped
  ReduceLayout layout;
  void* out;            // final results, written with store_as(out, layout.out_offset(row), ...)
  DType out_dtype;
};

// acc ∘= row[i] for i = begin, begin + step, ... < end. Scalar loads, coalesced when the row is
// contiguous and consecutive threads take consecutive i.
template <class Acc, class T, class Op>
__device__ __forceinline__ Acc accumulate_scalar(const T* row, const ReduceLayout& layout, int64_t begin,
                                                 int64_t end, int64_t step, Op op, Acc acc) {
  if (layout.row_contiguous) {
    for (int64_t i = begin; i < end; i += step) acc = op(acc, cast_value<Acc>(row[i]));
  } else {
    for (int64_t i = begin; i < end; i += step) acc = op(acc, cast_value<Acc>(row[layout.elem_offset(i)]));
  }
  return acc;
}

// Sums of 1- and 2-byte integer items (bool, int8, uint8, int16, uint16) into an integer
// accumulator add a 16-byte vector's items in dot-product instructions with a vector of 1s (dp4a:
// four bytes a word, dp2a: two 16-bit halves) into one 32-bit partial (at most 16 x 255 or 8 x 65535
// in magnitude, so exact), added to the accumulator once: about 6 instructions a vector where
// converting each item to the 64-bit accumulator and adding it took 3-4 an item. bool bytes are made
// 0 / 1 first (__vsetne4), as cast_value reads them. Integer sums are exact (or wrap modulo the
// accumulator, as numpy's with a narrow dtype=) in any order, so results are unchanged. H200, 2^28
// items into int64, % of copy bandwidth of the bytes read: bool / int8 53.1 / 43.4 before (session
// 45 device run 6, bench/results/h200/awkward_probe_s45r6.txt), 93.4 / 92.8 after (run 7,
// narrow_sums_row_scans_s45r7.txt; docs/reduce.md, "Sums of narrow integers").
template <class Op, class Acc, class T>
constexpr bool kPackedIntegerSum = Op::kIsSum && std::is_integral<Acc>::value && std::is_integral<T>::value &&
                                   sizeof(T) <= 2;

// Minima and maxima of float16 / bfloat16 items are exact in the items' own type, so a vector's four
// pairs fold by packed NaN-propagating min / max (__hmax2_nan: NaN if either operand is) into one
// pair, and only that pair converts to the float accumulator: 3 packed instructions, 2 conversions
// and 2 NaN-checking folds where each of the 8 items took a conversion and a NaN-checking fold.
// H200, max of 2^28 bfloat16: 68.3 % of copy bandwidth against torch.amax's 76.9 % before (session
// 45 device run 6, bench/results/h200/awkward_probe_s45r6.txt), 98.2 % against 77.1 % after (session
// 47 run 3, bench/results/h200/reduce_torch_gaps_s47r3.txt).
template <class Op, class T>
constexpr bool kPackedHalfMinMax = (std::is_same<Op, Min>::value || std::is_same<Op, Max>::value) &&
                                   (std::is_same<T, half_t>::value || std::is_same<T, bfloat16_t>::value);

template <class T>
using half_pair_t = std::conditional_t<std::is_same<T, half_t>::value, __half2, __nv_bfloat162>;

template <class Op, class Pair>
__device__ __forceinline__ Pair packed_min_max(Pair a, Pair b) {
  if constexpr (std::is_same<Op, Max>::value) return __hmax2_nan(a, b);
  else return __hmin2_nan(a, b);
}

// Op's identity (-inf for max, +inf for min) in both halves of a pair of T.
template <class Op, class T>
__device__ __forceinline__ half_pair_t<T> packed_identity() {
  const float identity = Op::template identity<float>();
  if constexpr (std::is_same<T, half_t>::value) return __float2half2_rn(identity);
  else return __float2bfloat162_rn(identity);
}

// The items of vector x folded into acc[0 .. kAccs): lane l into acc[l % kAccs] (kAccs chains hide
// the float adds' latency), or, for packed integer sums, the vector's partial into acc[0], or, for
// packed half minima and maxima, the vector's pair into acc[0] and acc[1 % kAccs].
template <int kAccs, class Acc, class T, class Op>
__device__ __forceinline__ void fold_vector(Acc* acc, const Vec16<T>& x, Op op) {
  if constexpr (kPackedHalfMinMax<Op, T>) {
    using Pair = half_pair_t<T>;
    Pair w[4];
    memcpy(w, &x, sizeof(w));
    const Pair m = packed_min_max<Op>(packed_min_max<Op>(w[0], w[1]), packed_min_max<Op>(w[2], w[3]));
    T pair[2];
    memcpy(pair, &m, sizeof(pair));
    acc[0] = op(acc[0], cast_value<Acc>(pair[0]));
    acc[1 % kAccs] = op(acc[1 % kAccs], cast_value<Acc>(pair[1]));
  } else if constexpr (kPackedIntegerSum<Op, Acc, T>) {
    uint32_t w[4];
    memcpy(w, &x, sizeof(w));
    if constexpr (std::is_signed<T>::value) {
      int partial = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        partial = sizeof(T) == 1 ? __dp4a(int(w[k]), 0x01010101, partial) : __dp2a_lo(int(w[k]), 0x0101, partial);
      }
      acc[0] = op(acc[0], Acc(partial));
    } else {
      unsigned partial = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const unsigned word = std::is_same<T, bool>::value ? __vsetne4(w[k], 0u) : w[k];
        partial = sizeof(T) == 1 ? __dp4a(word, 0x01010101u, partial) : __dp2a_lo(word, 0x0101u, partial);
      }
      acc[0] = op(acc[0], Acc(partial));
    }
  } else {
#pragma unroll
    for (int l = 0; l < Vec16<T>::kLanes; ++l) acc[l % kAccs] = op(acc[l % kAccs], cast_value<Acc>(x.lane[l]));
  }
}

// Elements of a contiguous row before its first 16-byte boundary (at most n): the scalar head that
// the vector kernels (vectorized, bulk_copy, window) read before their aligned body.
template <class T>
__device__ __forceinline__ int64_t aligned_head(const T* row, int64_t n) {
  const int64_t head = static_cast<int64_t>(((16 - (reinterpret_cast<uintptr_t>(row) & 15)) & 15) / sizeof(T));
  return head < n ? head : n;
}

// Reads a value another block published before its __threadfence(): ld.global.cg caches in L2
// only (L1 is not coherent across SMs). Unlike a volatile load it may be batched with its
// neighbours, so a block combining many partials keeps several loads in flight.
template <class T>
__device__ __forceinline__ T load_published(const T* p) {
  if constexpr (sizeof(T) == 8) {
    const unsigned long long bits = __ldcg(reinterpret_cast<const unsigned long long*>(p));
    T v;
    memcpy(&v, &bits, sizeof(T));
    return v;
  } else {
    static_assert(sizeof(T) == 4, "load_published: 4- or 8-byte values");
    const unsigned int bits = __ldcg(reinterpret_cast<const unsigned int*>(p));
    T v;
    memcpy(&v, &bits, sizeof(T));
    return v;
  }
}

// Combines the `count` partials of a row that other blocks published, in index order per thread,
// then across the block. Result valid in thread 0. (Unrolling the loop to batch the loads made ptxas
// spill in the int64 kernels, which cost more than the tail it saves.)
template <int kThreads, class Acc, class Op, class TempStorage>
__device__ __forceinline__ Acc combine_published(const Acc* partials, int64_t count, Op op, TempStorage& temp) {
  Acc acc = Op::template identity<Acc>();
  for (int64_t i = threadIdx.x; i < count; i += kThreads) acc = op(acc, load_published(&partials[i]));
  return BlockReduce<Acc, kThreads>::reduce(acc, op, temp);
}

// The end of a single-pass reduction of one row split over `parts` blocks: `acc` is this block's
// share (block-reduced, valid in thread 0). One part: thread 0 stores the row's result. Several:
// thread 0 publishes the partial, __threadfence()s (a device-scope fence: the store is visible to
// every later observer of the ticket) and draws the row's ticket with a relaxed atomicAdd; the block
// that draws the last one fences again, combines the partials in index order (combine_published,
// L2 reads) and stores the result, and returns the ticket to zero, so a stream can keep its tickets
// from launch to launch (core/stream.hpp, stream_counters). Ends with a barrier: temp and
// is_last_block may be reused.
template <int kThreads, class T, class Acc, class Op, class TempStorage>
__device__ __forceinline__ void finish_row(Acc acc, const ReduceKernelParams<T>& p, int64_t row, int64_t part,
                                           int64_t parts, Acc* partials, unsigned int* tickets, Op op,
                                           TempStorage& temp, bool& is_last_block) {
  if (parts == 1) {
    if (threadIdx.x == 0) store_as(p.out, p.layout.out_offset(row), p.out_dtype, acc);
  } else {
    if (threadIdx.x == 0) {
      partials[row * parts + part] = acc;
      __threadfence();
      is_last_block = atomicAdd(&tickets[row], 1u) == parts - 1;
    }
    __syncthreads();
    if (is_last_block) {
      __threadfence();
      const Acc total = combine_published<kThreads>(partials + row * parts, parts, op, temp);
      if (threadIdx.x == 0) {
        store_as(p.out, p.layout.out_offset(row), p.out_dtype, total);
        tickets[row] = 0;
      }
    }
  }
  __syncthreads();
}

}  // namespace reduce_detail
}  // namespace gpuprims
