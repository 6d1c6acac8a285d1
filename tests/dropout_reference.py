"""The bias_dropout_add mask from the documented mapping, through the host Philox4x32-10 binding,
and a float64 reference; shared by the CPU and GPU tests."""
from __future__ import annotations

import numpy as np
from conftest import to_numpy

from gpuprims import _C


def keep_mask(size, p, seed, offset, first=0):
    """keep[k] for elements first .. first + size - 1 (C order): lane i % 4 of Philox4x32-10 at
    counter (lo32(i // 4), hi32(i // 4), lo32(offset), hi32(offset)), key (lo32(seed), hi32(seed)),
    kept iff >= floor(p * 2**32)."""
    threshold = int(np.floor(p * 2.0 ** 32)) if p < 1 else None
    out = np.empty(size, bool)
    for k in range(size):
        i = first + k
        g = i // 4
        bits = _C.philox4x32_10((g & 0xFFFFFFFF, g >> 32, offset & 0xFFFFFFFF, offset >> 32), seed & 0xFFFFFFFF,
                                seed >> 32)[i % 4]
        out[k] = threshold is not None and bits >= threshold
    return out


def reference(x, bias, residual, p, seed, offset, training=True):
    """(out in float64, keep mask, magnitude) with x's shape; magnitude = |residual| + |(x + bias) *
    factor|, the size of the terms whose rounding in the statistics type the result carries."""
    x64 = to_numpy(x).astype(np.float64)
    b64 = 0.0 if bias is None else to_numpy(bias).astype(np.float64)
    r64 = to_numpy(residual).astype(np.float64)
    if not training:
        keep, factor = np.ones(x64.shape, bool), 1.0
    else:
        keep = keep_mask(x64.size, p, seed, offset).reshape(x64.shape)
        factor = np.where(keep, 0.0 if p >= 1 else 1.0 / (1.0 - p), 0.0)
    with np.errstate(invalid="ignore"):
        scaled = (x64 + b64) * factor
        return r64 + scaled, keep, np.abs(r64) + np.abs(x64 + b64) * (1 + np.abs(factor))


def tolerance(dtype, want, mag):
    """One rounding to dtype (twice, for margin) plus a few roundings in the statistics type."""
    out_eps = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24, "float64": 2.0 ** -53}[dtype]
    acc = 2.0 ** -53 if dtype == "float64" else 2.0 ** -24
    return 2 * out_eps * np.abs(want) + 4 * acc * np.nan_to_num(mag, nan=0.0, posinf=0.0)
