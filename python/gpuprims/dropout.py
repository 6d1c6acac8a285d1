"""bias_dropout_add: out = residual + dropout(x + bias), with a counter-based generator so the mask
is reproducible from (seed, offset)."""
from __future__ import annotations

import numbers
import operator

from . import _C, _interop
from ._dtypes import FLOATS
from ._variants import check_auto_only

_OP = "bias_dropout_add"
_U64 = 1 << 64


def _check_u64(arg, value):
    if isinstance(value, bool):
        raise TypeError(f"{_OP}: argument '{arg}': expected an int, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{_OP}: argument '{arg}': expected an int, got {value!r}") from None
    if not 0 <= v < _U64:
        raise ValueError(f"{_OP}: argument '{arg}': expected an int in [0, 2**64), got {v}")
    return v


def _import(a, xin, arg):
    v = _interop.prepare_input(a, xin[2], _OP, arg)
    if v[1] != xin[1]:
        raise ValueError(f"{_OP}: arguments 'x' and '{arg}' must be on the same device, got x on "
                         f"{_interop.device_string(xin[1])} and {arg} on {_interop.device_string(v[1])}")
    return v


def bias_dropout_add(x, bias, residual, p, *, seed, offset, training=True, algorithm="auto", out=None, stream=None):
    """residual + dropout(x + bias, p): the post-attention / post-MLP pattern in one pass.

    Parameters
    ----------
    x : array
        float16, bfloat16, float32 or float64, at least 1-D, any strides.
    bias : array or None
        1-D of x's last dimension, x's dtype and device, any stride; None: 0.
    residual : array
        x's shape, dtype and device, any strides.
    p : float
        Drop probability in [0, 1]. Kept elements are scaled by 1 / (1 - p); p = 1 drops all.
    seed, offset : int
        In [0, 2**64): the Philox key and the high half of its counter. The mask is a function of
        (element index, seed, offset) only (not of strides, dtype or launch shape): the same
        arguments give the same mask, on the CPU reference as on the GPU, so a backward pass can
        regenerate it. Advance `offset` by ceil(x.size / 4) (or more) for an independent mask.
    training : bool
        False: out = residual + x + bias (no dropout, no draws), as torch in eval mode.
    algorithm : str
        "auto" only (one implementation).
    out : array, optional
        Written and returned: x's framework, device, shape and dtype, any strides. It may be x or
        residual itself (each element is read before it is written); other memory shared with
        them, or a zero stride, raises ValueError.
    stream : int, stream object or None
        Launch stream (None: the input framework's current stream). Never synchronizes the host,
        allocates nothing besides the result.

    Notes
    -----
    The mask: element i (its position in C order) takes lane i % 4 of Philox4x32-10 (Salmon et
    al., 2011) at counter (lo32(i // 4), hi32(i // 4), lo32(offset), hi32(offset)) under key
    (lo32(seed), hi32(seed)); it is kept iff that 32-bit value is >= floor(p * 2**32), so
    P(keep) is 1 - p within 2**-32. ``_C.philox4x32_10`` exposes the generator on the host.
    Arithmetic: residual + (x + bias) * keep / (1 - p) in float32 (float64 for float64), rounded
    once (torch's unfused sequence rounds after each step); a dropped NaN or inf gives NaN, as torch.
    """
    check_auto_only(_OP, algorithm)
    xin = _interop.prepare_input(x, stream, _OP)
    dtype = xin[5]
    if dtype not in FLOATS:
        raise TypeError(f"{_OP}: argument 'x': expected float16, bfloat16, float32 or float64, got {dtype}")
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{_OP}: argument 'p': expected a float, got {p!r}")
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{_OP}: argument 'p': expected a probability in [0, 1], got {p!r}")
    seed = _check_u64("seed", seed)
    offset = _check_u64("offset", offset)
    if not isinstance(training, bool):
        raise TypeError(f"{_OP}: argument 'training': expected a bool, got {training!r}")
    shape = tuple(xin[4])
    if not shape:
        raise ValueError(f"{_OP}: argument 'x': expected at least 1 dimension, got a 0-d array")
    b = None if bias is None else _import(bias, xin, "bias")
    r = _import(residual, xin, "residual")
    if out is None:
        obj, out_arg = _interop.new_output(xin, shape, dtype, _OP)
    else:
        obj, out_arg = out, _interop.import_output(out, dtype, xin, _OP)
    _C.bias_dropout_add(xin[3], None if b is None else b[3], r[3], out_arg, p, seed, offset, training, xin[2])
    return _interop.result(xin, obj) if out is None else out
