#include "gpuprims/core/tensor_view.hpp"

namespace gpuprims {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt8: return "int8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
    case DType::kUInt16: return "uint16";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
  }
  return "unknown";
}

std::string device_name(Device d) {
  return d.kind == DeviceKind::kCPU ? std::string("cpu") : "cuda:" + std::to_string(d.id);
}

std::string shape_string(const TensorView& v) {
  std::string s = "(";
  for (int i = 0; i < v.ndim; ++i) {
    s += std::to_string(v.shape[i]);
    if (i + 1 < v.ndim || v.ndim == 1) s += ",";
    if (i + 1 < v.ndim) s += " ";
  }
  return s + ")";
}

}  // namespace gpuprims
