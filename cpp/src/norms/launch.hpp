#pragma once
// What dispatch hands a variant: one validated forward call, laid out as rows.
#include <type_traits>

#include <cuda_runtime_api.h>

#include "gpuprims/core/dtype.hpp"
#include "gpuprims/core/error.hpp"
#include "gpuprims/core/numeric.hpp"
#include "gpuprims/norms.hpp"
#include "gpuprims/norms/norm_params.hpp"

namespace gpuprims {
namespace norms {

enum class RowStaging { kNever, kWhereFaster, kWherever };

struct NormLaunch {
  NormParams params;
  DType dtype;    // x's
  DType y_dtype;  // the output's: x's, or (softmax kind) the dtype= it is converted to
  NormOp op;
  int device;  // -1 for the CPU reference
  int sm_count;
  cudaStream_t stream;
  // Whether row_on_chip stages rows that lie back to back and run ragged through shared memory
  // (its Staged kernels, launch_row_on_chip): "row_on_chip" never, "auto" where that measured
  // faster (staged_rows_preferred), "row_staged" wherever a staged kernel exists.
  RowStaging staging = RowStaging::kNever;
};

// The longest row the row_on_chip kernels hold (elements of 2- and 4-byte types; float64 half of
// it): add_layer_norm / add_rms_norm run fused up to it.
constexpr int64_t kRowOnChipCapacity = 16384;
inline int64_t row_on_chip_capacity(DType t) { return t == DType::kFloat64 ? kRowOnChipCapacity / 2 : kRowOnChipCapacity; }
Status norms_add_norm(const NormLaunch& launch);  // variant_add_norm.cu: row_on_chip with the residual prologue

// softmax / log_softmax with y_dtype other than dtype (softmax(x, dtype=)): row_on_chip reading x
// and writing y in one pass (variant_row_on_chip_convert.cu), for the pairs of
// visit_converting_pair, rows that fit and vec_ok; longer rows cluster_row's converting kernel
// where it runs; convert_rows (convert_rows.cu) writes y = x converted to y_dtype, element by
// element, for every other case, which then runs in place on y.
//
// The pairs softmax(x, dtype=) is used with, which the converting kernels are built for:
// mixed-precision logits up to float32, float32 down to the half types. run(type_tag<T>,
// type_tag<Out>) for those, otherwise() for the rest.
template <class Run, class Otherwise>
Status visit_converting_pair(DType x, DType y, Run run, Otherwise otherwise) {
  return visit_float_dtype(x, [&](auto in_tag) {
    return visit_float_dtype(y, [&](auto out_tag) -> Status {
      using T = typename decltype(in_tag)::type;
      using Out = typename decltype(out_tag)::type;
      constexpr bool kUp = is_half_like<T>::value && std::is_same<Out, float>::value;
      constexpr bool kDown = std::is_same<T, float>::value && is_half_like<Out>::value;
      if constexpr (kUp || kDown) return run(in_tag, out_tag);
      else return otherwise();
    });
  });
}
bool row_on_chip_converts(DType x, DType y);  // a pair of visit_converting_pair
Status norms_row_on_chip_convert(const NormLaunch& launch);
// cluster_row likewise (variant_cluster_row.cu), for those pairs; *ran false where it cannot run
// (nothing launched).
Status norms_cluster_row_convert(const NormLaunch& launch, bool automatic, bool* ran);
Status convert_rows(const NormLaunch& launch);

// One entry per variant, each in its own translation unit (variant_<name>.cu).
Status norms_row_on_chip(const NormLaunch& launch);
Status norms_split_row(const NormLaunch& launch);
// split_row where no cluster kernel runs; automatic ("auto"): also where it measured slower.
Status norms_cluster_row(const NormLaunch& launch, bool automatic = false);
// split_row for float64 and rows that are not aligned 16-byte vectors.
Status norms_row_lag(const NormLaunch& launch);
// split_row for float64, rows that are not aligned 16-byte vectors, and GPUs that cannot hold a
// row's chunks' worth of its blocks at once.
Status norms_row_hold(const NormLaunch& launch);
// Whether "auto" runs row_hold for these rows (variant_row_hold.cu: where it measured fastest).
bool row_hold_preferred(const NormLaunch& launch);
// Rows side by side (layout.hpp's rows_side_by_side): column_rows_kernel; row_on_chip elsewhere.
Status norms_columns(const NormLaunch& launch);
Status norms_three_pass(const NormLaunch& launch);
Status norms_online(const NormLaunch& launch);
Status norms_two_pass(const NormLaunch& launch);
Status norms_welford(const NormLaunch& launch);
Status norms_host(const NormLaunch& launch);  // host.cpp: the CPU reference

// The chunk kernels' entry (row_lag, row_hold: 16-byte vectors of float16 / bfloat16 / float32):
// run(type_tag<T>, kind) with kind a std::integral_constant<RowKind, ...> of the op, where rows are
// aligned whole vectors of a 2- or 4-byte type; split_row, which computes the same, elsewhere.
template <class Run>
Status run_vector_rows(const NormLaunch& l, Run run) {
  if (!l.params.vec_ok) return norms_split_row(l);
  return visit_float_dtype(l.dtype, [&](auto tag) {
    if constexpr (sizeof(typename decltype(tag)::type) == 8) {
      return norms_split_row(l);
    } else if (row_kind(l.op) == RowKind::kSoftmax) {
      return run(tag, std::integral_constant<RowKind, RowKind::kSoftmax>{});
    } else {
      return run(tag, std::integral_constant<RowKind, RowKind::kNorm>{});
    }
  });
}

// Blocks for a grid-stride loop over `work` items: one each, within the grid's x limit.
inline unsigned grid_for(int64_t work) {
  return static_cast<unsigned>(work < 1 ? 1 : (work > 0x7fffffff ? 0x7fffffff : work));
}

}  // namespace norms
}  // namespace gpuprims
