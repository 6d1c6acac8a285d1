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
//
// The warptile step is a template over its tiling (BlockedConfig: block tile, K slice depth, warps,
// columns per thread, blocks per SM, A-slice padding, tile order), so that bench/tune/gemm_tune.cu
// times the same kernel code in other shapes; WarptileConfig and WarptileSmallConfig below are
// what the library runs.
// blocktile_2d and vectorized run the 128x128x8 / 256-thread configuration only.
#include "gpuprims/gemm/tile_loop.cuh"

namespace gpuprims {
namespace gemm {

// The four floats of a 16-byte vector into consecutive registers of an array.
__device__ __forceinline__ void unpack4(const float4 x, float* v) {
  v[0] = x.x;
  v[1] = x.y;
  v[2] = x.z;
  v[3] = x.w;
}

enum class Blocked128Step { kBlocktile2d, kVectorized, kWarptile };

// The tiling of the register-blocked kernel. Each thread owns 8 rows (two groups of 4) by
// kThreadN columns (kThreadN / 4 groups of 4) of the block tile; with warp tiling, a warp's 8 x 4
// lanes cover a (8 * 8) x (4 * kThreadN) warp tile (row groups 32 apart, column groups 16 apart)
// and kWarpsM x kWarpsN warps the block tile.
//   kTileK       K slice depth: values per barrier (a deeper slice halves the barriers and the
//                per-slice bookkeeping, at twice the shared memory)
//   kFetchParts  the next slice is fetched and stored in this many parts, each overlapping
//                kTileK / kFetchParts multiply steps: a 16-deep slice in 2 parts holds only the
//                8 prefetched values per operand that an 8-deep one does (registers), yet keeps
//                one barrier per 16 steps
//   kMinBlocks   __launch_bounds__ blocks per SM for the 16-byte-load instantiation (see
//                blocked_min_blocks): 2 caps registers at 128 for 256 threads
//   kPadA        words of padding per row of the transposed A slice (as[k][m]); 4 keeps float4
//                reads aligned and spreads the scalar transposed stores over more banks
//   kGroupM      rows of tiles per band of the tile order (for_each_tile)
template <int kTileM_, int kTileN_, int kTileK_, int kFetchParts_, int kWarpsM_, int kWarpsN_, int kThreadN_,
          int kMinBlocks_, int kPadA_, int kGroupM_>
struct BlockedConfig {
  static constexpr int kTileM = kTileM_, kTileN = kTileN_, kTileK = kTileK_, kFetchParts = kFetchParts_;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kThreadM = 8, kThreadN = kThreadN_;
  static constexpr int kMinBlocks = kMinBlocks_, kPadA = kPadA_, kGroupM = kGroupM_;
  static constexpr int kLda = kTileM + kPadA;  // words per k row of the transposed A slice
  static_assert(kTileM == kWarpsM * 8 * kThreadM && kTileN == kWarpsN * 4 * kThreadN,
                "the warps' tiles must cover the block tile");
  static_assert(kThreadN % 4 == 0 && kPadA % 4 == 0 && kTileK % 4 == 0, "float4 granularity");
  static_assert(kTileK % kFetchParts == 0, "parts of equal depth");
};

// The first rung's configuration (blocktile_2d, vectorized, and warptile before issue 6's tuning:
// 0.788x cuBLAS at 4096^3 on the H200 in the harness).
using Blocked128Base = BlockedConfig<128, 128, 8, 1, 2, 4, 8, 2, 0, 1>;
// The tilings of issue 6's tuning (one-line aliases; Blocked128Base restores the kernel before it).
// Measured on the H200 at 4096^3 (bench/tune/gemm_tune.cu, docs/gemm.md "Tuning"):
//   WarptileConfig       128x256x8, 8 warps of 64x64 (8x16 outputs a thread: 6 float4 shared
//                        loads per 128 FMAs instead of 4 per 64), one block per SM (241 registers),
//                        bands of 8 tile rows: 0.852x cuBLAS in the first sweep; the library's
//                        large-product tiling until session 12, now a harness candidate.
//   WarptileSmallConfig  128x128x16 slices fetched in two 8-deep parts (half the barriers and
//                        slice bookkeeping within the 128 registers of two blocks per SM), A rows
//                        padded to 132 words: 0.841x then, 0.860-0.872x in session 12 (the same as
//                        WarptileConfig); what the warptile variant runs (variant_warptile.cu:
//                        through WarptileStreamK on aligned rows, warptile_streamk.cuh).
using WarptileConfig = BlockedConfig<128, 256, 8, 1, 2, 4, 16, 1, 0, 8>;
using WarptileSmallConfig = BlockedConfig<128, 128, 16, 2, 2, 4, 8, 2, 4, 1>;

// The rows and columns of the tile a thread owns: rows row(0..7), columns col(0..kThreadN-1).
template <Blocked128Step kStep, class Cfg>
struct ThreadBlockMap {
  static constexpr int kRowStride = kStep == Blocked128Step::kWarptile ? 32 : 4;  // between groups of 4
  static constexpr int kColStride = kStep == Blocked128Step::kWarptile ? 16 : 4;
  int r0, c0;
  __device__ __forceinline__ explicit ThreadBlockMap(int t) {
    if constexpr (kStep == Blocked128Step::kWarptile) {
      const int warp = t / 32, lane = t % 32;
      const int wm = warp / Cfg::kWarpsN, wn = warp % Cfg::kWarpsN;
      const int lm = lane / 4, ln = lane % 4;  // 8 x 4 lanes
      r0 = wm * 8 * Cfg::kThreadM + lm * 4;
      c0 = wn * 4 * Cfg::kThreadN + ln * 4;
    } else {
      static_assert(Cfg::kThreads == 256 && Cfg::kTileM == 128 && Cfg::kTileN == 128 && Cfg::kThreadN == 8,
                    "blocktile_2d / vectorized: 16 x 16 threads, each an 8 x 8 square of a 128 x 128 tile");
      r0 = t / 16 * 8;
      c0 = t % 16 * 8;
    }
  }
  __device__ __forceinline__ int row(int i) const { return r0 + i / 4 * kRowStride + i % 4; }
  __device__ __forceinline__ int col(int j) const { return c0 + j / 4 * kColStride + j % 4; }
};

// Streams the K slices of one output tile: A (kTileM x kTileK) and B (kTileK x kTileN), held in
// registers between fetch (global) and store (shared). Everything that does not change along K
// (source pointers, the tile's bounds, the loader's mapping) is set once per tile, and fetch()
// advances the pointers by one slice, which keeps the register count of the vector path within
// the 128 that two resident blocks of 256 threads allow.
template <class Cfg, bool kVecLoads>
struct Blocked128Slices {
  static constexpr int kT = Cfg::kThreads, kTileM = Cfg::kTileM, kTileN = Cfg::kTileN, kTileK = Cfg::kTileK;
  // Vector mapping: float4 chunks of A rows (kQa per row) and of B rows (kQb per row); thread t
  // takes A chunk t % kQa of rows t / kQa + i * kRa and B chunk t % kQb of K rows t / kQb + i * kRb,
  // so a warp reads whole consecutive rows (B: 512 consecutive bytes per warp for 128 columns).
  static constexpr int kQa = kTileK / 4, kRa = kT / kQa, kVa = kTileM / kRa;
  static constexpr int kQb = kTileN / 4, kRb = kT / kQb, kVb = kTileK / kRb;
  static_assert(kT % kQa == 0 && kTileM % kRa == 0 && kT % kQb == 0 && kTileK % kRb == 0,
                "the threads must cover whole rows of float4 chunks");
  static constexpr int kParts = Cfg::kFetchParts;
  static_assert(kVa % kParts == 0 && kVb % kParts == 0, "each part fetches as many chunks");
  StridedTile<float, kTileM, kTileK, kT> a;  // the vector mapping uses a.v[4 * i + e] for chunk i
  StridedTile<float, kTileK, kTileN, kT> b;
  static_assert(sizeof(a.v) == kVa * 16 && sizeof(b.v) == kVb * 16, "both mappings hold the same values");
  const float* a_src;  // vector mapping: this thread's first element; scalar mapping: the slice origin
  const float* b_src;
  int64_t a_step, b_step;  // pointer advance per slice
  int m_left, n_left;      // rows / columns of the tile inside the matrix (vector mapping: from this thread's)
  bool a_rows_fastest, b_rows_fastest;

