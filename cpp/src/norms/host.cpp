// The CPU reference of the norms family: the kernels' formulas (row_math.hpp), with every sum
// taken in long double before rounding to the statistics type. No speed promise.
#include <cmath>
#include <limits>
#include <vector>

#include "gpuprims/norms/row_math.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

template <class T>
Status host_run(const NormLaunch& l) {
  using Acc = acc_t<T>;
  const NormParams& p = l.params;
  const RowLayout& layout = p.layout;
  const int64_t n = layout.row_len;
  const T* w = static_cast<const T*>(p.weight);
  const T* b = static_cast<const T*>(p.bias);
  std::vector<Acc> v(static_cast<size_t>(n));
  for (int64_t row = 0; row < layout.num_rows; ++row) {
    const T* xr = static_cast<const T*>(p.x) + layout.x_row_offset(row);
    T* yr = static_cast<T*>(p.y) + layout.y_row_offset(row);
    for (int64_t i = 0; i < n; ++i) v[i] = cast_value<Acc>(xr[i * layout.x_elem_stride]);
    if (row_kind(l.op) == RowKind::kSoftmax) {
      Acc m = -std::numeric_limits<Acc>::infinity();
      for (int64_t i = 0; i < n; ++i) m = nan_max(m, v[i]);
      long double s = 0;
      for (int64_t i = 0; i < n; ++i) s += exp_of(v[i] - m);
      const RowStats<Acc> st{m, m == -std::numeric_limits<Acc>::infinity() ? Acc(0) : static_cast<Acc>(s)};
      const Acc scale = softmax_scale(st, p.log);
      for (int64_t i = 0; i < n; ++i) yr[i * layout.y_elem_stride] = cast_value<T>(softmax_out(v[i], st, scale, p.log));
      continue;
    }
    // Statistics of u = (x - shift) * inv_scale (RowFrame in row_math.hpp).
    RowFrame<Acc> f = make_row_frame(n > 0 ? v[0] : Acc(0), p.center);
    long double total = 0;
    if (p.center) {
      for (int64_t i = 0; i < n; ++i) total += (v[i] - f.shift) * f.inv_scale;
      // Move the frame to the mean (rounded to Acc): x - shift then rounds at each element's own
      // deviation, not at the first element's distance from the mean (row_partial in
      // row_stats.cuh). A constant row keeps its frame (total 0): outputs exactly the bias.
      const Acc c = n > 0 ? static_cast<Acc>(f.shift + total / n * f.scale) : f.shift;
      if (c != f.shift && c - c == Acc(0)) {
        f.shift = c;
        total = 0;
        for (int64_t i = 0; i < n; ++i) total += (v[i] - f.shift) * f.inv_scale;
      }
    }
    const Acc mean_u = n > 0 ? static_cast<Acc>(total / n) : Acc(0);
    long double m2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      const long double d = (v[i] - f.shift) * f.inv_scale - mean_u;
      m2 += d * d;
    }
    Acc mean_rel, rstd;
    norm_mean_rstd(mean_u, static_cast<Acc>(m2), n, f, p.eps, &mean_rel, &rstd);
    if (p.mean) static_cast<Acc*>(p.mean)[row] = f.shift + mean_rel;
    if (p.rstd) static_cast<Acc*>(p.rstd)[row] = rstd;
    for (int64_t i = 0; i < n; ++i) {
      const Acc wi = w ? cast_value<Acc>(w[i * p.weight_stride]) : Acc(1);
      const Acc bi = b ? cast_value<Acc>(b[i * p.bias_stride]) : Acc(0);
      yr[i * layout.y_elem_stride] = cast_value<T>(((v[i] - f.shift) - mean_rel) * rstd * wi + bi);
    }
  }
  return Status::ok();
}

}  // namespace

Status norms_host(const NormLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) { return host_run<typename decltype(tag)::type>(l); });
}

}  // namespace norms
}  // namespace gpuprims
