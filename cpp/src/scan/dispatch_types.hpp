#pragma once
// The one place that maps a launch's (input, result) dtypes and operator to C++ types; shared by
// the kernels' drivers and the CPU reference so both cover exactly the same pairs.
#include <cstdint>
#include <string>

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

template <template <class, class, class> class Runner>
Status dispatch_scan_types(const ScanLaunch& l) {
  if (l.in_dtype == l.out_dtype) {
    switch (l.in_dtype) {
      case DType::kInt8: return run_with_op<Runner, int8_t, int8_t>(l);
      case DType::kInt16: return run_with_op<Runner, int16_t, int16_t>(l);
      case DType::kInt32: return run_with_op<Runner, int32_t, int32_t>(l);
      case DType::kInt64: return run_with_op<Runner, int64_t, int64_t>(l);
      case DType::kUInt8: return run_with_op<Runner, uint8_t, uint8_t>(l);
      case DType::kUInt16: return run_with_op<Runner, uint16_t, uint16_t>(l);
      case DType::kUInt32: return run_with_op<Runner, uint32_t, uint32_t>(l);
      case DType::kUInt64: return run_with_op<Runner, uint64_t, uint64_t>(l);
      case DType::kFloat16: return run_with_op<Runner, half_t, half_t>(l);
      case DType::kBFloat16: return run_with_op<Runner, bfloat16_t, bfloat16_t>(l);
      case DType::kFloat32: return run_with_op<Runner, float, float>(l);
      case DType::kFloat64: return run_with_op<Runner, double, double>(l);
      default: break;
    }
  } else if (l.out_dtype == DType::kInt64) {
    switch (l.in_dtype) {
      case DType::kBool: return run_with_op<Runner, bool, int64_t>(l);
      case DType::kInt8: return run_with_op<Runner, int8_t, int64_t>(l);
      case DType::kInt16: return run_with_op<Runner, int16_t, int64_t>(l);
      case DType::kInt32: return run_with_op<Runner, int32_t, int64_t>(l);
      default: break;
    }
  } else if (l.out_dtype == DType::kUInt64) {
    switch (l.in_dtype) {
      case DType::kUInt8: return run_with_op<Runner, uint8_t, uint64_t>(l);
      case DType::kUInt16: return run_with_op<Runner, uint16_t, uint64_t>(l);
      case DType::kUInt32: return run_with_op<Runner, uint32_t, uint64_t>(l);
      default: break;
    }
  }
  return type_error(std::string("scan: no kernel for ") + dtype_name(l.in_dtype) + " -> " + dtype_name(l.out_dtype));
}

}  // namespace scan_detail
}  // namespace gpuprims
