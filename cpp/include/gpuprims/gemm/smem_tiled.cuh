#pragma once
// smem_tiled: a 32x32 block computes a 32x32 output tile, one element per thread, stepping along
// K in 32-wide slices of A and B staged in shared memory. Each global element is read once per
// tile instead of once per output (32x less global traffic than coalesced); every thread then
// reads a row of the A slice (a broadcast: the warp shares its row) and a column of the B slice
// (32 consecutive words: conflict-free). The slices are padded to 33 columns so that the loader's
// column-major writes (for transposed operands) do not conflict either.
#include "gpuprims/gemm/tile_loop.cuh"

namespace gpuprims {
namespace gemm {

constexpr int kSmemTile = 32;

template <class T>
__global__ void __launch_bounds__(kSmemTile* kSmemTile) smem_tiled_kernel(GemmParams p) {
  using Acc = acc_t<T>;
  constexpr int kPitch = kSmemTile + 1;
  __shared__ Acc as[kSmemTile * kPitch];  // as[m * kPitch + k]
  __shared__ Acc bs[kSmemTile * kPitch];  // bs[k * kPitch + n]
  const int t = threadIdx.y * kSmemTile + threadIdx.x;
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* c = static_cast<T*>(p.c);
  const bool a_rows_fastest = rows_contiguous(p.sa);
  const bool b_rows_fastest = rows_contiguous(p.sb);
  for_each_tile<kSmemTile, kSmemTile>(p, [&](int64_t z, int64_t m0, int64_t n0) {
    const int m_left = clamp_left(p.m, m0, kSmemTile), n_left = clamp_left(p.n, n0, kSmemTile);
    Acc sum = 0;
    for (int64_t k0 = 0; k0 < p.k; k0 += kSmemTile) {
      const int k_left = clamp_left(p.k, k0, kSmemTile);
      StridedTile<Acc, kSmemTile, kSmemTile, kSmemTile * kSmemTile> ta, tb;
      ta.fetch(a + p.sa.offset(z, m0, k0), p.sa.row, p.sa.col, m_left, k_left, t, a_rows_fastest);
      tb.fetch(b + p.sb.offset(z, k0, n0), p.sb.row, p.sb.col, k_left, n_left, t, b_rows_fastest);
      ta.store(as, kPitch, 1, t, a_rows_fastest);
      tb.store(bs, kPitch, 1, t, b_rows_fastest);
      __syncthreads();
#pragma unroll 8
      for (int k = 0; k < kSmemTile; ++k) sum += as[threadIdx.y * kPitch + k] * bs[k * kPitch + threadIdx.x];
      __syncthreads();  // the slices are overwritten by the next step
    }
    if (static_cast<int>(threadIdx.y) < m_left && static_cast<int>(threadIdx.x) < n_left) {
      c[p.sc.offset(z, m0 + threadIdx.y, n0 + threadIdx.x)] = cast_value<T>(sum);
    }
  });
}

}  // namespace gemm
}  // namespace gpuprims
