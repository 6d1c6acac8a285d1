#include "gpuprims/reduce/reduce_bulk.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/occupancy.cuh"
#include "launch.hpp"
#include "single_pass_workspace.hpp"

namespace gpuprims {
namespace reduce_detail {
namespace {

template <class T, class Acc, class Op>
struct BulkCopyRunner {
  static Status run(const ReduceLaunch& a) {
    const ReduceLayout& layout = a.layout;
    const int64_t rows = layout.num_rows;
    if (rows == 0) return Status::ok();
    // One wave of the kernel's occupancy over all rows (measured best: reduce_bulk.cuh), but no
    // block with less than one stage of its row.
    static const int resident = resident_blocks_per_sm(reduce_bulk_kernel<T, Acc, Op>, BulkShape::kThreads);
    const int64_t target = int64_t(a.sm_count) * resident;
    const int64_t row_stages = ceil_div<int64_t>(layout.row_len * int64_t(sizeof(T)), BulkShape::kStageBytes);
    const int64_t blocks_per_row = max_of<int64_t>(1, min_of(ceil_div(target, rows), row_stages));

    static const DriverKernel kernel(reinterpret_cast<const void*>(&reduce_bulk_kernel<T, Acc, Op>));
    return launch_single_pass<T, Acc>(a, kernel, BulkShape::kThreads, blocks_per_row);
  }
};

}  // namespace

// Contiguous rows on sm_90 and newer; anything else (strided rows, older GPUs) runs `vectorized`,
// which computes the same function (bulk copies need 16-byte aligned, contiguous sources and a GPU
// with the copy engine).
Status reduce_bulk_copy(const ReduceLaunch& launch) {
  if (!launch.layout.row_contiguous || launch.cc_major < 9) return reduce_vectorized(launch);
  return dispatch_reduce_types<BulkCopyRunner>(launch);
}

}  // namespace reduce_detail
}  // namespace gpuprims
