#include "count_runner.cuh"

namespace gpuprims {
namespace histogram_detail {

Status count_shared_privatized(const HistogramLaunch& launch) { return run_counting<Counting::kPrivatized>(launch); }

}  // namespace histogram_detail
}  // namespace gpuprims
