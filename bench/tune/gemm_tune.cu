// Tuning sweep for the two matmul variants issue 6 targets (docs/gemm.md, "Tuning"): the float32
// `warptile` kernel (blocktile_128.cuh) and the bfloat16 `mma_pipelined` kernel (mma_pipelined.cuh),
// each instantiated in the library's current configuration (WarptileConfig / MmaPipelinedConfig),
// the previous one (Blocked128Base / MmaBase) and candidate tilings, next to cuBLAS in the same
// process (cublasSgemm with the default math mode: no TF32; cublasGemmEx bf16 with float32
// compute). The kernels timed are the library's own templates, not copies.
//
// Per candidate: median of 30 timed launches (CUDA events, 3 warm-ups) on row-major 4096^3 with
// random non-zero inputs, TFLOP/s, speed relative to cuBLAS (cuBLAS ms / candidate ms: the issue's
// "x cuBLAS"), registers / spill bytes / resident blocks per SM, and two checks:
//   err4096  max |C - C_cublas| / max |C_cublas| on the timed 4096^3 product;
//   err_edge the same against a simple float32 reference kernel on a batch of 2 products of
//            777 x 1000 x 1000 (edge tiles in M, N and K, the batch loop, 16-byte paths) and, for
//            float32, on 4097x4095x1023, 3000x5000x777, a batch of 3 of 1000x1100x1012 and a
//            batch of 2 of 300x515x5 with rows padded to 4 elements (K not a multiple of the
//            slice, tile counts with and without a partial last wave, fewer tiles than SMs); for
//            bf16 the larger of that error and the same kernel's gather path's (kAsync false:
//            every chunk loaded element by element and stored synchronously, as for strided or
//            misaligned operands), which the stage synchronization must order too.
//   rep      "bit" when a second run of the 4096^3 product is bitwise equal to the first.
// PASS needs both errors below the tolerance (float32 1e-4, bfloat16 1e-2: one bf16 rounding of the
// output is 2^-9 relative), every output finite and "bit"; a fast wrong kernel shows FAIL.
//
// The bf16 section starts with the mma.sync ceiling: independent mma.sync on registers, no loads,
// 8 warps per SM, as TFLOP/s and as the 4096^3 time it would imply.
// Rows: "base" is the tiling before issue 6's tuning (Blocked128Base / MmaBase), "LIBRARY" what
// the library runs now (WarptileStreamK; MmaPipelinedConfig / MmaPipelinedLargeConfig: flip those
// one-line aliases to adopt another row), the rest candidates named by their template arguments
// (legend above each sweep), around the best rows of the earlier sweeps (docs/gemm.md "Tuning");
// "streamk" and "hybrid" rows run the warptile kernel with a Stream-K last wave
// (warptile_streamk.cuh, legend above them). Each row is also timed at 1000^3 (ms1000, x1000 =
// cuBLAS ms / ms).
//
// Build and run on the GPU machine (a few minutes of single-threaded nvcc; the argument bf16 skips
// the float32 sweep, fp32 the bfloat16 one):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/gemm_tune.cu -o /tmp/gemm_tune -lcublas && /tmp/gemm_tune [bf16|fp32]
// Add -Xptxas=-v,-warn-spills to see each candidate's registers at compile time.
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "gpuprims/gemm/blocktile_128.cuh"
#include "gpuprims/gemm/mma_pipelined.cuh"
#include "gpuprims/gemm/warptile_streamk.cuh"

using namespace gpuprims;
using namespace gpuprims::gemm;

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                   \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)
#define CHECK_CUBLAS(x)                                                                           \
  do {                                                                                            \
    cublasStatus_t s_ = (x);                                                                      \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                            \
      printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cublasGetStatusString(s_));                \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

