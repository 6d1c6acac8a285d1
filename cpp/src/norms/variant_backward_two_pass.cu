// Backward two_pass: a block per row, any row length; the row sums from a first read, dx from a
// second; dweight / dbias as per-block partial rows in global memory.
#include <cstdint>

#include "gpuprims/core/stream.hpp"
#include "gpuprims/norms/row_backward.cuh"
#include "gpuprims/util/math.cuh"
#include "backward_launch.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

constexpr int kThreads = 512;
// The partial rows of dweight / dbias are at most this many values in all (64 MiB of float32, or
// 128 MiB of float64): with very long rows fewer blocks run, one partial row each.
constexpr int64_t kMaxPartialValues = int64_t(1) << 24;

template <class T, RowKind kKind>
Status run(const NormBackwardLaunch& l) {
  using Acc = acc_t<T>;
  const void* kernel = reinterpret_cast<const void*>(&row_backward_two_pass_kernel<T, kKind, kThreads>);
  const char* op = norm_op_name(l.op);
  const int64_t rows = l.params.dy_layout.num_rows, n = l.params.dy_layout.row_len;
  int per_sm = 0;
  GPUPRIMS_CUDA_CHECK(op, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  int64_t blocks = min_of<int64_t>(int64_t(max_of(per_sm, 1)) * l.sm_count, rows);
  NormBackwardParams params = l.params;
  StreamScratch scratch;
  const bool partials = kKind == RowKind::kNorm && (l.dweight != nullptr || l.dbias != nullptr);
  if (partials) {
    const int vectors = (l.dweight != nullptr) + (l.dbias != nullptr);
    blocks = max_of<int64_t>(1, min_of<int64_t>(blocks, kMaxPartialValues / (vectors * max_of<int64_t>(n, 1))));
    GPUPRIMS_TRY(scratch.allocate(size_t(vectors * blocks * n) * sizeof(Acc), l.device, l.stream, op));
    Acc* next = static_cast<Acc*>(scratch.data());
    if (l.dweight != nullptr) params.dweight_partial = next, next += blocks * n;
    if (l.dbias != nullptr) params.dbias_partial = next;
  }
  void* args[] = {&params};
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), args, 0,
                                           l.stream));
  GPUPRIMS_TRY(check_launch(op, l.stream));
  if (!partials) return Status::ok();
  return backward_column_sums(l, params.dweight_partial, params.dbias_partial, blocks);
}

}  // namespace

Status norms_backward_two_pass(const NormBackwardLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return row_kind(l.op) == RowKind::kSoftmax ? run<T, RowKind::kSoftmax>(l) : run<T, RowKind::kNorm>(l);
  });
}

}  // namespace norms
}  // namespace gpuprims
