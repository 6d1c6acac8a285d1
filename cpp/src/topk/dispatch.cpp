// topk(): validation, the row layout, variant choice and the hand-off to a variant (and the sort)
// or the CPU reference. Never synchronizes.
#include <cstdint>
#include <string>
#include <vector>

#include "gpuprims/core/checks.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/core/variant_lookup.hpp"
#include "gpuprims/topk.hpp"
#include "launch.hpp"

namespace gpuprims {

using topk_detail::TopkLaunch;

const std::vector<TopkVariantInfo>& topk_variants() {
  static const std::vector<TopkVariantInfo> variants = {
      {TopkAlgorithm::kSort, "sort",
       "the baseline: each whole row ranked by a bitonic sorting network (shared-memory tiles of 2048, global "
       "compare-exchange steps beyond), the first k kept; O(n log^2 n) work, always in rank order", true},
      {TopkAlgorithm::kBlockPerRow, "block_per_row",
       "radix select with one block per row, every sweep in one launch: 11-bit digit histograms in shared "
       "memory, keys above the k-th written out as soon as a digit decides them, the undecided ones kept in "
       "shared memory once at most 2048 (4-byte keys), else the row read again", false},
      {TopkAlgorithm::kSplitRow, "split_row",
       "radix select with several blocks per row and one launch per digit: per-block shared histograms added "
       "into the row's global one, the last block to finish choosing the digit, the undecided keys kept in a "
       "global buffer once at most a sixteenth of the row; for few long rows", false},
  };
  return variants;
}

Status parse_topk_algorithm(const std::string& name, TopkAlgorithm* out) {
  return parse_variant_name("topk", topk_variants(), name, out);
}

namespace {

std::string expected_shape(const TensorView& x, int axis, int64_t k) {
  std::string s = "(";
  for (int d = 0; d < x.ndim; ++d) s += (d ? ", " : "") + std::to_string(d == axis ? k : x.shape[d]);
  return s + (x.ndim == 1 ? ",)" : ")");
}

Status check_result(const char* op, const TensorView& x, int axis, int64_t k, const TensorView& v, const char* arg,
                    DType dtype) {
  GPUPRIMS_TRY(check_same_device(op, x, "x", v, arg));
  if (v.dtype != dtype) {
    return type_error(arg_error_prefix(op, arg) + "expected dtype " + dtype_name(dtype) + ", got " +
                      dtype_name(v.dtype));
  }
  if (v.readonly) return type_error(arg_error_prefix(op, arg) + "expected a writable array, got a read-only one");
  bool same = v.ndim == x.ndim;
  for (int d = 0; same && d < x.ndim; ++d) same = v.shape[d] == (d == axis ? k : x.shape[d]);
  if (!same) {
    return value_error(arg_error_prefix(op, arg) + "expected shape " + expected_shape(x, axis, k) + ", got " +
                       shape_string(v));
  }
  GPUPRIMS_TRY(check_distinct_elements(op, v, arg));
  return check_no_overlap(op, x, "x", v, arg, /*in_place_ok=*/false);
}

// "auto": split_row for fewer rows than SMs, long enough to split
// (and for rows of 2^32 elements and more, beyond block_per_row's 32-bit buffer positions: the
// named variants too, but sort, whose positions are 64-bit).
TopkAlgorithm choose(TopkAlgorithm asked, const topk_detail::TopkRows& rows, int sm_count) {
  if (asked == TopkAlgorithm::kSort) return asked;
  if (rows.row_len > int64_t(UINT32_MAX)) return TopkAlgorithm::kSplitRow;
  if (asked != TopkAlgorithm::kAuto) return asked;
  // Session 57 run 4 (H200, 132 SMs, float32): 64 x 131072 k=50 split_row 114 us against
  // block_per_row 141; 256 x 50257 k=50 block_per_row 100 us against split_row 196.
  const bool few_rows = rows.num_rows < int64_t(sm_count);
  return few_rows && rows.row_len >= 16384 ? TopkAlgorithm::kSplitRow : TopkAlgorithm::kBlockPerRow;
}

}  // namespace

Status topk(const TensorView& x, int64_t k, int axis, bool largest, bool sorted, const TensorView& values,
            const TensorView& indices, TopkAlgorithm algorithm, cudaStream_t stream) {
  const char* op = "topk";
  if (x.dtype == DType::kBool) {
    return type_error(arg_error_prefix(op, "x") + "expected a numeric dtype (int8..int64, uint8..uint64, float16, "
                      "bfloat16, float32, float64), got bool");
  }
  if (x.ndim == 0) return value_error(arg_error_prefix(op, "x") + "expected at least 1 dimension, got a 0-d array");
  if (axis < -x.ndim || axis >= x.ndim) {
    return value_error(arg_error_prefix(op, "axis") + "expected an int in [" + std::to_string(-x.ndim) + ", " +
                       std::to_string(x.ndim) + ") for an array of " + std::to_string(x.ndim) + " dimensions, got " +
                       std::to_string(axis));
  }
  if (axis < 0) axis += x.ndim;
  const int64_t n = x.shape[axis];
  if (k < 0 || k > n) {
    return value_error(arg_error_prefix(op, "k") + "expected 0 <= k <= " + std::to_string(n) + " (the length of axis " +
                       std::to_string(axis) + "), got " + std::to_string(k));
  }
  GPUPRIMS_TRY(check_result(op, x, axis, k, values, "out[0]", x.dtype));
  GPUPRIMS_TRY(check_result(op, x, axis, k, indices, "out[1]", DType::kInt64));
  GPUPRIMS_TRY(check_no_overlap(op, values, "out[0]", indices, "out[1]", /*in_place_ok=*/false));
  TopkLaunch l;
  GPUPRIMS_TRY(topk_detail::make_rows(x, values, indices, axis, k, &l.params.rows));
  l.params.x = x.data;
  l.params.values = values.data;
  l.params.indices = static_cast<int64_t*>(indices.data);
  l.params.largest = largest;
  l.dtype = x.dtype;
  if (l.params.rows.num_rows == 0 || k == 0) return Status::ok();
  if (x.device.kind == DeviceKind::kCPU) return topk_detail::topk_host(l.params, x.dtype, sorted);
  GPUPRIMS_TRY(check_context_alive(op));
  GPUPRIMS_TRY(check_element_aligned(op, x, "x"));
  GPUPRIMS_TRY(check_element_aligned(op, values, "out[0]"));
  GPUPRIMS_TRY(check_element_aligned(op, indices, "out[1]"));
  l.device = x.device.id;
  l.stream = stream;
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(l.device, op));
  int sm_count = 0;
  GPUPRIMS_TRY(multiprocessor_count(l.device, &sm_count));
  const TopkAlgorithm chosen = choose(algorithm, l.params.rows, sm_count);
  if (chosen == TopkAlgorithm::kSort) return topk_detail::select_sort(l);  // sorted either way
  if (chosen == TopkAlgorithm::kSplitRow) {
    GPUPRIMS_TRY(topk_detail::select_split_row(l));
  } else {
    GPUPRIMS_TRY(topk_detail::select_block_per_row(l));
  }
  return sorted && k > 1 ? topk_detail::sort_results(l) : Status::ok();
}

}  // namespace gpuprims
