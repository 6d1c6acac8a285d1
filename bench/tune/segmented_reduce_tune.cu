// Tuning sweep for segmented_reduce (docs/scan.md "Segmented reduce"): the segment-per-group
// kernels (a warp or a 128-thread block per segment, the library's choice by average length) next
// to the merge-path range kernels (segmented_reduce_ranges.cuh), the block path
// (segmented_reduce_blocks.cuh; "final" only) and cub::DeviceSegmentedReduce on
// the same data: 65536 x 4096 and 262144 x 1024 float32, one 2^28-1000-item segment + 1000
// length-1 ones, power-law lengths totalling 2^28, half the segments empty plus 2^20 trailing
// empty ones; int64 and int32 offsets; a min, a max and an int64 sum row. Every output is checked
// against a float64 (or exact) CPU reference, and each candidate's output is compared bitwise
// with a second run (determinism).
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icpp/include bench/tune/segmented_reduce_tune.cu -o /tmp/seg && /tmp/seg
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <cub/device/device_segmented_reduce.cuh>

#include "gpuprims/reduce/reduce_ops.hpp"
#include "gpuprims/scan/segmented_reduce_blocks.cuh"
#include "gpuprims/scan/segmented_reduce_kernel.cuh"
#include "gpuprims/scan/segmented_reduce_ranges.cuh"

#include "tune_common.cuh"

using namespace gpuprims;
using namespace gpuprims::scan_detail;

constexpr int64_t kItems = int64_t(1) << 28;

template <class T>
__host__ __device__ T value_at(int64_t i) {
  return T(int64_t((uint64_t(i) * 2654435761u >> 9) % 1000) - 500) / T(1000);
}
template <>
__host__ __device__ int64_t value_at<int64_t>(int64_t i) {
  return int64_t((uint64_t(i) * 2654435761u >> 9) % 1000) - 500 + (i % 7 == 0 ? int64_t(1) << 40 : 0);
}

template <class T>
__global__ void fill(T* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = value_at<T>(i);
}

// ---- segment length patterns (host), each totalling n items ----
std::vector<int64_t> offsets_of(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> off(lengths.size() + 1, 0);
  for (size_t i = 0; i < lengths.size(); ++i) off[i + 1] = off[i] + lengths[i];
  return off;
}
std::vector<int64_t> regular(int64_t segments, int64_t n) { return std::vector<int64_t>(segments, n / segments); }
std::vector<int64_t> one_huge(int64_t n) {  // one segment of n - 1000 items, then 1000 of one item
  std::vector<int64_t> l(1001, 1);
  l[0] = n - 1000;
  return l;
}
std::vector<int64_t> power_law(int64_t n, int64_t segments) {  // length of rank k ~ k^-1.5, shuffled
  std::vector<double> w(segments);
  double total = 0;
  for (int64_t k = 0; k < segments; ++k) total += w[k] = std::pow(double(k + 1), -1.5);
  std::vector<int64_t> l(segments);
  int64_t sum = 0;
  for (int64_t k = 0; k < segments; ++k) sum += l[k] = int64_t(w[k] / total * double(n));
  l[0] += n - sum;
  std::shuffle(l.begin(), l.end(), std::mt19937_64(12345));
  return l;
}
// Lengths drawn uniformly from 1..short_max, one in 8 from 1..long_max (when long_max > 0), the
// last segment taking what is left of n.
std::vector<int64_t> uniform_lengths(int64_t n, int64_t short_max, int64_t long_max, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<int64_t> l;
  int64_t total = 0;
  const int64_t room = std::max(short_max, long_max);
  while (total < n - room) {
    const int64_t len = long_max > 0 && g() % 8 == 0 ? 1 + int64_t(g() % uint64_t(long_max))
                                                      : 1 + int64_t(g() % uint64_t(short_max));
    l.push_back(len);
    total += len;
  }
  l.push_back(n - total);
  return l;
}
std::vector<int64_t> many_empty(int64_t n) {  // 2^20 alternating empty / n/2^19 items, then 2^20 empty
  std::vector<int64_t> l(int64_t(1) << 21, 0);
  for (int64_t s = 1; s < (int64_t(1) << 20); s += 2) l[s] = n >> 19;
  return l;
}

