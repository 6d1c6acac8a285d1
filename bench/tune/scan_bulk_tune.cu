// Look-back scan designs against cub::DeviceScan::InclusiveSum, in one program, on the same data:
// int32 and float32 inclusive sums of 2^28 items (two repetitions) and int32 at 2^31 + 17. The
// candidates: the library's register tile (lookback_scan_kernel.cuh), the same with the group
// prefixes folded into the items (kFoldPrefix) in several shapes, and the shared-memory-staged tile
// (bulk_lookback_scan_kernel.cuh, sm_90 bulk copies).
// Every timed output is compared on the GPU with CUB's (int32 bitwise, float32 to 1e-3 relative: the
// combination orders differ); before timing, each candidate is checked on edge sizes (1, 2, tile +-1,
// k * tile +- 1, a misaligned input taking the scalar path, exclusive scans against
// cub::DeviceScan::ExclusiveSum).
// Build and run on the GPU machine (repo root):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/scan_bulk_tune.cu -o /tmp/sb && /tmp/sb
#include <cmath>
#include <cstdio>
#include <type_traits>

#include <cub/device/device_scan.cuh>

#include "gpuprims/reduce/reduce_ops.hpp"
#include "gpuprims/scan/bulk_lookback_scan_kernel.cuh"
#include "gpuprims/scan/lookback_scan_kernel.cuh"

#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::scan_detail;
using Sum = reduce_detail::Sum;
constexpr auto kSerial = LookbackReads::kSerial;

template <class T>
__global__ void fill(T* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = T(int((i * 2654435761u >> 9) % 7) - 3);
}

template <class T>
__global__ void count_bad(const T* got, const T* expected, int64_t n, unsigned long long* bad) {
  unsigned long long mine = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const double g = double(got[i]), e = double(expected[i]);
    mine += std::is_integral<T>::value ? g != e : !(fabs(g - e) <= 1e-3 * (1.0 + fabs(e)));
  }
  if (mine) atomicAdd(bad, mine);
}

__global__ void copy_kernel(const int4* __restrict__ in, int4* __restrict__ out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

struct Buffers {
  void* in;
  void* out;
  void* expected;
  void* scratch;  // counter (256 bytes) + status words
  unsigned long long* bad;
};

template <class T>
int64_t mismatches(const Buffers& b, int64_t n) {
  CHECK(cudaMemset(b.bad, 0, sizeof(unsigned long long)));
  count_bad<<<1024, 256>>>(static_cast<const T*>(b.out), static_cast<const T*>(b.expected), n, b.bad);
  CHECK(cudaGetLastError());
  unsigned long long bad;
  CHECK(cudaMemcpy(&bad, b.bad, sizeof(bad), cudaMemcpyDeviceToHost));
  return int64_t(bad);
}

// One design and shape: launches it on n items of `in` (+ `offset` elements) into `out`.
template <class T, bool kBulk, int kThreads, int kGroupsOrItems, int kMinBlocks, bool kBulkStore = true,
          int kPerLane = kLookbackPerLane, bool kFold = false>
struct Candidate {
  static constexpr int64_t kTile = int64_t(kThreads) * (kBulk ? 4 * kGroupsOrItems : kGroupsOrItems);
  static void* kernel() {
    if constexpr (kBulk) return (void*)bulk_lookback_scan_kernel<T, T, Sum, kThreads, kGroupsOrItems, kMinBlocks, kBulkStore, kPerLane>;
    else return (void*)lookback_scan_kernel<T, T, Sum, kThreads, kGroupsOrItems, kMinBlocks, kPerLane, kSerial, kFold>;
  }
  static size_t smem() { return kBulk ? size_t(kTile) * 4 : 0; }
  static void prepare() {
    if constexpr (kBulk)
      CHECK(cudaFuncSetAttribute(bulk_lookback_scan_kernel<T, T, Sum, kThreads, kGroupsOrItems, kMinBlocks, kBulkStore, kPerLane>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem())));
  }
  static void launch(const Buffers& b, int64_t n, int64_t offset, bool exclusive) {
    const int64_t tiles = (n + kTile - 1) / kTile;
    ScanLayout layout;
    layout.len = n;
    const T* in = static_cast<const T*>(b.in) + offset;
    T* out = static_cast<T*>(b.out);
    const bool aligned = reinterpret_cast<uintptr_t>(in) % 16 == 0;
    auto* counter = static_cast<unsigned long long*>(b.scratch);
    const auto status = TileStatus<T>::at(static_cast<char*>(b.scratch) + 256, tiles);
    CHECK(cudaMemsetAsync(b.scratch, 0, 256 + TileStatus<T>::bytes(tiles)));
    if constexpr (kBulk)
      bulk_lookback_scan_kernel<T, T, Sum, kThreads, kGroupsOrItems, kMinBlocks, kBulkStore, kPerLane>
          <<<unsigned(tiles), kThreads, smem()>>>(in, out, layout, tiles, counter, status, exclusive, aligned);
    else
      lookback_scan_kernel<T, T, Sum, kThreads, kGroupsOrItems, kMinBlocks, kPerLane, kSerial, kFold>
          <<<unsigned(tiles), kThreads>>>(in, out, layout, tiles, counter, status, exclusive, aligned);
  }
  static void describe(char* s, size_t size) {
    int resident = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, (const void*)kernel(), kThreads, smem()));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, (const void*)kernel()));
    const char* variant = kBulk ? (kBulkStore ? "bstore" : "dstore") : kFold ? "fold" : "-";
    snprintf(s, size, "%-8s %-7s threads=%3d tile=%5lld window=%3d resident=%2d regs=%2d local=%zu", kBulk ? "bulk" : "register",
             variant, kThreads, (long long)kTile, 32 * kPerLane, resident, attr.numRegs, attr.localSizeBytes);
  }
};

