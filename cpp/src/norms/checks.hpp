#pragma once
// Argument checks shared by the forward and backward dispatch. Errors name the op and argument.
#include <string>

#include "gpuprims/core/checks.hpp"
#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"
#include "gpuprims/norms.hpp"

namespace gpuprims {
namespace norms {

// weight / bias (or their gradients): 1-D of the row length, x's dtype and device.
Status check_affine(const char* op, const TensorView& x, const TensorView& v, int64_t row_len, const char* arg);
// mean / rstd: compact, one statistics-type value per row; writable when `output`.
Status check_stats(const char* op, const TensorView& x, const TensorView& v, int64_t rows, DType stats_dtype,
                   const char* arg, bool output);

// v with ref's device, dtype and shape (ref named ref_name in the message), element-aligned.
Status check_like(const char* op, const TensorView& ref, const char* ref_name, const TensorView& v, const char* arg);

}  // namespace norms
}  // namespace gpuprims
