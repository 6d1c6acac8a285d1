// A/B of the backward row_on_chip kernels (docs/norms.md, "Backward performance"): row_backward_kernel
// with the tiles of variant_backward_row_on_chip.cu ("current", the reference of every other row),
// row_backward_lean_kernel as the library configures it today ("library (lean)"), and the staged
// kernel (row_backward_staged.cuh: dy and the saved row copied by cp.async into shared-memory
// stages kStages - 1 rows ahead, column sums and weight in registers) over values per thread,
// stages and register bounds, plus (softmax kind) the lean kernel with a block per row, for
// softmax_backward / log_softmax_backward (softmax kind) and
// layer_norm_backward / rms_norm_backward (norm kind), float32 and bfloat16, 16384 x 8192 and
// 65536 x 4096 (512 MiB and 1 GiB of fp32 per array), next to a 16-byte copy kernel and
// cudaMemcpy of one array (the ceiling).
// Bytes moved: dy and the saved row (y or x) read, dx written: three arrays, against the copy's
// two, so "%copy" = (3 * array bytes / kernel time) / (2 * array bytes / best copy time); the
// norm kind's time includes the column-sum kernels that turn the partial rows into dweight (and
// dbias for layer_norm), as the library runs them.
// Every row's dx is checked against a float64 host reference on three rows (max |diff| / max
// |ref|); every candidate's dx, dweight and dbias are also compared with the current kernel's on
// every element (PASS when within 1e-5 for float32, 2^-7 for bfloat16, about one bf16 rounding
// step of the largest value, and no NaN on either side).
// Each row: median of 30 timed launches (CUDA events) after 3 warm-ups; the whole sweep runs
// twice, so differences smaller than the spread between the passes are noise. A crash names the
// case it happened in (tune::running).
// torch's figures for the same cases, on the same machine: bench/tune/norms_backward_torch.py.
// Build and run on the GPU machine (about 1-2 minutes of nvcc, well under 90 s of run time):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/norms_backward_tune.cu -o /tmp/norms_bwd_tune && /tmp/norms_bwd_tune
// (`/tmp/norms_bwd_tune softmax`: softmax_backward and log_softmax_backward alone.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gpuprims/norms/row_backward.cuh"
#include "gpuprims/norms/row_backward_lean.cuh"
#include "gpuprims/norms/row_backward_staged.cuh"
#include "gpuprims/util/occupancy.cuh"

#include "norms_tune_data.cuh"
#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::norms;

// ------------------------------------------------------------------------------------------------
// Data, copy ceiling, comparison.

// ------------------------------------------------------------------------------------------------
// One problem: rows x len of T, the op, its buffers. The "_ref" outputs are the current kernel's.

struct Problem {
  const char* op;
  RowKind kind;
  bool log;     // log_softmax
  bool center;  // layer_norm (false: rms_norm)
  int64_t rows, len;
  void* saved;  // y (softmax kind) or x (norm kind)
  void* dy;
  void* dx_ref;
  void* dx;
  void* weight;
  float* mean;  // per row, float (acc_t of both dtypes here)
  float* rstd;
  void* partial;  // dweight then dbias partial rows
  size_t partial_bytes;
  void* dweight_ref;
  void* dweight;
  void* dbias_ref;
  void* dbias;
  unsigned* stats;
  float copy_ms;
  int sms;
};

NormBackwardParams params_for(const Problem& pr, void* dx) {
  NormBackwardParams p;
  p.dy = pr.dy;
  p.saved = pr.saved;
  p.dx = dx;
  p.weight = pr.kind == RowKind::kNorm ? pr.weight : nullptr;
  p.mean = pr.kind == RowKind::kNorm && pr.center ? pr.mean : nullptr;
  p.rstd = pr.rstd;
  for (RowLayout* l : {&p.dy_layout, &p.saved_layout}) {
    l->num_rows = pr.rows;
    l->row_len = pr.len;
    l->outer_ndim = 1;
    l->outer_sizes[0] = pr.rows;
    l->x_outer_strides[0] = pr.len;
    l->y_outer_strides[0] = pr.len;
  }
  p.log = pr.log;
  p.center = pr.center;
  p.vec_ok = true;
  return p;
}

