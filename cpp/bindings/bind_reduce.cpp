#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "gpuprims/reduce.hpp"
#include "imported_array.hpp"
#include "raise.hpp"

namespace nb = nanobind;

namespace gpuprims {

void bind_reduce(nb::module_& m) {
  m.def(
      "reduce",
      [](nb::handle x, nb::handle out, const char* op, nb::handle axis, const char* algorithm, uintptr_t stream) {
        const TensorView in_view = view_of(x, "reduce", "x"), out_view = view_of(out, "reduce", "out");
        ReduceOptions options;
        throw_if_error(parse_reduce_op(op, &options.op));
        throw_if_error(parse_reduce_algorithm(algorithm, &options.algorithm));
        options.all_axes = axis.is_none();
        if (!options.all_axes) options.axis = nb::cast<int>(axis);
        Status status;
        {
          nb::gil_scoped_release release;
          status = reduce(in_view, out_view, options, reinterpret_cast<cudaStream_t>(stream));
        }
        throw_if_error(status);
      },
      nb::arg("x"), nb::arg("out"), nb::arg("op"), nb::arg("axis").none(), nb::arg("algorithm"), nb::arg("stream"),
      "out = reduce(x) with op 'sum' | 'prod' | 'min' | 'max' along axis (None: all), ordered on stream.");

  m.def("reduce_variants", [] {
    std::vector<std::tuple<std::string, std::string, bool>> rows;
    for (const auto& v : reduce_variants()) rows.emplace_back(v.name, v.description, v.deterministic);
    return rows;
  }, "(name, description, deterministic) of every reduce variant.");
}

}  // namespace gpuprims
