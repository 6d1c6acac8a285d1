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

// The library benchmark's method (python/gpuprims/bench/_timing.py): `reps` calls f(i) back to back,
// each between its own pair of events, no synchronization in between (so no idle GPU before a call),
// after 3 warm-up calls; the median. Callers rotate input buffers by i so that no call finds its
// input in L2 (sizes larger than L2).
template <class F>
float median_ms_back_to_back(F f, int reps = 30) {
  std::vector<cudaEvent_t> a(reps), b(reps);
  for (int i = 0; i < reps; ++i) {
    check(cudaEventCreate(&a[i]), "cudaEventCreate", __FILE__, __LINE__);
    check(cudaEventCreate(&b[i]), "cudaEventCreate", __FILE__, __LINE__);
  }
  for (int i = 0; i < 3; ++i) f(i);
  for (int i = 0; i < reps; ++i) {
    check(cudaEventRecord(a[i]), "cudaEventRecord", __FILE__, __LINE__);
    f(i);
    check(cudaEventRecord(b[i]), "cudaEventRecord", __FILE__, __LINE__);
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (an error of the timed work)", __FILE__, __LINE__);
  std::vector<float> t(reps);
  for (int i = 0; i < reps; ++i) {
    check(cudaEventElapsedTime(&t[i], a[i], b[i]), "cudaEventElapsedTime", __FILE__, __LINE__);
    check(cudaEventDestroy(a[i]), "cudaEventDestroy", __FILE__, __LINE__);
    check(cudaEventDestroy(b[i]), "cudaEventDestroy", __FILE__, __LINE__);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace tune

#define CHECK(x) ::tune::check((x), #x, __FILE__, __LINE__)
