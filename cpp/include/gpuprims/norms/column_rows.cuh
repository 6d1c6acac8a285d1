#pragma once
// Rows that lie side by side: the row axis strided and the rows themselves one element apart (the
// innermost other dimension has unit stride in x and y) -- softmax over the channels of an NCHW
// batch, layer_norm along axis 0 of a matrix. A kernel that walks each row along its own stride
// reads one element per 32-byte sector there (the block-per-row kernels measured 5-15 % of copy,
// session 48 device run 1, docs/norms.md "Rows side by side"). Here a block takes 32 adjacent rows,
// one per lane, so each warp load reads element i of 32 neighbouring rows: consecutive addresses.
// The block's kSlices warps split every row's elements (warp w: elements w, w + kSlices, ...) and
// combine their per-row statistics through shared memory, in slice order (deterministic).
//
// Rows of up to kSlices * kHeld elements are held in registers (ColumnSlice): one read and one
// write, the statistics by two passes over the registers (softmax: the max, then the sum of
// exponentials; layer_norm: the mean of u = (x - shift) * inv_scale, the row frame of row_math.hpp,
// then the sums of deviations and their squares about it). Longer rows take two reads and one write, as the streaming rungs: pass 1
// accumulates per thread (OnlineSoftmax; WelfordMoments of u; rms_norm the sum of u^2), pass 2 reads
// x again and writes y; a block reads its 32 rows soon enough for pass 2 to find many of them in L2.
// Each thread issues its loads before it uses the first (held: all of them; streamed: batches of
// kColumnBatch -- the accumulations are loop-carried recurrences, and without the batch a thread
// would keep one load in flight).
#include <cstdint>
#include <limits>