// float64 reference of dx on one row (from the inputs as stored); returns max |ref - got| / max |ref|.
template <class T>
double host_check_row(const Problem& pr, const void* dx_dev, int64_t row) {
  const int64_t n = pr.len;
  std::vector<T> s(n), dy(n), dx(n), w(n);
  CHECK(cudaMemcpy(s.data(), static_cast<const T*>(pr.saved) + row * n, n * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(dy.data(), static_cast<const T*>(pr.dy) + row * n, n * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(dx.data(), static_cast<const T*>(dx_dev) + row * n, n * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(w.data(), pr.weight, n * sizeof(T), cudaMemcpyDeviceToHost));
  float mean = 0, rstd = 0;
  if (pr.center) CHECK(cudaMemcpy(&mean, pr.mean + row, 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&rstd, pr.rstd + row, 4, cudaMemcpyDeviceToHost));
  const auto f = [](T v) { return double(cast_value<float>(v)); };
  std::vector<double> ref(n);
  if (pr.kind == RowKind::kSoftmax) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += pr.log ? f(dy[i]) : f(dy[i]) * f(s[i]);
    for (int64_t i = 0; i < n; ++i) ref[i] = pr.log ? f(dy[i]) - std::exp(f(s[i])) * sum : f(s[i]) * (f(dy[i]) - sum);
  } else {
    double mg = 0, mgx = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double xhat = (f(s[i]) - mean) * rstd, g = f(dy[i]) * f(w[i]);
      mg += g;
      mgx += g * xhat;
    }
    mg = pr.center ? mg / n : 0;
    mgx /= n;
    for (int64_t i = 0; i < n; ++i) {
      const double xhat = (f(s[i]) - mean) * rstd;
      ref[i] = rstd * ((f(dy[i]) * f(w[i]) - mg) - xhat * mgx);
    }
  }
  double diff = 0, mag = 0;
  for (int64_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::fabs(ref[i] - f(dx[i])));
    mag = std::max(mag, std::fabs(ref[i]));
  }
  return diff / mag;
}

// max |a - b| / max |b| and the NaN counts of a and b over n elements, as "rel nan=a/b"; false
// when over tol or any NaN.
template <class T>
bool compare(const Problem& pr, const void* a, const void* b, int64_t n, char* out, size_t out_size) {
  const BufferDiff d = compare_buffers<T>(a, b, n, pr.stats, pr.sms);
  const double tol = sizeof(T) == 2 ? 1.0 / 128 : 1e-5;
  snprintf(out, out_size, "%.2e nan=%u/%u", d.rel, d.a_nans, d.b_nans);
  return d.rel <= tol && d.a_nans == 0 && d.b_nans == 0;
}

// Which kernel a row times: row_backward_kernel<T, kKind, TPR, RPB, Vecs, true> (the reference
// for every other row), row_backward_lean_kernel<T, kKind, Cfg> or row_backward_staged_kernel<T,
// kKind, Cfg>.
enum class Kernel { kCurrent, kLean, kStaged };

template <class T, RowKind kKind, class Cfg, Kernel kKernel>
const void* kernel_of() {
  if constexpr (kKernel == Kernel::kCurrent) {
    return reinterpret_cast<const void*>(
        &row_backward_kernel<T, kKind, Cfg::kThreadsPerRow, Cfg::kRowsPerBlock, Cfg::kVecs, true>);
  } else if constexpr (kKernel == Kernel::kLean) {
    return reinterpret_cast<const void*>(&row_backward_lean_kernel<T, kKind, Cfg>);
  } else {
    return reinterpret_cast<const void*>(&row_backward_staged_kernel<T, kKind, Cfg>);
  }
}

