#pragma once
// CUB, the peer our primitives are measured against. Built with the package for benchmarks and
// tests only; not part of the gpuprims API.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

namespace gpuprims {
namespace cub_ref {

// cub::DeviceReduce::Sum over `n` elements of `dtype` ("int32", "float32", "int64", "float64"),
// accumulating and writing in that dtype. With temp == nullptr, only sets *temp_bytes.
cudaError_t reduce_sum(const std::string& dtype, const void* in, void* out, int64_t n, void* temp,
                       size_t* temp_bytes, cudaStream_t stream);

// cub::DeviceScan::InclusiveSum over `n` items of "int32" or "float32" (same type out).
cudaError_t inclusive_sum(const std::string& dtype, const void* in, void* out, int64_t n, void* temp,
                          size_t* temp_bytes, cudaStream_t stream);
// cub::DeviceSelect::Flagged: float32 values, bool flags, int64 count.
cudaError_t select_flagged_f32(const void* in, const void* flags, void* out, void* count, int64_t n, void* temp,
                               size_t* temp_bytes, cudaStream_t stream);
// cub::DeviceSegmentedReduce::Sum: float32 values, int64 CSR offsets (segments + 1).
cudaError_t segmented_sum_f32(const void* in, void* out, int64_t segments, const void* offsets, void* temp,
                              size_t* temp_bytes, cudaStream_t stream);

// Host nanoseconds per call of the runtime calls a launch path makes (driver cost, no Python).
std::vector<std::pair<std::string, double>> launch_probe(int iters);

}  // namespace cub_ref
}  // namespace gpuprims
