// row_on_chip's ragged kernels on rows that lie back to back (contiguous rows of odd length), read
// in place ("ragged") against the same kernels staged through shared memory (StagedRuns<stages,
// run bytes>, row_staged.cuh: algorithm "row_staged"), softmax / layer_norm / rms_norm, bfloat16
// and float32, on the library's tile for each length (row_on_chip_launch.cuh's choice). 2^26
// elements a case (128 / 256 MiB of x: beyond L2). "%copy" = a 16-byte copy of x and y's bytes
// over the kernel's time. Every staged output is compared with the ragged kernel's: they must be
// bit for bit the same (MISMATCH otherwise). Median of 30 CUDA-event timings after 3 warm-ups.
// Build and run on the GPU machine (about 2 minutes of nvcc):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/norms_staged_tune.cu -o /tmp/staged_tune && /tmp/staged_tune
#include <cstdint>
#include <cstdio>
#include <string>

#include "../../cpp/src/norms/row_on_chip_launch.cuh"  // BlockTile: the library's tiles

#include "norms_tune_data.cuh"
#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::norms;

struct Buffers {
  void* x;
  void* y;
  void* want;
  void* weight;
  void* bias;
  unsigned* stats;
  int sms;
  float copy_ms;
};

template <class T, RowKind kKind, class Cfg, class Staged>
float run_case(const Buffers& b, const NormParams& p, bool check, const char* label) {
  const auto kernel = &row_on_chip_kernel<T, kKind, Cfg, true, false, T, true, Staged>;
  size_t smem = 0;
  int64_t blocks = (p.layout.num_rows + Cfg::kRowsPerBlock - 1) / Cfg::kRowsPerBlock;
  if constexpr (!std::is_void<Staged>::value) {
    smem = Staged::template shared_bytes<T, Cfg>(p.layout.row_len);
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Cfg::kThreads, smem));
    blocks = std::min<int64_t>(Staged::template runs<T, Cfg>(p.layout), int64_t(per_sm) * b.sms);
  }
  const auto launch = [&] {
    kernel<<<unsigned(blocks), Cfg::kThreads, smem>>>(p);
    CHECK(cudaGetLastError());
  };
  tune::running = label;
  const float ms = tune::median_ms(launch);
  if (check) {
    const int64_t n = p.layout.num_rows * p.layout.row_len;
    const BufferDiff d = compare_buffers<T>(p.y, b.want, n, b.stats, b.sms);
    if (d.abs != 0 || d.a_nans != d.b_nans) std::printf("MISMATCH %s: max |diff| %g, NaNs %u / %u\n", label, d.abs, d.a_nans, d.b_nans);
  }
  return ms;
}

template <class T, RowKind kKind, class Cfg>
void sweep_tile(const Buffers& b, int64_t n, const char* op, bool log, bool center, bool weight, bool bias) {
  const int64_t rows = (int64_t(1) << 26) / n;
  NormParams p = contiguous_rows_params(b.x, b.y, weight ? b.weight : nullptr, bias ? b.bias : nullptr, rows, n, log, center);
  p.vec_ok = false;
  p.ragged = true;
  const double gb = double(rows * n) * 2 * sizeof(T);
  const auto line = [&](const char* what, float ms) {
    std::printf("  %-12s %-9s n=%-5lld %-14s %.4f ms  %5.1f %%copy\n", op, dtype_label<T>(), (long long)n, what, ms,
                100.0 * b.copy_ms * (gb / (double(1 << 30) * 2)) / ms);
  };
  NormParams want = p;
  want.y = b.want;
  std::string label = std::string(op) + " " + dtype_label<T>() + " n=" + std::to_string(n);
  line("ragged", run_case<T, kKind, Cfg, void>(b, want, false, label.c_str()));
  line("staged 2x4K", run_case<T, kKind, Cfg, StagedRuns<2, 4096>>(b, p, true, label.c_str()));
  line("staged 2x8K", run_case<T, kKind, Cfg, StagedRuns<2, 8192>>(b, p, true, label.c_str()));
  line("staged 2x16K", run_case<T, kKind, Cfg, StagedRuns<2, 16384>>(b, p, true, label.c_str()));
}

