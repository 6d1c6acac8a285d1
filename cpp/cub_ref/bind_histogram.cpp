// gpuprims._cub_ref: the histogram family's peer (temp_bytes first, then the call).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bind_check.hpp"
#include "cub_ref.hpp"

namespace nb = nanobind;

namespace gpuprims {
namespace cub_ref {

void bind_cub_histogram(nb::module_& m) {
  m.def("histogram_even_temp_bytes", [](const std::string& dtype, int bins, int64_t n) {
    size_t bytes = 0;
    check(histogram_even(dtype, nullptr, nullptr, bins, 0.0, 1.0, n, nullptr, &bytes, nullptr), "histogram_even");
    return bytes;
  }, nb::arg("dtype"), nb::arg("bins"), nb::arg("n"));
  m.def("histogram_even", [](const std::string& dtype, uintptr_t in, uintptr_t counts, int bins, double lower,
                             double upper, int64_t n, uintptr_t temp, size_t temp_bytes, uintptr_t stream) {
    nb::gil_scoped_release release;
    check(histogram_even(dtype, reinterpret_cast<const void*>(in), reinterpret_cast<int*>(counts), bins, lower, upper,
                         n, reinterpret_cast<void*>(temp), &temp_bytes, reinterpret_cast<cudaStream_t>(stream)),
          "histogram_even");
  }, nb::arg("dtype"), nb::arg("x"), nb::arg("counts"), nb::arg("bins"), nb::arg("lower"), nb::arg("upper"),
     nb::arg("n"), nb::arg("temp"), nb::arg("temp_bytes"), nb::arg("stream"),
     "cub::DeviceHistogram::HistogramEven of uint8 or float32 samples into int32 counts (CUB's bin rule).");
}

}  // namespace cub_ref
}  // namespace gpuprims
