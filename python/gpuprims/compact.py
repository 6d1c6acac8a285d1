"""Stream compaction (compact, nonzero) and segmented reductions, built on the scan family."""
from __future__ import annotations

from . import _C, _interop
from ._dtypes import reduce_result_dtype
from ._variants import check_auto_only


def _same_shape(x, mask, op):
    # An argument that is no array is a TypeError naming it, not a shape mismatch against ().
    _interop.framework_of(x, op, "x")
    _interop.framework_of(mask, op, "mask")
    xs, ms = tuple(getattr(x, "shape", ())), tuple(getattr(mask, "shape", ()))
    if xs != ms:
        raise ValueError(f"{op}: arguments 'x' and 'mask' must have the same shape, got {xs} and {ms}")


def _run(x, mask, out, stream, op):
    # The 1-D forms stay referenced until the launch: where a reshape has to copy, an import on the
    # producer's current stream keeps only the copy's address (its allocator then reuses it in
    # stream order); one on another stream holds the copy until the launch has run.
    flat_mask, min_ = _interop.prepare_flat_input(mask, stream, stream, op, "mask")
    if x is not None and min_[5] != "bool":  # nonzero() takes any dtype
        raise TypeError(f"{op}: argument 'mask': expected dtype bool, got {min_[5]}")
    if x is None:
        flat_x, xin, dtype = None, min_, "int64"
    else:
        flat_x, xin = _interop.prepare_flat_input(x, stream, min_[2], op, "x")
        if xin[1] != min_[1]:  # here, before count_true launches (compact.cu checks again, after it)
            raise ValueError(f"{op}: arguments 'x' and 'mask' must be on the same device, got x on "
                             f"{_interop.device_string(xin[1])} and mask on {_interop.device_string(min_[1])}")
        dtype = xin[5]
    count_obj, count_arg = _interop.new_output(min_, (), "int64", op)
    if out is None:
        n = _C.count_true(min_[3], min_[2])  # the one device-to-host read: sizes the result exactly
        obj, out_arg = _interop.new_output(xin, (n,), dtype, op)
    else:
        out_arg = _interop.import_output(out, dtype, xin, op)
    _C.compact(None if x is None else xin[3], min_[3], out_arg, count_arg, min_[2])
    return _interop.result(xin, obj) if out is None else (out, _interop.result(min_, count_obj))


def compact(x, mask, *, algorithm="auto", out=None, stream=None):
    """The elements of ``x`` where ``mask`` is true, in order (numpy's ``x[mask]``).

    ``x`` and ``mask`` (bool) have the same shape; n-d arrays are taken in C order (n-d cuda.core
    views when they form one strided run in C order, see :func:`gpuprims.scan`). Values are copied
    bit for bit, any dtype.

    Without ``out=`` the result has exactly the selected length: gpuprims first counts the mask
    (one small device-to-host read that synchronizes the launch stream), then compacts.
    With ``out=`` (1-D, x's dtype, sharing no memory with x or mask) nothing synchronizes: returns ``(out, count)`` where ``count`` is a
    0-d int64 device array holding the number selected. ``out`` of the input's length always
    suffices; elements beyond a shorter ``out`` are not written (``count`` still tells the full
    number), so the call can run inside a CUDA graph. ``algorithm`` takes "auto" only (one
    implementation).
    """
    check_auto_only("compact", algorithm)
    _same_shape(x, mask, "compact")
    return _run(x, mask, out, stream, "compact")


def nonzero(mask, *, algorithm="auto", out=None, stream=None):
    """int64 indices of the nonzero elements of ``mask`` in C order (numpy's ``flatnonzero``).

    ``mask`` has any dtype: bool's true, integers other than 0, floats other than +-0.0 (NaN counts as
    nonzero, as in numpy and torch).
    Sizing and ``out=`` as :func:`compact`: without ``out=`` one device-to-host read of the count;
    with ``out=`` returns ``(out, count)`` and never synchronizes. ``algorithm``: "auto" only.
    """
    check_auto_only("nonzero", algorithm)
    return _run(None, mask, out, stream, "nonzero")


def segmented_reduce(x, offsets, op="sum", *, algorithm="auto", out=None, stream=None):
    """``out[s] = op(x[offsets[s]:offsets[s+1]])`` for each of ``len(offsets) - 1`` segments.

    ``x`` is 1-D (bool, any integer, float16, bfloat16, float32, float64, any stride); ``offsets``
    are int32 or int64 CSR offsets, nondecreasing, within [0, len(x)]. The result dtype follows
    :func:`gpuprims.reduce` (integer sums int64/uint64); ``out=`` must share no memory with x or
    offsets. An empty segment gives the identity (0, 1, the dtype's max for min, its lowest for
    max; +-inf for floats).
    Deterministic (bitwise, run to run), whichever path runs. ``algorithm``: "auto", "ranges" or
    "blocks" (``gpuprims.variants("segmented_reduce")``). "ranges" splits the work by items and
    segment ends together, so very irregular lengths (one huge segment among tiny ones, runs of
    empty segments) stay near the memory system's rate; "blocks" gives each segment a block and
    splits segments of more than 16 of its 16 KiB rounds over the GPU, which reads long segments
    faster. "auto" takes "blocks" when x is unit-stride and the segments average 12 KiB or more,
    else "ranges"; "blocks" on other inputs (strided x, min / max of bool and 8- or 16-bit
    integers) runs "ranges"
    (docs/scan.md "Segmented reduce"). Float results are reproducible for the same x at the same
    address; the same values at another 16-byte alignment may round differently. Offsets are
    validated on the CPU; on the GPU they are not checked (that would need a synchronization):
    values outside [0, len(x)] are clamped into it, and decreasing offsets give unspecified values,
    never an out-of-bounds access.
    """
    if algorithm.__class__ is not str:  # the name itself is checked by the C++ layer, as for scan
        raise TypeError(f"segmented_reduce: argument 'algorithm': expected a str, got {algorithm!r}")
    if op not in ("sum", "prod", "min", "max"):
        raise ValueError(f"segmented_reduce: argument 'op': expected one of 'sum', 'prod', 'min', 'max', got {op!r}")
    xin = _interop.prepare_input(x, stream, "segmented_reduce")
    oin = _interop.prepare_input(offsets, xin[2], "segmented_reduce", "offsets")
    if len(oin[4]) != 1 or oin[4][0] < 1:
        raise ValueError(f"segmented_reduce: argument 'offsets': expected a 1-D array of segments + 1 offsets, "
                         f"got shape {tuple(oin[4])}")
    dtype = reduce_result_dtype(op, xin[5], None, "segmented_reduce")
    shape = (oin[4][0] - 1,)
    if out is None:
        obj, out_arg = _interop.new_output(xin, shape, dtype, "segmented_reduce")
        _C.segmented_reduce(xin[3], oin[3], out_arg, op, algorithm, xin[2])
        return _interop.result(xin, obj)
    _C.segmented_reduce(xin[3], oin[3], _interop.import_output(out, dtype, xin, "segmented_reduce"), op, algorithm,
                        xin[2])
    return out
