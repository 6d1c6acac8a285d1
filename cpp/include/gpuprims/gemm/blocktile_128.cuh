#pragma once
// The 128x128 register-blocked float32 kernels: blocktile_2d, vectorized and warptile.
//
// A 256-thread block computes a 128x128 output tile in 8-deep K slices; each thread owns 64
// outputs (8 rows x 8 columns) in registers and, per K step, reads 8 A and 8 B values from shared
// memory (four 16-byte loads) for 64 multiply-adds: an outer product. The A slice is stored
// transposed (as[k][m]) so that a thread's 8 rows are consecutive words at a fixed k, like its
// 8 B columns (bs[k][n]). The three steps of the ladder add, in order:
//   blocktile_2d  the register blocking above; scalar global loads, each thread an 8x8 square
//                 (threads 16 x 16 over the tile).
//   vectorized    16-byte global loads of A and B rows and 16-byte C stores, when dispatch found
//                 the rows contiguous and 16-byte aligned (else the scalar loads of blocktile_2d).
//   warptile      threads arranged by warp: each warp owns a 64x32 sub-tile, each lane two 4x4
//                 blocks 32 rows / 16 columns apart, so a warp's shared loads touch 128 (A) and
//                 64 (B) consecutive bytes: no bank conflicts, and the A/B values of a warp come
//                 from fewer, wider transactions. Shared memory is double-buffered: the next
//                 slice's global loads are issued before this slice's multiply-adds and land in
//                 the other buffer after them, so each slice costs one barrier and global latency
//                 hides behind arithmetic.
#include "gpuprims/gemm/tile_loop.cuh"

namespace gpuprims {
namespace gemm {

constexpr int kBt2dTile = 128;  // M and N
constexpr int kBt2dTileK = 8;
constexpr int kBt2dThreads = 256;
constexpr int kBt2dPerThread = 8;  // rows and columns a thread owns

enum class Blocked128Step { kBlocktile2d, kVectorized, kWarptile };

// The thread's first row (g = 0) and first row of its second group of 4 (g = 1), within the tile;
// the same for columns. Rows r0 + {0..3} and r1 + {0..3}; columns c0 + {0..3} and c1 + {0..3}.
template <Blocked128Step kStep>
struct ThreadBlockMap {
  int r0, r1, c0, c1;
  __device__ __forceinline__ explicit ThreadBlockMap(int t) {
    if constexpr (kStep == Blocked128Step::kWarptile) {
      const int warp = t / 32, lane = t % 32;
      const int wm = warp / 4, wn = warp % 4;  // 2 x 4 warps of 64 x 32
      const int lm = lane / 4, ln = lane % 4;  // 8 x 4 lanes, each 2 x 2 blocks of 4 x 4
      r0 = wm * 64 + lm * 4;
      r1 = r0 + 32;
      c0 = wn * 32 + ln * 4;
      c1 = c0 + 16;
    } else {
      r0 = t / 16 * kBt2dPerThread;
      r1 = r0 + 4;
      c0 = t % 16 * kBt2dPerThread;
      c1 = c0 + 4;
    }
  }
  __device__ __forceinline__ int row(int i) const { return (i < 4 ? r0 : r1) + i % 4; }
  __device__ __forceinline__ int col(int j) const { return (j < 4 ? c0 : c1) + j % 4; }
};

// Streams the K slices of one output tile: A (128 x 8) and B (8 x 128), four values per thread,
// held in registers between fetch (global) and store (shared). Everything that does not change
// along K (source pointers, the tile's bounds, the loader's mapping) is set once per tile, and
// fetch() advances the pointers by one slice, which keeps the register count of the vector path
// within the 128 that two resident blocks per SM allow.
template <bool kVecLoads>
struct Blocked128Slices {
  StridedTile<float, kBt2dTile, kBt2dTileK, kBt2dThreads> a;
  StridedTile<float, kBt2dTileK, kBt2dTile, kBt2dThreads> b;
  const float* a_src;  // vector mapping: this thread's first element; scalar mapping: the slice origin
  const float* b_src;
  int64_t a_step, b_step;  // pointer advance per slice
  int m_left, n_left;      // rows / columns of the tile inside the matrix (vector mapping: this thread's)
  bool a_rows_fastest, b_rows_fastest;

