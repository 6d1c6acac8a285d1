// Rows too long for one block (issue 5, docs/norms.md "cluster_row", "row_lag"): the library's
// split_row (chunk statistics -> per-row combine -> apply: x read twice) against cluster_row_kernel
// (cluster_row.cuh: the row in the shared memory of a thread block cluster, x read once) and
// row_lag_kernel (row_lag.cuh: one launch, each chunk read twice, the second time from L2) in several shapes, for softmax / log_softmax / layer_norm / rms_norm,
// float32 and bfloat16, next to a 16-byte copy kernel and cudaMemcpy of the same bytes ("%copy" =
// best copy time / kernel time, bytes = x read + y written).
// Every output of every row (split_row's too) is compared with a float64 reference computed on the
// GPU (row statistics in double by one block per row, each element's reference in double at the
// comparison): max |y - ref| / max |ref| over the whole output, PASS within 1e-5 (float32) or
// 2^-7 (bfloat16) with no NaN. y is poisoned with NaN before each candidate's first launch.
// Candidate "sN vM rK": N threads per CTA, M 16-byte slots each (slice N * M * 16 bytes of shared
// memory), register bound of K resident CTAs per SM; C = the cluster size the row needs. A
// candidate whose cluster cannot be launched (C > 16, or cudaOccupancyMaxActiveClusters = 0) prints
// why and is skipped. Candidate "lag ...": see run_row_lag_candidates. Each row: median of 30 timed
// launches after 3 warm-ups; the sweep runs twice.
// Candidate "hold": row_hold_kernel as the library launches it (run_row_hold).
// Build and run on the GPU machine from the repo root (about 2 minutes of nvcc, well under 60 s of run):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/norms_cluster_tune.cu -o /tmp/cluster_tune && /tmp/cluster_tune
// `/tmp/cluster_tune --row-hold` runs row_hold alone on 256 x 262144 float32, every op, the norm ops
// also without their affine vectors, and row_hold in other shapes (run_more_hold_shapes);
// `--row-hold-once` launches each of those cases once, checked and not timed: eighteen row_hold
// launches, in the order printed, for ncu (--kernel-name regex:row_hold_kernel).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "gpuprims/norms/cluster_row.cuh"
#include "gpuprims/norms/row_hold.cuh"
#include "gpuprims/norms/row_lag.cuh"
#include "gpuprims/norms/row_on_chip.cuh"

#include "norms_tune_data.cuh"
#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::norms;

struct Problem {
  const char* op;
  RowKind kind;
  bool log, center, weight, bias;
  int64_t rows, len;
  void *x, *y, *w, *b;
  double* ref_stats;  // per row: softmax (max, sum exp(x - max)); norm (mean, rstd)
  unsigned* cmp;
  void* scratch;  // split_row's partials
  float copy_ms;
  int sms;
};

NormParams params_for(const Problem& pr) {
  return contiguous_rows_params(pr.x, pr.y, pr.weight ? pr.w : nullptr, pr.bias ? pr.b : nullptr, pr.rows, pr.len,
                                pr.log, pr.center);
}

// ------------------------------------------------------------------------------------------------
// float64 reference on the GPU.

// One block of 256 threads per row, three passes in double over global memory.
template <class T>
__global__ void ref_stats_kernel(const T* x, int64_t len, bool softmax, bool center, double eps, double* stats) {
  __shared__ double part[256];
  const T* xr = x + blockIdx.x * len;
  const auto block_fold = [&](double v, bool is_max) {
    part[threadIdx.x] = v;
    __syncthreads();
    for (int w = 128; w > 0; w /= 2) {
      if (threadIdx.x < w) {
        part[threadIdx.x] = is_max ? fmax(part[threadIdx.x], part[threadIdx.x + w]) : part[threadIdx.x] + part[threadIdx.x + w];
      }
      __syncthreads();
    }
    const double r = part[0];
    __syncthreads();
    return r;
  };
  double a = 0;
  if (softmax) {
    double m = -INFINITY;
    for (int64_t i = threadIdx.x; i < len; i += 256) m = fmax(m, double(cast_value<float>(xr[i])));
    a = block_fold(m, true);
  } else if (center) {
    double s = 0;
    for (int64_t i = threadIdx.x; i < len; i += 256) s += cast_value<float>(xr[i]);
    a = block_fold(s, false) / len;
  }
  double s = 0;
  for (int64_t i = threadIdx.x; i < len; i += 256) {
    const double v = cast_value<float>(xr[i]);
    s += softmax ? exp(v - a) : (v - a) * (v - a);
  }
  s = block_fold(s, false);
  if (threadIdx.x == 0) {
    stats[2 * blockIdx.x] = a;
    stats[2 * blockIdx.x + 1] = softmax ? s : 1.0 / sqrt(s / len + eps);
  }
}

