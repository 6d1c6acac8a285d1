#include <optional>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "gpuprims/norms.hpp"
#include "gpuprims/norms/philox.hpp"
#include "imported_array.hpp"
#include "raise.hpp"
#include "torch_bridge.hpp"
#include "variant_rows.hpp"

namespace nb = nanobind;

namespace gpuprims {
namespace {

// The forward call on CUDA torch tensors (the general path's _forward without the Python array
// layer), or None when it does not qualify: x not a CUDA torch.Tensor of a float dtype, axis not a
// Python int in range, an operand (weight, bias, residual) not a CUDA tensor on x's device. The
// general path, the reference for the semantics, then takes the call and raises its typed errors;
// dtypes and shapes are norm_forward's own checks on either path. Outputs are allocated as the
// general path allocates them (torch_new_tensor). Returns what _forward returns: y, or the tuple
// (y[, sum][, mean], rstd) with residual / return_stats.
nb::object norm_forward_torch(const char* op_name, nb::handle x, nb::handle weight, nb::handle bias,
                              nb::handle residual, double eps, nb::handle axis, nb::handle return_stats,
                              const char* algorithm) {
  NormTensors t;
  cudaStream_t stream;
  int a = 0;
  if (!torch_cuda_view(x, &t.x, &stream) || !is_floating(t.x.dtype) || !read_python_axis(axis, t.x.ndim, &a)) {
    return nb::none();
  }
  const int ndim = t.x.ndim;
  TensorView w, b, res;
  const auto operand = [&t](nb::handle h, TensorView* v, const TensorView** slot) {  // None: the slot stays null
    if (h.is_none()) return true;
    if (!torch_cuda_operand(h, t.x.device, v)) return false;
    *slot = v;
    return true;
  };
  if (!operand(weight, &w, &t.weight) || !operand(bias, &b, &t.bias) || !operand(residual, &res, &t.residual)) {
    return nb::none();
  }
  NormOptions options;
  throw_if_error(parse_norm_op(op_name, &options.op));
  const char* op = norm_forward_name(options.op, t.residual != nullptr);
  throw_if_error(parse_norm_algorithm(options.op, algorithm, &options.algorithm, op));
  options.axis = a;
  options.eps = eps;
  const int device = t.x.device.id;
  nb::object y = torch_new_tensor(t.x.dtype, device, t.x.shape, ndim, &t.y);
  nb::object sum, mean, rstd;
  TensorView sum_view, mean_view, rstd_view;
  if (t.residual != nullptr) {
    sum = torch_new_tensor(t.x.dtype, device, t.x.shape, ndim, &sum_view);
    t.sum = &sum_view;
  }
  const int want_stats = PyObject_IsTrue(return_stats.ptr());  // the general path's truth test
  if (want_stats < 0) throw nb::python_error();
  const bool has_stats = want_stats && (options.op == NormOp::kLayerNorm || options.op == NormOp::kRmsNorm);
  if (has_stats) {
    int64_t stats_shape[kMaxArrayDims];
    for (int d = 0; d < ndim; ++d) stats_shape[d] = d == a ? 1 : t.x.shape[d];
    const DType stats_dtype = norm_stats_dtype(t.x.dtype);
    if (options.op == NormOp::kLayerNorm) {
      mean = torch_new_tensor(stats_dtype, device, stats_shape, ndim, &mean_view);
      t.mean = &mean_view;
    }
    rstd = torch_new_tensor(stats_dtype, device, stats_shape, ndim, &rstd_view);
    t.rstd = &rstd_view;
  }
  // The launch is asynchronous: the GIL stays held (as reduce's fast path).
  throw_if_error(norm_forward(t, options, stream));
  if (!sum.is_valid() && !has_stats) return y;
  nb::list parts;
  for (const nb::object& part : {y, sum, mean, rstd}) {
    if (part.is_valid()) parts.append(part);
  }
  PyObject* tuple = PyList_AsTuple(parts.ptr());
  if (tuple == nullptr) throw nb::python_error();
  return nb::steal(tuple);
}

}  // namespace

void bind_norms(nb::module_& m) {
  m.def("norm_forward_torch", &norm_forward_torch, nb::arg("op"), nb::arg("x"), nb::arg("weight").none(),
        nb::arg("bias").none(), nb::arg("residual").none(), nb::arg("eps"), nb::arg("axis").none(),
        nb::arg("return_stats").none(), nb::arg("algorithm"),
        "norm_forward on CUDA torch tensors with out= and stream= at their defaults: y, or (y[, sum][, mean], "
        "rstd); None when the call does not qualify (the general path takes it).");

  m.def(
      "norm_forward",
      [](const char* op_name, nb::handle x, nb::handle out, nb::handle weight, nb::handle bias, nb::handle mean,
         nb::handle rstd, nb::handle residual, nb::handle sum, int axis, double eps, const char* algorithm,
         uintptr_t stream) {
        NormOptions options;
        throw_if_error(parse_norm_op(op_name, &options.op));
        const char* op = norm_forward_name(options.op, !residual.is_none());
        throw_if_error(parse_norm_algorithm(options.op, algorithm, &options.algorithm, op));
        options.axis = axis;
        options.eps = eps;
        NormTensors t{view_of(x, op, "x"), view_of(out, op, "out")};
        // Optional arrays: None, or an array argument like x.
        std::optional<TensorView> w, b, mu, rs, res, sm;
        if (!residual.is_none()) t.residual = &res.emplace(view_of(residual, op, "residual"));
        if (!sum.is_none()) t.sum = &sm.emplace(view_of(sum, op, "sum"));
        if (!weight.is_none()) t.weight = &w.emplace(view_of(weight, op, "weight"));
        if (!bias.is_none()) t.bias = &b.emplace(view_of(bias, op, "bias"));
        if (!mean.is_none()) t.mean = &mu.emplace(view_of(mean, op, "mean"));
        if (!rstd.is_none()) t.rstd = &rs.emplace(view_of(rstd, op, "rstd"));
        call_without_gil([&] { return norm_forward(t, options, reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("op"), nb::arg("x"), nb::arg("out"), nb::arg("weight").none(), nb::arg("bias").none(),
      nb::arg("mean").none(), nb::arg("rstd").none(), nb::arg("residual").none(), nb::arg("sum").none(),
      nb::arg("axis"), nb::arg("eps"), nb::arg("algorithm"), nb::arg("stream"),
      "out = op(x) along axis for op 'softmax' | 'log_softmax' | 'layer_norm' | 'rms_norm', ordered on stream; "
      "mean / rstd (or None) receive the row statistics; with residual and sum, the norm of sum = x + residual "
      "(also written).");

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
        call_without_gil([&] { return norm_backward(t, options, reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("op"), nb::arg("dy"), nb::arg("saved"), nb::arg("out"), nb::arg("weight").none(),
      nb::arg("mean").none(), nb::arg("rstd").none(), nb::arg("dweight").none(), nb::arg("dbias").none(),
      nb::arg("axis"), nb::arg("algorithm"), nb::arg("stream"),
      "out = the input gradient of op along axis from dy and saved (y for softmax ops, x for norms); "
      "dweight / dbias (or None) receive the parameter gradients. Ordered on stream.");

  m.def("norm_backward_variants", [](const char* op_name) {
    NormOp op;
    throw_if_error(parse_norm_op(op_name, &op));
    return variant_rows(norm_backward_variants(op));
  }, nb::arg("op"), "(name, description, deterministic) of every backward variant of a norms op.");

  m.def(
      "bias_dropout_add",
      [](nb::handle x, nb::handle bias, nb::handle residual, nb::handle out, double p, uint64_t seed, uint64_t offset,
         bool training, uintptr_t stream) {
        const char* op = "bias_dropout_add";
        DropoutTensors t{view_of(x, op, "x"), nullptr, view_of(residual, op, "residual"), view_of(out, op, "out")};
        std::optional<TensorView> b;
        if (!bias.is_none()) t.bias = &b.emplace(view_of(bias, op, "bias"));
        DropoutOptions options{p, seed, offset, training};
        call_without_gil([&] { return bias_dropout_add(t, options, reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("x"), nb::arg("bias").none(), nb::arg("residual"), nb::arg("out"), nb::arg("p"), nb::arg("seed"),
      nb::arg("offset"), nb::arg("training"), nb::arg("stream"),
      "out = residual + dropout(x + bias) with Philox4x32-10 draws from (element index, seed, offset).");

  m.def("philox4x32_10", [](std::tuple<uint32_t, uint32_t, uint32_t, uint32_t> counter, uint32_t key0, uint32_t key1) {
    const norms::Philox4x32 r = norms::philox4x32_10(
        {{std::get<0>(counter), std::get<1>(counter), std::get<2>(counter), std::get<3>(counter)}}, key0, key1);
    return std::make_tuple(r.v[0], r.v[1], r.v[2], r.v[3]);
  }, nb::arg("counter"), nb::arg("key0"), nb::arg("key1"),
  "The four 32-bit outputs of Philox4x32-10 (the generator bias_dropout_add draws from), on the host.");

  m.def("norm_variants", [](const char* op_name) {
    NormOp op;
    throw_if_error(parse_norm_op(op_name, &op));
    return variant_rows(norm_variants(op));
  }, nb::arg("op"), "(name, description, deterministic) of every variant of a norms op.");
}

}  // namespace gpuprims
