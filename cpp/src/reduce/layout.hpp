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

}  // namespace reduce_detail
}  // namespace gpuprims
