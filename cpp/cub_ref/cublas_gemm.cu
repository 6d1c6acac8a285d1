// cuBLAS GEMM / GEMV on row-major operands. cuBLAS is column-major: a row-major (m, n) C is a
// column-major (n, m) C^T, so C = A B is computed as C^T = B^T A^T with the operands swapped and
// no transposes.
#include <climits>
#include <string>

#include "cublas_ref.hpp"

#if defined(GPUPRIMS_HAVE_CUBLAS)
#include <cublas_v2.h>
#endif

namespace gpuprims {
namespace cub_ref {

#if defined(GPUPRIMS_HAVE_CUBLAS)

namespace {

// One handle per process and device 0's context, created on first use and kept (benchmarks only).
cublasHandle_t handle_or_null(std::string* error) {
  static cublasHandle_t handle = nullptr;
  static cublasStatus_t created = cublasCreate(&handle);
  if (created != CUBLAS_STATUS_SUCCESS) {
    *error = std::string("cublasCreate: ") + cublasGetStatusString(created);
    return nullptr;
  }
  return handle;
}

std::string status_text(cublasStatus_t s, const char* what) {
  return s == CUBLAS_STATUS_SUCCESS ? std::string() : std::string(what) + ": " + cublasGetStatusString(s);
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

}  // namespace

bool cublas_available() { return true; }

std::string cublas_gemm(const std::string& dtype, int64_t m, int64_t n, int64_t k, const void* a, const void* b,
                        void* c, bool allow_tf32, cudaStream_t stream) {
  cudaDataType_t type;
  if (dtype == "float32") type = CUDA_R_32F;
  else if (dtype == "float16") type = CUDA_R_16F;
  else if (dtype == "bfloat16") type = CUDA_R_16BF;
  else return "cublas_gemm: dtype must be float32, float16 or bfloat16, got " + dtype;
  if (!fits_int(m) || !fits_int(n) || !fits_int(k)) return "cublas_gemm: sizes must fit in int";
  std::string error;
  cublasHandle_t h = handle_or_null(&error);
  if (h == nullptr) return error;
  std::string s = status_text(cublasSetStream(h, stream), "cublasSetStream");
  if (!s.empty()) return s;
  const cublasComputeType_t compute =
      dtype == "float32" && allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float alpha = 1.0f, beta = 0.0f;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const int lda = ki > 0 ? ki : 1;  // cuBLAS wants leading dimensions >= 1
  return status_text(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, &alpha, b, type, ni, a, type, lda, &beta,
                                  c, type, ni, compute, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx");
}

std::string cublas_sgemv(int64_t m, int64_t k, const float* a, const float* x, float* y, cudaStream_t stream) {
  if (!fits_int(m) || !fits_int(k)) return "cublas_sgemv: sizes must fit in int";
  std::string error;
  cublasHandle_t h = handle_or_null(&error);
  if (h == nullptr) return error;
  std::string s = status_text(cublasSetStream(h, stream), "cublasSetStream");
  if (!s.empty()) return s;
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major a (m, k) is column-major (k, m); y = (that)^T x.
  const int mi = static_cast<int>(m), ki = static_cast<int>(k);
  return status_text(cublasSgemv(h, CUBLAS_OP_T, ki, mi, &alpha, a, ki > 0 ? ki : 1, x, 1, &beta, y, 1),
                     "cublasSgemv");
}

#else  // no cuBLAS in this toolkit

bool cublas_available() { return false; }

std::string cublas_gemm(const std::string&, int64_t, int64_t, int64_t, const void*, const void*, void*, bool,
                        cudaStream_t) {
  return "cublas_gemm: this build has no cuBLAS";
}

std::string cublas_sgemv(int64_t, int64_t, const float*, const float*, float*, cudaStream_t) {
  return "cublas_sgemv: this build has no cuBLAS";
}

#endif

}  // namespace cub_ref
}  // namespace gpuprims
