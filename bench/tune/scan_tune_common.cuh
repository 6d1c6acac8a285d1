#pragma once
// What the scan tuning harnesses (scan_bulk_tune.cu, scan_lagged_tune.cu, scan_held_tune.cu) share:
// the data, the copy ceilings, CUB's scan as the reference and the peer, the on-GPU output check,
// the edge-case check, the timed row of one candidate, a 1-D tile launch's scratch and the library's
// decoupled look-back as a candidate. A candidate C provides kTile (items per tile), prepare(),
// describe(buf, size) and launch(buffers, n, input offset, exclusive).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <type_traits>

#include <cub/device/device_scan.cuh>

#include "gpuprims/reduce/reduce_ops.hpp"
#include "gpuprims/scan/lookback_scan_kernel.cuh"
#include "tune_common.cuh"

namespace scan_tune {

using Sum = gpuprims::reduce_detail::Sum;  // the harnesses' scans are sums

// The item type as the harnesses' lines name it.
// (2-byte floats are the harnesses' float16: none runs bfloat16.)
template <class T>
constexpr const char* type_label() {
  if (std::is_integral<T>::value) {
    return sizeof(T) == 1 ? "int8" : sizeof(T) == 2 ? "int16" : sizeof(T) == 4 ? "int32" : "int64";
  }
  return sizeof(T) == 2 ? "float16" : sizeof(T) == 4 ? "float32" : "float64";
}

template <class T>
__global__ void fill(T* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = T(int((i * 2654435761u >> 9) % 7) - 3);
}

// Integers bitwise; floats to 1e-3 relative (the combination orders of CUB and the candidates differ).
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

// One problem size: the buffers, the two copy ceilings and CUB's workspace.
struct Bench {
  int64_t n;
  void* in;        // n items + 16 bytes (misaligned-input edge cases read from in + 1)
  void* out;
  void* expected;  // CUB's result
  void* scratch;   // counter (256 bytes) + status words for tiles of 1024 items or more
  unsigned long long* bad;
  void* temp;
  size_t temp_bytes;
  double copy_gbps;    // this harness's copy kernel (bytes read + written)
  double memcpy_gbps;  // cudaMemcpy device to device, the library benchmark's ceiling
};

constexpr size_t kScratchBytesPerTile = 24;  // the largest TileStatus word set (64-bit accumulators)

template <class T>
Bench make_bench(int64_t n, int sms) {
  Bench b;
  b.n = n;
  CHECK(cudaMalloc(&b.in, n * sizeof(T) + 16));
  CHECK(cudaMalloc(&b.out, n * sizeof(T)));
  CHECK(cudaMalloc(&b.expected, n * sizeof(T)));
  CHECK(cudaMalloc(&b.scratch, 256 + kScratchBytesPerTile * (n / 1024 + 1)));
  CHECK(cudaMalloc(&b.bad, sizeof(unsigned long long)));
  fill<<<1024, 256>>>(static_cast<T*>(b.in), n + 4);
  CHECK(cudaGetLastError());
  const double bytes = 2.0 * n * sizeof(T);
  tune::running = "copy kernel";
  b.copy_gbps = bytes / tune::median_ms([&] {
                  copy_kernel<<<sms * 16, 256>>>(static_cast<const int4*>(b.in), static_cast<int4*>(b.out),
                                                 n * sizeof(T) / 16);
                }) / 1e6;
  tune::running = "cudaMemcpy";
  b.memcpy_gbps =
      bytes / tune::median_ms([&] { CHECK(cudaMemcpyAsync(b.out, b.in, n * sizeof(T), cudaMemcpyDeviceToDevice)); }) / 1e6;
  size_t inclusive_bytes = 0, exclusive_bytes = 0;
  CHECK(cub::DeviceScan::InclusiveSum(nullptr, inclusive_bytes, static_cast<T*>(b.in), static_cast<T*>(b.out), n));
  CHECK(cub::DeviceScan::ExclusiveSum(nullptr, exclusive_bytes, static_cast<T*>(b.in), static_cast<T*>(b.out), n));
  b.temp_bytes = std::max(inclusive_bytes, exclusive_bytes);
  CHECK(cudaMalloc(&b.temp, b.temp_bytes));
  printf("== %s n=%lld: copy kernel %.1f GB/s, cudaMemcpy %.1f GB/s\n", type_label<T>(),
         (long long)n, b.copy_gbps, b.memcpy_gbps);
  return b;
}

inline void free_bench(Bench& b) {
  for (void* p : {b.in, b.out, b.expected, b.scratch, static_cast<void*>(b.bad), b.temp}) CHECK(cudaFree(p));
}

template <class T>
int64_t mismatches(const Bench& b, int64_t n) {
  CHECK(cudaMemset(b.bad, 0, sizeof(unsigned long long)));
  count_bad<<<1024, 256>>>(static_cast<const T*>(b.out), static_cast<const T*>(b.expected), n, b.bad);
  CHECK(cudaGetLastError());
  unsigned long long bad;
  CHECK(cudaMemcpy(&bad, b.bad, sizeof(bad), cudaMemcpyDeviceToHost));
  return int64_t(bad);
}

// CUB's scan of n items from `in` + offset into `expected`.
template <class T>
void cub_scan(const Bench& b, int64_t n, int64_t offset, bool exclusive) {
  const T* in = static_cast<const T*>(b.in) + offset;
  T* expected = static_cast<T*>(b.expected);
  size_t temp_bytes = b.temp_bytes;
  if (exclusive) CHECK(cub::DeviceScan::ExclusiveSum(b.temp, temp_bytes, in, expected, n));
  else CHECK(cub::DeviceScan::InclusiveSum(b.temp, temp_bytes, in, expected, n));
}

// CUB InclusiveSum's median time on all n items; prints its row.
template <class T>
float time_cub(const Bench& b) {
  tune::running = "CUB";
  const float ms = tune::median_ms([&] { cub_scan<T>(b, b.n, 0, false); });
  const double gbps = 2.0 * b.n * sizeof(T) / ms / 1e6;
  printf("CUB %.4f ms (%.1f %% of copy kernel, %.1f %% of cudaMemcpy)\n", ms, 100.0 * gbps / b.copy_gbps,
         100.0 * gbps / b.memcpy_gbps);
  return ms;
}

// Edge sizes, misalignment and exclusive scans, each against CUB; returns the number of failing cases.
template <class T, class C>
int check_edges(const Bench& b) {
  const int64_t t = C::kTile;
  const int64_t sizes[] = {1, 2, 1000, t - 1, t, t + 1, 3 * t - 1, 3 * t + 1, 1000 * t + 1, 4097 * t - 1};
  int failures = 0;
  for (int64_t n : sizes)
    for (int64_t offset : {0, 1})
      for (bool exclusive : {false, true}) {
        if (n > b.n) continue;
        cub_scan<T>(b, n, offset, exclusive);
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

// One candidate's row: edge checks (if `edges`), then its median time on all n items, its output
// checked against CUB's.
template <class T, class C>
void time_candidate(const Bench& b, float cub_ms, bool edges) {
  C::prepare();  // before describe: an occupancy query may need the shared-memory opt-in
  char name[200];
  C::describe(name, sizeof(name));
  tune::running = name;
  const int edge_failures = edges ? check_edges<T, C>(b) : 0;
  cub_scan<T>(b, b.n, 0, false);
  CHECK(cudaMemset(b.out, 0xff, b.n * sizeof(T)));
  const float ms = tune::median_ms([&] { C::launch(b, b.n, 0, false); });
  CHECK(cudaGetLastError());
  const int64_t bad = mismatches<T>(b, b.n);
  const double gbps = 2.0 * b.n * sizeof(T) / ms / 1e6;
  printf("%s %-7s n=%lld %s  %.4f ms  %6.1f GB/s  %5.1f %% copy  %5.1f %% memcpy  %.3fx CUB  (%lld bad, %d edge cases failed)\n",
         bad == 0 && edge_failures == 0 ? "PASS" : "FAIL", type_label<T>(),
         (long long)b.n, name, ms, gbps, 100.0 * gbps / b.copy_gbps, 100.0 * gbps / b.memcpy_gbps, cub_ms / ms,
         (long long)bad, edge_failures);
  fflush(stdout);
}

// A candidate's row name: `what`, then the kernel's resident blocks per SM (with `smem` bytes of
// dynamic shared memory), registers and local memory.
inline void describe_kernel(char* s, size_t size, const void* kernel, int threads, int smem, const char* what,
                            int width = 52) {
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, threads, smem));
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  snprintf(s, size, "%-*s resident=%d regs=%2d local=%zu", width, what, resident, attr.numRegs, attr.localSizeBytes);
}

// What a launch of a 1-D scan of n items at `offset` needs: the tile count for tile_items-item
// tiles, the layout, the input, whether it takes the vector path, and the counter and status words
// zeroed as the library does per launch.
template <class T>
struct TileLaunch {
  int64_t tiles;
  gpuprims::scan_detail::ScanLayout layout;
  const T* in;
  bool vector_ok;
  unsigned long long* counter;
  gpuprims::scan_detail::TileStatus<T> status;
  TileLaunch(const Bench& b, int64_t n, int64_t offset, int64_t tile_items)
      : tiles((n + tile_items - 1) / tile_items),
        in(static_cast<const T*>(b.in) + offset),
        vector_ok(reinterpret_cast<uintptr_t>(in) % 16 == 0),
        counter(static_cast<unsigned long long*>(b.scratch)),
        status(gpuprims::scan_detail::TileStatus<T>::at(static_cast<char*>(b.scratch) + 256, tiles)) {
    layout.len = n;
    CHECK(cudaMemsetAsync(b.scratch, 0, 256 + gpuprims::scan_detail::TileStatus<T>::bytes(tiles)));
  }
};

// The library's decoupled look-back as it ships (lookback_scan_kernel's default shape for T).
template <class T, int kWidth = 52>
struct LibraryLookback {
  static constexpr int64_t kTile = gpuprims::scan_detail::LookbackTile<T, T, Sum>::kTileItems;
  static void prepare() {}
  static void describe(char* s, size_t size) {
    describe_kernel(s, size, (const void*)gpuprims::scan_detail::lookback_scan_kernel<T, T, Sum>,
                    gpuprims::scan_detail::kLookbackThreads, 0, "decoupled_lookback (library)", kWidth);
  }
  static void launch(const Bench& b, int64_t n, int64_t offset, bool exclusive) {
    const TileLaunch<T> t(b, n, offset, kTile);
    gpuprims::scan_detail::lookback_scan_kernel<T, T, Sum><<<unsigned(t.tiles), gpuprims::scan_detail::kLookbackThreads>>>(
        t.in, static_cast<T*>(b.out), t.layout, t.tiles, t.counter, t.status, exclusive, t.vector_ok);
  }
};

// `reps` repetitions on one Bench of n items: each times CUB, then calls f(bench, CUB's ms, edges),
// edges true on the first repetition where `edges_first` asks for the edge cases.
template <class T, class F>
void repeat_against_cub(int64_t n, int sms, int reps, bool edges_first, F f) {
  Bench b = make_bench<T>(n, sms);
  for (int rep = 0; rep < reps; ++rep) {
    const float cub_ms = time_cub<T>(b);
    f(b, cub_ms, rep == 0 && edges_first);
  }
  free_bench(b);
}

}  // namespace scan_tune
