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
        Status status;
        {
          nb::gil_scoped_release release;
          status = reduce(in_view, out_view, options, reinterpret_cast<cudaStream_t>(stream));
        }
        throw_if_error(status);
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("x"), nb::arg("out"), nb::arg("op"), nb::arg("axis").none(), nb::arg("algorithm"), nb::arg("stream"),
      "out = reduce(x) with op 'sum' | 'prod' | 'min' | 'max' along a tuple of axes (None: all), ordered on stream.");

  // The fast path of reduce(x) over all axes with every default but op and algorithm, for a CUDA
  // torch.Tensor (torch_bridge.hpp): the result tensor, or None when x does not qualify. The launch
  // is asynchronous, so the GIL stays held (releasing and taking it back costs more than the launch
  // path it would free).
  m.def(
      "reduce_all_torch",
      [](nb::handle x, const char* op, const char* algorithm) -> nb::object {
        TensorView in_view;
        cudaStream_t stream;
        if (!torch_cuda_view(x, &in_view, &stream)) return nb::none();
        ReduceOptions options;
        throw_if_error(parse_reduce_op(op, &options.op));
        throw_if_error(parse_reduce_algorithm(algorithm, &options.algorithm));
        options.all_axes = true;
        TensorView out_view;
        nb::object result =
            torch_new_scalar(reduce_default_result_dtype(options.op, in_view.dtype), in_view.device.id, &out_view);
        throw_if_error(reduce(in_view, out_view, options, stream));
        return result;
      },
      nb::arg("x"), nb::arg("op"), nb::arg("algorithm"),
      "reduce(x, op) over all axes for a CUDA torch.Tensor on torch's current stream; None when x is not one.");
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
