#pragma once
// The streaming rungs of the ladder: one block per row, re-reading the row from global memory for
// each pass instead of holding it on chip. Any row length; element loads (coalesced when the row is
// contiguous). They exist to show what holding the row on chip buys, and as the textbook
// formulations the one-pass kernel is checked against.
//   kThreePass (softmax): max; sum of exp(x - max); write              3 reads + 1 write
//   kOnline    (softmax): running (max, sum) per thread; write          2 reads + 1 write
//   kTwoPass   (layer_norm): mean; centered M2; write                   3 reads + 1 write
//              (rms_norm): sum of squares; write                        2 reads + 1 write
//   kWelford   (layer_norm): Welford (mean, M2) per thread; write       2 reads + 1 write
#include <cstdint>
#include <limits>

#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/row_stats.cuh"
#include "gpuprims/norms/row_tile.cuh"

namespace gpuprims {
namespace norms {

constexpr int kStreamingThreads = 256;

template <class T, RowKind kKind, NormAlgorithm kAlgorithm>
__global__ void __launch_bounds__(kStreamingThreads)
row_streaming_kernel(NormParams p) {
  using Acc = acc_t<T>;
  using Group = RowGroup<Acc, kStreamingThreads>;
  constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
  __shared__ typename Group::TempStorage temp;
  const RowLayout& layout = p.layout;
  const int64_t n = layout.row_len, xs = layout.x_elem_stride;
  for (int64_t row = blockIdx.x; row < layout.num_rows; row += gridDim.x) {
    const T* xr = static_cast<const T*>(p.x) + layout.x_row_offset(row);
    const auto at = [=](int64_t i) { return cast_value<Acc>(xr[i * xs]); };
    // A first element (the frame's shift) beyond 4 deviations from the mean: the corrected two-pass
    // statistics about c = u0 + mean, two more reads of the row (row_partial in row_stats.cuh says why).
    const auto recentre = [&](RowFrame<Acc>& f, Acc& mean, Acc& m2) {
      if (!(p.center && mean_far_from_shift(mean, m2, n))) return;  // uniform over the block
      const Acc c = f.shift * f.inv_scale + mean;
      const auto each = [&](auto g) {
        for (int64_t i = threadIdx.x; i < n; i += kStreamingThreads) g(at(i));
      };
      const RowStats<Acc> about_c =
          moments_about(c, f.inv_scale, n, each, [&](Acc v) { return Group::all(v, SumOp{}, temp); });
      mean = about_c.a;
      m2 = about_c.b;
      f.shift = c * f.scale;
    };
    RowStats<Acc> stats;
    Acc shift = Acc(0);
    if constexpr (kAlgorithm == NormAlgorithm::kThreePass) {
      Acc m = kNegInf;
      for (int64_t i = threadIdx.x; i < n; i += kStreamingThreads) m = nan_max(m, at(i));
      m = Group::all(m, NanMaxOp{}, temp);
      Acc s = Acc(0);
      for (int64_t i = threadIdx.x; i < n; i += kStreamingThreads) s += exp_of(at(i) - m);
      s = Group::all(s, SumOp{}, temp);
      stats = {m, m == kNegInf ? Acc(0) : s};
    } else if constexpr (kAlgorithm == NormAlgorithm::kOnline) {
      // Each thread keeps (m, s) with s = sum exp(x - m) over its elements; a larger x rescales s.
      OnlineSoftmax<Acc> o;
      for (int64_t i = threadIdx.x; i < n; i += kStreamingThreads) o.add(at(i));
      const Acc row_max = Group::all(o.m, NanMaxOp{}, temp);
      stats = {row_max, Group::all(o.m == kNegInf ? Acc(0) : o.s * exp_of(o.m - row_max), SumOp{}, temp)};
    } else if constexpr (kAlgorithm == NormAlgorithm::kTwoPass) {
      RowFrame<Acc> f = row_frame(xr, n, p.center);
      Acc mean = Acc(0);
      if (p.center) {
        Acc t = Acc(0);
        for (int64_t i = threadIdx.x; i < n; i += kStreamingThreads) t += (at(i) - f.shift) * f.inv_scale;
        mean = mean_of(Group::all(t, SumOp{}, temp), n);
      }
      Acc m2 = Acc(0);
      for (int64_t i = threadIdx.x; i < n; i += kStreamingThreads) {
        const Acc d = (at(i) - f.shift) * f.inv_scale - mean;
        m2 += d * d;
      }
      Acc row_m2 = Group::all(m2, SumOp{}, temp);
      recentre(f, mean, row_m2);
      stats = norm_row_stats(RowStats<Acc>{mean, row_m2}, f, n, p.eps);
      shift = f.shift;
    } else {
      static_assert(kAlgorithm == NormAlgorithm::kWelford, "unknown streaming algorithm");
      // Welford per thread on u, then the threads' (count, mean, M2) merged in closed form.
      RowFrame<Acc> f = row_frame(xr, n, p.center);
      WelfordMoments<Acc> w;
#pragma unroll 1  // a loop-carried recurrence: unrolling only lengthens live ranges
      for (int64_t i = threadIdx.x; i < n; i += kStreamingThreads) w.add((at(i) - f.shift) * f.inv_scale);
      Acc row_mean = mean_of(Group::all(w.count * w.mean, SumOp{}, temp), n);
      const Acc dm = w.mean - row_mean;
      Acc row_m2 = Group::all(w.m2 + w.count * dm * dm, SumOp{}, temp);
      recentre(f, row_mean, row_m2);
      stats = norm_row_stats(RowStats<Acc>{row_mean, row_m2}, f, n, p.eps);
      shift = f.shift;
    }
    if constexpr (kKind == RowKind::kNorm) {
      if (threadIdx.x == 0) write_row_stats(p, row, stats, shift);
    }
    const RowOutput<kKind, Acc> out(stats, shift, p.log);
    const T* w = static_cast<const T*>(p.weight);
    const T* b = static_cast<const T*>(p.bias);
    T* yr = static_cast<T*>(p.y) + layout.y_row_offset(row);
#pragma unroll 1  // (ptxas's own unrolling of this loop spilled a few bytes in the 16-bit norm kernels)
    for (int64_t i = threadIdx.x; i < n; i += kStreamingThreads) {
      const Acc wi = w ? cast_value<Acc>(w[i * p.weight_stride]) : Acc(1);
      const Acc bi = b ? cast_value<Acc>(b[i * p.bias_stride]) : Acc(0);
      yr[i * layout.y_elem_stride] = cast_value<T>(out(at(i), wi, bi));
    }
  }
}

}  // namespace norms
}  // namespace gpuprims
