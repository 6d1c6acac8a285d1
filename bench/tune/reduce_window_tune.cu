// Reductions in blockIdx order (docs/reduce.md, "Tuning evidence"): block b sums the b-th small
// contiguous chunk (8-64 KiB) of the input, tens of thousands of blocks scheduled by the hardware,
// so the blocks in flight read one contiguous window of the array (the row-scan harness found this
// pattern 5 points of copy ahead of blocks streaming private regions; CUB's segmented reduce, a
// block per segment, read at 106.5 % of copy where its DeviceReduce read at 103.9 %). Partials are
// combined in index order by the last block of each group of blocks and then by the last group
// (atomic tickets), so float sums are bitwise reproducible; or ("two launches") written by blocks
// that end without a fence or ticket and summed in index order by a second launch of one block. Timed like the library benchmark (calls
// back to back, inputs rotated over 4 x 1 GiB) next to CUB and the library's bulk_copy / vectorized
// kernels in their library shapes, on 2^28 int32 (int64 accumulation) and float32 sums; since
// session 14 also the library's `window` (reduce_window.cuh, the "two launches, 512 thr x 4 vecs"
// shape). Argument "real": float inputs with full mantissas (default: small integers, exact sums).
// H100 (session 14 runs 5, 7, 8): window 16 KiB 1.019-1.025x CUB, two launches 512 x 4 1.014-1.020x,
// bulk_copy 0.981-0.989x, vectorized 0.991-0.998x; the library window 1.008-1.013x (int32) and, in
// its first form (accumulate_vectorized, one accumulator per vector), 0.80x for float32 with either
// data (run 7); in its final form 1.013x int32, 1.020x float32 (run 8). On the H200 (session 13) the window with
// fence and ticket ran 0.82-0.92x and the two-launch 32 KiB shapes 0.999-1.001x.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/reduce_window_tune.cu -o /tmp/rw && /tmp/rw
#include <cmath>
#include <cstdio>
#include <string>

#include <cub/device/device_reduce.cuh>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/reduce/reduce_bulk.cuh"
#include "gpuprims/reduce/reduce_vectorized.cuh"
#include "gpuprims/reduce/reduce_window.cuh"

#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::reduce_detail;

namespace {

constexpr int kBuffers = 4;       // 4 x 1 GiB rotated: no call finds its input in L2
constexpr int kGroupBlocks = 1024;  // blocks whose partials one group-last block combines

bool real_data = false;  // argument "real": float inputs in (-1, 1) with full mantissas, as the benchmark's randn

template <class T>
__global__ void fill_random(T* p, int64_t n, bool real) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint32_t h = uint32_t(i * 2654435761u) ^ uint32_t(i >> 13);
    p[i] = real && !std::is_integral<T>::value ? T(float(h) * 0x1p-31f - 1.0f) : T((i * 2654435761u >> 7) % 7);
  }
}

// Sum of `count` partials in a fixed order: a serial run per thread, then the block tree.
template <class Acc, int kThreads>
__device__ Acc sum_partials(const volatile Acc* p, int64_t count) {
  using Reduce = BlockReduce<Acc, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  Acc acc = Acc(0);
  for (int64_t i = threadIdx.x; i < count; i += kThreads) acc += p[i];
  const Acc total = Reduce::reduce(acc, Sum{}, temp);
  __syncthreads();  // temp is reused by the next call
  return total;
}

