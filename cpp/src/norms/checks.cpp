// Argument checks shared by the forward and backward dispatch.
#include "checks.hpp"

#include <cstdint>
#include <string>

namespace gpuprims {
namespace norms {

// weight / bias: 1-D, the row length, x's dtype and device.
Status check_affine(const char* op, const TensorView& x, const TensorView& v, int64_t row_len, const char* arg) {
  GPUPRIMS_TRY(check_same_device(op, x, "x", v, arg));
  if (v.dtype != x.dtype) {
    return type_error(arg_error_prefix(op, arg) + "expected dtype " + dtype_name(x.dtype) + " (x's), got " +
                      dtype_name(v.dtype));
  }
  if (v.ndim != 1 || v.shape[0] != row_len) {
    return value_error(arg_error_prefix(op, arg) + "expected shape (" + std::to_string(row_len) +
                       ",) (the row length), got " + shape_string(v));
  }
  return check_element_aligned(op, v, arg);
}

// mean / rstd: compact, one statistics-type value per row.
Status check_stats(const char* op, const TensorView& x, const TensorView& v, int64_t rows, DType stats_dtype,
                   const char* arg, bool output) {
  GPUPRIMS_TRY(check_same_device(op, x, "x", v, arg));
  if (v.dtype != stats_dtype) {
    return type_error(arg_error_prefix(op, arg) + "expected dtype " + dtype_name(stats_dtype) + ", got " +
                      dtype_name(v.dtype));
  }
  if (output && v.readonly) {
    return type_error(arg_error_prefix(op, arg) + "expected a writable array, got a read-only one");
  }
  int64_t expect = 1;
  for (int d = v.ndim - 1; d >= 0 && v.numel() > 0; --d) {  // an empty array has no layout to check
    if (v.shape[d] != 1 && v.strides[d] != expect) {
      return value_error(arg_error_prefix(op, arg) + "expected a C-contiguous array, got strides that are not");
    }
    expect *= v.shape[d];
  }
  if (v.numel() != rows) {
    return value_error(arg_error_prefix(op, arg) + "expected " + std::to_string(rows) + " elements (one per row), got " +
                       std::to_string(v.numel()));
  }
  return check_element_aligned(op, v, arg);
}

Status check_like(const char* name, const TensorView& ref, const char* ref_name, const TensorView& v,
                  const char* arg) {
  GPUPRIMS_TRY(check_same_device(name, ref, ref_name, v, arg));
  if (v.dtype != ref.dtype) {
    return type_error(arg_error_prefix(name, arg) + "expected dtype " + dtype_name(ref.dtype) + " (" + ref_name +
                      "'s), got " + dtype_name(v.dtype));
  }
  bool same = v.ndim == ref.ndim;
  for (int d = 0; same && d < v.ndim; ++d) same = v.shape[d] == ref.shape[d];
  if (!same) {
    return value_error(arg_error_prefix(name, arg) + "expected shape " + shape_string(ref) + " (" + ref_name +
                       "'s), got " + shape_string(v));
  }
  return Status::ok();
}

}  // namespace norms
}  // namespace gpuprims