// ---- one problem: offsets on the device (int64 and int32), the reference ----
struct Problem {
  const char* name;
  int reps;  // timed repetitions: the irregular problems take the per-segment kernels tens of ms
  std::vector<int64_t> off;
  int64_t* d_off64;
  int32_t* d_off32;
};

Problem make_problem(const char* name, int reps, std::vector<int64_t> lengths) {
  Problem p{name, reps, offsets_of(lengths), nullptr, nullptr};
  const size_t m = p.off.size();
  std::vector<int32_t> off32(p.off.begin(), p.off.end());
  CHECK(cudaMalloc(&p.d_off64, m * sizeof(int64_t)));
  CHECK(cudaMalloc(&p.d_off32, m * sizeof(int32_t)));
  CHECK(cudaMemcpy(p.d_off64, p.off.data(), m * sizeof(int64_t), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(p.d_off32, off32.data(), m * sizeof(int32_t), cudaMemcpyHostToDevice));
  return p;
}
void free_problem(Problem& p) {
  CHECK(cudaFree(p.d_off64));
  CHECK(cudaFree(p.d_off32));
}

// Reference per segment: float64 sum and sum of |x| (tolerance), or exact min / max / int64 sum.
enum class Kind { kSum, kMin, kMax };
template <class T>
struct Reference {
  std::vector<double> value, scale;
};
template <class T>
Reference<T> reference(const Problem& p, Kind kind) {
  const int64_t segments = int64_t(p.off.size()) - 1;
  Reference<T> r{std::vector<double>(segments), std::vector<double>(segments)};
  for (int64_t s = 0; s < segments; ++s) {
    double v = kind == Kind::kSum ? 0.0 : (kind == Kind::kMin ? INFINITY : -INFINITY), a = 0;
    int64_t iv = 0;
    for (int64_t i = p.off[s]; i < p.off[s + 1]; ++i) {
      const T x = value_at<T>(i);
      if constexpr (std::is_integral<T>::value) iv += x;
      if (kind == Kind::kSum) v += double(x), a += std::fabs(double(x));
      else v = kind == Kind::kMin ? std::min(v, double(x)) : std::max(v, double(x));
    }
    r.value[s] = std::is_integral<T>::value ? double(iv) : v;  // int64 sums: compared exactly below
    r.scale[s] = a;
  }
  return r;
}

// ---- timing one candidate, checking its output and its determinism ----
struct Row {
  float cub_ms;
  double bytes;
};

template <class Out>
void measure(const char* label, const Row& row, std::function<void()> launch, Out* d_out,
             const std::vector<Out>& expected_exact, const std::vector<double>& ref, const std::vector<double>& scale,
             int reps) {
  tune::running = label;
  const size_t segments = ref.size();
  CHECK(cudaMemset(d_out, 0xff, segments * sizeof(Out)));  // poison
  launch();
  CHECK(cudaDeviceSynchronize());
  std::vector<Out> first(segments), got(segments);
  CHECK(cudaMemcpy(first.data(), d_out, segments * sizeof(Out), cudaMemcpyDeviceToHost));
  const float ms = tune::median_ms(launch, reps);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(got.data(), d_out, segments * sizeof(Out), cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(first.data(), got.data(), segments * sizeof(Out)) == 0;
  double worst = 0;
  size_t bad = 0;
  for (size_t s = 0; s < segments; ++s) {
    double err;
    if (!expected_exact.empty()) {
      err = std::memcmp(&got[s], &expected_exact[s], sizeof(Out)) == 0 ? 0.0 : 1.0;
    } else {
      err = std::fabs(double(got[s]) - ref[s]) / (1e-6 + scale[s]);
      if (std::isnan(err)) err = 1.0;
    }
    if (err > worst) worst = err, bad = s;
  }
  const bool pass = worst <= 1e-5 && same;
  printf("%s %-44s %9.4f ms %7.1f GB/s %8.3fx CUB  err %.1e%s%s\n", pass ? "PASS" : "FAIL", label, ms,
         row.bytes / ms / 1e6, row.cub_ms / ms, worst, same ? "" : "  NOT-DETERMINISTIC",
         worst <= 1e-5 ? "" : (" (segment " + std::to_string(bad) + ")").c_str());
}

// ---- the candidates ----
struct Buffers {
  void* scratch;
  size_t scratch_bytes;
  void* long_scratch = nullptr;     // the block path's list (sized for 4-byte items, 8-byte partials)
  unsigned* counters = nullptr;     // its head and done count: zero, and returned to zero by each launch
};

// A float32 sum row checked against the float64 reference alone (no exact expectation).
void measure_sum(const char* label, const Row& row, std::function<void()> launch, float* d_out,
                 const Reference<float>& ref, int reps) {
  measure<float>(label, row, std::move(launch), d_out, {}, ref.value, ref.scale, reps);
}

template <class Shape, class T, class Acc, class Op>
std::function<void()> ranges(const T* x, Segments seg, Buffers& buf, bool overlap = false, int64_t max_blocks = 0) {
  const int64_t tiles = Shape::tiles(seg);
  if (Shape::scratch_bytes(tiles) > buf.scratch_bytes) {
    printf("scratch too small\n");
    std::exit(1);
  }
  const auto parts = Shape::template partials<Acc>(buf.scratch, tiles);
  return [=] { CHECK((Shape::template launch<T, Acc, Op>(x, seg, true, parts, 0, overlap, max_blocks))); };
}

// The tile kernel alone: correct only where no segment is longer than a tile (no fixup needed);
// its time next to the pair's is the fixup's cost.
template <class Shape, class T, class Acc, class Op>
std::function<void()> tiles_only(const T* x, Segments seg, Buffers& buf) {
  const int64_t tiles = Shape::tiles(seg);
  const auto parts = Shape::template partials<Acc>(buf.scratch, tiles);
  const unsigned blocks = unsigned((tiles + Shape::kThreads / 32 - 1) / (Shape::kThreads / 32));
  return [=] {
    segmented_reduce_ranges_kernel<T, Acc, Op, Shape::kTileUnits, Shape::kThreads, Shape::kUnroll, Shape::kLaneItems,
                                   Shape::kMinBlocks, Shape::kPolicy><<<blocks, Shape::kThreads>>>(x, seg, true, parts);
  };
}

// The library's kernels before the range partition: a warp per segment under 1024 items on average,
// else a 128-thread block per segment.
template <class T, class Acc, class Op>
std::function<void()> per_segment(const T* x, Segments seg, int sms) {
  if (seg.n < 1024 * seg.count) {
    const int64_t blocks = std::min<int64_t>(int64_t(sms) * 64, (seg.count + 7) / 8);
    return [=] { segmented_reduce_kernel<T, Acc, Op, kWarpSize, 256><<<unsigned(blocks), 256>>>(x, seg, true); };
  }
  return [=] { segmented_reduce_kernel<T, Acc, Op, 128, 128><<<unsigned(seg.count), 128>>>(x, seg, true); };
}

// The block path (segmented_reduce_blocks.cuh): a block per segment, segments over 8 rounds listed
// for the long kernel, launched overlapped (as the library does on sm_90) or in plain stream order.
// `tail`: the trailing segments the long kernel reduces (-1: the library's default_tail).
template <class T, class Acc, class Op, class Shape = BlockPathShape>
std::function<void()> blocks(const T* x, Segments seg, Buffers& buf, int sms, bool overlap, int per_sm = Shape::kMinBlocks,
                             int64_t tail = -1) {
  const int64_t entries = Shape::template max_entries<T>(seg.n, seg.count),
                chunks = Shape::template max_chunks<T>(seg.n, seg.count);
  const LongSegments<Acc> longs = long_segments_in<Acc>(buf.long_scratch, entries, chunks, buf.counters);
  const int64_t long_blocks = std::min<int64_t>(chunks, int64_t(sms) * per_sm);
  if (tail < 0) tail = default_tail(seg.count, long_blocks);
  return [=] { CHECK((launch_segment_blocks<T, Acc, Op, Shape>(x, seg, longs, long_blocks, tail, 0, overlap))); };
}

// The blocks kernel alone, nothing listed and no long kernel: correct only where no segment is
// longer than Shape::long_items; its time next to the library's pair is the long kernel's cost.
template <class T, class Acc, class Op, class Shape = BlockPathShape>
std::function<void()> blocks_only(const T* x, Segments seg) {
  return [=] {
    segmented_reduce_blocks_kernel<T, Acc, Op, Shape><<<unsigned(seg.count), Shape::kThreads>>>(x, seg, LongSegments<Acc>{});
  };
}

template <int D, int W, int U, int L, int B = 0, LoadPolicy P = LoadPolicy::kReadOnly, int K = 0>
using R = RangeShape<D, W, U, L, B, P, K>;

// Block tiles (a block per tile, long pieces read by the whole block), in a pass of their own after
// every other row.
void block_tile_rows(const Row& row, const float* x, const Segments& seg, float* out, Buffers& buf,
                     const Reference<float>& ref, int reps) {
  using Sum = reduce_detail::Sum;
  measure_sum("block tiles 16384u 128t unroll4 lane16 block>1024", row,
              ranges<R<16384, 128, 4, 16, 0, LoadPolicy::kReadOnly, 1024>, float, float, Sum>(x, seg, buf),
              out, ref, reps);
  measure_sum("block tiles 16384u 128t unroll4 lane16 block>1024 8/SM", row,
              ranges<R<16384, 128, 4, 16, 8, LoadPolicy::kReadOnly, 1024>, float, float, Sum>(x, seg, buf),
              out, ref, reps);
  measure_sum("block tiles 32768u 256t unroll4 lane16 block>2048", row,
              ranges<R<32768, 256, 4, 16, 0, LoadPolicy::kReadOnly, 2048>, float, float, Sum>(x, seg, buf),
              out, ref, reps);
  measure_sum("block tiles 8192u 128t unroll4 lane16 block>1024", row,
              ranges<R<8192, 128, 4, 16, 0, LoadPolicy::kReadOnly, 1024>, float, float, Sum>(x, seg, buf),
              out, ref, reps);
  measure_sum("block tiles 16384u 128t unroll4 lane16 block>1024 overlapped", row,
              ranges<R<16384, 128, 4, 16, 0, LoadPolicy::kReadOnly, 1024>, float, float, Sum>(x, seg, buf, true),
              out, ref, reps);
}

// The library's range shape (DefaultRangeShape) and the two changes to it that round 2 measured
// apart (the fixup launched overlapped, block tiles), then the block path (session 19).
void final_rows(const Row& row, const float* x, const Segments& seg, float* out, Buffers& buf,
                const Reference<float>& ref, int reps, int sms) {
  using Sum = reduce_detail::Sum;
  measure_sum("blocks path (long kernel overlapped)", row, blocks<float, float, Sum>(x, seg, buf, sms, true), out, ref,
              reps);
  measure_sum("blocks path, long kernel plain", row, blocks<float, float, Sum>(x, seg, buf, sms, false), out, ref,
              reps);
  measure_sum("library: ranges 4096u 256t 3/SM streaming", row,
              ranges<DefaultRangeShape, float, float, Sum>(x, seg, buf), out, ref, reps);
  measure_sum("library shape, fixup overlapped", row,
              ranges<DefaultRangeShape, float, float, Sum>(x, seg, buf, true), out, ref, reps);
  measure_sum("block tiles 16384u 128t streaming, overlapped", row,
              ranges<R<16384, 128, 4, 16, 0, LoadPolicy::kStreaming, 1024>, float, float, Sum>(x, seg, buf, true),
              out, ref, reps);
}

// What the long kernel costs (sessions 33-34). The blocks path as the library launches it (the
// long kernel reducing a wave of trailing segments before its wait), without that tail (session
// 33's pair), with two tail segments per long-kernel block, with the long kernel on 2 blocks per SM,
// and the blocks kernel alone; timed synchronously (measure) and back to back (the library
// benchmark's method), three interleaved rounds.
void boundary_rows(const Row& row, const float* x, const Segments& seg, float* out, Buffers& buf,
                   const Reference<float>& ref, int reps, int sms, bool nothing_listed,
                   const std::function<void()>& cub_run) {
  using Sum = reduce_detail::Sum;
  const int per_sm = BlockPathShape::kMinBlocks;
  const auto lib = blocks<float, float, Sum>(x, seg, buf, sms, true);
  const auto no_tail = blocks<float, float, Sum>(x, seg, buf, sms, true, per_sm, 0);
  const auto double_tail = blocks<float, float, Sum>(x, seg, buf, sms, true, per_sm, 2 * sms * per_sm);
  const auto two = blocks<float, float, Sum>(x, seg, buf, sms, true, 2);
  const auto one = blocks_only<float, float, Sum>(x, seg);
  measure_sum("blocks path (library: tail in the long kernel)", row, lib, out, ref, reps);
  measure_sum("no tail (session 33)", row, no_tail, out, ref, reps);
  measure_sum("two tail segments per long block", row, double_tail, out, ref, reps);
  measure_sum("long kernel 2/SM (and its tail)", row, two, out, ref, reps);
  if (nothing_listed) measure_sum("blocks kernel only", row, one, out, ref, reps);
  for (int round = 0; round < 3; ++round) {
    auto back_to_back = [&](const std::function<void()>& f) {
      return f ? tune::median_ms_back_to_back([&](int) { f(); }, 60) : 0.f;
    };
    const float c = back_to_back(cub_run), l = back_to_back(lib), n = back_to_back(no_tail),
                d = back_to_back(double_tail), t = back_to_back(two), o = nothing_listed ? back_to_back(one) : 0.f;
    printf("  back to back, round %d, x CUB (%.4f ms): library %.4f  no tail %.4f  tail x2 %.4f  long 2/SM %.4f  "
           "kernel alone %.4f\n",
           round, c, c / l, c / n, c / d, c / t, o > 0 ? c / o : 0.f);
  }
}

enum class Pass { kSweep, kBlockTiles, kFinal, kBoundary };

void float_sum_problem(const Problem& p, const float* x, float* out, Buffers& buf, int sms, bool sweep,
                       Pass pass = Pass::kSweep) {
  const int64_t segments = int64_t(p.off.size()) - 1;
  const Reference<float> ref = reference<float>(p, Kind::kSum);
  size_t temp_bytes = 0;
  CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, x, out, segments, p.d_off64, p.d_off64 + 1));
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes + 1));
  auto cub_run = [&] { CHECK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, x, out, segments, p.d_off64, p.d_off64 + 1)); };
  const int reps = p.reps;
  int64_t longest = 0;
  for (int64_t s = 0; s < segments; ++s) longest = std::max(longest, p.off[s + 1] - p.off[s]);
  tune::running = "cub";
  const float cub_ms = tune::median_ms(cub_run, reps);
  const Row row{cub_ms, double(kItems) * 4 + double(segments) * 12};
  printf("== %s: %lld segments, float32 sum, CUB %.4f ms (%.1f GB/s)\n", p.name, (long long)segments, cub_ms,
         row.bytes / cub_ms / 1e6);
  measure_sum("cub::DeviceSegmentedReduce::Sum", row, cub_run, out, ref, reps);
  if (pass != Pass::kSweep) {
    const Segments seg{p.d_off64, true, 1, segments, kItems, 1, out, 1, DType::kFloat32};
    if (pass == Pass::kBlockTiles) {
      block_tile_rows(row, x, seg, out, buf, ref, reps);
    } else if (pass == Pass::kBoundary) {
      boundary_rows(row, x, seg, out, buf, ref, reps, sms, longest <= BlockPathShape::long_items<float>(), cub_run);
    } else {
      measure_sum("per-segment (library before)", row,
                  per_segment<float, float, reduce_detail::Sum>(x, seg, sms), out, ref, reps);
      final_rows(row, x, seg, out, buf, ref, reps, sms);
    }
    CHECK(cudaFree(temp));
    return;
  }
  for (int width = 0; width < 2; ++width) {
    const bool off64 = width == 0;
    const Segments seg{off64 ? static_cast<const void*>(p.d_off64) : static_cast<const void*>(p.d_off32), off64, 1,
                       segments, kItems, 1, out, 1, DType::kFloat32};
    using Sum = reduce_detail::Sum;
    const char* w = off64 ? "int64 offsets" : "int32 offsets";
    char label[96];
    snprintf(label, sizeof label, "per-segment (library before), %s", w);
    measure_sum(label, row, per_segment<float, float, Sum>(x, seg, sms), out, ref, reps);
    snprintf(label, sizeof label, "ranges 4096u 256t unroll4 lane16, %s", w);
    measure_sum(label, row, ranges<R<4096, 256, 4, 16>, float, float, Sum>(x, seg, buf), out, ref, reps);
    if (!sweep || !off64) continue;
    measure_sum("ranges 4096u 256t unroll4 lane16, fixup overlapped", row,
                ranges<R<4096, 256, 4, 16>, float, float, Sum>(x, seg, buf, true), out, ref, reps);
    {  // persistent: one wave of resident blocks, warps looping over tiles
      using Shape = R<4096, 256, 4, 16>;
      int resident = 0;
      CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &resident, segmented_reduce_ranges_kernel<float, float, Sum, 4096, 256, 4, 16, 0, LoadPolicy::kReadOnly>, 256, 0));
      snprintf(label, sizeof label, "ranges 4096u 256t unroll4 lane16, persistent (%d/SM)", resident);
      measure_sum(label, row,
                  ranges<Shape, float, float, Sum>(x, seg, buf, true, int64_t(resident) * sms), out, ref, reps);
    }
    if (longest <= 4096) {  // no segment longer than a tile: the tile kernel alone is correct
      measure_sum("ranges 4096u 256t unroll4 lane16, tile kernel only", row,
                  tiles_only<R<4096, 256, 4, 16>, float, float, Sum>(x, seg, buf), out, ref, reps);
    }
    // The tile size, the loads in flight, the registers (minimum resident blocks per SM: 3 x 256
    // threads allow 85 registers, 4 x 256 or 8 x 128 64, 6 x 256 or 12 x 128 40) and the load path.
    measure_sum("ranges 4096u 256t unroll4 lane16 3 blocks/SM", row,
                ranges<R<4096, 256, 4, 16, 3>, float, float, Sum>(x, seg, buf), out, ref, reps);
    measure_sum("ranges 4096u 256t unroll4 lane16 4 blocks/SM", row,
                ranges<R<4096, 256, 4, 16, 4>, float, float, Sum>(x, seg, buf), out, ref, reps);
    measure_sum("ranges 4096u 256t unroll4 lane16 6 blocks/SM", row,
                ranges<R<4096, 256, 4, 16, 6>, float, float, Sum>(x, seg, buf), out, ref, reps);
    measure_sum("ranges 4096u 128t unroll4 lane16", row,
                ranges<R<4096, 128, 4, 16>, float, float, Sum>(x, seg, buf), out, ref, reps);
    measure_sum("ranges 4096u 128t unroll4 lane16 8 blocks/SM", row,
                ranges<R<4096, 128, 4, 16, 8>, float, float, Sum>(x, seg, buf), out, ref, reps);
    measure_sum("ranges 4096u 128t unroll4 lane16 12 blocks/SM", row,
                ranges<R<4096, 128, 4, 16, 12>, float, float, Sum>(x, seg, buf), out, ref, reps);
    measure_sum("ranges 4096u 256t unroll4 lane16 3 blocks/SM streaming", row,
                ranges<R<4096, 256, 4, 16, 3, LoadPolicy::kStreaming>, float, float, Sum>(x, seg, buf), out, ref, reps);
    measure_sum("ranges 8192u 256t unroll4 lane16 3 blocks/SM", row,
                ranges<R<8192, 256, 4, 16, 3>, float, float, Sum>(x, seg, buf), out, ref, reps);
    measure_sum("ranges 4096u 256t unroll8 lane16 3 blocks/SM", row,
                ranges<R<4096, 256, 8, 16, 3>, float, float, Sum>(x, seg, buf), out, ref, reps);
    measure_sum("ranges 8192u 256t unroll8 lane16 3 blocks/SM", row,
                ranges<R<8192, 256, 8, 16, 3>, float, float, Sum>(x, seg, buf), out, ref, reps);
  }
  CHECK(cudaFree(temp));
}