// One kernel, timed with its column sums. Every row's dx is checked against float64 on three rows;
// every row but the current kernel's is also compared with the current kernel's dx, dweight and
// dbias on every element.
// per_row_grid (softmax kind only: no partial rows): one block per row group, as many blocks as
// rows, instead of one wave of resident blocks looping over the rows.
template <class T, RowKind kKind, class Cfg, Kernel kKernel>
void run_config(const Problem& pr, const char* label, bool per_row_grid = false) {
  using Acc = acc_t<T>;
  constexpr bool kCurrent = kKernel == Kernel::kCurrent;
  const void* kernel = kernel_of<T, kKind, Cfg, kKernel>();
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  size_t smem = 0;
  if constexpr (kKernel == Kernel::kLean) smem = backward_lean_shared_bytes<Acc, Cfg>(kKind, pr.len, true, pr.center);
  if constexpr (kKernel == Kernel::kStaged) smem = backward_staged_shared_bytes<T, Cfg>(pr.len);
  if (smem > 0) CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, Cfg::kThreads, smem));
  if (resident == 0) {
    printf("%-20s %-8s %5lldx%-5lld %-26s does not fit an SM (%zu B shared)\n", pr.op, dtype_label<T>(),
           (long long)pr.rows, (long long)pr.len, label, smem);
    return;
  }
  // One wave of resident blocks, rows in a grid-stride loop: what launch_backward does (or a
  // block per row group).
  const int64_t row_groups = (pr.rows + Cfg::kRowsPerBlock - 1) / Cfg::kRowsPerBlock;
  const int64_t blocks = per_row_grid ? row_groups : std::min<int64_t>(int64_t(resident) * pr.sms, row_groups);
  if (per_row_grid && kKind == RowKind::kNorm) {
    printf("%s: a block per row needs a partial row per block\n", label);
    exit(1);
  }
  const int64_t groups = blocks * Cfg::kRowsPerBlock;
  NormBackwardParams p = params_for(pr, kCurrent ? pr.dx_ref : pr.dx);
  void* dweight = kCurrent ? pr.dweight_ref : pr.dweight;
  void* dbias = kCurrent ? pr.dbias_ref : pr.dbias;
  const bool norm = kKind == RowKind::kNorm;
  if (norm) {
    if (size_t(2 * groups * pr.len) * sizeof(Acc) > pr.partial_bytes) {
      printf("%s: partial buffer too small for %lld groups\n", label, (long long)groups);
      exit(1);
    }
    p.dweight_partial = pr.partial;
    p.dbias_partial = pr.center ? static_cast<Acc*>(pr.partial) + groups * pr.len : nullptr;
  }
  char running[160];
  snprintf(running, sizeof running, "%s %s %lldx%lld %s", pr.op, dtype_label<T>(), (long long)pr.rows,
           (long long)pr.len, label);
  tune::running = running;
  const dim3 col_grid(unsigned((pr.len + 31) / 32)), col_block(32, kColumnSplit);
  const auto launch = [&] {
    void* args[] = {&p};
    CHECK(cudaLaunchKernel(kernel, dim3(unsigned(blocks)), dim3(Cfg::kThreads), args, smem, nullptr));
    if (norm) {
      column_sum_kernel<T><<<col_grid, col_block>>>(static_cast<const Acc*>(p.dweight_partial), groups, pr.len,
                                                    static_cast<T*>(dweight), 1);
      if (pr.center) {
        column_sum_kernel<T><<<col_grid, col_block>>>(static_cast<const Acc*>(p.dbias_partial), groups, pr.len,
                                                      static_cast<T*>(dbias), 1);
      }
    }
  };
  // NaN everywhere first: an element a kernel misses shows in the comparison.
  CHECK(cudaMemset(p.dx, 0xff, pr.rows * pr.len * sizeof(T)));
  CHECK(cudaMemset(dweight, 0xff, pr.len * sizeof(T)));
  CHECK(cudaMemset(dbias, 0xff, pr.len * sizeof(T)));
  launch();  // once alone, so a fault is caught here
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const float ms = tune::median_ms(launch);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const double bytes = 3.0 * pr.rows * pr.len * sizeof(T);
  double worst = 0;
  for (int64_t r : {int64_t(0), pr.rows / 2, pr.rows - 1}) worst = std::max(worst, host_check_row<T>(pr, p.dx, r));
  const double tol = sizeof(T) == 2 ? 1.0 / 128 : 1e-5;
  bool pass = worst <= tol;
  char verdict[200];
  if (kCurrent) {
    snprintf(verdict, sizeof verdict, "dx vs fp64 (3 rows) %.2e %s", worst, pass ? "PASS" : "FAIL");
  } else {
    char d_dx[48], d_dw[48] = "-", d_db[48] = "-";
    pass = compare<T>(pr, pr.dx, pr.dx_ref, pr.rows * pr.len, d_dx, sizeof d_dx) && pass;
    if (norm) pass = compare<T>(pr, pr.dweight, pr.dweight_ref, pr.len, d_dw, sizeof d_dw) && pass;
    if (norm && pr.center) pass = compare<T>(pr, pr.dbias, pr.dbias_ref, pr.len, d_db, sizeof d_db) && pass;
    snprintf(verdict, sizeof verdict, "fp64 %.2e, vs current dx %s dw %s db %s %s", worst, d_dx, d_dw, d_db,
             pass ? "PASS" : "FAIL");
  }
  tune::running = "between cases";
  printf("%-20s %-8s %5lldx%-5lld %-26s %3d regs %4d B spill %2d blk/SM %5lld blocks  %.4f ms %6.0f GB/s "
         "%5.1f %%copy  %s\n",
         pr.op, dtype_label<T>(), (long long)pr.rows, (long long)pr.len, label, attr.numRegs,
         int(attr.localSizeBytes), resident, (long long)blocks, ms, bytes / ms / 1e6,
         100.0 * (bytes / ms) / (2.0 * pr.rows * pr.len * sizeof(T) / pr.copy_ms), verdict);
}

