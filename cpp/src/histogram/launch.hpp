#pragma once
// What dispatch hands a variant: one validated histogram or bincount, samples laid out, output
// zeroed (GPU) and, for weights, a float64 accumulator.
#include <cstdint>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/histogram.hpp"
#include "gpuprims/histogram/bin_math.hpp"
#include "gpuprims/histogram/sample_layout.hpp"

namespace gpuprims {
namespace histogram_detail {

// Shared memory a counting block may take for its histograms: the default 48 KiB a block gets
// without opting in, less the 1 KiB table of the 8-bit kernels (count_runner.cuh). Beyond
// kSharedHistogramBytes / 4 = 12032 bins, counts go to global memory.
constexpr int64_t kSharedHistogramBytes = 47 * 1024;

struct HistogramLaunch {
  const char* op;         // "histogram" or "bincount", for messages
  bool is_bincount;
  const void* x;          // sample 0 after flipping negative strides
  DType x_dtype;
  const void* w;          // weights (null when absent, and may be null for an empty array)
  bool weighted;          // weights given: float sums, not int64 counts (never inferred from w)
  DType w_dtype;
  SampleLayout layout;
  BinParams params;       // histogram
  int32_t bins;           // output length
  void* out;              // int64 counts, or float64 sums when weighted
  int64_t out_stride;
  unsigned long long* dropped;  // bincount's out-of-range counter on the device, or null
  int device;             // -1: CPU reference
  int sm_count;
  cudaStream_t stream;
};

// Host-side construction (bin_params.cpp): numpy's derived bin quantities, and its "too many bins"
// check (edges must increase strictly).
Status make_bin_params(DType x_dtype, const HistogramBinSpec& spec, BinParams* params);
// Flattening and reordering of x (and weights) into a SampleLayout (layout.cpp).
Status make_sample_layout(const TensorView& x, const TensorView* w, const char* op, SampleLayout* layout,
                          const void** x_base, const void** w_base);

// One entry per variant, each in its own translation unit.
Status count_global_atomics(const HistogramLaunch& launch);
Status count_shared_privatized(const HistogramLaunch& launch);
Status count_warp_aggregated(const HistogramLaunch& launch);
Status count_weighted(const HistogramLaunch& launch);  // float64 sums into launch.out
Status count_host(const HistogramLaunch& launch);      // host.cpp: the CPU reference

// output.cu: zero a strided 8-byte output; write float64 sums as `dtype` (the weights').
Status zero_output(void* out, int64_t n, int64_t stride, cudaStream_t stream, const char* op);
Status convert_sums(const double* sums, void* out, DType dtype, int64_t n, int64_t stride, cudaStream_t stream,
                    const char* op);

}  // namespace histogram_detail
}  // namespace gpuprims
