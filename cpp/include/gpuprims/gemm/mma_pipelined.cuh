#pragma once
// mma_pipelined: float16 / bfloat16 on tensor cores through mma.sync m16n8k16, fed by ldmatrix
// from swizzled shared memory that a 3-stage cp.async pipeline fills.
//
// A 256-thread block computes a 128x128 output tile in 32-deep K slices; its 8 warps (2 x 4) each
// own 64x32 outputs as 4 x 4 m16n8 accumulator fragments (64 float32 registers). Per 16-deep step a
// warp issues 4 ldmatrix.x4 for A (16x16 each), 2 ldmatrix.x4.trans for B (16x16 each, two n8
// fragments) and 16 mma.sync.
//
// Pipeline: slices kt+1 and kt+2 are in flight (cp.async, one commit group per slice) while slice kt
// is multiplied. At the top of step kt a thread waits until at most one of its groups is pending
// (slice kt has landed) and the block synchronizes, which also proves every warp done with slice
// kt-1, whose stage is then refilled with slice kt+2.
//
// Shared memory, per stage: A as 128 rows of 64 bytes (32 K values), B as 32 rows of 256 bytes
// (128 N values), in 16-byte chunks. An ldmatrix phase reads 8 rows at one logical chunk; the
// swizzles spread them over all 32 banks:
//   A: chunk c of row r is stored at chunk c ^ ((r / 2) % 4)  (two 64-byte rows per 128-byte line)
//   B: chunk c of row k is stored at chunk c ^ (k % 8)        (within its aligned group of 8)
//
// Loads: with A and B rows contiguous and 16-byte aligned (dispatch's a_vec_rows / b_vec_rows:
// kAsync), every full 16-byte chunk is one cp.async; chunks that cross the matrix edge, and every
// chunk of other layouts (transposed, strided, misaligned operands), are gathered element by
// element (zero outside the matrix) and stored synchronously into the same swizzled place.
#include <cstdint>
#include <type_traits>

#include "gpuprims/gemm/tile_loop.cuh"
#include "gpuprims/util/ptx_sm80.cuh"