// cmp[0] = max |y - ref| and cmp[1] = max |ref| (non-negative floats' bits order like the floats),
// cmp[2] = NaNs in y.
template <class T>
__global__ void compare_ref_kernel(const T* x, const T* y, const T* w, const T* b, int64_t rows, int64_t len,
                                   const double* stats, bool softmax, bool log, unsigned* cmp) {
  unsigned diff = 0, mag = 0, nans = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * len; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / len, c = i % len;
    const double v = cast_value<float>(x[i]), a = stats[2 * r], s = stats[2 * r + 1];
    double ref;
    if (softmax) {
      ref = log ? (v - a) - ::log(s) : exp(v - a) / s;
    } else {
      ref = (v - a) * s * (w ? double(cast_value<float>(w[c])) : 1.0) + (b ? double(cast_value<float>(b[c])) : 0.0);
    }
    const float got = cast_value<float>(y[i]);
    if (got != got) {
      ++nans;
    } else {
      diff = max(diff, __float_as_uint(float(fabs(double(got) - ref))));
    }
    mag = max(mag, __float_as_uint(float(fabs(ref))));
  }
  atomicMax(&cmp[0], diff);
  atomicMax(&cmp[1], mag);
  atomicAdd(&cmp[2], nans);
}

template <class T>
void compute_reference(const Problem& pr) {
  ref_stats_kernel<T><<<unsigned(pr.rows), 256>>>(static_cast<const T*>(pr.x), pr.len, pr.kind == RowKind::kSoftmax,
                                                  pr.center, 1e-5, pr.ref_stats);
  CHECK(cudaGetLastError());
}

template <class T>
void verdict_for(const Problem& pr, char* out, size_t size) {
  CHECK(cudaMemset(pr.cmp, 0, 3 * sizeof(unsigned)));
  compare_ref_kernel<T><<<pr.sms * 8, 256>>>(static_cast<const T*>(pr.x), static_cast<const T*>(pr.y),
                                             pr.weight ? static_cast<const T*>(pr.w) : nullptr,
                                             pr.bias ? static_cast<const T*>(pr.b) : nullptr, pr.rows, pr.len,
                                             pr.ref_stats, pr.kind == RowKind::kSoftmax, pr.log, pr.cmp);
  CHECK(cudaGetLastError());
  unsigned s[3];
  CHECK(cudaMemcpy(s, pr.cmp, sizeof s, cudaMemcpyDeviceToHost));
  float diff, mag;
  memcpy(&diff, &s[0], 4);
  memcpy(&mag, &s[1], 4);
  const double rel = mag > 0 ? diff / mag : diff;
  const double tol = sizeof(T) == 2 ? 1.0 / 128 : 1e-5;
  snprintf(out, size, "vs fp64 %.2e nan=%u %s", rel, s[2], rel <= tol && s[2] == 0 ? "PASS" : "FAIL");
}

// --row-hold-once: report launches each case once, checked and not timed (a run under ncu).
bool g_checked_launch_only = false;

