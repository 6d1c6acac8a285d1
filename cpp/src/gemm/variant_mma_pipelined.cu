// mma_pipelined: mma.sync + ldmatrix + multi-stage cp.async pipeline (mma_pipelined.cuh) in
// MmaPipelinedConfig's tiling, or MmaPipelinedLargeConfig's for large products on devices that
// allow its shared memory. float16 and bfloat16 (dispatch enforces it).
#include "gpuprims/gemm/mma_pipelined.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {
namespace {

template <class T, bool kAsync, class Cfg>
Status launch_config(const GemmLaunch& l) {
  GPUPRIMS_CUDA_CHECK("matmul", (configure_mma_kernel<T, kAsync, Cfg>()));
  const unsigned grid = tile_grid<Cfg::kTileM, Cfg::kTileN>(l.params);
  mma_pipelined_kernel<T, kAsync, Cfg><<<grid, Cfg::kThreads, Cfg::kSmemBytes, l.stream>>>(l.params);
  return check_launch("matmul", l.stream);
}

// Whether the product runs MmaPipelinedLargeConfig: a block of the device may opt in to its
// shared memory (Hopper's 227 KiB; not the A100's 163 or sm_86/89's 99), and the product has at
// least a wave of its tiles (kMinBlocks resident a SM). Below a wave its 256x128 tiles leave SMs
// idle where the 128x128 kernel, two blocks a SM, spreads the same work over more of them
// (1000^3: 32 large tiles for 132 SMs).
bool runs_large_tiles(const GemmLaunch& l) {
  using Large = MmaPipelinedLargeConfig;
  if (l.smem_optin < Large::kSmemBytes) return false;
  const int64_t tiles =
      (l.params.m + Large::kTileM - 1) / Large::kTileM * ((l.params.n + Large::kTileN - 1) / Large::kTileN) * l.params.batch;
  return tiles >= int64_t(l.sm_count) * Large::kMinBlocks;
}

template <class T>
Status launch(const GemmLaunch& l) {
  // cp.async needs both operands' rows contiguous and 16-byte aligned; otherwise every chunk is
  // gathered element by element into the same shared layout, in the 128x128 tiling only (one
  // instantiation fewer; those layouts are not the ones tuned for peak throughput).
  if (!(l.params.a_vec_rows && l.params.b_vec_rows)) return launch_config<T, false, MmaPipelinedConfig>(l);
  if (runs_large_tiles(l)) return launch_config<T, true, MmaPipelinedLargeConfig>(l);
  return launch_config<T, true, MmaPipelinedConfig>(l);
}

}  // namespace

Status matmul_mma_pipelined(const GemmLaunch& l) {
  if (l.dtype == DType::kBFloat16) return launch<bfloat16_t>(l);
  return launch<half_t>(l);
}

}  // namespace gemm
}  // namespace gpuprims
