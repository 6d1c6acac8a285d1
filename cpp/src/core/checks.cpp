#include "gpuprims/core/checks.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace gpuprims {

std::string arg_error_prefix(const char* op, const char* arg) {
  return std::string(op) + ": argument '" + arg + "': ";
}

Status check_same_device(const char* op, const TensorView& first, const char* first_arg, const TensorView& v,
                         const char* arg) {
  if (v.device != first.device) {
    return value_error(std::string(op) + ": arguments '" + first_arg + "' and '" + arg +
                       "' must be on the same device, got " + first_arg + " on " + device_name(first.device) +
                       " and " + arg + " on " + device_name(v.device));
  }
  return Status::ok();
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

// The same element size, shape and strides (only the addresses may differ).
bool same_grid(const TensorView& a, const TensorView& b) {
  if (dtype_size(a.dtype) != dtype_size(b.dtype) || a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d) {
    // A stride of a size-1 dimension never moves the address: frameworks set it freely.
    if (a.shape[d] != b.shape[d] || (a.shape[d] > 1 && a.strides[d] != b.strides[d])) return false;
  }
  return true;
}

struct GridDim {
  int64_t stride;  // > 0, in elements
  int64_t count;   // > 1
  int64_t below;   // the span of the dimensions of smaller stride
};

// Whether rest = sum over k >= first of q_k * stride_k with |q_k| < count_k. Each stride exceeds
// `below`, so at most two digits (floor and ceiling) leave a remainder the smaller dimensions can
// reach; *budget bounds the search, and running out counts as a solution (conservative).
bool decomposes(int64_t rest, const GridDim* dims, int first, int n, int* budget) {
  if (first == n) return rest == 0;
  if (--*budget < 0) return true;
  const GridDim& g = dims[first];
  int64_t q = rest / g.stride;
  if (rest % g.stride != 0 && rest < 0) --q;  // floor
  for (int64_t digit : {q, q + 1}) {
    const int64_t r = rest - digit * g.stride;
    if (digit > -g.count && digit < g.count && r >= -g.below && r <= g.below &&
        decomposes(r, dims, first + 1, n, budget)) {
      return true;
    }
  }
  return false;
}

// Two views on one grid (same_grid), b at an offset from a: element i of a and element j of b
// coincide iff the offset is sum (i_k - j_k) * stride_k. Exact where every stride exceeds the span
// of the smaller ones (slices of one array: x[:, :d] and x[:, d:]); other grids (and offsets that
// are not whole elements) count as sharing.
bool grids_share_an_element(const TensorView& a, const TensorView& b) {
  const int64_t size = static_cast<int64_t>(dtype_size(a.dtype));
  const int64_t offset = static_cast<int64_t>(reinterpret_cast<uintptr_t>(b.data) - reinterpret_cast<uintptr_t>(a.data));
  if (offset % size != 0) return true;
  GridDim dims[kMaxArrayDims];
  int n = 0;
  for (int d = 0; d < a.ndim; ++d) {
    if (a.shape[d] == 1) continue;
    if (a.strides[d] == 0) return true;
    dims[n++] = GridDim{a.strides[d] < 0 ? -a.strides[d] : a.strides[d], a.shape[d], 0};
  }
  std::sort(dims, dims + n, [](const GridDim& x, const GridDim& y) { return x.stride > y.stride; });
  int64_t span = 0;
  for (int k = n - 1; k >= 0; --k) {
    if (dims[k].stride <= span) return true;  // not nested: no exact answer here
    dims[k].below = span;
    span += (dims[k].count - 1) * dims[k].stride;
  }
  int budget = 4096;
  return decomposes(offset / size, dims, 0, n, &budget);
}

}  // namespace

Status check_no_overlap(const char* op, const TensorView& in, const char* in_arg, const TensorView& out,
                        const char* out_arg, bool in_place_ok) {
  if (in.numel() == 0 || out.numel() == 0) return Status::ok();
  const bool grid = same_grid(in, out);
  if (in_place_ok && grid && in.data == out.data) return Status::ok();
  uintptr_t in_begin, in_end, out_begin, out_end;
  byte_extent(in, &in_begin, &in_end);
  byte_extent(out, &out_begin, &out_end);
  if (in_end <= out_begin || out_end <= in_begin) return Status::ok();
  if (grid && !grids_share_an_element(in, out)) return Status::ok();  // interleaved, e.g. x[:, :d] and x[:, d:]
  return value_error(std::string(op) + ": arguments '" + in_arg + "' and '" + out_arg + "': expected '" + out_arg +
                     "' to share no memory with '" + in_arg + "'" + (in_place_ok ? " (or to be it, in place)" : "") +
                     ", got overlapping memory");
}

}  // namespace gpuprims
