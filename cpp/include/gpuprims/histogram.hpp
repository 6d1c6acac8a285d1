#pragma once
// Public C++ entry points of the histogram family: numpy.histogram with equal-width bins and
// numpy.bincount, on CPU views (the reference) and CUDA views.
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"

namespace gpuprims {

// The optimization ladder; every variant computes the same counts for every input.
enum class HistogramAlgorithm {
  kAuto,
  kGlobalAtomics,     // one global 64-bit atomic per sample
  kSharedPrivatized,  // per-block shared-memory histogram, replicated per lane in private banks
  kWarpAggregated,    // __match_any_sync leader election, one atomic per distinct bin per warp
};

struct HistogramVariantInfo {
  HistogramAlgorithm algorithm;
  const char* name;
  const char* description;
  bool deterministic;  // run-to-run bitwise identical (counts always are; weighted sums are not)
};

const std::vector<HistogramVariantInfo>& histogram_variants();
Status parse_histogram_algorithm(const std::string& name, HistogramAlgorithm* out);

// The equal-width bins of numpy.histogram(x, bins, range), as numpy derives them.
//   wide (range given, or integer input): first/last are numpy's outer edges as float64 (after
//     numpy's +-0.5 widening of an empty range), denom is numpy's norm_denom as float64 (the exact
//     integer difference rounded once when both edges are integers).
//   narrow (float input with range=None): first/last are the data's min and max, numpy then does
//     all bin arithmetic in the input dtype; denom is ignored (recomputed in that dtype).
struct HistogramBinSpec {
  int64_t bins = 10;
  double first = 0.0, last = 1.0, denom = 1.0;
  bool narrow = false;
};

// What bincount does with a value outside [0, len(out)).
enum class OutOfRange {
  kRaise,   // count them on the device, read the count back (synchronizes), ValueError if any
  kIgnore,  // drop them; never synchronizes
};

// out[b] = number of samples of x (any shape and strides, flattened) in bin b, or the sum of their
// weights when `weights` is not null (same shape as x, any dtype; out of the weights' dtype, the
// sums accumulated in float64 and converted once, as numpy's). out: 1-D of `spec.bins` elements,
// int64 without weights. Never synchronizes.
Status histogram(const TensorView& x, const TensorView* weights, const TensorView& out, const HistogramBinSpec& spec,
                 HistogramAlgorithm algorithm, cudaStream_t stream);

// numpy.bincount into `out` (1-D int64, or float64 with weights of any dtype): out[v] counts the
// samples equal to v for v < len(out). Synchronizes only with OutOfRange::kRaise.
Status bincount(const TensorView& x, const TensorView* weights, const TensorView& out, OutOfRange out_of_range,
                HistogramAlgorithm algorithm, cudaStream_t stream);

// bincount without out= for a uint8 or bool x on a GPU, in one pass over x: counts every value into
// `out` (1-D int64 of at least 256 elements, x's device) and reads back the largest value present
// (*largest, -1 for an empty x), so that the caller can keep the first max(minlength, *largest + 1)
// counts. Synchronizes `stream` once (as data_range would, without its two passes over x).
Status bincount_byte_values(const TensorView& x, const TensorView& out, HistogramAlgorithm algorithm,
                            cudaStream_t stream, int64_t* largest);

// dst[i] = src[i] for i < len(dst): 1-D int64 arrays on one GPU, len(dst) <= len(src), any strides,
// ordered on `stream` (trims bincount_byte_values' counts to the output length).
Status copy_counts(const TensorView& src, const TensorView& dst, cudaStream_t stream);

// The smallest and largest value of x (numpy's min/max: NaN propagates), read back to the host.
// Integer inputs fill lo_int/hi_int (uint64 ones lo_uint64/hi_uint64), float inputs lo/hi.
// Synchronizes `stream` (the data-dependent range of histogram(range=None) and of bincount without
// out=).
struct DataRange {
  bool is_integer = false, is_uint64 = false;
  int64_t lo_int = 0, hi_int = 0;
  uint64_t lo_uint64 = 0, hi_uint64 = 0;
  double lo = 0.0, hi = 0.0;
};
Status data_range(const TensorView& x, const char* op, cudaStream_t stream, DataRange* range);

}  // namespace gpuprims
