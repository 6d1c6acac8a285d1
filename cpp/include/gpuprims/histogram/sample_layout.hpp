#pragma once
// Where the samples of a flattened array (and of its weights) live. A histogram does not depend on
// the order of its samples, so the host reorders the dimensions freely (flipping negative strides,
// sorting by stride, merging dense neighbours); most views collapse to one contiguous run.
// Weights travel with their samples: both views are reordered by the same permutation.
#include <cstdint>

#include "gpuprims/core/config.hpp"

namespace gpuprims {
namespace histogram_detail {

struct SampleLayout {
  int64_t n = 0;           // number of samples
  bool contiguous = true;  // samples (and weights) are x[0 .. n), w[0 .. n)
  int ndim = 0;            // merged dimensions, outermost first (used when !contiguous)
  int64_t shape[kMaxDims];
  int64_t x_strides[kMaxDims];  // in elements, >= 0 after flipping
  int64_t w_strides[kMaxDims];

  // Element offsets of sample i (row-major over the merged dimensions).
  GPUPRIMS_HD void offsets(int64_t i, int64_t* x_offset, int64_t* w_offset) const {
    int64_t xo = 0, wo = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t q = i / shape[d], r = i - q * shape[d];
      xo += r * x_strides[d];
      wo += r * w_strides[d];
      i = q;
    }
    *x_offset = xo;
    *w_offset = wo;
  }
};

}  // namespace histogram_detail
}  // namespace gpuprims
