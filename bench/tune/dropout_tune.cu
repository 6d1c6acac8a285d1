// A/B of the bias_dropout_add kernel (docs/norms.md, "bias_dropout_add"; issue 5: bfloat16 ran at
// 76 % of copy where float32 reached 92 %): outputs rounded element by element in software
// ("software", what the library ran before) against fp16 / bf16 outputs rounded in pairs on the
// hardware ("pair": round_to_vec16, what it runs now), for float32 and bfloat16, 16384 x 8192 and
// 65536 x 4096, p = 0.1, with a bias, next to a 16-byte copy kernel and
// cudaMemcpy ("%copy" = best copy time / kernel time x 1.5: x and residual read, out written,
// against the copy's one read and one write). The library's kernel is checked against a host
// reference of three rows (the same Philox stream, philox.hpp; max |diff| / max |ref| within one
// rounding of T), the pair-rounded one against it (identical values: "diff 0").
// H200 run (session 10 run 4): pair 81.0-83.5 % of copy against 77.5-79.3 % for bfloat16; a
// candidate taking two steps' vectors per thread step (more loads in flight) ran at 49-52 % (57
// registers: half the resident threads) and is gone. "no draws" runs the library kernel with
// training off (the same loads and stores, no Philox): the ceiling of the memory pattern. H100
// (session 14 run 2): draws-first kernel (the library before) pair 80.1-80.9 %, no draws 90.6-91.6 %;
// loads issued before the draws (the library now) pair 82.0-83.0 %, no draws 91.9-92.5 %.
// Each row: median of 30 timed launches (CUDA events) after 3 warm-ups; the sweep runs twice, each
// time with one, two and four waves of the kernel's occupancy and with a block per 256 steps (the
// library since session 17: dropout_device.cu). H200 (session 15 run 7, then 8 blocks per SM against
// one wave): bfloat16 pair 75.7-76.8 % with 8 blocks per SM (37 registers hold 6: a second wave of a
// third), 91.7-93.4 % in one wave. H100 (session 17 run 13): bfloat16 pair 88.9-91.2 % in one wave,
// 102.2-107.4 % with a block per 256 steps; float32 95.8-97.5 -> 101.7-102.5 %.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/dropout_tune.cu -o /tmp/dropout_tune && /tmp/dropout_tune
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gpuprims/norms/dropout.cuh"

#include "norms_tune_data.cuh"
#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::norms;

int blocks_per_sm = 0;  // the grid: this many blocks per SM, 0 = one wave of the kernel's occupancy (the library)
int waves = 1;          // that many waves of it; 0: no cap (a block per 256 steps)

struct Case {
  int64_t rows, len;
  void *x, *r, *b, *out_ref, *out;
  unsigned* stats;
  float copy_ms;
  int sms;
};

DropoutParams params_for(const Case& c, void* out) {
  DropoutParams p;
  p.x = c.x;
  p.bias = c.b;
  p.residual = c.r;
  p.out = out;
  for (RowLayout* l : {&p.x_layout, &p.residual_layout}) {
    l->num_rows = c.rows;
    l->row_len = c.len;
    l->outer_ndim = 1;
    l->outer_sizes[0] = c.rows;
    l->x_outer_strides[0] = c.len;
    l->y_outer_strides[0] = c.len;
  }
  p.row_divmod = FastDivmod64(c.len);
  p.total = c.rows * c.len;
  p.seed = 1234;
  p.offset = 99;
  const double drop = 0.1;
  p.threshold = uint32_t(drop * 4294967296.0);
  p.scale = 1.0 / (1.0 - drop);
  p.vec_ok = true;
  return p;
}

