#pragma once
// Backward kernels of the norms family.
//
// row_backward_kernel: dy and the saved row (y, or x) held in registers by the group that owns the
// row (RowTile), the row sums reduced across the group, dx written: one read of each input and one
// write. The norm kind also accumulates dy * xhat and dy per column in registers over every row
// the group handles, and writes them once as the group's partial sums of dweight / dbias.
//
// row_backward_two_pass_kernel: a block per row, any length: the row sums from a first read, dx
// from a second; the block's partial sums of dweight / dbias live in global memory (the block owns
// its partial row, each column owned by one thread: no races, no atomics).
//
// column_sum_kernel: dweight[c] = sum over groups of partial[g][c], in a fixed order.
#include <cstdint>

#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/row_math.hpp"
#include "gpuprims/norms/row_tile.cuh"

namespace gpuprims {
namespace norms {

template <class T, RowKind kKind, int kThreadsPerRow, int kRowsPerBlock, int kVecs, bool kVector>
__global__ void __launch_bounds__(kThreadsPerRow * kRowsPerBlock)
row_backward_kernel(NormBackwardParams p) {
  using Tile = RowTile<T, kThreadsPerRow, kVecs>;
  using Acc = typename Tile::Acc;
  using Group = RowGroup<Acc, kThreadsPerRow>;
  constexpr int kLanes = Tile::kLanes;
  static_assert(Group::kIsWarp || kRowsPerBlock == 1, "a block-wide group owns the whole block");
  __shared__ typename Group::TempStorage temp;

  const RowLayout& dl = p.dy_layout;
  const RowLayout& sl = p.saved_layout;
  const int len = static_cast<int>(dl.row_len);  // <= Tile::kCapacity, checked by the host
  const int rank = threadIdx.x % kThreadsPerRow;
  const int group = threadIdx.x / kThreadsPerRow;
  const T* dy = static_cast<const T*>(p.dy);
  const T* saved = static_cast<const T*>(p.saved);
  T* dx = static_cast<T*>(p.dx);
  const T* weight = static_cast<const T*>(p.weight);
  // Column sums of dy * xhat and dy over this group's rows (norm kind; the softmax kind leaves
  // them unused and the compiler drops them).
  Acc dw[kVecs][kLanes] = {};
  Acc db[kVecs][kLanes] = {};

  // The loop bound is uniform over the group that owns a row (see row_on_chip_kernel).
  for (int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + group; row < dl.num_rows;
       row += int64_t(gridDim.x) * kRowsPerBlock) {
    Tile g, s;  // g: dy, then the per-element result; s: the saved row (norm kind: then xhat)
    g.load(dy + dl.x_row_offset(row), dl.x_elem_stride, 0, len, rank, kVector, Acc(0));
    s.load(saved + sl.x_row_offset(row), sl.x_elem_stride, 0, len, rank, kVector, Acc(0));
    if constexpr (kKind == RowKind::kSoftmax) {
      Acc part = Acc(0);
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) {
          if (Tile::slot_begin(k, rank) + l < len) part += softmax_backward_term(s.v[k][l], g.v[k][l], p.log);
        }
      }
      const Acc sum = Group::all(part, SumOp{}, temp);
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) g.v[k][l] = softmax_backward_out(s.v[k][l], g.v[k][l], sum, p.log);
      }
    } else {
      const Acc mean = p.center ? static_cast<const Acc*>(p.mean)[row] : Acc(0);
      const Acc rstd = static_cast<const Acc*>(p.rstd)[row];
      Acc part_g = Acc(0), part_gx = Acc(0);
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int e0 = Tile::slot_begin(k, rank);
        Acc w[kLanes];
        if (weight == nullptr || e0 >= len) {
#pragma unroll
          for (int l = 0; l < kLanes; ++l) w[l] = Acc(1);
        } else if constexpr (kVector) {
          const Vec16<T> q = load_vec16<T, LoadPolicy::kReadOnly>(weight + e0);  // every row reuses it
#pragma unroll
          for (int l = 0; l < kLanes; ++l) w[l] = cast_value<Acc>(q.lane[l]);
        } else {
#pragma unroll
          for (int l = 0; l < kLanes; ++l) {
            w[l] = e0 + l < len ? cast_value<Acc>(weight[int64_t(e0 + l) * p.weight_stride]) : Acc(1);
          }
        }
#pragma unroll
        for (int l = 0; l < kLanes; ++l) {
          if (e0 + l >= len) continue;  // slots past the row keep dy = 0 and add nothing
          const Acc d = g.v[k][l];
          const Acc xhat = (s.v[k][l] - mean) * rstd;
          s.v[k][l] = xhat;
          dw[k][l] += d * xhat;
          db[k][l] += d;
          const Acc gv = d * w[l];
          g.v[k][l] = gv;
          part_g += gv;
          part_gx += gv * xhat;
        }
      }
      const Acc mean_g = p.center ? mean_of(Group::all(part_g, SumOp{}, temp), len) : Acc(0);
      const Acc mean_gx = mean_of(Group::all(part_gx, SumOp{}, temp), len);
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) g.v[k][l] = norm_backward_out(g.v[k][l], s.v[k][l], rstd, mean_g, mean_gx);
      }
    }
    g.store(dx + dl.y_row_offset(row), dl.y_elem_stride, 0, len, rank, kVector, nullptr, 1, nullptr, 1,
            [](Acc v, Acc, Acc) { return v; });
  }

  if constexpr (kKind == RowKind::kNorm) {
    // Every group writes its partial row, zeros when it had no rows: the column sums read them all.
    const int64_t at = (int64_t(blockIdx.x) * kRowsPerBlock + group) * len;
    Acc* pw = static_cast<Acc*>(p.dweight_partial);
    Acc* pb = static_cast<Acc*>(p.dbias_partial);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
#pragma unroll
      for (int l = 0; l < kLanes; ++l) {
        const int e = Tile::slot_begin(k, rank) + l;
        if (e >= len) continue;
        if (pw != nullptr) pw[at + e] = dw[k][l];
        if (pb != nullptr) pb[at + e] = db[k][l];
      }
    }
  }
}