namespace {

constexpr int kBig = 4096;                                    // timed and checked: kBig^3
constexpr int kSmall = 1000;                                  // timed too: kSmall^3 (tile and wave effects)
constexpr int kEdgeBatch = 2, kEdgeM = 777, kEdgeN = 1000, kEdgeK = 1000;  // checked only
constexpr int kReps = 30;

template <class T>
__host__ __device__ float as_float(T v) { return to_float(v); }
template <>
__host__ __device__ float as_float<float>(float v) { return v; }

// The simple reference: one thread per output, float32 sum in K order.
template <class T>
__global__ void reference_kernel(GemmParams p) {
  const int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, m = blockIdx.y, z = blockIdx.z;
  if (n >= p.n) return;
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  float acc = 0.0f;
  for (int64_t k = 0; k < p.k; ++k) acc = fmaf(as_float(a[p.sa.offset(z, m, k)]), as_float(b[p.sb.offset(z, k, n)]), acc);
  static_cast<float*>(p.c)[p.sc.offset(z, m, n)] = acc;
}

// Row-major contiguous batch x (m, k) @ (k, n): the layout the 16-byte paths need (cudaMalloc
// bases are 256-byte aligned, k and n are multiples of 8).
GemmParams row_major(const void* a, const void* b, void* c, int64_t batch, int64_t m, int64_t n, int64_t k) {
  GemmParams p{};
  p.a = a;
  p.b = b;
  p.c = c;
  p.batch = batch;
  p.m = m;
  p.n = n;
  p.k = k;
  p.sa = {m * k, k, 1};
  p.sb = {k * n, n, 1};
  p.sc = {m * n, n, 1};
  p.a_vec_rows = p.b_vec_rows = p.c_vec_rows = true;
  return p;
}

// Random values in +-[0.25, 1): non-zero, mixed signs.
template <class T>
T* random_device(size_t count, uint32_t seed) {
  std::vector<T> h(count);
  uint32_t x = seed;
  for (auto& v : h) {
    x = x * 1664525u + 1013904223u;
    const float mag = 0.25f + 0.75f * float(x >> 8) / 16777216.0f;
    v = cast_value<T>((x & 1u) ? mag : -mag);
  }
  T* d;
  CHECK(cudaMalloc(&d, count * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class F>
float median_ms(F launch) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) launch();
  CHECK(cudaGetLastError());
  std::vector<float> t;
  for (int i = 0; i < kReps; ++i) {
    CHECK(cudaEventRecord(start));
    launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// max |got - want| / max |want| over `rows` rows of `cols` elements, `ld` apart (the columns past
// cols are padding and not compared); infinity when got holds a non-finite value.
template <class T, class R>
double relative_error(const T* got_d, const R* want_d, size_t rows, size_t cols, size_t ld) {
  const size_t count = rows * ld;
  std::vector<T> got(count);
  std::vector<R> want(count);
  CHECK(cudaMemcpy(got.data(), got_d, count * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(want.data(), want_d, count * sizeof(R), cudaMemcpyDeviceToHost));
  double max_diff = 0.0, max_want = 0.0;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t i = r * ld; i < r * ld + cols; ++i) {
      const double g = as_float(got[i]), w = as_float(want[i]);
      if (!std::isfinite(g)) return INFINITY;
      max_diff = std::max(max_diff, std::fabs(g - w));
      max_want = std::max(max_want, std::fabs(w));
    }
  }
  return max_want > 0.0 ? max_diff / max_want : max_diff;
}
template <class T, class R>
double relative_error(const T* got_d, const R* want_d, size_t count) {
  return relative_error(got_d, want_d, 1, count, count);
}

// A checked-only float32 problem with ragged M, N and K (not multiples of the tiles or of the
// 8-deep slice) on the 16-byte paths: rows padded to multiples of 4 elements (ld), as a caller's
// over-allocated matrices would be, so A and B rows stay 16-byte aligned.
struct RaggedCase {
  GemmParams p;  // C: the candidate's buffer
  float* ref;    // the reference product, same layout
  int64_t rows, cols, ld;
};

RaggedCase make_ragged(int64_t batch, int64_t m, int64_t n, int64_t k, uint32_t seed);

// One dtype's buffers: the timed 4096^3 problem with cuBLAS's product, the edge problem with the
// reference's, and an output buffer for the candidate.
template <class T>
struct Problem {
  GemmParams big, small, edge;  // small: the first kSmall^2 elements of big's buffers
  T* c_big;       // candidate output, big
  T* c_edge;      // candidate output, edge
  T* c_cublas;    // cuBLAS output, big
  float* c_ref;   // reference output, edge
  T* c_repeat;    // candidate output, big, second run (bitwise reproducibility)
  float cublas_ms, cublas_small_ms;
  double tolerance;
  std::vector<RaggedCase> ragged;  // float32 only: more checked-only problems
};

template <class T>
Problem<T> make_problem(cublasHandle_t h, double tolerance) {
  Problem<T> pr{};
  const size_t big = size_t(kBig) * kBig;
  T* a = random_device<T>(big, 1);
  T* b = random_device<T>(big, 2);
  CHECK(cudaMalloc(&pr.c_big, big * sizeof(T)));
  CHECK(cudaMalloc(&pr.c_cublas, big * sizeof(T)));
  pr.big = row_major(a, b, pr.c_big, 1, kBig, kBig, kBig);
  pr.tolerance = tolerance;
  // cuBLAS is column-major: row-major C = A B is column-major C^T = B^T A^T, operands swapped.
  const float one = 1.0f, zero = 0.0f;
  auto cublas = [&](int size, T* c) {
    if constexpr (std::is_same<T, float>::value) {
      CHECK_CUBLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &one, b, size, a, size, &zero, c, size));
    } else {
      CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &one, b, CUDA_R_16BF, size, a,
                                CUDA_R_16BF, size, &zero, c, CUDA_R_16BF, size, CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT));
    }
  };
  pr.cublas_ms = median_ms([&] { cublas(kBig, pr.c_cublas); });
  pr.small = row_major(a, b, pr.c_big, 1, kSmall, kSmall, kSmall);
  pr.cublas_small_ms = median_ms([&] { cublas(kSmall, pr.c_big); });  // c_cublas keeps the 4096^3 product

  const size_t ea = size_t(kEdgeBatch) * kEdgeM * kEdgeK, eb = size_t(kEdgeBatch) * kEdgeK * kEdgeN,
               ec = size_t(kEdgeBatch) * kEdgeM * kEdgeN;
  T* a_edge = random_device<T>(ea, 3);
  T* b_edge = random_device<T>(eb, 4);
  CHECK(cudaMalloc(&pr.c_edge, ec * sizeof(T)));
  CHECK(cudaMalloc(&pr.c_ref, ec * sizeof(float)));
  pr.edge = row_major(a_edge, b_edge, pr.c_edge, kEdgeBatch, kEdgeM, kEdgeN, kEdgeK);
  GemmParams ref = pr.edge;
  ref.c = pr.c_ref;
  reference_kernel<T><<<dim3((kEdgeN + 127) / 128, kEdgeM, kEdgeBatch), 128>>>(ref);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMalloc(&pr.c_repeat, big * sizeof(T)));
  if constexpr (std::is_same<T, float>::value) {
    // 528 tiles of 128x256 (4 whole waves on 132 SMs: nothing split); 480 (84 split at waves = 1);
    // a batch of 3 with 120 tiles, fewer than the blocks (all split); K below one slice.
    for (const auto& c : {std::vector<int64_t>{1, 4097, 4095, 1023}, std::vector<int64_t>{1, 3000, 5000, 777},
                          std::vector<int64_t>{3, 1000, 1100, 1012}, std::vector<int64_t>{2, 300, 515, 5}}) {
      pr.ragged.push_back(make_ragged(c[0], c[1], c[2], c[3], uint32_t(10 + pr.ragged.size())));
    }
  }
  return pr;
}

