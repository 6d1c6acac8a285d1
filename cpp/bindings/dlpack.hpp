#pragma once
// The DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html), versions 0.x and 1.x, declared
// from the specification. Only the bindings see it; below them arrays are TensorViews.
#include <cstdint>

namespace gpuprims {
namespace dlpack {

enum DeviceType : int32_t { kCPU = 1, kCUDA = 2, kCUDAHost = 3, kCUDAManaged = 13 };
enum TypeCode : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4, kComplex = 5, kBool = 6 };

struct Device { int32_t device_type; int32_t device_id; };
struct DataType { uint8_t code; uint8_t bits; uint16_t lanes; };
struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL means compact row-major
  uint64_t byte_offset;
};
struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};
struct Version { uint32_t major; uint32_t minor; };
constexpr uint64_t kFlagReadOnly = 1ull << 0;
struct ManagedTensorVersioned {
  Version version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  uint64_t flags;
  Tensor dl_tensor;
};

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kCapsuleNameVersioned = "dltensor_versioned";
constexpr const char* kUsedCapsuleName = "used_dltensor";
constexpr const char* kUsedCapsuleNameVersioned = "used_dltensor_versioned";

}  // namespace dlpack
}  // namespace gpuprims
