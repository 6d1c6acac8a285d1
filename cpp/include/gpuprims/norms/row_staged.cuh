#pragma once
// Rows that lie back to back in memory (row stride = row length, unit element stride: odd row
// lengths and offset views of contiguous arrays), staged through shared memory a run of whole rows
// at a time: row_on_chip's Staged kernels (algorithm "row_staged": the softmax kind's rows of up
// to 128 elements, may_stage_rows in row_on_chip_launch.cuh).
//
// Why: a ragged row read in place (RaggedRow, row_tile.cuh) takes its aligned body as 16-byte
// vectors but its one or two partial vectors element by element, and a group of lanes waits on
// those scalar loads; for short rows (a 63-element bf16 row: seven vectors and up to fifteen
// scalars) they are a large share of the row. Rows back to back form one contiguous run of bytes
// per block: the block copies the run into shared memory with 16-byte cp.async (only the two
// vectors at the very ends of x are taken element by element, so nothing outside x is read), the
// next run's copies in flight while it works on this one (two stages), and writes the run back with
// 16-byte stores (elements at the run's ends, which share a vector with the neighbouring runs that
// other blocks write). Between the two, each row is held in registers from its place in the stage
// exactly as the ragged kernel holds it from global memory (the stage keeps x's alignment modulo 16
// bytes, which y shares: rows_ragged_vectors), so the outputs are the ragged kernels', bit for bit.
// Longer rows lost staged (docs/norms.md, "Rows back to back").
#include <cstddef>
#include <cstdint>

#include "gpuprims/core/config.hpp"
#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/util/ptx_sm80.cuh"

namespace gpuprims {
namespace norms {

// The 16-byte vectors a run of elements [begin, end) of `rows` touches: vector k covers bytes
// [base + 16 k, base + 16 k + 16), base = the run's first byte rounded down to 16 bytes.
struct RunVectors {
  uintptr_t first, last;  // the run's bytes
  uintptr_t base;
  int count;
  template <class T>
  __device__ __forceinline__ RunVectors(const T* rows, int64_t begin, int64_t end)
      : first(reinterpret_cast<uintptr_t>(rows + begin)), last(reinterpret_cast<uintptr_t>(rows + end)),
        base(first & ~uintptr_t(15)), count(int((last - base + 15) / 16)) {}
  // Copies the elements of vector k that lie in the run from `from` to `to` (each laid out from
  // base), one by one.
  template <class T>
  __device__ __forceinline__ void copy_elements(int k, const unsigned char* from, unsigned char* to) const {
#pragma unroll
    for (int l = 0; l < 16; l += int(sizeof(T))) {
      const uintptr_t e = base + 16 * uintptr_t(k) + l;
      if (e >= first && e < last) *reinterpret_cast<T*>(to + 16 * k + l) = *reinterpret_cast<const T*>(from + 16 * k + l);
    }
  }
};

// Copies elements [begin, end) of `rows` (total elements in all, the whole of x) into `stage`,
// whose byte k holds the byte at base + k (RunVectors): 16-byte cp.async for every vector inside
// x, element by element for the first and last vectors of x where they reach outside it (only
// the runs at x's ends). Commits nothing: the caller commits the group.
template <class T, int kThreads>
__device__ __forceinline__ void stage_in(const T* rows, int64_t total, int64_t begin, int64_t end, unsigned char* stage) {
  const RunVectors run(rows, begin, end);
  const bool head_outside = run.base < reinterpret_cast<uintptr_t>(rows);
  const bool tail_outside = run.base + 16 * uintptr_t(run.count) > reinterpret_cast<uintptr_t>(rows + total);
  const unsigned char* from = reinterpret_cast<const unsigned char*>(run.base);
  const uint32_t to = ptx::shared_address(stage);
  for (int k = threadIdx.x; k < run.count; k += kThreads) {
    if ((k == 0 && head_outside) || (k == run.count - 1 && tail_outside)) run.copy_elements<T>(k, from, stage);
    else ptx::cp_async_16(to + 16 * k, from + 16 * k);
  }
}

// Writes elements [begin, end) of `rows` (y) from `stage`, laid out as stage_in laid out x's
// (y's rows start as far into their 16-byte units as x's): 16-byte stores for the vectors inside
// the run, element by element at its ends (those vectors' other elements are other runs').
template <class T, int kThreads>
__device__ __forceinline__ void stage_out(const unsigned char* stage, T* rows, int64_t begin, int64_t end) {
  const RunVectors run(rows, begin, end);
  const bool head_partial = run.first % 16 != 0, tail_partial = run.last % 16 != 0;
  unsigned char* to = reinterpret_cast<unsigned char*>(run.base);
  for (int k = threadIdx.x; k < run.count; k += kThreads) {
    if ((k == 0 && head_partial) || (k == run.count - 1 && tail_partial)) {
      run.copy_elements<T>(k, stage, to);
    } else {
      *reinterpret_cast<uint4*>(to + 16 * k) = *reinterpret_cast<const uint4*>(stage + 16 * k);
    }
  }
}

// How a kStaged kernel stages its rows: runs of whole rows of about kRunBytes (at least one row a
// group), kStages of them in shared memory, kStages - 1 in flight while the block works on one.
template <int kStages_, int64_t kRunBytes_>
struct StagedRuns {
  static constexpr int kStages = kStages_;
  static constexpr int64_t kRunBytes = kRunBytes_;
  static_assert(kStages >= 2, "one stage in flight at least");

