// split_row: chunk statistics -> per-row combine -> normalize (three kernels, any row length).
#include <climits>
#include <string>

#include "gpuprims/core/stream.hpp"
#include "gpuprims/norms/row_on_chip.cuh"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

// The chunk is row_on_chip's 256-thread tile: 32 values per thread, 8192 elements.
constexpr int kThreads = 256;

template <class T, RowKind kKind>
Status run(const NormLaunch& l) {
  using Acc = acc_t<T>;
  using Stats = RowStats<Acc>;
  using Partial = ChunkPartial<kKind, Acc>;
  constexpr int kVecs = 32 / Vec16<T>::kLanes;
  const char* op = norm_op_name(l.op);
  const int64_t rows = l.params.layout.num_rows;
  const int64_t chunk_len = RowTile<T, kThreads, kVecs>::kCapacity;
  const int64_t chunks = max_of<int64_t>(1, ceil_div(l.params.layout.row_len, chunk_len));
  if (chunks > INT_MAX) {
    return value_error(std::string(op) + ": argument 'x': expected rows of at most " +
                       std::to_string(int64_t(INT_MAX) * chunk_len) + " elements, got " +
                       std::to_string(l.params.layout.row_len));
  }
  StreamScratch scratch;
  // The partials, the row statistics, the shifts: structs of Acc, so each array stays aligned after the last.
  GPUPRIMS_TRY(scratch.allocate(size_t(rows * chunks) * sizeof(Partial) + size_t(rows) * (sizeof(Stats) + sizeof(Acc)),
                                l.device, l.stream, op));
  Partial* partial = static_cast<Partial*>(scratch.data());
  Stats* row_stats = reinterpret_cast<Stats*>(partial + rows * chunks);
  Acc* row_shift = reinterpret_cast<Acc*>(row_stats + rows);
  NormParams params = l.params;
  const dim3 chunk_grid(static_cast<unsigned>(chunks), static_cast<unsigned>(min_of<int64_t>(rows, 65535)));

  const bool vec = params.vec_ok;
  const void* stats_kernel = vec ? reinterpret_cast<const void*>(&chunk_stats_kernel<T, kKind, kThreads, kVecs, true>)
                                 : reinterpret_cast<const void*>(&chunk_stats_kernel<T, kKind, kThreads, kVecs, false>);
  const void* apply_kernel = vec ? reinterpret_cast<const void*>(&chunk_apply_kernel<T, kKind, kThreads, kVecs, true>)
                                 : reinterpret_cast<const void*>(&chunk_apply_kernel<T, kKind, kThreads, kVecs, false>);
  void* stats_args[] = {&params, &partial};
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(stats_kernel, chunk_grid, dim3(kThreads), stats_args, 0, l.stream));
  GPUPRIMS_TRY(check_launch(op, l.stream));
  int64_t chunks_arg = chunks, chunk_len_arg = chunk_len;
  void* combine_args[] = {&params, &partial, &chunks_arg, &chunk_len_arg, &row_stats, &row_shift};
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(reinterpret_cast<const void*>(&row_combine_kernel<T, kKind, kThreads>),
                                           dim3(grid_for(rows)), dim3(kThreads), combine_args, 0, l.stream));
  GPUPRIMS_TRY(check_launch(op, l.stream));
  void* apply_args[] = {&params, &row_stats, &row_shift};
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(apply_kernel, chunk_grid, dim3(kThreads), apply_args, 0, l.stream));
  return check_launch(op, l.stream);
}

}  // namespace

Status norms_split_row(const NormLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return row_kind(l.op) == RowKind::kSoftmax ? run<T, RowKind::kSoftmax>(l) : run<T, RowKind::kNorm>(l);
  });
}

}  // namespace norms
}  // namespace gpuprims
