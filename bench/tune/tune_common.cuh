#pragma once
// What every tuning harness in bench/tune shares: a CUDA-call check that names the call, the line
// and the case running (asynchronous errors surface at a later call, so harnesses set
// tune::running before each case and synchronize before the next), and the CUDA-event median.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

namespace tune {

inline const char* running = "setup";

inline void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::printf("%s:%d %s: %s (while running: %s)\n", file, line, call, cudaGetErrorString(e), running);
  std::exit(1);
}

// Median of `reps` CUDA-event timings of f() on the default stream, after 3 warm-up calls.
template <class F>
float median_ms(F f, int reps = 30) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate", __FILE__, __LINE__);
  check(cudaEventCreate(&b), "cudaEventCreate", __FILE__, __LINE__);
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    check(cudaEventRecord(a), "cudaEventRecord", __FILE__, __LINE__);
    f();
    check(cudaEventRecord(b), "cudaEventRecord", __FILE__, __LINE__);
    check(cudaEventSynchronize(b), "cudaEventSynchronize (an error of the timed work)", __FILE__, __LINE__);
    float ms;
    check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime", __FILE__, __LINE__);
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  check(cudaEventDestroy(a), "cudaEventDestroy", __FILE__, __LINE__);
  check(cudaEventDestroy(b), "cudaEventDestroy", __FILE__, __LINE__);
  return t[t.size() / 2];
}

}  // namespace tune

#define CHECK(x) ::tune::check((x), #x, __FILE__, __LINE__)