  // Dispatch chose the vector mapping only when both operands have unit column stride and aligned rows.
  // k_begin: the first K index streamed (a multiple of kTileK; Stream-K pieces start inside K).
  __device__ __forceinline__ Blocked128Slices(const GemmParams& p, int64_t z, int64_t m0, int64_t n0, int t,
                                              int64_t k_begin = 0) {
    m_left = clamp_left(p.m, m0, kTileM);
    n_left = clamp_left(p.n, n0, kTileN);
    a_rows_fastest = rows_contiguous(p.sa);
    b_rows_fastest = rows_contiguous(p.sb);
    a_step = kTileK * p.sa.col;
    b_step = kTileK * p.sb.row;
    if constexpr (kVecLoads) {
      a_src = static_cast<const float*>(p.a) + p.sa.offset(z, m0 + t / kQa, k_begin + (t % kQa) * 4);
      b_src = static_cast<const float*>(p.b) + p.sb.offset(z, k_begin + t / kQb, n0 + (t % kQb) * 4);
      m_left -= t / kQa;         // rows from this thread's first A row (may be <= 0)
      n_left -= (t % kQb) * 4;   // this thread's B columns inside (may be <= 0)
    } else {
      a_src = static_cast<const float*>(p.a) + p.sa.offset(z, m0, k_begin);
      b_src = static_cast<const float*>(p.b) + p.sb.offset(z, k_begin, n0);
    }
  }

