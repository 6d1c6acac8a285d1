// Look-back scan designs against cub::DeviceScan::InclusiveSum, in one program, on the same data:
// int32 and float32 inclusive sums of 2^28 items (two repetitions) and int32 at 2^31 + 17. The
// candidates: the library's register tile (lookback_scan_kernel.cuh), the same with the group
// prefixes folded into the items (kFoldPrefix) in several shapes, and the shared-memory-staged tile
// (bulk_lookback_scan_kernel.cuh, sm_90 bulk copies).
// Every timed output is compared on the GPU with CUB's (int32 bitwise, float32 to 1e-3 relative: the
// combination orders differ); before timing, each candidate is checked on edge sizes (1, 2, tile +-1,
// k * tile +- 1, a misaligned input taking the scalar path, exclusive scans against
// cub::DeviceScan::ExclusiveSum).
// Build and run on the GPU machine (repo root):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/scan_bulk_tune.cu -o /tmp/sb && /tmp/sb
#include "gpuprims/reduce/reduce_ops.hpp"
#include "gpuprims/scan/bulk_lookback_scan_kernel.cuh"
#include "gpuprims/scan/lookback_scan_kernel.cuh"

#include "scan_tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::scan_detail;
using namespace scan_tune;
constexpr auto kSerial = LookbackReads::kSerial;

// One design and shape: launches it on n items of `in` (+ `offset` elements) into `out`.
template <class T, bool kBulk, int kThreads, int kGroupsOrItems, int kMinBlocks, bool kBulkStore = true,
          int kPerLane = kLookbackPerLane, bool kFold = false>
struct Candidate {
  static constexpr int64_t kTile = int64_t(kThreads) * (kBulk ? 4 * kGroupsOrItems : kGroupsOrItems);
  static void* kernel() {
    if constexpr (kBulk) return (void*)bulk_lookback_scan_kernel<T, T, Sum, kThreads, kGroupsOrItems, kMinBlocks, kBulkStore, kPerLane>;
    else return (void*)lookback_scan_kernel<T, T, Sum, kThreads, kGroupsOrItems, kMinBlocks, kPerLane, kSerial, kFold>;
  }
  static size_t smem() { return kBulk ? size_t(kTile) * 4 : 0; }
  static void prepare() {
    if constexpr (kBulk)
      CHECK(cudaFuncSetAttribute(bulk_lookback_scan_kernel<T, T, Sum, kThreads, kGroupsOrItems, kMinBlocks, kBulkStore, kPerLane>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem())));
  }
  static void launch(const Bench& b, int64_t n, int64_t offset, bool exclusive) {
    const int64_t tiles = (n + kTile - 1) / kTile;
    ScanLayout layout;
    layout.len = n;
    const T* in = static_cast<const T*>(b.in) + offset;
    T* out = static_cast<T*>(b.out);
    const bool aligned = reinterpret_cast<uintptr_t>(in) % 16 == 0;
    auto* counter = static_cast<unsigned long long*>(b.scratch);
    const auto status = TileStatus<T>::at(static_cast<char*>(b.scratch) + 256, tiles);
    CHECK(cudaMemsetAsync(b.scratch, 0, 256 + TileStatus<T>::bytes(tiles)));
    if constexpr (kBulk)
      bulk_lookback_scan_kernel<T, T, Sum, kThreads, kGroupsOrItems, kMinBlocks, kBulkStore, kPerLane>
          <<<unsigned(tiles), kThreads, smem()>>>(in, out, layout, tiles, counter, status, exclusive, aligned);
    else
      lookback_scan_kernel<T, T, Sum, kThreads, kGroupsOrItems, kMinBlocks, kPerLane, kSerial, kFold>
          <<<unsigned(tiles), kThreads>>>(in, out, layout, tiles, counter, status, exclusive, aligned);
  }
  static void describe(char* s, size_t size) {
    int resident = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, (const void*)kernel(), kThreads, smem()));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, (const void*)kernel()));
    const char* variant = kBulk ? (kBulkStore ? "bstore" : "dstore") : kFold ? "fold" : "-";
    snprintf(s, size, "%-8s %-7s threads=%3d tile=%5lld window=%3d resident=%2d regs=%2d local=%zu", kBulk ? "bulk" : "register",
             variant, kThreads, (long long)kTile, 32 * kPerLane, resident, attr.numRegs, attr.localSizeBytes);
  }
};

template <class T>
void run(int64_t n, int sms, int reps, bool all) {
  repeat_against_cub<T>(n, sms, reps, all, [all](const Bench& b, float cub_ms, bool edges) {
    // The register tile before session 10: 256 threads x 32 items, group prefixes kept, 4 blocks/SM,
    // 128-tile window.
    time_candidate<T, Candidate<T, false, 256, 32, 4>>(b, cub_ms, edges);
    // The group prefixes folded into the items at the warp scan (kFoldPrefix), at 4 and 5 blocks/SM
    // (48 registers, which spill a little; the library's choice after session 10 run 4: 1.018-1.043x),
    // and at 5 with a 64-tile window.
    time_candidate<T, Candidate<T, false, 256, 32, 4, true, 4, true>>(b, cub_ms, edges);
    time_candidate<T, Candidate<T, false, 256, 32, 5, true, 4, true>>(b, cub_ms, edges);
    time_candidate<T, Candidate<T, false, 256, 32, 5, true, 2, true>>(b, cub_ms, edges);
    if (!all) return;
    // Smaller tiles for 5 and 6 blocks/SM (28 items: 7168-item tiles; 20 items: 5120), a 256 window.
    time_candidate<T, Candidate<T, false, 256, 28, 5, true, 4, true>>(b, cub_ms, edges);
    time_candidate<T, Candidate<T, false, 256, 20, 6, true, 4, true>>(b, cub_ms, edges);
    time_candidate<T, Candidate<T, false, 256, 32, 4, true, 8, true>>(b, cub_ms, edges);
    // The shared-memory tile's best shape (session 10 runs 2-4: 0.89-0.925x CUB), for continuity.
    time_candidate<T, Candidate<T, true, 256, 8, 6, false>>(b, cub_ms, edges);
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
