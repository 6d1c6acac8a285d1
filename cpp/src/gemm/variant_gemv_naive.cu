// gemv naive: a thread per row (gemv_kernels.cuh).
#include "gpuprims/gemm/gemv_kernels.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {

Status gemv_naive(const GemvLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gemv_thread_per_row_kernel<T><<<blocks_for(l.params.m, kGemvThreads), kGemvThreads, 0, l.stream>>>(l.params);
    return check_launch("gemv", l.stream);
  });
}

}  // namespace gemm
}  // namespace gpuprims
