"""The norms family: row-wise softmax, log_softmax, layer_norm and rms_norm, and their backward passes.

A "row" is the run of elements along ``axis`` (the last axis by default); every other index picks a
row. Any strides are read in place (no copies), any number of rows (including 0), any row length.
"""
from __future__ import annotations

import numbers
import operator

from . import _C, _interop
from ._dtypes import FLOATS, dtype_name

_FLOAT_NAMES = "float16, bfloat16, float32 or float64"


def _check_algorithm(op, algorithm):
    if algorithm.__class__ is not str:
        raise TypeError(f"{op}: argument 'algorithm': expected a str, got {algorithm!r}")


def _normalize_axis(op, axis, ndim):
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{op}: argument 'axis': expected an int, got {axis!r}") from None
    if ndim == 0:
        raise ValueError(f"{op}: argument 'x': expected at least 1 dimension, got a 0-d array")
    if not -ndim <= a < ndim:
        raise ValueError(f"{op}: argument 'axis': expected an int in [{-ndim}, {ndim}) for an array of "
                         f"{ndim} dimensions, got {axis}")
    return a + ndim if a < 0 else a


def _check_eps(op, eps):
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"{op}: argument 'eps': expected a float, got {eps!r}")
    eps = float(eps)
    if not (eps >= 0.0 and eps != float("inf")):
        raise ValueError(f"{op}: argument 'eps': expected a finite number >= 0, got {eps!r}")
    return eps


def _forward(op, x, weight, bias, eps, axis, return_stats, algorithm, out, stream, residual=None, name=None,
             out_dtype=None):
    """The forward call; with `residual`, the add-norm op `name` (returns y, sum[, stats]).
    out_dtype (softmax, log_softmax): the result's float dtype where it is not x's."""
    label = name or op  # what errors call the op: the add-norm ops by their own names
    _check_algorithm(label, algorithm)
    if x.__class__ is _interop.torch_tensor_type and out is None and stream is None and out_dtype is None:
        # Calls on CUDA torch tensors done in C++ with the same stream and allocations as below,
        # without the interpreter work (docs/norms.md, host cost). None: a call the general path
        # must check.
        result = _C.norm_forward_torch(op, x, weight, bias, residual, eps, axis, return_stats, algorithm)
        if result is not None:
            return result
    xin = _interop.prepare_input(x, stream, label)
    dtype = xin[5]
    if dtype not in FLOATS:
        raise TypeError(f"{label}: argument 'x': expected {_FLOAT_NAMES}, got {dtype}")
    shape = tuple(xin[4])
    ax = _normalize_axis(label, axis, len(shape))
    # The affine vectors are imported on x's launch stream, so their producers' work is ordered too.
    w = None if weight is None else _interop.prepare_input(weight, xin[2], label, "weight")
    b = None if bias is None else _interop.prepare_input(bias, xin[2], label, "bias")
    for arg, v in (("weight", w), ("bias", b)):
        if v is not None and v[1] != xin[1]:
            raise ValueError(f"{label}: arguments 'x' and '{arg}' must be on the same device, got x on "
                             f"{_interop.device_string(xin[1])} and {arg} on {_interop.device_string(v[1])}")
    r = None
    if residual is not None:
        r = _interop.prepare_input(residual, xin[2], name, "residual")
        if r[1] != xin[1]:
            raise ValueError(f"{name}: arguments 'x' and 'residual' must be on the same device, got x on "
                             f"{_interop.device_string(xin[1])} and residual on {_interop.device_string(r[1])}")
        total = _interop.new_output(xin, shape, dtype, name)
    y_dtype = out_dtype or dtype
    if out is None:
        obj, out_arg = _interop.new_output(xin, shape, y_dtype, label)
    else:
        obj, out_arg = out, _interop.import_output(out, y_dtype, xin, label)
    mean = rstd = None
    if return_stats:
        stats_shape = shape[:ax] + (1,) + shape[ax + 1:]
        stats_dtype = "float64" if dtype == "float64" else "float32"
        if op == "layer_norm":
            mean = _interop.new_output(xin, stats_shape, stats_dtype, op)
        rstd = _interop.new_output(xin, stats_shape, stats_dtype, op)
    _C.norm_forward(op, xin[3], out_arg, None if w is None else w[3], None if b is None else b[3],
                    None if mean is None else mean[1], None if rstd is None else rstd[1], None if r is None else r[3],
                    None if r is None else total[1], ax, eps, algorithm, xin[2])
    y = _interop.result(xin, obj) if out is None else out
    y = (y,) if r is None else (y, _interop.result(xin, total[0]))  # (normed[, sum])
    if not return_stats:
        return y if r is not None else y[0]
    if op == "layer_norm":
        return (*y, _interop.result(xin, mean[0]), _interop.result(xin, rstd[0]))
    return (*y, _interop.result(xin, rstd[0]))