// A staged candidate (row_backward_staged.cuh) for rows of kLen: kValues values of each input a
// thread (block of kLen / kValues threads), kStages shared-memory stages, register bound of
// kMinBlocks blocks per SM, the norm kind's weight in registers or read per pass ("nw").
// Skipped (at compile time) where the block is not 64..1024 threads or kMinBlocks blocks' stages
// exceed an H200 SM's 228 KiB of shared memory.
// Softmax kind (session 11 round 2): y's row copied kSavedLead rows ahead in its own group (label
// "y@L"; -1: with dy), dx stored streaming ("cs").
template <class T, RowKind kKind, int kLen, int kValues, int kStages, int kMinBlocks = 1,
          bool kWeightInRegisters = true, bool kFoldedOutput = false, bool kHoldRow = false, int kSavedLead = -1,
          bool kStreamingStores = false>
void run_staged(const Problem& pr, const char* note = "") {
  constexpr int kThreads = kLen / kValues;
  constexpr int kVecs = kValues / Vec16<T>::kLanes;
  constexpr size_t kSmem = size_t(kStages) * 2 * kLen * sizeof(T);
  if constexpr (kThreads >= 64 && kThreads <= 1024 && kVecs >= 1 && kMinBlocks * kSmem <= 227 * 1024) {
    char label[64];
    char bound[8] = "", lead[8] = "";
    if (kMinBlocks > 1) snprintf(bound, sizeof bound, " b%d", kMinBlocks);
    if (kSavedLead >= 0) snprintf(lead, sizeof lead, " y@%d", kSavedLead);
    snprintf(label, sizeof label, "staged v%d s%d%s%s%s%s%s%s%s", kValues, kStages, bound,
             kWeightInRegisters ? "" : " nw", kFoldedOutput ? " fo" : "", kHoldRow ? " hold" : "", lead,
             kStreamingStores ? " cs" : "", note);
    using Cfg = BackwardStagedConfig<kThreads, kVecs, kStages, kMinBlocks, kWeightInRegisters, kFoldedOutput,
                                     kHoldRow, kSavedLead, kStreamingStores>;
    run_config<T, kKind, Cfg, Kernel::kStaged>(pr, label);
  }
}

