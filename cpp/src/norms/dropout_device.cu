// bias_dropout_add on the GPU: a grid-stride loop over one wave of 256-thread blocks.
#include "gpuprims/norms/dropout.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/occupancy.cuh"
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
  // Exactly one wave of what the SMs hold: the grid used to be 8 blocks per SM, which the
  // 16-bit kernels (37 registers: 6 resident blocks) and float64 (46: 5) ran as one full wave and
  // a second of a third, whose few blocks could not keep the memory busy (bfloat16 16384 x 8192 on
  // an H200: 79.5 % of copy; docs/norms.md "bias_dropout_add").
  static const int resident_vector = resident_blocks_per_sm(&bias_dropout_add_kernel<T, true, kPairRounding>, kThreads);
  static const int resident_scalar = resident_blocks_per_sm(&bias_dropout_add_kernel<T, false, false>, kThreads);
  const int64_t steps = ceil_div<int64_t>(l.params.total, dropout_step(Vec16<T>::kLanes));
  const int64_t wave = int64_t(l.sm_count) * (params.vec_ok ? resident_vector : resident_scalar);
  const int64_t blocks = min_of<int64_t>(ceil_div<int64_t>(steps, kThreads), wave);
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