_COMMON_DOC = """algorithm : str
        "auto" or a variant name from ``gpuprims.variants("{op}")``. Every variant computes the
        same function; all are run-to-run deterministic (no atomics).
    out : array, optional
        Written in place and returned: x's framework, device, dtype and shape, writable, any
        strides with distinct elements. It may be x itself (each element is read before it is
        written); a view sharing elements with x (or residual) raises ValueError.
    stream : int, stream object or None
        Launch stream; None means the input framework's current stream (torch, CuPy), else the
        default stream. The call never synchronizes the host and allocates no device memory except
        the result (rows beyond one block: split_row, row_lag and row_hold take stream-ordered
        scratch from gpuprims' pool).

"""


def _with_dtype(op, x, dtype, out, stream):
    """softmax(dtype=) as torch defines it: x cast to `dtype` before the op. Returns (x, out,
    out_dtype). Float x: unchanged, with out_dtype the target; the kernels convert (one pass where
    they can, else x converted into the result and the op run there in place). Integer x: cast by
    its own framework, ordered like the op (_interop.on_launch_stream), and, when the caller gave no
    out=, the cast array is written in place (a fresh torch / numpy / CuPy array; never a JAX array)."""
    if dtype is None:
        return x, out, None
    name = dtype_name(dtype, op)
    if name not in FLOATS:
        raise TypeError(f"{op}: argument 'dtype': expected {_FLOAT_NAMES}, got {dtype!r}")
    fw = _interop.framework_of(x, op, "x")
    x_name = dtype_name(x.dtype, op, "x") if hasattr(x, "dtype") else None
    if x_name == name:
        return x, out, None
    if fw == "jax" and name == "float64":
        import jax

        if jax.dtypes.canonicalize_dtype("float64") != "float64":
            raise TypeError(f"{op}: argument 'dtype': JAX holds no float64 without jax_enable_x64")
    if x_name is None or x_name in FLOATS:
        return x, out, name
    if fw == "torch":
        import torch

        # detached: the result is a plain tensor, as without dtype= (gpuprims.torch is the autograd path)
        cast = _interop.on_launch_stream(x, fw, stream, op, lambda: x.detach().to(getattr(torch, name)))
    elif fw in ("numpy", "cupy", "jax"):
        target = name
        if name == "bfloat16" and fw != "cupy":
            import ml_dtypes  # numpy and JAX name bfloat16 through ml_dtypes

            target = ml_dtypes.bfloat16
        try:
            cast = _interop.on_launch_stream(x, fw, stream, op, lambda: x.astype(target))
        except (TypeError, ValueError) as e:  # CuPy holds no bfloat16
            raise TypeError(f"{op}: argument 'dtype': {fw} cannot cast x to {name}: {e}") from None
    else:
        raise TypeError(f"{op}: argument 'dtype': casting {x_name} x needs a torch, numpy, CuPy or JAX array, got "
                        f"{fw}; cast x first")
    return cast, out if out is not None or fw == "jax" else cast, None


