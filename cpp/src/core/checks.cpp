#include "gpuprims/core/checks.hpp"

#include <cstdint>
#include <string>

namespace gpuprims {

std::string arg_error_prefix(const char* op, const char* arg) {
  return std::string(op) + ": argument '" + arg + "': ";
}

Status check_element_aligned(const char* op, const TensorView& v, const char* arg) {
  if (reinterpret_cast<uintptr_t>(v.data) % dtype_size(v.dtype) != 0) {
    return value_error(arg_error_prefix(op, arg) + "expected an address aligned to its " +
                       std::to_string(dtype_size(v.dtype)) + "-byte " + dtype_name(v.dtype) +
                       " elements, got a misaligned one");
  }
  return Status::ok();
}

}  // namespace gpuprims
