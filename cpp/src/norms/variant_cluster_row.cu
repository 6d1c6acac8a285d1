// cluster_row: a row too long for one block held in the shared memory of a thread block cluster
// (cluster_row.cuh): x read once. Where the cluster kernel cannot run (float64, rows that are not
// whole aligned 16-byte vectors, rows beyond kMaxClusterSize slices, GPUs below sm_90, a library
// built without sm_90) the call runs split_row, which computes the same function.
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "gpuprims/norms/cluster_row.cuh"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

// The slice shape: 256 threads with 16 slots each, 64 KiB of shared memory per CTA (16384 float32
// or 32768 float16 / bfloat16 elements; C = 16 CTAs hold 262144 float32 elements), three CTAs per
// SM (192 KiB of slices in flight or held per SM). To be chosen by bench/tune/norms_cluster_tune.cu.
template <class T>
using ClusterTile = ClusterRowConfig<256, 16, 3>;

constexpr int kMaxDevices = 64;

// Whether cluster_row_kernel<T, kKind, Cfg> runs as clusters of csize CTAs on `device` (the
// current device): compute capability 9.0 or later, an sm_90 binary of the kernel (an sm_80-only
// build holds the empty body), and at least one such cluster resident
// (cudaOccupancyMaxActiveClusters, which also accounts for the shared memory and for partitioned
// GPUs). The answer is cached per kernel, device and size; cudaFuncSetAttribute (the dynamic shared memory, the non-portable sizes above
// 8) is set on the way. A failing query means "no" (split_row runs) and its error is cleared:
// these calls fail only on configuration, never with a sticky error.
template <class T, RowKind kKind, class Cfg>
bool cluster_runs(int device, int csize) {
  const auto kernel = cluster_row_kernel<T, kKind, Cfg>;
  static std::atomic<int8_t> known[kMaxDevices][kMaxClusterSize + 1];  // 0 unknown, 1 yes, 2 no
  if (device < 0 || device >= kMaxDevices || csize < 1 || csize > kMaxClusterSize) return false;
  const int8_t cached = known[device][csize].load(std::memory_order_relaxed);
  if (cached != 0) return cached == 1;
  bool ok = false;
  int major = 0, clusters = 0;
  cudaFuncAttributes attr;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9 &&
      cudaFuncGetAttributes(&attr, kernel) == cudaSuccess && attr.binaryVersion >= 90 &&
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSliceBytes) == cudaSuccess &&
      cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned>(csize));
    cfg.blockDim = dim3(Cfg::kThreads);
    cfg.dynamicSmemBytes = Cfg::kSliceBytes;
    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(csize);
    cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
    cfg.attrs = &cluster;
    cfg.numAttrs = 1;
    ok = cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) == cudaSuccess && clusters > 0;
  }
  cudaGetLastError();
  known[device][csize].store(ok ? 1 : 2, std::memory_order_relaxed);
  return ok;
}

template <class T, RowKind kKind>
Status run(const NormLaunch& l) {
  if constexpr (std::is_same<T, double>::value) {
    return norms_split_row(l);
  } else {
    using Cfg = ClusterTile<T>;
    const auto kernel = cluster_row_kernel<T, kKind, Cfg>;
    const int64_t csize = max_of<int64_t>(1, ceil_div(l.params.layout.row_len, Cfg::template slice_capacity<T>()));
    if (!l.params.vec_ok || csize > kMaxClusterSize ||
        !cluster_runs<T, kKind, Cfg>(l.device, static_cast<int>(csize))) {
      return norms_split_row(l);
    }
    const char* op = norm_op_name(l.op);
    cudaLaunchConfig_t cfg = {};
    const int64_t grid_rows = min_of<int64_t>(l.params.layout.num_rows, 65535);  // the rest by the kernel's loop
    cfg.gridDim = dim3(static_cast<unsigned>(csize), static_cast<unsigned>(grid_rows));
    cfg.blockDim = dim3(Cfg::kThreads);
    cfg.dynamicSmemBytes = Cfg::kSliceBytes;
    cfg.stream = l.stream;
    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(csize);
    cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
    cfg.attrs = &cluster;
    cfg.numAttrs = 1;
    GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernelEx(&cfg, kernel, l.params));
    return check_launch(op, l.stream);
  }
}

}  // namespace

Status norms_cluster_row(const NormLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return row_kind(l.op) == RowKind::kSoftmax ? run<T, RowKind::kSoftmax>(l) : run<T, RowKind::kNorm>(l);
  });
}

}  // namespace norms
}  // namespace gpuprims
