#pragma once
// Statistics of a chunk held in a RowTile, and the output functor made from row statistics.
// Shared by the one-pass kernel (one chunk = the whole row) and the split-row kernels.
#include <limits>
#include <type_traits>

#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/row_math.hpp"
#include "gpuprims/norms/row_tile.cuh"
#include "gpuprims/util/ptx_sm80.cuh"

namespace gpuprims {
namespace norms {

// What a RowTile of `kind` holds past the end of the row: -inf leaves a max unchanged; the norm
// statistics skip invalid slots explicitly.
template <RowKind kKind, class Acc>
__device__ __forceinline__ Acc tile_fill() {
  return kKind == RowKind::kSoftmax ? -std::numeric_limits<Acc>::infinity() : Acc(0);
}

// The first element of a row of row_len elements as Acc (0 for an empty row): the RowFrame's anchor.
template <class T>
__device__ __forceinline__ acc_t<T> row_first(const T* row, int64_t row_len) {
  return row_len > 0 ? cast_value<acc_t<T>>(row[0]) : acc_t<T>(0);
}

// The row's RowFrame (row_math.hpp), from its first element.
template <class T>
__device__ __forceinline__ RowFrame<acc_t<T>> row_frame(const T* row, int64_t row_len, bool center) {
  return make_row_frame(row_first(row, row_len), center);
}

// kLean in what follows: the tile was filled on the vector path (every slot a whole vector or
// fill), so bounds are checked per slot, sums run in kLanes independent chains, the max drops NaN
// (the NaN then reaches the sum: see tile_max) and fp16 / bf16 tiles exponentiate with exp_lean.
// The reductions go through `reduce(v, op)`: RowGroup::Synced or RowGroup::Alternating.

// exp(d) on the lean path, flushing: fp16 / bf16 tiles take 2^(d * log2 e) on the special-function
// unit (an FMUL and a MUFU.EX2, where expf takes about eight instructions), with a relative error of
// about 2^-22 + |d| * 2^-24, far below the output's rounding (2^-9 bf16, 2^-12 fp16), and results
// below 2^-126 flushed to 0; float32 / float64 keep the accurate exp_of. log_softmax's backward
// takes exp(y) this way for both 2-byte types: there exp(y) only scales the row sum subtracted from
// dy, so a flushed exp(y) moves dx by less than 2^-126 * |sum(dy)|, where the non-flushing MUFU
// path cost 5 % (block per row) to 30 % (staged kernel) in bf16 at 16384 x 8192 (H200, session 16;
// docs/norms.md).
template <class T, class Acc>
__device__ __forceinline__ Acc exp_lean_flushing(Acc d) {
  if constexpr (is_half_like<T>::value) return ptx::ex2_approx_ftz(d * 1.4426950408889634f);
  else return exp_of(d);
}

// exp(d) for d = x - max <= 0 in the forward tiles: exp_lean_flushing, except that bfloat16 keeps
// float's subnormal results (its own subnormals reach 2^-133: flushed, softmax outputs below 2^-126
// came out 0, found by scripts/fuzz_api.py); float16's range ends far above 2^-126.
template <class T, class Acc>
__device__ __forceinline__ Acc exp_lean(Acc d) {
  if constexpr (std::is_same<T, bfloat16_t>::value) return ptx::ex2_approx(d * 1.4426950408889634f);
  else return exp_lean_flushing<T>(d);
}

template <bool kLean, class Tile, class F>
__device__ __forceinline__ typename Tile::Acc tile_sum(const Tile& tile, int len, int rank, F f) {
  if constexpr (kLean) return tile.sum_of_vectors(len, rank, f);
  else return tile.sum_of(len, rank, f);
}

struct FmaxOp {
  template <class A> __device__ __forceinline__ A operator()(A a, A b) const { return fmax(a, b); }
};

// The chunk's max, the same on every thread of the group; the tile's fill (-inf, tile_fill)
// leaves it unchanged. Not lean: NaN if the chunk holds a NaN. Lean: NaN is dropped (NaN only for
// an all-NaN chunk), which is enough for softmax: a NaN element makes exp(NaN - max) and hence the
// row sum NaN, and every output of the row is then NaN, as with the NaN max.
template <bool kLean, class Tile, class Reduce>
__device__ __forceinline__ typename Tile::Acc tile_max(const Tile& tile, Reduce& reduce) {
  using Acc = typename Tile::Acc;
  if constexpr (kLean) {
    return reduce(tile_max_dropping_nan(tile), FmaxOp{});
  } else {
    Acc m = -std::numeric_limits<Acc>::infinity();
#pragma unroll
    for (int s = 0; s < Tile::kSlots; ++s) {
#pragma unroll
      for (int l = 0; l < Tile::kLanes; ++l) m = nan_max(m, tile.v[s][l]);
    }
    return reduce(m, NanMaxOp{});
  }
}

// Partial statistics of a chunk of `len` elements (the same on every thread of the group):
//   softmax: (max, sum of exp(x - max)); the sum is 0 when the max is -inf, so a chunk of -inf
//            contributes nothing to a row that has finite values elsewhere.
//   norm:    (mean of u, sum of squared deviations of u from that mean), u = (x - shift) *
//            inv_scale; rms_norm (center false, shift 0): (0, sum of u^2). Two passes over
//            registers: no E[x^2] - E[x]^2 cancellation.
// kFold (norm kind, fp16 / bf16 tiles): the squared deviations with the shift folded into a per-row
//   constant, u - mean = fma(x, inv_scale, -(shift * inv_scale + mean)): one instruction per
//   element fewer. The constant is rounded at the magnitude of the first element (u in [1, 2)),
//   which moves the centre by 2^-24 of it: a relative error of the squared deviations of the
//   order of (2^-24 |x0| / deviation)^2, negligible. The mean pass stays unfolded: its sum of
//   (x - shift) is exactly 0 for a constant row, which then gets mean = its value and outputs =
//   bias exactly (RowOutput's kFold keeps that too).
template <RowKind kKind, bool kLean, bool kFold = false, class Tile, class Reduce>
__device__ __forceinline__ RowStats<typename Tile::Acc> chunk_partial(const Tile& tile, int len, int rank,
                                                                      RowFrame<typename Tile::Acc> frame, bool center,
                                                                      Reduce& reduce) {
  using Acc = typename Tile::Acc;
  using T = typename Tile::Value;
  if constexpr (kKind == RowKind::kSoftmax) {
    const Acc m = tile_max<kLean>(tile, reduce);
    Acc sum = reduce(tile_sum<kLean>(tile, len, rank, [m](Acc v) {
      if constexpr (kLean) return exp_lean<T>(v - m);
      else return exp_of(v - m);
    }), SumOp{});
    if (m == -std::numeric_limits<Acc>::infinity()) sum = Acc(0);
    return {m, sum};
  } else {
    const Acc shift = frame.shift, inv = frame.inv_scale;
    Acc mean = Acc(0);
    if (center) {
      const Acc total = reduce(tile_sum<kLean>(tile, len, rank, [=](Acc v) { return (v - shift) * inv; }), SumOp{});
      mean = mean_of(total, len);
    }
    const Acc c = shift * inv + mean;  // kFold
    const Acc m2 = reduce(tile_sum<kLean>(tile, len, rank, [=](Acc v) {
      const Acc d = kFold ? fma(v, inv, -c) : (v - shift) * inv - mean;
      return d * d;
    }), SumOp{});
    return {mean, m2};
  }
}

// chunk_partial of a whole row, with the norm kind's frame moved near the mean where the row's first
// element lies far from it. chunk_partial keeps the mean relative to the first element, rounded in
// Acc at |mean - first|, and the outputs take x - first, rounded there too: a first element k
// deviations off the mean carries about k ulp (of Acc) of a deviation into every output (an outlier
// in first place), where torch's x - mean errs by about one. Beyond 4 deviations (mean_u^2 > 16 M2 /
// len, about 6e-5 of Gaussian rows; NaN / inf rows compare false and keep their frame) the frame
// moves to c = u0 + mean_u (shift = c * scale, exact: scale is a power of two) and chunk_partial
// runs again about it (two more passes over the registers: each x - shift now rounds at its own
// deviation). Within 4 deviations an output errs by at most ~4 ulp of a deviation more than torch's
// (the issue's bound: 2x torch + rounding). Every dtype: until session 26 float16 / bfloat16 kept
// their frame (their outputs round at 2^-11 / 2^-8 of their magnitude), but an output near 0 (where
// the bias nearly cancels the normalized value) rounds far finer, and there an outlier in first
// place, about 60 deviations off, put the element-wise path's float16 error at 3.5x torch's
// (test_norm_ragged_rows). ptxas (CUDA 13.0, sm_90a) finds no new spill with it in the row_on_chip
// and add-norm files (float64's 1024-thread add-norm tile and the bfloat16 staged one keep their 8
// and 132 bytes; a loop around one copy of chunk_partial instead spilled 16-200 bytes in a dozen tiles).
// Whether statistics (mean of u about the frame's shift, M2 of u) of `len` elements put the shift
// beyond 4 deviations from the mean (mean^2 > 16 M2 / len): where row_partial, the streaming rungs and
// combine_chunk_moments move the frame. False for NaN / inf statistics (they keep their frame).
template <class Acc, class Count>
__device__ __forceinline__ bool mean_far_from_shift(Acc mean, Acc m2, Count len) {
  return mean * mean * Acc(len) > Acc(16) * m2;
}

// The corrected two-pass moments about c (in u units: c = u0 + mean, a row's first-element frame
// moved to its mean) of a row read element by element -- what the streaming rungs and the columns
// kernel take where mean_far_from_shift: (mean of d, sum of (d - that mean)^2), d = x * inv_scale - c.
// each(f) calls f(x) for each of this thread's elements (one read of them per call); sum(v) is
// the row's total of v over its threads (the same on each).
template <class Acc, class Each, class Sum>
__device__ __forceinline__ RowStats<Acc> moments_about(Acc c, Acc inv_scale, int64_t n, Each each, Sum sum) {
  Acc t = Acc(0);
  each([&](Acc x) { t += fma(x, inv_scale, -c); });
  const Acc delta = mean_of(sum(t), n);
  Acc q = Acc(0);
  each([&](Acc x) {
    const Acc d = fma(x, inv_scale, -c) - delta;
    q += d * d;
  });
  return {delta, sum(q)};
}

template <RowKind kKind, bool kLean, bool kFold = false, class Tile, class Reduce>
__device__ __forceinline__ RowStats<typename Tile::Acc> row_partial(const Tile& tile, int len, int rank,
                                                                    RowFrame<typename Tile::Acc>& frame, bool center,
                                                                    Reduce& reduce) {
  using Acc = typename Tile::Acc;
  const RowStats<Acc> s = chunk_partial<kKind, kLean, kFold>(tile, len, rank, frame, center, reduce);
  if constexpr (kKind == RowKind::kNorm) {
    if (center && mean_far_from_shift(s.a, s.b, len)) {  // uniform over the group, as s
      frame.shift = (frame.shift * frame.inv_scale + s.a) * frame.scale;
      return chunk_partial<kKind, kLean, kFold>(tile, len, rank, frame, center, reduce);
    }
  }
  return s;
}

// The norm partial of chunk_partial (same meaning: mean of u, sum of squared deviations of u) in
// one pass over the tile where the row allows it: kOnePass (lean vector path, fp16 / bf16).
// layer_norm: the sums of d = u - u0 and of d^2 (u0 = shift * inv_scale, the first element's u;
// fma(x, inv_scale, -u0) is bitwise (x - shift) * inv_scale) in one paired reduction, then
// M2 = sum d^2 - (sum d) * mean_d. That difference cancels when the mean is far from the first
// element: its relative error is about depth * 2^-24 * sum d^2 / M2. So it is taken only when
// sum d^2 <= 16 M2 (the first element within about 3.9 deviations of the mean; every row of
// uniform data, all but ~1e-4 of Gaussian rows), an error of about (16 + 32) * depth * 2^-24 in the
// variance (the sum of d^2 and the product (sum d) * mean_d each rounded over a reduction of depth
// ~15 for the 8192-element tile, ~18 in the add-norms' prologue): at most ~5e-5, 2.5e-5 in rstd,
// far below the output's 2^-9 (bf16) / 2^-12 (fp16) rounding. Other
// rows, and rows with NaN / inf (the test is false or its M2 NaN, as the two-pass one), move the
// row's frame to c = u0 + mean (frame.shift = c * scale, exact: scale is a power of two) and take
// a second pass over registers about it, sums of d' = u - c and d'^2 (the corrected two-pass
// algorithm: mean = c + mean d', M2 = sum d'^2 - (sum d') mean d', no cancellation with c within
// rounding of the mean). Re-centring matters beyond the variance: a mean kept relative to a
// first element k deviations away carries an fp32 rounding of k * 2^-24 deviations into every
// output (and kFold's mean_rel * rstd another), which for k ~ 50-100 exceeded the fp16 / bf16
// tolerance (test_one_pass_statistics_fallbacks, session 11 device run 2). A constant row has
// d = 0: mean 0 and M2 0 exactly, so outputs = bias exactly as before.
// rms_norm: sum x^2 (one FFMA per element: the product of two fp16 / bf16 values is exact) scaled
// by inv_scale^2 once: bitwise sum u^2 while no partial sum overflows; a row whose sum is not
// finite (|x| beyond about 2^63, or inf / NaN) takes the scaled pass instead.
// The origin statistics (kOrigin of norm_partial_one_pass; the add-norms take the sums from their
// residual prologue, add_residual_vectors): layer_norm's row sums of x and x^2 themselves, 3
// instructions per element (convert, FADD, FFMA: x^2 of an fp16 / bf16 value is exact) where the
// first-element frame takes 4 (its d = fma(x, inv, -u0)). M2 = sum x^2 - (sum x) * mean cancels
// as the first-element form does, here when the mean is far from 0, so it is accepted under the
// same test, sum x^2 <= 16 M2 (|mean| within about 3.9 deviations of 0: zero-centred activations,
// the benchmark's randn rows), and only where sum x^2 is a normal, finite number at least 2^-90
// (no product lost to the subnormal range: each of at most 16384 elements below 2^-63 errs by at
// most 2^-149, 2^-41 of 2^-94) -- then the row's frame becomes (shift 0, scale 1), the same error
// bound as the first-element form (1.2e-5 in the variance). Otherwise (constant rows, whose
// sum x * mean ~ sum x^2; rows far from 0, NaN / inf, overflow, tiny rows) it returns false and
// the caller takes the first-element form, which keeps its exact constant-row output.
// The frame's zero shift also lets the output pass drop x - shift (bitwise the same value).
template <class Acc>
__device__ __forceinline__ bool origin_stats(SumPair<Acc> s, int len, RowFrame<Acc>& frame, RowStats<Acc>& stats) {
  const Acc mean = mean_of(s.a, len);
  if (!(s.b >= Acc(0x1p-90f) && s.b <= std::numeric_limits<float>::max() && s.a * mean <= Acc(0.9375) * s.b)) {
    return false;
  }
  frame = RowFrame<Acc>{Acc(0), Acc(1), Acc(1)};
  stats = {mean, fma(-s.a, mean, s.b)};
  return true;
}

// kOrigin: try origin_stats first (one pass of 3 instructions per element), the first-element
// form below only where it declines.
// reduce: RowGroup<Acc>::Synced or ::Alternating; reduce_pair: RowGroup<SumPair<Acc>>::Synced.
template <bool kOrigin = false, class Tile, class Reduce, class PairReduce>
__device__ __forceinline__ RowStats<typename Tile::Acc> norm_partial_one_pass(const Tile& tile, int len, int rank,
                                                                              RowFrame<typename Tile::Acc>& frame,
                                                                              bool center, Reduce& reduce,
                                                                              PairReduce& reduce_pair) {
  using Acc = typename Tile::Acc;
  const Acc inv = frame.inv_scale;
  if (!center) {
    const Acc s2 = reduce(sum_tile_vectors(tile, len, rank, [](Acc v) { return v * v; }), SumOp{});
    if (s2 - s2 == Acc(0)) return {Acc(0), s2 * inv * inv};  // uniform: every thread holds the same s2
    return {Acc(0), reduce(sum_tile_vectors(tile, len, rank, [inv](Acc v) {
              const Acc u = v * inv;
              return u * u;
            }), SumOp{})};
  }
  if constexpr (kOrigin) {
    RowStats<Acc> stats;
    const SumPair<Acc> o = reduce_pair(sum_and_squares_tile_vectors(tile, len, rank, [](Acc v) { return v; }), PairSumOp{});
    if (origin_stats(o, len, frame, stats)) return stats;
  }
  const Acc u0 = frame.shift * inv;
  const SumPair<Acc> s =
      reduce_pair(sum_and_squares_tile_vectors(tile, len, rank, [=](Acc v) { return fma(v, inv, -u0); }), PairSumOp{});
  const Acc mean = mean_of(s.a, len);
  if (s.a * mean <= Acc(0.9375) * s.b) return {mean, fma(-s.a, mean, s.b)};
  const Acc c = u0 + mean;
  const SumPair<Acc> t =
      reduce_pair(sum_and_squares_tile_vectors(tile, len, rank, [=](Acc v) { return fma(v, inv, -c); }), PairSumOp{});
  frame.shift = c * frame.scale;
  const Acc delta = mean_of(t.a, len);
  return {delta, fma(-t.a, delta, t.b)};
}

// Softmax (not log) of a whole row held in `tile`, with one exponential per element: the tile is
// replaced by exp(x - max) and 1 / sum is returned, so the output is value * (1 / sum). Not lean,
// the values are those of chunk_partial + RowOutput (the same exp_of(x - max), summed in the same
// order, the same reciprocal), which evaluate the exponential twice: once for the sum, once for
// the output. The fill slots become exp(-inf - max) = 0 and are skipped by the sum anyway. A row
// of -inf (max -inf) gets sum 0 as in chunk_partial: 1 / 0 times exp(NaN) is NaN, as RowOutput gives.
template <bool kLean, class Tile, class Reduce>
__device__ __forceinline__ typename Tile::Acc softmax_exponentiate(Tile& tile, int len, int rank, Reduce& reduce) {
  using Acc = typename Tile::Acc;
  using T = typename Tile::Value;
  const Acc m = tile_max<kLean>(tile, reduce);
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
#pragma unroll
    for (int l = 0; l < Tile::kLanes; ++l) {
      if constexpr (kLean) tile.v[s][l] = exp_lean<T>(tile.v[s][l] - m);
      else tile.v[s][l] = exp_of(tile.v[s][l] - m);
    }
  }
  Acc sum = reduce(tile_sum<kLean>(tile, len, rank, [](Acc e) { return e; }), SumOp{});
  if (m == -std::numeric_limits<Acc>::infinity()) sum = Acc(0);
  return softmax_scale(RowStats<Acc>{m, sum}, false);
}

// Row statistics (mean - shift, rstd) from a norm partial covering the whole row (norm_mean_rstd).
template <class Acc>
__device__ __forceinline__ RowStats<Acc> norm_row_stats(RowStats<Acc> partial, RowFrame<Acc> frame, int64_t row_len,
                                                        double eps) {
  RowStats<Acc> s;
  norm_mean_rstd(partial.a, partial.b, row_len, frame, eps, &s.a, &s.b);
  return s;
}

// The output of one element: softmax_out (row_math.hpp), or ((x - shift) - mean_rel) * rstd * w + b
// with stats = (mean_rel, rstd). kFold (chunk_partial's): fma(fma(x - shift, rstd, -mean_rel *
// rstd), w, b), the product mean_rel * rstd rounded once per row: one instruction per element
// fewer, the same accuracy (x - shift is exact where shift is the first element, and rounded
// relative to |x - shift| where norm_partial_one_pass re-centred the frame on the mean; mean_rel *
// rstd is O(1) for a shift within a few deviations of the mean), and a constant row (x = shift,
// mean_rel = 0) still gives exactly b. Folding the shift itself, (x - (shift + mean_rel)) * rstd, would round
// shift + mean_rel at the row's magnitude: an error of 2^-24 |shift| / deviation in the output.
template <RowKind kKind, class Acc, bool kFold = false>
struct RowOutput {
  RowStats<Acc> stats;
  Acc scale_or_shift;  // softmax: 1 / sum or log(sum); norm: the frame's shift
  Acc centered_mean;   // kFold: mean_rel * rstd
  bool log;