RaggedCase make_ragged(int64_t batch, int64_t m, int64_t n, int64_t k, uint32_t seed) {
  const int64_t lda = (k + 3) / 4 * 4, ldc = (n + 3) / 4 * 4;
  RaggedCase r{};
  float* a = random_device<float>(size_t(batch * m * lda), seed);
  float* b = random_device<float>(size_t(batch * k * ldc), seed + 100);
  float* c;
  CHECK(cudaMalloc(&c, size_t(batch * m * ldc) * sizeof(float)));
  CHECK(cudaMalloc(&r.ref, size_t(batch * m * ldc) * sizeof(float)));
  r.p = row_major(a, b, c, batch, m, n, k);
  r.p.sa = {m * lda, lda, 1};
  r.p.sb = {k * ldc, ldc, 1};
  r.p.sc = {m * ldc, ldc, 1};
  r.rows = batch * m;
  r.cols = n;
  r.ld = ldc;
  GemmParams ref = r.p;
  ref.c = r.ref;
  reference_kernel<float><<<dim3(unsigned((n + 127) / 128), unsigned(m), unsigned(batch)), 128>>>(ref);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  return r;
}

unsigned grid_for(const GemmParams& p, int tile_m, int tile_n) {
  return unsigned((p.m + tile_m - 1) / tile_m * ((p.n + tile_n - 1) / tile_n) * p.batch);
}