// Block b: items [b * kChunk, (b + 1) * kChunk), kVecs 16-byte loads a thread issued before any add.
template <class T, class Acc, int kThreads, int kVecs>
__global__ void __launch_bounds__(kThreads)
window_reduce_kernel(const T* __restrict__ in, int64_t n, Acc* partials, Acc* group_partials, unsigned* tickets, T* out) {
  constexpr int kPer = 16 / sizeof(T);
  constexpr int64_t kChunk = int64_t(kThreads) * kVecs * kPer;
  const int64_t base = int64_t(blockIdx.x) * kChunk;
  Acc acc = Acc(0);
  if (base + kChunk <= n) {
    Vec16<T> v[kVecs];
#pragma unroll
    for (int k = 0; k < kVecs; ++k) v[k] = load_vec16<T, LoadPolicy::kReadOnly>(in + base + (int64_t(k) * kThreads + threadIdx.x) * kPer);
    Acc lane_acc[kPer];
#pragma unroll
    for (int j = 0; j < kPer; ++j) lane_acc[j] = Acc(v[0].lane[j]);
#pragma unroll
    for (int k = 1; k < kVecs; ++k)
#pragma unroll
      for (int j = 0; j < kPer; ++j) lane_acc[j] += Acc(v[k].lane[j]);
#pragma unroll
    for (int j = 0; j < kPer; ++j) acc += lane_acc[j];
  } else {
    for (int64_t i = base + threadIdx.x; i < n && i < base + kChunk; i += kThreads) acc += Acc(in[i]);
  }
  {
    using Reduce = BlockReduce<Acc, kThreads>;
    __shared__ typename Reduce::TempStorage temp;
    acc = Reduce::reduce(acc, Sum{}, temp);
  }
  __shared__ bool last;
  const int64_t blocks = gridDim.x, groups = (blocks + kGroupBlocks - 1) / kGroupBlocks;
  const int64_t group = blockIdx.x / kGroupBlocks;
  const int64_t group_size = std::min<int64_t>(kGroupBlocks, blocks - group * kGroupBlocks);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();  // the partial is visible before the ticket that counts it
    last = atomicAdd(&tickets[group], 1u) == unsigned(group_size - 1);
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const Acc group_sum = sum_partials<Acc, kThreads>(partials + group * kGroupBlocks, group_size);
  if (threadIdx.x == 0) {
    tickets[group] = 0;  // ready for the next call
    group_partials[group] = group_sum;
    __threadfence();
    last = atomicAdd(&tickets[groups], 1u) == unsigned(groups - 1);
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const Acc total = sum_partials<Acc, kThreads>(group_partials, groups);
  if (threadIdx.x == 0) {
    tickets[groups] = 0;
    *out = T(total);
  }
}

// The same blocks without a fence or a ticket: each writes its partial and exits; a second launch
// of one block sums the partials in index order (the kernel boundary orders the writes).
template <class T, class Acc, int kThreads, int kVecs>
__global__ void __launch_bounds__(kThreads) window_partials_kernel(const T* __restrict__ in, int64_t n, Acc* partials) {
  constexpr int kPer = 16 / sizeof(T);
  constexpr int64_t kChunk = int64_t(kThreads) * kVecs * kPer;
  const int64_t base = int64_t(blockIdx.x) * kChunk;
  Acc acc = Acc(0);
  if (base + kChunk <= n) {
    Vec16<T> v[kVecs];
#pragma unroll
    for (int k = 0; k < kVecs; ++k) v[k] = load_vec16<T, LoadPolicy::kReadOnly>(in + base + (int64_t(k) * kThreads + threadIdx.x) * kPer);
    Acc lane_acc[kPer];
#pragma unroll
    for (int j = 0; j < kPer; ++j) lane_acc[j] = Acc(v[0].lane[j]);
#pragma unroll
    for (int k = 1; k < kVecs; ++k)
#pragma unroll
      for (int j = 0; j < kPer; ++j) lane_acc[j] += Acc(v[k].lane[j]);
#pragma unroll
    for (int j = 0; j < kPer; ++j) acc += lane_acc[j];
  } else {
    for (int64_t i = base + threadIdx.x; i < n && i < base + kChunk; i += kThreads) acc += Acc(in[i]);
  }
  using Reduce = BlockReduce<Acc, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  acc = Reduce::reduce(acc, Sum{}, temp);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

template <class T, class Acc>
__global__ void __launch_bounds__(1024) sum_partials_kernel(const Acc* partials, int64_t count, T* out) {
  const Acc total = sum_partials<Acc, 1024>(partials, count);
  if (threadIdx.x == 0) *out = T(total);
}

struct Setup {
  int sms;
  void* out;
  unsigned* tickets;  // zeroed once; every kernel leaves them at 0
  void* partials;
  void* group_partials;
};

template <class T>
double result_of(const Setup& s) {
  T r;
  CHECK(cudaMemcpy(&r, s.out, sizeof(T), cudaMemcpyDeviceToHost));
  return double(r);
}

template <class T>
void print_row(const char* label, float ms, float cub_ms, int64_t n, double got, double want) {
  const bool ok = std::abs(got - want) <= 1e-5 * std::abs(want) + (real_data ? 1e-4 * std::sqrt(double(n)) : 0.0);
  std::printf("%s %-60s %.4f ms %7.1f GB/s %.3fx CUB\n", ok ? "PASS" : "FAIL", label, ms, n * sizeof(T) / ms / 1e6,
              cub_ms / ms);
}

template <class T, class Acc, int kThreads, int kVecs>
void window_row(T* const* ins, int64_t n, const Setup& s, float cub_ms, double want) {
  constexpr int64_t kChunk = int64_t(kThreads) * kVecs * (16 / sizeof(T));
  const unsigned blocks = unsigned((n + kChunk - 1) / kChunk);
  char label[96];
  std::snprintf(label, sizeof label, "window %d thr x %d vecs (%lld KiB a block, %u blocks)", kThreads, kVecs,
                (long long)(kChunk * sizeof(T) / 1024), blocks);
  tune::running = label;
  const float ms = tune::median_ms_back_to_back([&](int i) {
    window_reduce_kernel<T, Acc, kThreads, kVecs><<<blocks, kThreads>>>(
        ins[i % kBuffers], n, static_cast<Acc*>(s.partials), static_cast<Acc*>(s.group_partials), s.tickets,
        static_cast<T*>(s.out));
  });
  CHECK(cudaGetLastError());
  print_row<T>(label, ms, cub_ms, n, result_of<T>(s), want);
}

template <class T, class Acc, int kThreads, int kVecs>
void two_launch_row(T* const* ins, int64_t n, const Setup& s, float cub_ms, double want) {
  constexpr int64_t kChunk = int64_t(kThreads) * kVecs * (16 / sizeof(T));
  const unsigned blocks = unsigned((n + kChunk - 1) / kChunk);
  char label[96];
  std::snprintf(label, sizeof label, "two launches, %d thr x %d vecs (%lld KiB a block)", kThreads, kVecs,
                (long long)(kChunk * sizeof(T) / 1024));
  tune::running = label;
  const float ms = tune::median_ms_back_to_back([&](int i) {
    window_partials_kernel<T, Acc, kThreads, kVecs><<<blocks, kThreads>>>(ins[i % kBuffers], n, static_cast<Acc*>(s.partials));
    sum_partials_kernel<T, Acc><<<1, 1024>>>(static_cast<const Acc*>(s.partials), blocks, static_cast<T*>(s.out));
  });
  CHECK(cudaGetLastError());
  print_row<T>(label, ms, cub_ms, n, result_of<T>(s), want);
}

// The library's kernels in the shapes its dispatch gives them for a 2^28 sum on an H200
// (docs/reduce.md): bulk_copy 256 threads x 5 stages of 8 KiB, one wave; vectorized 4 waves of its
// occupancy (int32: 256 threads x 4 loads; float32: 128 threads, 4 loads x 2 accumulators, 2 waves).
template <class T, class Acc>
void library_rows(T* const* ins, int64_t n, const Setup& s, float cub_ms, double want) {
  ReduceLayout layout;
  layout.num_rows = 1;
  layout.row_len = n;
  layout.row_contiguous = true;
  ReduceKernelParams<T> p{ins[0], layout, s.out, dtype_of<T>::value};
  const auto time = [&](const char* label, auto kernel, int threads, int waves) {
    int resident = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, threads, 0));
    const int blocks = s.sms * resident * waves;
    tune::running = label;
    const float ms = tune::median_ms_back_to_back([&](int i) {
      p.in = ins[i % kBuffers];
      kernel<<<blocks, threads>>>(p, static_cast<Acc*>(s.partials), s.tickets);
    });
    CHECK(cudaGetLastError());
    print_row<T>(label, ms, cub_ms, n, result_of<T>(s), want);
  };
  time("library bulk_copy (256 thr, 5 x 8 KiB stages, 1 wave)", reduce_bulk_kernel<T, Acc, Sum, 256, 8192, 5>, 256, 1);
  {
    constexpr int64_t kChunk = int64_t(WindowShape::kThreads) * WindowShape::kUnroll * (16 / sizeof(T));
    const int64_t parts = (n + kChunk - 1) / kChunk;
    const char* label = "library window (512 thr x 4 loads, second launch combines)";
    tune::running = label;
    const float ms = tune::median_ms_back_to_back([&](int i) {
      p.in = ins[i % kBuffers];
      reduce_window_kernel<T, Acc, Sum><<<unsigned(parts), WindowShape::kThreads>>>(p, static_cast<Acc*>(s.partials));
      reduce_window_combine_kernel<T, Acc, Sum><<<1, WindowShape::kCombineThreads>>>(p, static_cast<Acc*>(s.partials), parts);
    });
    CHECK(cudaGetLastError());
    print_row<T>(label, ms, cub_ms, n, result_of<T>(s), want);
  }
  if constexpr (std::is_integral_v<T>) {
    time("library vectorized (256 thr x 4 loads, 4 waves)",
         reduce_vectorized_kernel<T, Acc, Sum, 256, 4, LoadPolicy::kReadOnly, Partition::kChunks>, 256, 4);
  } else {
    time("library vectorized (128 thr, 4 loads x 2 acc, 2 waves)",
         reduce_vectorized_kernel<T, Acc, Sum, 128, 4, LoadPolicy::kReadOnly, Partition::kChunks, 2>, 128, 2);
  }
}

