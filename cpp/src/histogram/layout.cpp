// SampleLayout: x (and its weights) flattened into the fewest dimensions. The histogram does not
// depend on sample order, so dimensions are reordered freely; weights follow the same permutation.
#include <algorithm>
#include <string>

#include "launch.hpp"

namespace gpuprims {
namespace histogram_detail {

Status make_sample_layout(const TensorView& x, const TensorView* w, const char* op, SampleLayout* layout,
                          const void** x_base, const void** w_base) {
  SampleLayout& l = *layout;
  l = SampleLayout{};
  l.n = x.numel();
  const char* xp = static_cast<const char*>(x.data);
  const char* wp = w ? static_cast<const char*>(w->data) : nullptr;
  const int64_t xs = static_cast<int64_t>(dtype_size(x.dtype)), ws = w ? static_cast<int64_t>(dtype_size(w->dtype)) : 0;
  struct Dim { int64_t size, xs, ws; };
  Dim dims[kMaxArrayDims];
  int nd = 0;
  if (l.n > 0) {
    for (int d = 0; d < x.ndim; ++d) {
      if (x.shape[d] == 1) continue;
      Dim dim{x.shape[d], x.strides[d], w ? w->strides[d] : 0};
      if (dim.xs < 0) {  // walk this dimension backwards, in both arrays
        xp += (dim.size - 1) * dim.xs * xs;
        if (w) wp += (dim.size - 1) * dim.ws * ws;
        dim.xs = -dim.xs;
        dim.ws = -dim.ws;
      }
      dims[nd++] = dim;
    }
  }
  // Largest x stride first; a stable sort keeps the given order among equal strides.
  std::stable_sort(dims, dims + nd, [](const Dim& a, const Dim& b) { return a.xs > b.xs; });
  int merged = 0;
  for (int d = 0; d < nd; ++d) {
    if (merged > 0) {
      Dim& outer = dims[merged - 1];
      const Dim& inner = dims[d];
      if (outer.xs == inner.size * inner.xs && (!w || outer.ws == inner.size * inner.ws)) {
        outer.size *= inner.size;
        outer.xs = inner.xs;
        outer.ws = inner.ws;
        continue;
      }
    }
    dims[merged++] = dims[d];
  }
  l.contiguous = merged == 0 || (merged == 1 && dims[0].xs == 1 && (!w || dims[0].ws == 1));
  if (!l.contiguous && merged > kMaxDims) {
    return value_error(std::string(op) + ": argument 'x': expected at most " + std::to_string(kMaxDims) +
                       " dimensions that cannot be merged, got " + std::to_string(merged) + " (shape " +
                       shape_string(x) + "); make it contiguous first");
  }
  l.ndim = l.contiguous ? 0 : merged;
  for (int d = 0; d < l.ndim; ++d) {
    l.shape[d] = dims[d].size;
    l.x_strides[d] = dims[d].xs;
    l.w_strides[d] = dims[d].ws;
  }
  *x_base = xp;
  *w_base = wp;
  return Status::ok();
}

}  // namespace histogram_detail
}  // namespace gpuprims
