// Tuning harness for the float32 histogram (issue 4; docs/histogram.md, "float32: straight-line
// binning"): cub::DeviceHistogram::HistogramEven, the generic shared_privatized kernel the library
// launched before (count_kernel, "current") and the straight-line float32 kernel
// (count_float32_kernel) in several configurations (16-byte loads in flight per thread x
// resident-block floor x where uncounted samples go: Float32KernelConfig), all launched as the
// library launches them (same BinParams from make_bin_params, same lane-private copies, same grid),
// on 256 bins over [0, 1) and 2^28 float32 samples (1 GiB, far beyond the 50 MiB L2), with the
// output zeroing in every timed call (as in the library; CUB zeroes its counters too).
//
// Correctness first: every candidate's counts must equal the current kernel's exactly on each timed
// data set, and equal the CPU reference (bin_of_sample, the functions the library's CPU path runs) on
// adversarial data for seven bin setups: every float32 edge and its nextafter neighbours, lo, hi, NaN,
// +-inf, out-of-range and random values, through an aligned and a misaligned view (head and tail).
// A row that does not match prints FAIL.
//
// Build and run on the GPU machine, from the repository root (about 30 s of nvcc, ~10 s of run):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/histogram_float_tune.cu -o /tmp/hist_tune && /tmp/hist_tune
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include <cub/device/device_histogram.cuh>

#include "gpuprims/histogram/float32_kernel.cuh"
// The library's host-side bin setup and launch shape (make_bin_params, shared_copies,
// counting_grid_blocks), compiled into this program so that the candidates see exactly the library's
// parameters. Only inline functions and uninstantiated templates come with them: no library to link.
#include "../../cpp/src/histogram/bin_params.cpp"
#include "../../cpp/src/histogram/count_runner.cuh"

using namespace gpuprims;
using namespace gpuprims::histogram_detail;

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

using Args = CountArgs<EdgeMapper<float>>;
using Kernel = void (*)(Args);

struct Candidate {
  const char* name;
  Kernel kernel;
  size_t (*shared_bytes)(int32_t bins, int32_t copies);
  bool launched;  // what the library launches now (kLaunchFloat32Kernel, LaunchedFloat32Config)
};

size_t generic_shared_bytes(int32_t bins, int32_t copies) { return size_t(bins) * size_t(copies) * 4; }

template <int kUnroll, int kMinBlocks, Uncounted kUncounted, Undecided kUndecided, bool kPrefetch>
Candidate float32_candidate(const char* name) {
  using Config = Float32KernelConfig<kUnroll, kMinBlocks, kUncounted, kUndecided, kPrefetch>;
  return {name, count_float32_kernel<Config>, Config::shared_bytes,
          kLaunchFloat32Kernel && std::is_same<Config, LaunchedFloat32Config>::value};
}

constexpr Uncounted kDiscard = Uncounted::kDiscardRow;
constexpr Undecided kCall = Undecided::kCall, kEdge = Undecided::kEdgeCompare;
// The current kernel first: the reference of the timed data sets. Run 6 (H200) measured the first
// float32 row at 0.6002 ms on uniform data (current: 0.4376, CUB 0.2778): the out-of-line exact
// path and the serialized loads (ptxas issued the second load after the first vector's work).
const Candidate kCandidates[] = {
    {"current count_kernel (unroll 2, >=3 blocks)", count_kernel<Counting::kPrivatized, EdgeMapper<float>>,
     generic_shared_bytes, !kLaunchFloat32Kernel},
    float32_candidate<2, 5, kDiscard, kCall, false>("f32 u2 b5 call, no prefetch (run 6)"),
    float32_candidate<2, 5, kDiscard, kEdge, false>("f32 u2 b5 edge, no prefetch"),
    float32_candidate<1, 6, kDiscard, kEdge, true>("f32 u1 b6 edge, prefetch"),
    float32_candidate<2, 5, kDiscard, kEdge, true>("f32 u2 b5 edge, prefetch"),
    float32_candidate<2, 4, kDiscard, kEdge, true>("f32 u2 b4 edge, prefetch"),
    float32_candidate<2, 5, kDiscard, kCall, true>("f32 u2 b5 call, prefetch"),
};
constexpr int kNumCandidates = sizeof(kCandidates) / sizeof(kCandidates[0]);

BinParams params_for(int64_t bins, double first, double last, bool narrow) {
  HistogramBinSpec spec;
  spec.bins = bins;
  spec.first = first;
  spec.last = last;
  spec.denom = last - first;  // numpy's norm_denom for float bounds (histogram.py)
  spec.narrow = narrow;
  BinParams p;
  const Status s = make_bin_params(DType::kFloat32, spec, &p);
  if (!s.is_ok()) {
    std::printf("make_bin_params: %s\n", s.message().c_str());
    std::exit(1);
  }
  return p;
}

