// welford (layer_norm: Welford statistics in one read, then normalize).
#include "streaming_launch.cuh"

namespace gpuprims {
namespace norms {

Status norms_welford(const NormLaunch& launch) { return launch_streaming<RowKind::kNorm, NormAlgorithm::kWelford>(launch); }

}  // namespace norms
}  // namespace gpuprims