// Times f (after one checked launch into a NaN-poisoned y) and prints the row.
template <class T, class F>
void report(const Problem& pr, const char* label, int regs, int spill, int per_sm, int csize, F f) {
  char running[160];
  snprintf(running, sizeof running, "%s %s %lldx%lld %s", pr.op, dtype_label<T>(), (long long)pr.rows,
           (long long)pr.len, label);
  tune::running = running;
  CHECK(cudaMemset(pr.y, 0xff, pr.rows * pr.len * sizeof(T)));
  f();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  char verdict[96];
  verdict_for<T>(pr, verdict, sizeof verdict);
  if (g_checked_launch_only) {
    printf("%-11s %-8s %4lldx%-7lld %-18s %3d regs %4d B spill %2d CTA/SM C=%-2d  %s\n", pr.op, dtype_label<T>(),
           (long long)pr.rows, (long long)pr.len, label, regs, spill, per_sm, csize, verdict);
    return;
  }
  const float ms = tune::median_ms(f);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  tune::running = "between cases";
  const double bytes = 2.0 * pr.rows * pr.len * sizeof(T);
  printf("%-11s %-8s %4lldx%-7lld %-18s %3d regs %4d B spill %2d CTA/SM C=%-2d %.4f ms %6.0f GB/s %5.1f %%copy  %s\n",
         pr.op, dtype_label<T>(), (long long)pr.rows, (long long)pr.len, label, regs, spill, per_sm, csize, ms,
         bytes / ms / 1e6, 100.0 * pr.copy_ms / ms, verdict);
}

// The library's split_row (variant_split_row.cu's three launches, 256-thread chunks of 32 values).
template <class T, RowKind kKind>
void run_split_row(const Problem& pr) {
  using Acc = acc_t<T>;
  constexpr int kThreads = 256, kVecs = 32 / Vec16<T>::kLanes;
  const int64_t chunk_len = RowTile<T, kThreads, kVecs>::kCapacity;
  const int64_t chunks = ceil_div(pr.len, chunk_len);
  ChunkPartial<kKind, Acc>* partial = static_cast<ChunkPartial<kKind, Acc>*>(pr.scratch);
  RowStats<Acc>* row_stats = reinterpret_cast<RowStats<Acc>*>(partial + pr.rows * chunks);
  Acc* row_shift = reinterpret_cast<Acc*>(row_stats + pr.rows);
  const NormParams p = params_for(pr);
  const dim3 grid(unsigned(chunks), unsigned(std::min<int64_t>(pr.rows, 65535)));
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, chunk_stats_kernel<T, kKind, kThreads, kVecs, true>));
  report<T>(pr, "split_row", attr.numRegs, int(attr.localSizeBytes), 0, 0, [&] {
    chunk_stats_kernel<T, kKind, kThreads, kVecs, true><<<grid, kThreads>>>(p, partial);
    row_combine_kernel<T, kKind, kThreads><<<unsigned(pr.rows), kThreads>>>(p, partial, chunks, chunk_len, row_stats,
                                                                           row_shift);
    chunk_apply_kernel<T, kKind, kThreads, kVecs, true><<<grid, kThreads>>>(p, row_stats, row_shift);
  });
}

template <class T, RowKind kKind, class Cfg>
void run_cluster(const Problem& pr, const char* label) {
  const auto kernel = cluster_row_kernel<T, kKind, Cfg>;
  const int64_t capacity = Cfg::template slice_capacity<T>();
  const int csize = int(std::max<int64_t>(1, ceil_div(pr.len, capacity)));
  if (csize > kMaxClusterSize) {
    printf("%-11s %-8s %4lldx%-7lld %-18s skipped: needs C=%d\n", pr.op, dtype_label<T>(), (long long)pr.rows,
           (long long)pr.len, label, csize);
    return;
  }
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(csize), unsigned(std::min<int64_t>(pr.rows, 65535)));
  cfg.blockDim = dim3(Cfg::kThreads);
  cfg.dynamicSmemBytes = Cfg::kSmemBytes;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = unsigned(csize);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
  if (clusters == 0) {
    printf("%-11s %-8s %4lldx%-7lld %-18s skipped: C=%d cannot be launched\n", pr.op, dtype_label<T>(),
           (long long)pr.rows, (long long)pr.len, label, csize);
    return;
  }
  if (Cfg::kStages == 2) cfg.gridDim.y = unsigned(std::min<int64_t>(cfg.gridDim.y, clusters));  // persistent
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Cfg::kThreads, Cfg::kSmemBytes));
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, kernel));
  const NormParams p = params_for(pr);
  char full[64];
  snprintf(full, sizeof full, "%s (%d cl)", label, clusters);
  report<T>(pr, full, fa.numRegs, int(fa.localSizeBytes), per_sm, csize,
            [&] { CHECK(cudaLaunchKernelEx(&cfg, kernel, p)); });
}