// Counts n samples at x into out (int64, zeroed first) with a candidate, launched as launch_counting does.
void count(const Candidate& cand, const BinParams& p, const float* x, int64_t n, unsigned long long* out, int sms,
           cudaStream_t stream = 0) {
  const Kernel kernel = cand.kernel;
  const int32_t copies = shared_copies(Counting::kPrivatized, p.bins);
  const size_t smem = cand.shared_bytes(p.bins, copies);
  Args a{};
  a.x = x;
  a.layout.n = n;
  a.layout.contiguous = true;
  a.map = EdgeMapper<float>{p};
  a.out = out;
  a.out_stride = 1;
  a.bins = p.bins;
  a.copies = copies;
  a.dropped = nullptr;
  const int64_t blocks = counting_grid_blocks(sms, resident_blocks_per_sm(kernel, kHistogramThreads, smem), n);
  CHECK(cudaMemsetAsync(out, 0, sizeof(unsigned long long) * p.bins, stream));
  kernel<<<unsigned(blocks), kHistogramThreads, smem, stream>>>(a);
  CHECK(cudaGetLastError());
}

std::vector<unsigned long long> download(const unsigned long long* d, int n) {
  std::vector<unsigned long long> h(n);
  CHECK(cudaMemcpy(h.data(), d, sizeof(unsigned long long) * n, cudaMemcpyDeviceToHost));
  return h;
}

template <class F>
float median_ms(F f, int reps = 30) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// ---------------------------------------------------------------------------------------------
// Adversarial correctness: candidates against the CPU reference.

std::vector<float> adversarial_samples(const BinParams& p, std::mt19937& rng) {
  std::vector<float> s;
  auto around = [&](float v) {
    float lo = v, hi = v;
    s.push_back(v);
    for (int k = 0; k < 3; ++k) {
      lo = std::nextafter(lo, -INFINITY);
      hi = std::nextafter(hi, INFINITY);
      s.push_back(lo);
      s.push_back(hi);
    }
  };
  for (int32_t k = 0; k <= p.bins; ++k) around(static_cast<float>(bin_edge<EdgeKind::kF32>(p, k)));
  around(p.lo_f);
  around(p.hi_f);
  for (float v : {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 3e38f, -3e38f, 1e-40f, -1e-40f}) s.push_back(v);
  const float width = p.hi_f - p.lo_f;
  std::uniform_real_distribution<float> wide(p.lo_f - 0.1f * width, p.hi_f + 0.1f * width);
  std::uniform_int_distribution<int32_t> edge(0, p.bins);
  std::uniform_int_distribution<int> ulps(-40, 40);
  while (s.size() < (size_t(1) << 20)) {
    s.push_back(wide(rng));
    // Near an edge, within a few dozen ulps: where the shortcut must hand over to the exact path.
    float v = static_cast<float>(bin_edge<EdgeKind::kF32>(p, edge(rng)));
    for (int u = ulps(rng); u != 0; u += u > 0 ? -1 : 1) v = std::nextafter(v, u > 0 ? INFINITY : -INFINITY);
    s.push_back(v);
  }
  std::shuffle(s.begin(), s.end(), rng);
  return s;
}

