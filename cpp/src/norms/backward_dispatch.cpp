// norm_backward(): validation, layouts, variant choice and the hand-off to a backward variant or
// the CPU reference. Never synchronizes.
#include <cstdint>
#include <string>

#include "gpuprims/core/stream.hpp"
#include "gpuprims/core/variant_lookup.hpp"
#include "gpuprims/norms.hpp"
#include "backward_launch.hpp"
#include "checks.hpp"
#include "layout.hpp"

namespace gpuprims {

namespace {

const char* backward_name(NormOp op) {
  switch (op) {
    case NormOp::kSoftmax: return "softmax_backward";
    case NormOp::kLogSoftmax: return "log_softmax_backward";
    case NormOp::kLayerNorm: return "layer_norm_backward";
    case NormOp::kRmsNorm: break;
  }
  return "rms_norm_backward";
}

// `variants` and the columns variant described by `description`.
std::vector<NormVariantInfo> with_columns(std::vector<NormVariantInfo> variants, const char* description) {
  variants.push_back({NormAlgorithm::kColumns, "columns", description, true});
  return variants;
}

}  // namespace

const std::vector<NormVariantInfo>& norm_backward_variants(NormOp op) {
  static const std::vector<NormVariantInfo> norm_kind = {
      {NormAlgorithm::kTwoPass, "two_pass",
       "block per row, any length: the row sums from a first read of dy and the saved row, dx from a "
       "second (2 reads of each + 1 write); dweight/dbias partial rows per block in global memory, "
       "summed by a second kernel in a fixed order", true},
      {NormAlgorithm::kRowOnChip, "row_on_chip",
       "dy and the saved row held on chip: a warp per row up to 256 elements (512 for 2-byte types "
       "on the vector path), else a block per row up to 8192; aligned float32/float16/bfloat16 rows "
       "staged through shared memory by cp.async rows ahead, the rest in registers; one read of each "
       "+ one write of dx; dweight/dbias accumulated in registers per group and summed by a second "
       "kernel in a fixed order; longer rows run two_pass", true}};
  static const std::vector<NormVariantInfo> softmax_kind = with_columns(
      norm_kind,
      "rows that lie side by side (the row axis strided, the next axis contiguous: the gradient of a "
      "softmax over NCHW channels): a block takes 32 adjacent rows, a lane each, as the forward's "
      "columns; y and dy held up to 256 elements (float64 128) -- staged through shared memory above 32 "
      "where 16-byte aligned, else in registers -- read twice beyond; elsewhere it runs row_on_chip");
  static const std::vector<NormVariantInfo> norm_kind_columns = with_columns(
      norm_kind,
      "rows that lie side by side (the row axis strided, the next axis contiguous: the gradient of a "
      "channels-first LayerNorm): a block takes 32 adjacent rows, a lane each, as the forward's columns; "
      "x and dy held, rows up to 256 elements (float64 64) -- staged through shared memory above 32 where "
      "16-byte aligned, else in registers; dweight/dbias summed per thread in registers over a resident "
      "grid, then by warp and by a second kernel in a fixed order; elsewhere, and for longer rows, it "
      "runs row_on_chip");
  return norms::row_kind(op) == norms::RowKind::kSoftmax ? softmax_kind : norm_kind_columns;
}

Status parse_norm_backward_algorithm(NormOp op, const std::string& name, NormAlgorithm* out) {
  return parse_variant_name(backward_name(op), norm_backward_variants(op), name, out);
}

namespace {


Status check_writable(const char* name, const TensorView& v, const char* arg) {
  if (v.readonly) return type_error(arg_error_prefix(name, arg) + "expected a writable array, got a read-only one");
  return Status::ok();
}

}  // namespace

Status norm_backward(const NormBackwardTensors& t, const NormOptions& options, cudaStream_t stream) {
  const NormOp op = options.op;
  const char* name = backward_name(op);
  const bool is_norm = norms::row_kind(op) == norms::RowKind::kNorm;
  const char* saved_name = is_norm ? "x" : "y";
  const TensorView& dy = t.dy;
  if (!is_floating(dy.dtype)) {
    return type_error(arg_error_prefix(name, "dy") + "expected float16, bfloat16, float32 or float64, got " +
                      dtype_name(dy.dtype));
  }
  if (dy.ndim < 1) return value_error(arg_error_prefix(name, "dy") + "expected at least 1 dimension, got a 0-d array");
  if (options.axis < -dy.ndim || options.axis >= dy.ndim) {
    return value_error(arg_error_prefix(name, "axis") + "expected an int in [" + std::to_string(-dy.ndim) + ", " +
                       std::to_string(dy.ndim) + ") for an array of " + std::to_string(dy.ndim) +
                       " dimensions, got " + std::to_string(options.axis));
  }
  const int axis = options.axis < 0 ? options.axis + dy.ndim : options.axis;
  GPUPRIMS_TRY(norms::check_like(name, dy, "dy", t.saved, saved_name));
  GPUPRIMS_TRY(norms::check_like(name, dy, "dy", t.dx, "out"));
  GPUPRIMS_TRY(check_writable(name, t.dx, "out"));
  // Not even in place: two_pass reads dy and the saved row again after writing dx.
  GPUPRIMS_TRY(check_distinct_elements(name, t.dx, "out"));
  GPUPRIMS_TRY(check_no_overlap(name, dy, "dy", t.dx, "out", /*in_place_ok=*/false));
  GPUPRIMS_TRY(check_no_overlap(name, t.saved, saved_name, t.dx, "out", /*in_place_ok=*/false));
  if (!is_norm && (t.weight || t.mean || t.rstd || t.dweight || t.dbias)) {
    return value_error(std::string(name) + ": takes no weight, statistics or parameter gradients");
  }
  if (is_norm && t.rstd == nullptr) return value_error(arg_error_prefix(name, "rstd") + "expected an array, got None");
  if (op == NormOp::kLayerNorm && t.mean == nullptr) {
    return value_error(arg_error_prefix(name, "mean") + "expected an array, got None");
  }
  if (op == NormOp::kRmsNorm && (t.mean || t.dbias)) {
    return value_error(std::string(name) + ": takes no mean and has no bias gradient");
  }
  bool applies = options.algorithm == NormAlgorithm::kAuto;
  for (const auto& v : norm_backward_variants(op)) applies = applies || v.algorithm == options.algorithm;
  if (!applies) return value_error(arg_error_prefix(name, "algorithm") + "names a variant of another op");

  norms::NormBackwardLaunch l{};
  norms::NormBackwardParams& p = l.params;
  GPUPRIMS_TRY(norms::make_row_layout(dy, t.dx, axis, name, &p.dy_layout));
  GPUPRIMS_TRY(norms::make_row_layout(t.saved, t.dx, axis, name, &p.saved_layout));
  const int64_t rows = p.dy_layout.num_rows, n = p.dy_layout.row_len;
  const DType stats_dtype = norm_stats_dtype(dy.dtype);
  // The checks name the first array 'x': here that is the saved row (x) or y for softmax.
  const TensorView& x = t.saved;
  if (t.weight) GPUPRIMS_TRY(norms::check_affine(name, x, *t.weight, n, "weight"));
  if (t.mean) GPUPRIMS_TRY(norms::check_stats(name, x, *t.mean, rows, stats_dtype, "mean", false));
  if (t.rstd) GPUPRIMS_TRY(norms::check_stats(name, x, *t.rstd, rows, stats_dtype, "rstd", false));
  if (t.dweight) {
    GPUPRIMS_TRY(norms::check_affine(name, x, *t.dweight, n, "dweight"));
    GPUPRIMS_TRY(check_writable(name, *t.dweight, "dweight"));
  }
  if (t.dbias) {
    GPUPRIMS_TRY(norms::check_affine(name, x, *t.dbias, n, "dbias"));
    GPUPRIMS_TRY(check_writable(name, *t.dbias, "dbias"));
  }
  p.dy = dy.data;
  p.saved = t.saved.data;
  p.dx = t.dx.data;
  p.weight = t.weight ? t.weight->data : nullptr;
  p.weight_stride = t.weight ? t.weight->strides[0] : 1;
  p.mean = t.mean ? t.mean->data : nullptr;
  p.rstd = t.rstd ? t.rstd->data : nullptr;
  p.log = op == NormOp::kLogSoftmax;
  p.center = op != NormOp::kRmsNorm;
  l.dtype = dy.dtype;
  l.op = op;
  l.stream = stream;
  l.dweight = t.dweight ? t.dweight->data : nullptr;
  l.dweight_stride = t.dweight ? t.dweight->strides[0] : 1;
  l.dbias = t.dbias ? t.dbias->data : nullptr;
  l.dbias_stride = t.dbias ? t.dbias->strides[0] : 1;
  if (dy.device.kind == DeviceKind::kCPU) {
    l.device = -1;
    return norms::norms_backward_host(l);
  }
  if (n == 0 || (rows == 0 && l.dweight == nullptr && l.dbias == nullptr)) return Status::ok();

  GPUPRIMS_TRY(check_context_alive(name));
  GPUPRIMS_TRY(check_element_aligned(name, dy, "dy"));
  GPUPRIMS_TRY(check_element_aligned(name, t.saved, saved_name));
  GPUPRIMS_TRY(check_element_aligned(name, t.dx, "out"));
  const bool weight_vec_ok = t.weight == nullptr || ((t.weight->strides[0] == 1 || n <= 1) &&
                                                     reinterpret_cast<uintptr_t>(t.weight->data) % 16 == 0);
  p.vec_ok = norms::rows_vector_aligned(p.dy_layout, dy.data, t.dx.data, dy.dtype, dy.dtype) &&
             norms::rows_vector_aligned(p.saved_layout, t.saved.data, t.dx.data, dy.dtype, dy.dtype) && weight_vec_ok;
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(dy.device.id, name));
  l.device = dy.device.id;
  GPUPRIMS_TRY(multiprocessor_count(l.device, &l.sm_count));
  if (rows == 0) return norms::backward_column_sums(l, nullptr, nullptr, 0);  // zero gradients
  if (options.algorithm == NormAlgorithm::kTwoPass) return norms::norms_backward_two_pass(l);
  if (options.algorithm == NormAlgorithm::kColumns ||
      (options.algorithm == NormAlgorithm::kAuto && norms::backward_rows_side_by_side(l))) {
    return norms::norms_backward_columns(l);
  }
  return norms::norms_backward_row_on_chip(l);
}

}  // namespace gpuprims