  // Rows of a run: a whole number of rows for each group of the block (Cfg::kRowsPerBlock of them),
  // as many as fit kRunBytes, at least one.
  template <class T, class Cfg>
  GPUPRIMS_HD static constexpr int64_t run_rows(int64_t row_len) {
    const int64_t group_bytes = int64_t(Cfg::kRowsPerBlock) * row_len * int64_t(sizeof(T));
    return Cfg::kRowsPerBlock * (group_bytes >= kRunBytes ? 1 : kRunBytes / group_bytes);
  }
  // Runs of rows of the layout: the blocks a wave may hold at most.
  template <class T, class Cfg>
  GPUPRIMS_HD static constexpr int64_t runs(const RowLayout& layout) {
    return (layout.num_rows + run_rows<T, Cfg>(layout.row_len) - 1) / run_rows<T, Cfg>(layout.row_len);
  }
  // The stage of a run of run_bytes: from the 16-byte boundary at or before its first byte to the
  // one at or after its last (at most 30 bytes more than the run), in whole 16-byte units.
  GPUPRIMS_HD static constexpr size_t stage_for(int64_t run_bytes) { return size_t(run_bytes + 32 + 15) / 16 * 16; }
  // One stage of the layout's runs.
  template <class T, class Cfg>
  GPUPRIMS_HD static constexpr size_t stage_bytes(int64_t row_len) {
    return stage_for(run_rows<T, Cfg>(row_len) * row_len * int64_t(sizeof(T)));
  }
  // The kernel's dynamic shared memory.
  template <class T, class Cfg>
  GPUPRIMS_HD static constexpr size_t shared_bytes(int64_t row_len) {
    return kStages * stage_bytes<T, Cfg>(row_len);
  }
  // A bound of shared_bytes over the rows the tile holds (at most Cfg's capacity): a run is at
  // most kRunBytes, or one row a group where that is more.
  template <class T, class Cfg>
  static constexpr size_t max_shared_bytes() {
    const int64_t capacity_bytes = int64_t(Cfg::kThreads) * Cfg::kVecs * 16;  // every group's row full
    return kStages * stage_for(capacity_bytes > kRunBytes ? capacity_bytes : kRunBytes);
  }

  // The kStaged kernel's loop: the block takes runs blockIdx.x, + gridDim.x, ... (group g of the
  // block takes rows g, g + kRowsPerBlock, ... of each), the i-th of them in stage i mod kStages.
  // process(row, xr, y_row) does one row, here with xr = y_row() = the row's place in the stage (each group
  // reads its row whole into registers before it writes any of it, and the rows' places do not
  // overlap). Every iteration commits one cp.async group (empty past the last run), so
  // wait_group<kStages - 2> means this run's copies have landed.
  // Ordering: that wait then __syncthreads makes every thread's copies of the run visible, and
  // orders the stage_out of the stage about to be refilled (by the run kStages - 1 ahead) before
  // the copies into it; the second __syncthreads orders every row's writes before stage_out.
  template <class T, class Cfg, class Process>
  __device__ __forceinline__ static void run(const RowLayout& layout, const T* x, T* y, int len, unsigned char* smem,
                                             Process& process) {
    constexpr int kThreads = Cfg::kThreads;
    const int rows = int(run_rows<T, Cfg>(len));
    const int64_t count = runs<T, Cfg>(layout), total = layout.num_rows * len;
    const int bytes = int(stage_bytes<T, Cfg>(len));
    const auto end_of = [&](int64_t r) { return (r + 1) * rows * len < total ? (r + 1) * rows * len : total; };
    const auto issue = [&](int64_t r, int stage) {  // run r into `stage`, if there is a run r
      if (r < count) stage_in<T, kThreads>(x, total, r * rows * len, end_of(r), smem + stage * bytes);
      ptx::cp_async_commit();
    };
#pragma unroll
    for (int i = 0; i < kStages - 1; ++i) issue(blockIdx.x + int64_t(i) * gridDim.x, i);
    int stage = 0;  // run r's
    for (int64_t r = blockIdx.x; r < count; r += gridDim.x, stage = stage + 1 < kStages ? stage + 1 : 0) {
      ptx::cp_async_wait<kStages - 2>();
      __syncthreads();
      issue(r + int64_t(kStages - 1) * gridDim.x, stage == 0 ? kStages - 1 : stage - 1);
      unsigned char* at = smem + stage * bytes;
      T* first = reinterpret_cast<T*>(at + reinterpret_cast<uintptr_t>(x + r * rows * len) % 16);
      const int in_run = int(end_of(r) / len - r * rows);  // rows of this run
      for (int k = threadIdx.x / Cfg::kThreadsPerRow; k < in_run; k += Cfg::kRowsPerBlock) {
        T* at_row = first + k * len;
        process(r * rows + k, at_row, [at_row] { return at_row; });
      }
      __syncthreads();
      stage_out<T, kThreads>(at, y, r * rows * len, end_of(r));
    }
  }
};

// The library's: two stages of about 16 KiB (H100, session 27 device run 4, rows of 33 and 63
// elements: within a point of 8 KiB, or up to 13 points faster: float32 softmax 33 77.6 -> 90.3 %
// of copy; 4 KiB and three or four stages were slower).
using LibraryStagedRuns = StagedRuns<2, 16384>;

}  // namespace norms
}  // namespace gpuprims