template <class T, class Acc>
void run(int64_t n, Setup& s) {
  T* ins[kBuffers];
  for (T*& in : ins) {
    CHECK(cudaMalloc(&in, n * sizeof(T)));
    fill_random<<<1024, 256>>>(in, n, real_data);
  }
  size_t temp_bytes = 0;
  cub::DeviceReduce::Sum(nullptr, temp_bytes, ins[0], static_cast<T*>(s.out), n);
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  auto cub_sum = [&](int i) { cub::DeviceReduce::Sum(temp, temp_bytes, ins[i % kBuffers], static_cast<T*>(s.out), n); };
  tune::running = "CUB";
  tune::median_ms_back_to_back(cub_sum);
  const double want = result_of<T>(s);
  std::printf("\n%s, n = %lld, sum %.1f\n", std::is_integral_v<T> ? "int32 (int64 accumulation)" : "float32",
              (long long)n, want);
  for (int rep = 0; rep < 2; ++rep) {  // twice: differences below the spread between passes are noise
    const float cub_ms = tune::median_ms_back_to_back(cub_sum);
    std::printf("CUB DeviceReduce::Sum %.4f ms %.1f GB/s\n", cub_ms, n * sizeof(T) / cub_ms / 1e6);
    library_rows<T, Acc>(ins, n, s, cub_ms, want);
    window_row<T, Acc, 256, 4>(ins, n, s, cub_ms, want);
    window_row<T, Acc, 256, 16>(ins, n, s, cub_ms, want);
    two_launch_row<T, Acc, 256, 4>(ins, n, s, cub_ms, want);
    two_launch_row<T, Acc, 128, 8>(ins, n, s, cub_ms, want);
    two_launch_row<T, Acc, 256, 8>(ins, n, s, cub_ms, want);
    two_launch_row<T, Acc, 256, 16>(ins, n, s, cub_ms, want);
    two_launch_row<T, Acc, 512, 4>(ins, n, s, cub_ms, want);
  }
  for (T* in : ins) CHECK(cudaFree(in));
  CHECK(cudaFree(temp));
}

}  // namespace

int main(int argc, char** argv) {
  real_data = argc > 1 && std::string(argv[1]) == "real";
  Setup s;
  CHECK(cudaDeviceGetAttribute(&s.sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaMalloc(&s.out, 64));
  CHECK(cudaMalloc(&s.tickets, 4096 * sizeof(unsigned)));
  CHECK(cudaMemset(s.tickets, 0, 4096 * sizeof(unsigned)));
  CHECK(cudaMalloc(&s.partials, sizeof(int64_t) << 20));
  CHECK(cudaMalloc(&s.group_partials, sizeof(int64_t) << 12));
  const int64_t n = int64_t(1) << 28;
  run<int32_t, int64_t>(n, s);
  run<float, float>(n, s);
  return 0;
}
