#pragma once
// What dispatch hands a backward variant: one validated backward call, laid out as rows.
#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/norms.hpp"
#include "gpuprims/norms/column_shape.hpp"
#include "gpuprims/norms/norm_params.hpp"

namespace gpuprims {
namespace norms {

struct NormBackwardLaunch {
  NormBackwardParams params;  // partial buffers unset: the variant allocates them
  DType dtype;
  NormOp op;
  int device;  // -1 for the CPU reference
  int sm_count;
  cudaStream_t stream;
  void* dweight = nullptr;  // x's dtype, row_len elements at dweight_stride, or null
  int64_t dweight_stride = 1;
  void* dbias = nullptr;
  int64_t dbias_stride = 1;
};

// One entry per variant (variant_backward_<name>.cu), and the CPU reference (backward_host.cpp).
Status norms_backward_row_on_chip(const NormBackwardLaunch& launch);
Status norms_backward_two_pass(const NormBackwardLaunch& launch);
Status norms_backward_host(const NormBackwardLaunch& launch);
// Rows side by side (dy, the saved row and dx alike: layout.hpp's rows_side_by_side; the norm kind's
// rows no longer than its held slots, column_backward.cuh): column_backward_kernel; row_on_chip
// elsewhere (variant_backward_columns.cu).
bool backward_rows_side_by_side(const NormBackwardLaunch& launch, ColumnShape* shape = nullptr);
Status norms_backward_columns(const NormBackwardLaunch& launch);

// The norm kind's partial rows of dweight / dbias (those requested: `groups` rows of row_len
// statistics-type values each) from `scratch`, set in `params`; nothing for the softmax kind
// (backward_column_sums.cu).
Status allocate_backward_partials(const NormBackwardLaunch& launch, int64_t groups, NormBackwardParams* params,
                                  StreamScratch* scratch);
// dweight / dbias (those requested) from `groups` partial rows (backward_column_sums.cu); groups
// = 0 writes zeros.
Status backward_column_sums(const NormBackwardLaunch& launch, const void* dweight_partial, const void* dbias_partial,
                            int64_t groups);

}  // namespace norms
}  // namespace gpuprims
