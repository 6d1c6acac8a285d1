// The column_tiles variant: reductions along an outer axis, coalesced across neighbouring outputs.
#include "gpuprims/core/stream.hpp"
#include "gpuprims/reduce/reduce_column_tiles.cuh"
#include "gpuprims/util/occupancy.cuh"
#include "launch.hpp"
#include "single_pass_workspace.hpp"

namespace gpuprims {
namespace reduce_detail {
namespace {

// Waves of resident blocks the grid aims for when the reduced dimension is split. The grid had 8
// blocks an SM whatever fitted: 2.67 waves of the float16 kernels (80 registers, 3 resident), with
// float16 column sums of 16384 x 8192 at 65 % of copy and 65536 x 1024 at 21 % (session 47 device
// run 2, H200); with two waves and the combine spread over the block's warps, 86 % and 52 %
// (run 3; torch.sum 85 % and 49 %). The two changes were measured together.
constexpr int kColumnWaves = 2;

// Whether each lane's kOut adjacent columns load as one vector: the columns are one run of unit
// stride (column c at in + c), every reduced offset is a multiple of kOut, and `in` is 16-byte
// aligned, so each lane's 16-byte vector starts on a 16-byte boundary.
template <class T, class Acc>
bool columns_load_as_vectors(const ReduceLaunch& a) {
  if constexpr (!kColumnVectors<T, Acc>) {
    return false;
  } else {
    constexpr int kOut = column_outputs_per_lane<T, Acc>();
    const ReduceLayout& layout = a.layout;
    if (layout.row_contiguous || layout.keep_ndim != 1 || layout.keep_in_strides[0] != 1) return false;
    for (int d = 0; d < layout.red_ndim; ++d) {
      if (layout.red_sizes[d] > 1 && layout.red_strides[d] % kOut != 0) return false;
    }
    return reinterpret_cast<uintptr_t>(a.in) % 16 == 0;
  }
}

template <class T, class Acc, class Op>
struct ColumnTilesRunner {
  static Status run(const ReduceLaunch& a) {
    const ReduceLayout& layout = a.layout;
    if (layout.num_rows == 0) return Status::ok();
    const int64_t tiles = ceil_div<int64_t>(layout.num_rows, column_tile_width<T, Acc>());
    static const int resident = resident_blocks_per_sm(reduce_column_tiles_kernel<T, Acc, Op>, kColumnThreads);
    const int64_t target = int64_t(a.sm_count) * resident * kColumnWaves;
    // Split the reduced dimension only while each split keeps several unrolled sweeps of work.
    const int64_t max_splits = max_of<int64_t>(1, layout.row_len / (kTileRows * kColumnUnroll * 4));
    const int64_t splits = min_of<int64_t>(min_of<int64_t>(max_of<int64_t>(1, target / tiles), max_splits), 65535);

    {
      SinglePassWorkspace<Acc> ws;
      if (splits > 1) GPUPRIMS_TRY(ws.take(a, layout.num_rows * splits, tiles));
      const dim3 grid(static_cast<unsigned>(min_of<int64_t>(tiles, int64_t(1) << 30)), static_cast<unsigned>(splits));
      ReduceKernelParams<T> p{static_cast<const T*>(a.in), layout, a.out, a.out_dtype};
      reduce_column_tiles_kernel<T, Acc, Op>
          <<<grid, kColumnThreads, 0, a.stream>>>(p, columns_load_as_vectors<T, Acc>(a), ws.partials, ws.tickets);
    }
    return check_launch("reduce", a.stream);
  }
};

}  // namespace

Status reduce_column_tiles(const ReduceLaunch& launch) { return dispatch_reduce_types<ColumnTilesRunner>(launch); }

}  // namespace reduce_detail
}  // namespace gpuprims
