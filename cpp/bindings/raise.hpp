#pragma once
#include <nanobind/nanobind.h>

#include "gpuprims/core/error.hpp"

namespace gpuprims {

// Registers gpuprims.CudaError (a RuntimeError) and gpuprims.CudaFatalError (a CudaError).
void register_exceptions(nanobind::module_& m);

// Raises the Python exception that matches the status (TypeError, ValueError, MemoryError,
// CudaError, CudaFatalError). Never returns.
[[noreturn]] void raise_status(const Status& status);

inline void throw_if_error(const Status& status) {
  if (!status.is_ok()) raise_status(status);
}

}  // namespace gpuprims
