#include "layout.hpp"

#include <algorithm>
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

std::string expected_out_shape(const TensorView& in, int axis) {
  std::string s = "(";
  int written = 0;
  for (int d = 0; d < in.ndim; ++d) {
    if (d == axis) continue;
    s += (written++ ? ", " : "") + std::to_string(in.shape[d]);
  }
  return s + (written == 1 ? ",)" : ")");
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
  int axis = options.axis;
  if (!options.all_axes) {
    if (axis < -in.ndim || axis >= in.ndim) {
      return value_error("reduce: argument 'axis': expected an int in [" + std::to_string(-in.ndim) + ", " +
                         std::to_string(in.ndim) + ") for an array of " + std::to_string(in.ndim) +
                         " dimensions, got " + std::to_string(options.axis));
    }
    if (axis < 0) axis += in.ndim;
  }

  // The output: one element for axis=None; otherwise the input's shape without `axis`, or with it
  // kept as size 1 (keepdims).
  Dims kept, reduced;
  if (options.all_axes) {
    if (out.numel() != 1) {
      return value_error("reduce: argument 'out': expected one element for axis=None, got shape " +
                         shape_string(out));
    }
    for (int d = 0; d < in.ndim; ++d) reduced.push({in.shape[d], in.strides[d], 0});
  } else {
    const bool keepdims = out.ndim == in.ndim;
    bool shape_ok = keepdims || out.ndim == in.ndim - 1;
    for (int d = 0, o = 0; shape_ok && d < in.ndim; ++d) {
      if (d == axis) {
        if (keepdims) shape_ok = out.shape[o++] == 1;
        continue;
      }
      shape_ok = out.shape[o] == in.shape[d];
      kept.push({in.shape[d], in.strides[d], out.strides[o]});
      ++o;
    }
    if (!shape_ok) {
      return value_error("reduce: argument 'out': expected shape " + expected_out_shape(in, axis) +
                         " (or with a 1 at axis " + std::to_string(axis) + "), got " + shape_string(out));
    }
    reduced.push({in.shape[axis], in.strides[axis], 0});
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

}  // namespace reduce_detail
}  // namespace gpuprims
