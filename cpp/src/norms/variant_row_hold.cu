// row_hold: rows beyond one block in one launch, x read once, each chunk held in the shared memory
// of the block that read it until its row is complete (row_hold.cuh). Where it cannot run (float64,
// rows that are not whole aligned 16-byte vectors, a device without cooperative launches or that
// cannot hold a row's chunks' worth of blocks at once) the call runs split_row, which computes the
// same function.
#include "gpuprims/core/per_device.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/norms/row_hold.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

// 256 threads x 32 values (chunks of 8192 elements, row_lag's), three blocks per SM: 80 registers,
// and 3 x 64 KiB of float32 slots per SM. Session 21 device runs 3 and 7 (H100, a session-local
// harness, % of copy, float32, layer_norm / rms_norm / softmax): 256 x 262144 81.4-82.6 /
// 88.6-90.0 / 92.8-94.3 against row_lag's 77.5-77.8 / 83.0-83.5 / 64.8-69.0; 640 x 100000
// 83.8-84.3 / 89.7-90.2 / 92.1-93.0 against 79.6-80.0 / 83.2 / 75.7-77.3; 128 x 524288 (C = 64)
// 64.2-64.6 / 72.1-72.6 / 86.8 against 58.0 / 58.3-63.7 / 61.1. Two blocks per SM (106 registers)
// with two or three slots lost 11-13 points. (bfloat16 and float16 chunks are 16 KiB, the same
// 8192 elements: measured well below cluster_row, so "auto" does not take them.)
constexpr int kThreads = 256;
constexpr int kValues = 32;
template <class T>
using HoldConfig = RowLagConfig<kThreads, kValues / Vec16<T>::kLanes, 3, /*prefetch, unused*/ false>;

// Blocks of row_hold_kernel<T, kKind, Cfg> resident per SM on `device` (the current one), with the
// kernel's dynamic shared memory limit raised on the way; 0 where the device has no cooperative
// launches or cannot give a block its slots. Cached per device; a failed call means 0 (split_row
// runs) and its error is cleared: these calls fail only on configuration, never with a sticky error.
template <class T, RowKind kKind, class Cfg>
int resident_hold_blocks(int device) {
  static PerDeviceAnswer answer;
  return answer.get(device, [device] {
    const auto kernel = row_hold_kernel<T, kKind, Cfg>;
    int blocks = 0, cooperative = 0;
    if (cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device) != cudaSuccess ||
        cooperative == 0 ||
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, row_hold_smem_bytes<T, Cfg>()) !=
            cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, Cfg::kThreads, row_hold_smem_bytes<T, Cfg>()) !=
            cudaSuccess) {
      blocks = 0;
    }
    cudaGetLastError();
    return blocks;
  });
}

template <class T, RowKind kKind>
Status run_hold(const NormLaunch& l) {
  using Acc = acc_t<T>;
  using Cfg = HoldConfig<T>;
  const char* op = norm_op_name(l.op);
  const int64_t rows = l.params.layout.num_rows;
  const int64_t per_row = Cfg::template chunks_per_row<T>(l.params.layout.row_len);
  // The grid: the resident blocks (launched cooperatively), at least a row's chunks of them
  // (row_hold.cuh: forward progress).
  const int64_t resident = int64_t(resident_hold_blocks<T, kKind, Cfg>(l.device)) * l.sm_count;
  if (resident < per_row) return norms_split_row(l);
  StreamScratch scratch;
  GPUPRIMS_TRY(scratch.allocate(row_lag_scratch_bytes<kKind, Acc>(rows, rows * per_row), l.device, l.stream, op));
  const cudaError_t e = launch_row_hold<T, kKind, Cfg>(l.params, scratch.data(), resident, l.stream);
  if (e == cudaErrorCooperativeLaunchTooLarge) {
    // Fewer blocks can be resident than the occupancy query promised (an SM limit it does not see,
    // such as MPS's): not a sticky error, and split_row computes the same.
    cudaGetLastError();
    return norms_split_row(l);
  }
  GPUPRIMS_CUDA_CHECK(op, e);
  return check_launch(op, l.stream);
}

}  // namespace

