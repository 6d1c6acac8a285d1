// Host cost of the CUDA runtime calls on a launch path, timed in C++ (benchmarks only): tells how
// much of an op's per-call time is the driver and how much is ours.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda.h>  // driver API types only: cuLaunchKernel is looked up at run time, not linked

#include "cub_ref.hpp"

namespace gpuprims {
namespace cub_ref {
namespace {

struct BigParams {
  int64_t words[48];  // about the size of a reduce kernel's parameter block
};

__global__ void empty_kernel() {}
__global__ void big_param_kernel(BigParams p) {
  if (p.words[0] == 12345) p.words[1] = 0;
}

__global__ void spin_kernel(int64_t cycles) {
  const int64_t start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Host time per call, enqueue only: batches of kBatch calls, each started with the GPU held busy by
// a spin kernel and followed by a synchronization that is not timed. Launch queues hold about a
// thousand entries, so a batch of 100 never waits for the GPU: this is the host's cost alone (with
// thousands of calls per synchronization, tiny kernels fill the queue and the loop runs at the
// GPU's rate instead).
template <class F>
double ns_per_call(F f, int iters) {
  constexpr int kBatch = 100;
  for (int i = 0; i < kBatch; ++i) f();
  cudaDeviceSynchronize();
  double ns = 0;
  for (int done = 0; done < iters; done += kBatch) {
    spin_kernel<<<1, 1>>>(2000000);  // ~1 ms at 2 GHz, longer than the batch's enqueue
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatch; ++i) f();
    const auto t1 = std::chrono::steady_clock::now();
    cudaDeviceSynchronize();
    ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
  }
  return ns / ((iters + kBatch - 1) / kBatch * kBatch);
}

// GPU time per kernel of back-to-back launches: all enqueued behind a spin kernel, timed by events
// from the end of the spin to the last kernel's end.
template <class F>
double device_ns_per_kernel(F f, int kernels) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  spin_kernel<<<1, 1>>>(20000000);  // ~10 ms: every launch below is queued before it ends
  cudaEventRecord(start);
  for (int i = 0; i < kernels; ++i) f();
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms * 1e6 / kernels;
}

}  // namespace

std::vector<std::pair<std::string, double>> launch_probe(int iters) {
  std::vector<std::pair<std::string, double>> rows;
  int device = 0;
  rows.emplace_back("cudaGetDevice", ns_per_call([&] { cudaGetDevice(&device); }, iters));
  rows.emplace_back("cudaGetLastError", ns_per_call([] { cudaGetLastError(); }, iters));
  cudaStreamCaptureStatus st;
  rows.emplace_back("cudaStreamIsCapturing", ns_per_call([&] { cudaStreamIsCapturing(nullptr, &st); }, iters));
  rows.emplace_back("empty kernel <<<1,256>>>", ns_per_call([] { empty_kernel<<<1, 256>>>(); }, iters));
  BigParams p{};
  rows.emplace_back("384-byte-param kernel <<<1,256>>>", ns_per_call([&] { big_param_kernel<<<1, 256>>>(p); }, iters));
  void* args[] = {&p};
  rows.emplace_back("384-byte-param kernel cudaLaunchKernel", ns_per_call([&] {
    cudaLaunchKernel(reinterpret_cast<const void*>(&big_param_kernel), dim3(1), dim3(256), args, 0, nullptr);
  }, iters));
  // The driver's launch entry point directly, with the kernel's CUfunction looked up once: what the
  // runtime's cudaLaunchKernel adds on top of it.
  using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void**, void**);
  LaunchFn cu_launch = nullptr;
  cudaDriverEntryPointQueryResult found;
  cudaFunction_t fn = nullptr;
  if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", reinterpret_cast<void**>(&cu_launch), 12000, cudaEnableDefault,
                                       &found) == cudaSuccess &&
      found == cudaDriverEntryPointSuccess &&
      cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&big_param_kernel)) == cudaSuccess) {
    rows.emplace_back("384-byte-param kernel driver cuLaunchKernel", ns_per_call([&] {
      cu_launch(reinterpret_cast<CUfunction>(fn), 1, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
    }, iters));
    cudaFunction_t empty_fn = nullptr;
    if (cudaGetFuncBySymbol(&empty_fn, reinterpret_cast<const void*>(&empty_kernel)) == cudaSuccess) {
      rows.emplace_back("empty kernel driver cuLaunchKernel", ns_per_call([&] {
        cu_launch(reinterpret_cast<CUfunction>(empty_fn), 1, 1, 1, 256, 1, 1, 0, nullptr, nullptr, nullptr);
      }, iters));
    }
    rows.emplace_back("384-byte-param kernel cudaLaunchKernel (again)", ns_per_call([&] {
      cudaLaunchKernel(reinterpret_cast<const void*>(&big_param_kernel), dim3(1), dim3(256), args, 0, nullptr);
    }, iters));
  }
  rows.emplace_back("GPU time per back-to-back empty kernel", device_ns_per_kernel([] { empty_kernel<<<1, 256>>>(); }, 500));
  return rows;
}

}  // namespace cub_ref
}  // namespace gpuprims