// A block per row (grid-stride), any row length, element by element. The partial sums of block b
// are at b * row_len of the partial buffers: its first row (row b) writes them, later rows add.
template <class T, RowKind kKind, int kThreads>
__global__ void __launch_bounds__(kThreads)
row_backward_two_pass_kernel(NormBackwardParams p) {
  using Acc = acc_t<T>;
  using Group = RowGroup<Acc, kThreads>;
  __shared__ typename Group::TempStorage temp;
  const RowLayout& dl = p.dy_layout;
  const RowLayout& sl = p.saved_layout;
  const int64_t n = dl.row_len;
  const int64_t ds = dl.x_elem_stride, ss = sl.x_elem_stride, xs = dl.y_elem_stride;
  const T* weight = static_cast<const T*>(p.weight);
  const auto weight_at = [&](int64_t i) { return weight != nullptr ? cast_value<Acc>(weight[i * p.weight_stride]) : Acc(1); };
  for (int64_t row = blockIdx.x; row < dl.num_rows; row += gridDim.x) {
    const T* dyr = static_cast<const T*>(p.dy) + dl.x_row_offset(row);
    const T* sr = static_cast<const T*>(p.saved) + sl.x_row_offset(row);
    T* dxr = static_cast<T*>(p.dx) + dl.y_row_offset(row);
    if constexpr (kKind == RowKind::kSoftmax) {
      Acc part = Acc(0);
      for (int64_t i = threadIdx.x; i < n; i += kThreads) {
        part += softmax_backward_term(cast_value<Acc>(sr[i * ss]), cast_value<Acc>(dyr[i * ds]), p.log);
      }
      const Acc sum = Group::all(part, SumOp{}, temp);
      for (int64_t i = threadIdx.x; i < n; i += kThreads) {
        dxr[i * xs] = cast_value<T>(softmax_backward_out(cast_value<Acc>(sr[i * ss]), cast_value<Acc>(dyr[i * ds]),
                                                         sum, p.log));
      }
    } else {
      const Acc mean = p.center ? static_cast<const Acc*>(p.mean)[row] : Acc(0);
      const Acc rstd = static_cast<const Acc*>(p.rstd)[row];
      Acc part_g = Acc(0), part_gx = Acc(0);
      for (int64_t i = threadIdx.x; i < n; i += kThreads) {
        const Acc xhat = (cast_value<Acc>(sr[i * ss]) - mean) * rstd;
        const Acc gv = cast_value<Acc>(dyr[i * ds]) * weight_at(i);
        part_g += gv;
        part_gx += gv * xhat;
      }
      const Acc mean_g = p.center ? mean_of(Group::all(part_g, SumOp{}, temp), n) : Acc(0);
      const Acc mean_gx = mean_of(Group::all(part_gx, SumOp{}, temp), n);
      const bool first = row == int64_t(blockIdx.x);
      Acc* pw = p.dweight_partial != nullptr ? static_cast<Acc*>(p.dweight_partial) + int64_t(blockIdx.x) * n : nullptr;
      Acc* pb = p.dbias_partial != nullptr ? static_cast<Acc*>(p.dbias_partial) + int64_t(blockIdx.x) * n : nullptr;
      for (int64_t i = threadIdx.x; i < n; i += kThreads) {
        const Acc d = cast_value<Acc>(dyr[i * ds]);
        const Acc xhat = (cast_value<Acc>(sr[i * ss]) - mean) * rstd;
        dxr[i * xs] = cast_value<T>(norm_backward_out(d * weight_at(i), xhat, rstd, mean_g, mean_gx));
        if (pw != nullptr) pw[i] = first ? d * xhat : pw[i] + d * xhat;
        if (pb != nullptr) pb[i] = first ? d : pb[i] + d;
      }
    }
  }
}

// out[c * out_stride] = sum over g in [0, groups) of partial[g * n + c], for c < n: a warp covers
// 32 adjacent columns (coalesced rows of the partial buffer), kSplit warps each sum every kSplit-th
// group, then one thread adds the kSplit sums in order. Fixed order: deterministic. groups = 0
// writes zeros (the gradient of no rows).
constexpr int kColumnSplit = 16;

template <class T>
__global__ void __launch_bounds__(32 * kColumnSplit)
column_sum_kernel(const acc_t<T>* partial, int64_t groups, int64_t n, T* out, int64_t out_stride) {
  using Acc = acc_t<T>;
  __shared__ Acc sums[kColumnSplit][33];  // 33: the column read below touches 16 distinct banks
  const int64_t col = int64_t(blockIdx.x) * 32 + threadIdx.x;
  Acc acc = Acc(0);
  if (col < n) {
    for (int64_t g = threadIdx.y; g < groups; g += kColumnSplit) acc += partial[g * n + col];
  }
  sums[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < n) {
    Acc total = Acc(0);
#pragma unroll
    for (int k = 0; k < kColumnSplit; ++k) total += sums[k][threadIdx.x];
    out[col * out_stride] = cast_value<T>(total);
  }
}

}  // namespace norms
}  // namespace gpuprims
