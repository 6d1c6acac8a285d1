#pragma once
// Stream compaction in one pass: every tile counts its selected items, a block scan ranks them, the
// decoupled look-back (over counts, CountStatus) gives the tile's output offset, and each thread
// writes its selected items (values, or their indices for nonzero()).
//
// A thread owns kItems consecutive flags (16-byte loads when the mask is contiguous and aligned)
// and the values under them (16-byte loads when contiguous and aligned, skipped where no flag is
// set). Selected values are first packed into shared memory in order, then the block writes its
// contiguous output range with consecutive threads on consecutive elements: coalesced stores
// instead of each thread scattering its own few.
// Values are copied as raw bits of their element size (Bits = uint8/16/32/64): nothing is converted.
// The mask is read as raw bits too (MaskBits: bool for compact(), any dtype's width for nonzero()).
#include <cstdint>
#include <cstring>

#include "gpuprims/scan/lookback_scan_kernel.cuh"
#include "gpuprims/scan/tile_status.cuh"
#include "gpuprims/warp/warp_scan.cuh"

namespace gpuprims {
namespace scan_detail {

constexpr int kCompactThreads = 256;

// Flags per thread and look-back reads, by the size of what is written (bench/tune/compact_tune.cu,
// H200, 2^28 4-byte values, 50 % mask, against DeviceSelect::Flagged in the same program):
// 8192-item tiles (32 per thread) with serial look-back reads 1.050-1.055x; 4096-item tiles with
// parallel reads 0.932-0.938x (serial 0.864x); 8192 with parallel reads 0.94x; 512 threads x 16
// 1.01x. 8-byte values (float64) keep 4096-item tiles: 8192 of them staged would exceed the 48 KB of
// static shared memory. nonzero() stages each selected index as its 32-bit offset in the tile
// (staged_t), so it takes the 4-byte shape: 8192-item tiles, serial reads.
template <class Item>
constexpr int compact_items() {
  return sizeof(Item) <= 4 ? 32 : 16;
}
template <class Item>
constexpr LookbackReads compact_reads() {
  return compact_items<Item>() == 32 ? LookbackReads::kSerial : LookbackReads::kParallel;
}
// What a tile stages in shared memory: the values (Bits), or for nonzero() (Bits = void) each
// selected index's offset in its tile, widened to the int64 index when written.
template <class Bits>
using compact_item_t = std::conditional_t<std::is_void<Bits>::value, uint32_t, Bits>;
template <class Bits>
constexpr int64_t compact_tile() {
  return int64_t(kCompactThreads) * compact_items<compact_item_t<Bits>>();
}

struct Strided1D {
  int64_t n, mask_step, value_step, out_step, out_len;
};

// An element of the mask is set where its bits under `keep` are not all zero: keep is every bit for
// bool and integers, every bit but the sign for floats (numpy's nonzero: -0.0 is zero, NaN is set).
// One-byte masks (bool, int8, uint8) have no sign to drop, so their test is the plain compare.
template <class MaskBits>
__host__ __device__ __forceinline__ bool mask_set(MaskBits bits, MaskBits keep) {
  if constexpr (sizeof(MaskBits) == 1) {
    return bits != 0;
  } else {
    return (bits & keep) != 0;
  }
}

// Bits == void: write indices (int64) instead of values. The shape parameters default to the
// library's choice; bench/tune/compact_tune.cu sweeps them.
template <class Bits, class MaskBits = uint8_t, int kThreads = kCompactThreads,
          int kItems = compact_items<compact_item_t<Bits>>(),
          LookbackReads kReads = compact_reads<compact_item_t<Bits>>(), int kPerLane = kLookbackPerLane>
__global__ void __launch_bounds__(kThreads)
compact_kernel(const Bits* __restrict__ values, const MaskBits* __restrict__ mask, MaskBits keep,
               void* __restrict__ out, int64_t* __restrict__ count, Strided1D shape, int64_t tiles,
               unsigned long long* tile_counter, CountStatus status, bool mask_vector_ok, bool values_vector_ok) {
  constexpr int kFlagsPerVector = 16 / sizeof(MaskBits);
  static_assert(kItems % kFlagsPerVector == 0, "whole 16-byte flag loads per thread");
  constexpr int kWarps = kThreads / kWarpSize;
  constexpr int kTile = kThreads * kItems;
  using Item = compact_item_t<Bits>;
  const Sum sum;
  __shared__ int64_t warp_counts[kWarps];
  __shared__ int64_t warp_offsets[kWarps];  // within the tile
  __shared__ int64_t tile_id, tile_prefix, tile_count;
  __shared__ Item staged[kTile];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (threadIdx.x == 0) tile_id = int64_t(atomicAdd(tile_counter, 1ull));
  __syncthreads();
  const int64_t tile = tile_id;
  const int64_t first = tile * kTile + int64_t(threadIdx.x) * kItems;

  bool flag[kItems];
  if (mask_vector_ok && first + kItems <= shape.n) {
#pragma unroll
    for (int v = 0; v < kItems / kFlagsPerVector; ++v) {
      const uint4 bits = __ldg(reinterpret_cast<const uint4*>(mask + first) + v);
      MaskBits elements[kFlagsPerVector];
      memcpy(elements, &bits, sizeof(elements));
#pragma unroll
      for (int j = 0; j < kFlagsPerVector; ++j) flag[v * kFlagsPerVector + j] = mask_set(elements[j], keep);
    }
  } else {
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      flag[j] = first + j < shape.n && mask_set(mask[(first + j) * shape.mask_step], keep);
    }
  }
  int selected = 0;
#pragma unroll
  for (int j = 0; j < kItems; ++j) selected += flag[j];

