// Tuning sweep for the decoupled look-back scan (docs/scan.md): block size, items per thread (tile
// size), resident blocks per SM, the look-back window and its read order, next to cub::DeviceScan::InclusiveSum in
// the same program, on 2^28 int32 and float32 inclusive sums. Each candidate's output is checked against CUB's (int32:
// bitwise; float32: relative 1e-3, the summation orders differ).
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/scan_lookback_tune.cu -o /tmp/scan && /tmp/scan
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <cub/device/device_scan.cuh>

#include "gpuprims/reduce/reduce_ops.hpp"
#include "gpuprims/scan/lookback_scan_kernel.cuh"

#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::scan_detail;

template <class T>
__global__ void fill(T* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = T(int((i * 2654435761u >> 9) % 7) - 3);
}

template <class T>
struct Case {
  const T* in;
  T* out;
  int64_t n;
  void* scratch;  // counter (256 bytes) + status words
  const std::vector<T>* expected;
  float cub_ms;
  double copy_gbps;
};

template <class T, int kThreads, int kItems, int kMinBlocks, int kPerLane = kLookbackPerLane,
          LookbackReads kReads = LookbackReads::kSerial>
void candidate(const Case<T>& c) {
  using Sum = reduce_detail::Sum;
  auto kernel = lookback_scan_kernel<T, T, Sum, kThreads, kItems, kMinBlocks, kPerLane, kReads>;
  constexpr int64_t kTile = int64_t(kThreads) * kItems;
  const int64_t tiles = (c.n + kTile - 1) / kTile;
  ScanLayout layout;
  layout.len = c.n;
  auto* counter = static_cast<unsigned long long*>(c.scratch);
  const auto status = TileStatus<T>::at(static_cast<char*>(c.scratch) + 256, tiles);
  const size_t bytes = 256 + TileStatus<T>::bytes(tiles);
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, 0));
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  CHECK(cudaMemset(c.out, 0xff, c.n * sizeof(T)));  // poison
  const float ms = tune::median_ms([&] {
    CHECK(cudaMemsetAsync(c.scratch, 0, bytes));
    kernel<<<unsigned(tiles), kThreads>>>(c.in, c.out, layout, tiles, counter, status, false, true);
  });
  CHECK(cudaGetLastError());
  std::vector<T> got(c.n);
  CHECK(cudaMemcpy(got.data(), c.out, c.n * sizeof(T), cudaMemcpyDeviceToHost));
  int64_t bad = 0;
  for (int64_t i = 0; i < c.n; ++i) {
    const double e = double((*c.expected)[i]), g = double(got[i]);
    if (std::is_integral<T>::value ? g != e : !(std::fabs(g - e) <= 1e-3 * (1.0 + std::fabs(e)))) ++bad;
  }
  const double gbps = 2.0 * c.n * sizeof(T) / ms / 1e6;
  printf("%s %-7s threads=%4d items=%2d tile=%6lld minblocks=%d window=%3d %s resident=%d regs=%3d  %.4f ms  %6.1f GB/s  %5.1f %% copy  %.3fx CUB  (%lld bad)\n",
         bad == 0 ? "PASS" : "FAIL", std::is_integral<T>::value ? "int32" : "float32", kThreads, kItems,
         (long long)kTile, kMinBlocks, 32 * kPerLane,
         kReads == LookbackReads::kSerial ? "serial  " : "parallel", resident, attr.numRegs, ms, gbps, 100.0 * gbps / c.copy_gbps, c.cub_ms / ms,
         (long long)bad);
}

__global__ void copy_kernel(const int4* __restrict__ in, int4* __restrict__ out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

template <class T>
void run(int64_t n, int sms) {
  T *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(T)));
  CHECK(cudaMalloc(&out, n * sizeof(T)));
  fill<<<1024, 256>>>(in, n);
  CHECK(cudaGetLastError());
  const double copy_ms = tune::median_ms([&] {
    copy_kernel<<<sms * 16, 256>>>(reinterpret_cast<const int4*>(in), reinterpret_cast<int4*>(out), n * sizeof(T) / 16);
  });
  const double copy_gbps = 2.0 * n * sizeof(T) / copy_ms / 1e6;
  size_t temp_bytes = 0;
  CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, in, out, n));
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  auto cub_run = [&] { CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n)); };
  const float cub_ms = tune::median_ms(cub_run);
  std::vector<T> expected(n);
  CHECK(cudaMemcpy(expected.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
  printf("== %s n=%lld: copy %.1f GB/s, CUB %.4f ms (%.1f %% of copy)\n", std::is_integral<T>::value ? "int32" : "float32",
         (long long)n, copy_gbps, cub_ms, 100.0 * 2.0 * n * sizeof(T) / cub_ms / 1e6 / copy_gbps);
  void* scratch;
  CHECK(cudaMalloc(&scratch, 256 + TileStatus<T>::bytes(n / 1024 + 1)));
  for (int rep = 0; rep < 2; ++rep) {
    Case<T> c{in, out, n, scratch, &expected, tune::median_ms(cub_run), copy_gbps};
    printf("CUB again %.4f ms\n", c.cub_ms);
    constexpr auto kPar = LookbackReads::kParallel, kSer = LookbackReads::kSerial;
    candidate<T, 256, 32, 4>(c);  // the library's choice
    candidate<T, 256, 32, 4, 4, kPar>(c);
    candidate<T, 256, 32, 4, 8, kSer>(c);
    candidate<T, 256, 32, 4, 2, kPar>(c);
    candidate<T, 512, 32, 2, 4>(c);
    candidate<T, 128, 32, 8, 4>(c);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  CHECK(cudaFree(temp));
  CHECK(cudaFree(scratch));
}

int main() {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  run<int32_t>(int64_t(1) << 28, sms);
  run<float>(int64_t(1) << 28, sms);
  return 0;
}
