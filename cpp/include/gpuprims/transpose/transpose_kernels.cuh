#pragma once
// The transpose kernels (docs/transpose.md tells the ladder's story). Every kernel moves elements as
// unsigned integers of their size (the copy never looks at values: NaN payloads, -0.0 and bool
// bytes arrive as they left) and indexes in int64 (arrays beyond 2^31 elements).
#include <cstdint>

#include "gpuprims/transpose/transpose_params.hpp"

namespace gpuprims {
namespace transpose_detail {

// naive: a thread per output element in the destination's order (its fastest dimension last), each
// decoding its index into both offsets. Writes coalesce; the reads of a transpose stride through
// memory, one 32-byte sector for every element.
template <class E>
__global__ void elementwise_kernel(ElementwiseParams p) {
  const E* src = static_cast<const E*>(p.src);
  E* dst = static_cast<E*>(p.dst);
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < p.count; k += int64_t(gridDim.x) * blockDim.x) {
    int64_t s, d;
    p.dims.offsets(k, &s, &d);
    dst[d] = src[s];
  }
}

// Tile shape of the shared-memory kernels: kTile x kTile elements, a block of kTile x kRows threads,
// each moving kTile / kRows elements on the way in and as many on the way out.
constexpr int kTile = 32;
constexpr int kRows = 8;

// The tile `t` of p in (batch entry, tile row along j, tile column along i) order: the source and
// destination offsets of its element (0, 0), and its first i and j.
struct TileAt {
  int64_t src, dst, i0, j0;
};
__device__ __forceinline__ TileAt tile_at(const TileParams& p, int64_t t, int64_t tile_i, int64_t tile_j) {
  const int64_t b = p.div_tile_rows.div(t);
  const int64_t in_batch = t - b * p.tiles_i * p.tiles_j;
  const int64_t tj = p.div_tiles_i.div(in_batch);
  const int64_t ti = in_batch - tj * p.tiles_i;
  TileAt at;
  p.batch.offsets(b, &at.src, &at.dst);
  at.i0 = ti * tile_i;
  at.j0 = tj * tile_j;
  return at;
}

// smem_tiled (kPad = 0) and smem_padded (kPad = 1): a warp reads 32 consecutive i of one j (a run of
// the source), the block stores the tile as tile[j][i], and after a barrier a warp writes 32
// consecutive j of one i (a run of the destination), reading the tile down a column: tile[lane][i].
// Without padding the column's 32 elements lie 32 words apart, all in one bank (4-byte elements: a
// 32-way conflict, 32 shared-memory wavefronts per warp read); one padding element per row puts
// them in 32 different banks.
template <class E, int kPad>
__global__ void __launch_bounds__(kTile * kRows) tile_kernel(TileParams p) {
  __shared__ E tile[kTile][kTile + kPad];
  const E* src = static_cast<const E*>(p.src);
  E* dst = static_cast<E*>(p.dst);
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const TileAt at = tile_at(p, t, kTile, kTile);
    const int64_t i = at.i0 + tx;
#pragma unroll
    for (int r = ty; r < kTile; r += kRows) {
      const int64_t j = at.j0 + r;
      if (i < p.ni && j < p.nj) tile[r][tx] = src[at.src + i * p.src_i + j * p.src_j];
    }
    __syncthreads();
    const int64_t j = at.j0 + tx;
#pragma unroll
    for (int r = ty; r < kTile; r += kRows) {
      const int64_t ii = at.i0 + r;
      if (ii < p.ni && j < p.nj) dst[at.dst + ii * p.dst_i + j * p.dst_j] = tile[tx][r];
    }
    __syncthreads();  // the tile is refilled by the block's next tile
  }
}

