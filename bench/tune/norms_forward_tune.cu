// A/B of the row_on_chip forward kernels (docs/norms.md, "Performance step 2"): the configuration
// the library ran before (ClassicRowOnChip) against candidates that prefetch the next row during
// the current row's reductions (kPrefetch, persistent grid), trim the per-element work (kLean) and
// halve the values per thread, for softmax / log_softmax (softmax kind) and layer_norm / rms_norm
// (norm kind), float32 and bfloat16, 16384 x 8192 and 65536 x 4096 (512 MiB and 1 GiB of fp32
// per array, 8 and 17 times the H200's 60 MiB L2), next to a 16-byte copy kernel and cudaMemcpy of
// the same bytes (the ceiling: "%copy" = best copy time / kernel time, bytes = x read + y written).
// Every candidate's output is compared with the classic kernel's (max |diff| / max |y|: PASS when
// within 1e-5 for float32, 2^-7 for bfloat16, i.e. about one bf16 rounding step of the largest
// output, and no NaN), and the classic kernel with a float64 host reference on three rows.
// Each row: median of 30 timed launches (CUDA events) after 3 warm-ups; the whole sweep runs
// twice, so differences smaller than the spread between the passes are noise.
// The library's tuned tiles (BlockTile in cpp/src/norms/row_on_chip_launch.cuh) are the rows
// "lean x32" (the classic tile and register bound with kLean); "classic x32" is what the library
// ran in runs 7-15. A crash names the case it happened in (tune::running).
// Step 3 adds, for the bfloat16 norm kind only, "lean x32 r64" and the "packed" rows
// (PackedRowTile: the row kept as bf16 vectors, 16 registers instead of 32; see run_candidates).
// ptxas (CUDA 13.0, sm_90a): lean x32 80 registers (three 256-thread blocks per SM), lean x32 r64
// 64 with 16 bytes of spill, packed x32 64 with none under the classic bound, packed x32 r48 48
// with 112 bytes of spill.
// Build and run on the GPU machine (about 1 minute of nvcc, well under 90 s of run time):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/norms_forward_tune.cu -o /tmp/norms_tune && /tmp/norms_tune
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gpuprims/norms/row_on_chip.cuh"
#include "gpuprims/util/occupancy.cuh"

#include "norms_tune_data.cuh"
#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::norms;

// ------------------------------------------------------------------------------------------------
// Data, copy ceiling, comparison.

template <class T>
float to_host_float(T v) {
  return cast_value<float>(v);
}

// ------------------------------------------------------------------------------------------------
// One problem: rows x len of T, the op, its buffers.

struct Problem {
  const char* op;
  RowKind kind;
  bool log;     // log_softmax
  bool center;  // layer_norm (false: rms_norm)
  bool weight, bias;
  int64_t rows, len;
  void* x;
  void* y_ref;  // the classic kernel's output
  void* y;      // a candidate's
  void* w;
  void* b;
  unsigned* stats;
  float copy_ms;
  int sms;
};

NormParams params_for(const Problem& pr, void* y) {
  NormParams p;
  p.x = pr.x;
  p.y = y;
  p.weight = pr.weight ? pr.w : nullptr;
  p.bias = pr.bias ? pr.b : nullptr;
  p.layout.num_rows = pr.rows;
  p.layout.row_len = pr.len;
  p.layout.outer_ndim = 1;
  p.layout.outer_sizes[0] = pr.rows;
  p.layout.x_outer_strides[0] = pr.len;
  p.layout.y_outer_strides[0] = pr.len;
  p.eps = 1e-5;
  p.log = pr.log;
  p.center = pr.center;
  p.vec_ok = true;
  return p;
}

