"""float64 references and tolerances of the norms family, shared by the CPU and GPU tests."""
from __future__ import annotations

import numpy as np
from conftest import bf16_round, to_numpy

import gpuprims

OPS = ("softmax", "log_softmax", "layer_norm", "rms_norm")
NORM_OPS = ("layer_norm", "rms_norm")
FLOATS = ("float16", "bfloat16", "float32", "float64")
OUT_EPS = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24, "float64": 2.0 ** -53}
TINY = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -133, "float32": 2.0 ** -149, "float64": 2.0 ** -1074}
DEFAULT_EPS = {"layer_norm": 1e-5, "rms_norm": 1e-6}


def variants(op):
    return tuple(v.name for v in gpuprims.variants(op))


def round_to(a: np.ndarray, dtype: str) -> np.ndarray:
    """Values of `a` representable in dtype (float32 storage for bfloat16)."""
    if dtype == "bfloat16":
        a = np.asarray(a)
        return bf16_round(a if a.dtype == np.float64 else a.astype(np.float32))  # float64: rounded once
    return a.astype(dtype)


def reference(op, a, axis=-1, weight=None, bias=None, eps=None):
    """(y, mean, rstd) in float64 (mean/rstd None where the op has none), with torch's semantics."""
    x = np.asarray(a, dtype=np.float64)
    eps = DEFAULT_EPS.get(op) if eps is None else eps
    with np.errstate(all="ignore"):
        if op in ("softmax", "log_softmax"):
            m = x.max(axis=axis, keepdims=True) if x.shape[axis] else np.zeros_like(x.sum(axis=axis, keepdims=True))
            e = np.exp(x - m)
            s = e.sum(axis=axis, keepdims=True)
            return (e / s if op == "softmax" else (x - m) - np.log(s)), None, None
        w = 1.0 if weight is None else np.asarray(weight, np.float64)
        shape = [1] * x.ndim
        shape[axis] = -1
        w = np.reshape(w, shape) if weight is not None else w
        b = 0.0 if bias is None else np.reshape(np.asarray(bias, np.float64), shape)
        n = x.shape[axis]
        # In long double (x86: 64-bit mantissa, exponent to 1e4932): a reference more accurate than
        # float64 kernels, and squares of values near 1e300 do not overflow.
        xl = x.astype(np.longdouble)
        if op == "layer_norm":
            mean = xl.mean(axis=axis, keepdims=True) if n else np.zeros_like(xl.sum(axis=axis, keepdims=True))
            var = ((xl - mean) ** 2).mean(axis=axis, keepdims=True) if n else np.full_like(mean, np.nan)
            rstd = 1 / np.sqrt(var + eps)
            y = (xl - mean) * rstd * w + b
            return y.astype(np.float64), mean.astype(np.float64), rstd.astype(np.float64)
        ms = (xl * xl).mean(axis=axis, keepdims=True) if n else np.full_like(xl.sum(axis=axis, keepdims=True), np.nan)
        rstd = 1 / np.sqrt(ms + eps)
        return (xl * rstd * w).astype(np.float64), None, rstd.astype(np.float64)


def tolerance(op, dtype, a, ref, axis=-1, weight=None, bias=None):
    """Bound on |y - reference|: one rounding to dtype (twice, for margin) plus the statistics'
    error in the statistics type (float32, float64 for float64) scaled by what they multiply."""
    acc = 2.0 ** -53 if dtype == "float64" else 2.0 ** -24
    n = max(1, a.shape[axis])
    depth = 16 + 4 * int(np.ceil(np.log2(n + 1)))  # a few ulp per level of the reductions, and exp/log
    r = np.abs(np.nan_to_num(ref, nan=0.0, posinf=0.0, neginf=0.0))
    out = 2 * OUT_EPS[dtype] * r + TINY[dtype]
    if op == "softmax":
        return out + depth * acc * r
    if op == "log_softmax":
        x = np.abs(np.nan_to_num(np.asarray(a, np.float64), nan=0.0, posinf=0.0, neginf=0.0))
        return out + depth * acc * (x + np.log(n) + 1)
    b = 0.0 if bias is None else np.abs(np.asarray(bias, np.float64))
    shape = [1] * np.ndim(a)
    shape[axis] = -1
    if bias is not None:
        b = np.reshape(b, shape)
    return out + depth * acc * (r + b + 1)


