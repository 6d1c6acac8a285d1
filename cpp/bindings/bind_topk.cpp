#include <cstdint>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "gpuprims/topk.hpp"
#include "imported_array.hpp"
#include "raise.hpp"
#include "variant_rows.hpp"

namespace nb = nanobind;

namespace gpuprims {

void bind_topk(nb::module_& m) {
  m.def(
      "topk",
      [](nb::handle x, int64_t k, int axis, bool largest, bool sorted, nb::handle values, nb::handle indices,
         const char* algorithm, uintptr_t stream) {
        TopkAlgorithm algo;
        throw_if_error(parse_topk_algorithm(algorithm, &algo));
        const TensorView xv = view_of(x, "topk", "x"), vv = view_of(values, "topk", "out[0]"),
                         iv = view_of(indices, "topk", "out[1]");
        call_without_gil([&] {
          return topk(xv, k, axis, largest, sorted, vv, iv, algo, reinterpret_cast<cudaStream_t>(stream));
        });
      },
      nb::call_guard<RecordImportLaunches>(), nb::arg("x"), nb::arg("k"), nb::arg("axis"), nb::arg("largest"),
      nb::arg("sorted"), nb::arg("values"), nb::arg("indices"), nb::arg("algorithm"), nb::arg("stream"),
      "(values, indices) = torch.topk(x, k, axis, largest, sorted) written out, ordered on stream.");

  m.def("topk_variants", [] { return variant_rows(topk_variants()); },
        "(name, description, deterministic) of every topk variant.");
}

}  // namespace gpuprims
