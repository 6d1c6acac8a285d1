// row_on_chip for softmax(x, dtype=) where x's dtype and the output's differ: x read once and
// rounded to the output's dtype as it is loaded (torch's definition: x cast first), the result
// written once in that dtype. 6 bytes per element for fp16 / bf16 <-> float32 where casting first
// and then running in place moves 14 (fp16 -> float32) or 10 (float32 -> fp16).
#include "row_on_chip_launch.cuh"

namespace gpuprims {
namespace norms {

// The pairs softmax(x, dtype=) is used with: mixed-precision logits up to float32, float32 down to
// the half types. Other pairs run convert_rows, then the op in place.
bool row_on_chip_converts(DType x, DType y) {
  const bool half = x == DType::kFloat16 || x == DType::kBFloat16;
  const bool to_half = y == DType::kFloat16 || y == DType::kBFloat16;
  return (half && y == DType::kFloat32) || (x == DType::kFloat32 && to_half);
}

Status norms_row_on_chip_convert(const NormLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto in_tag) {
    return visit_float_dtype(l.y_dtype, [&](auto out_tag) -> Status {
      using T = typename decltype(in_tag)::type;
      using Out = typename decltype(out_tag)::type;
      constexpr bool kHalf = is_half_like<T>::value, kToHalf = is_half_like<Out>::value;
      if constexpr ((kHalf && std::is_same<Out, float>::value) || (std::is_same<T, float>::value && kToHalf)) {
        return run_row_on_chip<T, RowKind::kSoftmax, false, Out>(l);
      } else {
        return value_error(std::string(norm_op_name(l.op)) + ": no one-pass conversion from " + dtype_name(l.dtype) +
                           " to " + dtype_name(l.y_dtype));
      }
    });
  });
}

}  // namespace norms
}  // namespace gpuprims
