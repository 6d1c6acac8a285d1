// Output preparation and conversion: zeroing a (possibly strided) 8-byte output before the counting
// kernels add into it, and writing float64 weighted sums into an output of the weights' dtype.
#include <cstdint>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace histogram_detail {
namespace {

constexpr int kOutputThreads = 256;
constexpr int64_t kMaxOutputBlocks = 4096;

__global__ void zero_words_kernel(unsigned long long* out, int64_t n, int64_t stride) {
  for (int64_t i = int64_t(blockIdx.x) * kOutputThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kOutputThreads) {
    out[i * stride] = 0;
  }
}

__global__ void convert_sums_kernel(const double* sums, void* out, DType dtype, int64_t n, int64_t stride) {
  for (int64_t i = int64_t(blockIdx.x) * kOutputThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kOutputThreads) {
    store_as(out, i * stride, dtype, sums[i]);
  }
}

unsigned output_blocks(int64_t n) { return unsigned(min_of<int64_t>(kMaxOutputBlocks, ceil_div<int64_t>(n, kOutputThreads))); }

}  // namespace

Status zero_output(void* out, int64_t n, int64_t stride, cudaStream_t stream, const char* op) {
  if (n == 0) return Status::ok();
  if (stride == 1) {
    GPUPRIMS_CUDA_CHECK(op, cudaMemsetAsync(out, 0, size_t(n) * 8, stream));
    return Status::ok();
  }
  zero_words_kernel<<<output_blocks(n), kOutputThreads, 0, stream>>>(static_cast<unsigned long long*>(out), n, stride);
  return check_launch(op, stream);
}

Status convert_sums(const double* sums, void* out, DType dtype, int64_t n, int64_t stride, cudaStream_t stream,
                    const char* op) {
  if (n == 0) return Status::ok();
  convert_sums_kernel<<<output_blocks(n), kOutputThreads, 0, stream>>>(sums, out, dtype, n, stride);
  return check_launch(op, stream);
}

}  // namespace histogram_detail
}  // namespace gpuprims
