// The warp_shuffle rung of the reduce ladder; one translation unit per variant keeps builds parallel.
#include "runners.cuh"

namespace gpuprims {
namespace reduce_detail {

Status reduce_warp_shuffle(const ReduceLaunch& launch) {
  return dispatch_reduce_types<MultipassRunner<WarpShuffle>::template type>(launch);
}

}  // namespace reduce_detail
}  // namespace gpuprims