// min and max of float32 and the int64 sum on the power-law problem: exact results.
void exact_rows(const Problem& p, const float* x, float* out, int64_t* out64, Buffers& buf, int sms) {
  const int64_t segments = int64_t(p.off.size()) - 1;
  const Segments seg{p.d_off64, true, 1, segments, kItems, 1, out, 1, DType::kFloat32};
  using Shape = DefaultRangeShape;
  for (int k = 0; k < 2; ++k) {
    const Kind kind = k == 0 ? Kind::kMin : Kind::kMax;
    const Reference<float> ref = reference<float>(p, kind);
    std::vector<float> exact(ref.value.begin(), ref.value.end()), cub_exact = exact;
    for (int64_t s = 0; s < segments; ++s)  // CUB gives an empty segment +-FLT_MAX, the library +-inf
      if (p.off[s] == p.off[s + 1]) cub_exact[s] = k == 0 ? FLT_MAX : -FLT_MAX;
    size_t temp_bytes = 0;
    void* temp = nullptr;
    auto cub_call = [&](void* t) {
      return kind == Kind::kMin ? cub::DeviceSegmentedReduce::Min(t, temp_bytes, x, out, segments, p.d_off64, p.d_off64 + 1)
                                : cub::DeviceSegmentedReduce::Max(t, temp_bytes, x, out, segments, p.d_off64, p.d_off64 + 1);
    };
    CHECK(cub_call(nullptr));
    CHECK(cudaMalloc(&temp, temp_bytes + 1));
    auto cub_run = [&] { CHECK(cub_call(temp)); };
    tune::running = "cub min/max";
    const Row row{tune::median_ms(cub_run, 5), double(kItems) * 4};
    printf("== %s: float32 %s, CUB %.4f ms\n", p.name, k == 0 ? "min" : "max", row.cub_ms);
    measure<float>("cub::DeviceSegmentedReduce", row, cub_run, out, cub_exact, ref.value, ref.scale, 5);
    if (k == 0) {
      measure<float>("library shape (min)", row, ranges<Shape, float, float, reduce_detail::Min>(x, seg, buf), out, exact,
                     ref.value, ref.scale, 5);
    } else {
      measure<float>("library shape (max)", row, ranges<Shape, float, float, reduce_detail::Max>(x, seg, buf), out, exact,
                     ref.value, ref.scale, 5);
    }
    CHECK(cudaFree(temp));
  }
  // int64 sum over 2^28 int64 items (2 GiB)
  int64_t* x64;
  CHECK(cudaMalloc(&x64, kItems * sizeof(int64_t)));
  fill<<<4096, 256>>>(x64, kItems);
  const Reference<int64_t> ref = reference<int64_t>(p, Kind::kSum);
  std::vector<int64_t> exact(ref.value.size());
  for (size_t s = 0; s < exact.size(); ++s) {  // recompute exactly (the double reference rounds)
    int64_t v = 0;
    for (int64_t i = p.off[s]; i < p.off[s + 1]; ++i) v += value_at<int64_t>(i);
    exact[s] = v;
  }
  size_t temp_bytes = 0;
  CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, x64, out64, segments, p.d_off64, p.d_off64 + 1));
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes + 1));
  auto cub_run = [&] { CHECK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, x64, out64, segments, p.d_off64, p.d_off64 + 1)); };
  tune::running = "cub int64";
  const Row row{tune::median_ms(cub_run, 5), double(kItems) * 8};
  printf("== %s: int64 sum, CUB %.4f ms\n", p.name, row.cub_ms);
  measure<int64_t>("cub::DeviceSegmentedReduce::Sum", row, cub_run, out64, exact, ref.value, ref.scale, 5);
  const Segments seg64{p.d_off32, false, 1, segments, kItems, 1, out64, 1, DType::kInt64};
  measure<int64_t>("library shape (int64 sum, int32 offsets)", row,
                   ranges<Shape, int64_t, int64_t, reduce_detail::Sum>(x64, seg64, buf), out64, exact, ref.value,
                   ref.scale, 5);
  CHECK(cudaFree(temp));
  CHECK(cudaFree(x64));
}

