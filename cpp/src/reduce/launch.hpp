#pragma once
// What dispatch hands a variant: one validated reduction, already laid out as rows.
#include <type_traits>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/reduce.hpp"
#include "gpuprims/reduce/reduce_layout.hpp"
#include "gpuprims/reduce/reduce_ops.hpp"

namespace gpuprims {
namespace reduce_detail {

struct ReduceLaunch {
  const void* in;        // element (0, ..., 0) after flipping negative strides
  DType in_dtype;
  ReduceOp op;
  AccWidth width;        // from the result dtype (reduce_ops.hpp)
  ReduceLayout layout;
  void* out;
  DType out_dtype;
  int device;            // -1 for the CPU reference
  int sm_count;
  int cc_major;          // compute capability major of the device (9: Hopper)
  cudaStream_t stream;
};

// One entry per variant, each defined in its own translation unit (variant_<name>.cu).
Status reduce_atomic_naive(const ReduceLaunch& launch);
Status reduce_smem_interleaved(const ReduceLaunch& launch);
Status reduce_smem_sequential(const ReduceLaunch& launch);
Status reduce_warp_shuffle(const ReduceLaunch& launch);
Status reduce_atomic_per_block(const ReduceLaunch& launch);
Status reduce_vectorized(const ReduceLaunch& launch);
Status reduce_thread_per_output(const ReduceLaunch& launch);
Status reduce_warp_per_row(const ReduceLaunch& launch);
Status reduce_column_tiles(const ReduceLaunch& launch);
Status reduce_bulk_copy(const ReduceLaunch& launch);
Status reduce_window(const ReduceLaunch& launch);
Status reduce_host(const ReduceLaunch& launch);  // host.cpp: the CPU reference

// Calls Runner<T, Acc, Op>::run(launch) for the launch's element type, operator and accumulator, and
// returns what it returns (the variants' Status; dispatch.cpp also asks for the accumulator's dtype).
// bool elements are read as uint8 (DLPack bools are bytes holding 0 or 1).
template <template <class, class, class> class Runner, class T, class Op>
auto run_with_accumulator(const ReduceLaunch& launch) {
  constexpr bool kFloatSumOrProd = !std::is_integral<T>::value && !std::is_same<T, double>::value && is_sum_or_prod<Op>;
  if constexpr (kFloatSumOrProd) {
    if (launch.width == AccWidth::kWide) return Runner<T, acc_t<T, Op, AccWidth::kWide>, Op>::run(launch);
  }
  return Runner<T, acc_t<T, Op, AccWidth::kNormal>, Op>::run(launch);
}

template <template <class, class, class> class Runner>
auto dispatch_reduce_types(const ReduceLaunch& launch) {
  using Result = decltype(Runner<float, float, Sum>::run(launch));
  return visit_dtype(launch.in_dtype, [&](auto tag) -> Result {
    using Tag = typename decltype(tag)::type;
    using T = std::conditional_t<std::is_same<Tag, bool>::value, uint8_t, Tag>;
    switch (launch.op) {
      case ReduceOp::kSum: return run_with_accumulator<Runner, T, Sum>(launch);
      case ReduceOp::kProd: return run_with_accumulator<Runner, T, Prod>(launch);
      case ReduceOp::kMin: return run_with_accumulator<Runner, T, Min>(launch);
      case ReduceOp::kMax: break;
    }
    return run_with_accumulator<Runner, T, Max>(launch);
  });
}

}  // namespace reduce_detail
}  // namespace gpuprims
