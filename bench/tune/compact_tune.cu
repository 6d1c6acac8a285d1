// Tuning sweep for the single-pass compaction (docs/scan.md): block size, flags per thread (tile
// size), look-back read order and window, next to cub::DeviceSelect::Flagged in the same program, on
// 2^28 float32 values under a 50 % random mask (the issue's case). Each candidate's output and count
// are checked bitwise against CUB's.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/compact_tune.cu -o /tmp/compact && /tmp/compact
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cub/device/device_select.cuh>

#include "gpuprims/scan/compact_kernel.cuh"

#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::scan_detail;

__global__ void fill(uint32_t* values, uint8_t* mask, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint64_t h = uint64_t(i) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    values[i] = uint32_t(h);
    mask[i] = (h >> 40) & 1;
  }
}

struct Case {
  const uint32_t* values;
  const uint8_t* mask;
  uint32_t* out;
  int64_t* count;
  int64_t n;
  void* scratch;
  const std::vector<uint32_t>* expected;
  int64_t expected_count;
  float cub_ms;
};

template <int kThreads, int kItems, LookbackReads kReads, int kPerLane = kLookbackPerLane>
void candidate(const Case& c) {
  auto kernel = compact_kernel<uint32_t, uint8_t, kThreads, kItems, kReads, kPerLane>;
  constexpr int64_t kTile = int64_t(kThreads) * kItems;
  const int64_t tiles = (c.n + kTile - 1) / kTile;
  auto* counter = static_cast<unsigned long long*>(c.scratch);
  const CountStatus status = CountStatus::at(static_cast<char*>(c.scratch) + 256, tiles);
  const size_t bytes = 256 + CountStatus::bytes(tiles);
  const Strided1D shape{c.n, 1, 1, 1, c.n};
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, 0));
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  CHECK(cudaMemset(c.out, 0xff, c.expected_count * sizeof(uint32_t)));  // poison
  const float ms = tune::median_ms([&] {
    CHECK(cudaMemsetAsync(c.scratch, 0, bytes));
    kernel<<<unsigned(tiles), kThreads>>>(c.values, c.mask, uint8_t(0xff), c.out, c.count, shape, tiles, counter,
                                          status, true, true);
  });
  CHECK(cudaGetLastError());
  int64_t got_count = -1;
  CHECK(cudaMemcpy(&got_count, c.count, sizeof(got_count), cudaMemcpyDeviceToHost));
  std::vector<uint32_t> got(c.expected_count);
  CHECK(cudaMemcpy(got.data(), c.out, got.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  const bool ok = got_count == c.expected_count && std::memcmp(got.data(), c.expected->data(), got.size() * 4) == 0;
  printf("%s threads=%4d items=%2d tile=%5lld %s window=%3d resident=%2d regs=%3d smem=%5zu  %.4f ms  %.3fx CUB\n",
         ok ? "PASS" : "FAIL", kThreads, kItems, (long long)kTile,
         kReads == LookbackReads::kSerial ? "serial  " : "parallel", 32 * kPerLane, resident, attr.numRegs,
         attr.sharedSizeBytes, ms, c.cub_ms / ms);
}

int main() {
  const int64_t n = int64_t(1) << 28;
  uint32_t *values, *out;
  uint8_t* mask;
  int64_t* count;
  CHECK(cudaMalloc(&values, n * 4));
  CHECK(cudaMalloc(&out, n * 4));
  CHECK(cudaMalloc(&mask, n));
  CHECK(cudaMalloc(&count, 8));
  fill<<<1024, 256>>>(values, mask, n);
  CHECK(cudaGetLastError());
  size_t temp_bytes = 0;
  CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, values, mask, out, count, n));
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  auto cub_run = [&] { CHECK(cub::DeviceSelect::Flagged(temp, temp_bytes, values, mask, out, count, n)); };
  const float cub_ms = tune::median_ms(cub_run);
  int64_t expected_count = 0;
  CHECK(cudaMemcpy(&expected_count, count, 8, cudaMemcpyDeviceToHost));
  std::vector<uint32_t> expected(expected_count);
  CHECK(cudaMemcpy(expected.data(), out, expected_count * 4, cudaMemcpyDeviceToHost));
  printf("== compact 2^28 float32-sized values, 50 %% random mask (%lld selected): CUB %.4f ms\n",
         (long long)expected_count, cub_ms);
  void* scratch;
  CHECK(cudaMalloc(&scratch, 256 + CountStatus::bytes(n / 2048 + 1)));
  constexpr auto kPar = LookbackReads::kParallel, kSer = LookbackReads::kSerial;
  for (int rep = 0; rep < 2; ++rep) {
    Case c{values, mask, out, count, n, scratch, &expected, expected_count, tune::median_ms(cub_run)};
    printf("CUB again %.4f ms\n", c.cub_ms);
    candidate<256, 16, kPar>(c);  // the library's choice for 8-byte items
    candidate<256, 16, kSer>(c);
    candidate<256, 16, kPar, 8>(c);
    candidate<256, 32, kPar>(c);
    candidate<256, 32, kSer>(c);  // the library's choice for 4-byte items
    candidate<128, 32, kPar>(c);
    candidate<512, 16, kPar>(c);
    candidate<128, 16, kPar>(c);
  }
  CHECK(cudaFree(values));
  CHECK(cudaFree(out));
  CHECK(cudaFree(mask));
  CHECK(cudaFree(count));
  CHECK(cudaFree(temp));
  CHECK(cudaFree(scratch));
  return 0;
}
