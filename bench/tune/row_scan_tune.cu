// Row scans (docs/scan.md, "Row scans"): float32 inclusive sums along the last axis, timed like the
// library benchmark (calls back to back, two rotated inputs), against a device-to-device copy of
// 1 GiB (the benchmark's ceiling) and copies of the same bytes (the size's own ceiling).
// Part 1, 4096 x 8192: the copies, the library's warp_per_row and block_per_row kernels, and the
// warp-per-row forms measured against them in session 13 (device runs 1-3; table in docs/scan.md):
// the software-pipelined walk (next step loaded before the current one is scanned and stored).
// Part 2: the two library kernels over row lengths 256 .. 131072 at 2^25 items (128 MiB), for the
// "auto" rule. Every output is checked against a float64 scan of its row.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/row_scan_tune.cu -o /tmp/row_scan_tune && /tmp/row_scan_tune
#include <cmath>
#include <cstdio>

#include "gpuprims/scan/row_scans.cuh"

#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::scan_detail;

namespace {

constexpr int64_t kItems = int64_t(1) << 25;  // 128 MiB of float32 per array
constexpr int kInputs = 2;                    // 2 x 128 MiB: no call finds its input in the 60 MiB L2

__global__ void fill(float* p, int64_t n, unsigned seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = float(int(((i + seed) * 2654435761u >> 9) % 2001) - 1000) / 256.0f;
}

// A thread per row, float64: the reference scan; counts items off by more than float32's sum bound.
__global__ void count_bad(const float* x, const float* y, int64_t rows, int64_t len, unsigned long long* bad) {
  const int64_t row = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (row >= rows) return;
  double sum = 0, abs_sum = 0;
  unsigned long long mine = 0;
  for (int64_t i = 0; i < len; ++i) {
    sum += x[row * len + i];
    abs_sum += fabs(double(x[row * len + i]));
    mine += !(fabs(double(y[row * len + i]) - sum) <= 1e-5 * abs_sum + 1e-6);
  }
  if (mine) atomicAdd(bad, mine);
}

// The pipelined warp walk: a warp goes through the flat sequence of (row, step) pairs it owns and
// loads pair k+1 (its row's next step, or its next row's first) into a second tile before it scans
// and stores pair k.
template <int kThreads, int kItemsPerLane>
__global__ void __launch_bounds__(kThreads) pipelined_kernel(const float* __restrict__ in, float* __restrict__ out,
                                                              ScanLayout layout) {
  using Tile = StripedTile<float, float, Sum, kWarpSize, kItemsPerLane>;
  const ScanOperator<Sum> op;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t warps = int64_t(gridDim.x) * (kThreads / kWarpSize);
  const int64_t steps_per_row = (layout.len + Tile::kTileItems - 1) / Tile::kTileItems;
  int64_t row = int64_t(blockIdx.x) * (kThreads / kWarpSize) + threadIdx.x / kWarpSize;
  if (row >= layout.rows) return;
  int64_t step = 0, in_offset, out_offset;
  layout.row_offsets(row, &in_offset, &out_offset);
  float carry = 0.0f;
  // Called with the two tiles alternating, so both stay in registers.
  const auto advance = [&](Tile& cur, Tile& next) {
    int64_t next_row = row, next_step = step + 1;
    if (next_step == steps_per_row) {
      next_row = row + warps;
      next_step = 0;
    }
    int64_t next_in = in_offset, next_out = out_offset;
    if (next_row != row && next_row < layout.rows) layout.row_offsets(next_row, &next_in, &next_out);
    if (next_row < layout.rows) next.load(in + next_in, 1, next_step * Tile::kTileItems, layout.len, true, 0, lane);
    const float total = cur.scan_warp(lane);
    cur.store(out + out_offset, 1, step * Tile::kTileItems, layout.len, true, carry, false, false, 0, lane);
    carry = next_row == row ? op(carry, total) : 0.0f;
    row = next_row;
    step = next_step;
    in_offset = next_in;
    out_offset = next_out;
    return row < layout.rows;
  };
  Tile a, b;
  a.load(in + in_offset, 1, 0, layout.len, true, 0, lane);
  while (advance(a, b) && advance(b, a)) {
  }
}

// Copies of the same bytes: each warp streaming its own rows, and a grid-stride sweep.
__global__ void __launch_bounds__(128) row_copy_kernel(const float4* __restrict__ in, float4* __restrict__ out,
                                                        int64_t rows, int64_t vecs_per_row) {
  const int lane = threadIdx.x % kWarpSize;
  const int64_t warps = int64_t(gridDim.x) * (128 / kWarpSize);
  for (int64_t row = int64_t(blockIdx.x) * (128 / kWarpSize) + threadIdx.x / kWarpSize; row < rows; row += warps)
    for (int64_t v = lane; v < vecs_per_row; v += kWarpSize) out[row * vecs_per_row + v] = in[row * vecs_per_row + v];
}

__global__ void flat_copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

ScanLayout rows_of(int64_t len) {
  ScanLayout l;
  l.len = len;
  l.rows = kItems / len;
  l.row_ndim = 1;
  l.row_shape[0] = l.rows;
  l.row_in_strides[0] = len;
  l.row_out_strides[0] = len;
  return l;
}

struct Buffers {
  float* in[kInputs];
  float* out;
  unsigned long long* bad;
  float copy_gbps;  // cudaMemcpy of 1 GiB, bytes read + written
  int sms;
};

// Two medians of 30 back-to-back calls, as % of the 1 GiB copy; `check` verifies the output first.
template <class Launch>
void row(const char* label, const Buffers& b, const ScanLayout& l, bool check, Launch launch) {
  tune::running = label;
  unsigned long long bad = 0;
  if (check) {
    CHECK(cudaMemset(b.out, 0xff, kItems * sizeof(float)));  // poison: NaN
    CHECK(cudaMemset(b.bad, 0, sizeof(unsigned long long)));
    launch(b.in[0]);
    CHECK(cudaGetLastError());
    count_bad<<<unsigned((l.rows + 127) / 128), 128>>>(b.in[0], b.out, l.rows, l.len, b.bad);
    CHECK(cudaMemcpy(&bad, b.bad, sizeof bad, cudaMemcpyDeviceToHost));
  }
  float ms[2];
  for (float& m : ms) m = tune::median_ms_back_to_back([&](int i) { launch(b.in[i % kInputs]); });
  const double bytes = 2.0 * kItems * sizeof(float);
  std::printf("%6lld x %-6lld %-52s %8.4f %8.4f ms  %5.1f %% / %5.1f %% of copy  %s\n", (long long)l.rows,
              (long long)l.len, label, ms[0], ms[1], 100 * bytes / ms[0] / 1e6 / b.copy_gbps,
              100 * bytes / ms[1] / 1e6 / b.copy_gbps, !check ? "" : bad ? "MISMATCH" : "ok");
  if (bad) std::printf("  %llu items off\n", bad);
}

// The library's two row kernels, launched as cpp/src/scan/variant_{row_scans,block_per_row}.cu do.
void warp_per_row_row(const Buffers& b, const ScanLayout& l) {
  const unsigned blocks = unsigned(std::min<int64_t>((l.rows + 7) / 8, int64_t(b.sms) * 32));
  row("library warp_per_row", b, l, true, [&](const float* in) {
    warp_per_row_kernel<float, float, Sum><<<blocks, kRowScanThreads>>>(in, b.out, l, false, true);
  });
}

template <int kThreads>
void block_per_row_row(const char* label, const Buffers& b, const ScanLayout& l, int64_t blocks) {
  row(label, b, l, true, [&](const float* in) {
    block_per_row_kernel<float, float, Sum, kThreads><<<unsigned(blocks), kThreads>>>(in, b.out, l, false, true);
  });
}

void block_per_row_library(const Buffers& b, const ScanLayout& l) {
  if (l.len <= 256 * 16) block_per_row_row<256>("library block_per_row (256 threads)", b, l, l.rows);
  else block_per_row_row<512>("library block_per_row (512 threads)", b, l, l.rows);
}

template <int kThreads, int kItemsPerLane>
void pipelined_row(const char* label, const Buffers& b, const ScanLayout& l) {
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, pipelined_kernel<kThreads, kItemsPerLane>, kThreads, 0));
  const unsigned blocks = unsigned(std::min<int64_t>(l.rows / (kThreads / 32), int64_t(b.sms) * resident));
  row(label, b, l, true, [&](const float* in) { pipelined_kernel<kThreads, kItemsPerLane><<<blocks, kThreads>>>(in, b.out, l); });
}

}  // namespace

