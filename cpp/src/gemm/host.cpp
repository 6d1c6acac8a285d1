// The CPU reference of the gemm family: the kernels' function, each dot product summed in double
// (long double for float64) and rounded once to the output dtype, so it is at least as accurate
// as every GPU variant. Any strides, read in place. No speed promise.
#include <type_traits>

#include "launch.hpp"

namespace gpuprims {
namespace gemm {
namespace {

template <class T>
using host_sum_t = std::conditional_t<std::is_same<T, double>::value, long double, double>;

template <class T>
Status host_matmul(const GemmLaunch& l) {
  const GemmParams& p = l.params;
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* c = static_cast<T*>(p.c);
  for (int64_t z = 0; z < p.batch; ++z) {
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        host_sum_t<T> s = 0;
        for (int64_t kk = 0; kk < p.k; ++kk) {
          s += static_cast<host_sum_t<T>>(cast_value<double>(a[p.sa.offset(z, i, kk)])) *
               cast_value<double>(b[p.sb.offset(z, kk, j)]);
        }
        c[p.sc.offset(z, i, j)] = cast_value<T>(static_cast<double>(s));
      }
    }
  }
  return Status::ok();
}

template <class T>
Status host_gemv(const GemvLaunch& l) {
  const GemvParams& p = l.params;
  const T* a = static_cast<const T*>(p.a);
  const T* x = static_cast<const T*>(p.x);
  T* y = static_cast<T*>(p.y);
  for (int64_t i = 0; i < p.m; ++i) {
    host_sum_t<T> s = 0;
    for (int64_t kk = 0; kk < p.k; ++kk) {
      s += static_cast<host_sum_t<T>>(cast_value<double>(a[i * p.a_row + kk * p.a_col])) *
           cast_value<double>(x[kk * p.x_stride]);
    }
    y[i * p.y_stride] = cast_value<T>(static_cast<double>(s));
  }
  return Status::ok();
}

}  // namespace

Status matmul_host(const GemmLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) { return host_matmul<typename decltype(tag)::type>(l); });
}

Status gemv_host(const GemvLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) { return host_gemv<typename decltype(tag)::type>(l); });
}

}  // namespace gemm
}  // namespace gpuprims