// Returns whether every candidate matched the CPU reference on every setup.
bool check_adversarial(int sms) {
  struct Setup {
    const char* name;
    int64_t bins;
    double first, last;
    bool narrow;
  };
  const Setup setups[] = {
      {"256 bins over [0, 1)", 256, 0.0, 1.0, false},
      {"3 bins over [0, 1) (inexact edges)", 3, 0.0, 1.0, false},
      {"1 bin over [0, 1)", 1, 0.0, 1.0, false},
      {"256 bins over [1000, 1001) (inexact x - lo)", 256, 1000.0, 1001.0, false},
      {"1000 bins over [-3.7, 11.3) (8 copies)", 1000, -3.7, 11.3, false},
      {"12000 bins over [-1, 1) (1 copy)", 12000, -1.0, 1.0, false},
      {"100 bins, range=None [-1.7f, 3.3f] (narrow)", 100, double(-1.7f), double(3.3f), true},
  };
  std::mt19937 rng(1234);
  bool all_ok = true;
  std::printf("\nadversarial data (edges, nextafter +-3, lo, hi, NaN, +-inf, out of range, near-edge random; "
              "2^20 samples, aligned and offset by one element) against the CPU reference.\nColumns, in order:");
  for (int c = 0; c < kNumCandidates; ++c) std::printf("%s %s", c == 0 ? "" : ";", kCandidates[c].name);
  std::printf("\n");
  for (const Setup& setup : setups) {
    const BinParams p = params_for(setup.bins, setup.first, setup.last, setup.narrow);
    const std::vector<float> h = adversarial_samples(p, rng);
    const int64_t n = static_cast<int64_t>(h.size());
    float* d = nullptr;
    unsigned long long* out = nullptr;
    CHECK(cudaMalloc(&d, sizeof(float) * n));
    CHECK(cudaMalloc(&out, sizeof(unsigned long long) * p.bins));
    CHECK(cudaMemcpy(d, h.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    long long undecided = 0;
    for (int view = 0; view < 2; ++view) {
      // view 1: x + 1, n - 3 samples: a misaligned start (head of 3) and a tail.
      const int64_t begin = view, count_n = view == 0 ? n : n - 3;
      std::vector<unsigned long long> ref(p.bins, 0);
      for (int64_t i = begin; i < begin + count_n; ++i) {
        const int32_t b = bin_of_sample<EdgeKind::kF32>(p, h[i]);
        if (b >= 0) ++ref[b];
        if (view == 0 && h[i] >= p.lo_f && h[i] <= p.hi_f) {
          const float fa = (h[i] - p.lo_f) * p.scale_f;
          const float frac = fa - std::floor(fa);
          undecided += !(fa < p.bins_f && frac > p.fast_margin_f && frac < 1.0f - p.fast_margin_f);
        }
      }
      std::printf("  %-46s %-8s", setup.name, view == 0 ? "aligned" : "offset 1");
      for (int c = 0; c < kNumCandidates; ++c) {
        if (c > 0 && !p.fast) {  // the library launches the float32 kernel only with the shortcut on
          std::printf(" skip");
          continue;
        }
        count(kCandidates[c], p, d + begin, count_n, out, sms);
        CHECK(cudaDeviceSynchronize());
        const bool ok = download(out, p.bins) == ref;
        all_ok = all_ok && ok;
        std::printf(" %s", ok ? "PASS" : "FAIL");
      }
      std::printf("\n");
    }
    std::printf("  %-46s fast=%d fast_margin=%.3g, %lld of %lld samples take the exact path\n", setup.name, p.fast,
                double(p.fast_margin_f), undecided, static_cast<long long>(n));
    CHECK(cudaFree(d));
    CHECK(cudaFree(out));
  }
  return all_ok;
}

// ---------------------------------------------------------------------------------------------
// Timing on 2^28 samples.

enum class Data { kUniform, kOneBin, kHalfOutOfRange, kAllOnEdges };

__device__ __forceinline__ uint32_t hash32(uint64_t i) {  // splitmix64 finaliser, low 32 bits
  uint64_t z = i + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return uint32_t(z ^ (z >> 31));
}

__global__ void fill(float* x, int64_t n, Data data) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint32_t h = hash32(uint64_t(i));
    const float u = float(h >> 8) * (1.0f / 16777216.0f);  // [0, 1), 24 random bits
    switch (data) {
      case Data::kUniform: x[i] = u; break;
      case Data::kOneBin: x[i] = 0.3f; break;
      case Data::kHalfOutOfRange: x[i] = 2.0f * u - 0.5f; break;       // [-0.5, 1.5)
      case Data::kAllOnEdges: x[i] = float(h % 257u) / 256.0f; break;  // every sample on an edge: exact path
    }
  }
}

