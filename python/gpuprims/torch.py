"""gpuprims.torch: torch.autograd Functions and drop-in nn.Modules on the norms kernels.

torch is imported here only (``import gpuprims`` never imports it). Forward passes run the
gpuprims kernels (the CPU reference for CPU tensors, so ``torch.autograd.gradcheck`` runs without
a GPU). Backward passes are, for now, composed of torch operations on the saved output or
statistics (the fused backward kernels of issue 5 step 2 are not written yet): correct and
differentiable, not yet fast.
"""
from __future__ import annotations

import math
import numbers

import torch

from . import nn as _nn

__all__ = ["softmax", "log_softmax", "layer_norm", "rms_norm", "Softmax", "LayerNorm", "RMSNorm"]


def _stats_dtype(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32


class _SoftmaxFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim, log):
        y = (_nn.log_softmax if log else _nn.softmax)(x, axis=dim)
        ctx.save_for_backward(y)
        ctx.dim, ctx.log = dim, log
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        acc = _stats_dtype(y)
        y32, dy32 = y.to(acc), dy.to(acc)
        if ctx.log:  # d/dx log_softmax: dy - softmax * sum(dy)
            dx = dy32 - torch.exp(y32) * dy32.sum(ctx.dim, keepdim=True)
        else:        # d/dx softmax: y * (dy - sum(dy * y))
            dx = y32 * (dy32 - (dy32 * y32).sum(ctx.dim, keepdim=True))
        return dx.to(y.dtype), None, None


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
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved_tensors
        acc = rstd.dtype
        x32, dy32 = x.to(acc), dy.to(acc)
        xhat = (x32 - mean) * rstd if mean is not None else x32 * rstd
        g = dy32 * weight.to(acc) if weight is not None else dy32
        # dx = rstd * (g - mean(g) - xhat * mean(g * xhat)); rms_norm has no mean term.
        proj = (g * xhat).mean(-1, keepdim=True)
        dx = rstd * (g - xhat * proj) if ctx.rms else rstd * (g - g.mean(-1, keepdim=True) - xhat * proj)
        rows = tuple(range(x.dim() - 1))
        dweight = (dy32 * xhat).sum(rows).to(weight.dtype) if weight is not None and ctx.needs_input_grad[1] else None
        dbias = dy32.sum(rows).to(x.dtype) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return dx.to(x.dtype), dweight, dbias, None, None


def softmax(x, dim=-1):
    """torch.softmax(x, dim) on the gpuprims kernels, differentiable."""
    return _SoftmaxFunction.apply(x, dim, False)


def log_softmax(x, dim=-1):
    """torch.log_softmax(x, dim) on the gpuprims kernels, differentiable."""
    return _SoftmaxFunction.apply(x, dim, True)


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
