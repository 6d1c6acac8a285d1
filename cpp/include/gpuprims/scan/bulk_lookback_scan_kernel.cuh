#pragma once
// The single-pass scan with its tile staged in shared memory by the tensor memory accelerator
// (sm_90): decoupled look-back as in lookback_scan_kernel.cuh, for 4-byte items and accumulators.
//
// Why: the register-tile kernel holds 32 items per thread in registers from its load to its store,
// so 64 registers per thread cap it at 4 resident tiles per SM, and a tile's bytes are in flight only
// between its load and the end of its scan: while a block walks back (and while it waits for its
// counter atomic) its share of the SM's bytes in flight is zero. Bytes in flight per SM must cover
// bandwidth x latency (H200: ~4.2 TB/s x ~0.7 us / 132 SMs, ~22 KB read per SM), so every tile spent
// waiting must be covered by another tile that is loading. Here one thread issues the whole tile's
// load (one cp.async.bulk, completing on an mbarrier) and the scan runs out of shared memory with a
// few registers per thread: residency is bounded by shared memory instead (32 KB tiles: 6 per SM,
// 50 % more tiles in flight), and with kBulkStore the finished tile leaves by one bulk store that
// drains after the block has released its registers.
//
// The tile: kThreads threads x kGroups 16-byte vectors, warp-striped like StripedTile (warp w owns
// items [w * 32 * kItems, (w + 1) * 32 * kItems), group g of it is 32 lanes x 4 items, so every
// shared-memory vector access of a warp covers 512 contiguous bytes: no bank conflicts).
// Pass A (each warp, group by group): the warp-local scan written back in place, inclusive or
// exclusive; warp 0 then scans the warp totals, publishes, looks back (look_back of
// lookback_scan_kernel.cuh); pass B: every item gets its warp's prefix and goes out.
//
// Forward progress and memory ordering: unchanged from lookback_scan_kernel.cuh (tile ids from the
// counter, a tile waits only on smaller ids; status words per tile_status.cuh). The bulk load adds no
// dependency between tiles.
#include <cstdint>
#include <cstring>

#include "gpuprims/scan/lookback_scan_kernel.cuh"
#include "gpuprims/util/ptx_sm90.cuh"