template <class T>
void cub_scan(const Buffers& b, int64_t n, int64_t offset, bool exclusive, void* temp, size_t temp_bytes) {
  const T* in = static_cast<const T*>(b.in) + offset;
  T* expected = static_cast<T*>(b.expected);
  if (exclusive) CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, expected, n));
  else CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, expected, n));
}

// Edge sizes, misalignment and exclusive scans, each against CUB; returns the number of failing cases.
template <class T, class C>
int check_edges(const Buffers& b, void* temp, size_t temp_bytes) {
  const int64_t t = C::kTile;
  const int64_t sizes[] = {1, 2, 1000, t - 1, t, t + 1, 3 * t - 1, 3 * t + 1, 1000 * t + 1, 4097 * t - 1};
  int failures = 0;
  for (int64_t n : sizes)
    for (int64_t offset : {0, 1})
      for (bool exclusive : {false, true}) {
        cub_scan<T>(b, n, offset, exclusive, temp, temp_bytes);
        CHECK(cudaMemset(b.out, 0xff, n * sizeof(T)));  // poison
        C::launch(b, n, offset, exclusive);
        CHECK(cudaGetLastError());
        const int64_t bad = mismatches<T>(b, n);
        if (bad) {
          printf("  FAIL edge n=%lld offset=%lld %s: %lld bad\n", (long long)n, (long long)offset,
                 exclusive ? "exclusive" : "inclusive", (long long)bad);
          ++failures;
        }
      }
  return failures;
}

template <class T, class C>
void time_candidate(const Buffers& b, int64_t n, float cub_ms, double copy_gbps, void* temp, size_t temp_bytes,
                    bool edges) {
  C::prepare();  // before describe: the occupancy query needs the shared-memory opt-in
  char name[200];
  C::describe(name, sizeof(name));
  tune::running = name;
  const int edge_failures = edges ? check_edges<T, C>(b, temp, temp_bytes) : 0;
  cub_scan<T>(b, n, 0, false, temp, temp_bytes);
  CHECK(cudaMemset(b.out, 0xff, n * sizeof(T)));
  const float ms = tune::median_ms([&] { C::launch(b, n, 0, false); });
  CHECK(cudaGetLastError());
  const int64_t bad = mismatches<T>(b, n);
  const double gbps = 2.0 * n * sizeof(T) / ms / 1e6;
  printf("%s %-7s n=%lld %s  %.4f ms  %6.1f GB/s  %5.1f %% copy  %.3fx CUB  (%lld bad, %d edge cases failed)\n",
         bad == 0 && edge_failures == 0 ? "PASS" : "FAIL", std::is_integral<T>::value ? "int32" : "float32",
         (long long)n, name, ms, gbps, 100.0 * gbps / copy_gbps, cub_ms / ms, (long long)bad, edge_failures);
  fflush(stdout);
}

