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
GPUPRIMS_HD double add64(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
GPUPRIMS_HD double sub64(double a, double b) { return add64(a, -b); }
GPUPRIMS_HD double mul64(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
GPUPRIMS_HD double div64(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

// float32 arithmetic, rounded to nearest, never fused.
GPUPRIMS_HD float add32(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
GPUPRIMS_HD float mul32(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
GPUPRIMS_HD float div32(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
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
  if constexpr (E == EdgeKind::kF64) return add64(a, b);
  else return narrow_result<E>(add32(static_cast<float>(a), static_cast<float>(b)));
}
template <EdgeKind E> GPUPRIMS_HD double e_sub(double a, double b) { return e_add<E>(a, -b); }
template <EdgeKind E> GPUPRIMS_HD double e_mul(double a, double b) {
  if constexpr (E == EdgeKind::kF64) return mul64(a, b);
  else return narrow_result<E>(mul32(static_cast<float>(a), static_cast<float>(b)));
}
template <EdgeKind E> GPUPRIMS_HD double e_div(double a, double b) {
  if constexpr (E == EdgeKind::kF64) return div64(a, b);
  else return narrow_result<E>(div32(static_cast<float>(a), static_cast<float>(b)));
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
  double bins_e;    // the bin count as the multiplier's dtype (float64, or E when narrow)
  // |f - floor(f)| bound beyond which numpy's edge correction provably changes nothing: samples
  // whose f lies further than this from an integer skip the two edge evaluations. 1 disables it.
  double margin;
};

// edges[k] of numpy's linspace(first, last, bins + 1, dtype=E).
template <EdgeKind E>
GPUPRIMS_HD double bin_edge(const BinParams& p, int32_t k) {
  if (k >= p.bins) return p.hi;  // linspace stores `stop` itself as the last edge
  if (p.narrow) return e_add<E>(e_mul<E>(round_to<E>(static_cast<double>(k)), p.step), p.start);
  return round_to<E>(add64(mul64(static_cast<double>(k), p.step), p.start));
}

// The bin of a sample already converted to E (held as float64), or -1 when numpy ignores it
// (outside [first, last], or NaN).
template <EdgeKind E>
GPUPRIMS_HD int32_t bin_of(const BinParams& p, double x) {
  if (!(x >= p.lo && x <= p.hi)) return -1;
  const double diff = e_sub<E>(x, p.lo);
  const double f = p.narrow ? e_mul<E>(e_div<E>(diff, p.denom), p.bins_e) : mul64(div64(diff, p.denom), p.bins_e);
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

// A sample of type T as its E value.
template <class T>
GPUPRIMS_HD double edge_value(T v) {
  if constexpr (is_half_like<T>::value) return static_cast<double>(to_float(v));
  else return static_cast<double>(v);  // integers round to nearest above 2^53 (int64 only)
}

}  // namespace histogram_detail
}  // namespace gpuprims
