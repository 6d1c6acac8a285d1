// The atomic_per_block rung of the reduce ladder; one translation unit per variant keeps builds parallel.
#include "runners.cuh"

namespace gpuprims {
namespace reduce_detail {

Status reduce_atomic_per_block(const ReduceLaunch& launch) {
  return dispatch_reduce_types<AtomicRunner<AtomicScheme::kPerBlock>::template type>(launch);
}

}  // namespace reduce_detail
}  // namespace gpuprims
