// The lagged single-pass scan (lagged_lookback_scan_kernel.cuh: every tile read from DRAM for its
// aggregate and again from L2, L tickets later, for its scan) against cub::DeviceScan::InclusiveSum
// and the library's decoupled look-back, in one program, on the same data: int32 and float32
// inclusive sums of 2^28 items (two repetitions) and int32 at 2^31 + 17. Swept: the lag L, the
// schedule (A then B in one block, B overlapped with A's DRAM loads, A and B as separate blocks),
// the cache hints (A's loads L2::evict_last, B's reloads L2::evict_first past L1, stores
// st.global.cs; or none), resident blocks and the look-back window.
// Every timed output is compared on the GPU with CUB's (int32 bitwise, float32 to 1e-3 relative);
// before timing (first repetition at 2^28) each candidate is checked on edge sizes (1, 2, 1000,
// tile +-1, 3 tiles +-1, 1000 tiles + 1, 4097 tiles - 1; aligned and misaligned inputs; inclusive and
// exclusive against cub::DeviceScan::ExclusiveSum).
// Build and run on the GPU machine (repo root):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/scan_lagged_tune.cu -o /tmp/sl && /tmp/sl
#include "gpuprims/reduce/reduce_ops.hpp"
#include "gpuprims/scan/lagged_lookback_scan_kernel.cuh"
#include "gpuprims/scan/lookback_scan_kernel.cuh"

#include "scan_tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::scan_detail;
using scan_tune::Bench;
using scan_tune::time_candidate;
using Sum = reduce_detail::Sum;

// Schedules, cache hints (A's loads L2::evict_last, B's reloads L2::evict_first past L1, stores
// st.global.cs) and the order of phase B's walk and reload (P: walk first).
using Hinted = DefaultLagOptions;
using HintedP = LagOptions<LagSchedule::kAThenB, LoadPolicy::kL2EvictLast, LoadPolicy::kL2EvictFirst, StorePolicy::kStreaming, true>;
using Plain = LagOptions<LagSchedule::kAThenB, LoadPolicy::kReadOnly, LoadPolicy::kReadOnly, StorePolicy::kDefault>;
using LoadHints = LagOptions<LagSchedule::kAThenB, LoadPolicy::kL2EvictLast, LoadPolicy::kL2EvictFirst, StorePolicy::kDefault>;
using Overlap = LagOptions<LagSchedule::kOverlap, LoadPolicy::kL2EvictLast, LoadPolicy::kL2EvictFirst, StorePolicy::kStreaming>;
using Split = LagOptions<LagSchedule::kSplit, LoadPolicy::kL2EvictLast, LoadPolicy::kL2EvictFirst, StorePolicy::kStreaming>;

template <class T>
void describe_kernel(char* s, size_t size, const void* kernel, const char* what) {
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kLookbackThreads, 0));
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  snprintf(s, size, "%-76s resident=%d regs=%2d local=%zu", what, resident, attr.numRegs, attr.localSizeBytes);
}

// The counter and the status words of `tiles` tiles, zeroed as the library does per launch.
template <class T>
TileStatus<T> zeroed_status(const Bench& b, int64_t tiles, unsigned long long** counter) {
  *counter = static_cast<unsigned long long*>(b.scratch);
  CHECK(cudaMemsetAsync(b.scratch, 0, 256 + TileStatus<T>::bytes(tiles)));
  return TileStatus<T>::at(static_cast<char*>(b.scratch) + 256, tiles);
}

// The library's decoupled look-back as it ships (256 x 32 tile, 5 blocks/SM, 128-tile window).
template <class T>
struct Library {
  static constexpr int64_t kTile = LookbackTile<T, T, Sum>::kTileItems;
  static void prepare() {}
  static void describe(char* s, size_t size) {
    describe_kernel<T>(s, size, (const void*)lookback_scan_kernel<T, T, Sum>, "decoupled_lookback (library)");
  }
  static void launch(const Bench& b, int64_t n, int64_t offset, bool exclusive) {
    const int64_t tiles = (n + kTile - 1) / kTile;
    ScanLayout layout;
    layout.len = n;
    const T* in = static_cast<const T*>(b.in) + offset;
    unsigned long long* counter;
    const auto status = zeroed_status<T>(b, tiles, &counter);
    lookback_scan_kernel<T, T, Sum><<<unsigned(tiles), kLookbackThreads>>>(
        in, static_cast<T*>(b.out), layout, tiles, counter, status, exclusive, reinterpret_cast<uintptr_t>(in) % 16 == 0);
  }
};