// The problems of "final" (and, a subset, of "boundary"): regular, irregular and mixed lengths.
Problem final_problem(int k) {
  return k == 0   ? make_problem("65536 x 4096", 30, regular(65536, kItems))
         : k == 1 ? make_problem("262144 x 1024", 30, regular(262144, kItems))
         : k == 2 ? make_problem("one 2^28-1000 segment + 1000 of 1", 5, one_huge(kItems))
         : k == 3 ? make_problem("power-law lengths (2^20 segments, k^-1.5)", 5, power_law(kItems, int64_t(1) << 20))
         : k == 4 ? make_problem("many empty (2^20 of 2^21, 2^20 trailing)", 10, many_empty(kItems))
         : k == 5 ? make_problem("16384 x 16384", 30, regular(16384, kItems))
         : k == 6 ? make_problem("32768 x 8192", 30, regular(32768, kItems))
         : k == 7 ? make_problem("131072 x 2048", 30, regular(131072, kItems))
         : k == 8 ? make_problem("2048 x 131072 (every segment listed)", 30, regular(2048, kItems))
         : k == 9 ? make_problem("lengths 1-9000", 30, uniform_lengths(kItems, 9000, 1, 7))
                  : make_problem("lengths 1-4000, 1 in 8 of 1-100000", 30, uniform_lengths(kItems, 4000, 100000, 9));
}

