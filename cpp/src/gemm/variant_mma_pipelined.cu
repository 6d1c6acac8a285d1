// mma_pipelined: mma.sync + ldmatrix + multi-stage cp.async pipeline (mma_pipelined.cuh) in
// MmaPipelinedConfig's tiling. float16 and bfloat16 (dispatch enforces it).
#include "gpuprims/gemm/mma_pipelined.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {
namespace {

template <class T, bool kAsync>
Status launch_config(const GemmLaunch& l) {
  using Cfg = MmaPipelinedConfig;
  GPUPRIMS_CUDA_CHECK("matmul", (configure_mma_kernel<T, kAsync, Cfg>()));
  const unsigned grid = tile_grid<Cfg::kTileM, Cfg::kTileN>(l.params);
  mma_pipelined_kernel<T, kAsync, Cfg><<<grid, Cfg::kThreads, Cfg::kSmemBytes, l.stream>>>(l.params);
  return check_launch("matmul", l.stream);
}

template <class T>
Status launch(const GemmLaunch& l) {
  // cp.async needs both operands' rows contiguous and 16-byte aligned; otherwise every chunk is
  // gathered element by element into the same shared layout.
  if (l.params.a_vec_rows && l.params.b_vec_rows) return launch_config<T, true>(l);
  return launch_config<T, false>(l);
}

}  // namespace

Status matmul_mma_pipelined(const GemmLaunch& l) {
  if (l.dtype == DType::kBFloat16) return launch<bfloat16_t>(l);
  return launch<half_t>(l);
}

}  // namespace gemm
}  // namespace gpuprims
