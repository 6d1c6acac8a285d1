// The lagged single-pass scan (lagged_lookback_scan_kernel.cuh: every tile read from DRAM for its
// aggregate and again from L2, L tickets later, for its scan) against cub::DeviceScan::InclusiveSum
// and the library's decoupled look-back, in one program, on the same data: int32 and float32
// inclusive sums of 2^28 items (two repetitions) and int32 at 2^31 + 17. Swept: the lag L, the
// schedule (A then B in one block, or A and B as separate blocks), the cache hints, the tile shape,
// resident blocks and the look-back window. Session 12 device run 1 swept a wider set (L 64-1024,
// no hints, 5 blocks/SM, an overlapped schedule, walk before reload) at commit 8a35041;
// this version sweeps around its winner (docs/scan.md).
// Every timed output is compared on the GPU with CUB's (int32 bitwise, float32 to 1e-3 relative);
// before timing (first repetition at 2^28) each candidate is checked on edge sizes (1, 2, 1000,
// tile +-1, 3 tiles +-1, 1000 tiles + 1, 4097 tiles - 1; aligned and misaligned inputs; inclusive and
// exclusive against cub::DeviceScan::ExclusiveSum).
// Build and run on the GPU machine (repo root):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/scan_lagged_tune.cu -o /tmp/sl && /tmp/sl
#include "gpuprims/scan/lagged_lookback_scan_kernel.cuh"

#include "scan_tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::scan_detail;
using namespace scan_tune;

// Schedules and cache hints: A's loads L2::evict_last, B's reloads L2::evict_first past L1, stores
// st.global.cs (the library's default, DefaultLagOptions, is the split schedule).
using Split = DefaultLagOptions;
using Hinted = LagOptions<LagSchedule::kAThenB, LoadPolicy::kL2EvictLast, LoadPolicy::kL2EvictFirst, StorePolicy::kStreaming>;
// Split with the stores past L1 and evict_first in L2 by policy; split with A's loads unhinted.
using SplitStoreHint =
    LagOptions<LagSchedule::kSplit, LoadPolicy::kL2EvictLast, LoadPolicy::kL2EvictFirst, StorePolicy::kL2EvictFirst>;
using SplitPlainA = LagOptions<LagSchedule::kSplit, LoadPolicy::kReadOnly, LoadPolicy::kL2EvictFirst, StorePolicy::kStreaming>;

// The lagged scan with lag kLag, options O, kMinBlocks resident blocks, a 32 * kPerLane window and
// kThreads x kItems tiles.
template <class T, class O, int kLag, int kMinBlocks = 5, int kPerLane = kLookbackPerLane, int kItems = 32,
          int kThreads = kLookbackThreads>
struct Lagged {
  static constexpr int64_t kTile = LookbackTile<T, T, Sum, kThreads, kItems>::kTileItems;
  static constexpr auto kernel = lagged_lookback_scan_kernel<T, T, Sum, O, kThreads, kItems, kMinBlocks, kPerLane>;
  static void prepare() {}
  static void describe(char* s, size_t size) {
    static const char* schedules[] = {"A-then-B", "split"};
    const char* loads = O::kFirstLoad == LoadPolicy::kReadOnly ? (O::kReload == LoadPolicy::kReadOnly ? "-" : "B") : "A+B";
    static const char* stores[] = {"wb", "cs", "na+ef"};
    char what[120];
    snprintf(what, sizeof(what), "lagged L=%-4d %-8s hints=%-3s/%-5s tile=%3dx%2d window=%3d", kLag,
             schedules[int(O::kSchedule)], loads, stores[int(O::kStore)], kThreads, kItems, 32 * kPerLane);
    describe_kernel(s, size, (const void*)kernel, kThreads, 0, what, 76);
  }
  static void launch(const Bench& b, int64_t n, int64_t offset, bool exclusive) {
    const TileLaunch<T> t(b, n, offset, kTile);
    kernel<<<unsigned(lagged_tickets(t.tiles, kLag, O::kSchedule)), kThreads>>>(
        t.in, static_cast<T*>(b.out), t.layout, t.tiles, t.tiles, kLag, t.counter, t.status, exclusive, t.vector_ok);
  }
};

template <class T>
void run(int64_t n, int sms, int reps, bool all) {
  repeat_against_cub<T>(n, sms, reps, all, [all](const Bench& b, float cub_ms, bool edges) {
    // Session 12 device run 1 (H200): split at 4 blocks/SM, L = 256, A+B hints and st.global.cs
    // stores won (1.073-1.089x CUB against the library's 1.031-1.044x); every 5-block row spilled
    // and lost, L >= 512 lost (L2 overflow), no hints lost 8-20 %. Run 2 swept around that winner:
    // L = 384 won (1.069-1.081x; the library's kDefaultLag), the other rows lost (docs/scan.md).
    time_candidate<T, LibraryLookback<T, 76>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Split, 256, 4>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Split, 128, 4>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Split, 384, 4>>(b, cub_ms, edges);
    // 12288-item tiles (512 threads x 24 items, 2 blocks/SM).
    time_candidate<T, Lagged<T, Split, 256, 2, 4, 24, 512>>(b, cub_ms, edges);
    if (!all) return;
    time_candidate<T, Lagged<T, Split, 192, 4>>(b, cub_ms, edges);
    // A 256-tile window; 3 blocks/SM (85 registers).
    time_candidate<T, Lagged<T, Split, 256, 4, 8>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Split, 256, 3>>(b, cub_ms, edges);
    // Stores past L1 with an L2 evict_first policy; A's loads without the evict_last policy.
    time_candidate<T, Lagged<T, SplitStoreHint, 256, 4>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, SplitPlainA, 256, 4>>(b, cub_ms, edges);
    // 8192-item tiles of 512 threads x 16 items, 2 blocks/SM; A-then-B with the shorter lag.
    time_candidate<T, Lagged<T, Split, 256, 2, 4, 16, 512>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Hinted, 128, 4>>(b, cub_ms, edges);
  });
}

int main() {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  run<int32_t>(int64_t(1) << 28, sms, 2, true);
  run<float>(int64_t(1) << 28, sms, 2, true);
  run<int32_t>((int64_t(1) << 31) + 17, sms, 1, false);
  return 0;
}
