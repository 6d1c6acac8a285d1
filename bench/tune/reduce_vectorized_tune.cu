// Tuning sweep for the vectorized reduction (timed like the library benchmark: calls back to back,
// inputs rotated over 4 buffers) (docs/reduce.md, "Tuning evidence"): load shape
// (loads in flight x accumulators per vector, block size), blocks per SM in whole waves of the
// measured occupancy, and the cost of a pool-allocated partials buffer, next to CUB, on 2^28
// int32 and float32 sums.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/reduce_vectorized_tune.cu -o /tmp/tune && /tmp/tune
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "gpuprims/reduce/reduce_bulk.cuh"
#include "gpuprims/reduce/reduce_vectorized.cuh"

#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::reduce_detail;

// Non-zero data: small integers (exact float sums, no overflow of int32 partials in the check).
template <class T>
__global__ void fill_random(T* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = T((i * 2654435761u >> 7) % 7);
}

// One contiguous row of n elements, as dispatch lays out a full reduction.
template <class T>
ReduceKernelParams<T> one_row_params(const T* in, int64_t n, void* out) {
  ReduceLayout layout;
  layout.num_rows = 1;
  layout.row_len = n;
  layout.row_contiguous = true;
  return ReduceKernelParams<T>{in, layout, out, dtype_of<T>::value};
}

constexpr int kBuffers = 4;  // inputs rotated call by call, 4 x 1 GiB: none is left in L2 by the previous call

template <class T, class Acc, int kThreads, int kUnroll, LoadPolicy kPolicy, Partition kPartition, int kSplit = 1>
void sweep(const char* label, T* const* ins, int64_t n, void* out, Acc* partials, unsigned* tickets, cudaMemPool_t pool, int sms,
           float cub_ms, double cub_result) {
  ReduceKernelParams<T> p = one_row_params(ins[0], n, out);
  int resident = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &resident, reduce_vectorized_kernel<T, Acc, Sum, kThreads, kUnroll, kPolicy, kPartition, kSplit>, kThreads, 0);
  printf("%s split=%d: %d resident blocks/SM\n", label, kSplit, resident);
  for (int bps : {resident, 2 * resident, 3 * resident, 4 * resident, 6 * resident}) {
    const int blocks = sms * bps;

    // As the library launches it: the partials from a stream-ordered pool allocation per call.
    const float ms = tune::median_ms_back_to_back([&](int i) {
      p.in = ins[i % kBuffers];
      void* scratch = nullptr;
      CHECK(cudaMallocFromPoolAsync(&scratch, sizeof(Acc) * blocks, pool, 0));
      reduce_vectorized_kernel<T, Acc, Sum, kThreads, kUnroll, kPolicy, kPartition, kSplit>
          <<<dim3(blocks, 1), kThreads>>>(p, static_cast<Acc*>(scratch), tickets);
      CHECK(cudaFreeAsync(scratch, 0));
    });
    // The same kernel with a persistent partials buffer (the kernel leaves the ticket at 0).
    const float ms_bare = tune::median_ms_back_to_back([&](int i) {
      p.in = ins[i % kBuffers];
      reduce_vectorized_kernel<T, Acc, Sum, kThreads, kUnroll, kPolicy, kPartition, kSplit>
          <<<dim3(blocks, 1), kThreads>>>(p, partials, tickets);
    });
    T result;
    CHECK(cudaMemcpy(&result, out, sizeof(T), cudaMemcpyDeviceToHost));
    const bool ok = std::abs(double(result) - cub_result) <= 1e-5 * std::abs(cub_result);
    printf("%s %-8s %-16s threads=%4d unroll=%d waves=%d blocks/SM=%2d  pool-allocated partials %.4f ms  %.1f GB/s  %.3fx CUB   persistent partials %.4f ms %.3fx\n",
           ok ? "PASS" : "FAIL",
           sizeof(T) == 4 && Acc(0.5) != Acc(0) ? "float32" : "int32", label, kThreads, kUnroll, bps / resident, bps, ms,
           n * sizeof(T) / ms / 1e6, cub_ms / ms, ms_bare, cub_ms / ms_bare);
  }
}