// The lagged scan with lag kLag, options O, kMinBlocks resident blocks, a 32 * kPerLane window and
// 256 x kItems tiles.
template <class T, class O, int kLag, int kMinBlocks = 5, int kPerLane = kLookbackPerLane, int kItems = 32>
struct Lagged {
  static constexpr int64_t kTile = LookbackTile<T, T, Sum, kLookbackThreads, kItems>::kTileItems;
  static constexpr auto kernel = lagged_lookback_scan_kernel<T, T, Sum, O, kLookbackThreads, kItems, kMinBlocks, kPerLane>;
  static void prepare() {}
  static void describe(char* s, size_t size) {
    static const char* schedules[] = {"A-then-B", "overlap", "split"};
    const char* hints = O::kFirstLoad == LoadPolicy::kReadOnly ? "no-hints"
                        : O::kStore == StorePolicy::kStreaming ? "hints+cs"
                                                               : "load-hints";
    char what[100];
    snprintf(what, sizeof(what), "lagged L=%-4d %-8s %-10s %s tile=%5lld window=%3d", kLag, schedules[int(O::kSchedule)],
             hints, O::kPrefixFirst ? "walk,reload" : "reload+walk", (long long)kTile, 32 * kPerLane);
    describe_kernel<T>(s, size, (const void*)kernel, what);
  }
  static void launch(const Bench& b, int64_t n, int64_t offset, bool exclusive) {
    const int64_t tiles = (n + kTile - 1) / kTile;
    ScanLayout layout;
    layout.len = n;
    const T* in = static_cast<const T*>(b.in) + offset;
    unsigned long long* counter;
    const auto status = zeroed_status<T>(b, tiles, &counter);
    kernel<<<unsigned(lagged_tickets(tiles, kLag, O::kSchedule)), kLookbackThreads>>>(
        in, static_cast<T*>(b.out), layout, tiles, tiles, kLag, counter, status, exclusive,
        reinterpret_cast<uintptr_t>(in) % 16 == 0);
  }
};

template <class T>
void run(int64_t n, int sms, int reps, bool all) {
  Bench b = scan_tune::make_bench<T>(n, sms);
  for (int rep = 0; rep < reps; ++rep) {
    const float cub_ms = scan_tune::time_cub<T>(b);
    const bool edges = rep == 0 && all;
    time_candidate<T, Library<T>>(b, cub_ms, edges);
    // The lag, 64-1024 tiles (2-32 MB of 32 KB tiles) between a tile's DRAM read and its L2 reread,
    // at 5 blocks/SM like the library's look-back (48 registers: spills). A's tiles wait in L2 for
    // about L + the ~660 resident tickets (5 x 132 SMs), so L2 (50 MB) holds L <= ~800 of them.
    time_candidate<T, Lagged<T, Hinted, 64>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Hinted, 128>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Hinted, 256>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Hinted, 512>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Hinted, 1024>>(b, cub_ms, edges);
    // No cache hints.
    time_candidate<T, Lagged<T, Plain, 128>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Plain, 256>>(b, cub_ms, edges);
    // 4 blocks/SM (64 registers, 8 bytes spilled); A and B as separate blocks (4 blocks/SM: no
    // spill); B overlapped with A's DRAM loads (two tiles in registers, 2 blocks/SM: no spill).
    time_candidate<T, Lagged<T, Hinted, 256, 4>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Split, 256, 4>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Overlap, 256, 2>>(b, cub_ms, edges);
    if (!all) continue;
    // Loads hinted, stores write back; B's warp 0 walking before it reloads (4 and 5 blocks/SM).
    time_candidate<T, Lagged<T, LoadHints, 256>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, HintedP, 256, 4>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, HintedP, 256>>(b, cub_ms, edges);
    // A 64-tile window (fewer registers in the walk); split at 5 blocks/SM; 4096-item tiles at 8.
    time_candidate<T, Lagged<T, Hinted, 256, 5, 2>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Split, 256>>(b, cub_ms, edges);
    time_candidate<T, Lagged<T, Hinted, 512, 8, 4, 16>>(b, cub_ms, edges);
  }
  scan_tune::free_bench(b);
}

int main() {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  run<int32_t>(int64_t(1) << 28, sms, 2, true);
  run<float>(int64_t(1) << 28, sms, 2, true);
  run<int32_t>((int64_t(1) << 31) + 17, sms, 1, false);
  return 0;
}
