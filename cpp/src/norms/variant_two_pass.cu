// two_pass (layer_norm / rms_norm: statistics pass(es), then normalize; each pass reads the row).
#include "streaming_launch.cuh"

namespace gpuprims {
namespace norms {

Status norms_two_pass(const NormLaunch& launch) { return launch_streaming<RowKind::kNorm, NormAlgorithm::kTwoPass>(launch); }

}  // namespace norms
}  // namespace gpuprims
