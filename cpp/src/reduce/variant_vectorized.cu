#include "gpuprims/reduce/reduce_vectorized.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/occupancy.cuh"
#include "launch.hpp"
#include "single_pass_workspace.hpp"

namespace gpuprims {
namespace reduce_detail {
namespace {

template <class T, class Acc, class Op>
struct VectorizedRunner {
  static Status run(const ReduceLaunch& a) {
    const ReduceLayout& layout = a.layout;
    const int64_t rows = layout.num_rows;
    if (rows == 0) return Status::ok();
    // Enough blocks to fill the GPU, but no block with less than one unrolled sweep of work.
    using Shape = VectorizedShape<Acc>;
    const int64_t per_block = layout.row_contiguous ? int64_t(Shape::kThreads) * Vec16<T>::kLanes * Shape::kUnroll
                                                    : int64_t(Shape::kThreads) * 4;
    static const int resident = resident_blocks_per_sm(reduce_vectorized_kernel<T, Acc, Op>, Shape::kThreads);
    const int64_t target = int64_t(a.sm_count) * resident * Shape::kWaves;
    const int64_t blocks_per_row = max_of<int64_t>(
        1, min_of(ceil_div(target, rows), ceil_div(layout.row_len, per_block)));

    static const DriverKernel kernel(reinterpret_cast<const void*>(&reduce_vectorized_kernel<T, Acc, Op>));
    return launch_single_pass<T, Acc>(a, kernel, Shape::kThreads, blocks_per_row);
  }
};

}  // namespace

Status reduce_vectorized(const ReduceLaunch& launch) { return dispatch_reduce_types<VectorizedRunner>(launch); }

}  // namespace reduce_detail
}  // namespace gpuprims
