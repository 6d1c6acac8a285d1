"""The reduce family: sum, prod, min and max over all elements or along some axes."""
from __future__ import annotations

import operator

from . import _C, _interop
from ._dtypes import FLOATS, reduce_result_dtype

_OPS = ("sum", "prod", "min", "max")


def _normalize_axis(axis, ndim: int):
    """None, or the reduced axes as a sorted tuple of non-negative ints (numpy's rules: one int or a
    tuple of ints, each in [-ndim, ndim) and named once; a list is taken like a tuple, as torch does)."""
    if axis is None:
        return None
    if axis.__class__ is tuple or axis.__class__ is list:
        axes = sorted(_one_axis(a, ndim, axis) for a in axis)
        for a, b in zip(axes, axes[1:]):
            if a == b:
                raise ValueError(f"reduce: argument 'axis': expected each axis once, got {axis!r}")
        return tuple(axes)
    return (_one_axis(axis, ndim, axis),)


def _one_axis(a, ndim: int, axis):
    try:
        a = operator.index(a)
    except TypeError:
        raise TypeError(f"reduce: argument 'axis': expected None, an int or a tuple of ints, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise ValueError(f"reduce: argument 'axis': expected an int in [{-ndim}, {ndim}) for an array of "
                         f"{ndim} dimensions, got {axis!r}")
    return a + ndim if a < 0 else a


def _check_result_dtype(op, x_dtype, result_dtype):
    """Refuses the dtype= pairs whose numpy result depends on converting each element first (numpy
    reduces x.astype(dtype)), which the kernels do not: they reduce x and convert the result."""
    if result_dtype == "bool" and x_dtype != "bool":
        raise TypeError(f"reduce: argument 'dtype': a bool result of {x_dtype} elements is not supported (numpy's "
                        f"is a logical or / and of x != 0); reduce x != 0 with op 'max' (any) or 'min' (all)")
    if op in ("sum", "prod") and x_dtype in FLOATS and result_dtype not in FLOATS:
        raise TypeError(f"reduce: argument 'dtype': a {op} of {x_dtype} elements as {result_dtype} is not supported "
                        f"(numpy converts each element to {result_dtype} first); convert x first")


def reduce(x, op="sum", axis=None, *, dtype=None, keepdims=False, algorithm="auto", out=None, stream=None):
    """Reduce ``x`` with ``op`` over all elements (``axis=None``) or along some axes.

    Parameters
    ----------
    x : array
        numpy, torch, cupy, jax, cuda.core or any DLPack array, any strides (negative and zero
        included), any of bool, int8..int64, uint8..uint64, float16, bfloat16, float32, float64.
    op : {"sum", "prod", "min", "max"}
    axis : int, tuple of ints or None
        The axis or axes to reduce (numpy's rule: each in [-ndim, ndim), named once; ``()`` reduces
        nothing and converts to the result dtype); None reduces everything to one value.
    dtype : dtype, optional
        Result dtype. By default numpy's rule: sums and products of bool and signed integers are
        int64, of unsigned integers uint64; floats and min/max keep the input dtype. Any dtype but
        two kinds of pair, refused with TypeError because numpy's result converts each element
        first: a bool result of a non-bool x, and an integer sum or product of a float x.
    keepdims : bool
        Keep the reduced axes (every axis, for axis=None) with size 1.
    algorithm : str
        "auto" or a variant name from ``gpuprims.variants("reduce")``. Every variant computes the
        same function; they differ in speed and in whether float results are bitwise reproducible.
    out : array, optional
        Written in place and returned; same device as x, the result dtype and shape, writable,
        distinct elements (no zero strides), sharing no memory with x (ValueError otherwise).
    stream : int, stream object or None
        Launch stream; None means the input framework's current stream (torch, CuPy), else the
        default stream. The call never synchronizes the host.

    Returns
    -------
    array
        Of the input's framework (a 0-d array for axis=None without keepdims). JAX and unknown
        DLPack producers on the GPU get arrays backed by a gpuprims ``DeviceArray``.

    Notes
    -----
    Accuracy: integer results are exact (64-bit accumulation, wrapping modulo 2^64 like numpy's
    int64; a narrower ``dtype=`` gives numpy's wrapped narrow result). float16, bfloat16 and
    float32 accumulate in float32 (float64 when the result dtype is float64), float64 in float64,
    combined as a tree, so the error grows with log n.

    Special values: min and max propagate NaN; sums follow IEEE (inf - inf = NaN). An empty sum is 0
    and an empty product 1; min and max of an empty array raise ValueError, as in numpy.

    Reproducibility: "auto" and every variant except ``atomic_naive`` and ``atomic_per_block`` give
    bitwise identical results from run to run on the same GPU; the atomic variants may differ in the
    last bits of float results.

    CPU arrays run the CPU reference (same semantics, pairwise summation, no speed promise).
    """
    return _reduce(x, op, axis, dtype, keepdims, algorithm, out, stream)


