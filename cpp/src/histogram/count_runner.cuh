#pragma once
// The host driver of the counting variants: shared-memory sizing, grid sizing and the launch.
#include <type_traits>

#include "gpuprims/histogram/byte_window_kernel.cuh"
#include "gpuprims/histogram/float32_kernel.cuh"
#include "gpuprims/histogram/histogram_kernels.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/occupancy.cuh"
#include "launch.hpp"
#include "mapper_dispatch.hpp"

namespace gpuprims {
namespace histogram_detail {

// kSharedHistogramBytes (launch.hpp) holds 32 lane-private copies of 376 bins, or 8 warp
// sub-histograms of 1504 bins.
// Blocks per SM beyond the resident count: one wave. Every block flushes its whole shared
// histogram once, so more blocks cost more flushes; contiguous chunks keep one wave balanced.
constexpr int kCountWaves = 1;
// No block counts 2^31 samples: its 32-bit shared counters cannot overflow.
constexpr int64_t kMaxSamplesPerBlock = int64_t(1) << 31;
// Below this many samples per block a block is not worth its flush.
constexpr int64_t kMinSamplesPerBlock = int64_t(kHistogramThreads) * 64;

// How many shared-memory histograms a variant keeps for `bins` bins (0: count in global memory).
inline int32_t shared_copies(Counting counting, int32_t bins) {
  if (bins <= 0) return 0;  // bincount into an empty output: every sample is out of range
  const int64_t fit = kSharedHistogramBytes / (int64_t(bins) * 4);
  if (counting == Counting::kPrivatized) {
    for (int32_t c = kWarpSize; c >= 1; c /= 2) {
      if (c <= fit) return c;
    }
    return 0;
  }
  if (counting == Counting::kWarpAggregated) {
    const int32_t warps = kHistogramThreads / kWarpSize;
    return warps <= fit ? warps : (fit >= 1 ? 1 : 0);
  }
  return 0;
}

// Blocks of a counting grid for n samples: one wave of `resident` blocks per SM, fewer for small
// inputs, more when a block would otherwise count 2^31 samples.
inline int64_t counting_grid_blocks(int sm_count, int resident, int64_t n) {
  const int64_t blocks =
      min_of<int64_t>(int64_t(sm_count) * resident * kCountWaves, ceil_div<int64_t>(n, kMinSamplesPerBlock));
  return max_of<int64_t>(blocks, ceil_div<int64_t>(n, kMaxSamplesPerBlock));
}

// Launches a counting kernel on a grid of one wave of resident blocks (fewer for small inputs).
template <class Mapper>
Status launch_counting(void (*kernel)(CountArgs<Mapper>), const CountArgs<Mapper>& args, size_t smem,
                       const HistogramLaunch& l) {
  const int64_t blocks = counting_grid_blocks(l.sm_count, resident_blocks_per_sm(kernel, kHistogramThreads, smem),
                                              l.layout.n);
  CountArgs<Mapper> a = args;
  void* params[] = {&a};
  GPUPRIMS_CUDA_CHECK(l.op, cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(unsigned(blocks)),
                                             dim3(kHistogramThreads), params, smem, l.stream));
  return check_launch(l.op, l.stream);
}

template <Counting kCounting>
Status run_counting(const HistogramLaunch& l) {
  if (l.layout.n == 0) return Status::ok();
  return visit_mapper(l, [&](const auto& mapper) -> Status {
    using Mapper = std::decay_t<decltype(mapper)>;
    using T = typename Mapper::Sample;
    const int32_t copies = shared_copies(kCounting, l.bins);
    const size_t smem = size_t(copies) * size_t(l.bins) * 4;
    const CountArgs<Mapper> args{static_cast<const T*>(l.x), l.layout, mapper,
                                 static_cast<unsigned long long*>(l.out), l.out_stride, l.bins, copies, l.dropped};
    if constexpr (kCounting == Counting::kPrivatized && std::is_same<Mapper, ByteMapper>::value) {
      if (mapper.window && copies == kWarpSize && l.layout.contiguous) {
        const bool full_cover = mapper.window_lo == 0 && mapper.window_span == 255;
        return launch_counting(full_cover ? count_byte_window_kernel<true> : count_byte_window_kernel<false>, args,
                               smem, l);
      }
    }
    if constexpr (kCounting == Counting::kPrivatized && std::is_same<Mapper, EdgeMapper<float>>::value) {
      if (kLaunchFloat32Kernel && mapper.params.fast && copies > 0 && l.layout.contiguous) {
        return launch_counting(count_float32_kernel<LaunchedFloat32Config>, args,
                               LaunchedFloat32Config::shared_bytes(l.bins, copies), l);
      }
    }
    return launch_counting(count_kernel<kCounting, Mapper>, args, smem, l);
  });
}

}  // namespace histogram_detail
}  // namespace gpuprims