  // Vector mapping: A thread t takes row t/2, k (t%2)*4..+3 (a float4 of the A row); B thread t
  // takes k t/32, columns (t%32)*4..+3 (a float4 of the B row; a warp reads 512 consecutive
  // bytes). Dispatch chose it only when both operands have unit column stride and aligned rows.
  __device__ __forceinline__ Blocked128Slices(const GemmParams& p, int64_t z, int64_t m0, int64_t n0, int t) {
    m_left = clamp_left(p.m, m0, kBt2dTile);
    n_left = clamp_left(p.n, n0, kBt2dTile);
    a_rows_fastest = rows_contiguous(p.sa);
    b_rows_fastest = rows_contiguous(p.sb);
    a_step = kBt2dTileK * p.sa.col;
    b_step = kBt2dTileK * p.sb.row;
    if constexpr (kVecLoads) {
      a_src = static_cast<const float*>(p.a) + p.sa.offset(z, m0 + t / 2, (t % 2) * 4);
      b_src = static_cast<const float*>(p.b) + p.sb.offset(z, t / 32, n0 + (t % 32) * 4);
      m_left -= t / 2;          // > 0: this thread's A row is inside
      n_left -= (t % 32) * 4;   // this thread's B columns inside (may be <= 0)
    } else {
      a_src = static_cast<const float*>(p.a) + p.sa.offset(z, m0, 0);
      b_src = static_cast<const float*>(p.b) + p.sb.offset(z, 0, n0);
    }
  }

  // Loads slice k0 (the next one in order) into registers.
  __device__ __forceinline__ void fetch(const GemmParams& p, int64_t k0, int t) {
    const int k_left = clamp_left(p.k, k0, kBt2dTileK);
    if constexpr (kVecLoads) {
      fetch_vec4(a_src, m_left > 0, k_left - (t % 2) * 4, a.v);
      fetch_vec4(b_src, t / 32 < k_left, n_left, b.v);
    } else {
      a.fetch(a_src, p.sa.row, p.sa.col, m_left, k_left, t, a_rows_fastest);
      b.fetch(b_src, p.sb.row, p.sb.col, k_left, n_left, t, b_rows_fastest);
    }
    a_src += kVecLoads ? kBt2dTileK : a_step;  // the vector mapping implies unit column stride
    b_src += b_step;
  }

  __device__ __forceinline__ void store(float* as, float* bs, int t) const {
    if constexpr (kVecLoads) {
      const int m = t / 2, k = (t % 2) * 4;
#pragma unroll
      for (int i = 0; i < 4; ++i) as[(k + i) * kBt2dTile + m] = a.v[i];
      *reinterpret_cast<float4*>(&bs[(t / 32) * kBt2dTile + (t % 32) * 4]) =
          make_float4(b.v[0], b.v[1], b.v[2], b.v[3]);
    } else {
      a.store(as, 1, kBt2dTile, t, a_rows_fastest);  // transposed: as[k][m]
      b.store(bs, kBt2dTile, 1, t, b_rows_fastest);
    }
  }