// Words W of kPack elements E (packed and register_blocks): the word at `from`, its elements `step`
// apart, in one load where kWords (unit step, aligned), else element by element; `count` < kPack
// at the array's edge (0 outside it), the missing elements zero.
template <class E, class W, bool kWords>
__device__ __forceinline__ W load_word(const E* from, int64_t step, int64_t count) {
  constexpr int kPack = sizeof(W) / sizeof(E);
  if (kWords && count >= kPack) return *reinterpret_cast<const W*>(from);
  W word = 0;
#pragma unroll
  for (int e = 0; e < kPack; ++e) {
    if (e < count) word |= W(from[e * step]) << (8 * sizeof(E) * e);
  }
  return word;
}

template <class E, class W, bool kWords>
__device__ __forceinline__ void store_word(E* to, int64_t step, W word, int64_t count) {
  constexpr int kPack = sizeof(W) / sizeof(E);
  if (kWords && count >= kPack) {
    *reinterpret_cast<W*>(to) = word;
    return;
  }
#pragma unroll
  for (int e = 0; e < kPack; ++e) {
    if (e < count) to[e * step] = E(word >> (8 * sizeof(E) * e));
  }
}

// packed: smem_tiled's scheme on words W of kPack = sizeof(W) / sizeof(E) elements, so that a warp
// moves 32 words (256 bytes for 8-byte words) and a tile spans 32 words along i and along j: 64 x 64
// float32, 128 x 128 2-byte, 32 x 32 8-byte elements; bytes in 4-byte words, 128 x 128 (measured
// against smem_padded: docs/transpose.md). On the way in a warp reads 32 consecutive words of one j
// into a tile row; on the way out each thread gathers kPack consecutive j of one i (kPack element
// reads of the tile), packs them into a word and writes it, a warp's stores covering kPack
// destination runs of 32 / kPack words. The tile's word column c of row r sits at c ^ ((r / kPack) %
// kSwizzle) (kSwizzle words per 128 bytes): the gather's 32 / kPack rows then fall on distinct banks
// (the kPack lanes of one word share it) and a row's 32 words stay a permutation of the row, both
// phases conflict-free without padding. Words cut by the edge of the array move element by element
// (load_word, store_word).
// Preconditions (word_sides in word_tile_launch.cuh, both sides): unit strides along i in the source
// and j in the destination, every other stride a multiple of kPack, both arrays aligned to
// sizeof(W).
template <class E, class W>
__global__ void __launch_bounds__(kTile * kRows) packed_tile_kernel(TileParams p) {
  constexpr int kPack = sizeof(W) / sizeof(E);
  constexpr int kSpan = kTile * kPack;       // elements of the tile along i and along j
  constexpr int kRunWords = kTile / kPack;   // words of a destination run one warp store covers
  constexpr int kSwizzle = 128 / sizeof(W);
  constexpr int kBits = 8 * sizeof(E);
  __shared__ W tile[kSpan][kTile];  // [j][swizzled word along i]
  const auto column = [](int row, int c) { return c ^ ((row / kPack) % kSwizzle); };
  const E* src = static_cast<const E*>(p.src);
  E* dst = static_cast<E*>(p.dst);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int lane_word = tx % kRunWords, lane_i = tx / kRunWords;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const TileAt at = tile_at(p, t, kSpan, kSpan);
    const int64_t i = at.i0 + int64_t(tx) * kPack;  // the first element of this thread's word
    // Every load of the tile issued before the first store into it (kSpan / kRows words a thread).
    W words[kSpan / kRows];
#pragma unroll
    for (int k = 0; k < kSpan / kRows; ++k) {
      const int64_t j = at.j0 + ty + k * kRows;
      words[k] = load_word<E, W, true>(src + at.src + i + j * p.src_j, 1, i < p.ni && j < p.nj ? p.ni - i : 0);
    }
#pragma unroll
    for (int k = 0; k < kSpan / kRows; ++k) {
      const int r = ty + k * kRows;
      tile[r][column(r, tx)] = words[k];
    }
    __syncthreads();
    // Warp tasks: kSpan / kPack groups of kPack i's, times kPack runs of kRunWords words along j.
#pragma unroll
    for (int task = ty; task < kSpan; task += kRows) {
      const int r = (task / kPack) * kPack + lane_i;          // the tile's i
      const int w = (task % kPack) * kRunWords + lane_word;   // the word along j
      const int64_t ii = at.i0 + r, j = at.j0 + int64_t(w) * kPack;
      if (ii < p.ni && j < p.nj) {
        W word = 0;
#pragma unroll
        for (int e = 0; e < kPack; ++e) {
          const int row = w * kPack + e;
          word |= W(reinterpret_cast<const E*>(&tile[row][column(row, r / kPack)])[r % kPack]) << (kBits * e);
        }
        store_word<E, W, true>(dst + at.dst + ii * p.dst_i + j, 1, word, p.nj - j);
      }
    }
    __syncthreads();
  }
}

