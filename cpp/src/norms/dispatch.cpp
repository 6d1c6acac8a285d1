// norm_forward(): validation, layout, variant choice and the hand-off to a variant or the CPU
// reference. Never synchronizes.
#include <cmath>
#include <cstdint>
#include <string>

#include "gpuprims/core/stream.hpp"
#include "gpuprims/core/variant_lookup.hpp"
#include "gpuprims/norms.hpp"
#include "checks.hpp"
#include "launch.hpp"
#include "layout.hpp"

namespace gpuprims {

const char* norm_op_name(NormOp op) {
  switch (op) {
    case NormOp::kSoftmax: return "softmax";
    case NormOp::kLogSoftmax: return "log_softmax";
    case NormOp::kLayerNorm: return "layer_norm";
    case NormOp::kRmsNorm: return "rms_norm";
  }
  return "?";
}

const char* norm_forward_name(NormOp op, bool with_residual) {
  if (!with_residual) return norm_op_name(op);
  return op == NormOp::kLayerNorm ? "add_layer_norm" : "add_rms_norm";
}

Status parse_norm_op(const std::string& name, NormOp* out) {
  for (NormOp op : {NormOp::kSoftmax, NormOp::kLogSoftmax, NormOp::kLayerNorm, NormOp::kRmsNorm}) {
    if (name == norm_op_name(op)) {
      *out = op;
      return Status::ok();
    }
  }
  return value_error("norms: argument 'op': expected one of 'softmax', 'log_softmax', 'layer_norm', 'rms_norm', got '" +
                     name + "'");
}

namespace {

const NormVariantInfo kRowOnChip{
    NormAlgorithm::kRowOnChip, "row_on_chip",
    "one read + one write: the row held in registers (a warp per row up to 512 elements, a block "
    "of 128, 256 or 1024 threads up to 16384), 16-byte accesses when rows are aligned; longer rows run "
    "split_row",
    true};
const NormVariantInfo kSplitRow{
    NormAlgorithm::kSplitRow, "split_row",
    "rows cut into chunks of 8192 elements: chunk statistics on chip, a deterministic per-row "
    "combine, then each chunk re-read and written (2 reads + 1 write)",
    true};
const NormVariantInfo kClusterRow{
    NormAlgorithm::kClusterRow, "cluster_row",
    "one read + one write for rows beyond one block: a thread block cluster (up to 16 CTAs) holds the "
    "row in shared memory and exchanges partial statistics through distributed shared memory (sm_90, "
    "aligned rows of float16/bfloat16/float32, and the softmax kind's unit-stride rows of any length "
    "or offset, held rotated to their 16-byte boundaries); elsewhere it runs split_row",
    true};
const NormVariantInfo kRowLag{
    NormAlgorithm::kRowLag, "row_lag",
    "one DRAM read + one write for rows beyond one block, in one launch: chunks of 8192 elements taken "
    "in ticket order, each chunk's statistics published, then the chunk re-read from L2 a fixed number "
    "of tickets later and written once its row is complete (aligned rows of float16/bfloat16/float32); "
    "elsewhere it runs split_row",
    true};
const NormVariantInfo kRowHold{
    NormAlgorithm::kRowHold, "row_hold",
    "one read + one write for rows beyond one block, in one launch: a persistent grid takes chunks of "
    "8192 elements in ticket order, publishes each chunk's statistics and keeps the chunk in shared "
    "memory (two per block), writing its oldest once that chunk's row is complete; a cooperative launch "
    "of the resident blocks, at least one per chunk of a row (aligned rows of float16/bfloat16/float32); "
    "elsewhere it runs split_row",
    true};

const NormVariantInfo kRowStaged{
    NormAlgorithm::kRowStaged, "row_staged",
    "row_on_chip for softmax rows of up to 128 elements that lie back to back but are not aligned "
    "16-byte vectors (odd lengths, offset views of contiguous arrays): a block copies a run of whole rows into "
    "shared memory and back with 16-byte accesses, the next run in flight while it works on this one, "
    "each row held in registers from there (\"auto\" stages where it measured faster); elsewhere it "
    "runs row_on_chip",
    true};

const NormVariantInfo kColumns{
    NormAlgorithm::kColumns, "columns",
    "rows that lie side by side (the row axis strided, the next axis contiguous: softmax over the "
    "channels of NCHW, axis 0 of a matrix): a block takes 32 adjacent rows, a lane each, so every warp "
    "load reads one element of 32 neighbouring rows; its warps split the rows' elements and combine "
    "their statistics in shared memory; rows of up to 512 elements (float64 128) read once -- staged "
    "through shared memory by cp.async where 16-byte aligned and longer than 32, else held in "
    "registers -- longer rows twice (\"auto\" takes it for such rows); elsewhere it runs row_on_chip",
    true};

}  // namespace

const std::vector<NormVariantInfo>& norm_variants(NormOp op) {
  static const std::vector<NormVariantInfo> softmax = {
      {NormAlgorithm::kThreePass, "three_pass",
       "block per row: max, sum of exp(x - max), normalize, each pass reading the row from global memory "
       "(3 reads + 1 write)", true},
      {NormAlgorithm::kOnline, "online",
       "block per row: running (max, sum) in one read (Milakov & Gimelshein), then normalize (2 reads + 1 write)",
       true},
      kRowOnChip, kSplitRow, kClusterRow, kRowLag, kRowHold, kRowStaged, kColumns};
  static const std::vector<NormVariantInfo> layer_norm = {
      {NormAlgorithm::kTwoPass, "two_pass",
       "block per row: mean, then the centered second moment, then normalize, each pass reading the row "
       "(3 reads + 1 write)", true},
      {NormAlgorithm::kWelford, "welford",
       "block per row: Welford (mean, M2) per thread in one read, merged in closed form, then normalize "
       "(2 reads + 1 write)", true},
      kRowOnChip, kSplitRow, kClusterRow, kRowLag, kRowHold, kColumns};
  static const std::vector<NormVariantInfo> rms_norm = {
      {NormAlgorithm::kTwoPass, "two_pass",
       "block per row: sum of squares, then normalize, each pass reading the row (2 reads + 1 write)", true},
      kRowOnChip, kSplitRow, kClusterRow, kRowLag, kRowHold, kColumns};
  switch (op) {
    case NormOp::kSoftmax:
    case NormOp::kLogSoftmax: return softmax;
    case NormOp::kLayerNorm: return layer_norm;
    case NormOp::kRmsNorm: break;
  }
  return rms_norm;
}

Status parse_norm_algorithm(NormOp op, const std::string& name, NormAlgorithm* out, const char* caller) {
  return parse_variant_name(caller ? caller : norm_op_name(op), norm_variants(op), name, out);
}

namespace {

using norms::NormLaunch;
using norms::check_affine;
using norms::check_stats;

// "auto": rows that lie side by side run columns; otherwise the one-pass kernel, staged where that
// measured faster (RowStaging::kWhereFaster); rows beyond one block's registers run row_hold where it
// measured fastest (row_hold_preferred), else cluster_row (which runs split_row where it cannot, or
// where it measured slower).
Status run_variant(NormAlgorithm algorithm, const NormLaunch& l) {
  switch (algorithm) {
    case NormAlgorithm::kColumns: return norms::norms_columns(l);
    case NormAlgorithm::kClusterRow: return norms::norms_cluster_row(l);
    case NormAlgorithm::kThreePass: return norms::norms_three_pass(l);
    case NormAlgorithm::kOnline: return norms::norms_online(l);
    case NormAlgorithm::kTwoPass: return norms::norms_two_pass(l);
    case NormAlgorithm::kWelford: return norms::norms_welford(l);
    case NormAlgorithm::kSplitRow: return norms::norms_split_row(l);
    case NormAlgorithm::kRowLag: return norms::norms_row_lag(l);
    case NormAlgorithm::kRowHold: return norms::norms_row_hold(l);
    case NormAlgorithm::kAuto:
      if (norms::rows_side_by_side(l.params.layout)) return norms::norms_columns(l);
      if (l.params.layout.row_len > norms::row_on_chip_capacity(l.dtype)) {
        if (norms::row_hold_preferred(l)) return norms::norms_row_hold(l);
        return norms::norms_cluster_row(l, /*automatic=*/true);
      }
      break;
    case NormAlgorithm::kRowStaged:
    case NormAlgorithm::kRowOnChip: break;
  }
  // row_on_chip, its staging by the name: "row_staged" wherever a staged kernel exists, "auto"
  // where staging measured faster, "row_on_chip" never.
  NormLaunch on_chip = l;
  on_chip.staging = algorithm == NormAlgorithm::kRowStaged ? norms::RowStaging::kWherever
                    : algorithm == NormAlgorithm::kAuto    ? norms::RowStaging::kWhereFaster
                                                           : norms::RowStaging::kNever;
  return norms::norms_row_on_chip(on_chip);
}

bool algorithm_applies(NormOp op, NormAlgorithm algorithm) {
  if (algorithm == NormAlgorithm::kAuto) return true;
  for (const auto& v : norm_variants(op)) {
    if (v.algorithm == algorithm) return true;
  }
  return false;
}

}  // namespace

Status norm_forward(const NormTensors& t, const NormOptions& options, cudaStream_t stream) {
  const NormOp op = options.op;
  const char* name = norm_forward_name(op, t.residual != nullptr);
  const TensorView& x = t.x;
  const TensorView& y = t.y;
  if (!is_floating(x.dtype)) {
    return type_error(arg_error_prefix(name, "x") + "expected float16, bfloat16, float32 or float64, got " +
                      dtype_name(x.dtype));
  }
  if (x.ndim < 1) return value_error(arg_error_prefix(name, "x") + "expected at least 1 dimension, got a 0-d array");
  if (options.axis < -x.ndim || options.axis >= x.ndim) {
    return value_error(arg_error_prefix(name, "axis") + "expected an int in [" + std::to_string(-x.ndim) + ", " +
                       std::to_string(x.ndim) + ") for an array of " + std::to_string(x.ndim) + " dimensions, got " +
                       std::to_string(options.axis));
  }
  const int axis = options.axis < 0 ? options.axis + x.ndim : options.axis;
  GPUPRIMS_TRY(check_same_device(name, x, "x", y, "out"));
  // softmax / log_softmax may write another float dtype: softmax(x, dtype=), x converted first.
  const bool converts = y.dtype != x.dtype;
  const bool may_convert = norms::row_kind(op) == norms::RowKind::kSoftmax && is_floating(y.dtype);
  if (converts && !may_convert) {
    return type_error(arg_error_prefix(name, "out") + "expected dtype " +
                      (norms::row_kind(op) == norms::RowKind::kSoftmax ? "float16, bfloat16, float32 or float64"
                                                                      : std::string(dtype_name(x.dtype))) +
                      ", got " + dtype_name(y.dtype));
  }
  if (y.readonly) return type_error(arg_error_prefix(name, "out") + "expected a writable array, got a read-only one");
  bool same_shape = y.ndim == x.ndim;
  for (int d = 0; same_shape && d < x.ndim; ++d) same_shape = y.shape[d] == x.shape[d];
  if (!same_shape) {
    return value_error(arg_error_prefix(name, "out") + "expected shape " + shape_string(x) + " (x's), got " +
                       shape_string(y));
  }
  // In place is fine (every element is read before it is written); other sharing is not, nor is
  // any with a converting y (its elements have another size).
  GPUPRIMS_TRY(check_distinct_elements(name, y, "out"));
  GPUPRIMS_TRY(check_no_overlap(name, x, "x", y, "out", /*in_place_ok=*/!converts));
  const bool is_norm = norms::row_kind(op) == norms::RowKind::kNorm;
  if (!is_norm && (t.weight || t.bias || t.mean || t.rstd)) {
    return value_error(std::string(name) + ": takes no weight, bias or statistics outputs");
  }
  if (op == NormOp::kRmsNorm && (t.bias || t.mean)) {
    return value_error(std::string(name) + ": takes no bias and has no mean output");
  }
  if (is_norm && !(std::isfinite(options.eps) && options.eps >= 0)) {
    return value_error(arg_error_prefix(name, "eps") + "expected a finite number >= 0, got " +
                       std::to_string(options.eps));
  }
  if ((t.residual != nullptr) != (t.sum != nullptr) || (!is_norm && t.residual)) {
    return value_error(std::string(name) + ": a residual and its sum output go together, with layer_norm or rms_norm");
  }
  if (!algorithm_applies(op, options.algorithm)) {
    return value_error(arg_error_prefix(name, "algorithm") + "names a variant of another op");
  }

  NormLaunch l{};
  norms::NormParams& p = l.params;
  GPUPRIMS_TRY(norms::make_row_layout(x, y, axis, name, &p.layout));
  const DType stats_dtype = norm_stats_dtype(x.dtype);
  if (t.weight) GPUPRIMS_TRY(check_affine(name, x, *t.weight, p.layout.row_len, "weight"));
  if (t.bias) GPUPRIMS_TRY(check_affine(name, x, *t.bias, p.layout.row_len, "bias"));
  if (t.mean) GPUPRIMS_TRY(check_stats(name, x, *t.mean, p.layout.num_rows, stats_dtype, "mean", true));
  if (t.rstd) GPUPRIMS_TRY(check_stats(name, x, *t.rstd, p.layout.num_rows, stats_dtype, "rstd", true));
  if (t.residual) {
    GPUPRIMS_TRY(norms::check_like(name, x, "x", *t.residual, "residual"));
    GPUPRIMS_TRY(norms::check_like(name, x, "x", *t.sum, "sum"));
    GPUPRIMS_TRY(check_no_overlap(name, *t.residual, "residual", y, "out", /*in_place_ok=*/true));
    if (t.sum->readonly) return type_error(arg_error_prefix(name, "sum") + "expected a writable array, got a read-only one");
    // Rows side by side: "auto" writes the sum element-wise and normalizes it with the columns
    // kernel, where the fused kernel would walk each row along its stride.
    const bool fused = x.device.kind == DeviceKind::kCUDA && x.shape[axis] <= norms::row_on_chip_capacity(x.dtype) &&
                       ((options.algorithm == NormAlgorithm::kAuto && !norms::rows_side_by_side(p.layout)) ||
                        options.algorithm == NormAlgorithm::kRowOnChip);
    // After the checks above, so that argument errors come before the unfused path's first write.
    if (!fused) {  // sum first (element-wise, one rounding like the fused kernel), then the plain op
      GPUPRIMS_TRY(bias_dropout_add(DropoutTensors{x, nullptr, *t.residual, *t.sum}, DropoutOptions{0.0, 0, 0, false},
                                    stream));
      NormTensors rest = t;
      rest.x = *t.sum;
      rest.residual = rest.sum = nullptr;
      return norm_forward(rest, options, stream);
    }
  }
  p.x = x.data;
  p.y = y.data;
  p.weight = t.weight ? t.weight->data : nullptr;
  p.bias = t.bias ? t.bias->data : nullptr;
  p.weight_stride = t.weight ? t.weight->strides[0] : 1;
  p.bias_stride = t.bias ? t.bias->strides[0] : 1;
  p.mean = t.mean ? t.mean->data : nullptr;
  p.rstd = t.rstd ? t.rstd->data : nullptr;
  p.eps = options.eps;
  p.log = op == NormOp::kLogSoftmax;
  p.center = op != NormOp::kRmsNorm;
  l.dtype = x.dtype;
  l.y_dtype = y.dtype;
  l.op = op;
  l.stream = stream;
  // softmax(x, dtype=) where it does not run in one pass: y = x converted, then the op in place on y.
  const auto convert_then_in_place = [&]() -> Status {
    GPUPRIMS_TRY(norms::convert_rows(l));
    NormTensors rest = t;
    rest.x = y;
    return norm_forward(rest, options, stream);
  };
  if (x.device.kind == DeviceKind::kCPU) {
    l.device = -1;
    return converts ? convert_then_in_place() : norms::norms_host(l);
  }
  if (p.layout.num_rows == 0) return Status::ok();

  GPUPRIMS_TRY(check_context_alive(name));
  GPUPRIMS_TRY(check_element_aligned(name, x, "x"));
  GPUPRIMS_TRY(check_element_aligned(name, y, "out"));
  const auto affine_vector_ok = [&](const TensorView* v) {
    return v == nullptr || ((v->strides[0] == 1 || v->shape[0] <= 1) && reinterpret_cast<uintptr_t>(v->data) % 16 == 0);
  };
  const bool affine_ok = affine_vector_ok(t.weight) && affine_vector_ok(t.bias);
  p.vec_ok = norms::rows_vector_aligned(p.layout, x.data, y.data, x.dtype, y.dtype) && affine_ok;
  // Rows that are not whole aligned vectors (odd lengths, offset views) run row_on_chip's ragged
  // kernels (the softmax kind's cluster_row's too) where x's and y's rows are misaligned alike
  // and the affine vectors are contiguous and aligned (the add-norms' launch has no ragged kernel:
  // may_run_ragged, row_on_chip_launch.cuh).
  p.ragged = !p.vec_ok && affine_ok && norms::rows_ragged_vectors(p.layout, x.data, y.data, x.dtype, y.dtype);
  if (t.residual) {
    GPUPRIMS_TRY(check_element_aligned(name, *t.residual, "residual"));
    GPUPRIMS_TRY(check_element_aligned(name, *t.sum, "sum"));
    GPUPRIMS_TRY(norms::make_row_layout(*t.residual, *t.sum, axis, name, &p.residual_layout));
    p.residual = t.residual->data;
    p.sum = t.sum->data;
    p.vec_ok = p.vec_ok && norms::rows_vector_aligned(p.residual_layout, p.residual, p.sum, x.dtype, x.dtype);
  }
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(x.device.id, name));
  l.device = x.device.id;
  GPUPRIMS_TRY(multiprocessor_count(l.device, &l.sm_count));
  if (t.residual) return norms::norms_add_norm(l);
  if (converts) {  // "auto": row_on_chip's converting kernel for rows that fit, cluster_row's beyond
    const bool automatic = options.algorithm == NormAlgorithm::kAuto;
    if (norms::row_on_chip_converts(x.dtype, y.dtype) && (p.vec_ok || p.ragged)) {
      const bool fits = p.layout.row_len <= norms::row_on_chip_capacity(x.dtype);
      const bool on_chip = options.algorithm == NormAlgorithm::kRowOnChip || options.algorithm == NormAlgorithm::kRowStaged;
      if (fits && (automatic || on_chip)) return norms::norms_row_on_chip_convert(l);
      if ((!fits && automatic) || options.algorithm == NormAlgorithm::kClusterRow) {
        bool ran = false;
        GPUPRIMS_TRY(norms::norms_cluster_row_convert(l, automatic, &ran));
        if (ran) return Status::ok();
      }
    }
    return convert_then_in_place();
  }
  return run_variant(options.algorithm, l);
}

}  // namespace gpuprims
