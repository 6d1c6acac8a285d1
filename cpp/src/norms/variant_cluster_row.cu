// cluster_row: a row too long for one block held in the shared memory of a thread block cluster
// (cluster_row.cuh): x read once. Where the cluster kernel cannot run (float64, rows that are not
// whole aligned 16-byte vectors other than the softmax kind's ragged rows, rows beyond
// kMaxClusterSize slices, GPUs below sm_90, a library built without sm_90) the call runs split_row,
// which computes the same function.
#include <cstdint>
#include <type_traits>

#include "gpuprims/core/per_device.hpp"
#include "gpuprims/norms/cluster_row.cuh"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

// The slice shape per (dtype, kind), from bench/tune/norms_cluster_tune.cu, 64 KiB of shared memory
// per CTA, three CTAs per SM (% of copy in the harness's two passes; split_row in brackets):
//   float32 softmax kind: 128 threads x 32 slots (H200, session 10 run 4, 256 x 262144: softmax
//     67.9-69.0 [53.5-53.7], log_softmax 69.2-69.9 [50.3-51.1]);
//   float16 / bfloat16: 512 x 8 (same run: bfloat16 softmax 65.1-67.8 [42.3-43.5], log_softmax
//     67.9-69.0 [42.5-43.9], layer_norm 56.5-57.5 [48.1-49.8], rms_norm 62.6-64.8 [51.7-53.6]);
//   float32 norm kind: 512 x 8 (40 registers, an 8-byte spill), the fastest norm-kind shape since
//     the chunk moments are taken about their own centres (H100, session 14 run 1: layer_norm
//     66.3-66.6 [62.9-63.3] at 256 x 262144 (C = 16), 78.1 [62.4] at 640 x 100000 (C = 7), 89.6
//     [62.6] at 2048 x 32768 (C = 2); rms_norm 68.4-69.1 [63.7-63.8], 81.8 [63.0], 89.4 [63.2]). On
//     the H200 with clusters of 16 the same shape ran 10 points below split_row (session 10, 51 against
//     61: only 112 of its 132 SMs hold clusters of 16), so "auto" takes it up to kAutoMaxClusters = 8
//     CTAs a row and split_row beyond (algorithm="cluster_row" runs it at any size); dispatch hands
//     rows to row_hold first where row_hold_preferred (variant_row_hold.cu).
template <class T, RowKind kKind>
struct ClusterTile {
  static constexpr bool kFloat32 = sizeof(T) == 4;
  using type = std::conditional_t<kFloat32 && kKind == RowKind::kSoftmax, ClusterRowConfig<128, 32, 3>,
                                  ClusterRowConfig<512, 8, 3>>;
  static constexpr int kAutoMaxClusters = kFloat32 && kKind == RowKind::kNorm ? 8 : kMaxClusterSize;
};


// A launch configuration for grid (csize, rows) in clusters of csize CTAs.
struct ClusterLaunch {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute cluster = {};
  ClusterLaunch(int csize, int64_t rows, int threads, int smem_bytes, cudaStream_t stream) {
    cfg.gridDim = dim3(static_cast<unsigned>(csize), static_cast<unsigned>(rows));
    cfg.blockDim = dim3(static_cast<unsigned>(threads));
    cfg.dynamicSmemBytes = static_cast<size_t>(smem_bytes);
    cfg.stream = stream;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(csize);
    cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
    cfg.attrs = &cluster;
    cfg.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;  // cfg.attrs points into this object
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// How many clusters of csize CTAs of cluster_row_kernel<T, kKind, Cfg> are resident at once on
// `device` (the current device); 0 where it cannot run: below compute capability 9.0, without an
// sm_90 binary of the kernel (an sm_80-only build holds the empty body), or when
// cudaOccupancyMaxActiveClusters (which accounts for the shared memory and for partitioned GPUs)
// finds no room. Cached per kernel, device and size; cudaFuncSetAttribute (the dynamic shared
// memory, the non-portable sizes above 8) is set on the way. A failing query means 0 (split_row
// runs) and its error is cleared: these calls fail only on configuration, never with a sticky error.
template <class T, RowKind kKind, class Cfg, class Out, bool kRagged>
int resident_clusters(int device, int csize) {
  static PerDeviceAnswer by_size[kMaxClusterSize + 1];
  if (csize < 1 || csize > kMaxClusterSize) return 0;
  return by_size[csize].get(device, [device, csize] {
    const auto kernel = cluster_row_kernel<T, kKind, Cfg, Out, kRagged>;
    int major = 0, clusters = 0;
    cudaFuncAttributes attr;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9 &&
        cudaFuncGetAttributes(&attr, kernel) == cudaSuccess && attr.binaryVersion >= 90 &&
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes) == cudaSuccess &&
        cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess) {
      const ClusterLaunch probe(csize, 1, Cfg::kThreads, Cfg::kSmemBytes, nullptr);
      if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &probe.cfg) != cudaSuccess) clusters = 0;
    }
    cudaGetLastError();
    return clusters;
  });
}

