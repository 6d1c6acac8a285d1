// Host cost of the CUDA runtime calls on a launch path, timed in C++ (benchmarks only): tells how
// much of an op's per-call time is the driver and how much is ours.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

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

template <class F>
double ns_per_call(F f, int iters) {
  for (int i = 0; i < 100; ++i) f();
  cudaDeviceSynchronize();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) f();
  const auto t1 = std::chrono::steady_clock::now();
  cudaDeviceSynchronize();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / iters;
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
  return rows;
}

}  // namespace cub_ref
}  // namespace gpuprims
