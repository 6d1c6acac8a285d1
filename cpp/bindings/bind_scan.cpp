#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "gpuprims/scan.hpp"
#include "imported_array.hpp"
#include "raise.hpp"
#include "torch_bridge.hpp"
#include "variant_rows.hpp"

namespace nb = nanobind;

namespace gpuprims {
namespace {

// The binding arguments as ScanOptions (both scan bindings); op and algorithm checked by name.
ScanOptions scan_options(const char* op, int axis, bool exclusive, bool deterministic, const char* algorithm) {
  ScanOptions options;
  throw_if_error(parse_reduce_op(op, &options.op));
  throw_if_error(parse_scan_algorithm(algorithm, &options.algorithm));
  options.axis = axis;
  options.exclusive = exclusive;
  options.deterministic = deterministic;
  return options;
}

// scan() on CUDA torch tensors with dtype= and stream= at their defaults, without the Python array
// layer: the result (out, when given), or None when the call does not qualify (x not a CUDA
// torch.Tensor; axis not a Python int in range, or None on anything but a 1-D x, which the general
// path flattens; an out= of another kind, device or dtype, or one that requires grad). The general
// path, the reference for the semantics, then takes the call and raises its typed errors; out='s
// shape and overlap are scan()'s own checks on either path. The launch is asynchronous: the GIL
// stays held (as reduce's fast path).
nb::object scan_torch(nb::handle x, const char* op, nb::handle axis, bool exclusive, bool deterministic,
                      const char* algorithm, nb::handle out) {
  TensorView in_view;
  cudaStream_t stream;
  if (!torch_cuda_view(x, &in_view, &stream)) return nb::none();
  const int ndim = in_view.ndim;
  int a = 0;  // scan() takes the axis normalized
  if (axis.is_none() ? ndim != 1 : !read_python_axis(axis, ndim, &a)) return nb::none();
  const ScanOptions options = scan_options(op, a, exclusive, deterministic, algorithm);
  const DType result_dtype = reduce_default_result_dtype(options.op, in_view.dtype);
  TensorView out_view;
  nb::object result;
  if (out.is_none()) {
    result = torch_new_tensor(result_dtype, in_view.device.id, in_view.shape, ndim, &out_view);
  } else {
    if (!torch_cuda_out(out, in_view.device, result_dtype, &out_view)) return nb::none();
    result = nb::borrow(out);
  }
  throw_if_error(scan(in_view, out_view, options, stream));
  return result;
}

}  // namespace

void bind_scan(nb::module_& m) {
  m.def("scan_torch", &scan_torch, nb::arg("x"), nb::arg("op"), nb::arg("axis").none(), nb::arg("exclusive"),
        nb::arg("deterministic"), nb::arg("algorithm"), nb::arg("out").none(),
        "scan(x, op, axis, exclusive=, deterministic=, out=) for CUDA torch.Tensors on torch's current stream; "
        "None when the call does not qualify.");
  m.def(
      "scan",
      [](nb::handle x, nb::handle out, const char* op, int axis, bool exclusive, bool deterministic,
         const char* algorithm, uintptr_t stream) {
        const TensorView in_view = view_of(x, "scan", "x"), out_view = view_of(out, "scan", "out");
        const ScanOptions options = scan_options(op, axis, exclusive, deterministic, algorithm);
        call_without_gil([&] { return scan(in_view, out_view, options, reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("x"), nb::arg("out"), nb::arg("op"), nb::arg("axis"), nb::arg("exclusive"), nb::arg("deterministic"),
      nb::arg("algorithm"), nb::arg("stream"),
      "out = scan(x) with op 'sum' | 'prod' | 'min' | 'max' along axis, ordered on stream.");

  m.def(
      "compact",
      [](nb::handle x, nb::handle mask, nb::handle out, nb::handle count, uintptr_t stream) {
        const bool indices = x.is_none();
        TensorView values_view;
        if (!indices) values_view = view_of(x, "compact", "x");
        const TensorView mask_view = view_of(mask, "compact", "mask"), out_view = view_of(out, "compact", "out"),
                         count_view = view_of(count, "compact", "count");
        const CompactArgs args{indices ? nullptr : &values_view, &mask_view, &out_view, &count_view};
        call_without_gil([&] { return compact(args, reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("x").none(), nb::arg("mask"), nb::arg("out"), nb::arg("count"), nb::arg("stream"),
      "out[:count] = x[mask] (or the indices of mask's true elements when x is None), ordered on stream.");

  m.def(
      "count_true",
      [](nb::handle mask, uintptr_t stream) {
        const TensorView mask_view = view_of(mask, "compact", "mask");
        int64_t count = 0;
        call_without_gil([&] { return count_true(mask_view, &count, reinterpret_cast<cudaStream_t>(stream)); });
        return count;
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("mask"), nb::arg("stream"), "Number of true elements; synchronizes the stream.");

  m.def(
      "segmented_reduce",
      [](nb::handle x, nb::handle offsets, nb::handle out, const char* op, const char* algorithm, uintptr_t stream) {
        const TensorView in_view = view_of(x, "segmented_reduce", "x"),
                         offsets_view = view_of(offsets, "segmented_reduce", "offsets"),
                         out_view = view_of(out, "segmented_reduce", "out");
        ReduceOp reduce_op;
        throw_if_error(parse_reduce_op(op, &reduce_op));
        SegmentedReduceAlgorithm which;
        throw_if_error(parse_segmented_reduce_algorithm(algorithm, &which));
        call_without_gil([&] { return segmented_reduce(in_view, offsets_view, out_view, reduce_op, which,
                                                       reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("x"), nb::arg("offsets"), nb::arg("out"), nb::arg("op"), nb::arg("algorithm"), nb::arg("stream"),
      "out[s] = op over x[offsets[s]:offsets[s+1]], ordered on stream.");

  m.def("scan_variants", [] {
    return variant_rows(scan_variants());
  }, "(name, description, deterministic) of every scan variant.");

  m.def("segmented_reduce_variants", [] {
    return variant_rows(segmented_reduce_variants());
  }, "(name, description, deterministic) of every segmented_reduce variant.");
}

}  // namespace gpuprims
