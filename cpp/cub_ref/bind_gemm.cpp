// gpuprims._cub_ref: the gemm family's peer, cuBLAS (where the toolkit has it).
#include <stdexcept>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "cublas_ref.hpp"

namespace nb = nanobind;

namespace gpuprims {
namespace cub_ref {

namespace {
void raise_if(const std::string& error) {
  if (!error.empty()) throw std::runtime_error("cub_ref." + error);
}
}  // namespace

void bind_cub_gemm(nb::module_& m) {
  m.def("cublas_available", &cublas_available, "Whether this build bound cuBLAS.");
  m.def("cublas_gemm", [](const std::string& dtype, int64_t m_, int64_t n, int64_t k, uintptr_t a, uintptr_t b,
                          uintptr_t c, bool allow_tf32, uintptr_t stream) {
    std::string error;
    {
      nb::gil_scoped_release release;
      error = cublas_gemm(dtype, m_, n, k, reinterpret_cast<const void*>(a), reinterpret_cast<const void*>(b),
                          reinterpret_cast<void*>(c), allow_tf32, reinterpret_cast<cudaStream_t>(stream));
    }
    raise_if(error);
  }, nb::arg("dtype"), nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("a"), nb::arg("b"), nb::arg("c"),
     nb::arg("allow_tf32"), nb::arg("stream"),
     "c = a @ b, contiguous row-major float32/float16/bfloat16 operands, fp32 accumulation (cublasGemmEx).");
  m.def("cublas_sgemv", [](int64_t m_, int64_t k, uintptr_t a, uintptr_t x, uintptr_t y, uintptr_t stream) {
    std::string error;
    {
      nb::gil_scoped_release release;
      error = cublas_sgemv(m_, k, reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(x),
                           reinterpret_cast<float*>(y), reinterpret_cast<cudaStream_t>(stream));
    }
    raise_if(error);
  }, nb::arg("m"), nb::arg("k"), nb::arg("a"), nb::arg("x"), nb::arg("y"), nb::arg("stream"),
     "y = a @ x, contiguous row-major float32 a (cublasSgemv).");
}

}  // namespace cub_ref
}  // namespace gpuprims