namespace gpuprims {
namespace scan_detail {

template <int kThreads, int kGroups>
struct BulkTileShape {
  static constexpr int kVec = 4;  // 4-byte items per 16-byte vector
  static constexpr int kItems = kGroups * kVec;
  static constexpr int kWarps = kThreads / kWarpSize;
  static constexpr int kTileItems = kThreads * kItems;
  static constexpr uint32_t kBytes = uint32_t(kTileItems) * 4;  // the kernel's dynamic shared memory
};

template <class In, class Out, class Op>
constexpr bool bulk_lookback_supported() {
  return sizeof(storage_t<In>) == 4 && sizeof(Out) == 4 && sizeof(scan_acc_t<Out>) == 4;
}

// `bulk_ok`: unit steps and 16-byte aligned rows in both arrays (vector_path_ok); full tiles then
// move by bulk copies, the row's last partial tile (and every tile without bulk_ok) by scalar
// accesses. Steps must be 1 either way (the caller's choice of kernel).
template <class In, class Out, class Op, int kThreads, int kGroups, int kMinBlocks, bool kBulkStore,
          int kPerLane = kLookbackPerLane>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
bulk_lookback_scan_kernel(const storage_t<In>* in, Out* out, ScanLayout layout,
                          int64_t tiles_per_row, unsigned long long* tile_counter,
                          TileStatus<scan_acc_t<Out>> status, bool exclusive, bool bulk_ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Shape = BulkTileShape<kThreads, kGroups>;
  using S = storage_t<In>;
  using Acc = scan_acc_t<Out>;
  static_assert(bulk_lookback_supported<In, Out, Op>(), "4-byte items, results and accumulators");
  const ScanOperator<Op> op;
  const Acc identity = ScanOperator<Op>::template identity<Acc>();
  extern __shared__ uint4 tile_smem[];  // kBytes: S bits after the load, Acc bits after pass A
  __shared__ uint64_t loaded;
  __shared__ int64_t tile_id;
  __shared__ Acc warp_totals[Shape::kWarps];
  __shared__ Acc warp_prefixes[Shape::kWarps];

  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (threadIdx.x == 0) {
    const int64_t tile = int64_t(atomicAdd(tile_counter, 1ull));
    tile_id = tile;
    const TileCoords c = layout.tile_coords(tile, tiles_per_row, Shape::kTileItems);
    if (bulk_ok && c.begin + Shape::kTileItems <= layout.len) {
      ptx::mbarrier_init(&loaded, 1);
      ptx::fence_mbarrier_init();
      ptx::mbarrier_arrive_expect_tx(&loaded, Shape::kBytes);
      ptx::bulk_load_global_to_shared(tile_smem, in + c.in_offset + c.begin, Shape::kBytes, &loaded);
    }
  }
  __syncthreads();
  const int64_t tile = tile_id;
  const TileCoords c = layout.tile_coords(tile, tiles_per_row, Shape::kTileItems);
  const bool full = bulk_ok && c.begin + Shape::kTileItems <= layout.len;
  if (full) {
    ptx::mbarrier_wait(&loaded, 0);
  } else {  // coalesced scalar loads, items past the row's end as the identity
    Acc* items = reinterpret_cast<Acc*>(tile_smem);
    for (int i = threadIdx.x; i < Shape::kTileItems; i += kThreads) {
      const int64_t index = c.begin + i;
      items[i] = index < layout.len ? cast_value<Acc>(in[c.in_offset + index]) : identity;
    }
    __syncthreads();
  }

  // Pass A: warp-local scan of the warp's groups, in place. Unrolled by 2, not fully: a full unroll
  // hoists all kGroups vector loads and spills at the 40-register cut of 6 resident 256-thread blocks
  // (ptxas -v, nvcc 13.0); shared-memory latency is covered by the other resident warps.
  uint4* const warp_vectors = tile_smem + warp * kWarpSize * kGroups;
  Acc carry = identity;
#pragma unroll 2
  for (int g = 0; g < kGroups; ++g) {
    const uint4 bits = warp_vectors[g * kWarpSize + lane];
    S raw[Shape::kVec];
    memcpy(raw, &bits, sizeof(bits));
    Acc inclusive[Shape::kVec];
    inclusive[0] = cast_value<Acc>(raw[0]);
#pragma unroll
    for (int j = 1; j < Shape::kVec; ++j) inclusive[j] = op(inclusive[j - 1], cast_value<Acc>(raw[j]));
    const Acc lane_inclusive = warp_inclusive_scan(inclusive[Shape::kVec - 1], op, lane);
    const Acc lane_exclusive = shfl_up(lane_inclusive, 1);
    const Acc base = op(carry, lane == 0 ? identity : lane_exclusive);
    Acc scanned[Shape::kVec];
#pragma unroll
    for (int j = 0; j < Shape::kVec; ++j)
      scanned[j] = exclusive ? (j == 0 ? base : op(base, inclusive[j - 1])) : op(base, inclusive[j]);
    uint4 result;
    memcpy(&result, scanned, sizeof(result));
    warp_vectors[g * kWarpSize + lane] = result;
    carry = op(carry, shfl_idx(lane_inclusive, kWarpSize - 1));
  }
  if (lane == 0) warp_totals[warp] = carry;
  __syncthreads();

  if (warp == 0) {
    Acc aggregate;
    const Acc warp_exclusive = scan_warp_totals<Acc, Op, Shape::kWarps>(warp_totals, lane, &aggregate);
    Acc prefix = identity;
    if (c.chunk == 0) {
      if (lane == 0) status.publish(tile, kTileInclusive, aggregate);
    } else {
      if (lane == 0) status.publish(tile, kTileAggregate, aggregate);
      prefix = look_back<Acc, Op, kPerLane>(status, tile, tile - c.chunk, lane);
      if (lane == 0) status.publish(tile, kTileInclusive, op(prefix, aggregate));
    }
    if (lane < Shape::kWarps) warp_prefixes[lane] = op(prefix, warp_exclusive);
  }
  __syncthreads();

  // Pass B: the warp's prefix into every item; out through shared memory and one bulk store, or
  // directly (16-byte stores for full tiles, scalar ones for the partial tile).
  const Acc prefix = warp_prefixes[warp];
  Out* const row_out = out + c.out_offset;
  const bool row_start = exclusive && c.begin == 0 && threadIdx.x == 0;
#pragma unroll 2  // as pass A
  for (int g = 0; g < kGroups; ++g) {
    const uint4 bits = warp_vectors[g * kWarpSize + lane];
    Acc scanned[Shape::kVec];
    memcpy(scanned, &bits, sizeof(bits));
    Out v[Shape::kVec];
#pragma unroll
    for (int j = 0; j < Shape::kVec; ++j) v[j] = cast_value<Out>(op(prefix, scanned[j]));
    if (row_start && g == 0) v[0] = cast_value<Out>(ScanOperator<Op>::template public_identity<Out, Acc>());
    uint4 result;
    memcpy(&result, v, sizeof(result));
    const int64_t first = c.begin + (warp * kWarpSize * kGroups + g * kWarpSize + lane) * Shape::kVec;
    if (full) {
      if constexpr (kBulkStore) warp_vectors[g * kWarpSize + lane] = result;
      else *reinterpret_cast<uint4*>(row_out + first) = result;
    } else {
#pragma unroll
      for (int j = 0; j < Shape::kVec; ++j)
        if (first + j < layout.len) row_out[first + j] = v[j];
    }
  }
  if constexpr (kBulkStore) {
    if (full) {
      ptx::fence_proxy_async_shared();
      __syncthreads();
      if (threadIdx.x == 0) {
        ptx::bulk_store_shared_to_global(row_out + c.begin, tile_smem, Shape::kBytes);
        ptx::bulk_commit();
        ptx::bulk_wait_read_all();  // the shared memory must outlive the store's reads
      }
    }
  }
#else
  __trap();  // launched only on sm_90 and newer (the runner checks the device)
#endif
}

}  // namespace scan_detail
}  // namespace gpuprims