// The bulk_copy kernel (reduce_bulk.cuh) in other shapes, at 1 and 2 waves of its occupancy.
template <class T, class Acc, int kThreads, int kStageBytes, int kStages>
void sweep_bulk(T* const* ins, int64_t n, void* out, Acc* partials, unsigned* tickets, int sms, float cub_ms,
                double cub_result) {
  auto kernel = reduce_bulk_kernel<T, Acc, Sum, kThreads, kStageBytes, kStages>;
  ReduceKernelParams<T> p = one_row_params(ins[0], n, out);
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, 0));
  for (int waves : {1, 2}) {
    const int blocks = sms * resident * waves;
    const float ms = tune::median_ms_back_to_back([&](int i) {
      p.in = ins[i % kBuffers];
      kernel<<<blocks, kThreads>>>(p, partials, tickets);
    });
    T result;
    CHECK(cudaMemcpy(&result, out, sizeof(T), cudaMemcpyDeviceToHost));
    const bool ok = std::abs(double(result) - cub_result) <= 1e-5 * std::abs(cub_result);
    printf("%s %-8s bulk copies      threads=%4d stage=%5d B stages=%d resident=%d waves=%d  %.4f ms  %.1f GB/s  %.3fx CUB\n",
           ok ? "PASS" : "FAIL", sizeof(T) == 4 && Acc(0.5) != Acc(0) ? "float32" : "int32", kThreads, kStageBytes,
           kStages, resident, waves, ms, n * sizeof(T) / ms / 1e6, cub_ms / ms);
  }
}

template <class T, class Acc>
void run(int64_t n, int sms) {
  T* ins[kBuffers];
  for (T*& in : ins) {
    CHECK(cudaMalloc(&in, n * sizeof(T)));
    fill_random<<<1024, 256>>>(in, n);
    CHECK(cudaGetLastError());
  }
  void* out;
  CHECK(cudaMalloc(&out, 64));
  Acc* partials;
  CHECK(cudaMalloc(&partials, sizeof(Acc) * 65536));
  unsigned* tickets;
  CHECK(cudaMalloc(&tickets, 64));
  size_t temp_bytes = 0;
  cub::DeviceReduce::Sum(nullptr, temp_bytes, ins[0], static_cast<T*>(out), n);
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  auto cub_sum = [&](int i) { cub::DeviceReduce::Sum(temp, temp_bytes, ins[i % kBuffers], static_cast<T*>(out), n); };
  const float cub_ms = tune::median_ms_back_to_back(cub_sum);
  T cub_value;
  CHECK(cudaMemcpy(&cub_value, out, sizeof(T), cudaMemcpyDeviceToHost));
  const double cub_result = double(cub_value);
  printf("CUB %.4f ms %.1f GB/s (sum %.1f)\n", cub_ms, n * sizeof(T) / cub_ms / 1e6, cub_result);
  constexpr auto kRO = LoadPolicy::kReadOnly;
  constexpr auto kCH = Partition::kChunks;
  cudaMemPool_t pool;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  for (int rep = 0; rep < 2; ++rep) {  // twice: differences below the run-to-run spread are noise
    const float cub_again = tune::median_ms_back_to_back(cub_sum);
    printf("CUB again %.4f ms\n", cub_again);
    sweep<T, Acc, 256, 4, kRO, kCH>("readonly chunks", ins, n, out, partials, tickets, pool, sms, cub_again, cub_result);
    sweep<T, Acc, 128, 4, kRO, kCH, 2>("readonly chunks", ins, n, out, partials, tickets, pool, sms, cub_again, cub_result);
    sweep<T, Acc, 128, 4, kRO, kCH>("readonly chunks", ins, n, out, partials, tickets, pool, sms, cub_again, cub_result);
    sweep_bulk<T, Acc, 256, 8192, 4>(ins, n, out, partials, tickets, sms, cub_again, cub_result);
    sweep_bulk<T, Acc, 256, 8192, 5>(ins, n, out, partials, tickets, sms, cub_again, cub_result);
    sweep_bulk<T, Acc, 128, 8192, 4>(ins, n, out, partials, tickets, sms, cub_again, cub_result);
    sweep_bulk<T, Acc, 256, 16384, 2>(ins, n, out, partials, tickets, sms, cub_again, cub_result);
    sweep_bulk<T, Acc, 128, 4096, 8>(ins, n, out, partials, tickets, sms, cub_again, cub_result);
  }
  CHECK(cudaGetLastError());
  for (T* in : ins) cudaFree(in);
  cudaFree(out); cudaFree(partials); cudaFree(tickets); cudaFree(temp);
}

int main() {
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int64_t n = int64_t(1) << 28;
  run<int32_t, int64_t>(n, sms);
  run<float, float>(n, sms);
  return 0;
}
