// three_pass (softmax: max, sum of exp, normalize; each pass reads the row).
#include "streaming_launch.cuh"

namespace gpuprims {
namespace norms {

Status norms_three_pass(const NormLaunch& launch) { return launch_streaming<RowKind::kSoftmax, NormAlgorithm::kThreePass>(launch); }

}  // namespace norms
}  // namespace gpuprims
