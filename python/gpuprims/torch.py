"""gpuprims.torch: torch.autograd Functions and drop-in nn.Modules on the norms kernels.

torch is imported here only (``import gpuprims`` never imports it). Forward passes run the
gpuprims kernels (the CPU reference for CPU tensors, so ``torch.autograd.gradcheck`` runs without
a GPU), and so do backward passes (gpuprims.softmax_backward, layer_norm_backward, ...: the fused
kernels, from the saved output or statistics). The backward passes are once differentiable:
double backward (create_graph=True through them) raises.

dtypes follow torch's. Under autocast, layer_norm, softmax and log_softmax run in float32 (torch's
autocast list of float32 ops): float16 / bfloat16 inputs are cast first. Parameters of another
dtype than x (float32 weights of a bfloat16 x, as mixed-precision training keeps them) are computed
in the wider dtype and the result is x's dtype (torch's RMSNorm under autocast; torch 2.11's
LayerNorm refuses such a mix outside autocast). These casts are copies made by torch, and autograd
carries the gradients back through them (x's gradient in x's dtype, the weight's in its).
"""
from __future__ import annotations

import math
import numbers

import torch
from torch.autograd.function import once_differentiable

from . import nn as _nn

__all__ = ["softmax", "log_softmax", "layer_norm", "rms_norm", "Softmax", "LayerNorm", "RMSNorm"]


class _SoftmaxFunction(torch.autograd.Function):
    """dtype: torch's softmax(dtype=), x converted by the kernel; the gradient comes back in x's
    dtype, as through the cast's own backward."""

    @staticmethod
    def forward(ctx, x, dim, log, dtype):
        y = (_nn.log_softmax if log else _nn.softmax)(x, axis=dim, dtype=dtype)
        ctx.save_for_backward(y)
        ctx.dim, ctx.log, ctx.x_dtype = dim, log, x.dtype
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        dx = (_nn.log_softmax_backward if ctx.log else _nn.softmax_backward)(y, dy, axis=ctx.dim)
        return dx.to(ctx.x_dtype), None, None, None