// "auto" for float32 rows of 65537 (softmax kind: 16385) to 2097152 elements, in batches of 2^23
// elements or more, on sm_90 GPUs. Session 21 device run 7 (H100, bench/tune/norms_long_rows.py, % of
// copy, 256 MiB of x per shape; row_hold against the best of cluster_row / row_lag / split_row):
//   softmax     32768 92.4 / 92.2, 65536 92.2 / 87.4, 100000 90.9 / 81.4, 131072 91.7 / 85.8,
//               262144 91.3 / 82.8, 524288 85.5 / 71.7;
//   layer_norm  32768 83.4 / 86.6, 65536 83.9 / 84.8, 100000 83.1 / 79.1, 131072 84.1 / 80.0,
//               262144 81.4 / 75.2, 524288 64.5 / 57.5;
//   rms_norm    32768 88.2 / 88.7, 65536 88.9 / 84.7, 100000 88.8 / 81.5, 131072 89.6 / 82.7,
//               262144 87.9 / 81.2, 524288 71.8 / 62.7.
// Up to 65536 elements cluster_row leads or ties in layer_norm and ties at 32768 elsewhere, so the
// bound sat there for every op; beyond 64 chunks nothing was measured (split_row runs, as before).
// bfloat16 stays with cluster_row (row_hold 49-66 against 63-81 in every shape of the same run),
// and so does float16. Since softmax holds its exponentials (row_hold.cuh), the softmax kind takes
// every float32 row beyond one block's (16384). H200 (docs/norms.md, "Held exponentials"), % of
// copy, 256 MiB of x, row_hold against cluster_row: session 42 device run 6, softmax 83.5-84.4 /
// 72.5-75.8 at 40000-65536 elements, log_softmax 81.1-81.8 / 72.5-77.0; session 43 device run 4,
// 16388-32768 elements: softmax 70.0-84.1 / 55.0-81.6 (ahead by 2-15 points at every length),
// log_softmax 72.4-81.5 / 56.2-82.3 (ahead by 8-16 points to 24576, within a point at 28672-32768).
// Small batches pay row_hold's fixed costs (the counters' memset, a cooperative launch of the whole
// grid), so both kinds need 2^23 elements: H200, CUDA-event µs, row_hold against cluster_row,
// session 43 run 4, softmax, 1-16 rows of 40000-131072 elements 20.3-32.7 / 18.4-27.7, 64 x 65536
// 26.7 / 24.1, 64 x 131072 (2^23 elements) 27.8 / 31.8; run 5, layer_norm / rms_norm with their
// affine vectors, 1-8 rows of 65540-262144 23.4-29.1 / 20.3-27.8 (cluster_row ahead by 0.5-3.1 µs
// but rms_norm 8 x 262144, 27.1 / 27.7), 64 x 65540 30.4 / 27.7 and 28.6 / 26.1, 64 x 131072 34.7 /
// 34.3 and 31.1 / 33.0, 64 x 262144 59.8 / 74.2 and 53.9 / 69.4.
// Rows of 65 to 256 chunks (524289 to 2097152 elements) since each row's statistics are combined
// once (row_hold.cuh, hold_combines_once): session 44 device run 2 (H200, norms_cluster_tune.cu, %
// of copy, softmax / layer_norm / rms_norm, row_hold against split_row): 64 x 1048576 78.9 / 70.6 /
// 77.3 against 55.1 / 53.7 / 57.3, 32 x 2097152 72.2 / 58.3 / 67.9 against 54.8 / 47.6 / 54.9
// (cluster_row takes at most 16 slices: 262144 float32 elements). Longer rows, up to the resident
// blocks' chunks, are unmeasured and keep split_row.
constexpr int64_t kHoldMinElements = int64_t(1) << 23;
constexpr int64_t kHoldMaxRow = int64_t(1) << 21;

bool row_hold_preferred(const NormLaunch& l) {
  const int64_t min_row = row_kind(l.op) == RowKind::kSoftmax ? kRowOnChipCapacity : 65536;
  const int64_t n = l.params.layout.row_len;
  if (l.dtype != DType::kFloat32 || !l.params.vec_ok || n <= min_row || n > kHoldMaxRow) return false;
  if (n * l.params.layout.num_rows < kHoldMinElements) return false;
  // Measured with 3 resident blocks an SM, two 32 KiB slots each (192 KiB): GPUs whose SMs hold less
  // (the per-block opt-in limit stands for it: 227 KiB on the H100 / H200, 99 KiB on consumer sm_120
  // GPUs) would run fewer blocks, unmeasured, and keep cluster_row.
  int major = 0;
  return compute_capability_major(l.device, &major).is_ok() && major >= 9 &&
         sm_holds_shared_memory(l.device, 3 * 64 * 1024);
}

Status norms_row_hold(const NormLaunch& l) {
  return run_vector_rows(l, [&](auto tag, auto kind) { return run_hold<typename decltype(tag)::type, kind.value>(l); });
}

}  // namespace norms
}  // namespace gpuprims