  __device__ __forceinline__ RowOutput(RowStats<Acc> s, Acc shift, bool log_) : stats(s), log(log_) {
    if constexpr (kKind == RowKind::kSoftmax) scale_or_shift = softmax_scale(s, log_);
    else scale_or_shift = shift;
    if constexpr (kFold) centered_mean = s.a * s.b;
  }
  __device__ __forceinline__ Acc operator()(Acc v, Acc w, Acc b) const {
    if constexpr (kKind == RowKind::kSoftmax) {
      return softmax_out(v, stats, scale_or_shift, log);
    } else if constexpr (kFold) {
      return fma(fma(v - scale_or_shift, stats.b, -centered_mean), w, b);
    } else {
      return ((v - scale_or_shift) - stats.a) * stats.b * w + b;
    }
  }
};

// Writes the statistics outputs of one row (norm kind), from one thread: mean = shift + mean_rel.
template <class Acc>
__device__ __forceinline__ void write_row_stats(const NormParams& p, int64_t row, RowStats<Acc> s, Acc shift) {
  if (p.mean != nullptr) static_cast<Acc*>(p.mean)[row] = shift + s.a;
  if (p.rstd != nullptr) static_cast<Acc*>(p.rstd)[row] = s.b;
}

}  // namespace norms
}  // namespace gpuprims
