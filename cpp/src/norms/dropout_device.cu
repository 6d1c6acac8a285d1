// bias_dropout_add on the GPU: 256-thread blocks, one step (16-byte vectors, whole Philox draws) per thread.
#include "gpuprims/norms/dropout.cuh"
#include "gpuprims/util/math.cuh"
#include "dropout_launch.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

constexpr int kThreads = 256;
// fp16 / bf16 outputs rounded in pairs by the hardware (bias_dropout_add_kernel's kPairRounding);
// false: element by element, as before issue 5's step 4.
constexpr bool kPairRounding = true;

template <class T>
Status run(const DropoutLaunch& l) {
  DropoutParams params = l.params;
  void* args[] = {&params};
  const void* kernel = params.vec_ok ? reinterpret_cast<const void*>(&bias_dropout_add_kernel<T, true, kPairRounding>)
                                     : reinterpret_cast<const void*>(&bias_dropout_add_kernel<T, false, false>);
  // A block per kThreads steps: every thread takes one step (the kernel's grid-stride loop only
  // matters beyond grid.x's limit). On an H100 (session 17 device run 13, bench/tune/dropout_tune.cu,
  // % of copy over two passes) this grid ran bfloat16 at 102.2-107.4 % and float32 at 101.7-102.5 %,
  // where one wave of the resident blocks (the grid since session 15, which had fixed the second
  // wave of a third that 8 blocks per SM left the 16-bit kernels: docs/norms.md "bias_dropout_add")
  // ran at 88.9-91.2 % / 95.8-97.5 %, two waves 91.0-92.3 / 95.6, four 94.7-97.1 / 96.1-97.7.
  const int64_t steps = ceil_div<int64_t>(l.params.total, dropout_step(Vec16<T>::kLanes));
  const int64_t blocks = min_of<int64_t>(ceil_div<int64_t>(steps, kThreads), 0x7fffffff);
  GPUPRIMS_CUDA_CHECK("bias_dropout_add",
                      cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), args, 0, l.stream));
  return check_launch("bias_dropout_add", l.stream);
}

}  // namespace

Status bias_dropout_add_device(const DropoutLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(l); });
}

}  // namespace norms
}  // namespace gpuprims
