#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "gpuprims/scan.hpp"
#include "imported_array.hpp"
#include "raise.hpp"

namespace nb = nanobind;

namespace gpuprims {

void bind_scan(nb::module_& m) {
  m.def(
      "scan",
      [](nb::handle x, nb::handle out, const char* op, int axis, bool exclusive, bool deterministic,
         const char* algorithm, uintptr_t stream) {
        const TensorView in_view = view_of(x, "scan", "x"), out_view = view_of(out, "scan", "out");
        ScanOptions options;
        throw_if_error(parse_reduce_op(op, &options.op));
        throw_if_error(parse_scan_algorithm(algorithm, &options.algorithm));
        options.axis = axis;
        options.exclusive = exclusive;
        options.deterministic = deterministic;
        Status status;
        {
          nb::gil_scoped_release release;
          status = scan(in_view, out_view, options, reinterpret_cast<cudaStream_t>(stream));
        }
        throw_if_error(status);
      },
      nb::arg("x"), nb::arg("out"), nb::arg("op"), nb::arg("axis"), nb::arg("exclusive"), nb::arg("deterministic"),
      nb::arg("algorithm"), nb::arg("stream"),
      "out = scan(x) with op 'sum' | 'prod' | 'min' | 'max' along axis, ordered on stream.");

  m.def("scan_variants", [] {
    std::vector<std::tuple<std::string, std::string, bool>> rows;
    for (const auto& v : scan_variants()) rows.emplace_back(v.name, v.description, v.deterministic);
    return rows;
  }, "(name, description, deterministic) of every scan variant.");
}

}  // namespace gpuprims
