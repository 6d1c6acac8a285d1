#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "gpuprims/reduce.hpp"
#include "imported_array.hpp"
#include "raise.hpp"
#include "variant_rows.hpp"
#include "torch_bridge.hpp"

namespace nb = nanobind;

namespace gpuprims {
namespace {

// axis (None, a Python int or a tuple / list of them) as options' axes and the bit set of reduced
// dimensions of an ndim-d input (*reduced starts at 0); false for anything else and for an axis out
// of range or named twice, where the caller declines the call (the general path raises the errors).
bool read_python_axes(nb::handle axis, int ndim, ReduceOptions* options, uint64_t* reduced) {
  if (axis.is_none()) {
    options->all_axes = true;
    *reduced = ndim == 0 ? 0 : ~uint64_t(0) >> (64 - ndim);
    return true;
  }
  PyObject* const a = axis.ptr();
  const bool sequence = PyTuple_CheckExact(a) || PyList_CheckExact(a);
  const Py_ssize_t count = sequence ? PySequence_Fast_GET_SIZE(a) : 1;
  if (count > kMaxArrayDims) return false;
  options->all_axes = false;
  options->num_axes = 0;
  for (Py_ssize_t i = 0; i < count; ++i) {
    int d;
    if (!read_python_axis(sequence ? PySequence_Fast_GET_ITEM(a, i) : a, ndim, &d) || (*reduced >> d & 1)) {
      return false;
    }
    *reduced |= uint64_t(1) << d;
    options->axes[options->num_axes++] = d;
  }
  return true;
}

}  // namespace

void bind_reduce(nb::module_& m) {
  m.def(
      "reduce",
      [](nb::handle x, nb::handle out, const char* op, nb::handle axis, const char* algorithm, uintptr_t stream) {
        const TensorView in_view = view_of(x, "reduce", "x"), out_view = view_of(out, "reduce", "out");
        ReduceOptions options;
        throw_if_error(parse_reduce_op(op, &options.op));
        throw_if_error(parse_reduce_algorithm(algorithm, &options.algorithm));
        options.all_axes = axis.is_none();
        if (!options.all_axes) {  // a tuple of ints (gpuprims.reduce passes its normalized axes)
          for (nb::handle a : axis) {
            if (options.num_axes == kMaxArrayDims) {
              throw_if_error(value_error("reduce: argument 'axis': expected at most " +
                                         std::to_string(kMaxArrayDims) + " axes"));
            }
            options.axes[options.num_axes++] = nb::cast<int>(a);
          }
        }
        call_without_gil([&] { return reduce(in_view, out_view, options, reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("x"), nb::arg("out"), nb::arg("op"), nb::arg("axis").none(), nb::arg("algorithm"), nb::arg("stream"),
      "out = reduce(x) with op 'sum' | 'prod' | 'min' | 'max' along a tuple of axes (None: all), ordered on stream.");

  // The fast path of reduce(x, op, axis, keepdims=, out=) with the other arguments at their
  // defaults, for CUDA torch.Tensors (torch_bridge.hpp): the result tensor (out, when given), or
  // None when the call does not qualify (x not a CUDA tensor; an axis that is not None, a Python int
  // or a tuple / list of them, in range and each named once; an out= of another kind, device or
  // dtype, or one that requires grad), so that the general path, the reference for the semantics,
  // takes it and raises its typed errors. out='s shape, overlap and writability are reduce()'s own
  // checks on either path. The launch is asynchronous, so the GIL stays held (releasing and taking
  // it back costs more than the launch path it would free).
  m.def(
      "reduce_torch",
      [](nb::handle x, const char* op, nb::handle axis, nb::handle keepdims, const char* algorithm,
         nb::handle out) -> nb::object {
        TensorView in_view;
        cudaStream_t stream;
        ReduceOptions options;
        uint64_t reduced = 0;  // bit d: dimension d is reduced
        if (!torch_cuda_view(x, &in_view, &stream) || !read_python_axes(axis, in_view.ndim, &options, &reduced)) {
          return nb::none();
        }
        throw_if_error(parse_reduce_op(op, &options.op));
        throw_if_error(parse_reduce_algorithm(algorithm, &options.algorithm));
        const DType result_dtype = reduce_default_result_dtype(options.op, in_view.dtype);
        TensorView out_view;
        nb::object result;
        if (out.is_none()) {
          const int keep = PyObject_IsTrue(keepdims.ptr());
          if (keep < 0) throw nb::python_error();
          int64_t out_shape[kMaxArrayDims];
          int out_ndim = 0;
          for (int d = 0; d < in_view.ndim; ++d) {
            if (!(reduced >> d & 1)) {
              out_shape[out_ndim++] = in_view.shape[d];
            } else if (keep) {
              out_shape[out_ndim++] = 1;
            }
          }
          result = torch_new_tensor(result_dtype, in_view.device.id, out_shape, out_ndim, &out_view);
        } else {
          if (!torch_cuda_out(out, in_view.device, result_dtype, &out_view)) return nb::none();
          result = nb::borrow(out);
        }
        throw_if_error(reduce(in_view, out_view, options, stream));
        return result;
      },
      nb::arg("x"), nb::arg("op"), nb::arg("axis").none(), nb::arg("keepdims").none(), nb::arg("algorithm"),
      nb::arg("out").none(),
      "reduce(x, op, axis, keepdims=, out=) for CUDA torch.Tensors on torch's current stream; None when the call "
      "does not qualify.");
  m.def(
      "reduce_result_dtype",
      [](const char* op, const std::string& dtype) {
        ReduceOp reduce_op;
        throw_if_error(parse_reduce_op(op, &reduce_op));
        DType in;
        if (!parse_dtype_name(dtype, &in)) throw_if_error(type_error("reduce: unknown dtype " + dtype));
        return std::string(dtype_name(reduce_default_result_dtype(reduce_op, in)));
      },
      nb::arg("op"), nb::arg("dtype"), "numpy's default result dtype of reduce(op) on `dtype` (C++'s rule).");
  m.def("reduce_variants", [] {
    return variant_rows(reduce_variants());
  }, "(name, description, deterministic) of every reduce variant.");
}

}  // namespace gpuprims
