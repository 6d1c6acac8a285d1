#pragma once
// Public C++ entry point of the top-k family: torch.topk(x, k, dim=axis, largest, sorted) into
// `values` and `indices`, on CPU views (the reference) and CUDA views.
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"

namespace gpuprims {

// The ladder (docs/topk.md). Both variants compute the same function by radix selection.
enum class TopkAlgorithm {
  kAuto,
  kSort,         // the whole row through a bitonic network, the first k kept: the baseline
  kBlockPerRow,  // one block per row, every sweep in one launch, histogram and candidates on chip
  kSplitRow,     // several blocks per row, one launch per sweep, histograms and candidates in global memory
};

struct TopkVariantInfo {
  TopkAlgorithm algorithm;
  const char* name;
  const char* description;
  bool deterministic;  // the selected set and (sorted) order are the same on every run
};

const std::vector<TopkVariantInfo>& topk_variants();
Status parse_topk_algorithm(const std::string& name, TopkAlgorithm* out);

// The k elements of each row along `axis` (negative counts from the end) that rank highest
// (largest=true) or lowest, into `values` (x's dtype) and `indices` (int64, positions along the
// axis): both of x's shape with that axis k long, writable, distinct elements, any strides,
// sharing no memory with x or with each other. Floats rank by value with NaN above +inf (torch's
// order) and -0.0 just below +0.0. sorted: each row's results in rank order, ties by increasing
// index; otherwise in an unspecified order. Which of several elements equal to the k-th is taken
// is unspecified. 0 <= k <= the axis length. Never synchronizes the host; rows longer than one
// block's share take stream-ordered scratch memory (split_row, and sorts of k > 2048).
Status topk(const TensorView& x, int64_t k, int axis, bool largest, bool sorted, const TensorView& values,
            const TensorView& indices, TopkAlgorithm algorithm, cudaStream_t stream);

}  // namespace gpuprims