// A lean candidate (row_backward_lean.cuh, no prefetch) for the softmax kind with a block per row
// ("rows": as many blocks as rows, several resident per SM, each at its own phase of load,
// reduction and store, as torch's kernel runs) in blocks of kLen / kValues threads, bounded to
// kResidentThreads threads per SM (0: no bound); kDeferSaved ("dy first"): log_softmax loads y
// only after dy's sum is reduced, torch's order.
template <class T, RowKind kKind, int kLen, int kValues, int kResidentThreads = 0, bool kDeferSaved = false>
void run_lean_rows(const Problem& pr) {
  constexpr int kThreads = kLen / kValues;
  constexpr int kVecs = kValues / Vec16<T>::kLanes;
  constexpr int kMinBlocks = kResidentThreads > 0 ? kResidentThreads / kThreads : 1;
  if constexpr (kThreads >= 64 && kThreads <= 1024 && kVecs >= 1 && (kResidentThreads == 0 || kMinBlocks > 1)) {
    char label[64];
    char bound[8] = "";
    if (kMinBlocks > 1) snprintf(bound, sizeof bound, " b%d", kMinBlocks);
    snprintf(label, sizeof label, "lean v%d%s rows%s", kValues, bound, kDeferSaved ? " dy first" : "");
    run_config<T, kKind, BackwardLeanConfig<kThreads, 1, kVecs, kMinBlocks, false, false, kDeferSaved>, Kernel::kLean>(
        pr, label, true);
  }
}

