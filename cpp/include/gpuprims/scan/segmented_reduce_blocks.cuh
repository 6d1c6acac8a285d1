#pragma once
// Segmented reduction with a block per segment, for inputs whose segments are long on average
// (the host's rule: cpp/src/scan/segmented_reduce.cu). Each block reads its segment in rounds of
// kThreads x kVecs 16-byte vectors, every load of a round issued before the first is used: a
// 4096-item float32 segment is one round of 128 threads, the whole 16 KiB requested at once. On
// regular segments of 4096 items and more this reads faster than the merge-path warp tiles
// (segmented_reduce_ranges.cuh), whose warps walk the same bytes 2 KiB at a time (docs/scan.md
// "Segmented reduce", session 19).
//
// A segment over kLongRounds rounds would hold one block for long (one huge segment among small
// ones would be read by a single block), so its block only appends it to a list, and the second
// kernel (segmented_reduce_long_kernel) cuts every listed segment into chunks that its blocks
// share across the GPU: each chunk's block-reduced partial goes to scratch, and the block that
// finishes a segment's last chunk (a ticket per segment) folds the partials in chunk order.
// Chunk sizes depend only on the segment's length, so results are bitwise reproducible.
//
// The long kernel also reduces the last segments itself, one per block, before it waits for the
// blocks kernel (whose grid ends before them): its blocks are scheduled during the blocks kernel's
// last wave, so they read those segments then instead of idling until its end. The blocks
// kernel's first blocks list the long segments among them (docs/scan.md "Session 34").
//
// The list's head is one 64-bit counter, (entries << 40) | chunks, so one atomicAdd gives an
// appended segment both its slot and its first chunks; the appending block marks each of those
// chunks with the slot, so a long-kernel block finds its chunk's segment in two loads. The
// counter and the long kernel's block count
// come zero from the stream's counters (core/stream.hpp) and the long kernel returns them to zero:
// its last block to finish does so after every block has read the counter.
// Offsets that are not nondecreasing give unspecified values, but every index stays inside x,
// out and the scratch: a segment that finds the list full is read by its own block.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/reduce/reduce_common.cuh"
#include "gpuprims/scan/segmented_reduce_kernel.cuh"
#include "gpuprims/util/dependent_launch.cuh"

namespace gpuprims {
namespace scan_detail {

// A listed long segment; segment < 0 marks a slot whose segment did not fit the chunk space.
struct LongSegment {
  int64_t segment, begin, end, chunk_base;
};

template <class Acc>
struct LongSegments {
  unsigned long long* head;  // (entries << 40) | chunks; zero at launch, returned to zero
  unsigned int* blocks_done; // the long kernel's finished blocks; likewise
  LongSegment* entries;
  unsigned int* tickets;     // chunks finished per entry, written zero by the appender
  unsigned int* chunk_slot;  // each chunk's entry
  Acc* partials;             // one per chunk
  int64_t max_entries, max_chunks;
  // The last `tail` segments are the long kernel's own (the blocks kernel's grid ends before them);
  // at most half of them, zero without a long kernel.
  int64_t tail;
};

constexpr int kLongHeadShift = 40;
constexpr unsigned long long kLongChunkMask = (1ull << kLongHeadShift) - 1;

// One launch shape of the block path: threads per block, 16-byte vectors per thread in a round,
// resident blocks per SM the registers must allow, and the rounds beyond which a segment is listed
// (also the smallest chunk of a listed segment).
template <int kThreads_, int kVecs_, int kMinBlocks_, int kLongRounds_>
struct BlockShape {
  static constexpr int kThreads = kThreads_, kVecs = kVecs_, kMinBlocks = kMinBlocks_, kLongRounds = kLongRounds_;
  static constexpr int kMaxChunksPerSegment = 1024;  // about one wave of the long kernel's blocks