template <class T>
void run(int64_t n, int sms, int reps, bool all) {
  Buffers b;
  CHECK(cudaMalloc(&b.in, n * sizeof(T) + 16));
  CHECK(cudaMalloc(&b.out, n * sizeof(T)));
  CHECK(cudaMalloc(&b.expected, n * sizeof(T)));
  CHECK(cudaMalloc(&b.scratch, 256 + TileStatus<T>::bytes(n / 1024 + 1)));
  CHECK(cudaMalloc(&b.bad, sizeof(unsigned long long)));
  fill<<<1024, 256>>>(static_cast<T*>(b.in), n + 4);
  CHECK(cudaGetLastError());
  const double copy_ms = tune::median_ms([&] {
    copy_kernel<<<sms * 16, 256>>>(static_cast<const int4*>(b.in), static_cast<int4*>(b.out), n * sizeof(T) / 16);
  });
  const double copy_gbps = 2.0 * n * sizeof(T) / copy_ms / 1e6;
  size_t temp_bytes = 0, exclusive_bytes = 0;
  CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, static_cast<T*>(b.in), static_cast<T*>(b.out), n));
  CHECK(cub::DeviceScan::ExclusiveSum(nullptr, exclusive_bytes, static_cast<T*>(b.in), static_cast<T*>(b.out), n));
  temp_bytes = std::max(temp_bytes, exclusive_bytes);
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  printf("== %s n=%lld: copy %.1f GB/s\n", std::is_integral<T>::value ? "int32" : "float32", (long long)n, copy_gbps);
  for (int rep = 0; rep < reps; ++rep) {
    tune::running = "CUB";
    const float cub_ms = tune::median_ms([&] { cub_scan<T>(b, n, 0, false, temp, temp_bytes); });
    printf("CUB %.4f ms (%.1f %% of copy)\n", cub_ms, 100.0 * 2.0 * n * sizeof(T) / cub_ms / 1e6 / copy_gbps);
    const bool edges = rep == 0 && all;
    // The register tile before session 10: 256 threads x 32 items, group prefixes kept, 4 blocks/SM,
    // 128-tile window.
    time_candidate<T, Candidate<T, false, 256, 32, 4>>(b, n, cub_ms, copy_gbps, temp, temp_bytes, edges);
    // The group prefixes folded into the items at the warp scan (kFoldPrefix), at 4 and 5 blocks/SM
    // (48 registers, which spill a little; the library's choice after session 10 run 4: 1.018-1.043x),
    // and at 5 with a 64-tile window.
    time_candidate<T, Candidate<T, false, 256, 32, 4, true, 4, true>>(b, n, cub_ms, copy_gbps, temp, temp_bytes, edges);
    time_candidate<T, Candidate<T, false, 256, 32, 5, true, 4, true>>(b, n, cub_ms, copy_gbps, temp, temp_bytes, edges);
    time_candidate<T, Candidate<T, false, 256, 32, 5, true, 2, true>>(b, n, cub_ms, copy_gbps, temp, temp_bytes, edges);
    if (!all) continue;
    // Smaller tiles for 5 and 6 blocks/SM (28 items: 7168-item tiles; 20 items: 5120), a 256 window.
    time_candidate<T, Candidate<T, false, 256, 28, 5, true, 4, true>>(b, n, cub_ms, copy_gbps, temp, temp_bytes, edges);
    time_candidate<T, Candidate<T, false, 256, 20, 6, true, 4, true>>(b, n, cub_ms, copy_gbps, temp, temp_bytes, edges);
    time_candidate<T, Candidate<T, false, 256, 32, 4, true, 8, true>>(b, n, cub_ms, copy_gbps, temp, temp_bytes, edges);
    // The shared-memory tile's best shape (session 10 runs 2-4: 0.89-0.925x CUB), for continuity.
    time_candidate<T, Candidate<T, true, 256, 8, 6, false>>(b, n, cub_ms, copy_gbps, temp, temp_bytes, edges);
  }
  CHECK(cudaFree(b.in));
  CHECK(cudaFree(b.out));
  CHECK(cudaFree(b.expected));
  CHECK(cudaFree(b.scratch));
  CHECK(cudaFree(b.bad));
  CHECK(cudaFree(temp));
}

int main() {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  run<int32_t>(int64_t(1) << 28, sms, 2, true);
  run<float>(int64_t(1) << 28, sms, 2, true);
  run<int32_t>((int64_t(1) << 31) + 17, sms, 1, false);
  return 0;
}
