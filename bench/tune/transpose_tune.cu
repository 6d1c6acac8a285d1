// Where register_blocks' speed comes from (docs/transpose.md): the library's packed_tile_kernel and
// register_block_kernel (words on both sides) next to ablations of the latter, on 2-D transposes of
// 1-, 2-, 4- and 8-byte elements of 256-512 MiB. "registers only" transposes each thread's kPack x
// kPack block with shifts and masks and checks bounds on every word; "+ interior" adds the
// unchecked path for tiles inside the array; "+ permutes" the byte permutes without it; "library"
// has both. Each candidate is checked bitwise against packed, packed against the host on a sample;
// the register count of each is printed (the ablations' code differs from the library's in how
// the compiler allocates, not only in the two refinements). Timing: median of 30 CUDA-event
// timings after 3 warm-ups (tune::median_ms); % of a 1 GiB cudaMemcpy of the same run.
// Session 55 run 4 (H200, this file as committed; bench/results/h200/transpose_tune_s55r4.txt),
// % of copy, packed / registers only / + interior / + permutes / library: float32 16384 x 8192
// 68.2 / 93.8 / 94.0 / 94.0 / 93.8; bfloat16 16384 x 8192 55.8 / 91.6 / 91.7 / 91.7 / 91.5; uint8
// 16384^2 32.2 / 74.4 / 85.1 / 77.1 / 85.2; float64 4096 x 8192 91.7 / 91.3 / 91.6 / 92.2 / 92.1.
// The block transposition is the step for every size below 8 bytes; for bytes the bounds checks
// cost a further 11 points. The first register-block form (an earlier experiment program, runs 1
// and 2: bench/results/h200/transpose_experiment_s55r12.txt) read uint8 at 55.8 %; it also walked
// tiles in bands of 4-64 tile rows (to keep both sides' DRAM pages warm): within 1 % of the plain
// order for every size but float64 (2-3 % slower), so the plain order stayed.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a -Icpp/include -Icpp/src bench/tune/transpose_tune.cu -o /tmp/tt && /tmp/tt
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gpuprims/transpose/transpose_kernels.cuh"

#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::transpose_detail;

// register_block_kernel (words on both sides) with its refinements switchable: kInterior
// (unchecked interior tiles) and kPermutes (transpose_block's byte permutes, else
// transpose_block_by_shifts).
template <class E, class W, bool kInterior, bool kPermutes>
__global__ void __launch_bounds__(kTile * kRows) ablation_kernel(TileParams p) {
  constexpr int kPack = sizeof(W) / sizeof(E);
  constexpr int kSpan = kTile * kPack;
  constexpr int kBlocks = kTile / kRows;
  constexpr int kSwizzle = 128 / sizeof(W);
  __shared__ W tile[kSpan][kTile];
  const auto column = [](int row, int c) { return c ^ ((row / kPack) % kSwizzle); };
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const TileAt at = tile_at(p, t, kSpan, kSpan);
    const bool interior = kInterior && at.i0 + kSpan <= p.ni && at.j0 + kSpan <= p.nj;
    const int64_t i = at.i0 + int64_t(tx) * kPack, j_first = at.j0 + ty * kPack;
    const E* from = static_cast<const E*>(p.src) + i + j_first * p.src_j;
    W words[kBlocks][kPack];
    const auto load_rows = [&](auto load) {  // separate unrolled loops per path, as the library's
#pragma unroll
      for (int b = 0; b < kBlocks; ++b) {
#pragma unroll
        for (int e = 0; e < kPack; ++e) words[b][e] = load(b * kRows * kPack + e);
      }
    };
    if (interior) {
      load_rows([&](int step) { return *reinterpret_cast<const W*>(from + step * p.src_j); });
    } else {
      load_rows([&](int step) {
        const bool inside = i < p.ni && j_first + step < p.nj;
        return load_word<E, W, true>(from + step * p.src_j, 1, inside ? p.ni - i : 0);
      });
    }
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) {
      W runs[kPack];
      if constexpr (kPermutes) transpose_block<E, W>(words[b], runs); else transpose_block_by_shifts<E, W>(words[b], runs);
#pragma unroll
      for (int e = 0; e < kPack; ++e) tile[tx * kPack + e][column(tx * kPack + e, ty + b * kRows)] = runs[e];
    }
    __syncthreads();
    const int64_t j = at.j0 + int64_t(tx) * kPack, i_first = at.i0 + ty;
    E* to = static_cast<E*>(p.dst) + i_first * p.dst_i + j;
    if (interior) {
#pragma unroll
      for (int step = 0; step < kSpan; step += kRows) {
        *reinterpret_cast<W*>(to + step * p.dst_i) = tile[ty + step][column(ty + step, tx)];
      }
    } else {
#pragma unroll
      for (int step = 0; step < kSpan; step += kRows) {
        const W word = tile[ty + step][column(ty + step, tx)];
        if (i_first + step < p.ni && j < p.nj) store_word<E, W, true>(to + step * p.dst_i, 1, word, p.nj - j);
      }
    }
    __syncthreads();
  }
}