// The library's tile for rows of n elements (row_on_chip_launch.cuh, run_row_on_chip), n <= 4096.
template <class T, RowKind kKind>
void sweep_length(const Buffers& b, int64_t n, const char* op, bool log, bool center, bool weight, bool bias) {
  constexpr bool kHalf = sizeof(T) == 2;
  const auto sweep = [&](auto tile) {
    sweep_tile<T, kKind, typename decltype(tile)::type>(b, n, op, log, center, weight, bias);
  };
  if (n <= 64) sweep(BlockTile<T, kKind, false, 4, 32, 16>{});
  else if (n <= 128) sweep(BlockTile<T, kKind, false, 8, 16, 16>{});
  else if (n <= 256) sweep(std::conditional_t<kHalf, BlockTile<T, kKind, false, 8, 16, 32>, BlockTile<T, kKind, false, 16, 8, 16>>{});
  else if (n <= 512) sweep(std::conditional_t<kHalf, BlockTile<T, kKind, false, 16, 8, 32>, BlockTile<T, kKind, false, 32, 4, 16>>{});
  else if (n <= 1024) sweep(BlockTile<T, kKind, false, 32, 4>{});
  else if (n <= 2048) sweep(BlockTile<T, kKind, false, 64>{});
  else sweep(BlockTile<T, kKind, false, 128>{});
}

template <class T, RowKind kKind>
void sweep_kind(const Buffers& b, const char* op, bool log, bool center, bool weight, bool bias) {
  for (int64_t n : {33, 63, 77, 100, 129, 197, 257, 300, 577, 1001, 2047, 4095}) {
    sweep_length<T, kKind>(b, n, op, log, center, weight, bias);
  }
}

template <class T>
void sweep_dtype(Buffers b) {
  fill_random<T><<<b.sms * 8, 256>>>(static_cast<T*>(b.x), int64_t(1) << 26, 1, -3.0f, 3.0f);
  fill_random<T><<<b.sms * 8, 256>>>(static_cast<T*>(b.weight), 1 << 16, 2, 0.5f, 1.5f);
  fill_random<T><<<b.sms * 8, 256>>>(static_cast<T*>(b.bias), 1 << 16, 3, -1.0f, 1.0f);
  CHECK(cudaGetLastError());
  sweep_kind<T, RowKind::kSoftmax>(b, "softmax", false, true, false, false);
  sweep_kind<T, RowKind::kNorm>(b, "layer_norm", false, true, true, true);
  sweep_kind<T, RowKind::kNorm>(b, "rms_norm", false, false, true, false);
}

int main() {
  Buffers b{};
  int dev = 0;
  CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  b.sms = prop.multiProcessorCount;
  const size_t bytes = (size_t(1) << 26) * 4 + 64;
  CHECK(cudaMalloc(&b.x, bytes));
  CHECK(cudaMalloc(&b.y, bytes));
  CHECK(cudaMalloc(&b.want, bytes));
  CHECK(cudaMalloc(&b.weight, 1 << 18));
  CHECK(cudaMalloc(&b.bias, 1 << 18));
  CHECK(cudaMalloc(&b.stats, 16));
  // The ceiling: 2^30 bytes read and written by 16-byte copies (the case's bytes scale it).
  {
    void *in, *out;
    CHECK(cudaMalloc(&in, size_t(1) << 30));
    CHECK(cudaMalloc(&out, size_t(1) << 30));
    const int64_t vecs = (int64_t(1) << 30) / 16;
    b.copy_ms = tune::median_ms([&] {
      copy_kernel<<<b.sms * 8, 256>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out), vecs);
    });
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
  }
  std::printf("%s, copy %.0f GB/s\n", prop.name, 2.0 * double(1 << 30) / b.copy_ms / 1e6);
  for (int pass = 0; pass < 1; ++pass) {
    std::printf("pass %d\n", pass + 1);
    sweep_dtype<bfloat16_t>(b);
    sweep_dtype<float>(b);
  }
  return 0;
}