// No argument: the sweep (rounds 1-2); "final": the library's two paths and the range shape's
// alternatives on every problem (regular, irregular and mixed lengths), then the min / max / int64
// rows (~40 s); "boundary": the long kernel's cost (sessions 33-34, ~25 s).
int main(int argc, char** argv) {
  const bool final_only = argc > 1 && std::string(argv[1]) == "final";
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* x;
  float* out;
  int64_t* out64;
  const int64_t max_segments = int64_t(1) << 21;
  CHECK(cudaMalloc(&x, kItems * sizeof(float)));
  CHECK(cudaMalloc(&out, max_segments * sizeof(float)));
  CHECK(cudaMalloc(&out64, max_segments * sizeof(int64_t)));
  fill<<<4096, 256>>>(x, kItems);
  // Scratch for the smallest tile (4096 units) over 2^28 items + 2^21 segments.
  Buffers buf{nullptr, R<4096, 256, 4, 16>::scratch_bytes((kItems + max_segments) / 4096 + 1)};
  CHECK(cudaMalloc(&buf.scratch, buf.scratch_bytes));
  CHECK(cudaMalloc(&buf.long_scratch, long_segments_bytes<double>(kItems / 8192, kItems / 4096)));
  CHECK(cudaMalloc(&buf.counters, 4 * sizeof(unsigned)));
  CHECK(cudaMemset(buf.counters, 0, 4 * sizeof(unsigned)));
  if (argc > 1 && std::string(argv[1]) == "boundary") {
    for (int k : {0, 5, 6, 9, 10, 8, 2}) {  // the block path's problems
      Problem p = final_problem(k);
      float_sum_problem(p, x, out, buf, sms, false, Pass::kBoundary);
      free_problem(p);
    }
  } else if (final_only) {
    for (int k = 0; k < 11; ++k) {
      Problem p = final_problem(k);
      float_sum_problem(p, x, out, buf, sms, false, Pass::kFinal);
      if (k == 3) exact_rows(p, x, out, out64, buf, sms);
      free_problem(p);
    }
  }
  if (argc > 1) {
    CHECK(cudaFree(buf.long_scratch));
    CHECK(cudaFree(buf.counters));
    CHECK(cudaFree(x));
    CHECK(cudaFree(out));
    CHECK(cudaFree(out64));
    CHECK(cudaFree(buf.scratch));
    return 0;
  }
  {
    Problem p = make_problem("65536 x 4096", 30, regular(65536, kItems));
    float_sum_problem(p, x, out, buf, sms, true);
    free_problem(p);
  }
  {
    Problem p = make_problem("262144 x 1024", 30, regular(262144, kItems));
    float_sum_problem(p, x, out, buf, sms, true);
    free_problem(p);
  }
  {
    Problem p = make_problem("one 2^28-1000 segment + 1000 of 1", 5, one_huge(kItems));
    float_sum_problem(p, x, out, buf, sms, true);
    free_problem(p);
  }
  {
    Problem p = make_problem("power-law lengths (2^20 segments, k^-1.5)", 5, power_law(kItems, int64_t(1) << 20));
    float_sum_problem(p, x, out, buf, sms, true);
    exact_rows(p, x, out, out64, buf, sms);
    free_problem(p);
  }
  {
    Problem p = make_problem("many empty (2^20 of 2^21, 2^20 trailing)", 10, many_empty(kItems));
    float_sum_problem(p, x, out, buf, sms, false);
    free_problem(p);
  }
  printf("\n#### block tiles (a block per tile), int64 offsets\n");
  for (int k = 0; k < 5; ++k) {
    Problem p = k == 0   ? make_problem("65536 x 4096", 30, regular(65536, kItems))
                : k == 1 ? make_problem("262144 x 1024", 30, regular(262144, kItems))
                : k == 2 ? make_problem("one 2^28-1000 segment + 1000 of 1", 5, one_huge(kItems))
                : k == 3 ? make_problem("power-law lengths (2^20 segments, k^-1.5)", 5, power_law(kItems, int64_t(1) << 20))
                         : make_problem("many empty (2^20 of 2^21, 2^20 trailing)", 10, many_empty(kItems));
    float_sum_problem(p, x, out, buf, sms, false, Pass::kBlockTiles);
    free_problem(p);
  }
  CHECK(cudaFree(x));
  CHECK(cudaFree(out));
  CHECK(cudaFree(out64));
  CHECK(cudaFree(buf.scratch));
  return 0;
}
