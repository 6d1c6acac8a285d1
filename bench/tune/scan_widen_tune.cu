// Widening scans (an output item wider than an input item: int8 / int16 / int32 into int64, float16
// into float32) through the held scan, with phase B storing each full tile from its slot across
// lanes (held_lookback_scan_kernel.cuh, held_transposes: 512 contiguous bytes a warp instruction)
// or as the tile's own store (a lane's group as kVec * sizeof(Out) / 16 vectors at that stride), at
// the library's resident blocks and, for 1- and 2-byte items, at 3 an SM; next to the library's
// decoupled look-back (the reference: every candidate's output matches it exactly for integers, to
// 1e-3 relative for float16 into float32, inclusive and exclusive, at full and partial last tiles,
// before timing) and a cudaMemcpy of 1 GiB (the ceiling: % of copy counts input read + output
// written). Each row: median of 30 launches on 2^28 items; two passes.
// Build and run on the GPU machine (repo root):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/scan_widen_tune.cu -o /tmp/sw && /tmp/sw
#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "gpuprims/scan/held_lookback_scan_kernel.cuh"

#include "scan_tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::scan_detail;
using scan_tune::Sum;

template <class In>
__global__ void fill_items(In* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = cast_value<In>(float(int((i * 2654435761u >> 9) % 7) - 3));
}

template <class In, class Out>
struct Problem {
  int64_t n;
  storage_t<In>* in;
  Out* out;
  Out* expected;
  char* scratch;  // counter (256 bytes), then status words
  unsigned long long* bad;
  double memcpy_gbps;
  int sms;
};

// A 1-D scan of n items: layout, tiles of tile_items, counter and status words zeroed.
template <class Out>
struct Launch1D {
  ScanLayout layout;
  int64_t tiles;
  unsigned long long* counter;
  TileStatus<scan_acc_t<Out>> status;
  Launch1D(char* scratch, int64_t n, int64_t tile_items) : tiles((n + tile_items - 1) / tile_items) {
    layout.len = n;
    counter = reinterpret_cast<unsigned long long*>(scratch);
    status = TileStatus<scan_acc_t<Out>>::at(scratch + 256, tiles);
    CHECK(cudaMemsetAsync(scratch, 0, 256 + TileStatus<scan_acc_t<Out>>::bytes(tiles)));
  }
};

template <class In, class Out>
void lookback(const Problem<In, Out>& p, int64_t n, bool exclusive, Out* out) {
  const Launch1D<Out> l(p.scratch, n, LookbackTile<In, Out, Sum>::kTileItems);
  lookback_scan_kernel<In, Out, Sum><<<unsigned(l.tiles), kLookbackThreads>>>(p.in, out, l.layout, l.tiles, l.counter,
                                                                              l.status, exclusive, true);
}

template <class In, class Out, int kItems, int kMinBlocks, bool kTransposed>
struct HeldCandidate {
  static constexpr auto kernel =
      held_lookback_scan_kernel<In, Out, Sum, kLookbackThreads, kItems, kMinBlocks, kHeldScanPerLane, kTransposed>;
  static constexpr int kSmem = held_scan_smem_bytes<In, Out, Sum, kLookbackThreads, kItems>();
  static void launch(const Problem<In, Out>& p, int64_t n, bool exclusive, int grid) {
    const Launch1D<Out> l(p.scratch, n, LookbackTile<In, Out, Sum, kLookbackThreads, kItems>::kTileItems);
    kernel<<<unsigned(grid), kLookbackThreads, kSmem>>>(p.in, p.out, l.layout, l.tiles, l.tiles, l.counter, l.status,
                                                        exclusive, true);
  }
};

template <class In, class Out>
int64_t mismatches(const Problem<In, Out>& p, int64_t n) {
  CHECK(cudaMemset(p.bad, 0, sizeof(unsigned long long)));
  scan_tune::count_bad<<<1024, 256>>>(p.out, p.expected, n, p.bad);
  CHECK(cudaGetLastError());
  unsigned long long bad;
  CHECK(cudaMemcpy(&bad, p.bad, sizeof(bad), cudaMemcpyDeviceToHost));
  return int64_t(bad);
}

template <class In, class Out>
void report(const Problem<In, Out>& p, const char* name, int resident, int regs, size_t local, int checks_failed,
            float ms) {
  const double gbps = double(p.n) * (sizeof(storage_t<In>) + sizeof(Out)) / ms / 1e6;
  printf("%s %s->%s n=%lld %-34s resident=%d regs=%d local=%zu  %.4f ms  %6.1f GB/s  %5.1f %% copy  (%d checks failed)\n",
         checks_failed == 0 ? "PASS" : "FAIL", scan_tune::type_label<In>(), scan_tune::type_label<Out>(),
         (long long)p.n, name, resident, regs, local, ms,
         gbps, 100.0 * gbps / p.memcpy_gbps, checks_failed);
  fflush(stdout);
}

