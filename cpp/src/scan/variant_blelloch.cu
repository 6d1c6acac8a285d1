// blelloch: Blelloch's work-efficient up-sweep/down-sweep tile scan (two items per thread, padded shared memory), made device-wide by scan-then-propagate.
#include "scan_then_propagate.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

template <class In, class Out, class Op>
struct BlellochPass {
  static constexpr int64_t kTileItems = 2 * kTextbookThreads;
  static void launch(const ScanLaunch& l, int64_t base, unsigned blocks, int64_t tiles_per_row, scan_acc_t<Out>* totals) {
    blelloch_kernel<In, Out, Op><<<blocks, kTextbookThreads, 0, l.stream>>>(
        static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout, tiles_per_row, base, totals,
        l.exclusive);
  }
};

}  // namespace

Status scan_blelloch(const ScanLaunch& l) {
  return dispatch_scan_types<ScanThenPropagate<BlellochPass>::Runner>(l);
}

}  // namespace scan_detail
}  // namespace gpuprims
