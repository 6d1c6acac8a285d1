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

// Runs a library call (a callable returning Status) with the GIL released, since it may wait on the
// device (a count read back, a blocking allocation) and touches no Python object, then raises its
// Status with the GIL held again.
template <class Call>
void call_without_gil(Call&& call) {
  Status status;
  {
    nanobind::gil_scoped_release release;
    status = call();
  }
  throw_if_error(status);
}

}  // namespace gpuprims
