// naive: a thread per output element (elementwise_kernel): writes coalesced, reads strided.
#include "gpuprims/transpose/transpose_kernels.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace transpose_detail {

Status transpose_naive(const TransposeLaunch& l) {
  ElementwiseParams p;
  GPUPRIMS_TRY(elementwise_params(l.dims, l.src, l.dst, "transpose", &p));
  return visit_element_size(l.elem_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    constexpr int kThreads = 256;
    elementwise_kernel<E><<<grid_for((p.count + kThreads - 1) / kThreads), kThreads, 0, l.stream>>>(p);
    return check_launch("transpose", l.stream);
  });
}

}  // namespace transpose_detail
}  // namespace gpuprims