// gather: a second launch of the same kernel on its gather path, checked on the edge problem too
// (nullptr: none, float32).
template <class T, class Launch, class Gather = std::nullptr_t>
void report(const char* section, const char* name, const Problem<T>& pr, const void* kernel, int threads,
            int smem_bytes, Launch launch, Gather gather = nullptr) {
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, threads, smem_bytes));
  // Checks first (poisoned outputs: a tile the kernel skips stays NaN and fails).
  const size_t big = size_t(kBig) * kBig, edge = size_t(kEdgeBatch) * kEdgeM * kEdgeN;
  CHECK(cudaMemset(pr.c_big, 0xff, big * sizeof(T)));
  CHECK(cudaMemset(pr.c_edge, 0xff, edge * sizeof(T)));
  launch(pr.big);
  launch(pr.edge);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const double err_big = relative_error(pr.c_big, pr.c_cublas, big);
  double err_edge = relative_error(pr.c_edge, pr.c_ref, edge);
  if constexpr (!std::is_same<Gather, std::nullptr_t>::value) {
    CHECK(cudaMemset(pr.c_edge, 0xff, edge * sizeof(T)));
    gather(pr.edge);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    err_edge = std::max(err_edge, relative_error(pr.c_edge, pr.c_ref, edge));
  }
  for (const RaggedCase& r : pr.ragged) {
    CHECK(cudaMemset(r.p.c, 0xff, size_t(r.rows * r.ld) * sizeof(float)));
    launch(r.p);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    err_edge = std::max(err_edge, relative_error(static_cast<const float*>(r.p.c), r.ref, r.rows, r.cols, r.ld));
  }
  // Run to run: the big product again, bitwise.
  GemmParams again = pr.big;
  again.c = pr.c_repeat;
  launch(again);
  CHECK(cudaGetLastError());
  std::vector<T> first(big), second(big);
  CHECK(cudaMemcpy(first.data(), pr.c_big, big * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(second.data(), pr.c_repeat, big * sizeof(T), cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(first.data(), second.data(), big * sizeof(T)) == 0;
  const bool pass = err_big < pr.tolerance && err_edge < pr.tolerance && same;
  const float ms = median_ms([&] { launch(pr.big); });
  const float small_ms = median_ms([&] { launch(pr.small); });
  const double tflops = 2.0 * kBig * kBig * double(kBig) / (ms * 1e-3) / 1e12;
  printf("%-8s %-44s %8.4f %8.2f %7.3f %4d %5d %3d %9.2e %9.2e %-4s %s %8.4f %7.3f\n", section, name, ms, tflops,
         pr.cublas_ms / ms, attr.numRegs, int(attr.localSizeBytes), resident, err_big, err_edge, same ? "bit" : "DIFF",
         pass ? "PASS" : "FAIL", small_ms, pr.cublas_small_ms / small_ms);
}

void header(const char* section, float cublas_ms, float cublas_small_ms) {
  printf("\n%-8s %-44s %8s %8s %7s %4s %5s %3s %9s %9s %-4s %4s %8s %7s\n", "section", "config", "ms", "TFLOP/s",
         "xcuBLAS", "regs", "spill", "b/SM", "err4096", "err_edge", "rep", "", "ms1000", "x1000");
  printf("%-8s %-44s %8.4f %8.2f %7.3f %4s %5s %3s %9s %9s %-4s %4s %8.4f %7.3f\n", section, "cuBLAS", cublas_ms,
         2.0 * kBig * kBig * double(kBig) / (cublas_ms * 1e-3) / 1e12, 1.0, "", "", "", "", "", "", "", cublas_small_ms,
         1.0);
}

// ---- float32 warptile: BlockedConfig<TileM, TileN, TileK, FetchParts, WarpsM, WarpsN, ThreadN,
//      MinBlocks, PadA, GroupM> ----
template <class Cfg>
void warptile(const char* name, const Problem<float>& pr) {
  auto kernel = blocked_128_kernel<Blocked128Step::kWarptile, true, Cfg>;
  report("fp32", name, pr, reinterpret_cast<const void*>(kernel), Cfg::kThreads, 0, [&](const GemmParams& p) {
    kernel<<<grid_for(p, Cfg::kTileM, Cfg::kTileN), Cfg::kThreads>>>(p, INT64_MAX);  // every tile
  });
}

// ---- float32 warptile with a Stream-K last wave (warptile_streamk.cuh): a persistent grid of the
//      resident blocks; "w1" splits the tiles past the last whole wave, "w2" one wave more; "uN"
//      splits K in units of N slices; "streamk": one launch runs the split tiles first, then the
//      whole ones (StreamKMode::kSplitFirst); "hybrid": blocked_128_kernel runs the whole waves
//      (tile_end) and a Stream-K launch behind it only the split tiles (kSplitOnly). ----
struct StreamKBuffers {
  unsigned grid;          // resident blocks: SMs x blocks per SM
  float* partials;        // grid slots of a tile
  unsigned int* counters; // ticket and flags, zero between launches (the kernel resets them)
};

template <class Cfg>
StreamKBuffers streamk_buffers(int sms) {
  StreamKBuffers b{};
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, warptile_streamk_kernel<Cfg>, Cfg::kThreads, 0));
  b.grid = unsigned(sms * resident);
  CHECK(cudaMalloc(&b.partials, size_t(b.grid) * Cfg::kTileM * Cfg::kTileN * sizeof(float)));
  const size_t counters = 1 + 2 * size_t(b.grid);  // the ticket and at most two waves of split tiles
  CHECK(cudaMalloc(&b.counters, counters * sizeof(unsigned int)));
  CHECK(cudaMemset(b.counters, 0, counters * sizeof(unsigned int)));
  return b;
}

