// row_on_chip for softmax(x, dtype=) where x's dtype and the output's differ: x read once and
// rounded to the output's dtype as it is loaded (torch's definition: x cast first), the result
// written once in that dtype. 6 bytes per element for fp16 / bf16 <-> float32 where casting first
// and then running in place moves 14 (fp16 -> float32) or 10 (float32 -> fp16).
#include "row_on_chip_launch.cuh"

namespace gpuprims {
namespace norms {

bool row_on_chip_converts(DType x, DType y) {
  bool converts = false;
  (void)visit_converting_pair(
      x, y, [&](auto, auto) { converts = true; return Status::ok(); }, [] { return Status::ok(); });
  return converts;
}

Status norms_row_on_chip_convert(const NormLaunch& l) {
  return visit_converting_pair(
      l.dtype, l.y_dtype,
      [&](auto in_tag, auto out_tag) {
        return run_row_on_chip<typename decltype(in_tag)::type, RowKind::kSoftmax, false,
                               typename decltype(out_tag)::type>(l);
      },
      [&] {
        return value_error(std::string(norm_op_name(l.op)) + ": no one-pass conversion from " + dtype_name(l.dtype) +
                           " to " + dtype_name(l.y_dtype));
      });
}

}  // namespace norms
}  // namespace gpuprims
