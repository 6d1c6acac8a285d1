#pragma once
// The arguments of one matmul or gemv launch, as kernels see them. Plain C++ (host and device):
// dispatch fills it, the CPU reference reads it too. Every size, stride and offset is int64 and
// counted in elements; strides may be negative or zero (a broadcast operand has batch stride 0).
#include <cstdint>
#include <type_traits>

#include "gpuprims/core/config.hpp"

namespace gpuprims {
namespace gemm {

// fp16 / bf16 / fp32 accumulate in float32; float64 in float64.
template <class T>
using acc_t = std::conditional_t<std::is_same<T, double>::value, double, float>;

// A strided matrix: element (r, c) of batch b is at data[b * batch + r * row + c * col].
struct MatrixStrides {
  int64_t batch;
  int64_t row;
  int64_t col;
  GPUPRIMS_HD int64_t offset(int64_t b, int64_t r, int64_t c) const { return b * batch + r * row + c * col; }
};

struct GemmParams {
  const void* a;  // (batch, M, K)
  const void* b;  // (batch, K, N)
  void* c;        // (batch, M, N)
  int64_t batch, m, n, k;
  MatrixStrides sa, sb, sc;
  // Set by dispatch for the vectorized paths: A rows (K contiguous), B rows (N contiguous) and C
  // rows start on 16-byte boundaries in every batch, so a row segment of 4 floats at a column
  // multiple of 4 is one aligned float4.
  bool a_vec_rows;
  bool b_vec_rows;
  bool c_vec_rows;
};

struct GemvParams {
  const void* a;  // (M, K)
  const void* x;  // (K,)
  void* y;        // (M,)
  int64_t m, k;
  int64_t a_row, a_col, x_stride, y_stride;
  bool vec_rows;  // A rows and x contiguous and 16-byte aligned: 16-byte loads along K
};

}  // namespace gemm
}  // namespace gpuprims
