#include "gpuprims/reduce/reduce_thread_per_output.cuh"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace reduce_detail {
namespace {

template <class T, class Acc, class Op>
struct Runner {
  static Status run(const ReduceLaunch& a) {
    if (a.layout.num_rows == 0) return Status::ok();
    const int64_t blocks = min_of<int64_t>(ceil_div<int64_t>(a.layout.num_rows, kReduceThreads),
                                           int64_t(a.sm_count) * 32);
    ReduceKernelParams<T> p{static_cast<const T*>(a.in), a.layout, a.out, a.out_dtype};
    reduce_thread_per_output_kernel<T, Acc, Op><<<static_cast<unsigned>(blocks), kReduceThreads, 0, a.stream>>>(p);
    return check_launch("reduce", a.stream);
  }
};

}  // namespace

Status reduce_thread_per_output(const ReduceLaunch& launch) { return dispatch_reduce_types<Runner>(launch); }

}  // namespace reduce_detail
}  // namespace gpuprims
