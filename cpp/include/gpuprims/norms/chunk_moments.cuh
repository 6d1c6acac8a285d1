#pragma once
// Norm statistics of a row split across blocks (split_row's chunks, cluster_row's slices): each
// chunk's moments about its own anchor, and their combination into the row's.
//
// Why anchors per chunk: statistics kept relative to the row's first element round the chunk means,
// and every x - shift of the output, at the distance of that element from the mean: a first element
// k deviations off the mean costs about k ulp (of Acc) of a deviation in every output (docs/norms.md,
// Numerics). So each chunk measures its moments about its own centre (chunk_moments below), and the
// combination takes the chunk means relative to one reference, moving that reference to the row's
// centre where it lies far from it. Every chunk uses the row's power-of-two scale (from the row's
// first element, as the whole-row kernels), so the u values of all chunks share one unit.
// Only where Acc is the value type (float32, float64: kChunkCentred), as row_partial: fp16 / bf16
// outputs round at 2^-11 / 2^-8, so the first element's k ulp (of float32) matter only beyond
// k ~ 2^13, and their 512-thread cluster slices run at a 40-register bound that the centred form
// breaks (ptxas, CUDA 13.0, sm_90a: 372 bytes of spill stores in bfloat16, 20 in float16). They keep
// the row's first element as every chunk's anchor (chunk_partial): the same arithmetic as before.
#include <cstdint>
#include <type_traits>

#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/row_math.hpp"
#include "gpuprims/norms/row_stats.cuh"

