#pragma once
// The per-call hot path for CUDA torch tensors, in C++ through torch's own Python methods (no torch
// headers: torch stays an optional dependency, imported only by the Python layer).
//
// Why: a small op's host cost is a kernel launch (~3.5 us on the H200 machine) plus everything around
// it. The Python layer's general path (framework detection, field tuples, output allocation, result
// wrapping) adds ~2.5 us of interpreter work on top of the unavoidable torch calls; doing the same
// calls from C++ leaves only the calls themselves (docs/reduce.md, "Host cost of a small call").
//
// The Python layer installs torch's pieces once (_interop.install_torch_bridge) and then routes the
// qualifying calls here; anything that does not qualify (CPU tensors, other frameworks, an explicit
// stream or out=) comes back as None and takes the general path, which stays the reference for the
// semantics: same stream (torch's current stream of the tensor's device), same output allocation
// (torch.empty_like of the cached 0-d prototype of the result's dtype and device).
#include <nanobind/nanobind.h>

#include <cuda_runtime_api.h>

#include "gpuprims/core/tensor_view.hpp"

namespace gpuprims {

// Reads x when it is a CUDA torch.Tensor: its view and torch's current stream on its device. Returns
// false (touching nothing) for anything else, or when the bridge is not installed.
bool torch_cuda_view(nanobind::handle x, TensorView* view, cudaStream_t* stream);

// Reads an operand beside x (weight, bias, residual, out=) when it is a CUDA torch.Tensor on
// `device`, a subclass included (nn.Parameter: it is only read); false (touching nothing) for
// anything else. Its dtype and shape are the op's own checks.
bool torch_cuda_operand(nanobind::handle a, Device device, TensorView* view);

// Reads out= when it is a CUDA torch.Tensor on `device` of `dtype` that does not require grad; false
// (touching nothing) for anything else, which the general path checks and reports.
bool torch_cuda_out(nanobind::handle out, Device device, DType dtype, TensorView* view);

// Reads an axis argument of the fast paths: a Python int (exactly: not a bool, not a numpy integer)
// in [-ndim, ndim), normalized into [0, ndim). False for anything else, where the caller declines
// the call and the general path raises its typed error.
bool read_python_axis(nanobind::handle axis, int ndim, int* normalized);

// A fresh C-contiguous torch tensor of `dtype` and shape[0, ndim) on CUDA `device`, and its view:
// torch.empty_like of the cached 0-d prototype for ndim 0, the prototype's new_empty(shape) else
// (what the Python layer's new_output does).
nanobind::object torch_new_tensor(DType dtype, int device, const int64_t* shape, int ndim, TensorView* view);

void bind_torch_bridge(nanobind::module_& m);

}  // namespace gpuprims
