// The held single-pass scan (held_lookback_scan_kernel.cuh: every tile read once and kept in
// shared memory by its block until its prefix is cheap to find) against cub::DeviceScan::InclusiveSum,
// the library's decoupled look-back and its lagged scan, in one program, on the same data: int32 and
// float32 inclusive sums of 2^28 items (two repetitions) and int32 at 2^31 + 17. Swept: the tile
// shape with the resident blocks it allows (two slots of a tile each) and the look-back window
// (32, 64, 128 tiles; the library takes 32).
// Every timed output is compared on the GPU with CUB's (int32 bitwise, float32 to 1e-3 relative);
// before timing (first repetition at 2^28) each candidate is checked on edge sizes, misaligned inputs
// and exclusive scans (scan_tune_common.cuh).
// `--wide`: int64 and float64 at 2^27 instead (run_wide).
// Build and run on the GPU machine (repo root):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/scan_held_tune.cu -o /tmp/sh && /tmp/sh [--wide]
#include <string>

#include "gpuprims/scan/held_lookback_scan_kernel.cuh"
#include "gpuprims/scan/lagged_lookback_scan_kernel.cuh"

#include "scan_tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::scan_detail;
using namespace scan_tune;

template <class T>
struct Lagged {
  static constexpr int64_t kTile = LookbackTile<T, T, Sum>::kTileItems;
  static void prepare() {}
  static void describe(char* s, size_t size) {
    describe_kernel(s, size, (const void*)lagged_lookback_scan_kernel<T, T, Sum>, kLookbackThreads, 0,
                    "lagged_lookback (library, L=384)");
  }
  static void launch(const Bench& b, int64_t n, int64_t offset, bool exclusive) {
    const TileLaunch<T> t(b, n, offset, kTile);
    const int64_t lag = std::min<int64_t>(kDefaultLag, t.tiles);
    lagged_lookback_scan_kernel<T, T, Sum><<<unsigned(lagged_tickets(t.tiles, lag, DefaultLagOptions::kSchedule)),
                                            kLookbackThreads>>>(t.in, static_cast<T*>(b.out), t.layout, t.tiles,
                                                                t.tiles, lag, t.counter, t.status, exclusive,
                                                                t.vector_ok);
  }
};

// The held scan: kThreads x kItems tiles, kMinBlocks resident blocks, a 32 * kPerLane window; the
// grid is the resident blocks (kGridPerSm > 0: that many blocks an SM instead).
template <class T, int kItems = 32, int kMinBlocks = kHeldScanMinBlocks, int kPerLane = kHeldScanPerLane,
          int kThreads = kLookbackThreads, int kGridPerSm = 0>
struct Held {
  static constexpr int64_t kTile = LookbackTile<T, T, Sum, kThreads, kItems>::kTileItems;
  static constexpr auto kernel = held_lookback_scan_kernel<T, T, Sum, kThreads, kItems, kMinBlocks, kPerLane>;
  static constexpr int kSmem = held_scan_smem_bytes<T, T, Sum, kThreads, kItems>();
  static inline int grid = 0;
  static void prepare() {
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    int resident = 0, sms = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, kSmem));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    grid = (kGridPerSm > 0 ? kGridPerSm : resident) * sms;
  }
  static void describe(char* s, size_t size) {
    char what[120];
    snprintf(what, sizeof(what), "held tile=%3dx%2d window=%3d grid=%d", kThreads, kItems, 32 * kPerLane, grid);
    describe_kernel(s, size, (const void*)kernel, kThreads, kSmem, what);
  }
  static void launch(const Bench& b, int64_t n, int64_t offset, bool exclusive) {
    const TileLaunch<T> t(b, n, offset, kTile);
    kernel<<<unsigned(std::min<int64_t>(grid, t.tiles)), kThreads, kSmem>>>(
        t.in, static_cast<T*>(b.out), t.layout, t.tiles, t.tiles, t.counter, t.status, exclusive, t.vector_ok);
  }
};

template <class T>
void run(int64_t n, int sms, int reps, bool all) {
  repeat_against_cub<T>(n, sms, reps, all, [all](const Bench& b, float cub_ms, bool edges) {
    time_candidate<T, Lagged<T>>(b, cub_ms, edges);
    // Session 43 device run 1 (H200): 64-tile windows beat 128 and 256 (1.18x CUB against 1.11x and
    // 0.99x), 256 x 32 tiles at 3 blocks/SM led 256 x 24 at 4 and 256 x 16 at 5, and a grid of 2
    // blocks/SM lost (0.95x). Run 2 (this sweep): the 32-tile window won everywhere (1.215-1.220x;
    // bench/results/h200/scan_held_s43r{1,2}.txt, docs/scan.md).
    time_candidate<T, Held<T, 32, 3, 2>>(b, cub_ms, edges);
    time_candidate<T, Held<T>>(b, cub_ms, edges);  // the library's: 32-tile window
    time_candidate<T, Held<T, 24, 4, 2>>(b, cub_ms, edges);
    time_candidate<T, Held<T, 24, 4, 1>>(b, cub_ms, edges);
    if (!all) return;
    time_candidate<T, Held<T, 32, 3, 4>>(b, cub_ms, edges);
    time_candidate<T, Held<T, 16, 5, 2>>(b, cub_ms, edges);
    time_candidate<T, Held<T, 16, 5, 1>>(b, cub_ms, edges);
  });
}

// 8-byte items and results (int64, float64): the held scan's 16-item tiles at 2 blocks/SM (the
// library's: 3 spilled 8-80 bytes) ran 0.92-0.95x the look-back for int64 and 1.18-1.21x for float64
// at 2^26-2^28, both below torch.cumsum (CUB) for float64 (session 43 device runs 4-5,
// bench/tune/scan_held_dtypes.py). This sweep (`--wide`) sets the tile and the resident blocks
// against CUB in one program: session 44 runs 1 and 5 (docs/scan.md, "64-bit scans") found the
// status words, not the tile, holding them back, and chose 12 x 4.
template <class T>
void run_wide(int64_t n, int sms, int reps) {
  repeat_against_cub<T>(n, sms, reps, true, [](const Bench& b, float cub_ms, bool edges) {
    time_candidate<T, LibraryLookback<T>>(b, cub_ms, edges);
    time_candidate<T, Held<T, 16, 2>>(b, cub_ms, edges);
    time_candidate<T, Held<T, 16, 3>>(b, cub_ms, edges);
    time_candidate<T, Held<T, 12, 3>>(b, cub_ms, edges);
    time_candidate<T, Held<T, 12, 4>>(b, cub_ms, edges);  // the library's
    time_candidate<T, Held<T, 8, 4>>(b, cub_ms, edges);
    time_candidate<T, Held<T, 8, 6>>(b, cub_ms, edges);
  });
}

int main(int argc, char** argv) {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (argc > 1 && std::string(argv[1]) == "--wide") {
    run_wide<int64_t>(int64_t(1) << 27, sms, 2);
    run_wide<double>(int64_t(1) << 27, sms, 2);
    return 0;
  }
  run<int32_t>(int64_t(1) << 28, sms, 2, true);
  run<float>(int64_t(1) << 28, sms, 2, true);
  run<int32_t>((int64_t(1) << 31) + 17, sms, 1, false);
  return 0;
}
