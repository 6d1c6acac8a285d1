#pragma once
// What dispatch hands a gemm or gemv variant: one validated call.
#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/numeric.hpp"
#include "gpuprims/gemm.hpp"
#include "gpuprims/gemm/gemm_params.hpp"

namespace gpuprims {
namespace gemm {

struct GemmLaunch {
  GemmParams params;
  DType dtype;
  cudaStream_t stream;
  int device;      // GPU launches only: the device's id (for stream-ordered workspace)
  int sm_count;    // of the device (GPU launches only): variants that pick a tiling by problem size
  int smem_optin;  // bytes of shared memory a block of the device may opt in to (GPU launches only)
};

struct GemvLaunch {
  GemvParams params;
  DType dtype;
  cudaStream_t stream;
};

// One entry per variant, each in its own translation unit (variant_<name>.cu).
Status matmul_naive(const GemmLaunch& launch);        // every floating dtype
Status matmul_coalesced(const GemmLaunch& launch);    // every floating dtype
Status matmul_smem_tiled(const GemmLaunch& launch);   // every floating dtype
Status matmul_blocktile_1d(const GemmLaunch& launch); // float32
Status matmul_blocktile_2d(const GemmLaunch& launch); // float32
Status matmul_vectorized(const GemmLaunch& launch);   // float32
Status matmul_warptile(const GemmLaunch& launch);     // float32
Status matmul_wmma(const GemmLaunch& launch);         // float16, bfloat16, float32 as TF32
Status matmul_mma_pipelined(const GemmLaunch& launch); // float16, bfloat16
Status matmul_host(const GemmLaunch& launch);         // host.cpp: the CPU reference

Status gemv_naive(const GemvLaunch& launch);
Status gemv_warp_per_row(const GemvLaunch& launch);
Status gemv_vectorized(const GemvLaunch& launch);
Status gemv_host(const GemvLaunch& launch);  // host.cpp

// Blocks for `work` items of a grid-stride loop, within the grid's x limit.
inline unsigned grid_extent(int64_t tiles, int64_t limit) {
  return static_cast<unsigned>(tiles < 1 ? 1 : (tiles > limit ? limit : tiles));
}
// Blocks for a grid-stride loop over `items` items, `per_block` per block.
inline unsigned blocks_for(int64_t items, int64_t per_block) {
  return grid_extent((items + per_block - 1) / per_block, 0x7fffffff);
}

// The grid of a kernel looping over kTileM x kTileN output tiles with for_each_tile
// (tile_loop.cuh): one block per tile up to the grid's x limit.
template <int kTileM, int kTileN>
unsigned tile_grid(const GemmParams& p) {
  const int64_t tiles = (p.m + kTileM - 1) / kTileM * ((p.n + kTileN - 1) / kTileN) * p.batch;
  return grid_extent(tiles, 0x7fffffff);
}

}  // namespace gemm
}  // namespace gpuprims
