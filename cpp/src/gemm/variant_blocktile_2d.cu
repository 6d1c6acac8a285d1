// blocktile_2d: the 128x128 register-blocked float32 kernel (blocktile_128.cuh), scalar global loads whatever the layout.
#include "gpuprims/gemm/blocktile_128.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {

Status matmul_blocktile_2d(const GemmLaunch& l) {
  const unsigned grid = tile_grid<Blocked128Base::kTileM, Blocked128Base::kTileN>(l.params);
  blocked_128_kernel<Blocked128Step::kBlocktile2d, false><<<grid, Blocked128Base::kThreads, 0, l.stream>>>(l.params);
  return check_launch("matmul", l.stream);
}

}  // namespace gemm
}  // namespace gpuprims
