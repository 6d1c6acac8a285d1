#pragma once
// The four reduction operators, their identities and accumulator types. Shared by the kernels and
// the CPU reference (host.cpp), so both compute exactly the same function.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "gpuprims/core/config.hpp"
#include "gpuprims/core/numeric.hpp"

namespace gpuprims {
namespace reduce_detail {

template <class A> GPUPRIMS_HD bool is_nan(A v) {
  if constexpr (std::is_floating_point<A>::value) return v != v;
  return false;
}

// Integer sums and products wrap modulo 2^64 (two's complement), done in unsigned arithmetic so the
// wrap is defined behaviour. Because the low bits of a wrapped 64-bit sum equal the narrow sum, an
// int32 result (dtype=int32) is exactly numpy's int32 accumulation.
struct Sum {
  static constexpr bool kIsSum = true;
  template <class A> GPUPRIMS_HD static A identity() { return A(0); }
  template <class A> GPUPRIMS_HD A operator()(A a, A b) const {
    if constexpr (std::is_same<A, int64_t>::value) return int64_t(uint64_t(a) + uint64_t(b));
    else return a + b;
  }
};

struct Prod {
  static constexpr bool kIsSum = false;
  template <class A> GPUPRIMS_HD static A identity() { return A(1); }
  template <class A> GPUPRIMS_HD A operator()(A a, A b) const {
    if constexpr (std::is_same<A, int64_t>::value) return int64_t(uint64_t(a) * uint64_t(b));
    else return a * b;
  }
};

// min/max propagate NaN (numpy semantics; no fmin/fmax shortcut, which would drop it): one select,
// in which a NaN b wins through b != b and a NaN a stays because every comparison with it is false
// (ties keep a). On the GPU float32 takes PTX's NaN-propagating min.NaN / max.NaN (sm_80 and newer:
// one instruction; the result is the canonical NaN, not the input's payload, and which zero a tie
// of -0.0 and +0.0 gives is the instruction's). Why: the earlier form, two NaN tests as early
// returns and then the compare, reached PTX as two branches an item and ran the float32 max of 2^28
// at 0.92x CUB's DeviceReduce::Max in the `window` kernel and 0.93x in `vectorized`; max.NaN ran
// 0.996-1.001x in both, the select 0.995-0.999x and 0.96x (bench/tune/reduce_minmax_tune.cu, H200,
// session 53 device run 2; float64 has no .NaN form).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
template <bool kMax>
__device__ __forceinline__ float nan_min_max_f32(float a, float b) {
  float r;
  if constexpr (kMax) asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  else asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#endif

struct Min {
  static constexpr bool kIsSum = false;
  template <class A> GPUPRIMS_HD static A identity() {
    if constexpr (std::is_floating_point<A>::value) return std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::max();
  }
  template <class A> GPUPRIMS_HD A operator()(A a, A b) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same<A, float>::value) return nan_min_max_f32<false>(a, b);
#endif
    return (b < a || is_nan(b)) ? b : a;
  }
};

struct Max {
  static constexpr bool kIsSum = false;
  template <class A> GPUPRIMS_HD static A identity() {
    if constexpr (std::is_floating_point<A>::value) return -std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::lowest();
  }
  template <class A> GPUPRIMS_HD A operator()(A a, A b) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same<A, float>::value) return nan_min_max_f32<true>(a, b);
#endif
    return (a < b || is_nan(b)) ? b : a;
  }
};

// How wide sums and products accumulate, chosen from the result dtype:
//   kNormal  integers in 64 bits (int64 / uint64), float16/bfloat16/float32 in float32
//   kWide    float results of float64: float inputs accumulate in float64
// (32-bit accumulation for results of <= 32 bits gives the same wrapped bits, but measured 8 %
// slower on the 2^28 int32 sum: its higher occupancy moved the grid off the tuned size.)
enum class AccWidth { kNormal, kWide };

template <class Op> constexpr bool is_sum_or_prod = std::is_same<Op, Sum>::value || std::is_same<Op, Prod>::value;

// The accumulator of element type T under Op at a width.
template <class T, class Op, AccWidth kWidth>
struct AccumulatorOf {
  using type = std::conditional_t<
      std::is_integral<T>::value,
      std::conditional_t<std::is_signed<T>::value, int64_t, uint64_t>,
      std::conditional_t<(kWidth == AccWidth::kWide && is_sum_or_prod<Op>) || std::is_same<T, double>::value,
                         double, float>>;
};
template <class T, class Op, AccWidth kWidth>
using acc_t = typename AccumulatorOf<T, Op, kWidth>::type;

}  // namespace reduce_detail
}  // namespace gpuprims