  template <class T>
  static constexpr int64_t round_items() { return int64_t(kThreads) * kVecs * Vec16<T>::kLanes; }
  template <class T>
  static constexpr int64_t long_items() { return kLongRounds * round_items<T>(); }
  // Items per chunk of a long segment: at least kLongRounds rounds, and few enough chunks that the
  // last block's fold of the partials stays short (a 2^28-item segment: 1024 chunks).
  template <class T>
  __host__ __device__ static int64_t chunk_items(int64_t len) {
    const int64_t even = (len + kMaxChunksPerSegment - 1) / kMaxChunksPerSegment;
    const int64_t rounded = (even + round_items<T>() - 1) / round_items<T>() * round_items<T>();
    return rounded > long_items<T>() ? rounded : long_items<T>();
  }
  // Bounds of the list for nondecreasing offsets: segments over long_items, and their chunks
  // (each at most len / long_items + 1).
  template <class T>
  static int64_t max_entries(int64_t n, int64_t count) {
    const int64_t by_items = n / (long_items<T>() + 1);
    return by_items < count ? by_items : count;
  }
  template <class T>
  static int64_t max_chunks(int64_t n, int64_t count) {
    return n / long_items<T>() + max_entries<T>(n, count);
  }
};

// 128 threads x 8 vectors, 8 resident blocks per SM (64 registers): the best shape of session 19's
// sweep on the H100 (x CUB: 65536 x 4096 1.004-1.011, 16384 x 16384 1.006, 32768 x 8192
// 1.000-1.003, 131072 x 2048 1.156-1.157, lengths 1-9000 1.032; 256 x 4 and 512 x 2 lost 5-17
// points on some of these, whichever the register cap). Segments over 16 rounds (256 KiB) are
// listed: session 19 run 7 (x CUB, listing over 8 / 16 / 32 rounds) 4096 x 65536 0.952 / 0.993-0.995
// / 0.994-0.996, lengths 1-4000 with 1 in 8 of 1-100000 1.002-1.004 / 1.018-1.021 / 1.038, while
// one 131072-item segment after 65504 of 4096, read by one block at the end of the grid, costs
// 1.059-1.060 / 1.041-1.046 / 1.031-1.033.
using BlockPathShape = BlockShape<128, 8, 8, 16>;

// This thread's share of op over x[begin, begin + len), read by the whole block (x unit-stride,
// any element-aligned address): the items before the first 16-byte boundary and after the last one one by
// one, the vectors between in rounds of kThreads x kVecs with all of a round's loads in flight
// before any is added. Every item's place in the fold depends only on (begin, len) and x's address:
// deterministic. (group_partial, segmented_reduce_kernel.cuh, computes the same for any group and
// stride, but its 64-bit loop bounds took this shape to 80-94 registers: 0.65x CUB at 4096 items.)
template <class T, class Acc, class Op, int kThreads, int kVecs>
__device__ __forceinline__ Acc block_share(const T* __restrict__ x, int64_t begin, int64_t len) {
  constexpr int kLanes = Vec16<T>::kLanes;
  // An accumulator per vector in flight; 8-byte accumulators share one per two vectors (with one
  // each, the 64-bit kernels spilled 8 bytes at 64 registers).
  constexpr int kAccs = sizeof(Acc) == 8 ? kVecs / 2 : kVecs;
  const Op op;
  const int t = threadIdx.x;
  Acc acc[kAccs];
#pragma unroll
  for (int u = 0; u < kAccs; ++u) acc[u] = Op::template identity<Acc>();
  const int head = int(reduce_detail::aligned_head(x + begin, len));
  if (t < head) acc[0] = op(acc[0], cast_value<Acc>(x[begin + t]));
  const T* body = x + begin + head;
  const int64_t vectors = (len - head) / kLanes;
  if (t < int((len - head) % kLanes)) acc[1 % kAccs] = op(acc[1 % kAccs], cast_value<Acc>(body[vectors * kLanes + t]));
  constexpr int kRound = kThreads * kVecs;
  const T* v = body + int64_t(t) * kLanes;
  const int64_t full_rounds = vectors / kRound;
  for (int64_t r = 0; r < full_rounds; ++r, v += int64_t(kRound) * kLanes) {
    Vec16<T> a[kVecs];
#pragma unroll
    for (int u = 0; u < kVecs; ++u) a[u] = load_vec16<T>(v + u * kThreads * kLanes);
#pragma unroll
    for (int u = 0; u < kVecs; ++u)
#pragma unroll
      for (int j = 0; j < kLanes; ++j) acc[u % kAccs] = op(acc[u % kAccs], cast_value<Acc>(a[u].lane[j]));
  }
  const int rest = int(vectors - full_rounds * kRound);  // vectors of the last, partial round
#pragma unroll
  for (int u = 0; u < kVecs; ++u) {
    if (t + u * kThreads < rest) {
      const Vec16<T> a = load_vec16<T>(v + u * kThreads * kLanes);
#pragma unroll
      for (int j = 0; j < kLanes; ++j) acc[u % kAccs] = op(acc[u % kAccs], cast_value<Acc>(a.lane[j]));
    }
  }
#pragma unroll
  for (int u = 1; u < kAccs; ++u) acc[0] = op(acc[0], acc[u]);
  return acc[0];
}

// Lists segment s for the long kernel (the whole block calls this): thread 0 takes a slot and the
// first chunk number, then the block marks the segment's chunks with the slot. False when the list
// is full (only with offsets that are not nondecreasing); the segment's block then reads it itself.
template <class T, class Acc, class Shape>
__device__ __forceinline__ bool append_long(const LongSegments<Acc>& longs, int64_t s, int64_t begin, int64_t end) {
  __shared__ int64_t slot, base;
  __shared__ bool fits;
  const int64_t len = end - begin, items = Shape::template chunk_items<T>(len);
  const int64_t chunks = (len + items - 1) / items;
  if (threadIdx.x == 0) {
    // A full list takes no more appends, so the head's fields cannot overflow (only blocks that read
    // it before it filled, at most those resident at once, append past the end).
    slot = int64_t(__ldcg(longs.head) >> kLongHeadShift);
    if (slot < longs.max_entries) {
      const unsigned long long old =
          atomicAdd(longs.head, (1ull << kLongHeadShift) | static_cast<unsigned long long>(chunks));
      slot = int64_t(old >> kLongHeadShift);
      base = int64_t(old & kLongChunkMask);
    }
    fits = slot < longs.max_entries && base + chunks <= longs.max_chunks;
    if (slot < longs.max_entries) {
      longs.entries[slot] = LongSegment{fits ? s : -1, begin, end, base};  // the long kernel skips a -1
      longs.tickets[slot] = 0;
    }
  }
  __syncthreads();
  if (fits) {
    for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) longs.chunk_slot[base + c] = unsigned(slot);
  }
  return fits;
}

// op over x[begin, begin + len), by the whole block; valid in thread 0. `temp` may be reused after a
// __syncthreads().
template <class T, class Acc, class Op, class Shape>
__device__ __forceinline__ Acc block_total(const T* __restrict__ x, int64_t begin, int64_t len,
                                           typename BlockReduce<Acc, Shape::kThreads>::TempStorage& temp) {
  const Acc part = block_share<T, Acc, Op, Shape::kThreads, Shape::kVecs>(x, begin, len);
  return BlockReduce<Acc, Shape::kThreads>::reduce(part, Op{}, temp);
}

// op over segment s = x[begin, begin + len) into out[s]: block_total, stored by thread 0.
template <class T, class Acc, class Op, class Shape>
__device__ __forceinline__ void reduce_segment(const T* __restrict__ x, const Segments& seg, int64_t s, int64_t begin,
                                               int64_t len,
                                               typename BlockReduce<Acc, Shape::kThreads>::TempStorage& temp) {
  const Acc total = block_total<T, Acc, Op, Shape>(x, begin, len, temp);
  if (threadIdx.x == 0) store_as(seg.out, s * seg.out_step, seg.out_dtype, total);
}

// Whether a segment of `len` items goes to the list: the one rule both kernels apply.
template <class T, class Acc, class Shape>
__device__ __forceinline__ bool listed_length(const LongSegments<Acc>& longs, int64_t len) {
  return len > Shape::template long_items<T>() && longs.max_entries > 0;
}

// A block per segment but the tail's (grid = count - longs.tail). Segments over Shape::long_items go
// to the list. Block b < tail also vets tail segment count - tail + b, which the long kernel reduces
// before its wait unless it is long: a long one this block lists, or reads itself when the list is
// full, so that the long kernel needs no list of its own before its wait.
template <class T, class Acc, class Op, class Shape>
__global__ void __launch_bounds__(Shape::kThreads, Shape::kMinBlocks)
segmented_reduce_blocks_kernel(const T* __restrict__ x, Segments seg, LongSegments<Acc> longs) {
  __shared__ typename BlockReduce<Acc, Shape::kThreads>::TempStorage temp;
#if __CUDA_ARCH__ >= 900
  // Lets the long kernel's blocks be scheduled during this grid's last wave (they reduce the tail
  // segments, then wait for this grid's completion and memory before reading the list).
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  const int64_t s = blockIdx.x, t = seg.count - longs.tail + s;
  const bool vets = s < longs.tail;  // uniform in the block, like every branch below
  // The tail segment's offsets are requested with the block's own, and a long one is dealt with
  // first (rare), so that nothing of it stays live across the block's own reads.
  const int64_t tail_begin = vets ? seg.offset(t) : 0, tail_end = vets ? seg.offset(t + 1) : 0;
  const int64_t begin = seg.offset(s), end = seg.offset(s + 1);
  const int64_t tail_len = tail_end > tail_begin ? tail_end - tail_begin : 0;
  if (listed_length<T, Acc, Shape>(longs, tail_len)) {
    if (!append_long<T, Acc, Shape>(longs, t, tail_begin, tail_end)) {
      reduce_segment<T, Acc, Op, Shape>(x, seg, t, tail_begin, tail_len, temp);
    }
    __syncthreads();  // append_long's and temp's shared words are reused
  }
  const int64_t len = end > begin ? end - begin : 0;
  if (!listed_length<T, Acc, Shape>(longs, len) || !append_long<T, Acc, Shape>(longs, s, begin, end)) {
    reduce_segment<T, Acc, Op, Shape>(x, seg, s, begin, len, temp);
  }
}

// The tail's short segments, then the listed segments, cut into chunks that the blocks take in
// turn (c = blockIdx.x, + gridDim.x, ...). Launched after the blocks kernel, overlapped on sm_90
// (programmatic stream serialization: it waits for that kernel's completion and memory before
// reading the list).
template <class T, class Acc, class Op, class Shape>
__global__ void __launch_bounds__(Shape::kThreads, Shape::kMinBlocks)
segmented_reduce_long_kernel(const T* __restrict__ x, Segments seg, LongSegments<Acc> longs) {
  const Op op;
  __shared__ typename BlockReduce<Acc, Shape::kThreads>::TempStorage temp;
  __shared__ bool last_chunk;
  // The tail segments first: their offsets and items were written before the blocks kernel
  // started, so they need no wait, and reading them while the blocks kernel's last wave runs hides
  // this kernel's wait (docs/scan.md, "Session 34"). Long ones were listed (or read) by the blocks
  // kernel.
  for (int64_t t = seg.count - longs.tail + blockIdx.x; t < seg.count; t += gridDim.x) {
    const int64_t begin = seg.offset(t), end = seg.offset(t + 1);
    const int64_t len = end > begin ? end - begin : 0;
    if (listed_length<T, Acc, Shape>(longs, len)) continue;
    reduce_segment<T, Acc, Op, Shape>(x, seg, t, begin, len, temp);
    __syncthreads();  // temp is reused
  }
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();  // the list (a no-op after a plain launch)
#endif
  const unsigned long long head = __ldcg(longs.head);
  // Nothing listed: every block reads zero (the head changes only after all have counted
  // themselves below), and there is nothing to return to zero.
  if (head == 0) return;
  const int64_t listed = int64_t(head >> kLongHeadShift), chunk_total = int64_t(head & kLongChunkMask);
  const int64_t slots = listed < longs.max_entries ? listed : longs.max_entries;
  const int64_t chunks = chunk_total < longs.max_chunks ? chunk_total : longs.max_chunks;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    // The chunk's segment. Chunks of a segment that did not fit were never marked: whatever their
    // mark holds, the checks below skip them.
    const unsigned slot = longs.chunk_slot[c];
    if (slot >= slots) continue;  // uniform in the block, like every branch below
    const LongSegment e = longs.entries[slot];
    const int64_t len = e.end - e.begin, items = Shape::template chunk_items<T>(len);
    const int64_t segment_chunks = (len + items - 1) / items, j = c - e.chunk_base;
    if (e.segment < 0 || j < 0 || j >= segment_chunks) continue;
    const int64_t begin = e.begin + j * items, rest = e.end - begin;
    const Acc total = block_total<T, Acc, Op, Shape>(x, begin, rest < items ? rest : items, temp);
    if (threadIdx.x == 0) {
      longs.partials[c] = total;
      __threadfence();  // the partial is visible to whoever draws the segment's last ticket
      last_chunk = atomicAdd(&longs.tickets[slot], 1u) == unsigned(segment_chunks - 1);
    }
    __syncthreads();
    if (last_chunk) {
      __threadfence();
      const Acc v = reduce_detail::combine_published<Shape::kThreads>(longs.partials + e.chunk_base, segment_chunks,
                                                                      op, temp);
      if (threadIdx.x == 0) store_as(seg.out, e.segment * seg.out_step, seg.out_dtype, v);
    }
    __syncthreads();  // temp and last_chunk are reused by the next chunk
  }
  // Every block has read the head before it counts itself done: the last one returns both counters
  // to zero for the stream's next kernel.
  if (threadIdx.x == 0 && atomicAdd(longs.blocks_done, 1u) == gridDim.x - 1) {
    *longs.head = 0;
    *longs.blocks_done = 0;
  }
}

