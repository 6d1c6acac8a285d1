#include "count_runner.cuh"

namespace gpuprims {
namespace histogram_detail {

Status count_warp_aggregated(const HistogramLaunch& launch) { return run_counting<Counting::kWarpAggregated>(launch); }

}  // namespace histogram_detail
}  // namespace gpuprims
