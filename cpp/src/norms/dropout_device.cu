// bias_dropout_add on the GPU: a grid-stride loop of a few waves of 256-thread blocks.
#include "gpuprims/norms/dropout.cuh"
#include "gpuprims/util/math.cuh"
#include "dropout_launch.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;  // 2048 threads per SM: the residency limit, enough loads in flight
// fp16 / bf16 outputs rounded in pairs by the hardware (bias_dropout_add_kernel's kPairRounding);
// false: element by element, as before issue 5's step 4.
constexpr bool kPairRounding = true;

template <class T>
Status run(const DropoutLaunch& l) {
  const int64_t steps = ceil_div<int64_t>(l.params.total, dropout_step(Vec16<T>::kLanes));
  const int64_t blocks = min_of<int64_t>(ceil_div<int64_t>(steps, kThreads), int64_t(l.sm_count) * kBlocksPerSm);
  DropoutParams params = l.params;
  void* args[] = {&params};
  const void* kernel = params.vec_ok ? reinterpret_cast<const void*>(&bias_dropout_add_kernel<T, true, kPairRounding>)
                                     : reinterpret_cast<const void*>(&bias_dropout_add_kernel<T, false, false>);
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
