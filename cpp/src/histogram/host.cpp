// The CPU reference of the histogram family: the same layout, mappers and bin arithmetic as the
// kernels (mappers.hpp, bin_math.hpp), one sample at a time. No speed promise.
#include <vector>

#include "launch.hpp"
#include "mapper_dispatch.hpp"

namespace gpuprims {
namespace histogram_detail {
namespace {

template <class Mapper>
int32_t host_bin(const Mapper& m, typename Mapper::Sample v) {
  if constexpr (Mapper::kUsesTable) return m.window ? m.windowed(v) : m.exact_bin(v);
  else return m(v);
}

template <class Mapper>
Status count_on_host(const HistogramLaunch& l, const Mapper& m) {
  using T = typename Mapper::Sample;
  const T* x = static_cast<const T*>(l.x);
  std::vector<int64_t> counts(l.weighted ? 0 : l.bins, 0);
  std::vector<double> sums(l.weighted ? l.bins : 0, 0.0);
  int64_t dropped = 0;
  for (int64_t i = 0; i < l.layout.n; ++i) {
    int64_t xo = i, wo = i;
    if (!l.layout.contiguous) l.layout.offsets(i, &xo, &wo);
    const int32_t b = host_bin(m, x[xo]);
    if (b < 0) {
      ++dropped;
      continue;
    }
    if (!l.weighted) {
      ++counts[b];
    } else {
      sums[b] += load_as<double>(l.w, wo, l.w_dtype);
    }
  }
  if (l.dropped != nullptr) *l.dropped = static_cast<unsigned long long>(dropped);
  for (int32_t b = 0; b < l.bins; ++b) {
    const int64_t at = int64_t(b) * l.out_stride;
    if (!l.weighted) static_cast<int64_t*>(l.out)[at] = counts[b];
    else store_as(l.out, at, l.is_bincount ? DType::kFloat64 : l.w_dtype, sums[b]);
  }
  return Status::ok();
}

}  // namespace

Status count_host(const HistogramLaunch& launch) {
  return visit_mapper(launch, [&](const auto& mapper) { return count_on_host(launch, mapper); });
}

}  // namespace histogram_detail
}  // namespace gpuprims
