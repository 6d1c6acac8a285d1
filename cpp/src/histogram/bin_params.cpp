// numpy's derived bin quantities (bin_math.hpp says which dtype each step uses) and its
// "too many bins" check, computed once per call on the host.
#include <cmath>
#include <limits>
#include <string>

#include "launch.hpp"

namespace gpuprims {
namespace histogram_detail {
namespace {

// Spacing of E values near |m| (its smallest value, the subnormal spacing, at zero).
double ulp_of(EdgeKind e, double m) {
  const int p = edge_precision(e);
  const int min_exp = e == EdgeKind::kF16 ? -14 : e == EdgeKind::kF64 ? -1022 : -126;
  int exp = 0;
  std::frexp(std::fabs(m), &exp);  // |m| in [2^(exp-1), 2^exp)
  return std::ldexp(1.0, std::max(exp - 1, min_exp) - (p - 1));
}

template <EdgeKind E>
Status build(const HistogramBinSpec& spec, BinParams* out) {
  BinParams p{};
  p.bins = static_cast<int32_t>(spec.bins);
  p.narrow = spec.narrow;
  if (spec.narrow) {
    // first/last are the data's min and max (E values); numpy widens an empty range by 0.5 in E.
    p.lo = spec.first;
    p.hi = spec.last;
    if (p.lo == p.hi) {
      p.lo = e_sub<E>(p.lo, 0.5);
      p.hi = e_add<E>(p.hi, 0.5);
    }
    p.denom = e_sub<E>(p.hi, p.lo);  // norm_denom, and linspace's delta
    p.bins_e = round_to<E>(static_cast<double>(spec.bins));
    p.step = e_div<E>(p.denom, p.bins_e);
    p.start = p.lo;
  } else {
    p.lo = round_to<E>(spec.first);
    p.hi = round_to<E>(spec.last);
    p.denom = spec.denom;
    p.bins_e = static_cast<double>(spec.bins);
    p.step = (spec.last - spec.first) / static_cast<double>(spec.bins);  // linspace: float64 delta / bins
    p.start = spec.first;
  }

  p.inv_denom = 1.0 / p.denom;
  p.inv_denom_f = 1.0f / static_cast<float>(p.denom);

  // Error budget of f (in bins) against the exact positions of the sample and of the edges:
  // roundings of the E subtraction and of the E edges (a few E ulps of the largest edge over the
  // bin width) plus the relative error of the division and product chain (a few units in f's last
  // place, times the bin count). Outside that distance from an integer, numpy's correction is a
  // no-op and the kernels may skip it. The constants are twice to four times the derived bounds.
  const double width = (p.hi - p.lo) / static_cast<double>(spec.bins);
  const double m = std::max(std::fabs(p.lo), std::fabs(p.hi));
  const double prec = std::ldexp(1.0, -edge_precision(p.narrow ? E : EdgeKind::kF64));
  double margin = (4.0 * ulp_of(E, m) + 4.0 * ulp_of(EdgeKind::kF64, m)) / width + 64.0 * spec.bins * prec;
  if (p.narrow) margin += 4.0 * ulp_of(E, m) / width;
  p.margin = (std::isfinite(margin) && margin < 0.25) ? margin : 1.0;

  // The float32 shortcut's extra error, in bins: float(diff) and scale_f (2^-24 relative each) and
  // the product, against f itself (whose own rounding is 2^-52 relative when wide, four E roundings
  // when narrow); float32 must also hold the range without overflow or subnormal bin widths.
  const double range_width = p.hi - p.lo;
  const double fast_margin = p.margin + 16.0 * spec.bins * std::ldexp(1.0, -24) +
                             (p.narrow ? 8.0 * spec.bins * prec : 0.0);
  p.fast = p.margin < 1.0 && fast_margin < 0.25 && spec.bins <= (1 << 22) && width >= 1e-30 && range_width <= 1e30;
  p.lo_f = static_cast<float>(p.lo);
  p.hi_f = static_cast<float>(p.hi);
  p.scale_f = static_cast<float>(static_cast<double>(spec.bins) / p.denom);
  p.bins_f = static_cast<float>(spec.bins);
  p.fast_margin_f = static_cast<float>(fast_margin * 1.001);  // never rounded below the bound

  // numpy raises when two edges coincide (or a narrow step underflows to zero). With a margin
  // below 1/4 the edges are more than ten E ulps apart, so only the other case needs the loop.
  const bool collapsed = p.narrow && p.step == 0.0;
  if (collapsed || p.margin >= 1.0) {
    bool increasing = !collapsed && p.hi > p.lo;
    for (int32_t k = 0; increasing && k < p.bins; ++k) {
      increasing = bin_edge<E>(p, k) < bin_edge<E>(p, k + 1);
    }
    if (!increasing) {
      return value_error("histogram: argument 'bins': too many bins for the data range: cannot create " +
                         std::to_string(spec.bins) + " finite-sized bins (numpy raises the same)");
    }
  }
  *out = p;
  return Status::ok();
}

}  // namespace

Status make_bin_params(DType x_dtype, const HistogramBinSpec& spec, BinParams* params) {
  if (spec.bins < 1 || spec.bins > std::numeric_limits<int32_t>::max()) {
    return value_error("histogram: argument 'bins': expected an int in [1, 2147483647], got " + std::to_string(spec.bins));
  }
  if (!std::isfinite(spec.first) || !std::isfinite(spec.last) || spec.first > spec.last) {
    return value_error("histogram: argument 'range': expected finite (min, max) with min <= max");
  }
  if (!spec.narrow && !(spec.denom > 0.0 && std::isfinite(spec.denom))) {
    return value_error("histogram: internal bin spec: expected a positive, finite denominator");
  }
  switch (x_dtype) {
    case DType::kFloat16: return build<EdgeKind::kF16>(spec, params);
    case DType::kBFloat16: return build<EdgeKind::kBF16>(spec, params);
    case DType::kFloat32: return build<EdgeKind::kF32>(spec, params);
    default: break;
  }
  if (spec.narrow && x_dtype != DType::kFloat64) {
    return value_error("histogram: internal bin spec: data-derived (narrow) bins are for float inputs only");
  }
  return build<EdgeKind::kF64>(spec, params);
}

}  // namespace histogram_detail
}  // namespace gpuprims