def softmax(x, axis=-1, *, dtype=None, algorithm="auto", out=None, stream=None):
    """exp(x - max) / sum(exp(x - max)) along ``axis``.

    Parameters
    ----------
    x : array
        numpy, torch, cupy, jax, cuda.core or any DLPack array of float16, bfloat16, float32 or
        float64, at least 1-D, any strides.
    axis : int
        The row axis.
    dtype : dtype, optional
        As torch's ``softmax(dtype=)``: x is cast to this float dtype first, and the result has
        this dtype, as has ``out=`` then. None: x's dtype. A float x is converted by the kernel
        as it is read, in one pass for float16 / bfloat16 -> float32 and float32 -> float16 /
        bfloat16 on rows with unit stride, aligned or misaligned alike in x and the result: rows
        of up to 16384 elements ("auto", "row_on_chip"), longer ones on sm_90 GPUs up to 524288
        elements of float16 / bfloat16 x or 262144 of float32 x ("auto", "cluster_row");
        otherwise x is first converted into the result (one more pass) and the op runs there in
        place. An integer x is cast by its own framework
        (``x.to`` / ``x.astype``, ordered on the launch stream; torch, numpy, CuPy, JAX).
    {common}
    Returns
    -------
    array
        x's framework and shape; x's dtype, or ``dtype``.

    Notes
    -----
    Accuracy: max and sum in float32 (float64 for float64 inputs), exp and the reciprocal of the
    sum within a few ulp; the result is rounded once to x's dtype. Special values as torch: a row of only -inf gives
    NaN; a +inf or a NaN anywhere in a row makes the whole row NaN. Large finite values (fp16
    1e4) are exact to softmax since the max is subtracted first.
    """
    x, out, out_dtype = _with_dtype("softmax", x, dtype, out, stream)
    return _forward("softmax", x, None, None, 0.0, axis, False, algorithm, out, stream, out_dtype=out_dtype)


def log_softmax(x, axis=-1, *, dtype=None, algorithm="auto", out=None, stream=None):
    """(x - max) - log(sum(exp(x - max))) along ``axis``. Parameters (``dtype=`` included),
    accuracy and special values as :func:`softmax` (an all -inf row, +inf or NaN give NaN rows, as
    torch)."""
    x, out, out_dtype = _with_dtype("log_softmax", x, dtype, out, stream)
    return _forward("log_softmax", x, None, None, 0.0, axis, False, algorithm, out, stream, out_dtype=out_dtype)


def layer_norm(x, weight=None, bias=None, eps=1e-5, *, axis=-1, return_stats=False, algorithm="auto", out=None,
               stream=None):
    """(x - mean) / sqrt(var + eps) * weight + bias along ``axis`` (biased variance, as torch).

    Parameters
    ----------
    x : array
        float16, bfloat16, float32 or float64, at least 1-D, any strides.
    weight, bias : array or None
        1-D of the row length, x's dtype and device, any stride. None: 1 and 0.
    eps : float
        Added to the variance, in float32 (float64 for float64 inputs). Finite, >= 0.
    axis : int
        The row axis (torch normalizes the trailing axis; any axis here).
    return_stats : bool
        Also return mean and rstd = 1 / sqrt(var + eps), float32 (float64 for float64 inputs),
        with x's shape and the row axis of size 1 (like torch.native_layer_norm).
    {common}
    Returns
    -------
    array, or (array, mean, rstd) with return_stats

    Notes
    -----
    Accuracy: statistics in float32 (float64 for float64) with two passes over the row (mean, then
    squared deviations), relative to the row's first element and scaled by a power of two: no
    E[x^2] - E[x]^2 cancellation, so rows like 1234 + tiny noise and fp16 values above 7600 keep
    accurate statistics, and rows near 1e30 keep finite ones. A constant row returns ``bias``
    exactly. An empty row (length 0) has mean 0 and rstd NaN, as torch. NaN or inf in a row make
    its output NaN.
    """
    return _forward("layer_norm", x, weight, bias, _check_eps("layer_norm", eps), axis, return_stats, algorithm,
                    out, stream)


def rms_norm(x, weight=None, eps=1e-6, *, axis=-1, return_stats=False, algorithm="auto", out=None, stream=None):
    """x / sqrt(mean(x^2) + eps) * weight along ``axis``.

    Parameters as :func:`layer_norm` (no bias); with return_stats, returns (y, rstd). Accuracy:
    the mean square in float32 (float64 for float64) on values scaled by a power of two, so rows
    near 1e30 stay finite; eps in float32 (float64 for float64).
    """
    return _forward("rms_norm", x, weight, None, _check_eps("rms_norm", eps), axis, return_stats, algorithm, out,
                    stream)