// register_block_kernel's pieces. The transposition of a kPack x kPack block in registers: in[k]
// holds elements (i + e, j + k) for e < kPack, out[e] gets (i + e, j + k) for k < kPack. By shifts
// and masks: any element size (for 4 and 8 bytes the compiler leaves only moves).
template <class E, class W, int kPack = sizeof(W) / sizeof(E)>
__device__ __forceinline__ void transpose_block_by_shifts(const W (&in)[kPack], W (&out)[kPack]) {
  constexpr int kBits = 8 * sizeof(E);
#pragma unroll
  for (int e = 0; e < kPack; ++e) {
    W word = 0;
#pragma unroll
    for (int k = 0; k < kPack; ++k) word |= W(E(in[k] >> (kBits * e))) << (kBits * k);
    out[e] = word;
  }
}

// The same with byte permutes where they apply (1- and 2-byte elements).
template <class E, class W, int kPack = sizeof(W) / sizeof(E)>
__device__ __forceinline__ void transpose_block(const W (&in)[kPack], W (&out)[kPack]) {
  if constexpr (sizeof(E) == 1 && sizeof(W) == 4) {
    // 4 x 4 bytes in two rounds of byte permutes: interleave row pairs, then pairs of pairs.
    const uint32_t ab_lo = __byte_perm(in[0], in[1], 0x5140), ab_hi = __byte_perm(in[0], in[1], 0x7362);
    const uint32_t cd_lo = __byte_perm(in[2], in[3], 0x5140), cd_hi = __byte_perm(in[2], in[3], 0x7362);
    out[0] = __byte_perm(ab_lo, cd_lo, 0x5410);
    out[1] = __byte_perm(ab_lo, cd_lo, 0x7632);
    out[2] = __byte_perm(ab_hi, cd_hi, 0x5410);
    out[3] = __byte_perm(ab_hi, cd_hi, 0x7632);
  } else if constexpr (sizeof(E) == 2 && sizeof(W) == 8) {
    // 4 x 4 halves: element e of each row sits in 32-bit half e / 2, 16-bit half e % 2.
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const unsigned pick = e % 2 ? 0x7632 : 0x5410;
      const auto part = [&](int k) { return uint32_t(in[k] >> (32 * (e / 2))); };
      out[e] = (uint64_t(__byte_perm(part(2), part(3), pick)) << 32) | __byte_perm(part(0), part(1), pick);
    }
  } else {
    transpose_block_by_shifts<E, W>(in, out);  // 4- and 8-byte elements: moves only
  }
}

