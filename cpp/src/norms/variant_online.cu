// online (softmax: running (max, sum) in one read, then normalize).
#include "streaming_launch.cuh"

namespace gpuprims {
namespace norms {

Status norms_online(const NormLaunch& launch) { return launch_streaming<RowKind::kSoftmax, NormAlgorithm::kOnline>(launch); }

}  // namespace norms
}  // namespace gpuprims
