#pragma once
// TensorView: a borrowed, typed, strided view of memory. Sizes and strides are int64 and counted in
// elements (negative and zero strides allowed). Plain C++: the bindings fill it from DLPack.
#include <cstdint>
#include <string>

#include "gpuprims/core/dtype.hpp"

namespace gpuprims {

enum class DeviceKind : uint8_t { kCPU, kCUDA };

struct Device {
  DeviceKind kind = DeviceKind::kCPU;
  int id = 0;
  bool operator==(const Device& o) const { return kind == o.kind && id == o.id; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

std::string device_name(Device d);  // "cpu" or "cuda:N"

constexpr int kMaxArrayDims = 64;  // what a view may carry in; kernels get merged dims (kMaxDims)

struct TensorView {
  void* data = nullptr;  // address of element (0, ..., 0), byte offset already applied
  DType dtype = DType::kFloat32;
  Device device;
  bool readonly = false;
  int ndim = 0;
  int64_t shape[kMaxArrayDims];    // entries [0, ndim) are set; views are built on every call,
  int64_t strides[kMaxArrayDims];  // so the unused tail is left uninitialized

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
};

std::string shape_string(const TensorView& v);  // "(3, 4)"

}  // namespace gpuprims