#include "gpuprims/norms/column_shape.hpp"
#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/row_math.hpp"
#include "gpuprims/norms/row_stats.cuh"
#include "gpuprims/norms/row_tile.cuh"
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {
namespace norms {

constexpr int kColumnBatch = 8;  // loads a thread issues before using the first

// The kSlices values of one lane (one row) combined; every thread of the lane gets the result.
// `exchange` holds column_exchange_values<kSlices, kGroups>() values; one slice: the value itself.
// Below 16 slices each thread reads its lane's kSlices partials in slice order; from 16 on, a tree:
// the partials are written lane-major (lane l's slice s at l * (kSlices + 1) + s; the pad makes a
// warp's writes, one slice of 32 lanes, conflict-free), each run of kSlices threads reads one
// lane's partials and folds them by a shuffle butterfly (group_reduce), and the first writes the
// lane's result for every thread of the lane to read: two shared loads and log2(kSlices) shuffles
// a thread for kSlices loads, but a longer chain of dependent steps. Session 51 device run 1 (H200,
// the tree for every width, against sessions 49-50's loops on other machines, % of copy): 16 and 32
// slices gained (layer_norm_backward of 192 float32 channels 27.2 -> 31.1, of axis 0 of 256 x 8192
// 6.3 -> 8.0, softmax of 256 channels 70.5 -> 72.4), 2-8 slices lost (softmax of 21 float32
// channels 41.5 -> 36.0, its backward 65.8 -> 57.8, ConvNeXt's layer_norm 56.6 -> 51.7); run 2,
// the tree from 16 slices: 41.7, 65.5, 57.2. Either order is fixed (deterministic), and the staged
// and register kernels combine alike, so in one block shape they agree bitwise.
constexpr int kColumnTreeMinSlices = 16;
template <int kSlices>
constexpr int kColumnExchangeGroup = kSlices >= kColumnTreeMinSlices ? kColumnLanes * (kSlices + 1) + kColumnLanes
                                                                      : kColumnLanes * kSlices;
template <int kSlices, int kGroups>
constexpr int column_exchange_values() {
  return kGroups * kColumnExchangeGroup<kSlices>;
}

template <int kSlices, class V, class Op>
__device__ __forceinline__ V column_all(V v, Op op, V* exchange) {
  V* group = exchange + threadIdx.z * kColumnExchangeGroup<kSlices>;
  if constexpr (kSlices == 1) {
    return v;
  } else if constexpr (kSlices < kColumnTreeMinSlices) {
    V* mine = group + threadIdx.x;
    __syncthreads();  // the previous exchange has been read by every thread
    mine[threadIdx.y * kColumnLanes] = v;
    __syncthreads();
    V r = mine[0];
#pragma unroll
    for (int s = 1; s < kSlices; ++s) r = op(r, mine[s * kColumnLanes]);
    return r;
  } else {
    // Two barriers: a thread's reads of the partials precede the second, so the next exchange's
    // writes need none before them; its read of the result precedes the next exchange's first,
    // behind which alone results are written.
    V* results = group + kColumnLanes * (kSlices + 1);
    group[threadIdx.x * (kSlices + 1) + threadIdx.y] = v;
    __syncthreads();
    const int t = threadIdx.y * kColumnLanes + threadIdx.x;  // kSlices consecutive threads a lane
    const int lane = t / kSlices, slice = t % kSlices;
    const V r = group_reduce<kSlices>(group[lane * (kSlices + 1) + slice], op);
    if (slice == 0) results[lane] = r;
    __syncthreads();
    return results[threadIdx.x];
  }
}

// f(i, load(i)) for this thread's elements of its row (slice, slice + kSlices, ... < n), each batch's
// kColumnBatch loads issued before the first f; nothing where `active` is false.
template <int kSlices, class Load, class F>
__device__ __forceinline__ void column_slice_for_each(int64_t n, bool active, Load load, F f) {
  using V = decltype(load(int64_t(0)));
  constexpr int64_t kStep = kSlices;
  for (int64_t base = threadIdx.y; base < n; base += kStep * kColumnBatch) {
    V v[kColumnBatch];
#pragma unroll
    for (int j = 0; j < kColumnBatch; ++j) {
      const int64_t i = base + j * kStep;
      v[j] = active && i < n ? load(i) : V{};
    }
#pragma unroll
    for (int j = 0; j < kColumnBatch; ++j) {
      const int64_t i = base + j * kStep;
      if (active && i < n) f(i, v[j]);
    }
  }
}

// An element of x with the affine values of its position (the output pass's loads).
template <class Acc>
struct ColumnElement {
  Acc x = Acc(0);
  Acc w = Acc(1);
  Acc b = Acc(0);
};

// A thread's elements of its row (slice, slice + kSlices, ... < n): kHeld > 0 holds them in
// registers (rows of up to kSlices * kHeld elements, read once: load() issues every load before
// the first use), kHeld = 0 reads them again on every pass (column_slice_for_each).
// V: what load(i) returns (a value, or the backward's pair of values).
template <int kSlices, int kHeld, class V>
struct ColumnSlice {
  static constexpr bool kHolds = kHeld > 0;
  V v[kHeld > 0 ? kHeld : 1];

  template <class Load>
  __device__ __forceinline__ void load(int64_t n, bool active, Load x_at) {
    if constexpr (kHeld > 0) {
#pragma unroll
      for (int j = 0; j < kHeld; ++j) {
        const int64_t i = threadIdx.y + int64_t(j) * kSlices;
        v[j] = active && i < n ? x_at(i) : V{};
      }
    }
  }
  template <class Load, class F>
  __device__ __forceinline__ void for_each(int64_t n, bool active, Load x_at, F f) const {
    if constexpr (kHeld > 0) {
#pragma unroll
      for (int j = 0; j < kHeld; ++j) {
        const int64_t i = threadIdx.y + int64_t(j) * kSlices;
        if (active && i < n) f(i, v[j]);
      }
    } else {
      column_slice_for_each<kSlices>(n, active, x_at, f);
    }
  }
};

// This thread's row in the group first + threadIdx.z of a block's loop over groups (the loop is
// uniform over the block for its barriers: a group past the last, or a lane past its plane's last
// row, joins the exchanges with valid false and a row that exists).
struct ColumnRow {
  int64_t row;
  bool valid;
};
__device__ __forceinline__ ColumnRow column_row(const ColumnShape& shape, int64_t first) {
  const int64_t g = first + threadIdx.z < shape.groups ? first + threadIdx.z : first;
  const int64_t plane = shape.plane_of.div(g);
  const int64_t column = (g - plane * shape.groups_per_plane) * kColumnLanes + threadIdx.x;
  const bool valid = column < shape.width && first + threadIdx.z < shape.groups;
  return {plane * shape.width + (valid ? column : 0), valid};
}

// A block of kGroups x kSlices warps: group z (threadIdx.z) takes 32 adjacent rows, its kSlices
// warps (threadIdx.y) split their elements; kHeld: ColumnSlice.
// Registers: at most 64 a thread for 2- and 4-byte types (1024 resident threads an SM), 128 for
// float64: the bounds session 48's run 5 measured under. (Unbounded, run 4's float32 norm-kind
// held kernel of 16 warps took 128 registers and still spilled 76 bytes; that spill came from a
// conditional re-centring pass since replaced by the unconditional one below. CUDA 13.0, sm_90a:
// float16 / bfloat16 norm-kind held kernels of 16 / 32 warps spill 16 / 8 bytes under the bound.)
template <class T, int kThreads>
constexpr int column_min_blocks() {
  const int resident = sizeof(T) == 8 ? 512 : 1024;
  return resident / kThreads > 1 ? resident / kThreads : 1;
}

// One group's pass over this thread's row (`row`; nothing read or written where `valid` is false,
// but every exchange joined): the statistics, then the output. `slice` gives the thread's elements
// (for_each): Slice::kHolds, from registers or a staged tile on every pass (the two-pass
// statistics); otherwise streamed through x_at, read again on every pass. `x0` points at the row's
// element 0 (the norm kind's frame).
template <class T, RowKind kKind, int kSlices, class Slice, class XAt>
__device__ __forceinline__ void column_rows_group(const NormParams& p, int64_t row, bool valid, const T* x0,
                                                  const Slice& slice, XAt x_at, acc_t<T>* exchange) {
  using Acc = acc_t<T>;
  constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
  constexpr bool kHolds = Slice::kHolds;
  const RowLayout& layout = p.layout;
  const int64_t n = layout.row_len;
  const auto all = [&](Acc v, auto op) { return column_all<kSlices>(v, op, exchange); };
  const auto each = [&](bool active, auto f) { slice.for_each(n, active, x_at, f); };

  RowStats<Acc> stats;
  Acc shift = Acc(0);
  if constexpr (kKind == RowKind::kSoftmax) {
    if constexpr (kHolds) {  // the max, then the sum of exponentials about it, from the held values
      Acc m = kNegInf;
      each(valid, [&](int64_t, Acc v) { m = nan_max(m, v); });
      const Acc row_max = all(m, NanMaxOp{});
      Acc sum = Acc(0);
      each(valid, [&](int64_t, Acc v) { sum += exp_of(v - row_max); });
      const Acc total = all(sum, SumOp{});  // every thread: the exchange holds barriers
      stats = {row_max, row_max == kNegInf ? Acc(0) : total};
    } else {
      OnlineSoftmax<Acc> o;
      each(valid, [&](int64_t, Acc v) { o.add(v); });
      const Acc row_max = all(o.m, NanMaxOp{});
      stats = {row_max, all(o.m == kNegInf ? Acc(0) : o.s * exp_of(o.m - row_max), SumOp{})};
    }
  } else {
    RowFrame<Acc> f = row_frame(x0, valid ? n : 0, p.center);
    Acc mean = Acc(0), m2;
    if (p.center && kHolds) {
      // From the held values: the mean of u about the first element's u0, then the sums of d and d^2
      // about c = u0 + mean (rounded), and the frame moved to c: the corrected two-pass
      // statistics, mean = c + sum d / n, M2 = sum d^2 - (sum d) * (sum d / n), with every
      // output's x - shift rounded at its own deviation however far the first element lies
      // (what row_partial does for a first element beyond 4 deviations, here for every row: it
      // costs no pass more). A constant row has mean 0 and d = 0 exactly: its outputs are the bias.
      const Acc inv = f.inv_scale;
      Acc t = Acc(0);
      each(valid, [&](int64_t, Acc v) { t += (v - f.shift) * inv; });
      const Acc c = f.shift * inv + mean_of(all(t, SumOp{}), n);
      Acc sd = Acc(0), sd2 = Acc(0);
      each(valid, [&](int64_t, Acc v) {
        const Acc d = fma(v, inv, -c);
        sd += d;
        sd2 = fma(d, d, sd2);
      });
      const Acc total = all(sd, SumOp{});
      mean = mean_of(total, n);
      m2 = fma(-total, mean, all(sd2, SumOp{}));
      f.shift = c * f.scale;
    } else if (p.center) {
      // One read: Welford per thread, merged in closed form
      WelfordMoments<Acc> moments;
      each(valid, [&](int64_t, Acc v) { moments.add((v - f.shift) * f.inv_scale); });
      mean = mean_of(all(moments.count * moments.mean, SumOp{}), n);
      const Acc dm = moments.mean - mean;
      m2 = all(moments.m2 + moments.count * dm * dm, SumOp{});
      // A first element (the frame's shift) beyond 4 deviations from the mean: the corrected
      // two-pass statistics about c = u0 + mean (row_partial in row_stats.cuh says why), two
      // more reads of those rows. Per row; every thread joins the exchanges if any row needs it.
      const bool far = valid && mean_far_from_shift(mean, m2, n);
      if (__syncthreads_or(far)) {
        const Acc c = f.shift * f.inv_scale + mean;
        const auto each_far = [&](auto g) { each(far, [&](int64_t, Acc v) { g(v); }); };
        const RowStats<Acc> about_c =
            moments_about(c, f.inv_scale, n, each_far, [&](Acc v) { return all(v, SumOp{}); });
        if (far) {
          mean = about_c.a;
          m2 = about_c.b;
          f.shift = c * f.scale;
        }
      }
    } else {
      Acc s2 = Acc(0);
      each(valid, [&](int64_t, Acc v) {
        const Acc u = v * f.inv_scale;
        s2 += u * u;
      });
      m2 = all(s2, SumOp{});
    }
    stats = norm_row_stats(RowStats<Acc>{mean, m2}, f, n, p.eps);
    shift = f.shift;
    if (valid && threadIdx.y == 0) write_row_stats(p, row, stats, shift);
  }

  const RowOutput<kKind, Acc> out(stats, shift, p.log);
  const T* w = static_cast<const T*>(p.weight);
  const T* b = static_cast<const T*>(p.bias);
  T* yr = static_cast<T*>(p.y) + layout.y_row_offset(row);
  const int64_t ys = layout.y_elem_stride;
  const auto write = [&](int64_t i, Acc v, Acc wi, Acc bi) { yr[i * ys] = cast_value<T>(out(v, wi, bi)); };
  if constexpr (kHolds) {
    each(valid, [&](int64_t i, Acc v) {
      write(i, v, w ? cast_value<Acc>(w[i * p.weight_stride]) : Acc(1), b ? cast_value<Acc>(b[i * p.bias_stride]) : Acc(0));
    });
  } else {  // x again, with the affine values in the same batch of loads
    const auto element_at = [=](int64_t i) {
      return ColumnElement<Acc>{x_at(i), w ? cast_value<Acc>(w[i * p.weight_stride]) : Acc(1),
                                b ? cast_value<Acc>(b[i * p.bias_stride]) : Acc(0)};
    };
    column_slice_for_each<kSlices>(n, valid, element_at, [&](int64_t i, ColumnElement<Acc> e) { write(i, e.x, e.w, e.b); });
  }
}

template <class T, RowKind kKind, int kSlices, int kGroups, int kHeld>
__global__ void __launch_bounds__(kColumnLanes * kSlices * kGroups,
                                  column_min_blocks<T, kColumnLanes * kSlices * kGroups>())
column_rows_kernel(NormParams p, ColumnShape shape) {
  using Acc = acc_t<T>;
  __shared__ Acc exchange[column_exchange_values<kSlices, kGroups>()];
  const RowLayout& layout = p.layout;
  for (int64_t first = int64_t(blockIdx.x) * kGroups; first < shape.groups; first += int64_t(gridDim.x) * kGroups) {
    const ColumnRow mine = column_row(shape, first);
    const T* xr = static_cast<const T*>(p.x) + layout.x_row_offset(mine.row);
    const int64_t xs = layout.x_elem_stride;
    const auto x_at = [=](int64_t i) { return cast_value<Acc>(xr[i * xs]); };
    ColumnSlice<kSlices, kHeld, Acc> slice;
    slice.load(layout.row_len, mine.valid, x_at);
    column_rows_group<T, kKind, kSlices>(p, mine.row, mine.valid, xr, slice, x_at, exchange);
  }
}

}  // namespace norms
}  // namespace gpuprims