  // Loads part `part` (0 .. kParts-1, a compile-time constant once the caller's loop is unrolled)
  // of slice k0, the next one in order, into registers: vector chunks [part, part + 1) * kVa / kParts
  // of A and likewise of B; the strided loader fetches the whole slice in part 0. The last part
  // advances the pointers to the next slice.
  __device__ __forceinline__ void fetch(const GemmParams& p, int64_t k0, int t, int part) {
    const int k_left = clamp_left(p.k, k0, kTileK);
    if constexpr (kVecLoads) {
#pragma unroll
      for (int ii = 0; ii < kVa / kParts; ++ii) {
        const int i = part * (kVa / kParts) + ii;
        fetch_vec4(a_src + i * kRa * p.sa.row, i * kRa < m_left, k_left - (t % kQa) * 4, a.v + 4 * i);
      }
#pragma unroll
      for (int ii = 0; ii < kVb / kParts; ++ii) {
        const int i = part * (kVb / kParts) + ii;
        fetch_vec4(b_src + i * kRb * p.sb.row, t / kQb + i * kRb < k_left, n_left, b.v + 4 * i);
      }
    } else if (part == 0) {
      a.fetch(a_src, p.sa.row, p.sa.col, m_left, k_left, t, a_rows_fastest);
      b.fetch(b_src, p.sb.row, p.sb.col, k_left, n_left, t, b_rows_fastest);
    }
    if (part == kParts - 1) {
      a_src += kVecLoads ? kTileK : a_step;  // the vector mapping implies unit column stride
      b_src += b_step;
    }
  }

  // Stores what fetch(.., part) loaded. as: the A slice transposed, as[k * kLda + m]; bs[k * kTileN + n].
  __device__ __forceinline__ void store(float* as, float* bs, int t, int part) const {
    if constexpr (kVecLoads) {
      const int m = t / kQa, k = (t % kQa) * 4;
#pragma unroll
      for (int ii = 0; ii < kVa / kParts; ++ii) {
        const int i = part * (kVa / kParts) + ii;
#pragma unroll
        for (int e = 0; e < 4; ++e) as[(k + e) * Cfg::kLda + m + i * kRa] = a.v[4 * i + e];
      }
#pragma unroll
      for (int ii = 0; ii < kVb / kParts; ++ii) {
        const int i = part * (kVb / kParts) + ii;
        *reinterpret_cast<float4*>(&bs[(t / kQb + i * kRb) * kTileN + (t % kQb) * 4]) =
            make_float4(b.v[4 * i], b.v[4 * i + 1], b.v[4 * i + 2], b.v[4 * i + 3]);
      }
    } else if (part == 0) {
      a.store(as, 1, Cfg::kLda, t, a_rows_fastest);  // transposed: as[k][m]
      b.store(bs, kTileN, 1, t, b_rows_fastest);
    }
  }

  // The whole slice k0, fetched and stored at once.
  __device__ __forceinline__ void load(const GemmParams& p, int64_t k0, float* as, float* bs, int t) {
#pragma unroll
    for (int part = 0; part < kParts; ++part) fetch(p, k0, t, part);
#pragma unroll
    for (int part = 0; part < kParts; ++part) store(as, bs, t, part);
  }