// register_blocks: packed's 32 x 32-word tiles with the transposition moved into registers. A
// thread loads the same word column of kPack consecutive rows j (a kPack x kPack block of
// elements), transposes the block in registers (transpose_block), and stores the kPack words it
// now holds, each a run of kPack j's of one i, into tile[i][j word]. Every shared-memory access is
// then a whole word and the way out copies tile rows to destination rows word for word: per word
// one load and one store on each side, where packed gathers kPack element reads of the tile and
// shifts them together. The same XOR swizzle (column c of row r at c ^ ((r / kPack) % kSwizzle))
// keeps both phases conflict-free. 1- and 2-byte blocks transpose with byte permutes (PRMT), wider
// elements by moving 32-bit halves. Tiles wholly inside the array skip every bounds check (with a
// check per word the byte kernel read 74 % of copy, without 85 %: session 55 run 4,
// bench/tune/transpose_tune.cu).
//
// kSrcWords / kDstWords: that side's layout allows words (word_sides in word_tile_launch.cuh);
// a side that does not is read or written element by element along its own fast stride, the
// tile, the transposition in registers and the other side unchanged, so any layout runs here.
template <class E, class W, bool kSrcWords, bool kDstWords>
__global__ void __launch_bounds__(kTile * kRows) register_block_kernel(TileParams p) {
  constexpr int kPack = sizeof(W) / sizeof(E);
  constexpr int kSpan = kTile * kPack;        // elements of the tile along i and along j
  constexpr int kBlocks = kTile / kRows;      // blocks of kPack rows a thread loads
  constexpr int kSwizzle = 128 / sizeof(W);
  __shared__ W tile[kSpan][kTile];  // [i][swizzled word along j]
  const auto column = [](int row, int c) { return c ^ ((row / kPack) % kSwizzle); };
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const TileAt at = tile_at(p, t, kSpan, kSpan);
    const bool interior = at.i0 + kSpan <= p.ni && at.j0 + kSpan <= p.nj;
    const int64_t i = at.i0 + int64_t(tx) * kPack;  // the first element of this thread's word
    // Every load of the tile issued before the first store into it: block b, row e is source row
    // j0 + ty * kPack + step, step = b * kRows * kPack + e. Interior tiles and edge tiles run
    // separate unrolled loops, and the steps are constants times the stride (with the thread's
    // ty inside the step, 2-byte elements took 122 registers instead of 64).
    const int64_t j_first = at.j0 + ty * kPack;
    const E* from = static_cast<const E*>(p.src) + at.src + i * p.src_i + j_first * p.src_j;
    W words[kBlocks][kPack];
    const auto load_rows = [&](auto load) {
#pragma unroll
      for (int b = 0; b < kBlocks; ++b) {
#pragma unroll
        for (int e = 0; e < kPack; ++e) {
          const int step = b * kRows * kPack + e;
          words[b][e] = load(from + step * p.src_j, j_first + step);
        }
      }
    };
    if (interior) {
      load_rows([&](const E* at_row, int64_t) { return load_word<E, W, kSrcWords>(at_row, p.src_i, kPack); });
    } else {
      load_rows([&](const E* at_row, int64_t j) {
        return load_word<E, W, kSrcWords>(at_row, p.src_i, i < p.ni && j < p.nj ? p.ni - i : 0);
      });
    }
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) {
      W runs[kPack];  // runs[e]: element i + e of the block's kPack rows
      transpose_block<E, W>(words[b], runs);
#pragma unroll
      for (int e = 0; e < kPack; ++e) {
        const int r = tx * kPack + e;
        tile[r][column(r, ty + b * kRows)] = runs[e];
      }
    }
    __syncthreads();
    // A warp copies tile row ty + step (32 words along j) to destination row i0 + ty + step.
    const int64_t j = at.j0 + int64_t(tx) * kPack, i_first = at.i0 + ty;
    E* to = static_cast<E*>(p.dst) + at.dst + i_first * p.dst_i + j * p.dst_j;
    const auto store_rows = [&](auto store) {
#pragma unroll
      for (int step = 0; step < kSpan; step += kRows) {
        const int r = ty + step;
        store(to + step * p.dst_i, tile[r][column(r, tx)], i_first + step);
      }
    };
    if (interior) {
      store_rows([&](E* at_row, W word, int64_t) { store_word<E, W, kDstWords>(at_row, p.dst_j, word, kPack); });
    } else {
      store_rows([&](E* at_row, W word, int64_t ii) {
        if (ii < p.ni && j < p.nj) store_word<E, W, kDstWords>(at_row, p.dst_j, word, p.nj - j);
      });
    }
    __syncthreads();
  }
}

