#pragma once
// What dispatch hands a scan variant: one validated scan, laid out as rows.
#include <cstdint>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/scan.hpp"
#include "gpuprims/scan/scan_layout.hpp"

namespace gpuprims {
namespace scan_detail {

struct ScanLaunch {
  const void* in;  // item 0 of row 0
  DType in_dtype;
  void* out;
  DType out_dtype;
  ReduceOp op;
  bool exclusive;
  ScanLayout layout;
  int device;  // -1 for the CPU reference
  int sm_count;
  int cc_major;  // compute capability major of the device (9 for Hopper)
  cudaStream_t stream;
};

// The (input, result) dtype pairs the kernels are built for (dispatch_types.hpp); scan() converts
// the input of any other pair into the output first.
bool scan_pair_supported(DType in, DType out);

Status scan_hillis_steele(const ScanLaunch& launch);
Status scan_blelloch(const ScanLaunch& launch);
Status scan_warp_shuffle(const ScanLaunch& launch);
Status scan_reduce_then_scan(const ScanLaunch& launch);
Status scan_decoupled_lookback(const ScanLaunch& launch);
Status scan_lagged_lookback(const ScanLaunch& launch);
Status scan_held_lookback(const ScanLaunch& launch);
Status scan_block_per_row(const ScanLaunch& launch);
// block_per_row's largest tile: 512 threads x 16 items (row_scans.cuh's kBlockRowItemsPerThread,
// held equal by a static_assert in variant_block_per_row.cu; this header stays free of device code).
constexpr int64_t kBlockPerRowMaxTile = 512 * 16;
Status scan_warp_per_row(const ScanLaunch& launch);
Status scan_columns(const ScanLaunch& launch);
Status scan_host(const ScanLaunch& launch);  // host.cpp: the CPU reference

}  // namespace scan_detail
}  // namespace gpuprims
