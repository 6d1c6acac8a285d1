// gpuprims._cub_ref: the scan family's peers (temp_bytes first with temp = 0, then the call).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bind_check.hpp"
#include "cub_ref.hpp"

namespace nb = nanobind;

namespace gpuprims {
namespace cub_ref {

void bind_cub_scan(nb::module_& m) {
  m.def("inclusive_sum", [](const std::string& dtype, uintptr_t in, uintptr_t out, int64_t n, uintptr_t temp,
                            size_t temp_bytes, uintptr_t stream) {
    nb::gil_scoped_release release;
    check(inclusive_sum(dtype, reinterpret_cast<const void*>(in), reinterpret_cast<void*>(out), n,
                        reinterpret_cast<void*>(temp), &temp_bytes, reinterpret_cast<cudaStream_t>(stream)),
          "inclusive_sum");
    return temp_bytes;
  }, nb::arg("dtype"), nb::arg("x"), nb::arg("out"), nb::arg("n"), nb::arg("temp"), nb::arg("temp_bytes"),
     nb::arg("stream"), "cub::DeviceScan::InclusiveSum; with temp == 0 returns the temp bytes needed.");
  m.def("select_flagged_f32", [](uintptr_t in, uintptr_t flags, uintptr_t out, uintptr_t count, int64_t n,
                                 uintptr_t temp, size_t temp_bytes, uintptr_t stream) {
    nb::gil_scoped_release release;
    check(select_flagged_f32(reinterpret_cast<const void*>(in), reinterpret_cast<const void*>(flags),
                             reinterpret_cast<void*>(out), reinterpret_cast<void*>(count), n,
                             reinterpret_cast<void*>(temp), &temp_bytes, reinterpret_cast<cudaStream_t>(stream)),
          "select_flagged_f32");
    return temp_bytes;
  }, nb::arg("x"), nb::arg("flags"), nb::arg("out"), nb::arg("count"), nb::arg("n"), nb::arg("temp"),
     nb::arg("temp_bytes"), nb::arg("stream"), "cub::DeviceSelect::Flagged; temp == 0 returns the temp bytes.");
  m.def("segmented_sum_f32", [](uintptr_t in, uintptr_t out, int64_t segments, uintptr_t offsets, uintptr_t temp,
                                size_t temp_bytes, uintptr_t stream) {
    nb::gil_scoped_release release;
    check(segmented_sum_f32(reinterpret_cast<const void*>(in), reinterpret_cast<void*>(out), segments,
                            reinterpret_cast<const void*>(offsets), reinterpret_cast<void*>(temp), &temp_bytes,
                            reinterpret_cast<cudaStream_t>(stream)),
          "segmented_sum_f32");
    return temp_bytes;
  }, nb::arg("x"), nb::arg("out"), nb::arg("segments"), nb::arg("offsets"), nb::arg("temp"), nb::arg("temp_bytes"),
     nb::arg("stream"), "cub::DeviceSegmentedReduce::Sum; temp == 0 returns the temp bytes.");
}

}  // namespace cub_ref
}  // namespace gpuprims