// max |ref - out| / max |ref| over rows 0, rows / 2, rows - 1 against the host computation.
template <class T>
double host_check(const Case& c, const DropoutParams& p) {
  double diff = 0, mag = 0;
  std::vector<T> x(c.len), r(c.len), b(c.len), y(c.len);
  CHECK(cudaMemcpy(b.data(), c.b, c.len * sizeof(T), cudaMemcpyDeviceToHost));
  for (int64_t row : {int64_t(0), c.rows / 2, c.rows - 1}) {
    const int64_t at = row * c.len;
    CHECK(cudaMemcpy(x.data(), static_cast<const T*>(c.x) + at, c.len * sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(r.data(), static_cast<const T*>(c.r) + at, c.len * sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(y.data(), static_cast<const T*>(c.out_ref) + at, c.len * sizeof(T), cudaMemcpyDeviceToHost));
    for (int64_t j = 0; j < c.len; j += 4) {
      float f[4];
      dropout_factors<float, 4>(p, at + j, f);
      for (int k = 0; k < 4; ++k) {
        const double ref = double(cast_value<float>(r[j + k])) +
                           (double(cast_value<float>(x[j + k])) + cast_value<float>(b[j + k])) * f[k];
        diff = std::max(diff, std::fabs(ref - cast_value<float>(y[j + k])));
        mag = std::max(mag, std::fabs(ref));
      }
    }
  }
  return diff / mag;
}

template <class T, bool kPair>
void run_config(const Case& c, const char* label, bool is_library, bool training = true) {
  const auto kernel = bias_dropout_add_kernel<T, true, kPair>;
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  const int64_t steps = (c.rows * c.len + dropout_step(Vec16<T>::kLanes) - 1) / dropout_step(Vec16<T>::kLanes);
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, 256, 0));
  const int64_t cap = int64_t(c.sms) * (blocks_per_sm ? blocks_per_sm : resident) * waves;
  const int64_t blocks = waves == 0 ? (steps + 255) / 256 : std::min<int64_t>((steps + 255) / 256, cap);
  DropoutParams p = params_for(c, is_library ? c.out_ref : c.out);
  p.training = training;
  char running[128];
  snprintf(running, sizeof running, "bias_dropout_add %s %lldx%lld %s", dtype_label<T>(), (long long)c.rows,
           (long long)c.len, label);
  tune::running = running;
  CHECK(cudaMemset(p.out, 0xff, c.rows * c.len * sizeof(T)));  // NaN: a missed element shows
  kernel<<<unsigned(blocks), 256>>>(p);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const float ms = tune::median_ms([&] { kernel<<<unsigned(blocks), 256>>>(p); });
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  char verdict[96];
  if (!training) {
    snprintf(verdict, sizeof verdict, "no draws (ceiling of the memory pattern), not checked");
  } else if (is_library) {
    const double rel = host_check<T>(c, p);
    const double tol = sizeof(T) == 2 ? 1.0 / 128 : 1e-6;
    snprintf(verdict, sizeof verdict, "vs host (3 rows) %.2e %s", rel, rel <= tol ? "PASS" : "FAIL");
  } else {
    const BufferDiff d = compare_buffers<T>(c.out, c.out_ref, c.rows * c.len, c.stats, c.sms);
    const bool pass = d.abs == 0 && d.a_nans == 0 && d.b_nans == 0;
    snprintf(verdict, sizeof verdict, "vs software diff %.1e nan=%u/%u %s", d.abs, d.a_nans, d.b_nans, pass ? "PASS" : "FAIL");
  }
  tune::running = "between cases";
  const double bytes = 3.0 * c.rows * c.len * sizeof(T);
  printf("bias_dropout_add %-8s %5lldx%-5lld %-10s %3d regs %4d B spill %6lld blocks  %.4f ms %6.0f GB/s %5.1f %%copy  %s\n",
         dtype_label<T>(), (long long)c.rows, (long long)c.len, label, attr.numRegs, int(attr.localSizeBytes),
         (long long)blocks, ms, bytes / ms / 1e6, 150.0 * c.copy_ms / ms, verdict);
}

template <class T>
void run_dtype(Case c) {
  const int64_t n = c.rows * c.len;
  tune::running = "data and copy";
  fill_random<T><<<c.sms * 8, 256>>>(static_cast<T*>(c.x), n, 1, -4.0f, 4.0f);
  fill_random<T><<<c.sms * 8, 256>>>(static_cast<T*>(c.r), n, 4, -4.0f, 4.0f);
  fill_random<T><<<c.sms, 256>>>(static_cast<T*>(c.b), c.len, 3, -1.0f, 1.0f);
  CHECK(cudaGetLastError());
  const int64_t bytes = n * sizeof(T);
  const float kernel_ms = tune::median_ms([&] {
    copy_kernel<<<c.sms * 8, 256>>>(static_cast<const uint4*>(c.x), static_cast<uint4*>(c.out), bytes / 16);
  });
  const float memcpy_ms = tune::median_ms([&] { CHECK(cudaMemcpyAsync(c.out, c.x, bytes, cudaMemcpyDeviceToDevice)); });
  CHECK(cudaDeviceSynchronize());
  c.copy_ms = std::min(kernel_ms, memcpy_ms);
  printf("\ncopy %s %lldx%lld: ceiling %.0f GB/s\n", dtype_label<T>(), (long long)c.rows, (long long)c.len,
         2.0 * bytes / c.copy_ms / 1e6);
  run_config<T, false>(c, "software", true);
  if constexpr (sizeof(T) == 2) run_config<T, true>(c, "pair", false);
  run_config<T, sizeof(T) == 2>(c, "no draws", false, false);
}

int main() {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int64_t max_bytes = (int64_t(1) << 28) * 4;  // 65536 x 4096 float32
  Case c{};
  c.sms = sms;
  for (void** p : {&c.x, &c.r, &c.out_ref, &c.out}) CHECK(cudaMalloc(p, max_bytes));
  CHECK(cudaMalloc(&c.b, 8192 * 4));
  CHECK(cudaMalloc(&c.stats, 16));
  for (int pass = 1; pass <= 8; ++pass) {
    const int w[4] = {1, 2, 4, 0};
    waves = w[(pass - 1) % 4];
    printf("\n=== pass %d: %d waves of the occupancy (0: a block per 256 steps) ===\n", (pass + 3) / 4, waves);
    for (int64_t len : {int64_t(8192), int64_t(4096)}) {
      c.rows = (int64_t(1) << 27) / len * (len == 4096 ? 2 : 1);  // 16384 x 8192, 65536 x 4096
      c.len = len;
      run_dtype<float>(c);
      run_dtype<bfloat16_t>(c);
    }
  }
  for (void* p : {c.x, c.r, c.out_ref, c.out, c.b}) CHECK(cudaFree(p));
  CHECK(cudaFree(c.stats));
  return 0;
}