// Scratch of the long-segment list: entries, tickets, chunk marks, partials, each part 256-byte
// aligned; the parts' byte offsets and the total, in the one place that orders them.
struct LongSegmentsLayout {
  std::size_t tickets, chunk_slot, partials, bytes;
};
template <class Acc>
LongSegmentsLayout long_segments_layout(int64_t max_entries, int64_t max_chunks) {
  auto align = [](std::size_t b) { return (b + 255) / 256 * 256; };
  LongSegmentsLayout at;
  at.tickets = align(std::size_t(max_entries) * sizeof(LongSegment));
  at.chunk_slot = at.tickets + align(std::size_t(max_entries) * sizeof(unsigned));
  at.partials = at.chunk_slot + align(std::size_t(max_chunks) * sizeof(unsigned));
  at.bytes = at.partials + align(std::size_t(max_chunks) * sizeof(Acc));
  return at;
}
template <class Acc>
std::size_t long_segments_bytes(int64_t max_entries, int64_t max_chunks) {
  return long_segments_layout<Acc>(max_entries, max_chunks).bytes;
}
template <class Acc>
LongSegments<Acc> long_segments_in(void* scratch, int64_t max_entries, int64_t max_chunks, unsigned int* counters) {
  const LongSegmentsLayout at = long_segments_layout<Acc>(max_entries, max_chunks);
  char* p = static_cast<char*>(scratch);
  LongSegments<Acc> l{};
  l.head = reinterpret_cast<unsigned long long*>(counters);  // counters[0..1], 8-byte aligned
  l.blocks_done = counters + 2;
  l.entries = reinterpret_cast<LongSegment*>(p);
  l.tickets = reinterpret_cast<unsigned int*>(p + at.tickets);
  l.chunk_slot = reinterpret_cast<unsigned int*>(p + at.chunk_slot);
  l.partials = reinterpret_cast<Acc*>(p + at.partials);
  l.max_entries = max_entries;
  l.max_chunks = max_chunks;
  return l;
}

