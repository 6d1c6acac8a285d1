#pragma once
// The row_on_chip launch and its tile shapes, shared by variant_row_on_chip.cu (the forward ops) and
// variant_add_norm.cu (the same kernels with the residual-add prologue).
#include <algorithm>
#include <string>
#include <type_traits>

#include "gpuprims/norms/row_on_chip.cuh"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"
#include "layout.hpp"

namespace gpuprims {
namespace norms {

// Performance step 2 (docs/norms.md): the 4096- and 8192-element tiles of float32 / float16 /
// bfloat16 run the lean per-element path on the vector path (BlockTile below). false: every tile
// runs the classic configuration of runs 7-15. bench/tune/norms_forward_tune.cu times both.
constexpr bool kRowOnChipTuned = true;

// Performance step 3 (docs/norms.md): with kRowOnChipTuned, the float16 / bfloat16 norm kind
// (layer_norm, rms_norm) keeps its row packed (PackedRowTile) under the softmax kind's bound of
// 1024 resident threads per SM: 64 registers, four 256-thread blocks per SM where the float tile's
// 80 registers allowed three. false: that kind runs the lean float tile of step 2.
constexpr bool kRowOnChipPackedHalfNorm = true;

// Performance step 4 (docs/norms.md; H200 harness run 4 of session 10, bf16 % of copy): whether
// the add-norms (kResidual) run the tuned tiles above (lean; packed for fp16 / bf16) with the
// vector residual prologue (add_residual_vectors) instead of the classic tile (53-67 % -> 74-84 %;
// float32 92-93 % either way), and whether the fp16 / bf16 norm kind folds the row shift into
// per-row constants (RowOnChipConfig::kFold: layer_norm 76-80 % -> 82-86 %, rms_norm 86-91 % ->
// 90-95 %). false: the configuration before step 4 (one line each).
constexpr bool kRowOnChipTunedAddNorm = true;
constexpr bool kRowOnChipFoldHalfNorm = true;

// Performance step 5 (docs/norms.md; H200 harness, session 11 run 1, bf16 % of copy): whether the
// fp16 / bf16 layer_norm / rms_norm tile takes its statistics in one pass (RowOnChipConfig::kOnePass)
// and runs the output pass specialized on the affine vectors present (kAffinePaths): layer_norm
// 78-82 % -> 90-95 %, rms_norm 87-93 % -> 92-95 %. Not the add-norms: the flags cost them 8-10
// registers, a resident block per SM under their bound (4-13 points lost). false: step 4's tile
// (one line each).
constexpr bool kRowOnChipOnePassHalfNorm = true;
constexpr bool kRowOnChipAffinePathsHalfNorm = true;

// Performance step 6 (docs/norms.md; H200 harness, session 11 device run 4, bf16 % of copy):
// RowOnChipConfig::kOrigin, layer_norm's one-pass sums of x and x^2 about 0 (3 instructions per
// element instead of 4) and, for the rows it accepts, an output pass without x - shift: layer_norm
// 16384 x 8192 90.3-90.6 % -> 90.9 %, 65536 x 4096 94.0-94.9 % unchanged. And the add-norms, which
// take those sums in their residual prologue and then run kOnePass and kAffinePaths under the bound
// of three 256-thread blocks per SM (80 registers, as their step-4 tile): add_layer_norm 71.8-78.4 %
// -> 80.5-85.4 %, add_rms_norm 77.1-83.9 % -> 82.4-86.9 % (without kAffinePaths 1-2 points less).
// false: step 5's tiles (one line each).
constexpr bool kRowOnChipOriginHalfNorm = true;
constexpr bool kRowOnChipOriginAddNorm = true;
constexpr bool kRowOnChipAffinePathsAddNorm = true;  // with kRowOnChipOriginAddNorm

// Session 16 (docs/norms.md, "Fused add-norms: staged rows"; harness device runs 5 (H200) and 7
// (H100), bf16 % of copy): the fp16 / bf16 add-norms' 8192-element tile (256 threads) copies x
// and the residual through two shared-memory stages, one row ahead (RowOnChipConfig::kStages), on
// a persistent grid, under step 6's bound of three blocks per SM (80 registers, 132 bytes of
// spill): add_layer_norm 16384 x 8192 82.3-82.6 -> 88.6-88.9 % (H200), 92.8-92.9 -> 94.4-94.5 %
// (H100); add_rms_norm 85.3 -> 88.3-88.7 % (H200), 93.9 -> 92.3-92.4 % (H100). Under a two-block
// bound (116 registers, no spill) the H200 read the same within 1.5 points and the H100 1.6-4.2
// points lower. The 4096-element tile lost 6-10 points staged on both GPUs and keeps step 6's
// block per row. 0: step 6's tile everywhere (one line).
constexpr int kRowOnChipAddNormStages = 2;

// Session 24 (docs/norms.md, "Row lengths between the tiles"): rows of 513-1024 and 1025-2048
// elements of 2- and 4-byte types (not the add-norms) get tiles of their own, a warp per row and a
// 64-thread block with 32 values a thread, where the 128-thread tile held 8-16 of its 32 values:
// bytes in flight are what a thread holds filled, and the register bound fixes the threads per
// SM. false: those rows run the 128-thread tile (one line).
constexpr bool kRowOnChipMidTiles = true;

// Session 24, the same measure at both ends of the ladder (2- and 4-byte types, not the
// add-norms; H100 device run 5, bench/tune/norms_row_lengths.py, before / after in one run):
// rows of up to 512 elements run the warp tile lean (kLean, BlockTile's tuned configuration;
// kRowOnChipLeanWarpTile): bf16 softmax 262144 x 256 51 -> 73 % of copy, 131072 x 512 81 -> 96 %,
// layer_norm 48 -> 69 % / 70 -> 91 %, float32 layer_norm 256 89 -> 97 %. Rows of 8193-16384
// elements on the vector path run a 512-thread tile of 32 values a thread, tuned, where the
// 1024-thread classic tile holds 16 (kRowOnChipWideTile): bf16 12288 and 16384 softmax 49 -> 92
// and 59 -> 95 %, layer_norm 47 -> 91 and 55 -> 93 %, float32 softmax 85 -> 88 and 95 -> 96 %;
// not the float32 norm kind, which lost there (layer_norm 16384 91 -> 88 %, rms_norm 96 -> 93 %).
// The element-wise path keeps the 1024-thread tile (32 values a thread with per-element addresses
// spill under 512 threads' 128-register cap). false: the classic tiles (one line each).
constexpr bool kRowOnChipLeanWarpTile = true;
constexpr bool kRowOnChipWideTile = true;

// Session 25: rows of up to 64, 128 and 256 elements (2- and 4-byte types, not the add-norms) run
// a group of 4, 8 or 16 lanes per row (32, 16 or 8 rows per 128-thread block, group_reduce's
// shuffles), 16 values a thread as the warp tile, where a warp per row filled 2-8 of each
// thread's 16 values. H100, session 25 device run 4, bench/tune/norms_row_lengths.py, warp tile ->
// groups in one run, % of copy (x torch after): bf16 softmax 1048576 x 64 20.6 -> 96.2 (1.55x),
// 524288 x 128 39.8 -> 95.6 (1.31x), 262144 x 256 73.6 -> 95.9 (1.24x); bf16 rms_norm 22.9 / 43.3
// / 76.6 -> 94.8 / 94.4 / 94.3; float32 softmax 64 / 128 39.0 / 73.2 -> 97.3 / 97.6 (0.99x /
// 1.00x: torch is at copy too); float32 256 already at 97-98 % either way. false: those rows run
// the warp tile (one line).
constexpr bool kRowOnChipNarrowGroups = true;
// Session 26: which of those rows hold 32 values a thread on groups half as wide (H100, device
// run 1, bench/tune/norms_row_lengths.py, 16 -> 32 values in one run, % of copy). The 2-byte vector
// path (aligned and ragged) of rows of 129-512 elements, where a 16-value lane of an odd row fills
// one slot of two: bf16 softmax 129 38.1 -> 59.1, 197 68.9 -> 79.0, 257 40.6 -> 58.9 (0.69x ->
// 0.99x torch), 384 90.8 -> 95.9, layer_norm 200 83.0 -> 93.8, 384 81.2 -> 94.9, 512 91.7 -> 94.1,
// softmax 256 / 512 within 0.7. Its rows of up to 128 keep 16 (32 lost: softmax 64 96.5 -> 93.0, 77
// 54.3 -> 50.1, rms_norm 64 95.0 -> 89.3), so does float32's vector path (softmax 257 94.0 ->
// 85.6, layer_norm 64 96.8 -> 84.6). The element-wise path (the norm kind's odd rows) holds 32
// everywhere: float32 layer_norm 129 42.1 -> 59.7, 197 56.7 -> 70.8, 257 36.8 -> 60.5, bfloat16
// 129 17.5 -> 23.9, 257 16.1 -> 23.3 (float32 77 47.8 -> 45.3). false: 16 values everywhere (one line).
constexpr bool kRowOnChipNarrowValues32 = true;
// Session 27: softmax / log_softmax rows of up to 128 elements that lie back to back and are not
// whole aligned vectors have kernels that copy them through shared memory (may_stage_rows below).
// false: none (one line).
constexpr bool kRowOnChipStagedRows = true;

// The block tile for rows of up to 32 * kThreads elements (kThreads 128 or 256; float64: 16 *
// kThreads): kThreads threads with 32 values each (16 for float64) under the classic register
// bound (min_blocks_for). Tuned: the same tile with kLean, which measured 94-95 % of copy for
// float32 16384 x 8192 against the classic 69-90 % (softmax, log_softmax, layer_norm; rms_norm
// 94.8 against 96.2), while the prefetching candidates (kPrefetch, persistent grid) measured
// 85-89 % (harness run of 2026-11-22). float64 stays classic, and the element-wise path ignores
// kLean. The fp16 / bf16 norm kind also packs and folds (kPacked, kFold, above), the add-norms
// included since step 4; layer_norm / rms_norm run kOnePass and kAffinePaths (step 5) and kOrigin
// (step 6), the add-norms all three under 80 registers (step 6).
// kRowsPerBlock > 1: a warp or a group of 4, 8 or 16 lanes per row (kThreads 32, 16, 8, 4), as the
// narrow and mid tiles below; kValues: values a thread (the tiles of rows up to 512 elements: 16).
template <class T, RowKind kKind, bool kResidual, int kThreads, int kRowsPerBlock = 1,
          int kValues = sizeof(T) == 8 ? 16 : 32>
struct BlockTile {
  static constexpr int kLanes = Vec16<T>::kLanes;
  static constexpr bool kTuned = kRowOnChipTuned && (!kResidual || kRowOnChipTunedAddNorm) && sizeof(T) <= 4;
  using Classic = ClassicRowOnChip<T, kKind, kThreads, kRowsPerBlock, kValues / kLanes>;
  static constexpr bool kPacked = kTuned && kRowOnChipPackedHalfNorm && kKind == RowKind::kNorm && sizeof(T) == 2;
  static constexpr bool kPlainPacked = kPacked && !kResidual;
  static constexpr bool kAddOrigin = kPacked && kResidual && kRowOnChipOriginAddNorm;
  static constexpr int kStages = kAddOrigin && kThreads == 256 ? kRowOnChipAddNormStages : 0;
  // The packed tile's register bound: 1024 resident threads per SM (64 registers, step 3); the
  // add-norms keep the classic one (80 registers: under 64 their residual prologue spills 32 bytes),
  // with kAddOrigin 768 (80 registers: unbounded it takes 96, two blocks per SM; staged, 116).
  static constexpr int kPackedMinBlocks = (kResidual ? (kAddOrigin ? 768 : 512) : 1024) / (kThreads * kRowsPerBlock);
  static constexpr bool kOnePass = (kPlainPacked && kRowOnChipOnePassHalfNorm) || kAddOrigin;
  using Tuned = RowOnChipConfig<kThreads, kRowsPerBlock, Classic::kVecs, kPacked ? kPackedMinBlocks : Classic::kMinBlocks, false,
                                true, kPacked, kPacked && kRowOnChipFoldHalfNorm, kOnePass,
                                (kPlainPacked && kRowOnChipAffinePathsHalfNorm) ||
                                    (kAddOrigin && kRowOnChipAffinePathsAddNorm),
                                kOnePass && (kResidual || kRowOnChipOriginHalfNorm), kStages>;
  using type = std::conditional_t<kTuned, Tuned, Classic>;
};

// Whether row_on_chip runs the ragged kernel (row_on_chip_kernel's kRagged) for these rows:
// unit-stride rows that are not whole aligned vectors, where the host found x's and y's rows
// equally misaligned (p.ragged, rows_ragged_vectors; the norm kind's affine vectors contiguous
// and aligned), on the tile of their length. Not the add-norms, nor float64's norm kind (its
// ragged 1024-thread tile spilled 56 bytes; those rows keep the element-wise path).
template <class T, RowKind kKind, bool kResidual>
constexpr bool may_run_ragged = !kResidual && (kKind == RowKind::kSoftmax || sizeof(T) <= 4);
template <class T, RowKind kKind, bool kResidual>
bool runs_ragged(const NormParams& p) {
  return may_run_ragged<T, kKind, kResidual> && p.ragged;  // never with vec_ok (dispatch)
}

// Session 27 (docs/norms.md, "Rows back to back"): the softmax kind's tiles of rows of up to 128
// elements (groups of 4 and 8 lanes, 16 values a thread) have kernels that copy rows lying back to
// back through shared memory (StagedRuns, row_staged.cuh), where the ragged kernels read each row's
// partial vectors element by element. Longer rows lost 2-40 points of copy staged (H100, session
// 27 device runs 3-4, bench/tune/norms_staged_tune.cu), and the norm kind lost or gained within 3
// points at every length (device run 7), so those tiles have none.
template <class T, RowKind kKind, bool kResidual, class Cfg, class Out>
constexpr bool may_stage_rows =
    kRowOnChipStagedRows && kKind == RowKind::kSoftmax && may_run_ragged<T, kKind, kResidual> &&
    std::is_same<Out, T>::value && Cfg::kThreadsPerRow * Cfg::kVecs * Vec16<T>::kLanes <= 128;
// Where "auto" stages them (H100, session 27 device runs 5-7, bench/tune/norms_staged.py through
// the API, % of copy, row_on_chip -> row_staged, two stages of 16 KiB, run 7): 2-byte types on odd
// lengths (bf16 33 / 63 / 77 / 127: 35.5 / 40.1 / 54.4 / 75.3 -> 39.2 / 79.2 / 56.7 / 80.6;
// float16 alike): an odd row starts at every offset into its 16-byte vector in turn, while rows of
// 100 start at two (the in-place kernel reads every other row whole) and lost staged (72.9 ->
// 69.8); float32 up to 64 elements (33 / 63: 79.3 / 68.3 -> 85.7 / 86.3; 77 and 127 lost 7-16
// points).
template <class T>
bool staged_rows_preferred(const NormParams& p) {
  return sizeof(T) == 2 ? p.layout.row_len % 2 == 1 : p.layout.row_len <= 64;
}

// The vector path runs VectorCfg, the element-wise path ElementCfg (the block tiles pass the
// classic configuration: kLean and kPrefetch do not apply there, and a tuned configuration with
// 512 threads spilled 220 bytes on that path under its 128-register cap). A prefetching or staged
// kernel runs one persistent wave (row_on_chip_blocks); the others a block per group of rows.
// Out other than T (y's dtype, the softmax kind's conversion): the vector path only, or ragged.
// Ragged rows (p.ragged) run VectorCfg's tile with ragged ends (kRagged).
template <class T, RowKind kKind, bool kResidual, class VectorCfg, class ElementCfg = VectorCfg, class Out = T>
Status launch_row_on_chip(const NormLaunch& l) {
  const char* op = norm_op_name(l.op);
  const bool ragged = runs_ragged<T, kKind, kResidual>(l.params);
  constexpr bool kMayStage = may_stage_rows<T, kKind, kResidual, VectorCfg, Out>;
  const bool staged = kMayStage && ragged && rows_back_to_back(l.params.layout) &&
                      (l.staging == RowStaging::kWherever ||
                       (l.staging == RowStaging::kWhereFaster && staged_rows_preferred<T>(l.params)));
  const bool vector = l.params.vec_ok || ragged;
  const void* kernel = nullptr;
  size_t smem = 0;
  if (staged) {
    if constexpr (kMayStage) {
      // Within the 48 KiB of dynamic shared memory every block may take without opting in: no
      // cudaFuncSetAttribute on this launch path.
      static_assert(LibraryStagedRuns::max_shared_bytes<T, VectorCfg>() <= 48 * 1024, "staged rows beyond 48 KiB");
      kernel = reinterpret_cast<const void*>(
          &row_on_chip_kernel<T, kKind, VectorCfg, true, false, Out, true, LibraryStagedRuns>);
      smem = LibraryStagedRuns::shared_bytes<T, VectorCfg>(l.params.layout.row_len);
    }
  } else if (ragged) {
    if constexpr (may_run_ragged<T, kKind, kResidual>) {
      kernel = reinterpret_cast<const void*>(&row_on_chip_kernel<T, kKind, VectorCfg, true, false, Out, true>);
    }
  } else if (vector) {
    kernel = reinterpret_cast<const void*>(&row_on_chip_kernel<T, kKind, VectorCfg, true, kResidual, Out>);
  } else if constexpr (std::is_same<Out, T>::value) {
    kernel = reinterpret_cast<const void*>(&row_on_chip_kernel<T, kKind, ElementCfg, false, kResidual>);
  } else {
    return value_error(std::string(op) + ": a converting row_on_chip launch of unaligned rows");
  }
  const int threads = vector ? VectorCfg::kThreads : ElementCfg::kThreads;
  const int64_t rows = l.params.layout.num_rows;
  if constexpr (row_on_chip_stages<VectorCfg, true, kResidual> > 0) {
    if (vector) {
      // At most 64 KiB (two stages of two 8192-element fp16 / bf16 rows): within the opt-in
      // shared memory per block of every GPU the library builds for (sm_80 and later: 99 KiB or more).
      smem = row_on_chip_shared_bytes<T, VectorCfg, true, kResidual>(l.params.layout.row_len);
      GPUPRIMS_CUDA_CHECK(op, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    }
  }
  const bool persistent = staged || (vector && row_on_chip_persistent<VectorCfg, true, kResidual>);
  int per_sm = 1;
  if (persistent) GPUPRIMS_CUDA_CHECK(op, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  // Staged: a block per run of rows (StagedRuns::run), at most one wave.
  const int64_t blocks =
      staged   ? std::min<int64_t>(LibraryStagedRuns::runs<T, VectorCfg>(l.params.layout), int64_t(per_sm) * l.sm_count)
      : vector ? row_on_chip_blocks<VectorCfg>(rows, persistent, per_sm, l.sm_count)
               : row_on_chip_blocks<ElementCfg>(rows, false, per_sm, l.sm_count);
  NormParams params = l.params;
  void* args[] = {&params};
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(kernel, dim3(grid_for(blocks)), dim3(threads), args, smem, l.stream));
  return check_launch(op, l.stream);
}

// Rows of up to kGroup * kValues elements (kRowOnChipNarrowGroups, up to 512): the vector path
// on a group of kGroup lanes (4 to 32), 128 / kGroup rows per block, kValues values a thread; the
// element-wise path 32 values a thread on groups half as wide where kRowOnChipNarrowValues32 says.
template <class T, RowKind kKind, class Out, int kGroup, int kValues>
Status launch_narrow_rows(const NormLaunch& l) {
  constexpr int kElementValues = kRowOnChipNarrowValues32 ? 32 : kValues;
  constexpr int kElementGroup = kGroup * kValues / kElementValues;
  using Vector = BlockTile<T, kKind, false, kGroup, 128 / kGroup, kValues>;
  using VectorCfg = std::conditional_t<kGroup < 32 || kRowOnChipLeanWarpTile, typename Vector::type,
                                       typename Vector::Classic>;
  using Element = BlockTile<T, kKind, false, kElementGroup, 128 / kElementGroup, kElementValues>;
  return launch_row_on_chip<T, kKind, false, VectorCfg, typename Element::Classic, Out>(l);
}

// The tile shapes, the smallest that holds the row. Each thread holds a fixed number of values
// whatever the dtype (16-byte vectors: 4 fp32, 8 fp16/bf16, 2 fp64), so capacities are in elements:
//   rows of up to 512 elements of 2- and 4-byte types, not the add-norms (kRowOnChipNarrowGroups,
//     launch_narrow_rows; 128-thread blocks): a group of 4 or 8 lanes per row with 16 values a
//     thread for up to 64 and 128 elements; for up to 256 and 512, 16 lanes and a warp with 16
//     values (float32) or 8 and 16 lanes with 32 (2-byte types, kRowOnChipNarrowValues32); the
//     element-wise path 32 values a thread on groups half as wide
//   otherwise (float64, the add-norms) a warp per row, 4 rows per block, 16 values per thread: 512
//   block tiles (BlockTile) of 32 values per thread: a warp per row (4 rows per block) for up to
//     1024 elements and a 64-thread block for up to 2048 (kRowOnChipMidTiles: 2- and 4-byte types,
//     not the add-norms), 128 threads for up to 4096 (float64: 16 values, 2048) and 256 for up
//     to 8192 (4096)
//   a block of 1024 threads, 16 values per thread:           16384 elements (64 registers a thread:
//                                                              8 float64 values, 8192); on the
//     vector path of 2-byte types and the float32 softmax kind a 512-thread block tile of 32
//     values a thread (kRowOnChipWideTile)
// A warp per short row keeps every thread busy without block-wide synchronization. The bytes a
// thread has in flight are its *filled* slots, while its registers are set by the tile's size: a
// 4096-element bf16 row in the 8192-element tile fills half of every thread's slots, so rows up to
// 4096 elements get a tile half as wide that is full, and twice the blocks per SM to overlap one
// block's reductions with another's loads. Longer rows go to split_row.
// kResidual: add_layer_norm / add_rms_norm, whose rows must fit (row_on_chip_capacity).
// Out: y's dtype (launch_row_on_chip); the tiles are those of x's dtype T, and rows must fit.
template <class T, RowKind kKind, bool kResidual, class Out = T>
Status run_row_on_chip(const NormLaunch& l) {
  constexpr int kLanes = Vec16<T>::kLanes;
  const int64_t n = l.params.layout.row_len;
  if constexpr (kRowOnChipNarrowGroups && sizeof(T) <= 4 && !kResidual) {
    constexpr int kValues = kRowOnChipNarrowValues32 && sizeof(T) == 2 ? 32 : 16;  // rows of 129-512
    if (n <= 4 * 16) return launch_narrow_rows<T, kKind, Out, 4, 16>(l);
    if (n <= 8 * 16) return launch_narrow_rows<T, kKind, Out, 8, 16>(l);
    if (n <= 256) return launch_narrow_rows<T, kKind, Out, 256 / kValues, kValues>(l);
    if (n <= 512) return launch_narrow_rows<T, kKind, Out, 512 / kValues, kValues>(l);  // a warp where 16
  }
  if (n <= 32 * 16) {
    using Tile = BlockTile<T, kKind, kResidual, 32, 4, 16>;
    using Vector = std::conditional_t<kRowOnChipLeanWarpTile && !kResidual, typename Tile::type, typename Tile::Classic>;
    return launch_row_on_chip<T, kKind, kResidual, Vector, typename Tile::Classic, Out>(l);
  }
  constexpr int kMidValues = sizeof(T) == 8 ? 16 : 32;
  if constexpr (kRowOnChipMidTiles && sizeof(T) <= 4 && !kResidual) {
    if (n <= 32 * kMidValues) {
      using Tile = BlockTile<T, kKind, kResidual, 32, 4>;
      return launch_row_on_chip<T, kKind, kResidual, typename Tile::type, typename Tile::Classic, Out>(l);
    }
    if (n <= 64 * kMidValues) {
      using Tile = BlockTile<T, kKind, kResidual, 64>;
      return launch_row_on_chip<T, kKind, kResidual, typename Tile::type, typename Tile::Classic, Out>(l);
    }
  }
  if (n <= 128 * kMidValues) {
    using Tile = BlockTile<T, kKind, kResidual, 128>;
    return launch_row_on_chip<T, kKind, kResidual, typename Tile::type, typename Tile::Classic, Out>(l);
  }
  if (n <= 256 * kMidValues) {
    using Tile = BlockTile<T, kKind, kResidual, 256>;
    return launch_row_on_chip<T, kKind, kResidual, typename Tile::type, typename Tile::Classic, Out>(l);
  }
  constexpr int kBigValues = sizeof(T) == 8 ? 8 : 16;
  static_assert(1024 * kBigValues == kRowOnChipCapacity / (sizeof(T) == 8 ? 2 : 1), "launch.hpp's capacity");
  if (n <= 1024 * kBigValues) {
    using Tile = ClassicRowOnChip<T, kKind, 1024, 1, kBigValues / kLanes>;
    if constexpr (kRowOnChipWideTile && (sizeof(T) == 2 || (sizeof(T) == 4 && kKind == RowKind::kSoftmax)) &&
                  !kResidual) {
      return launch_row_on_chip<T, kKind, kResidual, typename BlockTile<T, kKind, kResidual, 512>::type, Tile, Out>(l);
    } else {
      return launch_row_on_chip<T, kKind, kResidual, Tile, Tile, Out>(l);
    }
  }
  if constexpr (kResidual || !std::is_same<Out, T>::value) {
    return value_error(std::string(norm_op_name(l.op)) + ": a row beyond row_on_chip's capacity (residual or dtype=)");
  } else {
    return norms_split_row(l);
  }
}

}  // namespace norms
}  // namespace gpuprims