// x: rows x cols, row-major (the source is dense along i = its columns); out = x.T.
TileParams transpose_2d(const void* x, void* out, int64_t rows, int64_t cols, int64_t span) {
  TileParams p{};
  p.src = x;
  p.dst = out;
  p.ni = cols;
  p.nj = rows;
  p.src_i = 1;
  p.src_j = cols;
  p.dst_i = rows;
  p.dst_j = 1;
  p.tiles_i = (p.ni + span - 1) / span;
  p.tiles_j = (p.nj + span - 1) / span;
  p.tiles = p.tiles_i * p.tiles_j;
  p.div_tiles_i = FastDivmod64(p.tiles_i);
  p.div_tile_rows = FastDivmod64(p.tiles);
  return p;
}

template <class E, class W>
void run_case(const char* name, int64_t rows, int64_t cols, double copy_gbps) {
  const size_t n = size_t(rows) * cols, bytes = n * sizeof(E);
  std::vector<E> host(n);
  uint64_t s = 0x9E3779B97F4A7C15ull ^ n;
  for (auto& v : host) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v = E(s >> 17);
  }
  E *x, *want, *got;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&want, bytes));
  CHECK(cudaMalloc(&got, bytes));
  CHECK(cudaMemcpy(x, host.data(), bytes, cudaMemcpyHostToDevice));
  constexpr int64_t kSpan = kTile * int64_t(sizeof(W) / sizeof(E));
  const TileParams to_want = transpose_2d(x, want, rows, cols, kSpan), to_got = transpose_2d(x, got, rows, cols, kSpan);
  const dim3 block(kTile, kRows);
  tune::running = name;
  packed_tile_kernel<E, W><<<unsigned(to_want.tiles), block>>>(to_want);
  CHECK(cudaDeviceSynchronize());
  std::vector<E> out(n), ref(n);
  CHECK(cudaMemcpy(ref.data(), want, bytes, cudaMemcpyDeviceToHost));
  for (size_t k = 0; k < n; k += 977) {
    if (ref[(k % cols) * rows + k / cols] != host[k]) std::printf("%s: packed differs from the host at %zu\n", name, k);
  }
  const double gb = 2.0 * bytes / 1e9;
  const auto report = [&](const char* label, void (*kernel)(TileParams), const TileParams& p, bool check) {
    if (check) {
      CHECK(cudaMemset(got, 0x5A, bytes));
      kernel<<<unsigned(p.tiles), block>>>(p);
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpy(out.data(), got, bytes, cudaMemcpyDeviceToHost));
    }
    const float ms = tune::median_ms([&] { kernel<<<unsigned(p.tiles), block>>>(p); });
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, kernel));
    std::printf("%-24s %-16s %3d regs %8.4f ms %7.0f GB/s %6.1f %% %s\n", name, label, attr.numRegs, ms, gb / ms * 1e3,
                100 * gb / ms * 1e3 / copy_gbps, check && std::memcmp(out.data(), ref.data(), bytes) ? "MISMATCH" : "");
  };
  report("packed", packed_tile_kernel<E, W>, to_want, false);
  report("registers only", ablation_kernel<E, W, false, false>, to_got, true);
  report("+ interior", ablation_kernel<E, W, true, false>, to_got, true);
  report("+ permutes", ablation_kernel<E, W, false, true>, to_got, true);
  report("library", register_block_kernel<E, W, true, true>, to_got, true);
  CHECK(cudaFree(x));
  CHECK(cudaFree(want));
  CHECK(cudaFree(got));
}

int main() {
  const size_t bytes = size_t(1) << 30;
  void *a, *b;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMemset(a, 1, bytes));
  const float ms = tune::median_ms([&] { CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
  const double copy = 2.0 * bytes / 1e9 / ms * 1e3;
  std::printf("cudaMemcpy 1 GiB: %.0f GB/s\n", copy);
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  run_case<uint32_t, uint64_t>("float32 8192x8192", 8192, 8192, copy);
  run_case<uint32_t, uint64_t>("float32 16384x8192", 16384, 8192, copy);
  run_case<uint16_t, uint64_t>("bfloat16 16384x8192", 16384, 8192, copy);
  run_case<uint16_t, uint64_t>("bfloat16 8192x16384", 8192, 16384, copy);
  run_case<uint8_t, uint32_t>("uint8 16384x16384", 16384, 16384, copy);
  run_case<uint64_t, uint64_t>("float64 4096x8192", 4096, 8192, copy);
  return 0;
}
