#pragma once
// Status: how every host entry point reports failure. No exceptions cross the C++ API; the
// bindings turn a Status into the matching Python exception (TypeError, ValueError, MemoryError,
// gpuprims.CudaError, gpuprims.CudaFatalError).
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

namespace gpuprims {

enum class ErrorKind {
  kOk,
  kTypeError,     // wrong dtype, device, framework, read-only output
  kValueError,    // wrong shape, axis, range, size, unknown option
  kOutOfMemory,   // an allocation failed
  kCudaError,     // a CUDA call failed; the context is still usable
  kCudaFatal,     // a sticky CUDA error: the context is lost, the process must restart
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}
  static Status ok() { return Status(); }
  bool is_ok() const { return kind_ == ErrorKind::kOk; }
  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }

 private:
  ErrorKind kind_ = ErrorKind::kOk;
  std::string message_;
};

inline Status type_error(std::string m) { return Status(ErrorKind::kTypeError, std::move(m)); }
inline Status value_error(std::string m) { return Status(ErrorKind::kValueError, std::move(m)); }

// Maps a CUDA error to a Status naming the op and the failing call. Sticky errors latch a
// process-wide flag, so later calls fail fast with CudaFatalError instead of touching a dead context.
Status cuda_status(cudaError_t err, const char* op, const char* what);

// Fails fast once a sticky error has been seen in this process.
Status check_context_alive(const char* op);

// After a launch: checks the launch itself and, with GPUPRIMS_SYNC=1, synchronizes the stream so
// that asynchronous kernel faults are reported by the op that caused them.
Status check_launch(const char* op, cudaStream_t stream);

}  // namespace gpuprims

#define GPUPRIMS_TRY(expr)                         \
  do {                                             \
    ::gpuprims::Status gpuprims_status_ = (expr);  \
    if (!gpuprims_status_.is_ok()) return gpuprims_status_; \
  } while (0)

#define GPUPRIMS_CUDA_CHECK(op, expr) GPUPRIMS_TRY(::gpuprims::cuda_status((expr), (op), #expr))