int main() {
  Buffers b;
  CHECK(cudaDeviceGetAttribute(&b.sms, cudaDevAttrMultiProcessorCount, 0));
  for (int i = 0; i < kInputs; ++i) {
    CHECK(cudaMalloc(&b.in[i], kItems * sizeof(float)));
    fill<<<1024, 256>>>(b.in[i], kItems, 977u * i);
  }
  CHECK(cudaMalloc(&b.out, kItems * sizeof(float)));
  CHECK(cudaMalloc(&b.bad, sizeof(unsigned long long)));
  {
    void *src, *dst;
    const size_t bytes = size_t(1) << 30;
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaMalloc(&dst, bytes));
    CHECK(cudaMemset(src, 1, bytes));
    const float ms =
        tune::median_ms_back_to_back([&](int) { CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); });
    b.copy_gbps = float(2.0 * bytes / ms / 1e6);
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
  }
  std::printf("float32 row scans of 2^25 items, copy ceiling (cudaMemcpy, 1 GiB) %.0f GB/s; two medians of 30\n",
              b.copy_gbps);

  const ScanLayout l = rows_of(8192);
  row("cudaMemcpyAsync of the 128 MiB", b, l, false, [&](const float* in) {
    CHECK(cudaMemcpyAsync(b.out, in, kItems * sizeof(float), cudaMemcpyDeviceToDevice));
  });
  row("grid-stride 16-byte copy, 4 x 256-thread blocks/SM", b, l, false, [&](const float* in) {
    flat_copy_kernel<<<b.sms * 4, 256>>>(reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(b.out),
                                         kItems / 4);
  });
  row("warp-per-row copy (no scan)", b, l, false, [&](const float* in) {
    row_copy_kernel<<<unsigned(l.rows / 4), 128>>>(reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(b.out),
                                                   l.rows, l.len / 4);
  });
  warp_per_row_row(b, l);
  pipelined_row<256, 4>("pipelined warp walk, 256 thr, 4 items a lane", b, l);
  block_per_row_row<256>("block_per_row 256 threads (2 tiles a row)", b, l, l.rows);
  block_per_row_row<512>("block_per_row 512 threads", b, l, l.rows);
  block_per_row_row<512>("block_per_row 512 threads, 2 waves persistent", b, l, int64_t(b.sms) * 4);

  std::printf("\nrow lengths at 2^25 items\n");
  for (int64_t len = 256; len <= (int64_t(1) << 17); len *= 2) {
    const ScanLayout s = rows_of(len);
    warp_per_row_row(b, s);
    block_per_row_library(b, s);
  }
  return 0;
}