  Item item[kItems];
  if constexpr (std::is_void<Bits>::value) {
#pragma unroll
    for (int j = 0; j < kItems; ++j) item[j] = Item(threadIdx.x * kItems + j);  // the offset in the tile
  } else if (values_vector_ok && first + kItems <= shape.n) {
    constexpr int kPerVector = 16 / sizeof(Bits);
#pragma unroll
    for (int v = 0; v < kItems / kPerVector; ++v) {
      bool any = false;
#pragma unroll
      for (int j = 0; j < kPerVector; ++j) any |= flag[v * kPerVector + j];
      if (any) {
        const uint4 bits = __ldg(reinterpret_cast<const uint4*>(values + first) + v);
        memcpy(&item[v * kPerVector], &bits, 16);
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < kItems; ++j)
      if (flag[j]) item[j] = values[(first + j) * shape.value_step];
  }

  const int64_t inclusive = warp_inclusive_scan(int64_t(selected), sum, lane);
  if (lane == kWarpSize - 1) warp_counts[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    int64_t aggregate;
    const int64_t warp_exclusive = scan_warp_totals<int64_t, Sum, kWarps>(warp_counts, lane, &aggregate);
    int64_t prefix = 0;
    if (tile == 0) {
      if (lane == 0) status.publish(tile, kTileInclusive, aggregate);
    } else {
      if (lane == 0) status.publish(tile, kTileAggregate, aggregate);
      prefix = look_back<int64_t, Sum, kPerLane, kReads>(status, tile, 0, lane);
      if (lane == 0) status.publish(tile, kTileInclusive, prefix + aggregate);
    }
    if (lane < kWarps) warp_offsets[lane] = warp_exclusive;
    if (lane == 0) {
      tile_prefix = prefix;
      tile_count = aggregate;
      if (tile == tiles - 1) *count = prefix + aggregate;
    }
  }
  __syncthreads();

  int position = int(warp_offsets[warp] + inclusive - selected);
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    if (flag[j]) staged[position++] = item[j];
  }
  __syncthreads();
  const int64_t base = tile_prefix;
  // out= shorter than the count: what does not fit is not written (the count still says how many)
  const int64_t fits = base >= shape.out_len ? 0 : (shape.out_len - base < tile_count ? shape.out_len - base : tile_count);
  if constexpr (std::is_void<Bits>::value) {
    for (int i = threadIdx.x; i < fits; i += kThreads) {
      static_cast<int64_t*>(out)[(base + i) * shape.out_step] = tile * kTile + int64_t(staged[i]);
    }
  } else {
    for (int i = threadIdx.x; i < fits; i += kThreads) static_cast<Item*>(out)[(base + i) * shape.out_step] = staged[i];
  }
}

}  // namespace scan_detail
}  // namespace gpuprims
