"""gpuprims.torch: torch.autograd Functions and drop-in nn.Modules on the norms kernels.

torch is imported here only (``import gpuprims`` never imports it). Forward passes run the
gpuprims kernels (the CPU reference for CPU tensors, so ``torch.autograd.gradcheck`` runs without
a GPU), and so do backward passes (gpuprims.softmax_backward, layer_norm_backward, ...: the fused
kernels, from the saved output or statistics). The backward passes are once differentiable:
double backward (create_graph=True through them) raises.
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


def _softmax(x, dim, log, dtype):
    if dtype is not None and not x.is_floating_point():
        x = x.to(dtype)  # an integer x (no gradient) cast first, as torch
    if x.dim() == 0:  # torch takes a scalar as a row of one (dim 0 or -1); the kernels want 1-D
        return _SoftmaxFunction.apply(x.reshape(1), dim, log, dtype).reshape(())
    return _SoftmaxFunction.apply(x, dim, log, dtype)


def softmax(x, dim=-1, dtype=None):
    """torch.softmax(x, dim, dtype) on the gpuprims kernels, differentiable."""
    return _softmax(x, dim, False, dtype)


def log_softmax(x, dim=-1, dtype=None):
    """torch.log_softmax(x, dim, dtype) on the gpuprims kernels, differentiable."""
    return _softmax(x, dim, True, dtype)


def _normalized(op, x, normalized_shape):
    shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(x.shape[x.dim() - k:]) != shape:
        raise ValueError(f"{op}: argument 'normalized_shape': expected the trailing dimensions of x "
                         f"{tuple(x.shape)}, got {shape}")
    return shape, x.reshape(*x.shape[:x.dim() - k], math.prod(shape))


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm on the gpuprims kernels, differentiable."""
    shape, x2 = _normalized("layer_norm", x, normalized_shape)
    w = None if weight is None else weight.reshape(-1)
    b = None if bias is None else bias.reshape(-1)
    return _NormFunction.apply(x2, w, b, float(eps), False).reshape(x.shape)


def rms_norm(x, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm on the gpuprims kernels, differentiable (eps None: the
    dtype's machine epsilon, as torch)."""
    shape, x2 = _normalized("rms_norm", x, normalized_shape)
    eps = torch.finfo(x.dtype).eps if eps is None else eps
    w = None if weight is None else weight.reshape(-1)
    return _NormFunction.apply(x2, w, None, float(eps), True).reshape(x.shape)


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
