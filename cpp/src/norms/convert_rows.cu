// convert_rows: y = x converted to y's dtype, element by element over the rows' layout (any
// strides), on the GPU or, for CPU arrays, on the host. softmax(x, dtype=) runs it where the
// one-pass conversion (variant_row_on_chip_convert.cu) does not apply, then the op in place on y:
// the same values, torch's definition, at the bytes of a cast followed by the op.
#include <algorithm>
#include <cstdint>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 4;
constexpr int64_t kChunk = int64_t(kThreads) * kPerThread;  // elements of a row per block

template <class T, class Out>
GPUPRIMS_HD void convert_element(const NormParams& p, int64_t row, int64_t i) {
  const RowLayout& l = p.layout;
  const T* x = static_cast<const T*>(p.x) + l.x_row_offset(row);
  Out* y = static_cast<Out*>(p.y) + l.y_row_offset(row);
  y[i * l.y_elem_stride] = cast_value<Out>(x[i * l.x_elem_stride]);
}

// grid = (chunks of a row, rows in a grid-stride loop over y).
template <class T, class Out>
__global__ void __launch_bounds__(kThreads) convert_rows_kernel(NormParams p) {
  const int64_t begin = int64_t(blockIdx.x) * kChunk + threadIdx.x;
  for (int64_t row = blockIdx.y; row < p.layout.num_rows; row += gridDim.y) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int64_t i = begin + int64_t(k) * kThreads;
      if (i < p.layout.row_len) convert_element<T, Out>(p, row, i);
    }
  }
}

}  // namespace

Status convert_rows(const NormLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto in_tag) {
    return visit_float_dtype(l.y_dtype, [&](auto out_tag) -> Status {
      using T = typename decltype(in_tag)::type;
      using Out = typename decltype(out_tag)::type;
      const RowLayout& layout = l.params.layout;
      if (l.device < 0) {
        for (int64_t row = 0; row < layout.num_rows; ++row) {
          for (int64_t i = 0; i < layout.row_len; ++i) convert_element<T, Out>(l.params, row, i);
        }
        return Status::ok();
      }
      const int64_t chunks = ceil_div(layout.row_len, kChunk);
      if (layout.num_rows == 0 || chunks == 0) return Status::ok();
      const char* op = norm_op_name(l.op);
      if (chunks > 0x7fffffff) return value_error(std::string(op) + ": argument 'x': a row too long to convert");
      const dim3 grid(static_cast<unsigned>(chunks), static_cast<unsigned>(std::min<int64_t>(layout.num_rows, 65535)));
      convert_rows_kernel<T, Out><<<grid, kThreads, 0, l.stream>>>(l.params);
      return check_launch(op, l.stream);
    });
  });
}

}  // namespace norms
}  // namespace gpuprims
