#pragma once
// wmma: tensor cores through the portable nvcuda::wmma API. A 256-thread block computes a 128x128
// output tile in 32-deep K slices; each of its 8 warps (2 x 4) owns a 64x32 sub-tile as 4 x 2
// accumulator fragments of 16x16 in float32. Per K step a warp loads 4 A and 2 B fragments from
// shared memory and issues 8 mma_sync. Inputs: float16 and bfloat16 (m16n16k16), or float32
// rounded to TF32 (m16n16k8) when the caller allows it.
//
// The slices are staged with the strided loader (any layout, zero outside the matrix) in the
// element type, rows padded by 16 bytes so that the 8 rows a fragment load touches fall on
// different banks and every fragment pointer stays 32-byte aligned (wmma's requirement). The
// epilogue goes through a per-warp 16x16 float staging tile, so that edge tiles store with
// per-element predicates and the conversion to the output dtype happens once.
#include <mma.h>

#include "gpuprims/gemm/tile_loop.cuh"

namespace gpuprims {
namespace gemm {

constexpr int kWmmaTile = 128;  // M and N
constexpr int kWmmaTileK = 32;
constexpr int kWmmaThreads = 256;
constexpr int kWmmaFrag = 16;  // fragment M and N

// The element type in shared memory as wmma names it, the fragment precision, and the fragment K.
template <class T> struct WmmaTypes;
template <> struct WmmaTypes<half_t> {
  using Element = __half;
  using Precision = __half;
  static constexpr int kK = 16;
};
template <> struct WmmaTypes<bfloat16_t> {
  using Element = __nv_bfloat16;
  using Precision = __nv_bfloat16;
  static constexpr int kK = 16;
};
template <> struct WmmaTypes<float> {
  using Element = float;
  using Precision = nvcuda::wmma::precision::tf32;
  static constexpr int kK = 8;
};

template <class T>
__global__ void __launch_bounds__(kWmmaThreads) wmma_kernel(GemmParams p) {
  namespace wmma = nvcuda::wmma;
  using Types = WmmaTypes<T>;
  using Element = typename Types::Element;
  constexpr int kK = Types::kK;
  constexpr int kPad = 16 / sizeof(T);
  constexpr int kLdA = kWmmaTileK + kPad;  // as[m][k]
  constexpr int kLdB = kWmmaTile + kPad;   // bs[k][n]
  __shared__ __align__(32) T as[kWmmaTile * kLdA];
  __shared__ __align__(32) T bs[kWmmaTileK * kLdB];
  __shared__ __align__(32) float stage[kWmmaThreads / 32][kWmmaFrag * kWmmaFrag];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int wm = warp / 4 * 64, wn = warp % 4 * 32;  // the warp's sub-tile within the block tile
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* c = static_cast<T*>(p.c);
  const bool a_rows_fastest = rows_contiguous(p.sa);
  const bool b_rows_fastest = rows_contiguous(p.sb);
  const Element* as_e = reinterpret_cast<const Element*>(as);
  const Element* bs_e = reinterpret_cast<const Element*>(bs);

  for_each_tile<kWmmaTile, kWmmaTile>(p, [&](int64_t z, int64_t m0, int64_t n0) {
    const int m_left = clamp_left(p.m, m0, kWmmaTile), n_left = clamp_left(p.n, n0, kWmmaTile);
    wmma::fragment<wmma::accumulator, kWmmaFrag, kWmmaFrag, kK, float> acc[4][2];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    }
    for (int64_t k0 = 0; k0 < p.k; k0 += kWmmaTileK) {
      const int k_left = clamp_left(p.k, k0, kWmmaTileK);
      {  // A, then B: 16 values per thread each, not 32 live at once (the accumulators take 64)
        StridedTile<T, kWmmaTile, kWmmaTileK, kWmmaThreads> ta;
        ta.fetch(a + p.sa.offset(z, m0, k0), p.sa.row, p.sa.col, m_left, k_left, t, a_rows_fastest);
        ta.store(as, kLdA, 1, t, a_rows_fastest);
        StridedTile<T, kWmmaTileK, kWmmaTile, kWmmaThreads> tb;
        tb.fetch(b + p.sb.offset(z, k0, n0), p.sb.row, p.sb.col, k_left, n_left, t, b_rows_fastest);
        tb.store(bs, kLdB, 1, t, b_rows_fastest);
      }
      __syncthreads();
      // Not unrolled: unrolling lets the compiler load every step's fragments up front, which runs
      // past 255 registers next to the 64 accumulator registers.
#pragma unroll 1
      for (int kk = 0; kk < kWmmaTileK; kk += kK) {
        wmma::fragment<wmma::matrix_a, kWmmaFrag, kWmmaFrag, kK, typename Types::Precision, wmma::row_major> fa[4];
        wmma::fragment<wmma::matrix_b, kWmmaFrag, kWmmaFrag, kK, typename Types::Precision, wmma::row_major> fb[2];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          wmma::load_matrix_sync(fa[i], as_e + (wm + i * kWmmaFrag) * kLdA + kk, kLdA);
          if constexpr (std::is_same<T, float>::value) {
#pragma unroll
            for (int e = 0; e < fa[i].num_elements; ++e) fa[i].x[e] = wmma::__float_to_tf32(fa[i].x[e]);
          }
        }
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          wmma::load_matrix_sync(fb[j], bs_e + kk * kLdB + wn + j * kWmmaFrag, kLdB);
          if constexpr (std::is_same<T, float>::value) {
#pragma unroll
            for (int e = 0; e < fb[j].num_elements; ++e) fb[j].x[e] = wmma::__float_to_tf32(fb[j].x[e]);
          }
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
          for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
      }
      __syncthreads();  // the slices are overwritten by the next step
    }
    // Epilogue: each fragment through the warp's staging tile; lanes 0-15 / 16-31 write 16
    // consecutive columns of alternate rows.
    float* my_stage = stage[warp];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        wmma::store_matrix_sync(my_stage, acc[i][j], kWmmaFrag, wmma::mem_row_major);
        __syncwarp();
        const int r0 = wm + i * kWmmaFrag, c0 = wn + j * kWmmaFrag;
        for (int e = lane; e < kWmmaFrag * kWmmaFrag; e += 32) {
          const int r = r0 + e / kWmmaFrag, col = c0 + e % kWmmaFrag;
          if (r < m_left && col < n_left) c[p.sc.offset(z, m0 + r, n0 + col)] = cast_value<T>(my_stage[e]);
        }
        __syncwarp();  // the staging tile is overwritten by the next fragment
      }
    }
  });
}

}  // namespace gemm
}  // namespace gpuprims