namespace gpuprims {
namespace gemm {

constexpr int kMmaTile = 128;  // M and N
constexpr int kMmaTileK = 32;
constexpr int kMmaThreads = 256;
constexpr int kMmaStages = 3;
constexpr int kMmaStageBytesA = kMmaTile * kMmaTileK * 2;
constexpr int kMmaStageBytesB = kMmaTileK * kMmaTile * 2;
constexpr int kMmaStageBytes = kMmaStageBytesA + kMmaStageBytesB;  // 16 KiB; 3 stages: the 48 KiB static limit
// Two resident blocks per SM need <= 128 registers a thread: sm_90's register allocator fits the
// kernel in 128 without spilling, sm_80's does not (72-80 bytes of spills), so sm_80 keeps one block.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr int kMmaMinBlocks = 1;
#else
constexpr int kMmaMinBlocks = 2;
#endif

__device__ __forceinline__ int swizzle_a(int r, int c) { return r * 64 + ((c ^ ((r >> 1) & 3)) << 4); }
__device__ __forceinline__ int swizzle_b(int k, int c) { return k * 256 + ((c ^ (k & 7)) << 4); }

// 8 elements at src, src + stride, ..., the first `count` real, the rest zero, as 16 bytes.
template <class T>
__device__ __forceinline__ uint4 gather_chunk(const T* src, int64_t stride, int count) {
  uint32_t w[4];
#pragma unroll
  for (int e = 0; e < 8; e += 2) {
    const uint32_t lo = e < count ? src[e * stride].bits : 0u;
    const uint32_t hi = e + 1 < count ? src[(e + 1) * stride].bits : 0u;
    w[e / 2] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Copies one 16-byte chunk of 8 elements (count of them inside the matrix) to shared memory.
template <bool kAsync, class T>
__device__ __forceinline__ void copy_chunk(const T* src, int64_t stride, int count, unsigned char* dst) {
  if (kAsync && count == 8) {
    ptx::cp_async_16(ptx::shared_address(dst), src);
  } else {
    *reinterpret_cast<uint4*>(dst) = gather_chunk(src, stride, count);
  }
}

__device__ __forceinline__ int clamp_chunk(int64_t left) { return left <= 0 ? 0 : (left >= 8 ? 8 : static_cast<int>(left)); }

// Streams the K slices of one output tile into the stages. Thread t copies chunks t and t + 256 of
// each slice: A rows t/4 and t/4 + 64 at chunk t%4, B rows (K) t/16 and t/16 + 16 at chunk t%16.
// The second chunk of each operand lies a fixed distance from the first, in global memory and in
// the swizzled stage alike (the swizzles depend on row / 2 % 4 and row % 8), so a thread keeps one
// source pointer per operand, advanced by one slice per fetch.
template <bool kAsync, class T>
struct MmaSliceLoader {
  const T* a_src;  // A(m0 + t/4, k0 + 8 (t%4)) of the next slice
  const T* b_src;  // B(k0 + t/16, n0 + 8 (t%16)) of the next slice
  int64_t k_next;  // the next slice's k0
  int a_rows_inside;  // of this thread's two A rows, how many lie inside (0, 1 or 2)
  int b_cols_left;    // columns of this thread's B chunk inside the matrix (may be <= 0)
  int a_offset, b_offset;  // this thread's first chunk in a stage, bytes

  __device__ __forceinline__ MmaSliceLoader(const GemmParams& p, const T* a_tile, const T* b_tile, int m_left,
                                            int n_left, int t) {
    const int ar = t / 4, ac = t % 4, br = t / 16, bc = t % 16;
    a_src = a_tile + ar * p.sa.row + (8 * ac) * p.sa.col;
    b_src = b_tile + br * p.sb.row + (8 * bc) * p.sb.col;
    k_next = 0;
    a_rows_inside = (ar < m_left) + (ar + 64 < m_left);
    b_cols_left = n_left - 8 * bc;
    a_offset = swizzle_a(ar, ac);
    b_offset = kMmaStageBytesA + swizzle_b(br, bc);
  }

  __device__ __forceinline__ void load_next(const GemmParams& p, unsigned char* stage, int t) {
    const int a_count = clamp_chunk(p.k - k_next - 8 * (t % 4));
    copy_chunk<kAsync>(a_src, p.sa.col, a_rows_inside > 0 ? a_count : 0, stage + a_offset);
    copy_chunk<kAsync>(a_src + 64 * p.sa.row, p.sa.col, a_rows_inside > 1 ? a_count : 0,
                       stage + a_offset + 64 * 64);
    const int b_count = clamp_chunk(b_cols_left);
    const int64_t b_row = k_next + t / 16;
    copy_chunk<kAsync>(b_src, p.sb.col, b_row < p.k ? b_count : 0, stage + b_offset);
    copy_chunk<kAsync>(b_src + 16 * p.sb.row, p.sb.col, b_row + 16 < p.k ? b_count : 0, stage + b_offset + 16 * 256);
    a_src += kMmaTileK * p.sa.col;
    b_src += kMmaTileK * p.sb.row;
    k_next += kMmaTileK;
  }
};

template <class T, bool kAsync>
__global__ void __launch_bounds__(kMmaThreads, kMmaMinBlocks) mma_pipelined_kernel(GemmParams p) {
  constexpr bool kBf16 = std::is_same<T, bfloat16_t>::value;
  __shared__ __align__(128) unsigned char smem[kMmaStages * kMmaStageBytes];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int wm = warp / 4 * 64, wn = warp % 4 * 32;  // the warp's 64x32 sub-tile
  const uint32_t smem_shared = ptx::shared_address(smem);
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* c = static_cast<T*>(p.c);
  for_each_tile<kMmaTile, kMmaTile>(p, [&](int64_t z, int64_t m0, int64_t n0) {
    const int m_left = clamp_left(p.m, m0, kMmaTile), n_left = clamp_left(p.n, n0, kMmaTile);
    const T* a_tile = a + p.sa.offset(z, m0, 0);
    const T* b_tile = b + p.sb.offset(z, 0, n0);
    const int64_t k_slices = (p.k + kMmaTileK - 1) / kMmaTileK;
    float acc[4][4][4] = {};  // [m16 fragment][n8 fragment][register]
    MmaSliceLoader<kAsync, T> loader(p, a_tile, b_tile, m_left, n_left, t);
#pragma unroll
    for (int s = 0; s < kMmaStages - 1; ++s) {
      if (s < k_slices) loader.load_next(p, smem + s * kMmaStageBytes, t);
      ptx::cp_async_commit();  // one group per slice, empty or not, so that the wait count below holds
    }
    for (int64_t kt = 0; kt < k_slices; ++kt) {
      ptx::cp_async_wait<kMmaStages - 2>();  // this thread's copies of slice kt have landed
      __syncthreads();                        // everyone's have, and everyone is done with slice kt-1
      const int64_t next = kt + kMmaStages - 1;
      if (next < k_slices) loader.load_next(p, smem + (next % kMmaStages) * kMmaStageBytes, t);
      ptx::cp_async_commit();
      const uint32_t a_stage = smem_shared + static_cast<uint32_t>(kt % kMmaStages) * kMmaStageBytes;
      const uint32_t b_stage = a_stage + kMmaStageBytesA;
#pragma unroll
      for (int kk = 0; kk < kMmaTileK; kk += 16) {
        uint32_t af[4][4], bf[2][4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          ptx::ldmatrix_x4(af[i], a_stage + swizzle_a(wm + 16 * i + lane % 16, kk / 8 + lane / 16));
        }
#pragma unroll
        for (int jp = 0; jp < 2; ++jp) {
          ptx::ldmatrix_x4_trans(bf[jp], b_stage + swizzle_b(kk + lane % 8 + 8 * (lane / 8 % 2),
                                                             (wn + 16 * jp) / 8 + lane / 16));
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            ptx::mma_m16n8k16<kBf16>(acc[i][j], af[i], bf[j / 2][(j % 2) * 2], bf[j / 2][(j % 2) * 2 + 1]);
          }
        }
      }
    }
    ptx::cp_async_wait<0>();
    __syncthreads();  // every stage is free before the next tile's prologue refills them
    // Fragment (i, j) register e holds row wm + 16i + g + 8(e / 2), column wn + 8j + 2(lane % 4) + e % 2.
    const int g = lane / 4, tq = lane % 4;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int e2 = 0; e2 < 2; ++e2) {
        const int r = wm + 16 * i + g + 8 * e2;
        if (r >= m_left) continue;
        T* c_row = c + p.sc.offset(z, m0 + r, n0);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int col = wn + 8 * j + 2 * tq + e;
            if (col < n_left) c_row[col * p.sc.col] = cast_value<T>(acc[i][j][2 * e2 + e]);
          }
        }
      }
    }
  });
}

}  // namespace gemm
}  // namespace gpuprims
