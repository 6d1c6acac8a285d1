// coalesced: a thread per output, consecutive threads on consecutive columns (thread_per_output.cuh).
#include "gpuprims/gemm/thread_per_output.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {

Status matmul_coalesced(const GemmLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const unsigned grid = tile_grid<kThreadPerOutputY, kThreadPerOutputX>(l.params);
    thread_per_output_kernel<T, true><<<grid, dim3(kThreadPerOutputX, kThreadPerOutputY), 0, l.stream>>>(l.params);
    return check_launch("matmul", l.stream);
  });
}

}  // namespace gemm
}  // namespace gpuprims