template <class Cfg>
void streamk(const char* name, const Problem<float>& pr, const StreamKBuffers& ws, int waves, int unit_slices,
             StreamKMode mode) {
  auto kernel = warptile_streamk_kernel<Cfg>;
  report("fp32", name, pr, reinterpret_cast<const void*>(kernel), Cfg::kThreads, 0, [&](const GemmParams& p) {
    const StreamKSchedule w = streamk_schedule<Cfg>(p, ws.grid, waves, unit_slices, mode, ws.partials, ws.counters);
    if (mode == StreamKMode::kSplitOnly && w.split_begin > 0) {
      blocked_128_kernel<Blocked128Step::kWarptile, true, Cfg><<<unsigned(w.split_begin), Cfg::kThreads>>>(p, w.split_begin);
    }
    kernel<<<ws.grid, Cfg::kThreads>>>(p, w);
  });
}

void sweep_float32(cublasHandle_t h, int sms) {
  const Problem<float> pr = make_problem<float>(h, 1e-4);
  header("fp32", pr.cublas_ms, pr.cublas_small_ms);
  warptile<Blocked128Base>("base 128x128x8 p1 w2x4 t8x8 b2 pad0 g1", pr);
  warptile<WarptileConfig>("large plain (WarptileConfig)", pr);
  warptile<WarptileSmallConfig>("small plain (WarptileSmallConfig)", pr);
  // Of the earlier sweeps' candidate tilings (docs/gemm.md, first and second sweeps) only the one
  // nearest the library's stays (A padded: the second sweep's best row, 0.859x), to keep the
  // float32 run short.
  warptile<BlockedConfig<128, 256, 8, 1, 2, 4, 16, 1, 4, 8>>("128x256x8 p1 w2x4 t8x16 b1 pad4 g8", pr);
  // Stream-K (4096^3: 512 tiles of 128x256 = 3.88 waves on 132 SMs, 1024 of 128x128 = 3.88 waves
  // of two blocks per SM; 1000^3: 32 / 64 tiles, all split). Session 12 run 1 (H200): one launch
  // with the split tiles first lost 3 % at 4096^3 (0.833-0.840x against 0.860-0.865x; units of
  // 4 / 16 slices, split tiles last, bands of 4 the same; two split waves 0.816-0.824x) and won at
  // 1000^3 (0.78x against 0.53x for the small tiling). Run 2: hybrid rows gain 0.5-1 % at 4096^3;
  // the library runs "hybrid small w1 u2" (0.873x / 0.869x; 1000^3 0.840x / 0.811x), the LIBRARY row.
  constexpr StreamKMode kFirst = StreamKMode::kSplitFirst, kOnly = StreamKMode::kSplitOnly;
  const StreamKBuffers ws = streamk_buffers<WarptileConfig>(sms);
  streamk<WarptileConfig>("streamk large w1 u1", pr, ws, 1, 1, kFirst);
  streamk<WarptileConfig>("hybrid large w1 u1", pr, ws, 1, 1, kOnly);
  streamk<WarptileConfig>("hybrid large w1 u4", pr, ws, 1, 4, kOnly);
  streamk<WarptileConfig>("hybrid large w2 u1", pr, ws, 2, 1, kOnly);
  const StreamKBuffers ws_small = streamk_buffers<WarptileSmallConfig>(sms);
  streamk<WarptileSmallConfig>("streamk small w1 u1", pr, ws_small, 1, 1, kFirst);
  streamk<WarptileSmallConfig>("hybrid small w1 u1", pr, ws_small, 1, 1, kOnly);
  static_assert(std::is_same<WarptileStreamK::Config, WarptileSmallConfig>::value, "the LIBRARY row");
  streamk<WarptileSmallConfig>("LIBRARY hybrid small w1 u2 (WarptileStreamK)", pr, ws_small, WarptileStreamK::kWaves,
                               WarptileStreamK::kUnitSlices, WarptileStreamK::kMode);
}