// A read of the same bytes (16-byte loads, xor-folded so nothing is optimized away): the ceiling.
__global__ void read_only(const uint4* x, int64_t n_vec, unsigned* sink) {
  uint32_t acc = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n_vec; i += int64_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldg(x + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *sink = acc;
}

bool time_data(Data data, const char* label, float* x, int64_t n, int sms, void* cub_temp, size_t cub_temp_bytes,
               int* cub_counts, unsigned long long* ref_out, unsigned long long* out, unsigned* sink) {
  const BinParams p = params_for(256, 0.0, 1.0, false);
  fill<<<sms * 8, 256>>>(x, n, data);
  CHECK(cudaGetLastError());
  const double gb = double(n) * sizeof(float) / 1e9;

  const float read_ms = median_ms([&] { read_only<<<sms * 8, 256>>>(reinterpret_cast<const uint4*>(x), n / 4, sink); });
  const float cub_ms = median_ms([&] {
    CHECK(cub::DeviceHistogram::HistogramEven(cub_temp, cub_temp_bytes, x, cub_counts, 257, 0.0f, 1.0f, n));
  });
  std::printf("\n%s, 256 bins over [0, 1), n = 2^28 float32 (%.2f GB)\n", label, gb);
  std::printf("  %-46s %9s %8s %9s %5s %5s  %s\n", "config", "ms", "GB/s", "x CUB", "regs", "blk/SM", "check");
  std::printf("  %-46s %9.4f %8.0f %9s %5s %5s\n", "read-only ceiling (16-byte loads)", read_ms, gb / read_ms * 1e3, "",
              "", "");

  // CUB's bin rule (sample * 256 in float) agrees with numpy's for power-of-two bins over [0, 1).
  count(kCandidates[0], p, x, n, ref_out, sms);
  CHECK(cudaDeviceSynchronize());
  const std::vector<unsigned long long> ref = download(ref_out, p.bins);
  std::vector<int> cub_h(257);
  CHECK(cudaMemcpy(cub_h.data(), cub_counts, sizeof(int) * 256, cudaMemcpyDeviceToHost));
  bool cub_same = true;
  for (int b = 0; b < 256; ++b) cub_same = cub_same && static_cast<unsigned long long>(cub_h[b]) == ref[b];
  std::printf("  %-46s %9.4f %8.0f %9.3f %5s %5s  %s\n", "cub::DeviceHistogram::HistogramEven", cub_ms,
              gb / cub_ms * 1e3, 1.0, "", "", cub_same ? "same counts" : "other counts (CUB's bin rule)");

  bool all_ok = true;
  for (int c = 0; c < kNumCandidates; ++c) {
    const Candidate& cand = kCandidates[c];
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, cand.kernel));
    const int32_t copies = shared_copies(Counting::kPrivatized, p.bins);
    const int resident = resident_blocks_per_sm(cand.kernel, kHistogramThreads, cand.shared_bytes(p.bins, copies));
    count(cand, p, x, n, out, sms);
    CHECK(cudaDeviceSynchronize());
    const bool ok = download(out, p.bins) == ref;
    all_ok = all_ok && ok;
    const float ms = median_ms([&] { count(cand, p, x, n, out, sms); });
    std::printf("  %-46s %9.4f %8.0f %9.3f %5d %5d  %s%s\n", cand.name, ms, gb / ms * 1e3, cub_ms / ms, attr.numRegs,
                resident, c == 0 ? "reference" : ok ? "PASS" : "FAIL", cand.launched ? "  <- library" : "");
  }
  return all_ok;
}

int main() {
  int device = 0, sms = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("%s, %d SMs, L2 %d MiB\n", prop.name, sms, prop.l2CacheSize >> 20);

  bool ok = check_adversarial(sms);

  const int64_t n = int64_t(1) << 28;
  float* x = nullptr;
  int* cub_counts = nullptr;
  unsigned long long *ref_out = nullptr, *out = nullptr;
  unsigned* sink = nullptr;
  CHECK(cudaMalloc(&x, sizeof(float) * n));
  CHECK(cudaMalloc(&cub_counts, sizeof(int) * 257));
  CHECK(cudaMalloc(&ref_out, sizeof(unsigned long long) * 256));
  CHECK(cudaMalloc(&out, sizeof(unsigned long long) * 256));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  size_t cub_temp_bytes = 0;
  CHECK(cub::DeviceHistogram::HistogramEven(nullptr, cub_temp_bytes, x, cub_counts, 257, 0.0f, 1.0f, n));
  void* cub_temp = nullptr;
  CHECK(cudaMalloc(&cub_temp, cub_temp_bytes));

  const std::pair<Data, const char*> data_sets[] = {
      {Data::kUniform, "uniform [0, 1)"},
      {Data::kOneBin, "one bin (all 0.3)"},
      {Data::kHalfOutOfRange, "uniform [-0.5, 1.5): half out of range"},
      {Data::kAllOnEdges, "every sample on an edge (exact path for all)"},
  };
  for (const auto& [data, label] : data_sets) {
    ok = time_data(data, label, x, n, sms, cub_temp, cub_temp_bytes, cub_counts, ref_out, out, sink) && ok;
  }

  CHECK(cudaFree(x));
  CHECK(cudaFree(cub_counts));
  CHECK(cudaFree(ref_out));
  CHECK(cudaFree(out));
  CHECK(cudaFree(sink));
  CHECK(cudaFree(cub_temp));
  std::printf("\n%s\n", ok ? "ALL PASS" : "SOME FAIL");
  return ok ? 0 : 1;
}
