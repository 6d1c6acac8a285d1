"""The transpose family: ``numpy.transpose(x, axes)`` written out as a new array (or into out=)."""
from __future__ import annotations

import operator

from . import _C, _interop


def _normalize_axes(axes, ndim: int) -> list:
    """The permutation as non-negative ints (numpy's rule: every axis once, each in [-ndim, ndim));
    None reverses the axes."""
    if axes is None:
        return list(range(ndim - 1, -1, -1))
    if isinstance(axes, (str, bytes)) or not hasattr(axes, "__iter__"):
        raise TypeError(f"transpose: argument 'axes': expected None or a sequence of ints, got {axes!r}")
    axes = tuple(axes)
    if len(axes) != ndim:
        raise ValueError(f"transpose: argument 'axes': expected a permutation of {ndim} axes, got {axes!r}")
    perm = []
    for a in axes:
        try:
            a = operator.index(a)
        except TypeError:
            raise TypeError(f"transpose: argument 'axes': expected None or a sequence of ints, got {axes!r}") from None
        if not -ndim <= a < ndim:
            raise ValueError(f"transpose: argument 'axes': expected axes in [{-ndim}, {ndim}) for an array of "
                             f"{ndim} dimensions, got {axes!r}")
        perm.append(a + ndim if a < 0 else a)
    if len(set(perm)) != ndim:
        raise ValueError(f"transpose: argument 'axes': expected each axis once, got {axes!r}")
    return perm


def transpose(x, axes=None, *, out=None, algorithm="auto", stream=None):
    """``numpy.transpose(x, axes)`` copied into a new C-contiguous array (or into ``out``).

    Parameters
    ----------
    x : array
        numpy, torch, cupy, jax, cuda.core or any DLPack array of any dtype (bool, int8..int64,
        uint8..uint64, float16, bfloat16, float32, float64) and any strides (negative and zero
        included; read in place, never copied first).
    axes : sequence of ints or None
        A permutation of the axes (a tuple, list, range or 1-D integer array; negative entries
        count from the end): result axis k is x's axis ``axes[k]``. None reverses them (``x.T``).
    out : array, optional
        Written in place and returned: x's framework, device and dtype, the permuted shape,
        writable, distinct elements, any strides, sharing no memory with x (ValueError otherwise).
    algorithm : str
        "auto" or a variant name from ``gpuprims.variants("transpose")``; every variant takes every
        dtype and layout. "auto" runs register_blocks, which moves words on each side whose layout
        allows them (contiguous along its fast axis, word-aligned rows) and elements on a side
        that does not. Copies that need no transposition once contiguous dimensions are merged
        (axes that keep the fastest-varying one in place, such as (0, 2, 1, 3) of a (batch, heads,
        seq, dim) array) copy whole rows in every variant but naive.
    stream : int, stream object or None
        Launch stream; None means x's framework's current stream (torch, CuPy), else the default
        stream. The call never synchronizes the host.

    Returns
    -------
    array
        A new C-contiguous array of x's framework (out itself when given). Values are copied bit
        for bit (NaN payloads and signed zeros kept). CPU (numpy) inputs run the CPU reference.
    """
    if algorithm.__class__ is not str:
        raise TypeError(f"transpose: argument 'algorithm': expected a str, got {algorithm!r}")
    xin = _interop.prepare_input(x, stream, "transpose", "x")
    shape = tuple(xin[4])
    perm = _normalize_axes(axes, len(shape))
    out_shape = tuple(shape[a] for a in perm)
    if out is None:
        obj, out_arg = _interop.new_output(xin, out_shape, xin[5], "transpose")
    else:
        obj, out_arg = out, _interop.import_output(out, xin[5], xin, "transpose")
    _C.transpose(xin[3], perm, out_arg, algorithm, xin[2])
    return _interop.result(xin, obj) if out is None else out
