#pragma once
// Argument checks every family's dispatch shares.
#include <string>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"

namespace gpuprims {

// The array's address is a multiple of its element size (kernels index it as T*). Error:
// "<op>: argument '<arg>': expected an address aligned to its 4-byte float32 elements, ...".
Status check_element_aligned(const char* op, const TensorView& v, const char* arg);

// The start of every argument error message: "<op>: argument '<arg>': ".
std::string arg_error_prefix(const char* op, const char* arg);

}  // namespace gpuprims
