#pragma once
// Weighted counts: sums of weights per bin.
//
// Weighted histograms accumulate in float64 with one global atomicAdd per sample, whatever the
// variant: float64 shared-memory atomics are compare-and-swap loops on current GPUs, so a privatized
// float64 histogram buys little, and weighted histograms are rare next to counts. The order of the
// additions varies from run to run, so weighted sums are not bitwise reproducible.
#include <cstdint>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/histogram/mappers.hpp"
#include "gpuprims/histogram/sample_layout.hpp"

namespace gpuprims {
namespace histogram_detail {

constexpr int kWeightedThreads = 256;

template <class Mapper>
__device__ __forceinline__ int32_t bin_without_table(const Mapper& m, typename Mapper::Sample v) {
  if constexpr (Mapper::kUsesTable) return m.window ? m.windowed(v) : m.exact_bin(v);
  else return m(v);
}

template <class Mapper>
struct WeightedArgs {
  const typename Mapper::Sample* x;
  const void* w;   // any dtype (read as float64), laid out by layout.w_strides (or contiguous)
  DType w_dtype;
  SampleLayout layout;
  Mapper map;
  double* out;     // float64 sums
  int64_t out_stride;
  unsigned long long* dropped;  // bincount: samples outside [0, bins) are counted here; may be null
};

template <class Mapper>
__global__ void __launch_bounds__(kWeightedThreads) weighted_kernel(const __grid_constant__ WeightedArgs<Mapper> a) {
  const int64_t n = a.layout.n, stride = int64_t(gridDim.x) * kWeightedThreads;
  unsigned long long dropped = 0;
  for (int64_t i = int64_t(blockIdx.x) * kWeightedThreads + threadIdx.x; i < n; i += stride) {
    int64_t xo = i, wo = i;
    if (!a.layout.contiguous) a.layout.offsets(i, &xo, &wo);
    const int32_t b = bin_without_table(a.map, a.x[xo]);
    if (b < 0) {
      ++dropped;
      continue;
    }
    atomicAdd(a.out + int64_t(b) * a.out_stride, load_as<double>(a.w, wo, a.w_dtype));
  }
  if (a.dropped != nullptr && dropped != 0) atomicAdd(a.dropped, dropped);
}

}  // namespace histogram_detail
}  // namespace gpuprims
