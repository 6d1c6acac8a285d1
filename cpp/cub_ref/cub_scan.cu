// CUB's scan-family algorithms, the peers of gpuprims.scan / compact / segmented_reduce.
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_select.cuh>

#include "cub_ref.hpp"

namespace gpuprims {
namespace cub_ref {
namespace {

template <class T>
cudaError_t inclusive_sum_of(const void* in, void* out, int64_t n, void* temp, size_t* temp_bytes, cudaStream_t s) {
  return cub::DeviceScan::InclusiveSum(temp, *temp_bytes, static_cast<const T*>(in), static_cast<T*>(out), n, s);
}

}  // namespace

cudaError_t inclusive_sum(const std::string& dtype, const void* in, void* out, int64_t n, void* temp,
                          size_t* temp_bytes, cudaStream_t stream) {
  if (dtype == "int32") return inclusive_sum_of<int32_t>(in, out, n, temp, temp_bytes, stream);
  if (dtype == "float32") return inclusive_sum_of<float>(in, out, n, temp, temp_bytes, stream);
  return cudaErrorInvalidValue;
}

cudaError_t select_flagged_f32(const void* in, const void* flags, void* out, void* count, int64_t n, void* temp,
                               size_t* temp_bytes, cudaStream_t stream) {
  return cub::DeviceSelect::Flagged(temp, *temp_bytes, static_cast<const float*>(in),
                                    static_cast<const bool*>(flags), static_cast<float*>(out),
                                    static_cast<int64_t*>(count), n, stream);
}

cudaError_t segmented_sum_f32(const void* in, void* out, int64_t segments, const void* offsets, void* temp,
                              size_t* temp_bytes, cudaStream_t stream) {
  const auto* begin = static_cast<const int64_t*>(offsets);
  return cub::DeviceSegmentedReduce::Sum(temp, *temp_bytes, static_cast<const float*>(in), static_cast<float*>(out),
                                         segments, begin, begin + 1, stream);
}

}  // namespace cub_ref
}  // namespace gpuprims