// The rows for a row of kLen elements: "current": row_backward_kernel with the tile of
// variant_backward_row_on_chip.cu (bf16 16 values a thread, fp32 8); "library (lean)": the lean
// kernel as the library configured it before the staged kernel (LeanConfig there); "chosen": the
// staged configuration the library now runs (staged_shape in variant_backward_row_on_chip.cu),
// "(s10)": the one it ran in session 10 where session 11 changed it.
// Then the session 11 candidates (labels: "v" values a thread, "s" stages, "b" the register bound
// in blocks per SM, "nw" weight read per pass, "fo" folded dx arithmetic, "hold" g and xhat kept
// in registers for the output pass):
//   softmax kind (log_softmax_backward at 0.94-0.95x torch): one more stage (rows further ahead)
//     and the lean kernel with a block per row ("rows"), torch's grid;
//   bf16 norm kind at 8192 (layer_norm at 76.8 % of copy): kHoldRow, kFoldedOutput, stages, the
//     weight per pass, 1024 threads with 8 values; the run-2-era 2-blocks-per-SM rows that did
//     not spill.
template <class T, RowKind kKind, int kLen>
void run_candidates(const Problem& pr) {
  constexpr int kLanes = Vec16<T>::kLanes;
  constexpr int kValues = sizeof(T) == 2 ? 16 : 8;
  constexpr int kThreads = kLen / kValues, kVecs = kValues / kLanes;
  constexpr bool kNorm = kKind == RowKind::kNorm;
  constexpr bool kHalve = sizeof(T) == 2 && kNorm;
  constexpr bool kPrefetch = kNorm ? sizeof(T) == 4 && kThreads != 1024 : sizeof(T) != 2;
  using Current = BackwardLeanConfig<kThreads, 1, kVecs, 1, false>;
  using Library = BackwardLeanConfig<kHalve ? kThreads / 2 : kThreads, 1, kHalve ? 2 * kVecs : kVecs, 1, kPrefetch,
                                     kNorm && sizeof(T) != 4>;
  run_config<T, kKind, Current, Kernel::kCurrent>(pr, "current");
  run_config<T, kKind, Library, Kernel::kLean>(pr, "library (lean)");
  constexpr bool k8192 = kLen == 8192;
  if constexpr (!kNorm) {
    // The library's shape (session 11 run 1: fp32 8 values, two stages; bf16 64 values, three
    // stages at 8192, 16 values, two stages at 4096), then round 2's candidates for
    // log_softmax_backward (0.92-0.94x torch): y requested in its own group only as its row starts
    // ("y@0", torch's order: dy's pass, then y's) or a row ahead ("y@1"), with one more stage of dy
    // in flight; streaming dx stores ("cs"); and the lean kernel with a block per row, as before and
    // loading y after dy's sum ("dy first"), torch's exact schedule. Session 11 device run 4: none
    // beats the library's shape beyond noise (docs/norms.md). (L2 evict-first reads of the staged
    // copies, cp.async with an L2::cache_hint policy, ran 6-7 % slower in fp32 and stopped the
    // bf16 kernel with an illegal instruction; removed.)
    constexpr int kV = sizeof(T) == 4 ? 8 : k8192 ? 64 : 16;
    constexpr int kS = sizeof(T) == 2 && k8192 ? 3 : 2;
    run_staged<T, kKind, kLen, kV, kS>(pr, " chosen");
    run_staged<T, kKind, kLen, kV, kS, 1, true, false, false, 0>(pr);
    run_staged<T, kKind, kLen, kV, kS + 1, 1, true, false, false, 0>(pr);
    run_staged<T, kKind, kLen, kV, kS + 1, 1, true, false, false, 1>(pr);
    run_staged<T, kKind, kLen, kV, kS, 1, true, false, false, -1, true>(pr);
    run_staged<T, kKind, kLen, kV, kS, 1, true, false, false, 0, true>(pr);
    run_staged<T, kKind, kLen, kV, kS + 1, 1, true, false, false, 0, true>(pr);
    run_lean_rows<T, kKind, kLen, kValues>(pr);
    run_lean_rows<T, kKind, kLen, kValues, 0, true>(pr);
    // Three fp32 blocks of 512 threads per SM at 4096 (40 registers); the bf16 tiles spill there.
    if constexpr (sizeof(T) == 4) run_lean_rows<T, kKind, kLen, kValues, 1536, true>(pr);
    run_lean_rows<T, kKind, kLen, 2 * kValues, 0, true>(pr);
    run_lean_rows<T, kKind, kLen, 4 * kValues, 0, true>(pr);
    // Session 16: the library runs these rows with a block per row (variant_backward_row_on_chip.cu,
    // row_grid_shape: fp32 8 values at 4096, 16 with y after dy at 8192; fp16 / bf16 16 values);
    // fp32 16 values with y loaded alongside dy, the one unmeasured neighbour of that choice.
    if constexpr (sizeof(T) == 4) run_lean_rows<T, kKind, kLen, 2 * kValues>(pr);
  } else if constexpr (sizeof(T) == 4) {
    if constexpr (!k8192) {
      run_staged<T, kKind, kLen, 8, 3, 2>(pr, " chosen");
      run_staged<T, kKind, kLen, 8, 3, 2, true, true>(pr);
    } else {
      run_staged<T, kKind, kLen, 8, 2>(pr, " chosen");
      run_staged<T, kKind, kLen, 8, 2, 1, true, true>(pr);
    }
  } else if constexpr (k8192) {
    run_staged<T, kKind, kLen, 16, 2>(pr, " (s10)");
    run_staged<T, kKind, kLen, 16, 3>(pr);
    run_staged<T, kKind, kLen, 16, 2, 1, true, true>(pr);
    run_staged<T, kKind, kLen, 16, 2, 1, true, false, true>(pr);
    run_staged<T, kKind, kLen, 16, 2, 1, true, true, true>(pr, " chosen");
    run_staged<T, kKind, kLen, 16, 3, 1, true, false, true>(pr);
    run_staged<T, kKind, kLen, 16, 3, 1, true, true, true>(pr);
    run_staged<T, kKind, kLen, 16, 2, 1, false, true, true>(pr);
    run_staged<T, kKind, kLen, 8, 2, 1, true, true, true>(pr);
    run_staged<T, kKind, kLen, 8, 3, 1, false, true, true>(pr);
    run_staged<T, kKind, kLen, 32, 2, 2, false, true>(pr);
    run_staged<T, kKind, kLen, 32, 2, 2, false>(pr);
    run_staged<T, kKind, kLen, 32, 3, 2, false>(pr);
  } else {
    run_staged<T, kKind, kLen, 32, 3>(pr, " chosen");
    run_staged<T, kKind, kLen, 32, 3, 1, true, true>(pr);
    run_staged<T, kKind, kLen, 32, 3, 4, false>(pr);
    run_staged<T, kKind, kLen, 16, 2, 3, false>(pr);
  }
}

