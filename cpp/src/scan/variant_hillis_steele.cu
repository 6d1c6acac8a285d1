// hillis_steele: the Hillis-Steele tile scan (one item per thread, log2(512) barrier steps), made device-wide by scan-then-propagate.
#include "scan_then_propagate.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

template <class In, class Out, class Op>
struct HillisSteelePass {
  static constexpr int64_t kTileItems = kTextbookThreads;
  static void launch(const ScanLaunch& l, int64_t base, unsigned blocks, int64_t tiles_per_row, scan_acc_t<Out>* totals) {
    hillis_steele_kernel<In, Out, Op><<<blocks, kTextbookThreads, 0, l.stream>>>(
        static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout, tiles_per_row, base, totals,
        l.exclusive);
  }
};

}  // namespace

Status scan_hillis_steele(const ScanLaunch& l) {
  return dispatch_scan_types<ScanThenPropagate<HillisSteelePass>::Runner>(l);
}

}  // namespace scan_detail
}  // namespace gpuprims