class _NormFunction(torch.autograd.Function):
    """layer_norm / rms_norm over the last axis of x viewed as (..., n)."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps, rms):
        if rms:
            y, rstd = _nn.rms_norm(x, weight, eps, return_stats=True)
            mean = None
        else:
            y, mean, rstd = _nn.layer_norm(x, weight, bias, eps, return_stats=True)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.rms, ctx.has_bias = rms, bias is not None
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved_tensors
        if ctx.rms:
            dx, dweight = _nn.rms_norm_backward(dy, x, weight, rstd)
            dbias = None
        else:
            dx, dweight, dbias = _nn.layer_norm_backward(dy, x, weight, mean, rstd)
        dweight = dweight if weight is not None and ctx.needs_input_grad[1] else None
        dbias = dbias if ctx.has_bias and ctx.needs_input_grad[2] else None
        return dx, dweight, dbias, None, None


_HALF = (torch.float16, torch.bfloat16)


def _autocast_enabled(device_type):
    try:
        return torch.is_autocast_enabled(device_type)
    except TypeError:  # torch before 2.4: only CUDA's flag, no argument
        return device_type == "cuda" and torch.is_autocast_enabled()


def _float32_under_autocast(*tensors):
    """Under autocast torch runs layer_norm, softmax and log_softmax in float32: float16 / bfloat16
    tensors are cast (others, and None, pass)."""
    x = tensors[0]
    if not _autocast_enabled(x.device.type):
        return tensors
    return tuple(t.float() if t is not None and t.dtype in _HALF else t for t in tensors)


def _needs_graph(*tensors):
    """Whether the result must carry an autograd graph. Without one (inference, torch.no_grad, or
    nothing requiring grad) the ops call the kernels directly: no autograd Function, no saved
    statistics, the same values."""
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _softmax(x, dim, log, dtype):
    if dtype is None and x.dtype in _HALF and _autocast_enabled(x.device.type):
        dtype = torch.float32  # torch's autocast: softmax(x, dtype=float32), the cast inside the kernel
    if dtype is not None and not x.is_floating_point():
        x = x.to(dtype)  # an integer x (no gradient) cast first, as torch
    if x.dim() == 0:  # torch takes a scalar as a row of one (dim 0 or -1); the kernels want 1-D
        return _softmax(x.reshape(1), dim, log, dtype).reshape(())
    if not _needs_graph(x):
        return (_nn.log_softmax if log else _nn.softmax)(x, axis=dim, dtype=dtype)
    return _SoftmaxFunction.apply(x, dim, log, dtype)


def softmax(x, dim=-1, dtype=None):
    """torch.softmax(x, dim, dtype) on the gpuprims kernels, differentiable."""
    return _softmax(x, dim, False, dtype)


def log_softmax(x, dim=-1, dtype=None):
    """torch.log_softmax(x, dim, dtype) on the gpuprims kernels, differentiable."""
    return _softmax(x, dim, True, dtype)


def _normalized(op, x, normalized_shape):
    """x as (..., n) for the trailing dimensions normalized_shape (x itself for one dimension: the
    kernels take the last axis of any n-d x)."""
    if normalized_shape.__class__ is tuple:  # a module's attribute
        shape = normalized_shape
    else:
        shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(x.shape[x.dim() - k:]) != shape:
        raise ValueError(f"{op}: argument 'normalized_shape': expected the trailing dimensions of x "
                         f"{tuple(x.shape)}, got {shape}")
    return x if k == 1 else x.reshape(*x.shape[:x.dim() - k], math.prod(shape))


def _flat(t):
    return t if t is None or t.dim() == 1 else t.reshape(-1)


def _norm(x, weight, bias, eps, rms):
    """x (..., n) normalized with the flat weight / bias, in their common dtype (module docstring)."""
    params = [t for t in (weight, bias) if t is not None]
    if all(t.dtype == x.dtype for t in params):
        if not _needs_graph(x, weight, bias):
            return _nn.rms_norm(x, weight, eps) if rms else _nn.layer_norm(x, weight, bias, eps)
        return _NormFunction.apply(x, weight, bias, eps, rms)
    compute = x.dtype
    for t in params:
        compute = torch.promote_types(compute, t.dtype)
    weight, bias = (None if t is None else t.to(compute) for t in (weight, bias))
    return _norm(x.to(compute), weight, bias, eps, rms).to(x.dtype)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm on the gpuprims kernels, differentiable."""
    x, weight, bias = _float32_under_autocast(x, weight, bias)
    x2 = _normalized("layer_norm", x, normalized_shape)
    y = _norm(x2, _flat(weight), _flat(bias), float(eps), False)
    return y if x2 is x else y.reshape(x.shape)


def rms_norm(x, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm on the gpuprims kernels, differentiable (eps None: the
    dtype's machine epsilon, as torch)."""
    x2 = _normalized("rms_norm", x, normalized_shape)
    eps = torch.finfo(x.dtype).eps if eps is None else eps
    y = _norm(x2, _flat(weight), None, float(eps), True)
    return y if x2 is x else y.reshape(x.shape)


class Softmax(torch.nn.Module):
    """Drop-in torch.nn.Softmax (dim must be given: torch's implicit dim choice is deprecated)."""

    def __init__(self, dim: int):
        super().__init__()
        if not isinstance(dim, numbers.Integral):
            raise TypeError(f"Softmax: argument 'dim': expected an int, got {dim!r}")
        self.dim = int(dim)

    def forward(self, x):
        return softmax(x, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LayerNorm(torch.nn.LayerNorm):
    """Drop-in torch.nn.LayerNorm (same parameters and state dict) on the gpuprims kernels."""

    def forward(self, x):
        return layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class RMSNorm(torch.nn.RMSNorm):
    """Drop-in torch.nn.RMSNorm (same parameters and state dict) on the gpuprims kernels."""

    def forward(self, x):
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)