namespace gpuprims {
namespace norms {

// One chunk's norm partial: (mean, M2) of u = (x - shift) * inv_scale over the chunk's elements.
template <class Acc>
struct ChunkMoments {
  Acc shift;  // the chunk's anchor in x units (0 for rms_norm)
  Acc mean;
  Acc m2;
};

// What a chunk hands to the combination: softmax kind (max, sum) as chunk_partial; norm kind its moments.
template <RowKind kKind, class Acc>
using ChunkPartial = std::conditional_t<kKind == RowKind::kNorm, ChunkMoments<Acc>, RowStats<Acc>>;

template <class T>
constexpr bool kChunkCentred = std::is_same<T, acc_t<T>>::value;

// The frame of the chunk [begin, begin + len) of a row (elements `stride` apart): the row's frame
// (row_frame), with the chunk's first element as its shift for layer_norm where kChunkCentred.
template <class T>
__device__ __forceinline__ RowFrame<acc_t<T>> chunk_frame(const T* row, int64_t stride, int64_t row_len, int64_t begin,
                                                          int len, bool center) {
  RowFrame<acc_t<T>> frame = row_frame(row, row_len, center);
  if (kChunkCentred<T> && center && len > 0) frame.shift = cast_value<acc_t<T>>(row[begin * stride]);
  return frame;
}

// (sum of d, sum of d^2) over the chunk's valid elements, d = f(value): on the lean path in kLanes
// chains (sum_and_squares_tile_vectors), else in one loop with RowTile::sum_of's per-element bounds
// and order.
template <bool kLean, class Tile, class F>
__device__ __forceinline__ SumPair<typename Tile::Acc> tile_sum_and_squares(const Tile& tile, int len, int rank, F f) {
  using Acc = typename Tile::Acc;
  if constexpr (kLean) {
    return sum_and_squares_tile_vectors(tile, len, rank, f);
  } else {
    SumPair<Acc> t{Acc(0), Acc(0)};
#pragma unroll
    for (int s = 0; s < Tile::kSlots; ++s) {
#pragma unroll
      for (int l = 0; l < Tile::kLanes; ++l) {
        if (Tile::element(s, l, rank) >= len) continue;
        const Acc d = f(tile.value(s, l));
        t.a += d;
        t.b = fma(d, d, t.b);
      }
    }
    return t;
  }
}

// The chunk's norm moments (the same on every thread of the group) by the corrected two-pass
// algorithm, two passes over the registers / shared memory as chunk_partial: the mean of u about
// frame.shift (the chunk's first element: chunk_frame), then, about the chunk's centre
// c = shift + mean (rounded in Acc; exact scaling), the sums of d = (x - c) * inv_scale and d^2 in
// one paired reduction: mean = sum d / len about c, M2 = sum d^2 - (sum d) * mean. Each x - c rounds
// at its own deviation however far the first element lies, and sum d / len is only c's distance
// from the mean (its rounding, and the first pass's error of about k ulp of a deviation for a first
// element k deviations away), so M2 does not cancel. Always, not on a test as row_partial: its
// conditional third pass took split_row's float32 vector chunk from 48 to 80 registers and made the
// bf16 cluster slice spill (52 bytes); one code path keeps 48 (ptxas, CUDA 13.0, sm_90a).
// A constant chunk: mean 0 exactly, c = shift, d = 0: moments (x, 0, 0).
// rms_norm (center false): mean pass skipped, c = 0, the sum of u^2 with chunk_partial's values.
template <bool kLean, class Tile, class Reduce, class PairReduce>
__device__ __forceinline__ ChunkMoments<typename Tile::Acc> chunk_moments(const Tile& tile, int len, int rank,
                                                                          RowFrame<typename Tile::Acc> frame,
                                                                          bool center, Reduce& reduce,
                                                                          PairReduce& reduce_pair) {
  using Acc = typename Tile::Acc;
  const Acc shift = frame.shift, inv = frame.inv_scale;
  Acc mean = Acc(0);
  if (center) {
    mean = mean_of(reduce(tile_sum<kLean>(tile, len, rank, [=](Acc v) { return (v - shift) * inv; }), SumOp{}), len);
  }
  const Acc c = (shift * inv + mean) * frame.scale;
  const SumPair<Acc> t =
      reduce_pair(tile_sum_and_squares<kLean>(tile, len, rank, [=](Acc v) { return (v - c) * inv; }), PairSumOp{});
  if (!center) return {Acc(0), Acc(0), t.b};
  const Acc delta = mean_of(t.a, len);
  return {c, delta, fma(-t.a, delta, t.b)};
}

// The chunk's partial (the same on every thread of the group): the softmax kind's chunk_partial; the
// norm kind's chunk_moments where kChunkCentred, else chunk_partial about the row's first element.
// reduce_pair: RowGroup<SumPair<Acc>>::Synced (chunk_moments').
template <RowKind kKind, bool kLean, class Tile, class Reduce, class PairReduce>
__device__ __forceinline__ ChunkPartial<kKind, typename Tile::Acc> chunk_partial_of(const Tile& tile, int len, int rank,
                                                                                  RowFrame<typename Tile::Acc> frame,
                                                                                  bool center, Reduce& reduce,
                                                                                  PairReduce& reduce_pair) {
  if constexpr (kKind == RowKind::kNorm && kChunkCentred<typename Tile::Value>) {
    return chunk_moments<kLean>(tile, len, rank, frame, center, reduce, reduce_pair);
  } else if constexpr (kKind == RowKind::kNorm) {
    const RowStats<typename Tile::Acc> s = chunk_partial<kKind, kLean>(tile, len, rank, frame, center, reduce);
    return {frame.shift, s.a, s.b};
  } else {
    return chunk_partial<kKind, kLean>(tile, len, rank, frame, center, reduce);
  }
}

// The row's (mean_u, M2_u) about frame.shift from its chunks' moments. In: frame = the row's scale
// and the reference shift (a chunk's anchor: every thread must pass the same one). Out: frame.shift
// the row's final shift (the outputs take (x - shift) - mean_rel).
// sum_chunks(f) returns, on every thread the same bits, the sum over the row's chunks of
// f(count_c, moments_c) in a fixed order (deterministic).
// Two passes over the partials (mean = sum n_c m_c / n, then M2 = sum M2_c + n_c (m_c - mean)^2,
// m_c a chunk's mean about the reference: Chan et al.'s pairwise update written as one sum about
// the finished mean, so no delta is rounded at a running mean's magnitude). m_c = (shift_c - ref) *
// inv_scale + mean_c rounds at |m_c| only. The reference (chunk 0's centre) can lie far from the row
// mean only where chunk means differ widely (up to sqrt(n / n_0) deviations: sorted rows, say);
// beyond 4 deviations (row_partial's test) it moves to c = ref + mean (exact scaling) and the two
// passes run again about it: the partials are a few values per chunk, no memory traffic.
// rms_norm (center false): every shift and mean is 0, so the result is sum M2_c, as before.
// kCentred false (kChunkCentred of fp16 / bf16: every chunk's shift is the row's first element):
// m_c = mean_c and the reference stays, the arithmetic of before.
template <bool kCentred, class Acc, class SumChunks>
__device__ __forceinline__ RowStats<Acc> combine_chunk_moments(RowFrame<Acc>& frame, int64_t n, bool center,
                                                               SumChunks sum_chunks) {
  const Acc inv = frame.inv_scale;
  const auto about = [&](Acc ref) {
    const auto chunk_mean = [=](const ChunkMoments<Acc>& m) {
      return kCentred ? (m.shift - ref) * inv + m.mean : m.mean;
    };
    const Acc total = sum_chunks([=](Acc count, const ChunkMoments<Acc>& m) { return count * chunk_mean(m); });
    const Acc mean = mean_of(total, n);
    const Acc m2 = sum_chunks([=](Acc count, const ChunkMoments<Acc>& m) {
      const Acc d = chunk_mean(m) - mean;
      return m.m2 + count * d * d;
    });
    return RowStats<Acc>{mean, m2};
  };
  RowStats<Acc> s = about(frame.shift);
  if constexpr (kCentred) {
    if (center && mean_far_from_shift(s.a, s.b, n)) {  // uniform: every thread holds the same s
      frame.shift = (frame.shift * inv + s.a) * frame.scale;
      s = about(frame.shift);
    }
  }
  return s;
}

}  // namespace norms
}  // namespace gpuprims
