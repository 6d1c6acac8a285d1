#pragma once
// Scalar math of the norms family, shared by the kernels and the CPU reference so both follow the
// same formulas and special-value rules.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "gpuprims/core/config.hpp"
#include "gpuprims/core/numeric.hpp"

namespace gpuprims {
namespace norms {

// Statistics and arithmetic type: float for float16/bfloat16/float32, double for float64.
template <class T>
using acc_t = std::conditional_t<std::is_same<T, double>::value, double, float>;

// max that propagates NaN (fmax would drop it): a row holding a NaN softmaxes to NaN, as in torch.
template <class Acc>
GPUPRIMS_HD Acc nan_max(Acc a, Acc b) {
  return (a > b || a != a) ? a : b;
}

template <class Acc>
GPUPRIMS_HD Acc exp_of(Acc v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same<Acc, float>::value) return expf(v);
  else return exp(v);
#else
  return std::exp(v);
#endif
}

template <class Acc>
GPUPRIMS_HD Acc log_of(Acc v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same<Acc, float>::value) return logf(v);
  else return log(v);
#else
  return std::log(v);
#endif
}

// Norm statistics are taken on u = (x - shift) * inv_scale, where shift is the row's first
// element (0 for rms_norm) and inv_scale a power of two (exact scaling) that brings that element
// below 2. Shifting makes a constant row's deviations exactly 0 (layer_norm returns the bias
// exactly) and keeps sums small for rows like 1234 + noise; scaling keeps the squares finite for
// rows near 1e30 (whose squared deviations overflow float32) and is 1 for |x| < 2.
template <class Acc>
struct RowFrame {
  Acc shift;
  Acc inv_scale;  // 2^-e
  Acc scale;      // 2^e
};

// 2^k as a float / double, for k within the normal exponent range.
GPUPRIMS_HD float pow2f(int k) { return bits_to_float(uint32_t(127 + k) << 23); }
GPUPRIMS_HD double pow2d(int k) {
  const uint64_t bits = uint64_t(1023 + k) << 52;
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double out;
  std::memcpy(&out, &bits, 8);
  return out;
#endif
}

// The frame of a row whose first element is `first`: e with 2^e <= |first| < 2^(e+1) when that
// is >= 1 (capped so 2^-e stays normal), else 0 (|first| < 2, inf or NaN).
template <class Acc>
GPUPRIMS_HD RowFrame<Acc> make_row_frame(Acc first, bool center) {
  int e;
  if constexpr (std::is_same<Acc, float>::value) {
    e = int((float_to_bits(first) >> 23) & 0xffu) - 127;
    e = (e <= 0 || e >= 128) ? 0 : (e > 126 ? 126 : e);
    return {center ? first : 0.0f, pow2f(-e), pow2f(e)};
  } else {
    uint64_t bits;
#if defined(__CUDA_ARCH__)
    bits = static_cast<uint64_t>(__double_as_longlong(first));
#else
    std::memcpy(&bits, &first, 8);
#endif
    e = int((bits >> 52) & 0x7ffu) - 1023;
    e = (e <= 0 || e >= 1024) ? 0 : (e > 1022 ? 1022 : e);
    return {center ? first : 0.0, pow2d(-e), pow2d(e)};
  }
}

// 1 / v without a called subroutine (whose register saves show as spills on the GPU): for float,
// the hardware reciprocal approximation refined by one Newton step (within an ulp), with 0 and inf
// handled exactly; for double, the correctly rounded __drcp_rn. The host divides.
template <class Acc>
GPUPRIMS_HD Acc reciprocal_of(Acc v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same<Acc, float>::value) {
    const float r = __fdividef(1.0f, v);
    const float refined = fmaf(r, fmaf(-v, r, 1.0f), r);
    if (v == 0.0f) return copysignf(__int_as_float(0x7f800000), v);
    if (fabsf(v) == __int_as_float(0x7f800000)) return copysignf(0.0f, v);
    return refined;
  } else {
    return __drcp_rn(v);
  }
#else
  return Acc(1) / v;
#endif
}

template <class Acc>
GPUPRIMS_HD Acc sqrt_of(Acc v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same<Acc, float>::value) return sqrtf(v);
  else return sqrt(v);
#else
  return std::sqrt(v);
#endif
}

// 1 / sqrt(v) without called subroutines: for float, the hardware rsqrt refined by one Newton step
// (within an ulp), 0 and inf handled exactly; for double, __drcp_rn of the correctly rounded sqrt.
template <class Acc>
GPUPRIMS_HD Acc rsqrt_of(Acc v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same<Acc, float>::value) {
    const float r = rsqrtf(v);
    const float refined = r * fmaf(-0.5f * v * r, r, 1.5f);
    if (v == 0.0f) return copysignf(__int_as_float(0x7f800000), v);
    if (v == __int_as_float(0x7f800000)) return 0.0f;
    return refined;
  } else {
    return reciprocal_of(sqrt_of(v));
  }
#else
  return Acc(1) / std::sqrt(v);
#endif
}

