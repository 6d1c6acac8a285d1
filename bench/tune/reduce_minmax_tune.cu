// Why the float32 max of 2^28 trailed torch.amax (docs/reduce.md, "Minima and maxima without
// branches": 97 % of copy against torch's 103 %, session 47) while the float32 sum, through the same
// `window` kernel, read at CUB's 104 %: the library kernels with the operator swapped. Until session
// 53 the library's Max tested both operands for NaN before comparing, written as early returns,
// which reach PTX as two branches an item ("branches" below); the candidates compute the same
// function without them:
//   select:  (a < b || b != b) ? b : a       (a NaN: a; b NaN: b; else the larger, a on ties)
//   ptx:     max.NaN.f32, one instruction (the library's Max since session 53)
// Each is timed in the library's `window` kernel (the shape "auto" runs for 2^28 contiguous items)
// and its `vectorized` kernel, next to the window kernel's sum and CUB's Sum and Max, calls back to
// back over 4 rotated 1 GiB inputs as the library benchmark does. Every result is checked against
// the host's max, and again with one NaN planted in every input (every candidate must return NaN).
// Session 53 device run 2 (H200, bench/results/h200/reduce_minmax_s53r2.txt, x CUB's Max, three
// passes): window branches 0.920-0.924x, select 0.995-0.996x, max.NaN 0.996-0.999x; vectorized
// 0.928-0.932x, 0.961-0.964x, 0.996-1.001x.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/reduce_minmax_tune.cu -o /tmp/rmm && /tmp/rmm
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "gpuprims/reduce/reduce_ops.hpp"
#include "gpuprims/reduce/reduce_vectorized.cuh"
#include "gpuprims/reduce/reduce_window.cuh"

#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::reduce_detail;

namespace {

constexpr int kBuffers = 4;  // 4 x 1 GiB rotated: no call finds its input in L2

// The candidates keep the library Max's identity (and kIsSum); only the operator differs.
// The library's Max before session 53:
struct MaxBranches : Max {
  template <class A> __host__ __device__ A operator()(A a, A b) const {
    if (a != a) return a;
    if (b != b) return b;
    return a < b ? b : a;
  }
};

struct MaxSelect : Max {
  template <class A> __host__ __device__ A operator()(A a, A b) const { return (a < b || b != b) ? b : a; }
};

__global__ void fill_real(float* p, int64_t n, uint32_t salt) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint32_t h = (uint32_t(i) * 2654435761u) ^ uint32_t(i >> 13) ^ salt;
    p[i] = float(h) * 0x1p-31f - 1.0f;  // (-1, 1), full mantissas
  }
}

float read_out(const void* out) {
  float r;
  CHECK(cudaMemcpy(&r, out, sizeof r, cudaMemcpyDeviceToHost));
  return r;
}

struct Case {
  float* const* ins;
  int64_t n;
  void* out;
  float* partials;
  int sms;
  const float* wants;  // the host's max of each buffer (they differ; each call's result is checked)
};

void print_row(const char* label, float ms, float cub_ms, const Case& c, bool ok) {
  std::printf("%s %-58s %.4f ms %7.1f GB/s %.3fx CUB Max\n", ok ? "PASS" : "FAIL", label, ms,
              c.n * sizeof(float) / ms / 1e6, cub_ms / ms);
}

bool matches(float got, float want) {
  return std::isnan(want) ? std::isnan(got) : got == want;
}

// One contiguous row of c.n items, as dispatch lays out a whole reduction.
ReduceKernelParams<float> whole_row(const Case& c) {
  ReduceLayout layout;
  layout.num_rows = 1;
  layout.row_len = c.n;
  layout.row_contiguous = true;
  return ReduceKernelParams<float>{c.ins[0], layout, c.out, DType::kFloat32};
}

// Times call(i) (input i % kBuffers) back to back, then checks its result on every buffer (sums
// are not checked: they are the bandwidth reference only).
template <class Op, class Call>
void time_and_check(const Case& c, const char* label, float cub_ms, Call call) {
  tune::running = label;
  const float ms = tune::median_ms_back_to_back(call);
  CHECK(cudaGetLastError());
  bool ok = true;
  for (int b = 0; b < kBuffers && !std::is_same<Op, Sum>::value; ++b) {
    call(b);
    ok = ok && matches(read_out(c.out), c.wants[b]);
  }
  print_row(label, ms, cub_ms, c, ok);
}

// The library window kernel (512 threads x 4 loads a block, a second launch combines) with Op.
template <class Op>
void time_window(const Case& c, const char* label, float cub_ms) {
  ReduceKernelParams<float> p = whole_row(c);
  constexpr int64_t kChunk = int64_t(WindowShape::kThreads) * WindowShape::kUnroll * 4;
  const int64_t parts = (c.n + kChunk - 1) / kChunk;
  time_and_check<Op>(c, label, cub_ms, [&](int i) {
    p.in = c.ins[i % kBuffers];
    reduce_window_kernel<float, float, Op><<<unsigned(parts), WindowShape::kThreads>>>(p, c.partials);
    reduce_window_combine_kernel<float, float, Op><<<1, WindowShape::kCombineThreads>>>(p, c.partials, parts);
  });
}