// How many trailing segments the long kernel reduces itself: one per block (a wave of them, read
// while the blocks kernel's last wave runs), at most half of the segments.
inline int64_t default_tail(int64_t count, int64_t long_blocks) {
  return long_blocks < count / 2 ? long_blocks : count / 2;
}

// The blocks kernel (a block per segment), then, when a segment can be long (longs.max_entries >
// 0), the long kernel on `long_blocks` blocks, which also reduces the last `tail` segments (at most
// count / 2; zero without the long kernel), with programmatic stream serialization when `overlap`
// (its sm_90 build waits for the blocks kernel; see segmented_reduce_long_kernel).
template <class T, class Acc, class Op, class Shape = BlockPathShape>
cudaError_t launch_segment_blocks(const T* x, const Segments& seg, LongSegments<Acc> longs, int64_t long_blocks,
                                  int64_t tail, cudaStream_t stream, bool overlap) {
  static_assert(sizeof(Acc) >= 4, "the long kernel's partials are read as 4- or 8-byte words");
  longs.tail = longs.max_entries > 0 && tail <= seg.count / 2 ? tail : 0;
  segmented_reduce_blocks_kernel<T, Acc, Op, Shape>
      <<<unsigned(seg.count - longs.tail), Shape::kThreads, 0, stream>>>(x, seg, longs);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess || longs.max_entries == 0) return e;
  return launch_dependent(segmented_reduce_long_kernel<T, Acc, Op, Shape>, dim3(unsigned(long_blocks)),
                          dim3(Shape::kThreads), stream, overlap, x, seg, longs);
}

}  // namespace scan_detail
}  // namespace gpuprims
