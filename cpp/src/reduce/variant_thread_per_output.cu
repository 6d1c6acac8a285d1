#include "gpuprims/reduce/reduce_thread_per_output.cuh"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace reduce_detail {
namespace {

template <class T, class Acc, class Op>
struct Runner {
  template <int kRowsInFlight>
  static Status launch(const ReduceLaunch& a) {
    // At most 32 blocks an SM; the kernel loops over the rest.
    const int64_t blocks = min_of<int64_t>(ceil_div<int64_t>(a.layout.num_rows, kReduceThreads * kRowsInFlight),
                                           int64_t(a.sm_count) * 32);
    ReduceKernelParams<T> p{static_cast<const T*>(a.in), a.layout, a.out, a.out_dtype};
    reduce_thread_per_output_kernel<T, Acc, Op, kRowsInFlight>
        <<<static_cast<unsigned>(blocks), kReduceThreads, 0, a.stream>>>(p);
    return check_launch("reduce", a.stream);
  }

  static Status run(const ReduceLaunch& a) {
    if (a.layout.num_rows == 0) return Status::ok();
    // Four rows a thread once there are four for every thread of a full GPU (8 blocks of 256
    // threads an SM).
    const int64_t full_gpu_threads = int64_t(a.sm_count) * 8 * kReduceThreads;
    return a.layout.num_rows >= 4 * full_gpu_threads ? launch<4>(a) : launch<1>(a);
  }
};

}  // namespace

Status reduce_thread_per_output(const ReduceLaunch& launch) { return dispatch_reduce_types<Runner>(launch); }

}  // namespace reduce_detail
}  // namespace gpuprims
