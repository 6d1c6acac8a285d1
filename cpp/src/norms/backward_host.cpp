// The CPU reference of the backward passes: the kernels' formulas (row_math.hpp), with the row
// sums and the dweight / dbias column sums taken in long double before rounding.
#include <vector>

#include "gpuprims/norms/row_math.hpp"
#include "backward_launch.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

template <class T>
Status host_run(const NormBackwardLaunch& l) {
  using Acc = acc_t<T>;
  const NormBackwardParams& p = l.params;
  const RowLayout& dl = p.dy_layout;
  const RowLayout& sl = p.saved_layout;
  const int64_t n = dl.row_len;
  const T* w = static_cast<const T*>(p.weight);
  std::vector<long double> dw(static_cast<size_t>(n), 0.0L), db(static_cast<size_t>(n), 0.0L);
  std::vector<Acc> d(static_cast<size_t>(n)), s(static_cast<size_t>(n));
  for (int64_t row = 0; row < dl.num_rows; ++row) {
    const T* dyr = static_cast<const T*>(p.dy) + dl.x_row_offset(row);
    const T* sr = static_cast<const T*>(p.saved) + sl.x_row_offset(row);
    T* dxr = static_cast<T*>(p.dx) + dl.y_row_offset(row);
    for (int64_t i = 0; i < n; ++i) {
      d[i] = cast_value<Acc>(dyr[i * dl.x_elem_stride]);
      s[i] = cast_value<Acc>(sr[i * sl.x_elem_stride]);
    }
    if (row_kind(l.op) == RowKind::kSoftmax) {
      long double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += softmax_backward_term(s[i], d[i], p.log);
      for (int64_t i = 0; i < n; ++i) {
        dxr[i * dl.y_elem_stride] = cast_value<T>(softmax_backward_out(s[i], d[i], static_cast<Acc>(sum), p.log));
      }
      continue;
    }
    const Acc mean = p.center ? static_cast<const Acc*>(p.mean)[row] : Acc(0);
    const Acc rstd = static_cast<const Acc*>(p.rstd)[row];
    long double sum_g = 0, sum_gx = 0;
    for (int64_t i = 0; i < n; ++i) {
      const Acc xhat = (s[i] - mean) * rstd;
      const Acc g = d[i] * (w ? cast_value<Acc>(w[i * p.weight_stride]) : Acc(1));
      s[i] = xhat;
      d[i] = g;
      dw[i] += static_cast<long double>(cast_value<Acc>(dyr[i * dl.x_elem_stride])) * xhat;
      db[i] += cast_value<Acc>(dyr[i * dl.x_elem_stride]);
      sum_g += g;
      sum_gx += static_cast<long double>(g) * xhat;
    }
    const Acc mean_g = p.center && n > 0 ? static_cast<Acc>(sum_g / n) : Acc(0);
    const Acc mean_gx = n > 0 ? static_cast<Acc>(sum_gx / n) : Acc(0);
    for (int64_t i = 0; i < n; ++i) {
      dxr[i * dl.y_elem_stride] = cast_value<T>(norm_backward_out(d[i], s[i], rstd, mean_g, mean_gx));
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (l.dweight) static_cast<T*>(l.dweight)[i * l.dweight_stride] = cast_value<T>(static_cast<Acc>(dw[i]));
    if (l.dbias) static_cast<T*>(l.dbias)[i * l.dbias_stride] = cast_value<T>(static_cast<Acc>(db[i]));
  }
  return Status::ok();
}

}  // namespace

Status norms_backward_host(const NormBackwardLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) { return host_run<typename decltype(tag)::type>(l); });
}

}  // namespace norms
}  // namespace gpuprims