def add_layer_norm(x, residual, weight=None, bias=None, eps=1e-5, *, axis=-1, return_stats=False,
                   algorithm="auto", out=None, stream=None):
    """The pre-norm block: s = x + residual, then layer_norm(s); returns (layer_norm(s), s).

    s is rounded to x's dtype (as the unfused ``x + residual``) and normalized from that rounded
    value, so the results equal ``layer_norm(x + residual)`` of the unfused sequence computed with
    :func:`layer_norm`. Rows up to 16384 elements (float64: 8192) with algorithm "auto" or
    "row_on_chip" run in one pass (x and residual read once, s and the output written once);
    longer rows and the other variants write s first, then normalize it (one extra read of s).

    Parameters, accuracy and special values as :func:`layer_norm`; residual has x's shape, dtype
    and device, any strides; ``out`` receives the normalized output: it may be x or residual
    itself (in place) but must not otherwise overlap them; s is a new array. With return_stats:
    (y, s, mean, rstd).
    """
    return _forward("layer_norm", x, weight, bias, _check_eps("add_layer_norm", eps), axis, return_stats, algorithm,
                    out, stream, residual=residual, name="add_layer_norm")


def add_rms_norm(x, residual, weight=None, eps=1e-6, *, axis=-1, return_stats=False, algorithm="auto", out=None,
                 stream=None):
    """s = x + residual, then rms_norm(s); returns (rms_norm(s), s) (with return_stats: (y, s, rstd)).
    Fusion, rounding and parameters as :func:`add_layer_norm`; accuracy as :func:`rms_norm`."""
    return _forward("rms_norm", x, weight, None, _check_eps("add_rms_norm", eps), axis, return_stats, algorithm, out,
                    stream, residual=residual, name="add_rms_norm")


# ---------------------------------------------------------------------------------------------
# backward passes


def _import_like(op, a, xin, arg):
    """Imports `a` on xin's launch stream and checks it is on xin's device."""
    v = _interop.prepare_input(a, xin[2], op, arg)
    if v[1] != xin[1]:
        raise ValueError(f"{op}: arguments 'dy' and '{arg}' must be on the same device, got dy on "
                         f"{_interop.device_string(xin[1])} and {arg} on {_interop.device_string(v[1])}")
    return v


def _backward(op, dy, saved, weight, mean, rstd, axis, want_dweight, want_dbias, algorithm, out, stream):
    name = op + "_backward"
    _check_algorithm(name, algorithm)
    din = _interop.prepare_input(dy, stream, name, "dy")
    dtype = din[5]
    if dtype not in FLOATS:
        raise TypeError(f"{name}: argument 'dy': expected {_FLOAT_NAMES}, got {dtype}")
    shape = tuple(din[4])
    ax = _normalize_axis(name, axis, len(shape))
    saved_arg = "y" if op in ("softmax", "log_softmax") else "x"
    s = _import_like(name, saved, din, saved_arg)
    w = None if weight is None else _import_like(name, weight, din, "weight")
    mu = None if mean is None else _import_like(name, mean, din, "mean")
    rs = None if rstd is None else _import_like(name, rstd, din, "rstd")
    if out is None:
        obj, out_arg = _interop.new_output(din, shape, dtype, name)
    else:
        obj, out_arg = out, _interop.import_output(out, dtype, din, name)
    n = shape[ax]
    dw = _interop.new_output(din, (n,), dtype, name) if want_dweight else None
    db = _interop.new_output(din, (n,), dtype, name) if want_dbias else None
    _C.norm_backward(op, din[3], s[3], out_arg, None if w is None else w[3], None if mu is None else mu[3],
                     None if rs is None else rs[3], None if dw is None else dw[1], None if db is None else db[1],
                     ax, algorithm, din[2])
    dx = _interop.result(din, obj) if out is None else out
    return dx, (None if dw is None else _interop.result(din, dw[0])), (None if db is None else _interop.result(din, db[0]))


