// Weighted histograms and bincounts: float64 sums with global atomics (weighted_kernels.cuh says
// why every variant shares this path).
#include <type_traits>

#include "gpuprims/histogram/weighted_kernels.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/occupancy.cuh"
#include "launch.hpp"
#include "mapper_dispatch.hpp"

namespace gpuprims {
namespace histogram_detail {

Status count_weighted(const HistogramLaunch& l) {
  if (l.layout.n == 0) return Status::ok();
  return visit_mapper(l, [&](const auto& mapper) -> Status {
    using Mapper = std::decay_t<decltype(mapper)>;
    using T = typename Mapper::Sample;
    auto kernel = weighted_kernel<Mapper>;
    static const int resident = resident_blocks_per_sm(kernel, kWeightedThreads);
    const int64_t blocks = min_of<int64_t>(int64_t(l.sm_count) * resident,
                                           ceil_div<int64_t>(l.layout.n, kWeightedThreads));
    WeightedArgs<Mapper> args{static_cast<const T*>(l.x), l.w, l.w_dtype, l.layout, mapper,
                              static_cast<double*>(l.out), l.out_stride, l.dropped};
    void* params[] = {&args};
    GPUPRIMS_CUDA_CHECK(l.op, cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(unsigned(blocks)),
                                               dim3(kWeightedThreads), params, 0, l.stream));
    return check_launch(l.op, l.stream);
  });
}

}  // namespace histogram_detail
}  // namespace gpuprims
