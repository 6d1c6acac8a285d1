// gemv vectorized: a warp per row with 16-byte loads (gemv_kernels.cuh); rows that are not
// contiguous and 16-byte aligned (dispatch's vec_rows) run warp_per_row.
#include "gpuprims/gemm/gemv_kernels.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {

Status gemv_vectorized(const GemvLaunch& l) {
  if (!l.params.vec_rows) return gemv_warp_per_row(l);
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gemv_warp_per_row_kernel<T, true><<<blocks_for(l.params.m, kGemvWarps), kGemvThreads, 0, l.stream>>>(l.params);
    return check_launch("gemv", l.stream);
  });
}

}  // namespace gemm
}  // namespace gpuprims
