#pragma once
// What the bias_dropout_add kernel (and the CPU reference) receives, and the keep factors both
// draw. Plain C++, shared by host and device code.
#include <cstdint>

#include "gpuprims/core/config.hpp"
#include "gpuprims/core/fast_divmod.hpp"
#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/philox.hpp"

namespace gpuprims {
namespace norms {

struct DropoutParams {
  const void* x = nullptr;
  const void* bias = nullptr;  // row_len elements of x's dtype along the last axis, or null
  const void* residual = nullptr;
  void* out = nullptr;
  int64_t bias_stride = 1;
  RowLayout x_layout;         // (x, out), rows along the last axis
  RowLayout residual_layout;  // (residual, out)
  FastDivmod64 row_divmod;    // by row_len (>= 1)
  int64_t total = 0;          // elements
  uint64_t seed = 0;
  uint64_t offset = 0;
  uint32_t threshold = 0;  // keep iff bits >= threshold (philox.hpp)
  bool drop_all = false;   // p == 1
  bool training = true;    // false: out = x + bias + residual, no draws
  double scale = 1.0;      // 1 / (1 - p)
  // x, residual and out C-contiguous and 16-byte aligned, bias contiguous and aligned, row_len a
  // multiple of the vector width: element i at base + i, vectors never straddle rows.
  bool vec_ok = false;
};

// Elements per thread step: whole 16-byte vectors of `lanes` elements and whole Philox draws (4).
constexpr int dropout_step(int lanes) { return lanes > 4 ? lanes : 4; }

// The keep-scale of the kStep elements from i0 (a multiple of 4): scale or 0.
template <class Acc, int kStep>
GPUPRIMS_HD void dropout_factors(const DropoutParams& p, int64_t i0, Acc (&f)[kStep]) {
  const Acc scale = static_cast<Acc>(p.scale);
  if (!p.training) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int k = 0; k < kStep; ++k) f[k] = Acc(1);
    return;
  }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int d = 0; d < kStep / 4; ++d) {
    const Philox4x32 r = dropout_bits(uint64_t(i0 / 4 + d), p.seed, p.offset);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int l = 0; l < 4; ++l) f[d * 4 + l] = (!p.drop_all && r.v[l] >= p.threshold) ? scale : Acc(0);
  }
}

}  // namespace norms
}  // namespace gpuprims
