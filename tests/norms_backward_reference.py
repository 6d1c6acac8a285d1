"""float64 references, tolerances and a runner for the norms backward passes, shared by the CPU
and GPU tests."""
from __future__ import annotations

import numpy as np
from conftest import to_numpy
from norms_reference import OUT_EPS, TINY, assert_close, round_to

import gpuprims

SOFTMAX_OPS = ("softmax", "log_softmax")
BACKWARD_OPS = ("softmax", "log_softmax", "layer_norm", "rms_norm")


def _f64(a):
    return None if a is None else to_numpy(a).astype(np.float64)


def _row_shape(ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return shape


def backward_reference(op, dy, saved, weight=None, mean=None, rstd=None, axis=-1):
    """(dx, dweight, dbias, magnitudes) in long double from the given arrays (the backward as a
    function of its inputs); magnitudes bounds the size of the terms each result sums."""
    d = _f64(dy).astype(np.longdouble)
    s = _f64(saved).astype(np.longdouble)
    n = d.shape[axis]
    with np.errstate(all="ignore"):
        if op == "softmax":
            dot = (d * s).sum(axis=axis, keepdims=True)
            mag = np.abs(s) * (np.abs(d) + np.abs(d * s).sum(axis=axis, keepdims=True))
            return (s * (d - dot)).astype(np.float64), None, None, (mag.astype(np.float64),)
        if op == "log_softmax":
            total = d.sum(axis=axis, keepdims=True)
            mag = np.abs(d) + np.exp(s) * np.abs(d).sum(axis=axis, keepdims=True)
            return (d - np.exp(s) * total).astype(np.float64), None, None, (mag.astype(np.float64),)
        shape = _row_shape(d.ndim, axis)
        w = 1.0 if weight is None else np.reshape(_f64(weight), shape)
        stats_shape = list(d.shape)
        stats_shape[axis] = 1  # one value per row, in C order over the other dimensions
        r = np.reshape(_f64(rstd), stats_shape)
        mu = 0.0 if mean is None else np.reshape(_f64(mean), stats_shape)
        xhat = (s - mu) * r
        g = d * w
        row_mean = (lambda v: v.mean(axis=axis, keepdims=True)) if n else (lambda v: 0.0)
        mean_g = row_mean(g) if op == "layer_norm" else 0.0
        dx = r * ((g - mean_g) - xhat * row_mean(g * xhat))
        # xhat = (x - mean) * rstd in the statistics type errs relative to |x - mean| * rstd (|xhat|)
        # and to |mean| * rstd (the subtraction's rounding).
        mag_xhat = np.abs(xhat) + np.abs(mu) * np.abs(r)
        mag_g = np.abs(g)
        mag_dx = np.abs(r) * (mag_g + (row_mean(mag_g) if op == "layer_norm" else 0.0)
                              + mag_xhat * row_mean(mag_g * mag_xhat))
        rows = tuple(i for i in range(d.ndim) if i != axis % d.ndim)
        dw = (d * xhat).sum(axis=rows)
        db = d.sum(axis=rows) if op == "layer_norm" else None
        mag_dw = (np.abs(d) * mag_xhat).sum(axis=rows)
        mag_db = np.abs(d).sum(axis=rows)
        return (dx.astype(np.float64), dw.astype(np.float64), None if db is None else db.astype(np.float64),
                (mag_dx.astype(np.float64), mag_dw.astype(np.float64), mag_db.astype(np.float64)))


def backward_tolerance(dtype, ref, mag, n_terms):
    """One rounding to dtype (twice, for margin) plus a few ulp of the statistics type per level of
    the reductions over `n_terms` terms, times the magnitude of what was summed."""
    acc = 2.0 ** -53 if dtype == "float64" else 2.0 ** -24
    depth = 16 + 4 * int(np.ceil(np.log2(max(n_terms, 1) + 1)))
    r = np.abs(np.nan_to_num(ref, nan=0.0, posinf=0.0, neginf=0.0))
    return 2 * OUT_EPS[dtype] * r + TINY[dtype] + depth * acc * np.nan_to_num(mag, nan=0.0, posinf=0.0)


def run_backward(op, dy, saved, weight=None, mean=None, rstd=None, **kwargs):
    """(dx, dweight, dbias) of every op (None where the op has none)."""
    if op in SOFTMAX_OPS:
        return getattr(gpuprims, op + "_backward")(saved, dy, **kwargs), None, None
    if op == "layer_norm":
        return gpuprims.layer_norm_backward(dy, saved, weight, mean, rstd, **kwargs)
    dx, dw = gpuprims.rms_norm_backward(dy, saved, weight, rstd, **kwargs)
    return dx, dw, None


def forward_for_backward(op, x, weight=None, bias=None, axis=-1):
    """What the backward of op takes from the forward: (saved, mean, rstd)."""
    if op in SOFTMAX_OPS:
        return getattr(gpuprims, op)(x, axis=axis), None, None
    if op == "layer_norm":
        _, mean, rstd = gpuprims.layer_norm(x, weight, bias, axis=axis, return_stats=True)
        return x, mean, rstd
    _, rstd = gpuprims.rms_norm(x, weight, axis=axis, return_stats=True)
    return x, None, rstd


def check_backward(fw, op, a, dtype, rng, *, axis=-1, weight=True, view=None, algorithm="auto", dy_scale=1.0):
    """Forward on fw's array of `a` (through view(x) when given), then the backward against the
    float64 reference of the same inputs; poisons out= before the kernel runs."""
    x = fw.make(a, dtype)
    if view is not None:
        x = view(x)
    shape = tuple(x.shape)
    n = shape[axis]
    w = fw.make(round_to(rng.uniform(0.5, 1.5, n), dtype), dtype) if weight and op not in SOFTMAX_OPS else None
    saved, mean, rstd = forward_for_backward(op, x, w, None, axis)
    dy_np = round_to(rng.standard_normal(shape) * dy_scale, dtype)
    dy = fw.make(dy_np, dtype)
    writable = fw.name in ("numpy", "torch", "cupy")  # JAX arrays are immutable
    out = fw.make(np.full(shape, np.nan), dtype) if writable else None
    dx, dw, db = run_backward(op, dy, saved, w, mean, rstd, axis=axis, algorithm=algorithm, out=out)
    if out is not None:
        assert dx is out
    rdx, rdw, rdb, mags = backward_reference(op, dy, saved, w, mean, rstd, axis)
    assert_close(dx, rdx, backward_tolerance(dtype, rdx, mags[0], n), "dx")
    rows = int(np.prod(shape)) // max(n, 1) if n else 0
    if op in ("layer_norm", "rms_norm"):
        assert_close(dw, rdw, backward_tolerance(dtype, rdw, mags[1], rows * 4), "dweight")
    if op == "layer_norm":
        assert_close(db, rdb, backward_tolerance(dtype, rdb, mags[2], rows * 4), "dbias")
    return dx, dw, db
