#include <optional>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "gpuprims/norms.hpp"
#include "imported_array.hpp"
#include "raise.hpp"

namespace nb = nanobind;

namespace gpuprims {

void bind_norms(nb::module_& m) {
  m.def(
      "norm_forward",
      [](const char* op_name, nb::handle x, nb::handle out, nb::handle weight, nb::handle bias, nb::handle mean,
         nb::handle rstd, int axis, double eps, const char* algorithm, uintptr_t stream) {
        NormOptions options;
        throw_if_error(parse_norm_op(op_name, &options.op));
        const char* op = norm_op_name(options.op);
        throw_if_error(parse_norm_algorithm(options.op, algorithm, &options.algorithm));
        options.axis = axis;
        options.eps = eps;
        NormTensors t{view_of(x, op, "x"), view_of(out, op, "out")};
        // Optional arrays: None, or an array argument like x.
        std::optional<TensorView> w, b, mu, rs;
        if (!weight.is_none()) t.weight = &w.emplace(view_of(weight, op, "weight"));
        if (!bias.is_none()) t.bias = &b.emplace(view_of(bias, op, "bias"));
        if (!mean.is_none()) t.mean = &mu.emplace(view_of(mean, op, "mean"));
        if (!rstd.is_none()) t.rstd = &rs.emplace(view_of(rstd, op, "rstd"));
        Status status;
        {
          nb::gil_scoped_release release;
          status = norm_forward(t, options, reinterpret_cast<cudaStream_t>(stream));
        }
        throw_if_error(status);
      },
      nb::arg("op"), nb::arg("x"), nb::arg("out"), nb::arg("weight").none(), nb::arg("bias").none(),
      nb::arg("mean").none(), nb::arg("rstd").none(), nb::arg("axis"), nb::arg("eps"), nb::arg("algorithm"),
      nb::arg("stream"),
      "out = op(x) along axis for op 'softmax' | 'log_softmax' | 'layer_norm' | 'rms_norm', ordered on stream; "
      "mean / rstd (or None) receive the row statistics.");

  m.def(
      "norm_backward",
      [](const char* op_name, nb::handle dy, nb::handle saved, nb::handle out, nb::handle weight, nb::handle mean,
         nb::handle rstd, nb::handle dweight, nb::handle dbias, int axis, const char* algorithm, uintptr_t stream) {
        NormOptions options;
        throw_if_error(parse_norm_op(op_name, &options.op));
        const char* op = norm_op_name(options.op);
        throw_if_error(parse_norm_backward_algorithm(options.op, algorithm, &options.algorithm));
        options.axis = axis;
        const bool is_norm = options.op == NormOp::kLayerNorm || options.op == NormOp::kRmsNorm;
        NormBackwardTensors t{view_of(dy, op, "dy"), view_of(saved, op, is_norm ? "x" : "y"), view_of(out, op, "out")};
        std::optional<TensorView> w, mu, rs, dw, db;
        if (!weight.is_none()) t.weight = &w.emplace(view_of(weight, op, "weight"));
        if (!mean.is_none()) t.mean = &mu.emplace(view_of(mean, op, "mean"));
        if (!rstd.is_none()) t.rstd = &rs.emplace(view_of(rstd, op, "rstd"));
        if (!dweight.is_none()) t.dweight = &dw.emplace(view_of(dweight, op, "dweight"));
        if (!dbias.is_none()) t.dbias = &db.emplace(view_of(dbias, op, "dbias"));
        Status status;
        {
          nb::gil_scoped_release release;
          status = norm_backward(t, options, reinterpret_cast<cudaStream_t>(stream));
        }
        throw_if_error(status);
      },
      nb::arg("op"), nb::arg("dy"), nb::arg("saved"), nb::arg("out"), nb::arg("weight").none(),
      nb::arg("mean").none(), nb::arg("rstd").none(), nb::arg("dweight").none(), nb::arg("dbias").none(),
      nb::arg("axis"), nb::arg("algorithm"), nb::arg("stream"),
      "out = the input gradient of op along axis from dy and saved (y for softmax ops, x for norms); "
      "dweight / dbias (or None) receive the parameter gradients. Ordered on stream.");

  m.def("norm_backward_variants", [](const char* op_name) {
    NormOp op;
    throw_if_error(parse_norm_op(op_name, &op));
    std::vector<std::tuple<std::string, std::string, bool>> rows;
    for (const auto& v : norm_backward_variants(op)) rows.emplace_back(v.name, v.description, v.deterministic);
    return rows;
  }, nb::arg("op"), "(name, description, deterministic) of every backward variant of a norms op.");

  m.def("norm_variants", [](const char* op_name) {
    NormOp op;
    throw_if_error(parse_norm_op(op_name, &op));
    std::vector<std::tuple<std::string, std::string, bool>> rows;
    for (const auto& v : norm_variants(op)) rows.emplace_back(v.name, v.description, v.deterministic);
    return rows;
  }, nb::arg("op"), "(name, description, deterministic) of every variant of a norms op.");
}

}  // namespace gpuprims
