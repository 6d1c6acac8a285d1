#include <string>
#include <tuple>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "gpuprims/gemm.hpp"
#include "imported_array.hpp"
#include "raise.hpp"
#include "variant_rows.hpp"

namespace nb = nanobind;

namespace gpuprims {

void bind_gemm(nb::module_& m) {
  m.def(
      "matmul",
      [](nb::handle a, nb::handle b, nb::handle out, const char* algorithm, bool allow_tf32, uintptr_t stream) {
        MatmulOptions options;
        throw_if_error(parse_matmul_algorithm(algorithm, &options.algorithm));
        options.allow_tf32 = allow_tf32;
        const TensorView av = view_of(a, "matmul", "a"), bv = view_of(b, "matmul", "b");
        const TensorView cv = view_of(out, "matmul", "out");
        call_without_gil([&] { return matmul(av, bv, cv, options, reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("algorithm"), nb::arg("allow_tf32"), nb::arg("stream"),
      "out = a @ b (2-D or batched 3-D), ordered on stream.");

  m.def(
      "gemv",
      [](nb::handle a, nb::handle x, nb::handle out, const char* algorithm, uintptr_t stream) {
        GemvAlgorithm algo;
        throw_if_error(parse_gemv_algorithm(algorithm, &algo));
        const TensorView av = view_of(a, "gemv", "a"), xv = view_of(x, "gemv", "x");
        const TensorView yv = view_of(out, "gemv", "out");
        call_without_gil([&] { return gemv(av, xv, yv, algo, reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("a"), nb::arg("x"), nb::arg("out"), nb::arg("algorithm"), nb::arg("stream"),
      "out = a @ x for a 2-D a and a 1-D x, ordered on stream.");

  m.def("matmul_variants", [] { return variant_rows(matmul_variants()); },
        "(name, description, deterministic) of every matmul variant.");
  m.def("gemv_variants", [] { return variant_rows(gemv_variants()); },
        "(name, description, deterministic) of every gemv variant.");
}

}  // namespace gpuprims