_BACKWARD_DOC = """algorithm : str
        "auto" or a variant name from ``gpuprims.variants("{op}_backward")``: "row_on_chip" (rows up to
        8192 elements held in registers: one read of each input, one write; longer rows run
        "two_pass"), "two_pass" (a block per row, two reads) or "columns" (rows that lie side by
        side -- the row axis strided, the next axis contiguous, as the channels of an NCHW array --
        32 adjacent rows a block; "auto" takes it for such rows, up to 256 elements for layer_norm
        and rms_norm (float64: 64); elsewhere it runs "row_on_chip"). All are run-to-run
        deterministic on a given device: parameter gradients are per-group partial sums added in a
        fixed order by a second kernel, no atomics (the grouping follows the device's SM count and,
        for "columns", the layout's alignment).
    out : array, optional
        dx, written in place and returned: dy's framework, device, dtype and shape, writable, any
        strides with distinct elements, sharing no memory with dy or y / x (ValueError otherwise).
    stream : int, stream object or None
        As for the forward op. Never synchronizes the host; the parameter gradients take
        stream-ordered scratch from gpuprims' pool.

"""


def softmax_backward(y, dy, axis=-1, *, algorithm="auto", out=None, stream=None):
    """dx = y * (dy - sum(dy * y)) along ``axis``: the gradient of :func:`softmax` from its output.

    Parameters
    ----------
    y : array
        The forward output, float16, bfloat16, float32 or float64, any strides.
    dy : array
        The output gradient: y's shape and dtype, any strides.
    axis : int
        The row axis.
    {common}
    Returns
    -------
    array
        dx: dy's framework, dtype and shape.

    Notes
    -----
    The row sum is taken in float32 (float64 for float64) and dx is rounded once to the dtype.
    NaN rows of y (softmax of a NaN, +inf or all -inf row) give NaN rows of dx, as torch.
    """
    return _backward("softmax", dy, y, None, None, None, axis, False, False, algorithm, out, stream)[0]


def log_softmax_backward(y, dy, axis=-1, *, algorithm="auto", out=None, stream=None):
    """dx = dy - exp(y) * sum(dy) along ``axis``: the gradient of :func:`log_softmax` from its output
    y. Parameters, accuracy and special values as :func:`softmax_backward`."""
    return _backward("log_softmax", dy, y, None, None, None, axis, False, False, algorithm, out, stream)[0]


def layer_norm_backward(dy, x, weight, mean, rstd, *, axis=-1, algorithm="auto", out=None, stream=None):
    """Gradients of :func:`layer_norm`: (dx, dweight, dbias).

    With xhat = (x - mean) * rstd and g = dy * weight, along ``axis``:
    dx = rstd * (g - mean(g) - xhat * mean(g * xhat)); dweight = sum over rows of dy * xhat;
    dbias = sum over rows of dy.

    Parameters
    ----------
    dy, x : array
        The output gradient and the forward input: one shape and dtype (float16, bfloat16, float32
        or float64), any strides.
    weight : array or None
        The forward weight (1-D of the row length, x's dtype, any stride); None: 1.
    mean, rstd : array
        The statistics ``layer_norm(..., return_stats=True)`` returned: float32 (float64 for
        float64), one value per row, C-contiguous.
    {common}
    Returns
    -------
    (dx, dweight, dbias)
        dx like dy; dweight and dbias 1-D of the row length in x's dtype (dweight computed even
        when weight is None: the gradient of a weight of ones). Zero rows give zero gradients.

    Notes
    -----
    Accuracy: row sums and the column sums of dweight / dbias in float32 (float64 for float64),
    the column sums over per-group partials (no long serial chains); results rounded once to the
    dtype.
    """
    return _backward("layer_norm", dy, x, weight, mean, rstd, axis, True, True, algorithm, out, stream)


def rms_norm_backward(dy, x, weight, rstd, *, axis=-1, algorithm="auto", out=None, stream=None):
    """Gradients of :func:`rms_norm`: (dx, dweight), with xhat = x * rstd, g = dy * weight:
    dx = rstd * (g - xhat * mean(g * xhat)), dweight = sum over rows of dy * xhat. Parameters,
    accuracy and determinism as :func:`layer_norm_backward` (no mean, no dbias)."""
    dx, dw, _ = _backward("rms_norm", dy, x, weight, None, rstd, axis, True, False, algorithm, out, stream)
    return dx, dw


for _f in (softmax_backward, layer_norm_backward):
    _f.__doc__ = _f.__doc__.replace("{common}\n", _BACKWARD_DOC.format(op=_f.__name__[:-len("_backward")]))
del _f

for _f in (softmax, layer_norm):
    _f.__doc__ = _f.__doc__.replace("{common}\n", _COMMON_DOC.format(op=_f.__name__))
del _f