// float64 reference of one row; returns max |ref - got| / max |ref| over the row.
template <class T>
double host_check_row(const Problem& pr, int64_t row) {
  const int64_t n = pr.len;
  std::vector<T> x(n), y(n), w(n), b(n);
  CHECK(cudaMemcpy(x.data(), static_cast<const T*>(pr.x) + row * n, n * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(y.data(), static_cast<const T*>(pr.y_ref) + row * n, n * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(w.data(), pr.w, n * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(b.data(), pr.b, n * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<double> ref(n);
  if (pr.kind == RowKind::kSoftmax) {
    double m = -INFINITY, s = 0;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, double(to_host_float(x[i])));
    for (int64_t i = 0; i < n; ++i) s += std::exp(double(to_host_float(x[i])) - m);
    for (int64_t i = 0; i < n; ++i) {
      const double d = double(to_host_float(x[i])) - m;
      ref[i] = pr.log ? d - std::log(s) : std::exp(d) / s;
    }
  } else {
    double mean = 0, m2 = 0;
    if (pr.center) {
      for (int64_t i = 0; i < n; ++i) mean += to_host_float(x[i]);
      mean /= n;
    }
    for (int64_t i = 0; i < n; ++i) m2 += (to_host_float(x[i]) - mean) * (to_host_float(x[i]) - mean);
    const double rstd = 1.0 / std::sqrt(m2 / n + 1e-5);
    for (int64_t i = 0; i < n; ++i) {
      ref[i] = (to_host_float(x[i]) - mean) * rstd * (pr.weight ? to_host_float(w[i]) : 1.0) +
               (pr.bias ? to_host_float(b[i]) : 0.0);
    }
  }
  double diff = 0, mag = 0;
  for (int64_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::fabs(ref[i] - double(to_host_float(y[i]))));
    mag = std::max(mag, std::fabs(ref[i]));
  }
  return diff / mag;
}

// Times one configuration on `pr` and prints its row; `is_classic` also writes y_ref.
template <class T, RowKind kKind, class Cfg>
void run_config(const Problem& pr, const char* label, bool is_classic) {
  const auto kernel = row_on_chip_kernel<T, kKind, Cfg, true, false>;
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  const int resident = resident_blocks_per_sm(kernel, Cfg::kThreads);
  const int64_t blocks =
      row_on_chip_blocks<Cfg>(pr.rows, row_on_chip_prefetches<Cfg, true, false>, resident, pr.sms);
  NormParams p = params_for(pr, is_classic ? pr.y_ref : pr.y);
  char running[160];
  snprintf(running, sizeof running, "%s %s %lldx%lld %s", pr.op, dtype_label<T>(), (long long)pr.rows,
           (long long)pr.len, label);
  tune::running = running;
  CHECK(cudaMemset(p.y, 0xff, pr.rows * pr.len * sizeof(T)));  // NaN everywhere: a missed element shows
  kernel<<<unsigned(blocks), Cfg::kThreads>>>(p);  // once alone, so a fault is caught here
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const float ms = tune::median_ms([&] { kernel<<<unsigned(blocks), Cfg::kThreads>>>(p); });
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const double bytes = 2.0 * pr.rows * pr.len * sizeof(T);
  char verdict[96];
  if (is_classic) {
    double worst = 0;
    for (int64_t r : {int64_t(0), pr.rows / 2, pr.rows - 1}) worst = std::max(worst, host_check_row<T>(pr, r));
    const double tol = sizeof(T) == 2 ? 1.0 / 128 : 1e-5;
    snprintf(verdict, sizeof verdict, "vs fp64 (3 rows) %.2e %s", worst, worst <= tol ? "PASS" : "FAIL");
  } else {
    CHECK(cudaMemset(pr.stats, 0, 4 * sizeof(unsigned)));
    compare_kernel<T><<<pr.sms * 8, 256>>>(static_cast<const T*>(pr.y), static_cast<const T*>(pr.y_ref),
                                           pr.rows * pr.len, pr.stats);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    unsigned s[4];
    CHECK(cudaMemcpy(s, pr.stats, sizeof s, cudaMemcpyDeviceToHost));
    float diff, mag;
    memcpy(&diff, &s[0], 4);
    memcpy(&mag, &s[1], 4);
    const double rel = mag > 0 ? diff / mag : diff;
    const double tol = sizeof(T) == 2 ? 1.0 / 128 : 1e-5;
    const bool pass = rel <= tol && s[2] == 0 && s[3] == 0;
    snprintf(verdict, sizeof verdict, "vs classic %.2e nan=%u/%u %s", rel, s[2], s[3], pass ? "PASS" : "FAIL");
  }
  tune::running = "between cases";
  printf("%-11s %-8s %5lldx%-5lld %-24s %3d regs %4d B spill %2d blk/SM %6lld blocks  %.4f ms %6.0f GB/s "
         "%5.1f %%copy  %s\n",
         pr.op, dtype_label<T>(), (long long)pr.rows, (long long)pr.len, label, attr.numRegs,
         int(attr.localSizeBytes), resident, (long long)blocks, ms, bytes / ms / 1e6, 100.0 * pr.copy_ms / ms, verdict);
}

// The candidates for one (dtype, kind, row length). "x32": kThreads threads hold a row of len
// elements with 32 values each (the classic 128- / 256-thread tiles, full at 4096 / 8192
// elements); "x16": twice the threads with 16 values each. "rN": the register bound
// (__launch_bounds__' min blocks, as resident threads per SM: r64 = 1024 threads, r128 = 512).
template <class T, RowKind kKind, int kLen>
void run_candidates(const Problem& pr) {
  constexpr int kLanes = Vec16<T>::kLanes;
  constexpr int kThreads = kLen / 32, kVecs = 32 / kLanes;
  constexpr int kWide = 2 * kThreads, kHalfVecs = 16 / kLanes;
  constexpr int kMb = min_blocks_for(kThreads, true, sizeof(T), kKind);  // the classic bound
  run_config<T, kKind, ClassicRowOnChip<T, kKind, kThreads, 1, kVecs>>(pr, "classic x32", true);
  run_config<T, kKind, RowOnChipConfig<kThreads, 1, kVecs, kMb, false, true>>(pr, "lean x32", false);
  // Prefetching 32 values holds a second tile (fp32) or half of one (bf16, packed): r128.
  constexpr int kR128 = 512 / kThreads;
  run_config<T, kKind, RowOnChipConfig<kThreads, 1, kVecs, kR128, true, false>>(pr, "prefetch x32 r128", false);
  run_config<T, kKind, RowOnChipConfig<kThreads, 1, kVecs, kR128, true, true>>(pr, "prefetch+lean x32 r128", false);
  constexpr int kR64 = 1024 / kWide;
  run_config<T, kKind, RowOnChipConfig<kWide, 1, kHalfVecs, kR64, false, true>>(pr, "lean x16 r64", false);
  run_config<T, kKind, RowOnChipConfig<kWide, 1, kHalfVecs, kR64, true, true>>(pr, "prefetch+lean x16 r64", false);
  if constexpr (kKind == RowKind::kNorm && sizeof(T) == 2) {
    // Step 3 (docs/norms.md): the 2-byte norm kind at the softmax kind's occupancy. "r64" here is
    // 1024 resident threads of the x32 tile (four 256-thread blocks, eight of 128): the lean float
    // tile forced under it, and the packed tile (PackedRowTile) under the classic bound, under r64
    // and under r48 (1280 threads: five / ten blocks, 48 registers).
    constexpr int kX32R64 = 1024 / kThreads, kX32R48 = 1280 / kThreads;
    run_config<T, kKind, RowOnChipConfig<kThreads, 1, kVecs, kX32R64, false, true>>(pr, "lean x32 r64", false);
    run_config<T, kKind, RowOnChipConfig<kThreads, 1, kVecs, kMb, false, true, true>>(pr, "packed x32", false);
    run_config<T, kKind, RowOnChipConfig<kThreads, 1, kVecs, kX32R64, false, true, true>>(pr, "packed x32 r64", false);
    run_config<T, kKind, RowOnChipConfig<kThreads, 1, kVecs, kX32R48, false, true, true>>(pr, "packed x32 r48", false);
  }
}

template <class T>
void run_dtype(int64_t rows, int64_t len, void* x, void* y_ref, void* y, void* w, void* b, unsigned* stats, int sms) {
  const int64_t n = rows * len;
  char running[96];
  snprintf(running, sizeof running, "data and copy, %s %lldx%lld", dtype_label<T>(), (long long)rows, (long long)len);
  tune::running = running;
  fill_random<T><<<sms * 8, 256>>>(static_cast<T*>(x), n, 1, -4.0f, 4.0f);
  fill_random<T><<<sms, 256>>>(static_cast<T*>(w), len, 2, 0.5f, 1.5f);
  fill_random<T><<<sms, 256>>>(static_cast<T*>(b), len, 3, -1.0f, 1.0f);
  CHECK(cudaGetLastError());
  const int64_t bytes = n * sizeof(T);
  const float kernel_ms = tune::median_ms([&] {
    copy_kernel<<<sms * 8, 256>>>(static_cast<const uint4*>(x), static_cast<uint4*>(y), bytes / 16);
  });
  const float memcpy_ms = tune::median_ms([&] { CHECK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice)); });
  CHECK(cudaDeviceSynchronize());
  const float copy_ms = std::min(kernel_ms, memcpy_ms);
  printf("\ncopy %s %lldx%lld: kernel %.4f ms (%.0f GB/s), cudaMemcpy %.4f ms (%.0f GB/s); ceiling %.0f GB/s\n",
         dtype_label<T>(), (long long)rows, (long long)len, kernel_ms, 2.0 * bytes / kernel_ms / 1e6, memcpy_ms,
         2.0 * bytes / memcpy_ms / 1e6, 2.0 * bytes / copy_ms / 1e6);
  const Problem base{nullptr, RowKind::kSoftmax, false, true, false, false, rows, len, x, y_ref, y, w, b, stats,
                     copy_ms, sms};
  Problem softmax = base, log_softmax = base, layer_norm = base, rms_norm = base;
  softmax.op = "softmax";
  log_softmax.op = "log_softmax";
  log_softmax.log = true;
  layer_norm.op = "layer_norm";
  layer_norm.kind = RowKind::kNorm;
  layer_norm.weight = layer_norm.bias = true;
  rms_norm.op = "rms_norm";
  rms_norm.kind = RowKind::kNorm;
  rms_norm.center = false;
  rms_norm.weight = true;
  for (const Problem* pr : {&softmax, &log_softmax, &layer_norm, &rms_norm}) {
    if (len == 8192) {
      if (pr->kind == RowKind::kSoftmax) run_candidates<T, RowKind::kSoftmax, 8192>(*pr);
      else run_candidates<T, RowKind::kNorm, 8192>(*pr);
    } else {
      if (pr->kind == RowKind::kSoftmax) run_candidates<T, RowKind::kSoftmax, 4096>(*pr);
      else run_candidates<T, RowKind::kNorm, 4096>(*pr);
    }
  }
}

int main() {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs, L2 %d MiB\n", prop.name, sms, prop.l2CacheSize >> 20);
  const int64_t max_bytes = (int64_t(1) << 28) * 4;  // 65536 x 4096 float32 (twice 16384 x 8192)
  void *x, *y_ref, *y, *w, *b;
  unsigned* stats;
  CHECK(cudaMalloc(&x, max_bytes));
  CHECK(cudaMalloc(&y_ref, max_bytes));
  CHECK(cudaMalloc(&y, max_bytes));
  CHECK(cudaMalloc(&w, 8192 * 4));
  CHECK(cudaMalloc(&b, 8192 * 4));
  CHECK(cudaMalloc(&stats, 16));
  for (int pass = 1; pass <= 2; ++pass) {
    printf("\n=== pass %d ===\n", pass);
    run_dtype<float>(16384, 8192, x, y_ref, y, w, b, stats, sms);
    run_dtype<float>(65536, 4096, x, y_ref, y, w, b, stats, sms);
    run_dtype<bfloat16_t>(16384, 8192, x, y_ref, y, w, b, stats, sms);
    run_dtype<bfloat16_t>(65536, 4096, x, y_ref, y, w, b, stats, sms);
  }
  CHECK(cudaFree(x));
  CHECK(cudaFree(y_ref));
  CHECK(cudaFree(y));
  CHECK(cudaFree(w));
  CHECK(cudaFree(b));
  CHECK(cudaFree(stats));
  return 0;
}
