// The second kernel of the backward passes: dweight / dbias from the per-group partial sums, and
// the scratch those partial sums live in.
#include "gpuprims/norms/row_backward.cuh"
#include "gpuprims/util/math.cuh"
#include "backward_launch.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace norms {

Status allocate_backward_partials(const NormBackwardLaunch& l, int64_t groups, NormBackwardParams* params,
                                  StreamScratch* scratch) {
  if (row_kind(l.op) == RowKind::kSoftmax || (l.dweight == nullptr && l.dbias == nullptr)) return Status::ok();
  const int64_t n = l.params.dy_layout.row_len;
  const size_t acc_size = dtype_size(norm_stats_dtype(l.dtype));
  const int vectors = (l.dweight != nullptr) + (l.dbias != nullptr);
  GPUPRIMS_TRY(scratch->allocate(size_t(vectors * groups * n) * acc_size, l.device, l.stream, norm_op_name(l.op)));
  unsigned char* next = static_cast<unsigned char*>(scratch->data());
  if (l.dweight != nullptr) params->dweight_partial = next, next += size_t(groups * n) * acc_size;
  if (l.dbias != nullptr) params->dbias_partial = next;
  return Status::ok();
}

Status backward_column_sums(const NormBackwardLaunch& l, const void* dweight_partial, const void* dbias_partial,
                            int64_t groups) {
  const int64_t n = l.params.dy_layout.row_len;
  if (n == 0) return Status::ok();
  const char* op = norm_op_name(l.op);
  return visit_float_dtype(l.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using Acc = acc_t<T>;
    const dim3 grid(grid_for(ceil_div<int64_t>(n, 32))), block(32, kColumnSplit);
    const struct { const void* partial; void* out; int64_t stride; } jobs[] = {
        {dweight_partial, l.dweight, l.dweight_stride}, {dbias_partial, l.dbias, l.dbias_stride}};
    for (const auto& job : jobs) {
      if (job.out == nullptr) continue;
      column_sum_kernel<T><<<grid, block, 0, l.stream>>>(static_cast<const Acc*>(job.partial), groups, n,
                                                          static_cast<T*>(job.out), job.stride);
      GPUPRIMS_TRY(check_launch(op, l.stream));
    }
    return Status::ok();
  });
}

}  // namespace norms
}  // namespace gpuprims