// The mma.sync ceiling: each warp issues kIters rounds of 32 independent m16n8k16 (a 64x64 warp
// tile's worth) on register operands, no loads at all; the bound that no mma.sync tiling passes.
__global__ void mma_ceiling_kernel(float* out, int iters) {
  const uint32_t one = 0x3f803f80u;  // two bfloat16 1.0
  const uint32_t a[4] = {one, one, one, one};
  float acc[4][8][4] = {};
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int j = 0; j < 8; ++j) ptx::mma_m16n8k16<true>(acc[i][j], a, one, one);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) sum += acc[i][j][0] + acc[i][j][1] + acc[i][j][2] + acc[i][j][3];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// 139 registers a thread: one block of 8 warps per SM at a time (as the 128x256 tiling), 4 waves.
void mma_ceiling(float cublas_ms, int sms) {
  constexpr int kThreads = 256, kIters = 4096;
  const int blocks = 4 * sms;
  float* out;
  CHECK(cudaMalloc(&out, size_t(blocks) * kThreads * sizeof(float)));
  const float ms = median_ms([&] { mma_ceiling_kernel<<<blocks, kThreads>>>(out, kIters); });
  CHECK(cudaFree(out));
  const double flops = 2.0 * 2048.0 * 32 * kIters * (kThreads / 32) * double(blocks);
  const double tflops = flops / (ms * 1e-3) / 1e12;
  // Scaled to the 4096^3 product: the time this rate would need, against cuBLAS's.
  const double ms_4096 = 2.0 * kBig * kBig * double(kBig) / (tflops * 1e12) * 1e3;
  printf("%-8s %-44s %8.4f %8.2f %7.3f  (ms: %d^3 at this rate)\n", "bf16", "mma.sync ceiling (no loads, 8 warps/SM)",
         ms_4096, tflops, cublas_ms / ms_4096, kBig);
}

// ---- bfloat16 mma_pipelined: MmaConfig<TileM, TileN, TileK, WarpsM, WarpsN, Stages, MinBlocks,
//      GroupM, SmemEpilogue, Mbarrier, RefillStep, FragPrefetch, Load, FragPipe, Serpentine, WholeSlices> ----
template <class Cfg, bool kAsync>
struct MmaLaunch {
  void operator()(const GemmParams& p) const {
    mma_pipelined_kernel<bfloat16_t, kAsync, Cfg><<<grid_for(p, Cfg::kTileM, Cfg::kTileN), Cfg::kThreads, Cfg::kSmemBytes>>>(p);
  }
};

template <class Cfg>
void mma(const char* name, const Problem<bfloat16_t>& pr) {
  CHECK((configure_mma_kernel<bfloat16_t, true, Cfg>()));
  CHECK((configure_mma_kernel<bfloat16_t, false, Cfg>()));
  report("bf16", name, pr, reinterpret_cast<const void*>(mma_pipelined_kernel<bfloat16_t, true, Cfg>), Cfg::kThreads,
         Cfg::kSmemBytes, MmaLaunch<Cfg, true>{}, MmaLaunch<Cfg, false>{});
}