// Out other than T (softmax(x, dtype=)): where the cluster kernel cannot run, *ran is false and
// nothing is launched (the caller converts first); else split_row runs there.
// kRagged: the softmax kind's rows that are not whole aligned vectors (l.params.ragged).
template <class T, RowKind kKind, class Out, bool kRagged>
Status run_layout(const NormLaunch& l, bool automatic, bool* ran) {
  constexpr bool kConverts = !std::is_same<Out, T>::value;
  if (ran != nullptr) *ran = false;
  if constexpr (std::is_same<T, double>::value) {
    return norms_split_row(l);
  } else {
    using Tile = ClusterTile<T, kKind>;
    using Cfg = typename Tile::type;
    const int64_t rows = l.params.layout.num_rows;
    const int64_t csize = max_of<int64_t>(1, ceil_div(l.params.layout.row_len, Cfg::template slice_capacity<T>()));
    const bool layout_ok = kRagged || l.params.vec_ok;  // run() takes kRagged where l.params.ragged
    const int clusters = (automatic && csize > Tile::kAutoMaxClusters) || !layout_ok || csize > kMaxClusterSize
                             ? 0
                             : resident_clusters<T, kKind, Cfg, Out, kRagged>(l.device, static_cast<int>(csize));
    if (clusters == 0) return kConverts ? Status::ok() : norms_split_row(l);
    // One cluster per row up to grid.y's limit (the rest by the kernel's row loop); a pipelined
    // kernel (kStages 2) runs one persistent wave of clusters, each walking its rows.
    const int64_t grid_rows = min_of<int64_t>(min_of<int64_t>(rows, 65535), Cfg::kStages == 2 ? clusters : rows);
    const ClusterLaunch launch(static_cast<int>(csize), grid_rows, Cfg::kThreads, Cfg::kSmemBytes, l.stream);
    const char* op = norm_op_name(l.op);
    GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernelEx(&launch.cfg, cluster_row_kernel<T, kKind, Cfg, Out, kRagged>, l.params));
    if (ran != nullptr) *ran = true;
    return check_launch(op, l.stream);
  }
}

// The ragged kernel for the softmax kind's ragged rows, the vector kernel otherwise.
template <class T, RowKind kKind, class Out = T>
Status run(const NormLaunch& l, bool automatic, bool* ran = nullptr) {
  if constexpr (kKind == RowKind::kSoftmax) {
    if (l.params.ragged) return run_layout<T, kKind, Out, true>(l, automatic, ran);
  }
  return run_layout<T, kKind, Out, false>(l, automatic, ran);
}

}  // namespace

// The slice holds x's dtype (ClusterTile's shape of it: 32768 float16 / bfloat16 elements or
// 16384 float32 per CTA) and the output is written in y_dtype's: the pairs of row_on_chip_converts.
Status norms_cluster_row_convert(const NormLaunch& l, bool automatic, bool* ran) {
  *ran = false;
  return visit_converting_pair(
      l.dtype, l.y_dtype,
      [&](auto in_tag, auto out_tag) {
        return run<typename decltype(in_tag)::type, RowKind::kSoftmax, typename decltype(out_tag)::type>(l, automatic,
                                                                                                         ran);
      },
      [] { return Status::ok(); });
}

Status norms_cluster_row(const NormLaunch& l, bool automatic) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return row_kind(l.op) == RowKind::kSoftmax ? run<T, RowKind::kSoftmax>(l, automatic)
                                               : run<T, RowKind::kNorm>(l, automatic);
  });
}

}  // namespace norms
}  // namespace gpuprims
