#pragma once
// Element types gpuprims understands, their sizes and names. Plain C++: no CUDA types here.
#include <cstddef>
#include <cstdint>

#include "gpuprims/core/config.hpp"

namespace gpuprims {

enum class DType : uint8_t {
  kBool,
  kInt8, kInt16, kInt32, kInt64,
  kUInt8, kUInt16, kUInt32, kUInt64,
  kFloat16, kBFloat16, kFloat32, kFloat64,
};
constexpr int kNumDTypes = 13;

// 16-bit float storage types. Arithmetic always happens in float (see numeric.hpp).
struct half_t { uint16_t bits; };
struct bfloat16_t { uint16_t bits; };

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::kBool: case DType::kInt8: case DType::kUInt8: return 1;
    case DType::kInt16: case DType::kUInt16: case DType::kFloat16: case DType::kBFloat16: return 2;
    case DType::kInt32: case DType::kUInt32: case DType::kFloat32: return 4;
    case DType::kInt64: case DType::kUInt64: case DType::kFloat64: return 8;
  }
  return 0;
}

constexpr bool is_floating(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 || t == DType::kFloat64;
}
constexpr bool is_signed_integer(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}

const char* dtype_name(DType t);

// C++ type <-> DType.
template <class T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::kBool; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct dtype_of<int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct dtype_of<uint16_t> { static constexpr DType value = DType::kUInt16; };
template <> struct dtype_of<uint32_t> { static constexpr DType value = DType::kUInt32; };
template <> struct dtype_of<uint64_t> { static constexpr DType value = DType::kUInt64; };
template <> struct dtype_of<half_t> { static constexpr DType value = DType::kFloat16; };
template <> struct dtype_of<bfloat16_t> { static constexpr DType value = DType::kBFloat16; };
template <> struct dtype_of<float> { static constexpr DType value = DType::kFloat32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::kFloat64; };

template <class T> struct type_tag { using type = T; };

// Calls f(type_tag<T>{}) with the C++ type of `t`. The single dtype switch of the library, on the
// host and in kernels (numeric.hpp's store_as / load_as: an output or input dtype chosen at run
// time). The exec-check pragma lets host callers pass host-only functors without a warning.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class F>
GPUPRIMS_HD decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kBool: return f(type_tag<bool>{});
    case DType::kInt8: return f(type_tag<int8_t>{});
    case DType::kInt16: return f(type_tag<int16_t>{});
    case DType::kInt32: return f(type_tag<int32_t>{});
    case DType::kInt64: return f(type_tag<int64_t>{});
    case DType::kUInt8: return f(type_tag<uint8_t>{});
    case DType::kUInt16: return f(type_tag<uint16_t>{});
    case DType::kUInt32: return f(type_tag<uint32_t>{});
    case DType::kUInt64: return f(type_tag<uint64_t>{});
    case DType::kFloat16: return f(type_tag<half_t>{});
    case DType::kBFloat16: return f(type_tag<bfloat16_t>{});
    case DType::kFloat32: return f(type_tag<float>{});
    case DType::kFloat64: break;
  }
  return f(type_tag<double>{});
}

// visit_dtype for families that take the four float dtypes only: calls f(type_tag<T>{}) for
// float16, bfloat16, float64, and float32 for anything else (their dispatch rejected the rest).
template <class F>
decltype(auto) visit_float_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kFloat16: return f(type_tag<half_t>{});
    case DType::kBFloat16: return f(type_tag<bfloat16_t>{});
    case DType::kFloat64: return f(type_tag<double>{});
    default: break;
  }
  return f(type_tag<float>{});
}

}  // namespace gpuprims
