#pragma once
#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"
#include "gpuprims/reduce.hpp"
#include "gpuprims/reduce/reduce_layout.hpp"

namespace gpuprims {
namespace reduce_detail {

// Validates the shapes of `in` and `out` for `options` and lays the reduction out as rows, merging
// dimensions where memory allows. `*in_base` receives the address of the first element read after
// negative reduced strides are flipped (a reduction does not depend on the order it reads).
Status make_reduce_layout(const TensorView& in, const TensorView& out, const ReduceOptions& options,
                          ReduceLayout* layout, const void** in_base);

// A layout whose innermost reduced dimension is a contiguous run, split in two (dispatch.cpp, the
// two-step reduction): `inner` reduces that run for every kept and outer reduced index into slot
// kept_index * outer_count + outer_index of a contiguous scratch (its rows enumerated in address
// order); `outer` reduces each kept index's outer_count scratch values (contiguous) into the
// original outputs. False (nothing
// written) where the run is not the innermost stride-1 dimension of two or more, or where the kept
// and outer reduced dimensions together exceed kMaxDims.
bool split_inner_run(const ReduceLayout& layout, ReduceLayout* inner, ReduceLayout* outer);

}  // namespace reduce_detail
}  // namespace gpuprims
