"""The histogram family: numpy.histogram with equal-width bins, and numpy.bincount."""
from __future__ import annotations

import functools
import math
import operator

from . import _C, _interop
from ._dtypes import FLOATS

_MAX_BINS = 2**31 - 1
_FLOAT64_MAX = 1.7976931348623157e308
_HISTOGRAM_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                     "float16", "bfloat16", "float32", "float64")
_BINCOUNT_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")
_WEIGHT_DTYPES = _HISTOGRAM_DTYPES


@functools.cache
def _algorithm_names():
    return ("auto",) + tuple(row[0] for row in _C.histogram_variants())


def _check_algorithm(op, algorithm):
    # The name too (C++ checks it again): without out=, the data's range is read and the stream
    # synchronized before the counting call, and a bad name must raise before that work.
    if algorithm.__class__ is not str:
        raise TypeError(f"{op}: argument 'algorithm': expected a str, got {algorithm!r}")
    if algorithm not in _algorithm_names():
        names = ", ".join(repr(name) for name in _algorithm_names())
        raise ValueError(f"{op}: argument 'algorithm': expected one of {names}, got {algorithm!r}")


def _check_dtype(op, arg, dtype, allowed):
    if dtype not in allowed:
        raise TypeError(f"{op}: argument '{arg}': expected one of {', '.join(allowed)}, got {dtype}")


def _count(op, arg, value, lowest):
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: argument '{arg}': expected an int, got {value!r}") from None
    if not lowest <= v <= _MAX_BINS:
        raise ValueError(f"{op}: argument '{arg}': expected an int in [{lowest}, {_MAX_BINS}], got {v}")
    return v


def _range_bound(value):
    """A range bound as numpy sees a Python number: ints stay exact, everything else is a float."""
    try:
        return operator.index(value)
    except TypeError:
        pass
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"histogram: argument 'range': expected a pair of real numbers, got a {type(value).__name__}") from None


def _weights(op, weights, xin):
    if weights is None:
        return None, None
    win = _interop.prepare_input(weights, xin[2], op, "weights")
    _check_dtype(op, "weights", win[5], _WEIGHT_DTYPES)
    if tuple(win[4]) != tuple(xin[4]):
        raise ValueError(f"{op}: argument 'weights': expected the shape of x {tuple(xin[4])}, got {tuple(win[4])}")
    return win, win[5]


