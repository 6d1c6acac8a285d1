// Backward row_on_chip: dy and the saved row held in registers, dx in one pass, dweight / dbias as
// per-group partial sums reduced by backward_column_sums.
#include "gpuprims/core/stream.hpp"
#include "gpuprims/norms/row_backward.cuh"
#include "gpuprims/util/math.cuh"
#include "backward_launch.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

// The grid is one wave of resident blocks (rows in a grid-stride loop), so the number of partial
// rows, and with it the column-sum work, is bounded by the device, not by the number of rows.
template <class T, RowKind kKind, int kThreadsPerRow, int kRowsPerBlock, int kVecs>
Status launch_backward(const NormBackwardLaunch& l) {
  using Acc = acc_t<T>;
  constexpr int kThreads = kThreadsPerRow * kRowsPerBlock;
  const void* kernel =
      l.params.vec_ok
          ? reinterpret_cast<const void*>(&row_backward_kernel<T, kKind, kThreadsPerRow, kRowsPerBlock, kVecs, true>)
          : reinterpret_cast<const void*>(&row_backward_kernel<T, kKind, kThreadsPerRow, kRowsPerBlock, kVecs, false>);
  const char* op = norm_op_name(l.op);
  int per_sm = 0;
  GPUPRIMS_CUDA_CHECK(op, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  const int64_t wave = int64_t(max_of(per_sm, 1)) * l.sm_count;
  const int64_t blocks = min_of<int64_t>(wave, ceil_div<int64_t>(l.params.dy_layout.num_rows, kRowsPerBlock));
  const int64_t groups = blocks * kRowsPerBlock;
  const int64_t n = l.params.dy_layout.row_len;
  NormBackwardParams params = l.params;
  StreamScratch scratch;
  if (kKind == RowKind::kNorm && (l.dweight != nullptr || l.dbias != nullptr)) {
    const int vectors = (l.dweight != nullptr) + (l.dbias != nullptr);
    GPUPRIMS_TRY(scratch.allocate(size_t(vectors * groups * n) * sizeof(Acc), l.device, l.stream, op));
    Acc* next = static_cast<Acc*>(scratch.data());
    if (l.dweight != nullptr) params.dweight_partial = next, next += groups * n;
    if (l.dbias != nullptr) params.dbias_partial = next;
  }
  void* args[] = {&params};
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), args, 0,
                                           l.stream));
  GPUPRIMS_TRY(check_launch(op, l.stream));
  if (kKind == RowKind::kSoftmax) return Status::ok();
  return backward_column_sums(l, params.dweight_partial, params.dbias_partial, groups);
}

// Tile shapes as the forward's (variant_row_on_chip.cu) with 8 values per thread instead of 16-32:
// two tiles are live (dy and the saved row) plus, for norms, two column accumulators, so 8 values
// each keep the thread within 64 registers while a 1024-thread block still holds 8192 elements.
// float64 values take two registers each: 4 values per thread (half the capacities).
//   a warp per row, 4 rows per block:   256 elements (float64: 128)
//   512 threads:                       4096 (2048)
//   1024 threads:                      8192 (4096); longer rows run two_pass.
template <class T, RowKind kKind>
Status run(const NormBackwardLaunch& l) {
  constexpr int kValues = sizeof(T) == 8 ? 4 : 8;
  constexpr int kVecs = kValues / Vec16<T>::kLanes;  // 2 fp32, 1 fp16/bf16, 2 fp64
  static_assert(kVecs >= 1, "whole 16-byte vectors per thread");
  const int64_t n = l.params.dy_layout.row_len;
  if (n <= 32 * kValues) return launch_backward<T, kKind, 32, 4, kVecs>(l);
  if (n <= 512 * kValues) return launch_backward<T, kKind, 512, 1, kVecs>(l);
  if (n <= 1024 * kValues) return launch_backward<T, kKind, 1024, 1, kVecs>(l);
  return norms_backward_two_pass(l);
}

}  // namespace

Status norms_backward_row_on_chip(const NormBackwardLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return row_kind(l.op) == RowKind::kSoftmax ? run<T, RowKind::kSoftmax>(l) : run<T, RowKind::kNorm>(l);
  });
}

}  // namespace norms
}  // namespace gpuprims
