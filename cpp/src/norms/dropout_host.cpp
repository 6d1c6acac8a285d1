// The CPU reference of bias_dropout_add: the kernel's keep factors and formula, element by element.
#include "gpuprims/core/numeric.hpp"
#include "gpuprims/norms/row_math.hpp"
#include "dropout_launch.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

template <class T>
Status host_run(const DropoutLaunch& l) {
  using Acc = acc_t<T>;
  const DropoutParams& p = l.params;
  const T* x = static_cast<const T*>(p.x);
  const T* bias = static_cast<const T*>(p.bias);
  const T* res = static_cast<const T*>(p.residual);
  T* out = static_cast<T*>(p.out);
  const int64_t n = p.x_layout.row_len;
  for (int64_t i0 = 0; i0 < p.total; i0 += 4) {
    Acc f[4];
    dropout_factors<Acc, 4>(p, i0, f);
    for (int k = 0; k < 4 && i0 + k < p.total; ++k) {
      const int64_t e = i0 + k, row = e / n, j = e - row * n;
      const Acc b = bias != nullptr ? cast_value<Acc>(bias[j * p.bias_stride]) : Acc(0);
      const Acc xv = cast_value<Acc>(x[p.x_layout.x_row_offset(row) + j * p.x_layout.x_elem_stride]);
      const Acc rv = cast_value<Acc>(res[p.residual_layout.x_row_offset(row) + j * p.residual_layout.x_elem_stride]);
      out[p.x_layout.y_row_offset(row) + j * p.x_layout.y_elem_stride] = cast_value<T>(dropout_add(xv, b, rv, f[k]));
    }
  }
  return Status::ok();
}

}  // namespace

Status bias_dropout_add_host(const DropoutLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) { return host_run<typename decltype(tag)::type>(l); });
}

}  // namespace norms
}  // namespace gpuprims