def histogram(x, bins=10, range=None, *, weights=None, algorithm="auto", out=None, stream=None):  # noqa: A002
    """Counts of ``x`` in ``bins`` equal-width bins over ``range``: ``numpy.histogram(x, bins, range,
    weights=weights)[0]``, bit for bit.

    Parameters
    ----------
    x : array
        numpy, torch, cupy, jax, cuda.core or any DLPack array of bool, int8..int64, uint8..uint64,
        float16, bfloat16, float32 or float64; any shape (flattened) and strides (no copy).
    bins : int
        Number of equal-width bins, 1 to 2**31 - 1 (bin edges as arrays are not supported).
    range : (float, float), optional
        Lower and upper edge, taken as Python numbers (numpy's rules for Python scalars: a float32
        input compares with the bounds rounded to float32). None: the data's min and max (numpy's
        rule), which reads the data twice and synchronizes the stream once to bring them to the host;
        an empty input then uses (0, 1).
    weights : array, optional
        Any of x's dtypes, the shape of x: the result holds the sum of the weights in each bin, in
        the weights' dtype (numpy's rule: summed in float64, then converted once, so integer sums
        are exact up to 2**53 and a bool result says whether a bin's weights sum to nonzero; an
        integer sum beyond its dtype's range saturates, where numpy's conversion is platform-defined).
    algorithm : str
        "auto" or a variant name from ``gpuprims.variants("histogram")``.
    out : array, optional
        1-D of ``bins`` elements (any nonzero stride), int64 (weights' dtype with weights), on x's
        device, sharing no memory with x or weights.
    stream : int, stream object or None
        Launch stream; None means the input framework's current stream, else the default stream.

    Returns
    -------
    array
        The counts (int64), or the sums of weights (the weights' dtype), of the input's framework.

    Notes
    -----
    Semantics are numpy's: the bins are ``numpy.linspace(lo, hi, bins + 1)`` in numpy's edge dtype
    (the input's float dtype, float64 for integers); a sample lands in bin i when
    ``edges[i] <= x < edges[i + 1]``, the last bin is closed, samples outside the range and NaN are
    ignored, and a sample at or next to an edge lands exactly where numpy puts it (numpy's float
    rounding correction is reproduced step by step). numpy's errors too: a non-finite or inverted
    range, a non-finite data range, too many bins for the range's float resolution.

    Exactness: counts are exact int64 (no overflow beyond 2**31 samples in a bin). int64 and uint64
    samples beyond 2**53 are converted to float64 before binning, as numpy does for the bin index
    (numpy compares them with the range exactly; gpuprims after the conversion). Weighted sums accumulate
    in float64 with atomics (other weight dtypes are converted once at the end): not bitwise reproducible
    from run to run. Counts are.

    Synchronization: none, except ``range=None`` (see above). CPU arrays run the CPU reference.
    """
    _check_algorithm("histogram", algorithm)
    nbins = _count("histogram", "bins", bins, 1)
    xin = _interop.prepare_input(x, stream, "histogram")
    dtype = xin[5]
    _check_dtype("histogram", "x", dtype, _HISTOGRAM_DTYPES)
    win, wdtype = _weights("histogram", weights, xin)
    out_dtype = wdtype or "int64"
    out_arg = None
    if out is not None:  # checked before range=None reads the data's range
        out_arg = _interop.import_output(out, out_dtype, xin, "histogram")
        if tuple(out.shape) != (nbins,):
            raise ValueError(f"histogram: argument 'out': expected shape ({nbins},), got {tuple(out.shape)}")
    narrow = False
    if range is not None:
        try:
            first, last = range
        except (TypeError, ValueError):
            raise ValueError(f"histogram: argument 'range': expected a pair (min, max), got {range!r}") from None
        first, last = _range_bound(first), _range_bound(last)
        if not all(-_FLOAT64_MAX <= v <= _FLOAT64_MAX for v in (first, last)):  # inf, NaN, huge ints
            raise ValueError(f"histogram: argument 'range': expected finite bounds, got [{first}, {last}]")
        if first > last:
            raise ValueError(f"histogram: argument 'range': expected min <= max, got ({first}, {last})")
    elif math.prod(xin[4]) == 0:
        first, last = 0, 1
    else:
        first, last = _C.data_range(xin[3], "histogram", xin[2])
        if not (math.isfinite(first) and math.isfinite(last)):
            raise ValueError(f"histogram: argument 'x': autodetected range of [{first}, {last}] is not finite")
        narrow = dtype in FLOATS  # numpy then does all bin arithmetic in the input's dtype
    if not narrow and first == last:
        first, last = first - 0.5, last + 0.5
    # numpy's norm_denom: an exact integer difference when both bounds are integers.
    both_int = isinstance(first, int) and isinstance(last, int)
    denom = float(last - first) if both_int else float(last) - float(first)
    warg = None if win is None else win[3]
    if out is None:
        obj, out_arg = _interop.new_output(xin, (nbins,), out_dtype, "histogram")
        _C.histogram(xin[3], warg, out_arg, nbins, float(first), float(last), denom, narrow, algorithm, xin[2])
        return _interop.result(xin, obj)
    _C.histogram(xin[3], warg, out_arg, nbins, float(first), float(last), denom, narrow, algorithm, xin[2])
    return out


def _bincount_byte_values(xin, minlength, algorithm):
    """bincount without out= of a non-empty uint8/bool array on a GPU, in one pass over x: all 256
    values are counted into a buffer of max(minlength, 256) counts and the largest value present is
    read back (one synchronization, the one data_range's min/max would cost, without their two extra
    passes over x); the result is the first max(minlength, largest + 1) counts, trimmed by a device
    copy when shorter than the buffer."""
    full, full_arg = _interop.new_output(xin, (max(minlength, 256),), "int64", "bincount")
    largest = _C.bincount_byte_values(xin[3], full_arg, algorithm, xin[2])
    length = max(minlength, largest + 1)
    if length == max(minlength, 256):
        return _interop.result(xin, full)
    obj, out_arg = _interop.new_output(xin, (length,), "int64", "bincount")
    _C.copy_counts(full_arg, out_arg, xin[2])
    return _interop.result(xin, obj)


