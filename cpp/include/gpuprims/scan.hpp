#pragma once
// Public C++ entry points of the scan family: prefix scans along one axis, stream compaction and
// segmented reductions.
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"
#include "gpuprims/reduce.hpp"  // ReduceOp: scans use the same four operators

namespace gpuprims {

// The optimization ladder; every variant computes the same function for every input.
enum class ScanAlgorithm {
  kAuto,
  kHillisSteele,       // block-level Hillis-Steele (one item per thread), scan-then-propagate
  kBlelloch,           // work-efficient up-/down-sweep, padded shared memory, scan-then-propagate
  kWarpShuffle,        // warp-shuffle block scan, 16 items per thread, scan-then-propagate
  kReduceThenScan,     // three passes: tile reduce, scan of tile sums, rescan (bitwise deterministic)
  kDecoupledLookback,  // single pass, tile prefixes by decoupled look-back (Merrill & Garland)
  kLaggedLookback,     // single pass, each tile read twice (DRAM for its aggregate, L2 for its scan)
  kHeldLookback,       // single pass, each tile read once and held in shared memory until its prefix is near
  kBlockPerRow,        // one block per row, the row an on-chip tile: many rows of moderate length
  kWarpPerRow,         // one warp per row: many short rows
  kColumns,            // tiles of adjacent columns along a strided axis, a decoupled look-back per column
};

struct ScanVariantInfo {
  ScanAlgorithm algorithm;
  const char* name;
  const char* description;
  bool deterministic;  // run-to-run bitwise identical for float sums and products
};

const std::vector<ScanVariantInfo>& scan_variants();
Status parse_scan_algorithm(const std::string& name, ScanAlgorithm* out);

struct ScanOptions {
  ReduceOp op = ReduceOp::kSum;
  int axis = 0;             // the scanned axis of `in` (a 1-D view for the flattened scan)
  bool exclusive = false;   // out[i] combines in[0..i) (identity first) instead of in[0..i]
  bool deterministic = false;  // float sums/products bitwise reproducible (never the look-back)
  ScanAlgorithm algorithm = ScanAlgorithm::kAuto;
};

// out = scan(in) along options.axis; out has in's shape, out.dtype is the result dtype and decides
// the accumulator (integers in the result type, wrapping like numpy; float16/bfloat16 in float32;
// float32 and float64 in themselves). Any dtype pair: in is converted to out's dtype first (numpy's
// cumsum(x, dtype=)); pairs without kernels of their own convert into out, then scan it in place,
// so out may not share memory with in there. CPU views run the CPU reference; CUDA views run on their own
// device, ordered on `stream`. Never synchronizes.
Status scan(const TensorView& in, const TensorView& out, const ScanOptions& options, cudaStream_t stream);

// Stream compaction. out[0 .. count) = in[i] (values) or i (indices, when `out` is int64 and
// `write_indices`) for every i where mask[i] is nonzero, in order; *count_out (a device int64 for
// CUDA, host memory for the CPU reference) receives the count. in and mask are 1-D of equal length
// (in may be null for nonzero()); the mask is bool, or any dtype for nonzero() (-0.0 is zero, NaN
// nonzero); out must hold at least the count (its length is checked on the device path only as an
// upper bound: callers size it by a prior count or by n).
struct CompactArgs {
  const TensorView* values;  // nullptr: write indices (nonzero)
  const TensorView* mask;
  const TensorView* out;
  const TensorView* count;   // one int64 element
};
Status compact(const CompactArgs& args, cudaStream_t stream);

// The number of nonzero elements of a mask (bool, or any dtype as nonzero() takes), read back to the
// host: synchronizes `stream` (the exact-size compact() / nonzero() calls this first to size their
// result).
Status count_true(const TensorView& mask, int64_t* count, cudaStream_t stream);

// Segmented reduction's two GPU paths (every one computes the same function, bitwise reproducibly).
enum class SegmentedReduceAlgorithm {
  kAuto,    // blocks for unit-stride inputs whose segments average 12 KiB or more, else ranges
  kRanges,  // merge-path warp tiles of items + segment ends: balanced on any lengths
  kBlocks,  // a block per segment, long segments split over the GPU by a second kernel
};

struct SegmentedReduceVariantInfo {
  SegmentedReduceAlgorithm algorithm;
  const char* name;
  const char* description;
  bool deterministic;
};

const std::vector<SegmentedReduceVariantInfo>& segmented_reduce_variants();
Status parse_segmented_reduce_algorithm(const std::string& name, SegmentedReduceAlgorithm* out);

// Segmented reduction over CSR offsets: out[s] = op over in[offsets[s] .. offsets[s+1]), the
// identity for an empty segment. offsets are int32 or int64, nondecreasing, within [0, len(in)]
// (checked on the CPU reference; on the GPU a violating segment raises no error but reads nothing
// out of bounds: indices are clamped).
Status segmented_reduce(const TensorView& in, const TensorView& offsets, const TensorView& out, ReduceOp op,
                        SegmentedReduceAlgorithm algorithm, cudaStream_t stream);

}  // namespace gpuprims
