#pragma once
// cuBLAS, the gemm family's peer, on raw row-major pointers (benchmarks and tests only). Compiled
// only where the toolkit ships cuBLAS headers and libraries (GPUPRIMS_HAVE_CUBLAS, set by CMake);
// elsewhere _cub_ref.cublas_available() is False and the benchmark measures torch.matmul alone.
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

namespace gpuprims {
namespace cub_ref {

bool cublas_available();

// c = a @ b for contiguous row-major a (m, k), b (k, n), c (m, n) of `dtype` ("float32",
// "float16", "bfloat16"), float32 accumulation (TF32 tensor cores for float32 when allow_tf32),
// through cublasGemmEx on `stream`. Returns "" or the error.
std::string cublas_gemm(const std::string& dtype, int64_t m, int64_t n, int64_t k, const void* a, const void* b,
                        void* c, bool allow_tf32, cudaStream_t stream);

// y = a @ x for a contiguous row-major float32 a (m, k) through cublasSgemv. Returns "" or the error.
std::string cublas_sgemv(int64_t m, int64_t k, const float* a, const float* x, float* y, cudaStream_t stream);

}  // namespace cub_ref
}  // namespace gpuprims
