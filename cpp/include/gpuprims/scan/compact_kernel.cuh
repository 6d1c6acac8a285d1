#pragma once
// Stream compaction in one pass: every tile counts its selected items, a block scan ranks them, the
// decoupled look-back (over counts, CountStatus) gives the tile's output offset, and each thread
// writes its selected items (values, or their indices for nonzero()).
//
// A thread owns 16 consecutive flags: one 16-byte load when the mask is contiguous and aligned.
// Values are copied as raw bits of their element size (Bits = uint8/16/32/64): nothing is converted.
#include <cstdint>
#include <cstring>

#include "gpuprims/scan/lookback_scan_kernel.cuh"
#include "gpuprims/scan/tile_status.cuh"
#include "gpuprims/warp/warp_scan.cuh"

namespace gpuprims {
namespace scan_detail {

constexpr int kCompactThreads = 256;
constexpr int kCompactItems = 16;
constexpr int kCompactTile = kCompactThreads * kCompactItems;

struct Strided1D {
  int64_t n, mask_step, value_step, out_step, out_len;
};

// Bits == void: write indices (int64) instead of values.
template <class Bits>
__global__ void __launch_bounds__(kCompactThreads)
compact_kernel(const Bits* __restrict__ values, const uint8_t* __restrict__ mask, void* __restrict__ out,
               int64_t* __restrict__ count, Strided1D shape, int64_t tiles, unsigned long long* tile_counter,
               CountStatus status, bool mask_vector_ok) {
  constexpr int kWarps = kCompactThreads / kWarpSize;
  const Sum sum;
  __shared__ int64_t warp_counts[kWarps];
  __shared__ int64_t warp_offsets[kWarps];
  __shared__ int64_t tile_id;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (threadIdx.x == 0) tile_id = int64_t(atomicAdd(tile_counter, 1ull));
  __syncthreads();
  const int64_t tile = tile_id;
  const int64_t first = tile * kCompactTile + int64_t(threadIdx.x) * kCompactItems;

  bool flag[kCompactItems];
  if (mask_vector_ok && first + kCompactItems <= shape.n) {
    const uint4 bits = __ldg(reinterpret_cast<const uint4*>(mask + first));
    uint8_t bytes[kCompactItems];
    memcpy(bytes, &bits, sizeof(bytes));
#pragma unroll
    for (int j = 0; j < kCompactItems; ++j) flag[j] = bytes[j] != 0;
  } else {
#pragma unroll
    for (int j = 0; j < kCompactItems; ++j) flag[j] = first + j < shape.n && mask[(first + j) * shape.mask_step] != 0;
  }
  int selected = 0;
#pragma unroll
  for (int j = 0; j < kCompactItems; ++j) selected += flag[j];

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
      prefix = look_back<int64_t, Sum>(status, tile, 0, lane);
      if (lane == 0) status.publish(tile, kTileInclusive, prefix + aggregate);
    }
    if (lane < kWarps) warp_offsets[lane] = prefix + warp_exclusive;
    if (lane == 0 && tile == tiles - 1) *count = prefix + aggregate;
  }
  __syncthreads();

  int64_t position = warp_offsets[warp] + inclusive - selected;
#pragma unroll
  for (int j = 0; j < kCompactItems; ++j) {
    if (!flag[j]) continue;
    if (position < shape.out_len) {  // out= shorter than the count: the rest is not written
      if constexpr (std::is_void<Bits>::value) {
        static_cast<int64_t*>(out)[position * shape.out_step] = first + j;
      } else {
        static_cast<Bits*>(out)[position * shape.out_step] = values[(first + j) * shape.value_step];
      }
    }
    ++position;
  }
}

}  // namespace scan_detail
}  // namespace gpuprims