 private:
  // Four consecutive elements of a row starting at `src` (16-byte aligned when all four are
  // inside: dispatch proved rows aligned, and the column is a multiple of 4), zero outside.
  __device__ __forceinline__ static void fetch_vec4(const float* src, bool row_inside, int cols_left, float* v) {
    if (row_inside && cols_left >= 4) {
      unpack4(__ldg(reinterpret_cast<const float4*>(src)), v);
      return;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = row_inside && i < cols_left ? __ldg(src + i) : 0.0f;
  }
};

// Outer products of slice steps [k_begin, k_begin + kSteps): per step, 2 float4 of A and
// kThreadN / 4 float4 of B from shared memory feed 8 x kThreadN multiply-adds.
template <int kSteps, class Cfg, Blocked128Step kStep>
__device__ __forceinline__ void multiply_steps(const float* as, const float* bs, int k_begin,
                                               const ThreadBlockMap<kStep, Cfg>& map,
                                               float (&acc)[Cfg::kThreadM][Cfg::kThreadN]) {
  using Map = ThreadBlockMap<kStep, Cfg>;
#pragma unroll
  for (int step = 0; step < kSteps; ++step) {
    const int k = k_begin + step;
    float av[Cfg::kThreadM], bv[Cfg::kThreadN];
#pragma unroll
    for (int g = 0; g < Cfg::kThreadM / 4; ++g) {
      unpack4(*reinterpret_cast<const float4*>(&as[k * Cfg::kLda + map.r0 + g * Map::kRowStride]), &av[4 * g]);
    }
#pragma unroll
    for (int h = 0; h < Cfg::kThreadN / 4; ++h) {
      unpack4(*reinterpret_cast<const float4*>(&bs[k * Cfg::kTileN + map.c0 + h * Map::kColStride]), &bv[4 * h]);
    }
#pragma unroll
    for (int i = 0; i < Cfg::kThreadM; ++i) {
#pragma unroll
      for (int j = 0; j < Cfg::kThreadN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
  }
}

// Writes the thread's outputs. Full tiles with contiguous, 16-byte aligned C rows take 16-byte
// stores (vectorized, warptile); edge tiles and other layouts take predicated scalar stores. (One
// path per tile rather than a choice per 4 columns keeps the epilogue within the register budget
// of two resident blocks.)
template <class Cfg, Blocked128Step kStep>
__device__ __forceinline__ void store_outputs(const GemmParams& p, int64_t z, int64_t m0, int64_t n0,
                                              const ThreadBlockMap<kStep, Cfg>& map,
                                              const float (&acc)[Cfg::kThreadM][Cfg::kThreadN]) {
  const int m_left = clamp_left(p.m, m0, Cfg::kTileM), n_left = clamp_left(p.n, n0, Cfg::kTileN);
  float* c_tile = static_cast<float*>(p.c) + p.sc.offset(z, m0, n0);
  if (kStep != Blocked128Step::kBlocktile2d && p.c_vec_rows && m_left == Cfg::kTileM && n_left == Cfg::kTileN) {
#pragma unroll
    for (int i = 0; i < Cfg::kThreadM; ++i) {
      float* c_row = c_tile + map.row(i) * p.sc.row;
#pragma unroll
      for (int j = 0; j < Cfg::kThreadN; j += 4) {
        *reinterpret_cast<float4*>(c_row + map.col(j)) =
            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      }
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < Cfg::kThreadM; ++i) {
    const int r = map.row(i);
    if (r >= m_left) continue;
    float* c_row = c_tile + r * p.sc.row;
#pragma unroll
    for (int j = 0; j < Cfg::kThreadN; ++j) {
      const int col = map.col(j);
      if (col < n_left) c_row[col * p.sc.col] = acc[i][j];
    }
  }
}

// The double-buffered K loop of the warptile step: accumulates slices [k_begin, k_end) of one tile
// (k_begin a multiple of kTileK; slices is positioned at k_begin). as / bs: two buffers each.
// Invariant at the top of each step: the slice at k0 is in buffer `cur` and visible to every
// thread; the other buffer was last read in the previous step, which every thread finished before
// the barrier that ended it, so the parts of the next slice may land there while this one is
// multiplied. Ends with a barrier, so the buffers may be refilled at once.
template <class Cfg, bool kVecLoads, Blocked128Step kStep>
__device__ __forceinline__ void multiply_k_range(const GemmParams& p, Blocked128Slices<Cfg, kVecLoads>& slices,
                                                 int64_t k_begin, int64_t k_end, float* as, float* bs, int t,
                                                 const ThreadBlockMap<kStep, Cfg>& map,
                                                 float (&acc)[Cfg::kThreadM][Cfg::kThreadN]) {
  constexpr int kSliceA = Cfg::kTileK * Cfg::kLda, kSliceB = Cfg::kTileK * Cfg::kTileN;  // words
  constexpr int kPartSteps = Cfg::kTileK / Cfg::kFetchParts;
  if (k_begin < k_end) {
    slices.load(p, k_begin, as, bs, t);
    __syncthreads();
  }
  int cur = 0;
  for (int64_t k0 = k_begin; k0 < k_end; k0 += Cfg::kTileK) {
    const bool more = k0 + Cfg::kTileK < k_end;
    const float* as_cur = as + cur * kSliceA;
    const float* bs_cur = bs + cur * kSliceB;
    float* as_next = as + (cur ^ 1) * kSliceA;
    float* bs_next = bs + (cur ^ 1) * kSliceB;
#pragma unroll
    for (int part = 0; part < Cfg::kFetchParts; ++part) {
      if (more) slices.fetch(p, k0 + Cfg::kTileK, t, part);
      multiply_steps<kPartSteps>(as_cur, bs_cur, part * kPartSteps, map, acc);
      if (more) slices.store(as_next, bs_next, t, part);
    }
    cur ^= 1;
    __syncthreads();
  }
}

// __launch_bounds__ blocks per SM: the strided-loader instantiation (219+ registers) always runs one
// block per SM. sm_80's register allocator spills 16-deep slices (44 bytes in 2 parts) under the
// 128-register cap of two blocks, where sm_90's fits them and both fit 8-deep ones: sm_80 builds
// ask for one block per SM there. (The cap is applied here, not in the config type, so that host
// and device passes name the same kernel.)
template <class Cfg, bool kVecLoads>
constexpr int blocked_min_blocks() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  if (Cfg::kTileK > 8) return 1;
#endif
  return kVecLoads ? Cfg::kMinBlocks : 1;
}

// tile_end: runs only the tiles before it in TileOrder (the data-parallel waves ahead of a Stream-K
// launch for the rest: warptile_streamk.cuh).
template <Blocked128Step kStep, bool kVecLoads, class Cfg = Blocked128Base>
__global__ void __launch_bounds__(Cfg::kThreads, (blocked_min_blocks<Cfg, kVecLoads>()))
    blocked_128_kernel(GemmParams p, int64_t tile_end = INT64_MAX) {
  constexpr bool kDoubleBuffer = kStep == Blocked128Step::kWarptile;
  constexpr int kBuffers = kDoubleBuffer ? 2 : 1;
  constexpr int kSliceA = Cfg::kTileK * Cfg::kLda, kSliceB = Cfg::kTileK * Cfg::kTileN;  // words
  static_assert(kBuffers * (kSliceA + kSliceB) * 4 <= 48 * 1024, "static shared memory is limited to 48 KiB");
  __shared__ __align__(16) float as[kBuffers * kSliceA];  // as[k][m]: the A slice transposed
  __shared__ __align__(16) float bs[kBuffers * kSliceB];  // bs[k][n]
  const int t = threadIdx.x;
  const ThreadBlockMap<kStep, Cfg> map(t);
  for_each_tile<Cfg::kTileM, Cfg::kTileN, Cfg::kGroupM>(p, [&](int64_t z, int64_t m0, int64_t n0) {
    float acc[Cfg::kThreadM][Cfg::kThreadN] = {};
    Blocked128Slices<Cfg, kVecLoads> slices(p, z, m0, n0, t);
    if constexpr (kDoubleBuffer) {
      multiply_k_range<Cfg>(p, slices, 0, p.k, as, bs, t, map, acc);
    } else {
      for (int64_t k0 = 0; k0 < p.k; k0 += Cfg::kTileK) {
        slices.load(p, k0, as, bs, t);
        __syncthreads();
        multiply_steps<Cfg::kTileK>(as, bs, 0, map, acc);
        __syncthreads();  // the slices are overwritten by the next step
      }
    }
    store_outputs(p, z, m0, n0, map, acc);
  }, tile_end);
}

}  // namespace gemm
}  // namespace gpuprims
