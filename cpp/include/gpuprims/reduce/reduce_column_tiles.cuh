#pragma once
// Reductions along an outer axis (a column sum of a row-major matrix): neighbouring outputs are
// adjacent in memory, each output's own elements are far apart.
//
// A block owns a tile of 32 x kOut consecutive outputs (kOut = column_outputs_per_lane: 4, or 8 for
// 2-byte items) and one slice of the reduced dimension. Where the layout and types allow, lane tx
// takes the kOut adjacent outputs kOut tx ... and reads them as one 16-byte vector,
// kColumnVectorUnroll reduced indices in flight; elsewhere (misaligned views, strides that are not
// a multiple of kOut, the last tile's partial vectors) it takes outputs tx, tx + 32, ... with one
// scalar load each, kColumnUnroll indices in flight. Either way a warp reads the whole tile's width
// of adjacent items for every reduced index (512 bytes of float32: four whole lines per DRAM page
// opened, where one output per lane read a single 128-byte line); threadIdx.y walks the reduced
// index. The kTileRows partial sums of a column meet in shared memory. When there are too few tiles
// to fill the GPU the reduced dimension is split across gridDim.y blocks; their per-column partials
// are combined, in an order fixed by the shape, by the last block of the tile to finish (an atomic
// ticket, with the fences described in reduce_vectorized.cuh), so results stay run-to-run
// deterministic. Any strides work; only adjacency makes it fast.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpuprims/reduce/reduce_common.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace reduce_detail {

constexpr int kTileRows = 8;
constexpr int kColumnUnroll = 2;
constexpr int kColumnThreads = 32 * kTileRows;

// Whether adjacent outputs may load as one 16-byte vector: 2- and 4-byte items into 4-byte
// accumulators (float16, bfloat16 and float32 sums, products, minima and maxima). The other kernels
// keep one scalar load an output: a vector path doubled their code for no measured case, and put
// ptxas over its register budget where the accumulators are 8 bytes (spills, or 100 registers).
template <class T, class Acc>
constexpr bool kColumnVectors = (sizeof(T) == 2 || sizeof(T) == 4) && sizeof(Acc) == 4;

// Outputs a lane takes: 8 of 2-byte items loaded as vectors, else 4. With 4 of 2-byte items, one
// scalar load each, a float16 column sum of 16384 x 8192 read 61.5 % of copy bandwidth against
// torch.sum's 85.2 % (session 45 device run 6, bench/results/h200/awkward_probe_s45r6.txt): 16 bytes
// in flight a thread, where 4-byte items had 32.
template <class T, class Acc>
constexpr int column_outputs_per_lane() {
  return kColumnVectors<T, Acc> && sizeof(T) == 2 ? 8 : 4;
}

// Outputs of a tile: a warp's lanes times each lane's outputs.
template <class T, class Acc>
constexpr int column_tile_width() {
  return 32 * column_outputs_per_lane<T, Acc>();
}

// Lane tx's j-th output within its tile: kOut adjacent columns (one vector load a reduced index,
// where the host proved the layout allows it) or columns 32 apart (one scalar load each; a warp
// still reads 32 adjacent items a load).
template <int kOut>
__device__ __forceinline__ int column_in_tile(int tx, int j, bool adjacent) {
  return adjacent ? kOut * tx + j : tx + 32 * j;
}


// acc[j] = fold(acc[j], item j) for the items of reduced indices begin, begin + kTileRows, ... <
// end; load(off, v) fills v with the kN items at reduced offset off. kUnroll indices in flight.
template <int kUnroll, int kN, class Item, class A, class Load, class Fold>
__device__ __forceinline__ void sweep_columns(const ReduceLayout& layout, int64_t begin, int64_t end, Load load,
                                              Fold fold, A (&acc)[kN]) {
  int64_t i = begin;
  for (; i + (kUnroll - 1) * kTileRows < end; i += kUnroll * kTileRows) {
    Item v[kUnroll][kN];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) load(layout.elem_offset(i + u * kTileRows), v[u]);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < kN; ++j) acc[j] = fold(acc[j], v[u][j]);
    }
  }
  for (; i < end; i += kTileRows) {
    Item v[kN];
    load(layout.elem_offset(i), v);
#pragma unroll
    for (int j = 0; j < kN; ++j) acc[j] = fold(acc[j], v[j]);
  }
}

