#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "gpuprims/histogram.hpp"
#include "imported_array.hpp"
#include "raise.hpp"
#include "variant_rows.hpp"

namespace nb = nanobind;

namespace gpuprims {

namespace {

Status parse_out_of_range(const std::string& name, OutOfRange* out) {
  if (name == "raise") *out = OutOfRange::kRaise;
  else if (name == "ignore") *out = OutOfRange::kIgnore;
  else return value_error("bincount: argument 'out_of_range': expected 'raise' or 'ignore', got '" + name + "'");
  return Status::ok();
}

}  // namespace

void bind_histogram(nb::module_& m) {
  m.def(
      "histogram",
      [](nb::handle x, nb::handle weights, nb::handle out, int64_t bins, double first, double last, double denom,
         bool narrow, const char* algorithm, uintptr_t stream) {
        const TensorView x_view = view_of(x, "histogram", "x"), out_view = view_of(out, "histogram", "out");
        TensorView w_view;
        if (!weights.is_none()) w_view = view_of(weights, "histogram", "weights");
        HistogramAlgorithm algo;
        throw_if_error(parse_histogram_algorithm(algorithm, &algo));
        HistogramBinSpec spec;
        spec.bins = bins;
        spec.first = first;
        spec.last = last;
        spec.denom = denom;
        spec.narrow = narrow;
        call_without_gil([&] { return histogram(x_view, weights.is_none() ? nullptr : &w_view, out_view, spec, algo,
                                                reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("x"), nb::arg("weights").none(), nb::arg("out"), nb::arg("bins"), nb::arg("first"), nb::arg("last"),
      nb::arg("denom"), nb::arg("narrow"), nb::arg("algorithm"), nb::arg("stream"),
      "out = numpy.histogram counts (or weight sums) of x over equal bins, ordered on stream.");

  m.def(
      "bincount",
      [](nb::handle x, nb::handle weights, nb::handle out, const std::string& out_of_range, const char* algorithm,
         uintptr_t stream) {
        const TensorView x_view = view_of(x, "bincount", "x"), out_view = view_of(out, "bincount", "out");
        TensorView w_view;
        if (!weights.is_none()) w_view = view_of(weights, "bincount", "weights");
        HistogramAlgorithm algo;
        throw_if_error(parse_histogram_algorithm(algorithm, &algo));
        OutOfRange mode;
        throw_if_error(parse_out_of_range(out_of_range, &mode));
        call_without_gil([&] { return bincount(x_view, weights.is_none() ? nullptr : &w_view, out_view, mode, algo,
                                               reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("x"), nb::arg("weights").none(), nb::arg("out"), nb::arg("out_of_range"), nb::arg("algorithm"),
      nb::arg("stream"), "out = numpy.bincount of x (length len(out)), ordered on stream.");

  m.def(
      "data_range",
      [](nb::handle x, const char* op, uintptr_t stream) -> nb::object {
        const TensorView x_view = view_of(x, op, "x");
        DataRange range;
        call_without_gil([&] { return data_range(x_view, op, reinterpret_cast<cudaStream_t>(stream), &range); });
        if (range.is_integer) return nb::make_tuple(range.lo_int, range.hi_int);
        if (range.is_uint64) return nb::make_tuple(range.lo_uint64, range.hi_uint64);
        return nb::make_tuple(range.lo, range.hi);
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("x"), nb::arg("op"), nb::arg("stream"),
      "(min, max) of x read back to the host (ints for integer x); synchronizes the stream.");

  m.def(
      "bincount_byte_values",
      [](nb::handle x, nb::handle out, const char* algorithm, uintptr_t stream) -> int64_t {
        const TensorView x_view = view_of(x, "bincount", "x"), out_view = view_of(out, "bincount", "out");
        HistogramAlgorithm algo;
        throw_if_error(parse_histogram_algorithm(algorithm, &algo));
        int64_t largest = -1;
        call_without_gil([&] {
          return bincount_byte_values(x_view, out_view, algo, reinterpret_cast<cudaStream_t>(stream), &largest);
        });
        return largest;
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("x"), nb::arg("out"), nb::arg("algorithm"), nb::arg("stream"),
      "out[:256] = counts of the uint8/bool values of x on a GPU; returns the largest value present (-1: none). "
      "Synchronizes the stream.");

  m.def(
      "copy_counts",
      [](nb::handle src, nb::handle dst, uintptr_t stream) {
        const TensorView src_view = view_of(src, "bincount", "src"), dst_view = view_of(dst, "bincount", "dst");
        call_without_gil([&] { return copy_counts(src_view, dst_view, reinterpret_cast<cudaStream_t>(stream)); });
      },
      nb::call_guard<RecordImportLaunches>(),
      nb::arg("src"), nb::arg("dst"), nb::arg("stream"), "dst[:] = src[:len(dst)] (int64, one GPU), ordered on stream.");

  m.def("histogram_variants", [] {
    return variant_rows(histogram_variants());
  }, "(name, description, deterministic) of every histogram variant.");
}

}  // namespace gpuprims