def bincount(x, minlength=0, *, weights=None, out=None, out_of_range="raise", algorithm="auto", stream=None):
    """Occurrences of each value 0, 1, ... in the 1-D non-negative integer array ``x``:
    ``numpy.bincount(x, weights, minlength)``.

    Parameters
    ----------
    x : array
        1-D, bool, int8..int64 or uint8..uint32, any stride.
    minlength : int
        The least output length.
    weights : array, optional
        Any of histogram()'s dtypes, the shape of x: the result holds float64 sums of the weights
        (numpy's dtype, whatever the weights').
    out : array, optional
        1-D int64 (float64 with weights), any nonzero stride, on x's device, sharing no memory with
        x or weights, at least ``minlength`` long. Its length is the number of counted values; values outside ``[0, len(out))`` are handled by
        ``out_of_range``.
    out_of_range : {"raise", "ignore"}
        With ``out=``: "raise" (default) counts the values outside the output on the device and
        raises ValueError if there were any, which reads that count back and so synchronizes the
        stream once; "ignore" drops them and never synchronizes. Nothing is dropped silently unless
        asked for. Without ``out=`` nothing can be out of range (negative values raise).
    algorithm : str
        "auto" or a variant name from ``gpuprims.variants("bincount")`` (the histogram variants).
    stream : int, stream object or None
        Launch stream; None means the input framework's current stream, else the default stream.

    Returns
    -------
    array
        int64 counts (float64 sums with weights) of length ``max(x.max() + 1, minlength)``, or ``out``.

    Notes
    -----
    Without ``out=`` the output length depends on the data: its min (negative values raise
    ValueError, as in numpy) and max are computed on the device and read back, which synchronizes
    the stream once. uint8 and bool inputs on a GPU skip the min/max passes: all 256 values are
    counted in one pass and the largest value present is read back from the counts (one
    synchronization too). With ``out=`` and ``out_of_range="ignore"`` the call never synchronizes.
    Counts are exact; weighted sums accumulate in float64 with atomics (not bitwise reproducible).
    """
    _check_algorithm("bincount", algorithm)
    minlength = _count("bincount", "minlength", minlength, 0)
    if out_of_range not in ("raise", "ignore"):
        raise ValueError(f"bincount: argument 'out_of_range': expected 'raise' or 'ignore', got {out_of_range!r}")
    xin = _interop.prepare_input(x, stream, "bincount")
    _check_dtype("bincount", "x", xin[5], _BINCOUNT_DTYPES)
    if len(xin[4]) != 1:
        raise ValueError(f"bincount: argument 'x': expected a 1-D array, got shape {tuple(xin[4])}")
    win, wdtype = _weights("bincount", weights, xin)
    out_dtype = "float64" if wdtype else "int64"
    warg = None if win is None else win[3]
    if out is None:
        if win is None and xin[5] in ("uint8", "bool") and xin[1][0] == _interop.CUDA and xin[4][0] > 0:
            return _bincount_byte_values(xin, minlength, algorithm)
        length = minlength
        if xin[4][0] > 0:
            lo, hi = _C.data_range(xin[3], "bincount", xin[2])
            if lo < 0:
                raise ValueError(f"bincount: argument 'x': expected non-negative values, got a minimum of {lo}")
            length = max(minlength, hi + 1)
            _count("bincount", "x", length, 0)  # the output length must fit the 32-bit bin index
        obj, out_arg = _interop.new_output(xin, (length,), out_dtype, "bincount")
        _C.bincount(xin[3], warg, out_arg, "ignore", algorithm, xin[2])  # every value fits by construction
        return _interop.result(xin, obj)
    out_arg = _interop.import_output(out, out_dtype, xin, "bincount")
    out_shape = tuple(out_arg[2] if isinstance(out_arg, tuple) else out_arg.shape)
    if len(out_shape) == 1 and out_shape[0] < minlength:
        raise ValueError(f"bincount: argument 'out': expected at least minlength={minlength} elements, got {out_shape[0]}")
    _C.bincount(xin[3], warg, out_arg, out_of_range, algorithm, xin[2])
    return out
