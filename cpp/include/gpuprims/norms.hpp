#pragma once
// Public C++ entry points of the norms family: row-wise softmax, log_softmax, layer_norm, rms_norm
// and their backward passes.
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"

namespace gpuprims {

enum class NormOp { kSoftmax, kLogSoftmax, kLayerNorm, kRmsNorm };

// The optimization ladder. Not every algorithm applies to every op (norm_variants(op) lists those
// that do); every listed variant computes the same function for every input.
enum class NormAlgorithm {
  kAuto,
  kThreePass,  // softmax: max, sum of exp, normalize; three reads of the row from global memory
  kOnline,     // softmax: running (max, sum) in one read (Milakov & Gimelshein), then normalize
  kTwoPass,    // layer_norm: mean, then centered variance, then normalize (three reads);
               // rms_norm: sum of squares, then normalize (two reads)
  kWelford,    // layer_norm: one-read Welford statistics, then normalize
  kRowOnChip,  // one read + one write: the row in registers (a warp per short row, a block per long
               // row, 16-byte loads when aligned); rows beyond a block's capacity go to kSplitRow
  kSplitRow,   // rows cut into block-sized chunks: chunk statistics, a per-row combine, normalize
  kClusterRow, // sm_90: a long row in the shared memory of a thread block cluster, statistics exchanged
               // through distributed shared memory (one read); elsewhere it runs kSplitRow
  kRowLag,     // a long row's chunks read twice in one launch, the second time from L2 (one DRAM
               // read); rows not in aligned 16-byte vectors and float64 run kSplitRow
  kRowHold,    // a long row's chunks read once in one launch, each held in the shared memory of the
               // block that read it until its row is complete; where it cannot run, kSplitRow
  kRowStaged,  // softmax: kRowOnChip with rows of up to 128 elements that lie back to back but are not
               // aligned 16-byte vectors (odd lengths, offset views) copied through shared memory a
               // run of rows at a time; elsewhere it runs kRowOnChip
  kColumns,    // rows that lie side by side (the row axis strided, the next axis contiguous: softmax
               // over NCHW channels, axis 0 of a matrix): a warp reads one element of 32 adjacent rows
               // per load; elsewhere it runs kRowOnChip
};

struct NormVariantInfo {
  NormAlgorithm algorithm;
  const char* name;
  const char* description;
  bool deterministic;  // run-to-run bitwise identical
};

const char* norm_op_name(NormOp op);
// What errors call a forward call: "add_layer_norm" / "add_rms_norm" with a residual, else norm_op_name.
const char* norm_forward_name(NormOp op, bool with_residual);
Status parse_norm_op(const std::string& name, NormOp* out);
const std::vector<NormVariantInfo>& norm_variants(NormOp op);
// `caller` names the op in the error (the add-norm ops pass theirs); nullptr: norm_op_name(op).
Status parse_norm_algorithm(NormOp op, const std::string& name, NormAlgorithm* out, const char* caller = nullptr);

// The dtype of layer_norm's mean and rstd and rms_norm's rstd for an x of `x`: float64 for float64,
// float32 otherwise (the statistics type).
constexpr DType norm_stats_dtype(DType x) { return x == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32; }

struct NormOptions {
  NormOp op = NormOp::kSoftmax;
  int axis = -1;          // the row axis; negative counts from the end
  double eps = 1e-5;      // layer_norm / rms_norm; added to the variance in the statistics type
  NormAlgorithm algorithm = NormAlgorithm::kAuto;
};

// The tensors of one forward call. y has x's shape and dtype. weight and bias (layer_norm,
// rms_norm; bias for layer_norm only) are 1-D of the row length and x's dtype, or null. mean and
// rstd, when given, hold one value per row in the statistics type (float32; float64 for float64
// inputs) with x's shape and the row axis of size 1. Any strides everywhere.
struct NormTensors {
  TensorView x;
  TensorView y;
  const TensorView* weight = nullptr;
  const TensorView* bias = nullptr;
  const TensorView* mean = nullptr;  // layer_norm only
  const TensorView* rstd = nullptr;  // layer_norm and rms_norm
  // add_layer_norm / add_rms_norm: both or neither, x's shape and dtype. The op then normalizes
  // sum = x + residual (rounded to x's dtype) and writes sum too, which must not overlap x,
  // residual or y. Fused in one pass (row_on_chip) for rows up to 16384 elements (float64: 8192)
  // under "auto" / "row_on_chip"; otherwise sum is written first and normalized by the variant.
  const TensorView* residual = nullptr;
  const TensorView* sum = nullptr;
};

// Row-wise forward op along options.axis. CPU views run the CPU reference; CUDA views run on
// their own device, ordered on `stream`. Never synchronizes the host.
Status norm_forward(const NormTensors& t, const NormOptions& options, cudaStream_t stream);

// ---------------------------------------------------------------------------------------------
// Backward passes. Variants: kRowOnChip (dy and the saved row held in registers, one read of each
// and one write of dx; rows beyond 8192 elements run kTwoPass) and kTwoPass (a block per row, the
// row sums in a first read, dx in a second). dweight / dbias are per-group partial sums reduced by
// a second kernel in a fixed order: deterministic, no atomics.
const std::vector<NormVariantInfo>& norm_backward_variants(NormOp op);
Status parse_norm_backward_algorithm(NormOp op, const std::string& name, NormAlgorithm* out);

// The tensors of one backward call (options.op names the forward op; options.eps is unused).
//   softmax, log_softmax: saved = the forward output y;  dx = softmax: y * (dy - sum(dy * y)),
//                                                        log_softmax: dy - exp(y) * sum(dy)
//   layer_norm: saved = x, mean and rstd as returned by the forward (required), weight or null;
//               dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * weight,
//               xhat = (x - mean) * rstd; dweight = sum over rows of dy * xhat, dbias = sum of dy
//   rms_norm:   as layer_norm with mean 0 and no mean(g) term; no mean, no dbias.
// dy, saved and dx have one shape and dtype; mean / rstd as NormTensors; dweight / dbias, when
// given, 1-D of the row length in x's dtype (any stride). Any strides everywhere.
struct NormBackwardTensors {
  TensorView dy;
  TensorView saved;
  TensorView dx;
  const TensorView* weight = nullptr;
  const TensorView* mean = nullptr;
  const TensorView* rstd = nullptr;
  const TensorView* dweight = nullptr;
  const TensorView* dbias = nullptr;
};

Status norm_backward(const NormBackwardTensors& t, const NormOptions& options, cudaStream_t stream);

// ---------------------------------------------------------------------------------------------
// out = residual + dropout(x + bias): bias 1-D along x's last axis (or null); residual and out x's
// shape and dtype; any strides. Element i (C order) is kept with probability 1 - p, scaled by
// 1 / (1 - p), by Philox4x32-10 bits drawn from (i, seed, offset) (norms/philox.hpp documents the
// mapping): reproducible, independent of the launch. training = false: out = residual + x + bias.
struct DropoutTensors {
  TensorView x;
  const TensorView* bias = nullptr;
  TensorView residual;
  TensorView out;
};

struct DropoutOptions {
  double p = 0.0;  // in [0, 1]
  uint64_t seed = 0;
  uint64_t offset = 0;
  bool training = true;
};

Status bias_dropout_add(const DropoutTensors& t, const DropoutOptions& options, cudaStream_t stream);

}  // namespace gpuprims
