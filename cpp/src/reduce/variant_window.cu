#include "gpuprims/reduce/reduce_window.cuh"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"
#include "single_pass_workspace.hpp"

namespace gpuprims {
namespace reduce_detail {
namespace {

template <class T, class Acc, class Op>
struct WindowRunner {
  static Status run(const ReduceLaunch& a) {
    const ReduceLayout& layout = a.layout;
    const int64_t rows = layout.num_rows;
    if (rows == 0) return Status::ok();
    constexpr int64_t kChunk = int64_t(WindowShape::kThreads) * WindowShape::kUnroll * Vec16<T>::kLanes;
    const int64_t parts = max_of<int64_t>(1, ceil_div(layout.row_len, kChunk));
    StreamScratch scratch;
    {
      // The combine launch reads the partials the window launch leaves in the stream's region:
      // nothing of another host thread's may be enqueued between them (StreamStateLock).
      StreamStateLock held(a.stream);
      Acc* partials = nullptr;
      if (parts > 1) GPUPRIMS_TRY(partials_workspace(a, held, size_t(rows * parts), scratch, &partials));
      ReduceKernelParams<T> p{static_cast<const T*>(a.in), layout, a.out, a.out_dtype};

      static const DriverKernel window(reinterpret_cast<const void*>(&reduce_window_kernel<T, Acc, Op>));
      void* window_args[] = {&p, &partials};
      const dim3 grid(static_cast<unsigned>(parts), static_cast<unsigned>(min_of<int64_t>(rows, 65535)));
      GPUPRIMS_TRY(window.launch(grid, dim3(WindowShape::kThreads), 0, a.stream, window_args, "reduce"));
      if (parts > 1) {
        static const DriverKernel combine(reinterpret_cast<const void*>(&reduce_window_combine_kernel<T, Acc, Op>));
        int64_t num_parts = parts;
        void* combine_args[] = {&p, &partials, &num_parts};
        const dim3 combine_grid(static_cast<unsigned>(min_of<int64_t>(rows, 65535)));
        GPUPRIMS_TRY(combine.launch(combine_grid, dim3(WindowShape::kCombineThreads), 0, a.stream, combine_args, "reduce"));
      }
    }
    return check_launch("reduce", a.stream);
  }
};

}  // namespace

// Contiguous rows (the chunks are 16-byte vectors); strided rows run `vectorized`, which computes
// the same function.
Status reduce_window(const ReduceLaunch& launch) {
  if (!launch.layout.row_contiguous) return reduce_vectorized(launch);
  return dispatch_reduce_types<WindowRunner>(launch);
}

}  // namespace reduce_detail
}  // namespace gpuprims
