#include <cub/device/device_reduce.cuh>

#include "cub_ref.hpp"

namespace gpuprims {
namespace cub_ref {
namespace {

template <class T>
cudaError_t sum(const void* in, void* out, int64_t n, void* temp, size_t* temp_bytes, cudaStream_t stream) {
  return cub::DeviceReduce::Sum(temp, *temp_bytes, static_cast<const T*>(in), static_cast<T*>(out), n, stream);
}

}  // namespace

cudaError_t reduce_sum(const std::string& dtype, const void* in, void* out, int64_t n, void* temp,
                       size_t* temp_bytes, cudaStream_t stream) {
  if (dtype == "int32") return sum<int32_t>(in, out, n, temp, temp_bytes, stream);
  if (dtype == "int64") return sum<int64_t>(in, out, n, temp, temp_bytes, stream);
  if (dtype == "float32") return sum<float>(in, out, n, temp, temp_bytes, stream);
  if (dtype == "float64") return sum<double>(in, out, n, temp, temp_bytes, stream);
  return cudaErrorInvalidValue;
}

}  // namespace cub_ref
}  // namespace gpuprims
