#pragma once
// blocktile_1d: a 512-thread block computes a 64x64 output tile in 8-deep K slices; each thread
// owns 8 consecutive rows of one column. Per K step a thread reads one B value (its column) and
// 8 A values (a broadcast: a warp's 32 threads share their 8 rows) and does 8 multiply-adds, so
// shared-memory traffic per multiply-add drops from 2 loads (smem_tiled) to 9/8.
#include "gpuprims/gemm/tile_loop.cuh"

namespace gpuprims {
namespace gemm {

constexpr int kBt1dTileM = 64;
constexpr int kBt1dTileN = 64;
constexpr int kBt1dTileK = 8;
constexpr int kBt1dRowsPerThread = 8;
constexpr int kBt1dThreads = kBt1dTileM * kBt1dTileN / kBt1dRowsPerThread;  // 512

__global__ void __launch_bounds__(kBt1dThreads) blocktile_1d_kernel(GemmParams p) {
  __shared__ float as[kBt1dTileM * kBt1dTileK];  // as[m * kTileK + k]
  __shared__ float bs[kBt1dTileK * kBt1dTileN];  // bs[k * kTileN + n]
  const int t = threadIdx.x;
  const int col = t % kBt1dTileN;
  const int row0 = t / kBt1dTileN * kBt1dRowsPerThread;
  const float* a = static_cast<const float*>(p.a);
  const float* b = static_cast<const float*>(p.b);
  float* c = static_cast<float*>(p.c);
  const bool a_rows_fastest = rows_contiguous(p.sa);
  const bool b_rows_fastest = rows_contiguous(p.sb);
  for_each_tile<kBt1dTileM, kBt1dTileN>(p, [&](int64_t z, int64_t m0, int64_t n0) {
    const int m_left = clamp_left(p.m, m0, kBt1dTileM), n_left = clamp_left(p.n, n0, kBt1dTileN);
    float acc[kBt1dRowsPerThread] = {};
    for (int64_t k0 = 0; k0 < p.k; k0 += kBt1dTileK) {
      const int k_left = clamp_left(p.k, k0, kBt1dTileK);
      StridedTile<float, kBt1dTileM, kBt1dTileK, kBt1dThreads> ta;
      StridedTile<float, kBt1dTileK, kBt1dTileN, kBt1dThreads> tb;
      ta.fetch(a + p.sa.offset(z, m0, k0), p.sa.row, p.sa.col, m_left, k_left, t, a_rows_fastest);
      tb.fetch(b + p.sb.offset(z, k0, n0), p.sb.row, p.sb.col, k_left, n_left, t, b_rows_fastest);
      ta.store(as, kBt1dTileK, 1, t, a_rows_fastest);
      tb.store(bs, kBt1dTileN, 1, t, b_rows_fastest);
      __syncthreads();
#pragma unroll
      for (int k = 0; k < kBt1dTileK; ++k) {
        const float bv = bs[k * kBt1dTileN + col];
#pragma unroll
        for (int i = 0; i < kBt1dRowsPerThread; ++i) acc[i] += as[(row0 + i) * kBt1dTileK + k] * bv;
      }
      __syncthreads();  // the slices are overwritten by the next step
    }
    if (col < n_left) {
#pragma unroll
      for (int i = 0; i < kBt1dRowsPerThread; ++i) {
        if (row0 + i < m_left) c[p.sc.offset(z, m0 + row0 + i, n0 + col)] = acc[i];
      }
    }
  });
}

}  // namespace gemm
}  // namespace gpuprims
