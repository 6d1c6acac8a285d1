#pragma once
// bulk_copy: the single-pass reduction of contiguous rows fed by Hopper's bulk-copy engine.
//
// Same partition and combination as `vectorized` (a fixed grid of blocks per row, one contiguous
// chunk per block, warp-shuffle block reduce, last-block combine: run-to-run deterministic), but a
// block does not load its chunk with per-thread LDG.128: one thread issues `cp.async.bulk` copies of
// kStageBytes each into kStages shared-memory stages, whose arrival an mbarrier per stage counts in
// bytes, and the block reads each landed stage from shared memory. kStages x kStageBytes bytes per
// block stay in flight without costing registers, and each copy is one request per 8 KiB instead of
// one per 16 bytes.
//
// Measured (bench/tune/reduce_vectorized_tune.cu, H200, 2^28 int32 / float32 sums, buffers rotated,
// calls back to back like the library benchmark; session 10 device run 3): 256 threads x 5 stages of
// 8 KiB, one wave (5 resident blocks per SM): 1.003-1.005x cub::DeviceReduce::Sum for int32 and 1.004x
// for float32, where `vectorized` reaches 0.991-0.996x. Two waves, 2 x 16 KiB, 4 x 8 KiB, 8 x 4 KiB and
// 128-thread blocks all land at 0.990-1.005x.
//
// Stage protocol (per block; `seq` counts the stages this block has consumed, across rows): stage
// slot s = seq % kStages, its mbarrier's phase parity (seq / kStages) & 1. Thread 0 arms the slot's
// barrier with the copy's byte count (mbarrier.arrive.expect_tx) and issues the copy; every thread
// waits for the phase (try_wait.parity, acquire: the copied bytes are visible after it), reads its
// vectors, and the block synchronizes before thread 0 refills the slot, so no thread still reads a
// stage the copy engine overwrites. The barriers' initialization is fenced to the async proxy
// (fence.mbarrier_init) and published to the block by the first barrier.
//
// Alignment: the row's first elements up to a 16-byte boundary (head) and its last < 16 bytes
// (tail) are read with scalar loads; stages cover the 16-byte-aligned body (copies need 16-byte
// aligned addresses and sizes), the last one possibly shorter. sm_90 and newer only: the kernel body
// is compiled for those targets, and dispatch never launches it on older GPUs.
#include <cstdint>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/reduce/reduce_common.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/ptx_sm90.cuh"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace reduce_detail {

struct BulkShape {
  static constexpr int kThreads = 256;
  static constexpr int kStageBytes = 8192;
  static constexpr int kStages = 5;
};

// The 16-byte-aligned body of a contiguous row: head scalars first, then body_bytes of vectors.
template <class T>
struct RowBody {
  int64_t head;        // elements before the first 16-byte boundary
  int64_t body_bytes;  // a multiple of 16
  __device__ __forceinline__ RowBody(const T* row, int64_t n) {
    head = aligned_head(row, n);
    body_bytes = (n - head) * int64_t(sizeof(T)) / 16 * 16;
  }
};

template <class T, class Acc, class Op, int kThreads = BulkShape::kThreads, int kStageBytes = BulkShape::kStageBytes,
          int kStages = BulkShape::kStages>
__global__ void __launch_bounds__(kThreads)
    reduce_bulk_kernel(ReduceKernelParams<T> p, Acc* partials, unsigned int* tickets) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(kStageBytes % (16 * kThreads) == 0, "a full stage is whole vectors for every thread");
  using BR = BlockReduce<Acc, kThreads>;
  __shared__ __align__(128) unsigned char stage[kStages][kStageBytes];
  __shared__ uint64_t full[kStages];
  __shared__ typename BR::TempStorage temp;
  __shared__ bool is_last_block;
  const Op op;
  const int t = threadIdx.x;
  const int64_t parts = gridDim.x, part = blockIdx.x;
  if (t == 0) {
    for (int s = 0; s < kStages; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  int64_t seq = 0;  // stages consumed by this block so far (all rows)
  for (int64_t row = blockIdx.y; row < p.layout.num_rows; row += gridDim.y) {
    const T* in_row = p.in + p.layout.in_row_offset(row);
    const int64_t n = p.layout.row_len;
    const RowBody<T> body(in_row, n);
    const unsigned char* body_src = reinterpret_cast<const unsigned char*>(in_row + body.head);
    const int64_t row_stages = (body.body_bytes + kStageBytes - 1) / kStageBytes;
    const int64_t per_part = (row_stages + parts - 1) / parts;
    const int64_t first = part * per_part;
    const int64_t count = first >= row_stages ? 0 : min_of(per_part, row_stages - first);
    auto issue = [&](int64_t i) {  // thread 0: stage i of this block's chunk into its slot
      const int64_t offset = (first + i) * kStageBytes;
      const uint32_t bytes = static_cast<uint32_t>(min_of<int64_t>(kStageBytes, body.body_bytes - offset));
      uint64_t* bar = &full[(seq + i) % kStages];
      ptx::mbarrier_arrive_expect_tx(bar, bytes);
      ptx::bulk_load_global_to_shared(stage[(seq + i) % kStages], body_src + offset, bytes, bar);
    };
    if (t == 0) {
      for (int64_t i = 0; i < kStages && i < count; ++i) issue(i);
    }

    Acc acc[2] = {Op::template identity<Acc>(), Op::template identity<Acc>()};
    const int64_t first_thread = part * kThreads + t;  // head and tail: one element per thread of part 0
    if (first_thread < body.head) acc[0] = op(acc[0], cast_value<Acc>(in_row[first_thread]));
    const int64_t tail = body.head + body.body_bytes / int64_t(sizeof(T)) + first_thread;
    if (tail < n) acc[1] = op(acc[1], cast_value<Acc>(in_row[tail]));

    for (int64_t i = 0; i < count; ++i) {
      const int slot = static_cast<int>((seq + i) % kStages);
      ptx::mbarrier_wait(&full[slot], static_cast<uint32_t>(((seq + i) / kStages) & 1));
      const int64_t offset = (first + i) * kStageBytes;
      const int vectors = static_cast<int>(min_of<int64_t>(kStageBytes, body.body_bytes - offset) / 16);
      const Vec16<T>* v = reinterpret_cast<const Vec16<T>*>(stage[slot]);
#pragma unroll
      for (int k = 0; k < kStageBytes / 16 / kThreads; ++k) {
        const int idx = k * kThreads + t;
        if (idx < vectors) fold_vector<2>(acc, v[idx], op);
      }
      __syncthreads();  // every thread has read the slot: the copy engine may refill it
      if (t == 0 && i + kStages < count) issue(i + kStages);
    }
    seq += count;
    const Acc total = BR::reduce(op(acc[0], acc[1]), op, temp);
    finish_row<kThreads>(total, p, row, part, parts, partials, tickets, op, temp, is_last_block);
  }
#endif
}

}  // namespace reduce_detail
}  // namespace gpuprims
