#pragma once
// Public C++ entry points of the norms family: row-wise softmax, log_softmax, layer_norm, rms_norm.
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
};

struct NormVariantInfo {
  NormAlgorithm algorithm;
  const char* name;
  const char* description;
  bool deterministic;  // run-to-run bitwise identical
};

const char* norm_op_name(NormOp op);
Status parse_norm_op(const std::string& name, NormOp* out);
const std::vector<NormVariantInfo>& norm_variants(NormOp op);
Status parse_norm_algorithm(NormOp op, const std::string& name, NormAlgorithm* out);

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
};

// Row-wise forward op along options.axis. CPU views run the CPU reference; CUDA views run on
// their own device, ordered on `stream`. Never synchronizes the host.
Status norm_forward(const NormTensors& t, const NormOptions& options, cudaStream_t stream);

}  // namespace gpuprims