// argv[1] == "softmax": the softmax-kind ops alone (round 2 of session 11 tunes those only).
bool softmax_only = false;

template <class T>
void run_dtype(int64_t rows, int64_t len, const Problem& buffers) {
  const int64_t n = rows * len;
  const int sms = buffers.sms;
  char running[96];
  snprintf(running, sizeof running, "data and copy, %s %lldx%lld", dtype_label<T>(), (long long)rows, (long long)len);
  tune::running = running;
  const int64_t bytes = n * sizeof(T);
  fill_random<T><<<sms * 8, 256>>>(static_cast<T*>(buffers.dy), n, 1, -1.0f, 1.0f);
  fill_random<T><<<sms, 256>>>(static_cast<T*>(buffers.weight), len, 2, 0.5f, 1.5f);
  fill_random<float><<<sms, 256>>>(buffers.mean, rows, 3, -0.1f, 0.1f);
  fill_random<float><<<sms, 256>>>(buffers.rstd, rows, 4, 0.5f, 1.5f);
  CHECK(cudaGetLastError());
  const float kernel_ms = tune::median_ms([&] {
    copy_kernel<<<sms * 8, 256>>>(static_cast<const uint4*>(buffers.dy), static_cast<uint4*>(buffers.dx), bytes / 16);
  });
  const float memcpy_ms =
      tune::median_ms([&] { CHECK(cudaMemcpyAsync(buffers.dx, buffers.dy, bytes, cudaMemcpyDeviceToDevice)); });
  CHECK(cudaDeviceSynchronize());
  const float copy_ms = std::min(kernel_ms, memcpy_ms);
  printf("\ncopy %s %lldx%lld: kernel %.4f ms (%.0f GB/s), cudaMemcpy %.4f ms (%.0f GB/s); ceiling %.0f GB/s\n",
         dtype_label<T>(), (long long)rows, (long long)len, kernel_ms, 2.0 * bytes / kernel_ms / 1e6, memcpy_ms,
         2.0 * bytes / memcpy_ms / 1e6, 2.0 * bytes / copy_ms / 1e6);
  Problem base = buffers;
  base.rows = rows;
  base.len = len;
  base.copy_ms = copy_ms;
  base.log = false;
  base.center = true;
  Problem softmax = base, log_softmax = base, layer_norm = base, rms_norm = base;
  softmax.op = "softmax_backward";
  softmax.kind = RowKind::kSoftmax;
  log_softmax.op = "log_softmax_backward";
  log_softmax.kind = RowKind::kSoftmax;
  log_softmax.log = true;
  layer_norm.op = "layer_norm_backward";
  layer_norm.kind = RowKind::kNorm;
  rms_norm.op = "rms_norm_backward";
  rms_norm.kind = RowKind::kNorm;
  rms_norm.center = false;
  for (const Problem* pr : {&softmax, &log_softmax, &layer_norm, &rms_norm}) {
    if (softmax_only && pr->kind != RowKind::kSoftmax) continue;
    // The saved row as the forward would leave it: softmax y around 1 / len, log_softmax y around
    // -log(len), x of the norms in [-4, 4).
    const float lo = pr->kind == RowKind::kNorm ? -4.0f : pr->log ? -std::log(float(len)) - 3.0f : 0.0f;
    const float hi = pr->kind == RowKind::kNorm ? 4.0f : pr->log ? -std::log(float(len)) + 1.0f : 2.0f / len;
    tune::running = running;
    fill_random<T><<<sms * 8, 256>>>(static_cast<T*>(pr->saved), n, 5, lo, hi);
    CHECK(cudaGetLastError());
    if (len == 8192) {
      if (pr->kind == RowKind::kSoftmax) run_candidates<T, RowKind::kSoftmax, 8192>(*pr);
      else run_candidates<T, RowKind::kNorm, 8192>(*pr);
    } else {
      if (pr->kind == RowKind::kSoftmax) run_candidates<T, RowKind::kSoftmax, 4096>(*pr);
      else run_candidates<T, RowKind::kNorm, 4096>(*pr);
    }
  }
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);  // whole rows survive a timeout
  softmax_only = argc > 1 && strcmp(argv[1], "softmax") == 0;
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs, L2 %d MiB\n", prop.name, sms, prop.l2CacheSize >> 20);
  const int64_t max_bytes = (int64_t(1) << 28) * 4;  // 65536 x 4096 float32 (twice 16384 x 8192)
  Problem b{};
  b.sms = sms;
  // Partial rows: at most 32 resident groups per SM (warp tiles are not swept here; 2 blocks of
  // 1024 threads or 8 of 128 at most) of 8192 floats, twice (dweight, dbias).
  b.partial_bytes = size_t(2) * 32 * sms * 8192 * sizeof(float);
  CHECK(cudaMalloc(&b.saved, max_bytes));
  CHECK(cudaMalloc(&b.dy, max_bytes));
  CHECK(cudaMalloc(&b.dx_ref, max_bytes));
  CHECK(cudaMalloc(&b.dx, max_bytes));
  CHECK(cudaMalloc(&b.weight, 8192 * 4));
  CHECK(cudaMalloc(&b.mean, 65536 * 4));
  CHECK(cudaMalloc(&b.rstd, 65536 * 4));
  CHECK(cudaMalloc(&b.partial, b.partial_bytes));
  CHECK(cudaMalloc(&b.dweight_ref, 8192 * 4));
  CHECK(cudaMalloc(&b.dweight, 8192 * 4));
  CHECK(cudaMalloc(&b.dbias_ref, 8192 * 4));
  CHECK(cudaMalloc(&b.dbias, 8192 * 4));
  CHECK(cudaMalloc(&b.stats, 16));
  for (int pass = 1; pass <= 2; ++pass) {
    printf("\n=== pass %d ===\n", pass);
    run_dtype<float>(16384, 8192, b);
    run_dtype<float>(65536, 4096, b);
    run_dtype<bfloat16_t>(16384, 8192, b);
    run_dtype<bfloat16_t>(65536, 4096, b);
  }
  for (void* ptr : {b.saved, b.dy, b.dx_ref, b.dx, b.weight, static_cast<void*>(b.mean), static_cast<void*>(b.rstd),
                    b.partial, b.dweight_ref, b.dweight, b.dbias_ref, b.dbias, static_cast<void*>(b.stats)}) {
    CHECK(cudaFree(ptr));
  }
  return 0;
}
