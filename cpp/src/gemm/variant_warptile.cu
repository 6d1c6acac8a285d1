// warptile: the register-blocked float32 kernel (blocktile_128.cuh) in the tilings WarptileConfig
// (large products) and WarptileSmallConfig; 16-byte loads when rows are aligned.
#include "gpuprims/gemm/blocktile_128.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {
namespace {

template <class Cfg, bool kVecLoads>
void launch_config(const GemmLaunch& l) {
  const unsigned grid = tile_grid<Cfg::kTileM, Cfg::kTileN>(l.params);
  blocked_128_kernel<Blocked128Step::kWarptile, kVecLoads, Cfg><<<grid, Cfg::kThreads, 0, l.stream>>>(l.params);
}

// Whether the product fills the GPU with WarptileConfig's tiles: at least two waves of resident
// blocks (the large tiling runs kMinBlocks per SM). Below that its big tiles leave SMs idle, and
// the 128x128 tiling at two blocks per SM spreads the same work over more of them.
bool fills_large_tiles(const GemmLaunch& l) {
  const int64_t tiles = (l.params.m + WarptileConfig::kTileM - 1) / WarptileConfig::kTileM *
                        ((l.params.n + WarptileConfig::kTileN - 1) / WarptileConfig::kTileN) * l.params.batch;
  return tiles >= 2 * int64_t(l.sm_count) * WarptileConfig::kMinBlocks;
}

}  // namespace

Status matmul_warptile(const GemmLaunch& l) {
  // 16-byte global loads need both A and B rows contiguous and aligned (dispatch's a_vec_rows,
  // b_vec_rows); otherwise the strided scalar loader, in the small tiling only (one instantiation:
  // layouts that need it are not the ones tuned for peak throughput).
  if (l.params.a_vec_rows && l.params.b_vec_rows) {
    if (fills_large_tiles(l)) launch_config<WarptileConfig, true>(l);
    else launch_config<WarptileSmallConfig, true>(l);
  } else {
    launch_config<WarptileSmallConfig, false>(l);
  }
  return check_launch("matmul", l.stream);
}

}  // namespace gemm
}  // namespace gpuprims
