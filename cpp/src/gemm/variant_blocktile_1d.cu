// blocktile_1d: 64x64 tiles, 8 outputs of a column per thread (blocktile_1d.cuh). float32 only.
#include "gpuprims/gemm/blocktile_1d.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {

Status matmul_blocktile_1d(const GemmLaunch& l) {
  blocktile_1d_kernel<<<tile_grid<kBt1dTileM, kBt1dTileN>(l.params), kBt1dThreads, 0, l.stream>>>(l.params);
  return check_launch("matmul", l.stream);
}

}  // namespace gemm
}  // namespace gpuprims