 private:
  // Four consecutive elements of a row starting at `src` (16-byte aligned when all four are
  // inside: dispatch proved rows aligned, and the column is a multiple of 4), zero outside.
  __device__ __forceinline__ static void fetch_vec4(const float* src, bool row_inside, int cols_left, float* v) {
    if (row_inside && cols_left >= 4) {
      const float4 x = __ldg(reinterpret_cast<const float4*>(src));
      v[0] = x.x;
      v[1] = x.y;
      v[2] = x.z;
      v[3] = x.w;
      return;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = row_inside && i < cols_left ? __ldg(src + i) : 0.0f;
  }
};

template <Blocked128Step kStep>
__device__ __forceinline__ void multiply_slice(const float* as, const float* bs, const ThreadBlockMap<kStep>& map,
                                               float (&acc)[kBt2dPerThread][kBt2dPerThread]) {
#pragma unroll
  for (int k = 0; k < kBt2dTileK; ++k) {
    const float4 a_lo = *reinterpret_cast<const float4*>(&as[k * kBt2dTile + map.r0]);
    const float4 a_hi = *reinterpret_cast<const float4*>(&as[k * kBt2dTile + map.r1]);
    const float4 b_lo = *reinterpret_cast<const float4*>(&bs[k * kBt2dTile + map.c0]);
    const float4 b_hi = *reinterpret_cast<const float4*>(&bs[k * kBt2dTile + map.c1]);
    const float av[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
    const float bv[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
    for (int i = 0; i < kBt2dPerThread; ++i) {
#pragma unroll
      for (int j = 0; j < kBt2dPerThread; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
  }
}

// Writes the thread's 64 outputs. Full tiles with contiguous, 16-byte aligned C rows take 16-byte
// stores (vectorized, warptile); edge tiles and other layouts take predicated scalar stores. (One
// path per tile rather than a choice per 4 columns keeps the epilogue within the register budget
// of two resident blocks.)
template <Blocked128Step kStep>
__device__ __forceinline__ void store_outputs(const GemmParams& p, int64_t z, int64_t m0, int64_t n0,
                                              const ThreadBlockMap<kStep>& map,
                                              const float (&acc)[kBt2dPerThread][kBt2dPerThread]) {
  const int m_left = clamp_left(p.m, m0, kBt2dTile), n_left = clamp_left(p.n, n0, kBt2dTile);
  float* c_tile = static_cast<float*>(p.c) + p.sc.offset(z, m0, n0);
  if (kStep != Blocked128Step::kBlocktile2d && p.c_vec_rows && m_left == kBt2dTile && n_left == kBt2dTile) {
#pragma unroll
    for (int i = 0; i < kBt2dPerThread; ++i) {
      float* c_row = c_tile + map.row(i) * p.sc.row;
      *reinterpret_cast<float4*>(c_row + map.c0) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      *reinterpret_cast<float4*>(c_row + map.c1) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < kBt2dPerThread; ++i) {
    const int r = map.row(i);
    if (r >= m_left) continue;
    float* c_row = c_tile + r * p.sc.row;
#pragma unroll
    for (int j = 0; j < kBt2dPerThread; ++j) {
      const int col = map.col(j);
      if (col < n_left) c_row[col * p.sc.col] = acc[i][j];
    }
  }
}

template <Blocked128Step kStep, bool kVecLoads>
__global__ void __launch_bounds__(kBt2dThreads, kVecLoads ? 2 : 1) blocked_128_kernel(GemmParams p) {
  constexpr bool kDoubleBuffer = kStep == Blocked128Step::kWarptile;
  constexpr int kBuffers = kDoubleBuffer ? 2 : 1;
  constexpr int kSliceWords = kBt2dTileK * kBt2dTile;
  __shared__ __align__(16) float as[kBuffers * kSliceWords];  // as[k][m]: the A slice transposed
  __shared__ __align__(16) float bs[kBuffers * kSliceWords];  // bs[k][n]
  const int t = threadIdx.x;
  const ThreadBlockMap<kStep> map(t);
  for_each_tile<kBt2dTile, kBt2dTile>(p, [&](int64_t z, int64_t m0, int64_t n0) {
    float acc[kBt2dPerThread][kBt2dPerThread] = {};
    Blocked128Slices<kVecLoads> slices(p, z, m0, n0, t);
    if constexpr (kDoubleBuffer) {
      // Invariant at the top of each step: the slice at k0 is in buffer `cur` and visible to every
      // thread; the other buffer was last read in the previous step, which every thread finished
      // before the barrier that ended it.
      if (p.k > 0) {
        slices.fetch(p, 0, t);
        slices.store(as, bs, t);
        __syncthreads();
      }
      int cur = 0;
      for (int64_t k0 = 0; k0 < p.k; k0 += kBt2dTileK) {
        const bool more = k0 + kBt2dTileK < p.k;
        if (more) slices.fetch(p, k0 + kBt2dTileK, t);
        multiply_slice(as + cur, bs + cur, map, acc);
        cur = kSliceWords - cur;
        if (more) slices.store(as + cur, bs + cur, t);
        __syncthreads();
      }
    } else {
      for (int64_t k0 = 0; k0 < p.k; k0 += kBt2dTileK) {
        slices.fetch(p, k0, t);
        slices.store(as, bs, t);
        __syncthreads();
        multiply_slice(as, bs, map, acc);
        __syncthreads();  // the slices are overwritten by the next step
      }
    }
    store_outputs(p, z, m0, n0, map, acc);
  });
}

}  // namespace gemm
}  // namespace gpuprims
