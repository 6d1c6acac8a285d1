// The smem_interleaved rung of the reduce ladder; one translation unit per variant keeps builds parallel.
#include "runners.cuh"

namespace gpuprims {
namespace reduce_detail {

Status reduce_smem_interleaved(const ReduceLaunch& launch) {
  return dispatch_reduce_types<MultipassRunner<InterleavedTree>::template type>(launch);
}

}  // namespace reduce_detail
}  // namespace gpuprims