// A candidate against the look-back: inclusive and exclusive at a full last tile and a partial one,
// then timed on all n items (the last output checked too).
template <class In, class Out, int kItems, int kMinBlocks, bool kTransposed>
void run_held(const Problem<In, Out>& p, const char* name) {
  using C = HeldCandidate<In, Out, kItems, kMinBlocks, kTransposed>;
  tune::running = name;
  CHECK(cudaFuncSetAttribute(C::kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmem));
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, C::kernel, kLookbackThreads, C::kSmem));
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, C::kernel));
  const int grid = resident * p.sms;
  const int64_t tile = LookbackTile<In, Out, Sum, kLookbackThreads, kItems>::kTileItems;
  int failed = 0;
  for (int64_t n : {tile, 5 * tile - 3, 1000 * tile, 1000 * tile + 1, p.n})
    for (bool exclusive : {false, true}) {
      lookback<In, Out>(p, n, exclusive, p.expected);
      CHECK(cudaMemset(p.out, 0xff, n * sizeof(Out)));  // poison
      C::launch(p, n, exclusive, grid);
      CHECK(cudaGetLastError());
      if (mismatches(p, n) != 0) {
        printf("  FAIL %s n=%lld %s\n", name, (long long)n, exclusive ? "exclusive" : "inclusive");
        ++failed;
      }
    }
  const float ms = tune::median_ms([&] { C::launch(p, p.n, false, grid); });
  CHECK(cudaGetLastError());
  report(p, name, resident, attr.numRegs, attr.localSizeBytes, failed, ms);
}

template <class In, class Out>
void run_pair(int64_t n, int sms) {
  Problem<In, Out> p;
  p.n = n;
  p.sms = sms;
  CHECK(cudaMalloc(&p.in, n * sizeof(storage_t<In>)));
  CHECK(cudaMalloc(&p.out, n * sizeof(Out)));
  CHECK(cudaMalloc(&p.expected, n * sizeof(Out)));
  CHECK(cudaMalloc(&p.scratch, 256 + scan_tune::kScratchBytesPerTile * (n / 1024 + 1)));
  CHECK(cudaMalloc(&p.bad, sizeof(unsigned long long)));
  fill_items<<<1024, 256>>>(reinterpret_cast<In*>(p.in), n);
  CHECK(cudaGetLastError());
  const int64_t copy_bytes = int64_t(1) << 30;
  tune::running = "cudaMemcpy";
  const auto copy = [&] { CHECK(cudaMemcpyAsync(p.out, p.expected, copy_bytes, cudaMemcpyDeviceToDevice)); };
  p.memcpy_gbps = 2.0 * copy_bytes / tune::median_ms(copy) / 1e6;
  printf("== %s -> %s, n = %lld, cudaMemcpy %.1f GB/s\n", scan_tune::type_label<In>(), scan_tune::type_label<Out>(),
         (long long)n, p.memcpy_gbps);
  tune::running = "look-back";
  const float lb_ms = tune::median_ms([&] { lookback<In, Out>(p, n, false, p.out); });
  CHECK(cudaGetLastError());
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, lookback_scan_kernel<In, Out, Sum>));
  report(p, "decoupled_lookback (library)", 0, attr.numRegs, attr.localSizeBytes, 0, lb_ms);
  constexpr int kItems = held_items<In, Out>(), kBlocks = held_min_blocks<In, Out>();
  run_held<In, Out, kItems, kBlocks, false>(p, "held, tile's store");
  run_held<In, Out, kItems, kBlocks, true>(p, "held, transposed store");
  if constexpr (sizeof(storage_t<In>) <= 2 && kBlocks < 3) {
    run_held<In, Out, kItems, 3, false>(p, "held 3/SM, tile's store");
    run_held<In, Out, kItems, 3, true>(p, "held 3/SM, transposed store");
  }
  for (void* q : {(void*)p.in, (void*)p.out, (void*)p.expected, (void*)p.scratch, (void*)p.bad}) CHECK(cudaFree(q));
}

int main() {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs\n", prop.name, sms);
  const int64_t n = int64_t(1) << 28;
  for (int pass = 1; pass <= 2; ++pass) {
    printf("\n=== pass %d\n", pass);
    run_pair<int8_t, int64_t>(n, sms);
    run_pair<int16_t, int64_t>(n, sms);
    run_pair<int32_t, int64_t>(n, sms);
    run_pair<half_t, float>(n, sms);
  }
  return 0;
}