// row_lag_kernel (row_lag.cuh: chunks read twice, the second time from L2). The lag is
// L = max(per_row * C, resident_pct / 100 * R) tickets, C the chunks per row and R the blocks
// resident at once (blocks per SM x SMs): phase B of ticket t finds its row complete only once the
// row's last ticket has finished phase A, and up to R tickets are in flight, while the re-read
// (L chunks back) must still hit L2 (session 12 runs 1-2: best at L = 3R/8..R/2). persistent: a
// grid of R blocks taking tickets in a loop; else one block per ticket. Its scratch (counters
// cleared by a cudaMemsetAsync inside the timed call) in pr.scratch.
template <class T, RowKind kKind, class Cfg>
void run_row_lag(const Problem& pr, const char* label, int per_row, int resident_pct, bool persistent) {
  const auto kernel = row_lag_kernel<T, kKind, Cfg>;
  const int64_t chunks_per_row = ceil_div(pr.len, Cfg::template chunk_len<T>());
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Cfg::kThreads, 0));
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, kernel));
  const NormParams p = params_for(pr);
  const int64_t wave = int64_t(per_sm) * pr.sms;
  const int64_t lag = std::max<int64_t>(per_row * chunks_per_row, resident_pct * wave / 100);
  const int64_t blocks = persistent ? wave : 0;
  char full[80];
  snprintf(full, sizeof full, "lag t%d e%d r%d %s L=%lld%s", Cfg::kThreads, Cfg::kVecs * Vec16<T>::kLanes,
           Cfg::kMinBlocks, label, (long long)lag, persistent ? " pers" : "");
  report<T>(pr, full, fa.numRegs, int(fa.localSizeBytes), per_sm, int(chunks_per_row),
            [&] { CHECK((launch_row_lag<T, kKind, Cfg>(p, pr.scratch, lag, blocks, nullptr))); });
}

// row_hold_kernel (row_hold.cuh: each chunk read once and held in shared memory until its row is
// complete; float32 softmax holds exp(x - chunk max)), on a cooperative grid of the resident blocks. Its scratch (counters cleared inside the timed call) in pr.scratch. Cfg: the
// library's shape (variant_row_hold.cu: 256 threads x 32 values, three blocks per SM) unless given;
// other shapes are labelled "tT eE rR" as row_lag's.
template <class T>
using LibraryHoldConfig = RowLagConfig<256, 32 / Vec16<T>::kLanes, 3, false>;
template <class T, RowKind kKind, class Cfg = LibraryHoldConfig<T>>
void run_row_hold(const Problem& pr) {
  const auto kernel = row_hold_kernel<T, kKind, Cfg>;
  constexpr int kSmem = row_hold_smem_bytes<T, Cfg>();
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Cfg::kThreads, kSmem));
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, kernel));
  const int64_t per_row = Cfg::template chunks_per_row<T>(pr.len);
  char shape[24] = "";
  if (!std::is_same<Cfg, LibraryHoldConfig<T>>::value) {
    snprintf(shape, sizeof shape, " t%d e%d r%d", Cfg::kThreads, Cfg::kVecs * Vec16<T>::kLanes, Cfg::kMinBlocks);
  }
  char label[48];
  snprintf(label, sizeof label, "hold%s%s", shape, pr.weight || pr.bias ? "" : " no w/b");
  const NormParams p = params_for(pr);
  report<T>(pr, label, fa.numRegs, int(fa.localSizeBytes), per_sm, int(per_row), [&] {
    CHECK((launch_row_hold<T, kKind, Cfg>(p, pr.scratch, int64_t(per_sm) * pr.sms, nullptr)));
  });
}