void sweep_bfloat16(cublasHandle_t h, int sms) {
  const Problem<bfloat16_t> pr = make_problem<bfloat16_t>(h, 1e-2);
  header("bf16", pr.cublas_ms, pr.cublas_small_ms);
  mma_ceiling(pr.cublas_ms, sms);
  mma<MmaBase>("base 128x128x32 w2x4(64x32) s3 b2 g1 direct", pr);
  mma<MmaPipelinedConfig>("LIBRARY (MmaPipelinedConfig)", pr);
  mma<MmaPipelinedLargeConfig>("LIBRARY large (MmaPipelinedLargeConfig)", pr);
  // Third sweep (issue 6, against the per-slice block barrier; H200 session 10 run 4, where every
  // row passed): per-stage mbarriers instead of the block barrier ("mbar", the next slice's copies
  // issued at the top of 16-deep step r of a slice) gained up to 2.5 % (r3); the head of the next
  // slice's fragments prefetched before the last step's MMAs ("pf", spilling under the 128-register
  // cap), 32-deep slices and bulk copies of interior slices ("bulk", one row a thread into padded
  // rows) lost. docs/gemm.md has every row's numbers; these stay as evidence.
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, false, 0, true>>("128x128x64 s3 barrier pf", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 0, false>>("128x128x64 s3 mbar r0", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 1, false>>("128x128x64 s3 mbar r1", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 2, false>>("128x128x64 s3 mbar r2", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 3, false>>("128x128x64 s3 mbar r3", pr);
  mma<MmaConfig<128, 128, 32, 2, 4, 4, 2, 1, true, true, 1, false>>("128x128x32 s4 mbar r1", pr);
  constexpr MmaLoad kPad = MmaLoad::kPadded, kBulk = MmaLoad::kBulk;
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 2, false, kBulk>>("128x128x64 s3 mbar r2 bulk", pr);
  // Fourth sweep: against the "wait" stall that leads ncu's list (the A swizzle costs an XOR per
  // ldmatrix step; padded rows, "pad", make every step's address a constant offset from a row
  // base), and one block of 16 warps a SM: with mbarriers no block barrier stalls all of an SM's
  // warps any more, and a 256x128 or 128x256 tile cuts the copies per multiply-add by a quarter
  // (up to 4 stages fit).
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, false, 0, false, kPad>>("128x128x64 s3 barrier pad", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 2, false, kPad>>("128x128x64 s3 mbar r2 pad", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 3, false, kPad>>("128x128x64 s3 mbar r3 pad", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 3, 1, 1, true, true, 3, false>>("256x128x64 w4x4 s3 b1 mbar r3", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 3, 1, 1, true, true, 3, false, kPad>>("256x128x64 w4x4 s3 b1 mbar r3 pad", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, true, 3, false>>("256x128x64 w4x4 s4 b1 mbar r3", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, true, 3, false, kPad>>("256x128x64 w4x4 s4 b1 mbar r3 pad", pr);
  mma<MmaConfig<128, 256, 64, 2, 8, 4, 1, 1, true, true, 3, false, kPad>>("128x256x64 w2x8 s4 b1 mbar r3 pad", pr);
  // Three blocks of 4 warps a SM (12 warps, 170 registers a thread instead of 128: room for the
  // fragment prefetch and for ptxas to hoist ldmatrix), at the price of 128x64 tiles (half again
  // the copies per multiply-add).
  mma<MmaConfig<128, 64, 64, 2, 2, 3, 3, 1, true, true, 3, false>>("128x64x64 w2x2 s3 b3 mbar r3", pr);
  mma<MmaConfig<128, 64, 64, 2, 2, 3, 3, 1, true, true, 3, true>>("128x64x64 w2x2 s3 b3 mbar r3 pf", pr);
  mma<MmaConfig<128, 64, 64, 2, 2, 3, 3, 8, true, true, 3, true>>("128x64x64 w2x2 s3 b3 g8 mbar r3 pf", pr);
  // Fifth sweep: the inner loop, on the library's 128x128 kernel and on the 256x128 16-warp one
  // (the fourth sweep's best, "LIBRARY large" above). MmaConfig's last three options:
  //   "serp"  kSerpentine: odd m16 rows run right to left (operand reuse at every turn);
  //   "dbl"   MmaFragPipe::kDoubleStep: step s + 1's fragments loaded before step s's MMAs (two
  //           register sets; ptxas spills 20-24 bytes under the 128 cap, 1-2 reloads a slice);
  //   "ahead" MmaFragPipe::kRowAhead: each fragment loaded one m16 row of MMAs before its use,
  //           as many fragment registers as now (spills 8 bytes outside the K loop with padded rows; swizzled at
  //           128x128, 44 bytes with 7 reloads a slice);
  //   "whole" kWholeSlices: slices wholly inside the matrices copied by unconditional cp.async,
  //           one edge check a slice instead of a check and a gather branch a chunk.
  // Session 11 run 1 (H200): "whole" gained 15 % on both kernels; the library now runs
  // 128x128 "serp whole" (0.521x) and 256x128 "pad ahead serp whole" (0.552x): the LIBRARY rows.
  constexpr MmaLoad kSw = MmaLoad::kSwizzled;
  constexpr MmaFragPipe kStep = MmaFragPipe::kStep, kDbl = MmaFragPipe::kDoubleStep, kAhead = MmaFragPipe::kRowAhead;
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 3, false, kSw, kStep, true>>("128x128x64 s3 mbar r3 serp", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 3, false, kSw, kDbl>>("128x128x64 s3 mbar r3 dbl", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 3, false, kSw, kAhead>>("128x128x64 s3 mbar r3 ahead", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 3, false, kSw, kStep, false, true>>("128x128x64 s3 mbar r3 whole", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 3, false, kPad, kStep, true>>("128x128x64 s3 mbar r3 pad serp", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 3, false, kPad, kAhead>>("128x128x64 s3 mbar r3 pad ahead", pr);
  mma<MmaConfig<128, 128, 64, 2, 4, 3, 2, 1, true, true, 3, false, kPad, kAhead, true, true>>("128x128x64 s3 mbar r3 pad ahead serp whole", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, true, 3, false, kPad, kStep, true>>("256x128x64 w4x4 s4 b1 mbar r3 pad serp", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, true, 3, false, kPad, kDbl>>("256x128x64 w4x4 s4 b1 mbar r3 pad dbl", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, true, 3, false, kPad, kDbl, true>>("256x128x64 w4x4 s4 b1 mbar r3 pad dbl serp", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, true, 3, false, kPad, kAhead>>("256x128x64 w4x4 s4 b1 mbar r3 pad ahead", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, true, 3, false, kPad, kAhead, true>>("256x128x64 w4x4 s4 b1 mbar r3 pad ahead serp", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, true, 3, false, kPad, kStep, false, true>>("256x128x64 w4x4 s4 b1 mbar r3 pad whole", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, true, 3, false, kPad, kStep, true, true>>("256x128x64 w4x4 s4 b1 mbar r3 pad serp whole", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, true, 2, false, kPad, kStep, false, true>>("256x128x64 w4x4 s4 b1 mbar r2 pad whole", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 4, true, true, 3, false, kPad>>("256x128x64 w4x4 s4 b1 g4 mbar r3 pad", pr);
  // Not run yet (next candidates): the large LIBRARY kernel with the refill at step 2 ("r2 whole"
  // gained 2 % over r3 above) and with bands of 4 tile rows (+1.4 % on the plain kernel above).
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 1, true, true, 2, false, kPad, kAhead, true, true>>("256x128x64 w4x4 s4 b1 mbar r2 pad ahead serp whole", pr);
  mma<MmaConfig<256, 128, 64, 4, 4, 4, 1, 4, true, true, 3, false, kPad, kAhead, true, true>>("256x128x64 w4x4 s4 b1 g4 mbar r3 pad ahead serp whole", pr);
}

}  // namespace

// Arguments: "bf16" skips the float32 sweep (about 40 s of the run), "fp32" the bfloat16 one.
int main(int argc, char** argv) {
  const bool bf16_only = argc > 1 && std::string(argv[1]) == "bf16";
  const bool fp32_only = argc > 1 && std::string(argv[1]) == "fp32";
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs, %d KiB L2; %d^3 row-major, median of %d; xcuBLAS = cuBLAS ms / ms; "
         "err = max|C - C_want| / max|C_want| (err_edge: batch %d of %dx%dx%d vs a float32 reference)\n",
         prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1024, kBig, kReps, kEdgeBatch, kEdgeM, kEdgeN,
         kEdgeK);
  cublasHandle_t h;
  CHECK_CUBLAS(cublasCreate(&h));
  CHECK_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));  // no TF32 for cublasSgemm
  if (!bf16_only) sweep_float32(h, prop.multiProcessorCount);
  if (!fp32_only) sweep_bfloat16(h, prop.multiProcessorCount);
  CHECK_CUBLAS(cublasDestroy(h));
  return 0;
}
