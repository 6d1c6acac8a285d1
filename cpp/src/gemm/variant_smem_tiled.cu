// smem_tiled: 32x32 shared-memory tiles, a thread per output (smem_tiled.cuh).
#include "gpuprims/gemm/smem_tiled.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {

Status matmul_smem_tiled(const GemmLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const unsigned grid = tile_grid<kSmemTile, kSmemTile>(l.params);
    smem_tiled_kernel<T><<<grid, dim3(kSmemTile, kSmemTile), 0, l.stream>>>(l.params);
    return check_launch("matmul", l.stream);
  });
}

}  // namespace gemm
}  // namespace gpuprims
