#pragma once
// numpy.histogram's bin arithmetic, bit for bit, shared by the kernels and the CPU reference.
//
// numpy (lib/_histograms_impl.py, uniform bins) keeps a sample a when first <= a <= last, computes
//   f = ((a - first) / norm_denom) * bins,   i = int(f),   i == bins -> bins - 1
// and then corrects i once against the exact edges (edges = linspace(first, last, bins + 1)):
//   i -= a < edges[i];   i += a >= edges[i + 1] and i != bins - 1.
// The dtypes of those steps follow numpy's promotion rules ("E" below is the edge dtype):
//   * integer input: E = float64; everything in float64.
//   * float input, range given ("wide"): E = the input dtype; first/last are rounded to E for the
//     comparisons and the subtraction (a - first is an E subtraction); the division by norm_denom
//     (a float64 or uint64 scalar) and the product are float64; the edges are float64 linspace
//     values rounded to E.
//   * float input, range=None ("narrow"): first/last are the data's min/max, E scalars, so every
//     step (the linspace too) is E arithmetic.
// float16/bfloat16 operations are done in float32 and rounded once to E: float32 holds more than
// 2p + 2 bits for both, so this equals a correctly rounded E operation (what numpy's npy_half does).
// On the device every operation uses an explicit _rn intrinsic: nvcc would otherwise contract
// a * b + c into an FMA and round differently from numpy.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "gpuprims/core/config.hpp"
#include "gpuprims/core/numeric.hpp"