// (mean - shift, rstd) of a row of n elements from the mean and the sum of squared deviations of
// its u values: mean - shift = mean_u * scale (kept relative: the output is computed as
// ((x - shift) - (mean - shift)) * rstd, so a mean near 1234 rounded to float32 costs nothing),
//   var = m2_u / n * scale^2,   rstd = 1 / sqrt(var + eps),
// and where var overflows (rows near 1e30), rstd = inv_scale / sqrt(m2_u / n) (eps is negligible
// there). eps is applied in float32 (float64 for float64); 1 / sqrt within an ulp (rsqrt_of). An
// empty row gives (0, NaN), as torch.
template <class Acc>
GPUPRIMS_HD void norm_mean_rstd(Acc mean_u, Acc m2_u, int64_t n, RowFrame<Acc> f, double eps, Acc* mean_rel,
                                Acc* rstd) {
  *mean_rel = mean_u * f.scale;
  const Acc var_u = m2_u * reciprocal_of(Acc(n));
  const Acc var = var_u * f.scale * f.scale;
  const bool overflow = var - var != Acc(0) && var_u - var_u == Acc(0);  // var is inf, var_u finite
  *rstd = overflow ? f.inv_scale * rsqrt_of(var_u) : rsqrt_of(var + static_cast<Acc>(eps));
}

// A thread's running softmax statistics over the values it visits (Milakov & Gimelshein): m the
// max so far, s the sum of exp(v - m); only a new max rescales s (a second exponential: where the
// max holds, s * exp(0) is s, so one exponential a value). Values while the max is still -inf add
// nothing, so a thread that saw only -inf keeps s = 0; a NaN makes both NaN (NaN != NaN takes the
// rescale). The streaming `online` rung and the column kernels (column_rows.cuh) accumulate this
// way, then combine the threads' (m, s) about the row's max.
template <class Acc>
struct OnlineSoftmax {
  Acc m = -std::numeric_limits<Acc>::infinity();
  Acc s = Acc(0);
  GPUPRIMS_HD void add(Acc v) {
    const Acc m_new = nan_max(m, v);
    if (m_new == -std::numeric_limits<Acc>::infinity()) return;
    if (m_new != m) {
      s = s * exp_of(m - m_new);
      m = m_new;
    }
    s += exp_of(v - m);
  }
};

// Welford's running (count, mean, M2) of the values d a thread visits; threads merge in closed
// form afterwards (the streaming `welford` rung, the column kernels).
template <class Acc>
struct WelfordMoments {
  Acc count = Acc(0);
  Acc mean = Acc(0);
  Acc m2 = Acc(0);
  GPUPRIMS_HD void add(Acc d) {
    count += Acc(1);
    const Acc delta = d - mean;
    mean += delta * reciprocal_of(count);
    m2 += delta * (d - mean);
  }
};

// Mean of a sum of n >= 0 terms (0 for n = 0), by a reciprocal (see reciprocal_of).
template <class Acc>
GPUPRIMS_HD Acc mean_of(Acc total, int64_t n) {
  return n > 0 ? total * reciprocal_of(Acc(n)) : Acc(0);
}

// The per-row values the output is made from.
//   softmax kind: a = row max, b = sum of exp(x - max)
//   norm kind:    a = mean (0 for rms_norm), b = 1 / sqrt(var + eps) with var = sum((x-mean)^2) / n
template <class Acc>
struct RowStats {
  Acc a;
  Acc b;
};

// One output element from its input value and the row statistics.
//   softmax: exp(x - max) / sum      log_softmax: (x - max) - log(sum)
//   norm:    (x - mean) * rstd * weight + bias
// Special values follow from IEEE arithmetic and match torch: an all -inf row has max -inf, so
// x - max is NaN everywhere; a +inf or NaN anywhere makes the sum NaN, so the whole row is NaN.
// Norm outputs are computed as ((x - shift) - mean_rel) * rstd * weight + bias (RowFrame).
template <class Acc>
GPUPRIMS_HD Acc softmax_out(Acc v, RowStats<Acc> s, Acc inv_sum_or_log_sum, bool log) {
  return log ? (v - s.a) - inv_sum_or_log_sum : exp_of(v - s.a) * inv_sum_or_log_sum;
}

// What softmax_out's third argument is, computed once per row.
template <class Acc>
GPUPRIMS_HD Acc softmax_scale(RowStats<Acc> s, bool log) {
  return log ? log_of(s.b) : reciprocal_of(s.b);
}

// ---------------------------------------------------------------------------------------------
// Backward element math, shared by the kernels and the CPU reference.
//   softmax:     dx = y * (dy - s),        s = sum(dy * y)
//   log_softmax: dx = dy - exp(y) * s,     s = sum(dy)
// (the derivative of y = softmax(x) is diag(y) - y y^T; of log_softmax, I - 1 softmax^T).
template <class Acc>
GPUPRIMS_HD Acc softmax_backward_term(Acc y, Acc dy, bool log) {
  return log ? dy : dy * y;
}

// part + softmax_backward_term(y, dy, log) with softmax's product fused into the add: the same bits
// whether or not the compiler unswitches the loop on `log` (which decides whether it can contract
// the product through the select), so the columns kernels' staged and register paths agree.
template <class Acc>
GPUPRIMS_HD Acc softmax_backward_add(Acc part, Acc y, Acc dy, bool log) {
  return log ? part + dy : fma(dy, y, part);
}

template <class Acc>
GPUPRIMS_HD Acc softmax_backward_out(Acc y, Acc dy, Acc s, bool log) {
  return log ? dy - exp_of(y) * s : y * (dy - s);
}

// layer_norm / rms_norm: with xhat = (x - mean) * rstd and g = dy * weight,
//   dx = rstd * ((g - mean(g)) - xhat * mean(g * xhat))
// (rms_norm: mean 0 and no mean(g) term, passed as mean_g = 0).
template <class Acc>
GPUPRIMS_HD Acc norm_backward_out(Acc g, Acc xhat, Acc rstd, Acc mean_g, Acc mean_gx) {
  return rstd * ((g - mean_g) - xhat * mean_gx);
}

}  // namespace norms
}  // namespace gpuprims
