#include "gpuprims/reduce/reduce_warp_per_row.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/vec.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace reduce_detail {
namespace {

template <class T, class Acc, class Op>
struct Runner {
  template <int kLanesPerRow>
  static Status launch(const ReduceLaunch& a) {
    // A group for every row, up to the grid's limit (the kernel's loop takes the rest).
    constexpr int64_t kRowsPerBlock = kWarpPerRowThreads / kLanesPerRow;
    const int64_t blocks = min_of<int64_t>(ceil_div(a.layout.num_rows, kRowsPerBlock), int64_t(1) << 30);
    ReduceKernelParams<T> p{static_cast<const T*>(a.in), a.layout, a.out, a.out_dtype};
    reduce_warp_per_row_kernel<T, Acc, Op, kLanesPerRow>
        <<<static_cast<unsigned>(blocks), kWarpPerRowThreads, 0, a.stream>>>(p);
    return check_launch("reduce", a.stream);
  }

  static Status run(const ReduceLaunch& a) {
    if (a.layout.num_rows == 0) return Status::ok();
    // About 4 of the row's 16-byte vectors per lane (bench/tune/reduce_short_rows.py, session 38):
    // a whole warp from 2 KiB up.
    const int64_t vectors = ceil_div<int64_t>(a.layout.row_len, Vec16<T>::kLanes);
    if (vectors <= 4 * 4) return launch<4>(a);
    if (vectors <= 4 * 8) return launch<8>(a);
    if (vectors <= 4 * 16) return launch<16>(a);
    return launch<32>(a);
  }
};

}  // namespace

Status reduce_warp_per_row(const ReduceLaunch& launch) { return dispatch_reduce_types<Runner>(launch); }

}  // namespace reduce_detail
}  // namespace gpuprims
