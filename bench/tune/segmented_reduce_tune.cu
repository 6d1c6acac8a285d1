// Tuning sweep for segmented_reduce (docs/scan.md): group (a warp or a block per segment), block
// size, loads in flight and grid shape, next to cub::DeviceSegmentedReduce::Sum in the same program,
// on 65536 segments x 4096 float32 (1 GiB, the issue's case) and 262144 x 1024.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/segmented_reduce_tune.cu -o /tmp/seg && /tmp/seg
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <cub/device/device_segmented_reduce.cuh>

#include "gpuprims/reduce/reduce_ops.hpp"
#include "gpuprims/scan/segmented_reduce_kernel.cuh"

#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::scan_detail;

__global__ void fill(float* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = float((i * 2654435761u >> 9) % 1000) * 0.001f - 0.5f;
}

struct Case {
  const float* x;
  Segments seg;
  float* out;
  const std::vector<float>* expected;
  float cub_ms;
  int sms;
};

// grid_mode: 0 = the library's (min(16 * 4 * SMs, groups needed)), 1 = one group per segment,
// 2 = one wave of resident blocks (persistent)
template <int kGroup, int kThreads, int kUnroll>
void candidate(const char* label, const Case& c, int grid_mode) {
  auto kernel = segmented_reduce_kernel<float, float, reduce_detail::Sum, kGroup, kThreads, kUnroll>;
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, 0));
  const int64_t needed = (c.seg.count + kThreads / kGroup - 1) / (kThreads / kGroup);
  int64_t blocks = grid_mode == 0 ? std::min<int64_t>(int64_t(c.sms) * 64, needed)
                   : grid_mode == 1 ? needed
                                    : std::min<int64_t>(int64_t(c.sms) * resident, needed);
  CHECK(cudaMemset(c.out, 0xff, c.seg.count * sizeof(float)));  // poison
  const float ms = tune::median_ms([&] { kernel<<<unsigned(blocks), kThreads>>>(c.x, c.seg, true); });
  CHECK(cudaGetLastError());
  std::vector<float> got(c.seg.count);
  CHECK(cudaMemcpy(got.data(), c.out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(double(got[i]) - double((*c.expected)[i])) / (1.0 + std::fabs((*c.expected)[i])));
  const char* grids[] = {"library", "per-segment", "one-wave"};
  printf("%s %-12s group=%4d threads=%4d unroll=%d grid=%-11s (%6lld blocks, %d/SM) %.4f ms %.3fx CUB  maxrel %.1e\n",
         worst < 1e-4 ? "PASS" : "FAIL", label, kGroup, kThreads, kUnroll, grids[grid_mode], (long long)blocks, resident,
         ms, c.cub_ms / ms, worst);
}

void run(int64_t segments, int64_t length, int sms) {
  const int64_t n = segments * length;
  float *x, *out;
  int64_t* offsets;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&out, segments * sizeof(float)));
  CHECK(cudaMalloc(&offsets, (segments + 1) * sizeof(int64_t)));
  fill<<<1024, 256>>>(x, n);
  std::vector<int64_t> h_offsets(segments + 1);
  for (int64_t i = 0; i <= segments; ++i) h_offsets[i] = i * length;
  CHECK(cudaMemcpy(offsets, h_offsets.data(), h_offsets.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
  size_t temp_bytes = 0;
  CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, x, out, segments, offsets, offsets + 1));
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes + 1));
  auto cub_run = [&] { CHECK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, x, out, segments, offsets, offsets + 1)); };
  const float cub_ms = tune::median_ms(cub_run);
  std::vector<float> expected(segments);
  CHECK(cudaMemcpy(expected.data(), out, segments * sizeof(float), cudaMemcpyDeviceToHost));
  printf("== %lld segments x %lld float32: CUB %.4f ms (%.1f GB/s)\n", (long long)segments, (long long)length, cub_ms,
         n * 4.0 / cub_ms / 1e6);
  Segments seg{offsets, true, 1, segments, n, 1, out, 1, DType::kFloat32};
  for (int rep = 0; rep < 2; ++rep) {
    Case c{x, seg, out, &expected, tune::median_ms(cub_run), sms};
    printf("CUB again %.4f ms\n", c.cub_ms);
    candidate<256, 256, 4>("block", c, 0);  // the library's long-segment choice before this sweep
    candidate<128, 128, 4>("block", c, 1);
    candidate<128, 128, 8>("block", c, 1);
    candidate<128, 128, 2>("block", c, 1);
    candidate<64, 64, 4>("block", c, 1);
    candidate<64, 64, 8>("block", c, 1);
    candidate<32, 256, 4>("warp", c, 0);  // the library's short-segment choice
    candidate<32, 256, 8>("warp", c, 1);
    candidate<32, 128, 8>("warp", c, 1);
    candidate<32, 64, 8>("warp", c, 1);
  }
  CHECK(cudaFree(x));
  CHECK(cudaFree(out));
  CHECK(cudaFree(offsets));
  CHECK(cudaFree(temp));
}

int main() {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  run(65536, 4096, sms);
  run(262144, 1024, sms);
  return 0;
}
