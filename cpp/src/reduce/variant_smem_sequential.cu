// The smem_sequential rung of the reduce ladder; one translation unit per variant keeps builds parallel.
#include "runners.cuh"

namespace gpuprims {
namespace reduce_detail {

Status reduce_smem_sequential(const ReduceLaunch& launch) {
  return dispatch_reduce_types<MultipassRunner<SequentialTree>::template type>(launch);
}

}  // namespace reduce_detail
}  // namespace gpuprims
