#pragma once
// Launch of one streaming rung (row_streaming.cuh) for the launch's dtype.
#include "gpuprims/norms/row_streaming.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace norms {

template <RowKind kKind, NormAlgorithm kAlgorithm>
Status launch_streaming(const NormLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    NormParams params = l.params;
    void* args[] = {&params};
    const char* op = norm_op_name(l.op);
    GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(reinterpret_cast<const void*>(&row_streaming_kernel<T, kKind, kAlgorithm>),
                                             dim3(grid_for(l.params.layout.num_rows)), dim3(kStreamingThreads), args,
                                             0, l.stream));
    return check_launch(op, l.stream);
  });
}

}  // namespace norms
}  // namespace gpuprims