// The vector path of a tile: lane tx's kOut adjacent columns from `columns`, one 16-byte load a
// reduced index, kColumnVectorUnroll of them in flight (with 2, float16 column sums stayed at 62 %
// of copy, session 47 device run 1, H200; with 4, 65 %, the rest of the gap being the grid and the
// combine: variant_column_tiles.cu). float16 / bfloat16 minima and maxima stay in packed pairs
// (exact), as in fold_vector: float16 column maxima of 16384 x 8192 30 -> 39 % (run 2) -> 73 %
// (run 3, with the grid and combine; torch.amax 58 %).
constexpr int kColumnVectorUnroll = 4;

template <int kOut, class T, class Acc, class Op>
__device__ __forceinline__ void sweep_column_vectors(const ReduceLayout& layout, const T* columns, int64_t begin,
                                                     int64_t end, Op op, Acc (&acc)[kOut]) {
  // the kOut adjacent items at columns + off as kN items of the sweep (T, or packed pairs of T)
  const auto load = [&](int64_t off, auto& v) {
    using Item = std::remove_reference_t<decltype(v[0])>;
    const Vec16<Item> x = load_vec16(reinterpret_cast<const Item*>(columns + off));
    memcpy(v, x.lane, sizeof(x.lane));
  };
  if constexpr (kPackedHalfMinMax<Op, T>) {
    using Pair = half_pair_t<T>;
    Pair pairs[kOut / 2];
#pragma unroll
    for (int k = 0; k < kOut / 2; ++k) pairs[k] = packed_identity<Op, T>();
    sweep_columns<kColumnVectorUnroll, kOut / 2, Pair>(
        layout, begin, end, load, [](Pair a, Pair b) { return packed_min_max<Op>(a, b); }, pairs);
#pragma unroll
    for (int k = 0; k < kOut / 2; ++k) {
      T two[2];
      memcpy(two, &pairs[k], sizeof(two));
      acc[2 * k] = cast_value<Acc>(two[0]);
      acc[2 * k + 1] = cast_value<Acc>(two[1]);
    }
  } else {
    sweep_columns<kColumnVectorUnroll, kOut, T>(
        layout, begin, end, load, [op](Acc a, T x) { return op(a, cast_value<Acc>(x)); }, acc);
  }
}

// Each warp's kOut partials a lane meet in shared memory (slot tx + 32 j, whatever the column
// mapping: conflict-free), and warp 0 folds the other warps' into its own in warp order. The caller
// syncs before slice is written again.
template <int kOut, int kSlots, class Acc, class Op>
__device__ __forceinline__ void fold_warp_partials(Acc (&slice)[kTileRows][kSlots], Acc (&acc)[kOut], Op op, int tx,
                                                   int ty) {
#pragma unroll
  for (int j = 0; j < kOut; ++j) slice[ty][tx + 32 * j] = acc[j];
  __syncthreads();
  if (ty == 0) {
#pragma unroll
    for (int j = 0; j < kOut; ++j) {
      for (int y = 1; y < kTileRows; ++y) acc[j] = op(acc[j], slice[y][tx + 32 * j]);
    }
  }
}