def _reduce(x, op, axis, dtype, keepdims, algorithm, out, stream):
    # The body of reduce(); sum/prod/min/max call it positionally, one Python frame less per call.
    if op not in _OPS:
        raise ValueError(f"reduce: argument 'op': expected one of 'sum', 'prod', 'min', 'max', got {op!r}")
    if algorithm.__class__ is not str:
        raise TypeError(f"reduce: argument 'algorithm': expected a str, got {algorithm!r}")
    if x.__class__ is _interop.torch_tensor_type and dtype is None and stream is None:
        # The common small call (gpuprims.sum(t), t.sum(-1)-like calls of CUDA tensors, out= or not)
        # done in C++ with the same stream and allocation as below, without the interpreter work
        # (docs/reduce.md, host cost). None: a call the general path must check or convert.
        result = _C.reduce_torch(x, op, axis, keepdims, algorithm, out)
        if result is not None:
            return result
    xin = _interop.prepare_input(x, stream, "reduce")
    shape = xin[4]
    ax = None if axis is None else _normalize_axis(axis, len(shape))
    result_dtype = reduce_result_dtype(op, xin[5], dtype)
    if dtype is not None:
        _check_result_dtype(op, xin[5], result_dtype)
    if ax is None:
        out_shape = (1,) * len(shape) if keepdims else ()
    elif keepdims:
        out_shape = tuple(1 if d in ax else n for d, n in enumerate(shape))
    else:
        out_shape = tuple(n for d, n in enumerate(shape) if d not in ax)
    if out is None:
        obj, out_arg = _interop.new_output(xin, out_shape, result_dtype, "reduce")
        _C.reduce(xin[3], out_arg, op, ax, algorithm, xin[2])
        return _interop.result(xin, obj)
    _C.reduce(xin[3], _interop.import_output(out, result_dtype, xin, "reduce"), op, ax, algorithm, xin[2])
    return out


def sum(x, axis=None, *, dtype=None, keepdims=False, algorithm="auto", out=None, stream=None):  # noqa: A001
    """``reduce(x, "sum", ...)``; see :func:`reduce`."""
    return _reduce(x, "sum", axis, dtype, keepdims, algorithm, out, stream)


def prod(x, axis=None, *, dtype=None, keepdims=False, algorithm="auto", out=None, stream=None):
    """``reduce(x, "prod", ...)``; see :func:`reduce`."""
    return _reduce(x, "prod", axis, dtype, keepdims, algorithm, out, stream)


def min(x, axis=None, *, dtype=None, keepdims=False, algorithm="auto", out=None, stream=None):  # noqa: A001
    """``reduce(x, "min", ...)``; see :func:`reduce`."""
    return _reduce(x, "min", axis, dtype, keepdims, algorithm, out, stream)


def max(x, axis=None, *, dtype=None, keepdims=False, algorithm="auto", out=None, stream=None):  # noqa: A001
    """``reduce(x, "max", ...)``; see :func:`reduce`."""
    return _reduce(x, "max", axis, dtype, keepdims, algorithm, out, stream)