// row_lag shapes: "tT eE rR": T threads, E values per thread (E * sizeof(T) / 16 16-byte vectors;
// chunk T * E elements), R blocks per SM (register bound); "a0": phase B's whole re-read before
// the row's wait (the only schedule left since session 18; "a4", 4 slots at a time after the wait,
// was removed); "pf": next ticket prefetched (with a persistent grid). 64 bfloat16 values per
// thread spilled 60-300 bytes (ptxas, CUDA 13.0), so the shapes count values, not vectors. Session 12 (H200) measured L = C, 4C, R/2, R, 2R, 4R (best at
// R/2), and schedules since removed (both reads issued together, phase A / B roles by ticket
// parity, bulk copies into shared memory): all lost (docs/norms.md "row_lag"). Session 17 sweeps
// the prefetching schedule's lag around R/2, where it sits at a cliff (H100: 60 % at 3R/8, 80 % at R/2).
// Session 18 adds rows of 64-256 chunks (lags up to 4C): split_row leads there on the H100.
template <class T, RowKind kKind>
void run_row_lag_candidates(const Problem& pr) {
  constexpr int kV = 32 / Vec16<T>::kLanes;  // 32 values per thread
  // Softmax kind: 4 blocks per SM fit without spills (64 registers); norm kind: 3.
  constexpr int kR = kKind == RowKind::kSoftmax ? 4 : 3;
  run_row_lag<T, kKind, RowLagConfig<256, kV, kR, false>>(pr, "AB a0", 1, 50, false);
  using Prefetched = RowLagConfig<256, kV, kR, true>;
  for (int pct : {50, 62, 75, 88, 100}) run_row_lag<T, kKind, Prefetched>(pr, "AB a0 pf", 1, pct, true);
  // Rows of many chunks (session 18): lags of 2C-4C tickets.
  if (ceil_div(pr.len, Prefetched::template chunk_len<T>()) > 32) {
    for (int per_row : {2, 3, 4}) run_row_lag<T, kKind, Prefetched>(pr, "AB a0 pf", per_row, 0, true);
  }
}

// The candidates: split_row, the cluster shapes the library runs (64 KiB slices, store loop unrolled
// by 4; the 32 / 128 KiB, fully unrolled and pipelined shapes lost in session 10 run 4 and session
// 11 run 1, docs/norms.md "cluster_row"), and the row_lag candidates.
template <class T, RowKind kKind>
void run_candidates(const Problem& pr) {
  compute_reference<T>(pr);
  run_split_row<T, kKind>(pr);
  run_cluster<T, kKind, ClusterRowConfig<128, 32, 3>>(pr, "s128 v32 r3 u4");  // 64 KiB
  run_cluster<T, kKind, ClusterRowConfig<256, 16, 3>>(pr, "s256 v16 r3 u4");  // 64 KiB
  run_cluster<T, kKind, ClusterRowConfig<512, 8, 3>>(pr, "s512 v8 r3 u4");    // 64 KiB
  run_row_lag_candidates<T, kKind>(pr);
  run_row_hold<T, kKind>(pr);
}

// Random x, weight and bias for `rows` x `len` of T, the copy ceiling measured and printed: the
// problem every op of the shape starts from.
template <class T>
Problem shape_problem(int64_t rows, int64_t len, void* x, void* y, void* w, void* b, double* ref_stats, unsigned* cmp,
                      void* scratch, int sms) {
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
  return Problem{nullptr, RowKind::kSoftmax, false, true, false, false, rows, len, x, y, w, b, ref_stats, cmp,
                 scratch, copy_ms, sms};
}

template <class T>
void run_shape(int64_t rows, int64_t len, void* x, void* y, void* w, void* b, double* ref_stats, unsigned* cmp,
               void* scratch, int sms) {
  const auto [softmax, log_softmax, layer_norm, rms_norm] =
      four_row_ops(shape_problem<T>(rows, len, x, y, w, b, ref_stats, cmp, scratch, sms));
  for (const Problem* pr : {&softmax, &log_softmax}) run_candidates<T, RowKind::kSoftmax>(*pr);
  for (const Problem* pr : {&layer_norm, &rms_norm}) run_candidates<T, RowKind::kNorm>(*pr);
}

// Session 41's profile (docs/norms.md, "What the affine vectors cost row_hold") found the library's
// shape latency-bound at 6 warps per scheduler: chunks of half the length (16 values a thread, 16
// KiB float32 slots) and more blocks per SM, the register loop.
template <class T, RowKind kKind>
void run_more_hold_shapes(const Problem& pr) {
  constexpr int kHalf = 16 / Vec16<T>::kLanes;
  run_row_hold<T, kKind, RowLagConfig<256, kHalf, 4, false>>(pr);
  run_row_hold<T, kKind, RowLagConfig<256, kHalf, 5, false>>(pr);
  run_row_hold<T, kKind, RowLagConfig<128, kHalf * 2, 6, false>>(pr);
}