// Rows along one axis that is fast on both sides (no transposition left), moved in units U: 16-byte
// vectors where p.vectors, else single elements. Vectors are whole 16-byte runs of a unit-step row;
// elements take the row's own steps.
template <class E, class U>
struct RowUnits {
  static constexpr bool kVectors = sizeof(U) != sizeof(E);
  const U* src;
  U* dst;
  int64_t src_step, dst_step;
  __device__ __forceinline__ RowUnits(const RowParams& p, int64_t row) {
    int64_t s, d;
    p.batch.offsets(row, &s, &d);
    src = reinterpret_cast<const U*>(static_cast<const E*>(p.src) + s);
    dst = reinterpret_cast<U*>(static_cast<E*>(p.dst) + d);
    src_step = kVectors ? 1 : p.src_step;
    dst_step = kVectors ? 1 : p.dst_step;
  }
  __device__ __forceinline__ U load(int64_t u) const { return src[u * src_step]; }
  __device__ __forceinline__ U* target(int64_t u) const { return dst + u * dst_step; }
};

// Both row kernels move kRowUnroll units per thread and step, every load issued before the first
// store: the compiler may not move a load past a store through a pointer it cannot prove distinct,
// so a load-store loop keeps one load in flight per thread.
constexpr int kRowThreads = 256;
constexpr int kRowUnroll = 4;

// Rows of at least a block's width: a block copies kRowPiece units of one row per step, decoding
// the row's offsets once.
constexpr int kRowPiece = kRowThreads * kRowUnroll;

template <class E, class U>
__global__ void __launch_bounds__(kRowThreads) row_kernel(RowParams p, int64_t units_per_row, int64_t pieces_per_row,
                                                          FastDivmod64 div_pieces) {
  const int64_t pieces = p.rows * pieces_per_row;
  for (int64_t piece = blockIdx.x; piece < pieces; piece += gridDim.x) {
    const int64_t row = div_pieces.div(piece);
    const int64_t first = (piece - row * pieces_per_row) * kRowPiece;
    const RowUnits<E, U> units(p, row);
    U v[kRowUnroll];
#pragma unroll
    for (int k = 0; k < kRowUnroll; ++k) {
      const int64_t u = first + k * kRowThreads + threadIdx.x;
      if (u < units_per_row) v[k] = units.load(u);
    }
#pragma unroll
    for (int k = 0; k < kRowUnroll; ++k) {
      const int64_t u = first + k * kRowThreads + threadIdx.x;
      if (u < units_per_row) *units.target(u) = v[k];
    }
  }
}

// Shorter rows (the heads of a (batch, heads, seq, dim) -> (batch, seq, heads, dim) permutation):
// each unit decodes its row's offsets (one decode per 16 bytes on the vector path); a block step
// covers kRowThreads * kRowUnroll consecutive units, unit k of a thread kRowThreads after unit k-1.
template <class E, class U>
__global__ void __launch_bounds__(kRowThreads) short_row_kernel(RowParams p, int64_t units_per_row,
                                                                FastDivmod64 div_units) {
  const int64_t total = p.rows * units_per_row;
  constexpr int kStep = kRowThreads * kRowUnroll;
  for (int64_t first = int64_t(blockIdx.x) * kStep + threadIdx.x; first < total; first += int64_t(gridDim.x) * kStep) {
    U v[kRowUnroll];
    U* to[kRowUnroll];
#pragma unroll
    for (int k = 0; k < kRowUnroll; ++k) {
      const int64_t unit = first + k * kRowThreads;
      if (unit < total) {
        const int64_t row = div_units.div(unit);
        const RowUnits<E, U> units(p, row);
        v[k] = units.load(unit - row * units_per_row);
        to[k] = units.target(unit - row * units_per_row);
      }
    }
#pragma unroll
    for (int k = 0; k < kRowUnroll; ++k) {
      if (first + k * kRowThreads < total) *to[k] = v[k];
    }
  }
}

}  // namespace transpose_detail
}  // namespace gpuprims
