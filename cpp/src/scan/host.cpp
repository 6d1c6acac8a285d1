// The CPU reference of the scan: each row accumulated left to right in the kernels' accumulator
// type with the kernels' operators (scan_ops.hpp), so integer results are bit-identical to the GPU
// and float results differ only by the order of rounding.
#include "dispatch_types.hpp"
#include "gpuprims/core/numeric.hpp"

namespace gpuprims {
namespace scan_detail {
namespace {

template <class In, class Out, class Op>
struct HostRunner {
  static Status run(const ScanLaunch& l) {
    using Acc = scan_acc_t<Out>;
    const ScanOperator<Op> op;
    const auto* in = static_cast<const storage_t<In>*>(l.in);
    auto* out = static_cast<Out*>(l.out);
    const ScanLayout& t = l.layout;
    for (int64_t row = 0; row < t.rows; ++row) {
      int64_t in_offset, out_offset;
      t.row_offsets(row, &in_offset, &out_offset);
      Acc carry = ScanOperator<Op>::template identity<Acc>();
      for (int64_t i = 0; i < t.len; ++i) {
        const Acc next = op(carry, cast_value<Acc>(in[in_offset + i * t.in_step]));
        const Acc v = !l.exclusive ? next : (i == 0 ? ScanOperator<Op>::template public_identity<Out, Acc>() : carry);
        out[out_offset + i * t.out_step] = cast_value<Out>(v);
        carry = next;
      }
    }
    return Status::ok();
  }
};

}  // namespace

Status scan_host(const ScanLaunch& l) { return dispatch_scan_types<HostRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
