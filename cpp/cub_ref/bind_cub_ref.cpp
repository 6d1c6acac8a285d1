// gpuprims._cub_ref: CUB device algorithms on raw pointers, for benchmarks and tests.
#include <stdexcept>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bind_check.hpp"
#include "cub_ref.hpp"

namespace nb = nanobind;
using gpuprims::cub_ref::check;

namespace gpuprims {
namespace cub_ref {
// One per family's peers (bind_<family>.cpp).
void bind_cub_scan(nb::module_& m);
void bind_cub_histogram(nb::module_& m);
void bind_cub_gemm(nb::module_& m);
}  // namespace cub_ref
}  // namespace gpuprims

NB_MODULE(_cub_ref, m) {
  m.doc() = "CUB reference implementations (benchmarks and tests only)";
  gpuprims::cub_ref::bind_cub_scan(m);
  gpuprims::cub_ref::bind_cub_histogram(m);
  gpuprims::cub_ref::bind_cub_gemm(m);
  m.def("launch_probe", &gpuprims::cub_ref::launch_probe, nb::arg("iters") = 20000,
        "Host ns per call of the CUDA runtime calls on a launch path.");
  m.def("reduce_sum_temp_bytes", [](const std::string& dtype, int64_t n) {
    size_t bytes = 0;
    check(gpuprims::cub_ref::reduce_sum(dtype, nullptr, nullptr, n, nullptr, &bytes, nullptr), "reduce_sum");
    return bytes;
  }, nb::arg("dtype"), nb::arg("n"));
  m.def("reduce_sum", [](const std::string& dtype, uintptr_t in, uintptr_t out, int64_t n, uintptr_t temp,
                         size_t temp_bytes, uintptr_t stream) {
    nb::gil_scoped_release release;
    check(gpuprims::cub_ref::reduce_sum(dtype, reinterpret_cast<const void*>(in), reinterpret_cast<void*>(out), n,
                                         reinterpret_cast<void*>(temp), &temp_bytes,
                                         reinterpret_cast<cudaStream_t>(stream)),
          "reduce_sum");
    check(cudaGetLastError(), "reduce_sum");
  }, nb::arg("dtype"), nb::arg("x"), nb::arg("out"), nb::arg("n"), nb::arg("temp"), nb::arg("temp_bytes"),
     nb::arg("stream"));
}
