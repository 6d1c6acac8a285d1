#pragma once
// The one place that maps a launch's (input, result) dtypes and operator to C++ types; shared by
// the kernels' drivers and the CPU reference so both cover exactly the same pairs.
#include <cstdint>
#include <string>
#include <type_traits>

#include "gpuprims/scan/scan_ops.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace scan_detail {

// Calls Runner<In, Out, Op>::run(launch) for the launch's (input, result) pair and operator.
template <template <class, class, class> class Runner, class In, class Out>
Status run_with_op(const ScanLaunch& l) {
  switch (l.op) {
    case ReduceOp::kSum: return Runner<In, Out, Sum>::run(l);
    case ReduceOp::kProd: return Runner<In, Out, Prod>::run(l);
    case ReduceOp::kMin: return Runner<In, Out, Min>::run(l);
    case ReduceOp::kMax: break;
  }
  return Runner<In, Out, Max>::run(l);
}

// bool -> bool, numpy's scans with dtype=bool: a sum is a logical or, a product a logical and. Run
// as the max and the min of 0 / 1, which no count of true elements can wrap (a sum would, in the
// 32-bit accumulator, after 2^32 of them).
template <template <class, class, class> class Runner>
Status run_logical(const ScanLaunch& l) {
  if (l.op == ReduceOp::kSum || l.op == ReduceOp::kMax) return Runner<bool, bool, Max>::run(l);
  return Runner<bool, bool, Min>::run(l);
}

// The pairs scan_pair_supported admits: every dtype to itself; bool and the integers narrower than
// 64 bits to their sum's 64-bit type (int64, uint64 for unsigned ones); floats to a wider float of 4
// or 8 bytes (float16 / bfloat16 to float32 or float64, float32 to float64: a half-precision scan
// with a float32 result, as torch.cumsum(x, dtype=torch.float32)).
template <template <class, class, class> class Runner>
Status dispatch_scan_types(const ScanLaunch& l) {
  return visit_dtype(l.in_dtype, [&](auto tag) -> Status {
    using In = typename decltype(tag)::type;
    if (l.out_dtype == l.in_dtype) {
      if constexpr (std::is_same<In, bool>::value) {
        return run_logical<Runner>(l);
      } else {
        return run_with_op<Runner, In, In>(l);
      }
    }
    if constexpr (is_floating(dtype_of<In>::value)) {
      if constexpr (sizeof(In) < 4) {
        if (l.out_dtype == DType::kFloat32) return run_with_op<Runner, In, float>(l);
      }
      if constexpr (sizeof(In) < 8) {
        if (l.out_dtype == DType::kFloat64) return run_with_op<Runner, In, double>(l);
      }
    }
    if constexpr (std::is_integral<In>::value && sizeof(In) < 8) {
      using Wide = std::conditional_t<std::is_unsigned<In>::value && !std::is_same<In, bool>::value, uint64_t,
                                      int64_t>;
      if (l.out_dtype == dtype_of<Wide>::value) return run_with_op<Runner, In, Wide>(l);
    }
    return type_error(std::string("scan: no kernel for ") + dtype_name(l.in_dtype) + " -> " +
                      dtype_name(l.out_dtype));
  });
}

}  // namespace scan_detail
}  // namespace gpuprims
