#include "count_runner.cuh"

namespace gpuprims {
namespace histogram_detail {

Status count_global_atomics(const HistogramLaunch& launch) { return run_counting<Counting::kGlobal>(launch); }

}  // namespace histogram_detail
}  // namespace gpuprims