def assert_close(got, ref, tol, what="y"):
    g = to_numpy(got).astype(np.float64)
    assert g.shape == np.shape(ref), f"{what}: shape {g.shape} != {np.shape(ref)}"
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(g), nan), f"{what}: NaN where the reference has none, or the reverse"
    inf = np.isinf(ref)
    assert np.array_equal(g[inf], ref[inf]), f"{what}: infinities differ"
    err = np.abs(np.where(nan | inf, 0.0, g - ref))
    bound = np.broadcast_to(tol, err.shape)
    worst = np.unravel_index(np.argmax(err - bound), err.shape) if err.size else None
    assert np.all(err <= bound), f"{what}: error {err[worst]} > tolerance {bound[worst]} at {worst}"


def run_op(op, x, weight=None, bias=None, *, axis=-1, eps=None, return_stats=False, algorithm="auto", out=None,
           stream=None):
    fn = getattr(gpuprims, op)
    kwargs = dict(axis=axis, algorithm=algorithm, out=out, stream=stream)
    if op in NORM_OPS:
        kwargs["return_stats"] = return_stats
        if eps is not None:
            kwargs["eps"] = eps
        return fn(x, weight, bias, **kwargs) if op == "layer_norm" else fn(x, weight, **kwargs)
    return fn(x, **kwargs)


def check(fw, op, a, dtype, *, axis=-1, affine=True, rng=None, algorithm="auto", eps=None, stats=True, view=None):
    """Runs op on fw's array of `a` (optionally through view(x), a strided view), checks y (and the
    statistics) against float64. `a` must hold values representable in dtype."""
    x = fw.make(a, dtype)
    a_view = a
    if view is not None:
        x, a_view = view(x), view(a)
    n = a_view.shape[axis] if a_view.ndim else 1
    weight = bias = None
    if op in NORM_OPS and affine:
        rng = rng or np.random.default_rng(0)
        weight = round_to(rng.uniform(0.5, 1.5, n), dtype)
        bias = round_to(rng.standard_normal(n), dtype) if op == "layer_norm" else None
    want_stats = stats and op in NORM_OPS
    res = run_op(op, x, None if weight is None else fw.make(weight, dtype),
                 None if bias is None else fw.make(bias, dtype), axis=axis, eps=eps, return_stats=want_stats,
                 algorithm=algorithm)
    y = res[0] if want_stats else res
    assert fw.is_native(y), type(y)
    ref, mean, rstd = reference(op, a_view, axis, weight, bias, eps)
    assert_close(y, ref, tolerance(op, dtype, a_view, ref, axis, weight, bias))
    if want_stats:
        stats_eps = 2.0 ** -40 if dtype == "float64" else 2.0 ** -18
        if op == "layer_norm":
            spread = np.abs(a_view).max(axis=axis, keepdims=True) if a_view.size else 0.0
            assert_close(res[1], mean, stats_eps * (spread + np.abs(np.nan_to_num(mean))) + 1e-300, "mean")
        assert_close(res[-1], rstd, stats_eps * np.abs(np.nan_to_num(rstd)) * 8 + 1e-300, "rstd")
    return res


def check_softmax_dtype(fw, op, a, from_dtype, to_dtype):
    """softmax / log_softmax(x, dtype=to_dtype) on `fw`'s array of `a` in `from_dtype`: the result is
    `fw`'s type in to_dtype, equal to the op of x cast first (torch's definition) within the
    to_dtype tolerance; x itself is untouched."""
    x = fw.make(a, from_dtype)
    before = to_numpy(x).copy()
    y = getattr(gpuprims, op)(x, dtype=to_dtype)
    assert fw.is_native(y), type(y)
    assert str(y.dtype).replace("torch.", "") == to_dtype, y.dtype
    # the values x holds, rounded to to_dtype as the cast does
    cast = round_to(to_numpy(fw.make(a, from_dtype)).astype(np.float64), to_dtype).astype(np.float64)
    ref = reference(op, cast)[0]
    assert_close(y, ref, tolerance(op, to_dtype, cast, ref), f"{from_dtype} -> {to_dtype}")
    np.testing.assert_array_equal(to_numpy(x), before)