namespace gpuprims {
namespace histogram_detail {

enum class EdgeKind : uint8_t { kF16, kBF16, kF32, kF64 };

// The edge dtype of an input type: the type itself for floats, float64 for integers.
template <class T> struct edge_kind_of { static constexpr EdgeKind value = EdgeKind::kF64; };
template <> struct edge_kind_of<half_t> { static constexpr EdgeKind value = EdgeKind::kF16; };
template <> struct edge_kind_of<bfloat16_t> { static constexpr EdgeKind value = EdgeKind::kBF16; };
template <> struct edge_kind_of<float> { static constexpr EdgeKind value = EdgeKind::kF32; };

// Significand bits of each edge dtype.
GPUPRIMS_HD int edge_precision(EdgeKind e) {
  return e == EdgeKind::kF16 ? 11 : e == EdgeKind::kBF16 ? 8 : e == EdgeKind::kF32 ? 24 : 53;
}

// float64 arithmetic, rounded to nearest, never fused.
GPUPRIMS_HD double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
GPUPRIMS_HD double sub_rn(double a, double b) { return add_rn(a, -b); }
GPUPRIMS_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
GPUPRIMS_HD double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// float32 arithmetic, rounded to nearest, never fused.
GPUPRIMS_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
GPUPRIMS_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
GPUPRIMS_HD float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// a / b correctly rounded (float or double), given inv_b = RN(1 / b) (computed once on the host).
// q = a * inv_b is within 1.5 ulps of a / b; each step q += (a - b q) * inv_b (the remainder exact
// through the FMA) brings it within 1 ulp and then, by Markstein's theorem, to RN(a / b) (a
// quotient of two floats is never a tie). Equal to IEEE division for the normal-range operands it
// sees here, and inline: CUDA's own division calls an out-of-line slow path that spills.
template <class T>
GPUPRIMS_HD T div_rn(T a, T b, T inv_b) {
  T q = mul_rn(a, inv_b);
  q = fma_rn(fma_rn(-q, b, a), inv_b, q);
  return fma_rn(fma_rn(-q, b, a), inv_b, q);
}

// float64 -> float32 rounded to odd (truncate, then set the last bit if anything was dropped).
// Rounding that to a narrower type (half, bfloat16) to nearest equals rounding the float64 to
// nearest directly, which a plain double -> float -> half chain would not (double rounding).
GPUPRIMS_HD float to_float_round_odd(double d) {
  const float f = static_cast<float>(d);
  if (static_cast<double>(f) == d || d != d) return f;
  uint32_t u = float_to_bits(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) u -= 1;  // one step towards zero: truncation
  return bits_to_float(u | 1u);
}

// Rounds a float64 value to the edge dtype (to nearest even) and returns it as float64 (exactly).
template <EdgeKind E>
GPUPRIMS_HD double round_to(double d) {
  if constexpr (E == EdgeKind::kF64) {
    return d;
  } else if constexpr (E == EdgeKind::kF32) {
    return static_cast<double>(static_cast<float>(d));
  } else if constexpr (E == EdgeKind::kF16) {
    return static_cast<double>(to_float(to_half(to_float_round_odd(d))));
  } else {
    return static_cast<double>(to_float(to_bfloat16(to_float_round_odd(d))));
  }
}

// Rounds a float32 result of an operation on E values to E (a no-op for float32).
template <EdgeKind E>
GPUPRIMS_HD double narrow_result(float f) {
  if constexpr (E == EdgeKind::kF16) return static_cast<double>(to_float(to_half(f)));
  else if constexpr (E == EdgeKind::kBF16) return static_cast<double>(to_float(to_bfloat16(f)));
  else return static_cast<double>(f);
}

// One arithmetic operation on two E values (held as float64), correctly rounded to E.
template <EdgeKind E> GPUPRIMS_HD double e_add(double a, double b) {
  if constexpr (E == EdgeKind::kF64) return add_rn(a, b);
  else return narrow_result<E>(add_rn(static_cast<float>(a), static_cast<float>(b)));
}
template <EdgeKind E> GPUPRIMS_HD double e_sub(double a, double b) { return e_add<E>(a, -b); }
template <EdgeKind E> GPUPRIMS_HD double e_mul(double a, double b) {
  if constexpr (E == EdgeKind::kF64) return mul_rn(a, b);
  else return narrow_result<E>(mul_rn(static_cast<float>(a), static_cast<float>(b)));
}
// Host only (bin_params.cpp): IEEE division. The kernels divide through div_rn instead.
template <EdgeKind E> double e_div(double a, double b) {
  if constexpr (E == EdgeKind::kF64) return a / b;
  else return narrow_result<E>(static_cast<float>(a) / static_cast<float>(b));
}

// Everything a kernel needs to bin a sample the way numpy does (built on the host by
// make_bin_params, histogram/bin_params.cpp).
struct BinParams {
  int32_t bins;
  bool narrow;
  double lo, hi;    // numpy's first/last edges as E values: the keep test and the subtraction
  double start;     // linspace's start: float64 first (wide) or lo (narrow)
  double step;      // linspace's step: float64 (wide) or an E value (narrow)
  double denom;     // norm_denom: float64 (wide) or an E value (narrow)
  double inv_denom; // RN(1 / denom), for div_rn
  float inv_denom_f;  // RN(1 / denom) in float32, for div_rn (narrow float16/bfloat16/float32)
  double bins_e;    // the bin count as the multiplier's dtype (float64, or E when narrow)
  // |f - floor(f)| bound beyond which numpy's edge correction provably changes nothing: samples
  // whose f lies further than this from an integer skip the two edge evaluations. 1 disables it.
  double margin;
  // The float32 shortcut: fa = float(diff) * scale_f approximates f to within a known error, so a
  // sample whose fa lies further than fast_margin_f from an integer has bin floor(fa) with no float64
  // division and no edge at all (the exact path runs for the rest, about 2 * fast_margin_f of them).
  bool fast;
  float lo_f, hi_f;       // lo and hi as floats (exact when E is not float64)
  float scale_f;          // bins / denom
  float bins_f;
  float fast_margin_f;
};

// edges[k] of numpy's linspace(first, last, bins + 1, dtype=E).
template <EdgeKind E>
GPUPRIMS_HD double bin_edge(const BinParams& p, int32_t k) {
  if (k >= p.bins) return p.hi;  // linspace stores `stop` itself as the last edge
  if (p.narrow) return e_add<E>(e_mul<E>(round_to<E>(static_cast<double>(k)), p.step), p.start);
  return round_to<E>(add_rn(mul_rn(static_cast<double>(k), p.step), p.start));
}

// Device code keeps the exact path out of line: it runs for few samples, and inlined into the
// kernels' unrolled sample loops (8 or 16 copies) it would bloat them into register spills.
#if defined(__CUDACC__)
#define GPUPRIMS_HISTOGRAM_SLOW_PATH __host__ __device__ __noinline__
#else
#define GPUPRIMS_HISTOGRAM_SLOW_PATH inline
#endif

// The bin of a sample already converted to E (held as float64), or -1 when numpy ignores it
// (outside [first, last], or NaN).
template <EdgeKind E>
GPUPRIMS_HISTOGRAM_SLOW_PATH int32_t bin_of(const BinParams& p, double x) {
  if (!(x >= p.lo && x <= p.hi)) return -1;
  const double diff = e_sub<E>(x, p.lo);
  double f;
  if constexpr (E == EdgeKind::kF64) {
    f = mul_rn(div_rn(diff, p.denom, p.inv_denom), p.bins_e);  // narrow float64 is the same arithmetic
  } else {
    f = p.narrow ? e_mul<E>(narrow_result<E>(div_rn(static_cast<float>(diff), static_cast<float>(p.denom), p.inv_denom_f)),
                           p.bins_e)
                 : mul_rn(div_rn(diff, p.denom, p.inv_denom), p.bins_e);
  }
  // f >= 0 here; anything from bins up (inf included, a narrow float16 product can overflow)
  // is numpy's "indices == bins" case.
  int32_t i = f < static_cast<double>(p.bins) ? static_cast<int32_t>(f) : p.bins;
  const double frac = f - static_cast<double>(i);
  if (i < p.bins && frac > p.margin && frac < 1.0 - p.margin) return i;
  if (i >= p.bins) i = p.bins - 1;
  if (i > 0 && x < bin_edge<E>(p, i)) --i;
  if (i != p.bins - 1 && x >= bin_edge<E>(p, i + 1)) ++i;
  return i;
}

// floor(fa) for 0 <= fa < 2^22 (the float32 shortcut: fa >= 0, and it is off beyond 2^22 bins),
// as an integer and as a float. On the device without conversions (F2I and I2F issue at 16 per
// clock per SM on sm_80/sm_90, an eighth of the FP32 rate, and the shortcut needed both per
// sample): fa + 2^23 rounded down is 2^23 + floor(fa) exactly (the ulp there is 1), so floor(fa)
// is its low mantissa bits and the float floor is one exact subtraction.
GPUPRIMS_HD int32_t floor_nonnegative(float fa, float* floor_fa) {
#if defined(__CUDA_ARCH__)
  const float r = __fadd_rd(fa, 8388608.0f);
  *floor_fa = __fadd_rn(r, -8388608.0f);
  return __float_as_int(r) - 0x4B000000;  // the bits of 2^23
#else
  const int32_t i = static_cast<int32_t>(fa);
  *floor_fa = static_cast<float>(i);
  return i;
#endif
}

// The bin of a sample of type T: the float32 shortcut when it is decisive, else bin_of.
template <EdgeKind E, class T>
GPUPRIMS_HD int32_t bin_of_sample(const BinParams& p, T v) {
  float diff;
  if constexpr (E != EdgeKind::kF64) {
    // E values are floats: keep test and subtraction in float32, rounded to E as numpy does.
    float x;
    if constexpr (is_half_like<T>::value) x = to_float(v);
    else x = static_cast<float>(v);
    if (!(x >= p.lo_f && x <= p.hi_f)) return -1;
    if (!p.fast) return bin_of<E>(p, static_cast<double>(x));
    diff = static_cast<float>(narrow_result<E>(add_rn(x, -p.lo_f)));
    const float fa = mul_rn(diff, p.scale_f);
    if (fa < p.bins_f) {
      float floor_fa;
      const int32_t i = floor_nonnegative(fa, &floor_fa);
      const float frac = fa - floor_fa;
      if (frac > p.fast_margin_f && frac < 1.0f - p.fast_margin_f) return i;
    }
    return bin_of<E>(p, static_cast<double>(x));
  } else {
    const double x = static_cast<double>(v);  // integers round to nearest above 2^53 (int64 only)
    if (!(x >= p.lo && x <= p.hi)) return -1;
    if (!p.fast) return bin_of<E>(p, x);
    diff = static_cast<float>(sub_rn(x, p.lo));
    const float fa = mul_rn(diff, p.scale_f);
    if (fa < p.bins_f) {
      float floor_fa;
      const int32_t i = floor_nonnegative(fa, &floor_fa);
      const float frac = fa - floor_fa;
      if (frac > p.fast_margin_f && frac < 1.0f - p.fast_margin_f) return i;
    }
    return bin_of<E>(p, x);
  }
}

}  // namespace histogram_detail
}  // namespace gpuprims
