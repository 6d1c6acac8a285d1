"""The scan family: inclusive and exclusive prefix scans along an axis (sum, prod, min, max)."""
from __future__ import annotations

import operator

from . import _C, _interop
from ._dtypes import reduce_result_dtype

_OPS = ("sum", "prod", "min", "max")


def scan(x, op="sum", axis=None, *, exclusive=False, dtype=None, deterministic=False, algorithm="auto", out=None,
         stream=None):
    """Prefix scan of ``x`` with ``op`` along ``axis``.

    Parameters
    ----------
    x : array
        numpy, torch, cupy, jax, cuda.core or any DLPack array of bool, any integer, float16,
        bfloat16, float32 or float64; any strides (negative and zero included).
    op : {"sum", "prod", "min", "max"}
    axis : int or None
        The scanned axis; None scans the array flattened in C order (a view where the framework can
        make one, else the framework's copy) and returns a 1-D result, like numpy. A cuda.core view
        has no reshape() to copy with: n-d ones are taken when their dimensions form one strided
        run in C order (C-contiguous, 0-d, evenly strided), else a TypeError.
    exclusive : bool
        Element i combines elements 0 .. i-1 (the first is the identity: 0, 1, +inf, -inf or the
        integer limits) instead of 0 .. i.
    dtype : dtype, optional
        Result dtype. By default numpy's rule: sums and products of bool and signed integers are
        int64, of unsigned integers uint64; min/max and floats keep the input dtype (bool's min/max
        are bool: a running all / any). Any dtype: x is converted to it and scanned in it, as
        numpy's ``cumsum(x, dtype=)`` (integers wrap; floats to integers truncate toward zero,
        saturating at the integer's limits, NaN to 0, where numpy's result is platform-defined).
        Pairs read directly by the scan kernels: every dtype to itself, float16 and bfloat16 to
        float32 or float64, float32 to float64, bool and signed integers to int64, unsigned
        integers to uint64; any other pair (int32 to float32, float64 to float32, ...) converts x
        into the result first, then scans the result in place: one more pass over it, and ``out``
        may not then be ``x`` itself. A bool sum or product with ``dtype=bool`` is numpy's logical
        or / and.
    deterministic : bool
        Float sums and products bitwise identical from run to run: "auto" then avoids the
        single-pass look-backs (decoupled_lookback, lagged_lookback, held_lookback and the column
        tiles, columns: their combination order depends on timing) for reduce_then_scan or a row
        kernel, and naming one of them raises ValueError.
    algorithm : str
        "auto" or a name from ``gpuprims.variants("scan")``.
    out : array, optional
        Written and returned; the input's shape and the result dtype, same device, distinct
        elements (no zero strides). May be ``x`` itself (an in-place scan) or a view of x's
        memory that shares no element with it (the other half of each row); a view that may share
        elements raises ValueError (views of other strides interleaved with x's are refused too).
    stream : int, stream object or None
        Launch stream; None means the input framework's current stream. Never synchronizes.

    Notes
    -----
    Accuracy: integer results are exact and wrap like numpy's (int32 results at 32 bits, int8 at 8).
    float16 and bfloat16 accumulate in float32; float32 and float64 in themselves, combined as a
    tree of tiles, so the error grows with log n rather than n; the variants hillis_steele,
    blelloch and warp_shuffle round float16/bfloat16 results twice (after the tile scan and after
    the tile prefix is added), so a tile's partial sum or product beyond float16's range is inf
    there even where the prefix brings the result back in range (NaN after a zero prefix).
    Likewise on every GPU variant, a float product whose items after a zero multiply beyond the
    accumulator's range on their own (float32: 19 factors of 127) may be NaN (0 * inf) where a
    sequential product, and numpy's, stays 0. min/max propagate NaN from its position on.

    CPU arrays run the CPU reference (sequential accumulation, same dtypes and semantics).
    """
    if op not in _OPS:
        raise ValueError(f"scan: argument 'op': expected one of 'sum', 'prod', 'min', 'max', got {op!r}")
    if algorithm.__class__ is not str:
        raise TypeError(f"scan: argument 'algorithm': expected a str, got {algorithm!r}")
    for name, flag in (("exclusive", exclusive), ("deterministic", deterministic)):
        if flag.__class__ is not bool:
            raise TypeError(f"scan: argument '{name}': expected a bool, got {flag!r}")
    if x.__class__ is _interop.torch_tensor_type and dtype is None and stream is None:
        # Calls on CUDA torch tensors done in C++ with the same stream and allocation as below,
        # without the interpreter work (docs/scan.md, host cost). None: a call the general path
        # must check, flatten or convert.
        result = _C.scan_torch(x, op, axis, exclusive, deterministic, algorithm, out)
        if result is not None:
            return result
    if axis is None:  # `flat` (a reshape's copy, perhaps) stays referenced until the launch
        ax = 0
        flat, xin = _interop.prepare_flat_input(x, stream, stream, "scan", "x")
    else:
        try:
            ax = operator.index(axis)
        except TypeError:
            raise TypeError(f"scan: argument 'axis': expected None or an int, got {axis!r}") from None
        xin = _interop.prepare_input(x, stream, "scan")
    shape = tuple(xin[4])
    ndim = len(shape)
    if ndim == 0:
        raise ValueError("scan: argument 'x': expected at least one dimension for an int axis, got a 0-d array")
    if not -ndim <= ax < ndim:
        raise ValueError(f"scan: argument 'axis': expected an int in [{-ndim}, {ndim}) for an array of {ndim} "
                         f"dimensions, got {axis}")
    ax = ax + ndim if ax < 0 else ax
    result_dtype = reduce_result_dtype(op, xin[5], dtype, "scan")
    if out is None:
        obj, out_arg = _interop.new_output(xin, shape, result_dtype, "scan")
    else:
        out_arg = _interop.import_output(out, result_dtype, xin, "scan")
    _C.scan(xin[3], out_arg, op, ax, exclusive, deterministic, algorithm, xin[2])
    return _interop.result(xin, obj) if out is None else out


def cumsum(x, axis=None, *, dtype=None, exclusive=False, deterministic=False, algorithm="auto", out=None,
           stream=None):
    """``scan(x, "sum", axis, ...)``, numpy's ``cumsum``; see :func:`scan`."""
    return scan(x, "sum", axis, exclusive=exclusive, dtype=dtype, deterministic=deterministic, algorithm=algorithm,
                out=out, stream=stream)


def cumprod(x, axis=None, *, dtype=None, exclusive=False, deterministic=False, algorithm="auto", out=None,
            stream=None):
    """``scan(x, "prod", axis, ...)``, numpy's ``cumprod``; see :func:`scan`."""
    return scan(x, "prod", axis, exclusive=exclusive, dtype=dtype, deterministic=deterministic, algorithm=algorithm,
                out=out, stream=stream)
