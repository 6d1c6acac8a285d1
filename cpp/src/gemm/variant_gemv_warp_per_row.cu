// gemv warp_per_row: a warp per row, scalar loads along K (gemv_kernels.cuh).
#include "gpuprims/gemm/gemv_kernels.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {

Status gemv_warp_per_row(const GemvLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gemv_warp_per_row_kernel<T, false><<<blocks_for(l.params.m, kGemvWarps), kGemvThreads, 0, l.stream>>>(l.params);
    return check_launch("gemv", l.stream);
  });
}

}  // namespace gemm
}  // namespace gpuprims
