// Host enqueue cost and correctness of the three ways to launch a kernel: cudaLaunchKernel, and the
// driver's cuLaunchKernel with a per-context function (cudaGetFuncBySymbol) or with the context-free
// kernel handle DriverKernel uses (cudaGetKernel). GPU machine, from the repo root:
//   nvcc -O2 -std=c++17 -arch=sm_90a bench/tune/launch_forms.cu -o /tmp/launch_forms && /tmp/launch_forms
#include <cstdio>
#include <chrono>
#include <cuda.h>
#include <cuda_runtime.h>
struct P { long long w[48]; };
__global__ void k_write(P p, int* out) { if (threadIdx.x == 0) atomicAdd(out, (int)p.w[0]); }
__global__ void spin(long long c) { long long s = clock64(); while (clock64() - s < c) {} }
using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**);
template <class F> double ns(F f, cudaStream_t s) {
  for (int i = 0; i < 100; ++i) f(); cudaDeviceSynchronize();
  double t = 0; const int iters = 20000;
  for (int d = 0; d < iters; d += 100) {
    spin<<<1, 1, 0, s>>>(2000000);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) f();
    auto t1 = std::chrono::steady_clock::now();
    cudaDeviceSynchronize();
    t += std::chrono::duration<double, std::nano>(t1 - t0).count();
  }
  return t / iters;
}
int main() {
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  int* out; cudaMalloc(&out, 4);
  P p{}; p.w[0] = 1;
  void* args[] = {&p, &out};
  void* fp = nullptr; cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuLaunchKernel", &fp, 12000, cudaEnableDefault, &q);
  LaunchFn cu = (LaunchFn)fp;
  cudaFunction_t fn; cudaGetFuncBySymbol(&fn, (const void*)&k_write);
  cudaKernel_t kn; cudaError_t ek = cudaGetKernel(&kn, (const void*)&k_write);
  printf("entry %d/%d getKernel %s\n", (int)(fp != nullptr), (int)q, cudaGetErrorName(ek));
  for (cudaStream_t st : {s, (cudaStream_t)0}) {
    cudaMemset(out, 0, 4);
    CUresult r1 = cu((CUfunction)fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)st, args, nullptr);
    CUresult r2 = cu((CUfunction)kn, 1, 1, 1, 32, 1, 1, 0, (CUstream)st, args, nullptr);
    cudaLaunchKernel((const void*)&k_write, dim3(1), dim3(32), args, 0, st);
    int h = 0; cudaDeviceSynchronize(); cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost);
    printf("stream %s: CUfunction rc %d, CUkernel rc %d, writes counted %d (want 3) %s\n", st ? "created" : "null", (int)r1, (int)r2, h, h == 3 ? "PASS" : "FAIL");
  }
  for (int rep = 0; rep < 2; ++rep) {
    printf("cudaLaunchKernel        %.0f ns\n", ns([&] { cudaLaunchKernel((const void*)&k_write, dim3(1), dim3(32), args, 0, s); }, s));
    printf("cuLaunchKernel CUfunction %.0f ns\n", ns([&] { cu((CUfunction)fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)s, args, nullptr); }, s));
    printf("cuLaunchKernel CUkernel   %.0f ns\n", ns([&] { cu((CUfunction)kn, 1, 1, 1, 32, 1, 1, 0, (CUstream)s, args, nullptr); }, s));
  }
  printf("last error %s\n", cudaGetErrorName(cudaGetLastError()));
  return 0;
}
