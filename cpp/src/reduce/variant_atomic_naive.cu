// The atomic_naive rung of the reduce ladder; one translation unit per variant keeps builds parallel.
#include "runners.cuh"

namespace gpuprims {
namespace reduce_detail {

Status reduce_atomic_naive(const ReduceLaunch& launch) {
  return dispatch_reduce_types<AtomicRunner<AtomicScheme::kPerElement>::template type>(launch);
}

}  // namespace reduce_detail
}  // namespace gpuprims
