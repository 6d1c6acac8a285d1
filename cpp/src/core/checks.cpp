#include "gpuprims/core/checks.hpp"

#include <cstdint>
#include <string>

namespace gpuprims {

std::string arg_error_prefix(const char* op, const char* arg) {
  return std::string(op) + ": argument '" + arg + "': ";
}

Status check_element_aligned(const char* op, const TensorView& v, const char* arg) {
  if (reinterpret_cast<uintptr_t>(v.data) % dtype_size(v.dtype) != 0) {
    return value_error(arg_error_prefix(op, arg) + "expected an address aligned to its " +
                       std::to_string(dtype_size(v.dtype)) + "-byte " + dtype_name(v.dtype) +
                       " elements, got a misaligned one");
  }
  return Status::ok();
}

Status check_distinct_elements(const char* op, const TensorView& out, const char* arg) {
  if (out.numel() == 0) return Status::ok();  // no element to share (frameworks give empty axes' neighbours stride 0)
  for (int d = 0; d < out.ndim; ++d) {
    if (out.shape[d] > 1 && out.strides[d] == 0) {
      return value_error(arg_error_prefix(op, arg) + "expected distinct elements, got a zero stride at axis " +
                         std::to_string(d));
    }
  }
  return Status::ok();
}

namespace {

// [first byte, one past the last byte) of a non-empty view; strides may be negative or zero.
void byte_extent(const TensorView& v, uintptr_t* begin, uintptr_t* end) {
  int64_t low = 0, high = 0;  // element offsets of the lowest and highest addressed elements
  for (int d = 0; d < v.ndim; ++d) {
    const int64_t span = (v.shape[d] - 1) * v.strides[d];
    (span < 0 ? low : high) += span;
  }
  const int64_t size = dtype_size(v.dtype);
  *begin = reinterpret_cast<uintptr_t>(v.data) + low * size;
  *end = reinterpret_cast<uintptr_t>(v.data) + (high + 1) * size;
}

bool same_layout(const TensorView& a, const TensorView& b) {
  if (a.data != b.data || dtype_size(a.dtype) != dtype_size(b.dtype) || a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d) {
    // A stride of a size-1 dimension never moves the address: frameworks set it freely.
    if (a.shape[d] != b.shape[d] || (a.shape[d] > 1 && a.strides[d] != b.strides[d])) return false;
  }
  return true;
}

}  // namespace

Status check_no_overlap(const char* op, const TensorView& in, const char* in_arg, const TensorView& out,
                        const char* out_arg, bool in_place_ok) {
  if (in.numel() == 0 || out.numel() == 0 || (in_place_ok && same_layout(in, out))) return Status::ok();
  uintptr_t in_begin, in_end, out_begin, out_end;
  byte_extent(in, &in_begin, &in_end);
  byte_extent(out, &out_begin, &out_end);
  if (in_end <= out_begin || out_end <= in_begin) return Status::ok();
  return value_error(std::string(op) + ": arguments '" + in_arg + "' and '" + out_arg + "': expected '" + out_arg +
                     "' to share no memory with '" + in_arg + "'" + (in_place_ok ? " (or to be it, in place)" : "") +
                     ", got overlapping memory");
}

}  // namespace gpuprims