// --row-hold(-once): row_hold alone, every op on one shape, the norm ops also without weight and bias;
// also row_hold in other shapes (run_more_hold_shapes).
template <class T>
void run_row_hold_shape(int64_t rows, int64_t len, void* x, void* y, void* w, void* b, double* ref_stats,
                        unsigned* cmp, void* scratch, int sms) {
  const auto [softmax, log_softmax, layer_norm, rms_norm] =
      four_row_ops(shape_problem<T>(rows, len, x, y, w, b, ref_stats, cmp, scratch, sms));
  for (const Problem* pr : {&softmax, &log_softmax}) {
    compute_reference<T>(*pr);
    run_row_hold<T, RowKind::kSoftmax>(*pr);
    run_more_hold_shapes<T, RowKind::kSoftmax>(*pr);
  }
  for (Problem pr : {layer_norm, rms_norm}) {
    compute_reference<T>(pr);
    run_row_hold<T, RowKind::kNorm>(pr);
    run_more_hold_shapes<T, RowKind::kNorm>(pr);
    pr.weight = pr.bias = false;
    run_row_hold<T, RowKind::kNorm>(pr);
  }
}

int main(int argc, char** argv) {
  g_checked_launch_only = argc > 1 && strcmp(argv[1], "--row-hold-once") == 0;
  const bool row_hold_only = g_checked_launch_only || (argc > 1 && strcmp(argv[1], "--row-hold") == 0);
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs, L2 %d MiB, %zu KiB shared memory per SM\n", prop.name, sms, prop.l2CacheSize >> 20,
         prop.sharedMemPerMultiprocessor >> 10);
  const int64_t max_bytes = int64_t(256) << 20;  // 256 x 262144 float32, 4x the H200's L2
  const int64_t max_len = 1 << 21, max_rows = 2048;
  void *x, *y, *w, *b, *scratch;
  double* ref_stats;
  unsigned* cmp;
  CHECK(cudaMalloc(&x, max_bytes));
  CHECK(cudaMalloc(&y, max_bytes));
  CHECK(cudaMalloc(&w, max_len * 4));
  CHECK(cudaMalloc(&b, max_len * 4));
  CHECK(cudaMalloc(&ref_stats, max_rows * 2 * sizeof(double)));
  CHECK(cudaMalloc(&cmp, 16));
  CHECK(cudaMalloc(&scratch, 16 << 20));  // split_row's partials: at most (rows * chunks + rows) * 12 bytes
  for (int pass = 1; pass <= (row_hold_only ? 0 : 2); ++pass) {
    printf("\n=== pass %d ===\n", pass);
    run_shape<float>(256, 262144, x, y, w, b, ref_stats, cmp, scratch, sms);
    run_shape<bfloat16_t>(256, 262144, x, y, w, b, ref_stats, cmp, scratch, sms);
    if (pass == 1) {  // other lengths: cluster sizes 2-16, a short last slice
      run_shape<float>(640, 100000, x, y, w, b, ref_stats, cmp, scratch, sms);
      run_shape<float>(2048, 32768, x, y, w, b, ref_stats, cmp, scratch, sms);
      run_shape<bfloat16_t>(128, 1048576, x, y, w, b, ref_stats, cmp, scratch, sms);
      // Rows of 64-256 chunks, where "auto" leaves row_lag for split_row (session 18).
      run_shape<float>(128, 524288, x, y, w, b, ref_stats, cmp, scratch, sms);
      run_shape<float>(64, 1048576, x, y, w, b, ref_stats, cmp, scratch, sms);
      run_shape<float>(32, 2097152, x, y, w, b, ref_stats, cmp, scratch, sms);
    }
  }
  if (row_hold_only) run_row_hold_shape<float>(256, 262144, x, y, w, b, ref_stats, cmp, scratch, sms);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(w));
  CHECK(cudaFree(b));
  CHECK(cudaFree(ref_stats));
  CHECK(cudaFree(cmp));
  CHECK(cudaFree(scratch));
  return 0;
}
