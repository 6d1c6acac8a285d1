#pragma once
// Public C++ entry points of the reduce family.
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"

namespace gpuprims {

enum class ReduceOp { kSum, kProd, kMin, kMax };

// The optimization ladder; every variant computes the same function for every input.
enum class ReduceAlgorithm {
  kAuto,
  kAtomicNaive,       // one global atomic per element
  kSmemInterleaved,   // shared-memory tree, interleaved addressing (divergent), multi-pass
  kSmemSequential,    // shared-memory tree, sequential addressing, first add during load, multi-pass
  kWarpShuffle,       // warp-shuffle block reduce, several items per thread, multi-pass
  kAtomicPerBlock,    // grid-stride + warp shuffles, one atomic per block
  kVectorized,        // 16-byte loads, unrolled grid-stride, single pass with last-block combine
  kThreadPerOutput,   // one thread per output element, looping over its row
  kWarpPerRow,        // a warp per row: many contiguous rows of a few KiB
  kColumnTiles,       // tiles of adjacent outputs: coalesced reductions along an outer axis
  kBulkCopy,          // vectorized's partition fed by sm_90 bulk copies into shared-memory stages
  kWindow,            // small blocks in index order, partials combined by a second launch
};

struct ReduceVariantInfo {
  ReduceAlgorithm algorithm;
  const char* name;
  const char* description;
  bool deterministic;  // run-to-run bitwise identical for floats
};

const std::vector<ReduceVariantInfo>& reduce_variants();
Status parse_reduce_algorithm(const std::string& name, ReduceAlgorithm* out);
Status parse_reduce_op(const std::string& name, ReduceOp* out);
const char* reduce_op_name(ReduceOp op);
// numpy's result dtype when the caller names none: sums and products of bool and signed integers
// are int64, of unsigned integers uint64; floats, and min/max of anything, keep the input's dtype.
DType reduce_default_result_dtype(ReduceOp op, DType in);

struct ReduceOptions {
  ReduceOp op = ReduceOp::kSum;
  // The reduced axes when !all_axes, numpy's `axis` (one int or a tuple): axes[0, num_axes) in any
  // order, negative ones counted from the end, each at most once. No axes reduces nothing: each
  // output is its one input element in the result dtype, as numpy's `axis=()`.
  int axes[kMaxArrayDims] = {};
  int num_axes = 0;
  bool all_axes = true;  // axis=None: reduce every element to one value
  ReduceAlgorithm algorithm = ReduceAlgorithm::kAuto;
};

// out = reduce(in) along options.axes (or over everything). `out` has the input's shape without the
// reduced axes (or with them kept as size 1), or one element when all_axes. out.dtype is the result dtype and
// decides the accumulator: integers accumulate exactly in 64 bits (wrapping), float16/bfloat16/
// float32 in float32 (float64 when out is float64), float64 in float64. Any out.dtype: the result is
// the reduction converted once. numpy instead reduces x converted to dtype, which differs for an
// integer sum or product of floats and for a bool result of non-bool elements; gpuprims.reduce
// refuses those two (reduce.py), while scan's conversion uses them here on one-element rows, where
// the two agree. CPU views run the CPU reference; CUDA views run on their own device, ordered on
// `stream`. Never synchronizes.
Status reduce(const TensorView& in, const TensorView& out, const ReduceOptions& options,
              cudaStream_t stream);

}  // namespace gpuprims
