// The CPU reference of transpose: out in its own C order, each element copied from x's permuted
// index, on the views as given (no merging, so it checks plan.cpp's work rather than sharing it).
#include <cstring>
#include <vector>

#include "launch.hpp"

namespace gpuprims {
namespace transpose_detail {

Status transpose_host(const TensorView& x, const int64_t* axes, const TensorView& out) {
  const int64_t count = out.numel();
  if (count == 0) return Status::ok();
  const size_t size = dtype_size(x.dtype);
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(out.data);
  std::vector<int64_t> index(out.ndim, 0);
  int64_t s = 0, d = 0;  // element offsets of `index` in x and out
  for (int64_t k = 0; k < count; ++k) {
    std::memcpy(dst + d * int64_t(size), src + s * int64_t(size), size);
    // The odometer: the last dimension fastest, carrying into the ones before it.
    for (int dim = out.ndim - 1; dim >= 0; --dim) {
      const int64_t sx = x.strides[axes[dim]], so = out.strides[dim];
      if (++index[dim] < out.shape[dim]) {
        s += sx;
        d += so;
        break;
      }
      s -= sx * (out.shape[dim] - 1);
      d -= so * (out.shape[dim] - 1);
      index[dim] = 0;
    }
  }
  return Status::ok();
}

}  // namespace transpose_detail
}  // namespace gpuprims