// The library vectorized kernel in the float shape dispatch gives a 2^28 reduction off sm_90's
// window path: 128 threads, 4 loads x 2 accumulators, 2 waves of its occupancy.
template <class Op>
void time_vectorized(const Case& c, const char* label, float cub_ms, unsigned* tickets) {
  ReduceKernelParams<float> p = whole_row(c);
  const auto kernel = reduce_vectorized_kernel<float, float, Op, 128, 4, LoadPolicy::kReadOnly, Partition::kChunks, 2>;
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, 128, 0));
  const int blocks = c.sms * resident * 2;
  time_and_check<Op>(c, label, cub_ms, [&](int i) {
    p.in = c.ins[i % kBuffers];
    kernel<<<blocks, 128>>>(p, c.partials, tickets);
  });
}

float host_max(const float* d, int64_t n) {
  std::vector<float> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  float m = -std::numeric_limits<float>::infinity();
  for (float v : h) {
    if (std::isnan(v)) return v;
    m = v > m ? v : m;
  }
  return m;
}

void run_pass(const Case& c, unsigned* tickets, void* cub_temp, size_t cub_bytes) {
  const auto cub_max = [&](int i) {
    cub::DeviceReduce::Max(cub_temp, cub_bytes, c.ins[i % kBuffers], static_cast<float*>(c.out), c.n);
  };
  const auto cub_sum = [&](int i) {
    cub::DeviceReduce::Sum(cub_temp, cub_bytes, c.ins[i % kBuffers], static_cast<float*>(c.out), c.n);
  };
  tune::running = "CUB Max";
  const float cub_ms = tune::median_ms_back_to_back(cub_max);
  const float cub_sum_ms = tune::median_ms_back_to_back(cub_sum);
  std::printf("CUB DeviceReduce::Max %.4f ms %.1f GB/s; CUB DeviceReduce::Sum %.4f ms %.1f GB/s\n", cub_ms,
              c.n * 4 / cub_ms / 1e6, cub_sum_ms, c.n * 4 / cub_sum_ms / 1e6);
  time_window<Sum>(c, "window sum (library)", cub_ms);
  time_window<MaxBranches>(c, "window max (branches: NaN tests, then compare)", cub_ms);
  time_window<MaxSelect>(c, "window max (select: (a < b || b != b) ? b : a)", cub_ms);
  time_window<Max>(c, "window max (library: max.NaN.f32)", cub_ms);
  time_vectorized<MaxBranches>(c, "vectorized max (branches)", cub_ms, tickets);
  time_vectorized<MaxSelect>(c, "vectorized max (select)", cub_ms, tickets);
  time_vectorized<Max>(c, "vectorized max (library: max.NaN.f32)", cub_ms, tickets);
}

}  // namespace

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int64_t n = int64_t(1) << 28;
  float* ins[kBuffers];
  float wants[kBuffers];
  for (int b = 0; b < kBuffers; ++b) {
    CHECK(cudaMalloc(&ins[b], n * sizeof(float)));
    fill_real<<<1024, 256>>>(ins[b], n, 0x9e3779b9u * uint32_t(b + 1));
    CHECK(cudaGetLastError());
    wants[b] = host_max(ins[b], n);
  }
  void* out;
  float* partials;
  unsigned* tickets;
  CHECK(cudaMalloc(&out, 64));
  CHECK(cudaMalloc(&partials, sizeof(float) << 20));
  CHECK(cudaMalloc(&tickets, 4096 * sizeof(unsigned)));
  CHECK(cudaMemset(tickets, 0, 4096 * sizeof(unsigned)));
  size_t max_bytes = 0, sum_bytes = 0;
  cub::DeviceReduce::Max(nullptr, max_bytes, ins[0], static_cast<float*>(out), n);
  cub::DeviceReduce::Sum(nullptr, sum_bytes, ins[0], static_cast<float*>(out), n);
  const size_t cub_bytes = std::max(max_bytes, sum_bytes);
  void* cub_temp;
  CHECK(cudaMalloc(&cub_temp, cub_bytes));
  Case c{ins, n, out, partials, sms, wants};
  std::printf("float32 max of 2^28 items in (-1, 1), %d SMs; host maxima %.7g %.7g %.7g %.7g\n", sms, wants[0],
              wants[1], wants[2], wants[3]);
  for (int pass = 1; pass <= 3; ++pass) {
    std::printf("\npass %d\n", pass);
    run_pass(c, tickets, cub_temp, cub_bytes);
  }
  // One NaN in every buffer, at a different place each: every candidate must return NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int b = 0; b < kBuffers; ++b) {
    const int64_t at = (int64_t(b) * 48271 * 65537 + 12345) % n;
    CHECK(cudaMemcpy(ins[b] + at, &nan, sizeof nan, cudaMemcpyHostToDevice));
    wants[b] = nan;
  }
  std::printf("\nwith one NaN in every input (results must be NaN)\n");
  run_pass(c, tickets, cub_temp, cub_bytes);
  for (float* in : ins) CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  CHECK(cudaFree(partials));
  CHECK(cudaFree(tickets));
  CHECK(cudaFree(cub_temp));
  return 0;
}