// adjacent_vectors: the host's proof (columns_load_as_vectors) that column c of reduced index i
// lies at in + c + elem_offset(i), every elem_offset a multiple of kOut, and `in` aligned to 16
// bytes, so each lane's kOut adjacent columns load as one vector in every tile of whole vectors.
template <class T, class Acc, class Op>
__global__ void __launch_bounds__(kColumnThreads)
    reduce_column_tiles_kernel(ReduceKernelParams<T> p, bool adjacent_vectors, Acc* partials, unsigned int* tickets) {
  constexpr int kOut = column_outputs_per_lane<T, Acc>();
  const bool adjacent = kColumnVectors<T, Acc> && adjacent_vectors;  // a constant false for the other types
  constexpr int kWidth = column_tile_width<T, Acc>();
  __shared__ Acc slice[kTileRows][kWidth + 1];  // fold_warp_partials
  __shared__ bool is_last_block;
  const Op op;
  const ReduceLayout& layout = p.layout;
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const int64_t num_tiles = ceil_div<int64_t>(layout.num_rows, kWidth);
  const int64_t splits = gridDim.y;
  const int64_t per_split = ceil_div<int64_t>(layout.row_len, splits);
  const int64_t begin = blockIdx.y * per_split + ty;
  const int64_t end = min_of(layout.row_len, blockIdx.y * per_split + per_split);

  for (int64_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const int64_t first = tile * kWidth;
    Acc acc[kOut];
#pragma unroll
    for (int j = 0; j < kOut; ++j) acc[j] = Op::template identity<Acc>();
    if (adjacent && first + kWidth <= layout.num_rows) {
      if constexpr (kColumnVectors<T, Acc>) sweep_column_vectors(layout, p.in + first + kOut * tx, begin, end, op, acc);
    } else {
      const T* columns[kOut];
#pragma unroll
      for (int j = 0; j < kOut; ++j) {  // clamped: read, never stored
        const int64_t row = min_of(first + column_in_tile<kOut>(tx, j, adjacent), layout.num_rows - 1);
        columns[j] = p.in + layout.in_row_offset(row);
      }
      sweep_columns<kColumnUnroll, kOut, T>(
          layout, begin, end,
          [&](int64_t off, T(&v)[kOut]) {
#pragma unroll
            for (int j = 0; j < kOut; ++j) v[j] = columns[j][off];
          },
          [op](Acc a, T x) { return op(a, cast_value<Acc>(x)); }, acc);
    }
    // Warp 0 folds the kTileRows partials of each column and finishes the tile.
    fold_warp_partials(slice, acc, op, tx, ty);
    if (ty == 0) {
#pragma unroll
      for (int j = 0; j < kOut; ++j) {
        const int64_t row = first + column_in_tile<kOut>(tx, j, adjacent);
        if (row >= layout.num_rows) continue;
        if (splits == 1) {
          store_as(p.out, layout.out_offset(row), p.out_dtype, acc[j]);
        } else {
          partials[blockIdx.y * layout.num_rows + row] = acc[j];
        }
      }
    }
    if (splits > 1) {
      if (ty == 0) __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) is_last_block = atomicAdd(&tickets[tile], 1u) == splits - 1;
      __syncthreads();
      // The last block of the tile combines its splits' partials: warp ty folds splits ty, ty + 8,
      // ... (each split's kOut partials of a lane loaded together), then warp 0 folds the 8 warps'
      // results in warp order: ceil(splits / 8) round trips to L2, where warp 0 alone made up to
      // splits of them a column. The order depends only on the shape: deterministic.
      if (is_last_block) {
        __threadfence();
#pragma unroll
        for (int j = 0; j < kOut; ++j) acc[j] = Op::template identity<Acc>();
#pragma unroll 1
        for (int64_t s = ty; s < splits; s += kTileRows) {
          const Acc* split = partials + s * layout.num_rows;
#pragma unroll
          for (int j = 0; j < kOut; ++j) {
            const int64_t row = min_of(first + column_in_tile<kOut>(tx, j, adjacent), layout.num_rows - 1);
            acc[j] = op(acc[j], load_published(split + row));
          }
        }
        fold_warp_partials(slice, acc, op, tx, ty);
        if (ty == 0) {
#pragma unroll
          for (int j = 0; j < kOut; ++j) {
            const int64_t row = first + column_in_tile<kOut>(tx, j, adjacent);
            if (row < layout.num_rows) store_as(p.out, layout.out_offset(row), p.out_dtype, acc[j]);
          }
          if (tx == 0) tickets[tile] = 0;  // return the ticket to zero (see stream_counters)
        }
      }
    }
    __syncthreads();  // slice and is_last_block are reused by the next tile
  }
}

}  // namespace reduce_detail
}  // namespace gpuprims
