#pragma once
// The optimized reduction ("vectorized", the "auto" choice).
//
// Overview: a fixed grid of blocks per row (whole waves of the measured occupancy in total) splits
// the row into contiguous chunks, one per block; a block's threads stride through its chunk with
// 16-byte loads, kUnroll independent loads in flight per thread, each feeding kSplit accumulators.
// Blocks reduce with warp shuffles; the last block of a row to finish (an atomic ticket) combines
// the per-block partials in index order. One kernel, one pass over the data, and for a given size
// and GPU the same partition and combination order on every run, so float results are run-to-run
// bitwise identical.
//
// Alignment: a row's first elements up to a 16-byte boundary (the head) and the last < 16 bytes
// (the tail) are read with scalar loads; only the aligned body uses LDG.128. A view offset by one
// element therefore never reaches a misaligned vector load.
//
// Memory ordering of the partials and the tickets: finish_row (reduce_common.cuh).
#include <cstdint>
#include <type_traits>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/reduce/reduce_common.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace reduce_detail {

// How a row's 16-byte vectors are shared among the blocks of the row.
enum class Partition {
  kGridStride,  // vector v goes to global thread v mod (blocks * threads): all blocks sweep together
  kChunks,      // block b owns one contiguous chunk of vectors, its threads striding within it
};

// Tuning (bench/tune/reduce_vectorized_tune.cu, H200, 2^28 int32/float32 sums, CUB 0.2413 ms in the
// same run): contiguous chunks beat the grid-stride sweep at every grid size (0.2412 vs 0.2653 ms at
// 16 blocks/SM); 512-thread blocks and the streaming/L2-prefetch load flavours gained nothing. What
// matters is whole waves, so the grid is a whole number of waves of the kernel's measured occupancy
// (a register change that dropped residency to 3 blocks cost 7 % while the grid stayed fixed).
constexpr LoadPolicy kVectorizedLoads = LoadPolicy::kReadOnly;
constexpr Partition kVectorizedPartition = Partition::kChunks;

// Block size, loads in flight per thread, accumulators per vector and waves, by accumulator type.
// Second sweep (same harness, run of 2026-11-22 session 9, two repetitions, no-memset ratios to CUB):
// - integers: 256 threads x 4 loads x 1 accumulator, 4 waves of 4 resident blocks: 1.005 / 1.007x;
//   2 accumulators per vector 0.961-0.965x, 128-thread blocks 0.97-0.98x, 512 0.95x.
// - floats: 128 threads x 4 loads x 2 accumulators (float adds chain with 4-cycle latency), 2 waves
//   of 8 resident blocks: 1.010 / 1.011x; the former 256 x 2 loads x 4 accumulators x 4 waves
//   0.988 / 0.997x, 256 x 4 x 1 1.002x, 3 waves of the 128-thread shape 1.003 / 1.008x. Two loads in
//   flight per 256-thread block left too few bytes outstanding per SM (Little's law).
template <class Acc> struct VectorizedShape {
  static constexpr bool kFloat = std::is_floating_point<Acc>::value;
  static constexpr int kThreads = kFloat ? 128 : kReduceThreads;
  static constexpr int kUnroll = 4;
  static constexpr int kSplit = kFloat ? 2 : 1;
  static constexpr int kWaves = kFloat ? 2 : 4;
};

// This thread's share of a contiguous row: head scalars (up to 16-byte alignment), vectors, tail
// scalars. `part` is the block's index among `parts` blocks of the row, `tid` its thread index.
// kSplit accumulators per in-flight vector (lanes alternate between them) shorten the dependency
// chains of float adds.
template <int kThreads, int kUnroll, LoadPolicy kPolicy, Partition kPartition, int kSplit, class Acc, class T,
          class Op>
__device__ __forceinline__ Acc accumulate_vectorized(const T* row, int64_t n, int64_t part, int64_t parts, int tid,
                                                     Op op) {
  constexpr int kLanes = Vec16<T>::kLanes;
  Acc acc[kUnroll * kSplit];
#pragma unroll
  for (int u = 0; u < kUnroll * kSplit; ++u) acc[u] = Op::template identity<Acc>();

  // The head and the tail hold fewer than kLanes scalars each: one step of the row's threads takes
  // them, except where a group narrower than a vector's lanes reads the row (warp_per_row's groups
  // of 4 or 8 lanes, 1- and 2-byte elements), which loops.
  const int64_t gtid = part * kThreads + tid;
  const int64_t threads = parts * kThreads;
  const auto add_scalars = [&](int64_t i, int64_t end) {
    if constexpr (kThreads >= kLanes) {
      if (i < end) acc[0] = op(acc[0], cast_value<Acc>(row[i]));
    } else {
      for (; i < end; i += threads) acc[0] = op(acc[0], cast_value<Acc>(row[i]));
    }
  };
  const int64_t head = aligned_head(row, n);
  add_scalars(gtid, head);

  const T* body = row + head;
  const int64_t num_vec = (n - head) / kLanes;
  int64_t v, end, step;
  if constexpr (kPartition == Partition::kGridStride) {
    v = gtid, end = num_vec, step = parts * kThreads;
  } else {
    const int64_t per_part = ceil_div(num_vec, parts);
    v = part * per_part + tid, end = min_of(num_vec, (part + 1) * per_part), step = kThreads;
  }
  for (; v + (kUnroll - 1) * step < end; v += kUnroll * step) {
    Vec16<T> x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x[u] = load_vec16<T, kPolicy>(body + (v + u * step) * kLanes);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) fold_vector<kSplit>(acc + u * kSplit, x[u], op);
  }
  for (; v < end; v += step) fold_vector<1>(acc, load_vec16<T, kPolicy>(body + v * kLanes), op);
  add_scalars(head + num_vec * kLanes + gtid, n);

#pragma unroll
  for (int u = 1; u < kUnroll * kSplit; ++u) acc[0] = op(acc[0], acc[u]);
  return acc[0];
}

template <class T, class Acc, class Op, int kThreads = VectorizedShape<Acc>::kThreads,
          int kUnroll = VectorizedShape<Acc>::kUnroll,
          LoadPolicy kPolicy = kVectorizedLoads, Partition kPartition = kVectorizedPartition,
          int kSplit = VectorizedShape<Acc>::kSplit>
__global__ void __launch_bounds__(kThreads)
    reduce_vectorized_kernel(ReduceKernelParams<T> p, Acc* partials, unsigned int* tickets) {
  using BR = BlockReduce<Acc, kThreads>;
  __shared__ typename BR::TempStorage temp;
  __shared__ bool is_last_block;
  const Op op;
  const ReduceLayout& layout = p.layout;
  const int64_t blocks_per_row = gridDim.x;
  const int64_t gtid = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t gstride = blocks_per_row * kThreads;

  for (int64_t row = blockIdx.y; row < layout.num_rows; row += gridDim.y) {
    const T* in_row = p.in + layout.in_row_offset(row);
    Acc acc = layout.row_contiguous
                  ? accumulate_vectorized<kThreads, kUnroll, kPolicy, kPartition, kSplit, Acc>(
                        in_row, layout.row_len, blockIdx.x, blocks_per_row, threadIdx.x, op)
                  : accumulate_scalar(in_row, layout, gtid, layout.row_len, gstride, op,
                                      Op::template identity<Acc>());
    acc = BR::reduce(acc, op, temp);
    finish_row<kThreads>(acc, p, row, blockIdx.x, blocks_per_row, partials, tickets, op, temp, is_last_block);
  }
}

}  // namespace reduce_detail
}  // namespace gpuprims
