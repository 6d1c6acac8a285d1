#include "raise.hpp"

namespace nb = nanobind;

namespace gpuprims {
namespace {
PyObject* g_cuda_error = nullptr;
PyObject* g_cuda_fatal_error = nullptr;
}  // namespace

void register_exceptions(nb::module_& m) {
  g_cuda_error = PyErr_NewExceptionWithDoc(
      "gpuprims.CudaError", "A CUDA call made by gpuprims failed; the CUDA context is still usable.",
      PyExc_RuntimeError, nullptr);
  g_cuda_fatal_error = PyErr_NewExceptionWithDoc(
      "gpuprims.CudaFatalError",
      "A sticky CUDA error (illegal address, launch failure, ...): the CUDA context is lost and the "
      "process must be restarted.",
      g_cuda_error, nullptr);
  m.attr("CudaError") = nb::handle(g_cuda_error);
  m.attr("CudaFatalError") = nb::handle(g_cuda_fatal_error);
}

void raise_status(const Status& status) {
  PyObject* type = PyExc_RuntimeError;
  switch (status.kind()) {
    case ErrorKind::kTypeError: type = PyExc_TypeError; break;
    case ErrorKind::kValueError: type = PyExc_ValueError; break;
    case ErrorKind::kOutOfMemory: type = PyExc_MemoryError; break;
    case ErrorKind::kCudaError: type = g_cuda_error; break;
    case ErrorKind::kCudaFatal: type = g_cuda_fatal_error; break;
    case ErrorKind::kOk: break;
  }
  PyErr_SetString(type, status.message().c_str());
  throw nb::python_error();
}

}  // namespace gpuprims
