"""dtype names and numpy's promotion rules, in one place.

gpuprims names dtypes by numpy's names ("float32", "bfloat16", ...). Any framework's dtype object
(numpy, torch, JAX/ml_dtypes, CuPy) or a Python type is accepted wherever a dtype is.
"""
from __future__ import annotations

DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64",
)
FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
_PYTHON_TYPES = {bool: "bool", int: "int64", float: "float64"}


def _numpy_name(dtype):
    """numpy's name for what np.dtype() takes ("f4", "int", np.float32, ...), else None."""
    try:
        import numpy as np

        return np.dtype(dtype).name
    except (TypeError, ValueError):  # "not understood", malformed format strings
        return None


def dtype_name(dtype, op: str, arg: str = "dtype") -> str:
    """Normalizes a dtype given by the caller, or raises TypeError naming op and argument."""
    if isinstance(dtype, str):
        # gpuprims' names first ("bfloat16" is no numpy name), then numpy's spellings ("f4", "int").
        name = dtype if dtype in DTYPES else _numpy_name(dtype)
    elif dtype in _PYTHON_TYPES:
        name = _PYTHON_TYPES[dtype]
    else:
        # numpy/cupy/jax dtypes and scalar types have a numpy-style .name (via np.dtype for types);
        # torch dtypes print as "torch.float32".
        name = getattr(dtype, "name", None) if not isinstance(dtype, type) else None
        if name is None:
            text = str(dtype)
            name = text[len("torch."):] if text.startswith("torch.") else _numpy_name(dtype)
    if name not in DTYPES:
        raise TypeError(f"{op}: argument '{arg}': expected one of {', '.join(DTYPES)}, got {dtype!r}")
    return name


def reduce_result_dtype(op: str, x_dtype: str, dtype, family: str = "reduce") -> str:
    """numpy's rule: sums and products of bool/integers are int64 (uint64 for unsigned); floats and
    min/max keep the input's dtype; `dtype=` overrides. The default rule lives in C++
    (gpuprims::reduce_default_result_dtype)."""
    if dtype is not None:
        return dtype_name(dtype, family)
    # One rule for both layers: the C++ fast path of small torch calls names its results with it too.
    # (`op` is validated by every caller before this.)
    from . import _C

    return _C.reduce_result_dtype(op, x_dtype)
