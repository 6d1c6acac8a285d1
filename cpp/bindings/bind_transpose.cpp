#include <cstdint>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "gpuprims/transpose.hpp"
#include "imported_array.hpp"
#include "raise.hpp"
#include "variant_rows.hpp"

namespace nb = nanobind;

namespace gpuprims {

void bind_transpose(nb::module_& m) {
  m.def(
      "transpose",
      [](nb::handle x, const std::vector<int64_t>& axes, nb::handle out, const char* algorithm, uintptr_t stream) {
        TransposeAlgorithm algo;
        throw_if_error(parse_transpose_algorithm(algorithm, &algo));
        const TensorView xv = view_of(x, "transpose", "x"), ov = view_of(out, "transpose", "out");
        call_without_gil([&] { return transpose(xv, axes, ov, algo, reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("x"), nb::arg("axes"), nb::arg("out"), nb::arg("algorithm"), nb::arg("stream"),
      "out = numpy.transpose(x, axes) written out, ordered on stream.");

  m.def("transpose_variants", [] { return variant_rows(transpose_variants()); },
        "(name, description, deterministic) of every transpose variant.");
}

}  // namespace gpuprims
