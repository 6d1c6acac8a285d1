"""The top-k family: ``torch.topk`` on arrays of any framework, by radix selection."""
from __future__ import annotations

import operator
from typing import Any, NamedTuple

from . import _C, _interop
from .nn import _normalize_axis


class TopK(NamedTuple):
    """What ``topk`` returns (like torch's ``torch.return_types.topk``)."""
    values: Any
    indices: Any


def _flag(name, v) -> bool:
    t = type(v)
    if t is bool or (t.__module__ == "numpy" and t.__name__ in ("bool", "bool_")):  # numpy 2 and 1 names
        return bool(v)
    raise TypeError(f"topk: argument '{name}': expected a bool, got {v!r}")


def topk(x, k, axis=-1, *, largest=True, sorted=True, algorithm="auto", out=None, stream=None):  # noqa: A002
    """The ``k`` largest (or smallest) elements of each row along ``axis``, like ``torch.topk``.

    Parameters
    ----------
    x : array
        numpy, torch, cupy, jax, cuda.core or any DLPack array of a numeric dtype (int8..int64,
        uint8..uint64, float16, bfloat16, float32, float64; bool raises TypeError), at least 1-d,
        any strides (read in place, never copied).
    k : int
        How many per row, ``0 <= k <= x.shape[axis]`` (ValueError otherwise).
    axis : int
        The axis to select along (negative counts from the end); every other index is one row.
    largest : bool
        True: the k highest-ranked elements; False: the k lowest.
    sorted : bool
        True: each row's results in rank order (descending for largest, ascending otherwise),
        equal values by increasing index. False: in an unspecified order (saves the sort).
    algorithm : str
        "auto" or a variant name from ``gpuprims.variants("topk")``: ``sort`` (the baseline: each
        whole row through a bitonic sorting network), ``block_per_row`` (radix select, one block per
        row) or ``split_row`` (radix select, several blocks per row, one launch per radix digit).
        "auto" takes split_row for rows of 16384 elements and more when there are fewer rows than
        the GPU has SMs, else block_per_row. Rows of 2^32 elements and more run split_row
        under either radix name.
    out : (array, array), optional
        ``(values, indices)`` written in place and returned: values of x's dtype, indices int64,
        both of x's shape with ``axis`` k long, on x's device, writable, any strides with distinct
        elements, sharing no memory with x or each other.
    stream : int, stream object or None
        Launch stream; None means x's framework's current stream (torch, CuPy), else the default
        stream. The call never synchronizes the host. split_row and sorts of k > 2048 take
        stream-ordered scratch from gpuprims' pool.

    Returns
    -------
    TopK
        ``(values, indices)``, arrays of x's framework (out's when given); indices are int64
        positions along the axis.

    Notes
    -----
    Ranking is torch's: integers by value, floats by value with every NaN above +inf (so NaNs
    come first for largest=True and last, only when needed, for largest=False), and -0.0 ranked
    just below +0.0. Values are copied bit for bit. Which of several elements equal to the k-th
    is returned is unspecified for block_per_row and split_row (they claim ties in the order their
    warps reach them); ``sort`` and the CPU reference (numpy inputs) take the lowest indices.
    """
    if algorithm.__class__ is not str:
        raise TypeError(f"topk: argument 'algorithm': expected a str, got {algorithm!r}")
    largest, sorted_ = _flag("largest", largest), _flag("sorted", sorted)
    if isinstance(k, bool):
        raise TypeError(f"topk: argument 'k': expected an int, got {k!r}")
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"topk: argument 'k': expected an int, got {k!r}") from None
    xin = _interop.prepare_input(x, stream, "topk", "x")
    dtype = xin[5]
    if dtype == "bool":
        raise TypeError("topk: argument 'x': expected a numeric dtype (int8..int64, uint8..uint64, float16, "
                        "bfloat16, float32, float64), got bool")
    shape = tuple(xin[4])
    ax = _normalize_axis("topk", axis, len(shape))
    if not 0 <= k <= shape[ax]:
        raise ValueError(f"topk: argument 'k': expected 0 <= k <= {shape[ax]} (the length of axis {ax}), got {k}")
    out_shape = shape[:ax] + (k,) + shape[ax + 1:]
    if out is None:
        values, v_arg = _interop.new_output(xin, out_shape, dtype, "topk")
        indices, i_arg = _interop.new_output(xin, out_shape, "int64", "topk")
    else:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"topk: argument 'out': expected a tuple (values, indices) of two arrays, got {out!r}")
        values, indices = out
        v_arg = _interop.import_output(values, dtype, xin, "topk", "out[0]")
        i_arg = _interop.import_output(indices, "int64", xin, "topk", "out[1]")
    _C.topk(xin[3], k, ax, largest, sorted_, v_arg, i_arg, algorithm, xin[2])
    if out is None:
        return TopK(_interop.result(xin, values), _interop.result(xin, indices))
    return TopK(values, indices)
