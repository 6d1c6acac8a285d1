#include "layout.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace gpuprims {
namespace reduce_detail {
namespace {

struct Dim {
  int64_t size, in_stride, out_stride;
};

// A fixed-capacity list of dimensions: layouts are built on every call, so no heap allocation.
struct Dims {
  Dim dim[kMaxArrayDims];
  int count = 0;
  void push(const Dim& d) { dim[count++] = d; }
  Dim* begin() { return dim; }
  Dim* end() { return dim + count; }
  const Dim* begin() const { return dim; }
  const Dim* end() const { return dim + count; }
};

bool is_reduced(uint64_t reduced_axes, int d) { return (reduced_axes >> d) & 1; }

std::string expected_out_shape(const TensorView& in, uint64_t reduced_axes) {
  std::string s = "(";
  int written = 0;
  for (int d = 0; d < in.ndim; ++d) {
    if (is_reduced(reduced_axes, d)) continue;
    s += (written++ ? ", " : "") + std::to_string(in.shape[d]);
  }
  return s + (written == 1 ? ",)" : ")");
}

std::string axes_string(uint64_t reduced_axes, int ndim) {
  std::string s;
  int count = 0;
  for (int d = 0; d < ndim; ++d)
    if (is_reduced(reduced_axes, d)) s += (count++ ? ", " : "") + std::to_string(d);
  return count == 1 ? "a 1 at axis " + s : "1s at axes (" + s + ")";
}

// options.axes as a bit set over in's dimensions, each checked to be in range and named once.
Status reduced_axes_of(const ReduceOptions& options, int ndim, uint64_t* reduced_axes) {
  *reduced_axes = 0;
  if (options.num_axes < 0 || options.num_axes > kMaxArrayDims) {
    return value_error("reduce: argument 'axis': expected at most " + std::to_string(kMaxArrayDims) +
                       " axes, got " + std::to_string(options.num_axes));
  }
  for (int i = 0; i < options.num_axes; ++i) {
    int axis = options.axes[i];
    if (axis < -ndim || axis >= ndim) {
      return value_error("reduce: argument 'axis': expected an int in [" + std::to_string(-ndim) + ", " +
                         std::to_string(ndim) + ") for an array of " + std::to_string(ndim) +
                         " dimensions, got " + std::to_string(axis));
    }
    if (axis < 0) axis += ndim;
    if (is_reduced(*reduced_axes, axis)) {
      return value_error("reduce: argument 'axis': expected each axis once, got axis " + std::to_string(axis) +
                         " twice");
    }
    *reduced_axes |= uint64_t(1) << axis;
  }
  return Status::ok();
}

// Merges dims[k] into dims[k + 1] wherever stepping the outer dimension once equals stepping the
// inner one `size` times, in the input and (for kept dimensions) the output.
Dims merge_dims(const Dims& dims, bool check_out) {
  Dims merged;
  for (const Dim& d : dims) {
    if (merged.count > 0) {
      Dim& outer = merged.dim[merged.count - 1];
      const bool in_ok = outer.in_stride == d.size * d.in_stride;
      const bool out_ok = !check_out || outer.out_stride == d.size * d.out_stride;
      if (in_ok && out_ok) {
        outer = Dim{outer.size * d.size, d.in_stride, d.out_stride};
        continue;
      }
    }
    merged.push(d);
  }
  return merged;
}

}  // namespace

Status make_reduce_layout(const TensorView& in, const TensorView& out, const ReduceOptions& options,
                          ReduceLayout* layout, const void** in_base) {
  uint64_t reduced_axes = ~uint64_t(0);
  if (!options.all_axes) GPUPRIMS_TRY(reduced_axes_of(options, in.ndim, &reduced_axes));

  // The output: one element for axis=None; otherwise the input's shape without the reduced axes, or
  // with them kept as size 1 (keepdims).
  Dims kept, reduced;
  if (options.all_axes) {
    if (out.numel() != 1) {
      return value_error("reduce: argument 'out': expected one element for axis=None, got shape " +
                         shape_string(out));
    }
    for (int d = 0; d < in.ndim; ++d) reduced.push({in.shape[d], in.strides[d], 0});
  } else {
    const bool keepdims = out.ndim == in.ndim;
    bool shape_ok = keepdims || out.ndim == in.ndim - options.num_axes;
    for (int d = 0, o = 0; shape_ok && d < in.ndim; ++d) {
      if (is_reduced(reduced_axes, d)) {
        if (keepdims) shape_ok = out.shape[o++] == 1;
        reduced.push({in.shape[d], in.strides[d], 0});
        continue;
      }
      shape_ok = out.shape[o] == in.shape[d];
      kept.push({in.shape[d], in.strides[d], out.strides[o]});
      ++o;
    }
    if (!shape_ok) {
      return value_error("reduce: argument 'out': expected shape " + expected_out_shape(in, reduced_axes) +
                         (options.num_axes > 0 ? " (or with " + axes_string(reduced_axes, in.ndim) + ")" : "") +
                         ", got " + shape_string(out));
    }
  }

  ReduceLayout l;
  l.num_rows = 1;
  for (const Dim& d : kept) l.num_rows *= d.size;
  l.row_len = 1;
  for (const Dim& d : reduced) l.row_len *= d.size;

  // Reduced dimensions: flip negative strides, drop size-1 dims, order by stride (outermost first)
  // so contiguous memory merges into one run.
  const char* base = static_cast<const char*>(in.data);
  const auto elem = static_cast<int64_t>(dtype_size(in.dtype));
  Dims red;
  for (Dim d : reduced) {
    if (d.size == 1) continue;
    if (d.in_stride < 0 && d.size > 0) {
      base += (d.size - 1) * d.in_stride * elem;
      d.in_stride = -d.in_stride;
    }
    red.push(d);
  }
  std::stable_sort(red.begin(), red.end(), [](const Dim& a, const Dim& b) { return a.in_stride > b.in_stride; });
  red = merge_dims(red, false);

  Dims keep;
  for (const Dim& d : kept)
    if (d.size != 1) keep.push(d);
  keep = merge_dims(keep, true);

  if (red.count > kMaxDims || keep.count > kMaxDims) {
    return value_error("reduce: argument 'x': its strides leave more than " + std::to_string(kMaxDims) +
                       " dimensions that cannot be merged; make it contiguous first");
  }
  l.red_ndim = red.count;
  for (int i = 0; i < l.red_ndim; ++i) {
    l.red_sizes[i] = red.dim[i].size;
    l.red_strides[i] = red.dim[i].in_stride;
  }
  l.keep_ndim = keep.count;
  for (int i = 0; i < l.keep_ndim; ++i) {
    l.keep_sizes[i] = keep.dim[i].size;
    l.keep_in_strides[i] = keep.dim[i].in_stride;
    l.keep_out_strides[i] = keep.dim[i].out_stride;
  }
  l.row_contiguous = l.red_ndim == 0 || (l.red_ndim == 1 && l.red_strides[0] == 1);
  *layout = l;
  *in_base = base;
  return Status::ok();
}

bool split_inner_run(const ReduceLayout& l, ReduceLayout* inner, ReduceLayout* outer) {
  const int last = l.red_ndim - 1;
  if (l.red_ndim < 2 || l.red_strides[last] != 1 || l.keep_ndim + last > kMaxDims) return false;
  int64_t outer_count = 1;
  for (int d = 0; d < last; ++d) outer_count *= l.red_sizes[d];

  ReduceLayout a;  // the run, for every (kept, outer reduced) index: rows of the scratch
  a.row_len = l.red_sizes[last];
  a.row_contiguous = true;
  a.red_ndim = 1;
  a.red_sizes[0] = a.row_len;
  a.red_strides[0] = 1;
  // The rows' dimensions: the kept ones, then the outer reduced ones. The scratch holds them in that
  // order (slot kept_index * outer_count + outer_index, its strides computed here), but the kernels
  // take rows in index order, so they are enumerated in address order (dimensions by input stride,
  // largest first): the warps in flight then read neighbouring runs, where the scratch's order
  // would take axis=(0, 2) of a (64, 4096, 1024) array in runs 16 MiB apart.
  Dims rows;
  for (int d = 0; d < l.keep_ndim; ++d) rows.push({l.keep_sizes[d], l.keep_in_strides[d], 0});
  for (int d = 0; d < last; ++d) rows.push({l.red_sizes[d], l.red_strides[d], 0});
  int64_t stride = 1;
  for (int d = rows.count - 1; d >= 0; --d) {
    rows.dim[d].out_stride = stride;
    stride *= rows.dim[d].size;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Dim& x, const Dim& y) { return x.in_stride > y.in_stride; });
  a.keep_ndim = rows.count;
  for (int d = 0; d < rows.count; ++d) {
    a.keep_sizes[d] = rows.dim[d].size;
    a.keep_in_strides[d] = rows.dim[d].in_stride;
    a.keep_out_strides[d] = rows.dim[d].out_stride;
  }
  a.num_rows = l.num_rows * outer_count;

  ReduceLayout b;  // each kept index's outer_count scratch values into its output
  b.row_len = outer_count;
  b.row_contiguous = true;
  b.red_ndim = 1;
  b.red_sizes[0] = outer_count;
  b.red_strides[0] = 1;
  b.keep_ndim = l.keep_ndim;
  stride = outer_count;
  for (int d = l.keep_ndim - 1; d >= 0; --d) {
    b.keep_sizes[d] = l.keep_sizes[d];
    b.keep_in_strides[d] = stride;
    b.keep_out_strides[d] = l.keep_out_strides[d];
    stride *= l.keep_sizes[d];
  }
  b.num_rows = l.num_rows;
  *inner = a;
  *outer = b;
  return true;
}

}  // namespace reduce_detail
}  // namespace gpuprims
