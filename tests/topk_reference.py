"""The top-k checker shared by the CPU tests, the GPU tests and scripts/fuzz_api.py: rank keys computed
with numpy, then the properties every correct answer has, whichever of the elements tied with the k-th
one it took (the GPU variants claim ties in an unspecified order).

Ranking is torch.topk's: integers by value; floats by value with every NaN (any sign, any payload)
above +inf, and -0.0 just below +0.0. largest=False inverts the order (NaN is then the last choice).
Arrays are numpy arrays; bfloat16 may come as ml_dtypes.bfloat16 or as float32 holding bfloat16
values (conftest.to_numpy): float32 keys of those values rank them the same way.
"""
from __future__ import annotations

import numpy as np

# the magnitude bits above which a float's pattern is a NaN (exponent all ones, mantissa not zero)
_NAN_FLOOR = {"float16": 0x7C00, "bfloat16": 0x7F80, "float32": 0x7F800000, "float64": 0x7FF0000000000000}
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits_of(a) -> np.ndarray:
    """The elements' bit patterns as unsigned integers of their size (bit-exact comparisons:
    NaN payloads, -0.0)."""
    a = np.ascontiguousarray(a)
    return a.view(_UNSIGNED[a.dtype.itemsize])


def rank_keys(a, largest: bool = True) -> np.ndarray:
    """uint64 keys of a's elements: key(u) > key(v) exactly when u ranks above v (for largest=False:
    below). Every NaN has the top key, -0.0 the key just below +0.0's."""
    a = np.asarray(a)
    name = a.dtype.name
    if a.dtype.kind == "u":
        keys = a.astype(np.uint64)
    elif a.dtype.kind == "i":
        keys = a.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)  # flipping the sign bit orders by value
    elif name in _NAN_FLOOR:
        b = bits_of(a)
        ut = b.dtype.type
        sign = ut(1 << (8 * a.dtype.itemsize - 1))
        nan = (b & ut(~sign)) > ut(_NAN_FLOOR[name])
        # sign-magnitude: negatives count down (all bits flipped), positives above them
        keys = np.where(nan, ut(~ut(0)), np.where(b & sign, ~b, b | sign)).astype(np.uint64)
    else:
        raise TypeError(f"rank_keys: no ranking of dtype {name}")
    return keys if largest else ~keys


def _rows(a, axis):
    """a with `axis` moved last, as a 2-D array of rows (empty shapes kept consistent)."""
    a = np.moveaxis(np.asarray(a), axis, -1)
    rows = int(np.prod(a.shape[:-1], dtype=np.int64))
    return a.reshape(rows, a.shape[-1])


def reference_topk(x, k: int, axis: int = -1, largest: bool = True):
    """(values, indices) of numpy's stable ranking: each row's k highest-ranked elements in rank
    order, ties by increasing index (the CPU reference's answer, and torch's on distinct data)."""
    x = np.asarray(x)
    ax = axis % x.ndim
    xr = _rows(x, ax)
    order = np.argsort(~rank_keys(xr, largest), axis=-1, kind="stable")[:, :k].astype(np.int64)
    values = np.take_along_axis(xr, order, -1)
    shape = x.shape[:ax] + x.shape[ax + 1:] + (k,)
    return (np.moveaxis(values.reshape(shape), -1, ax), np.moveaxis(order.reshape(shape), -1, ax))


def _where(bad_rows, x_shape, ax):
    """The first failing row as an index of x with ':' at the axis, and how many rows fail."""
    r = int(np.flatnonzero(bad_rows)[0])
    outer = x_shape[:ax] + x_shape[ax + 1:]
    idx = [str(int(i)) for i in np.unravel_index(r, outer)] if outer else []
    idx.insert(ax, ":")
    return r, f"row x[{', '.join(idx)}] ({int(np.count_nonzero(bad_rows))} of {bad_rows.size} rows)"


def check_topk(x, k, axis, largest, sorted, values, indices, *, lowest_ties=False, what="topk"):  # noqa: A002
    """Raises AssertionError unless (values, indices) is a correct top-k of x along axis:
    indices int64, in range and distinct within each row; values are x at those indices bit for bit;
    the returned elements' rank keys are the row's k highest (as a multiset: any choice among ties
    with the k-th); with `sorted`, keys non-increasing along the row and equal keys by increasing
    index. lowest_ties=True (the CPU reference): the tied elements taken are the lowest-indexed."""
    x, values, indices = np.asarray(x), np.asarray(values), np.asarray(indices)
    assert x.ndim >= 1, f"{what}: x is 0-d"
    ax = axis % x.ndim
    n = x.shape[ax]
    want = x.shape[:ax] + (k,) + x.shape[ax + 1:]
    assert values.shape == want, f"{what}: values of shape {values.shape}, want {want}"
    assert indices.shape == want, f"{what}: indices of shape {indices.shape}, want {want}"
    assert indices.dtype == np.int64, f"{what}: indices of dtype {indices.dtype}, want int64"
    assert values.dtype == x.dtype, f"{what}: values of dtype {values.dtype}, want {x.dtype}"
    xr, vr, ir = _rows(x, ax), _rows(values, ax), _rows(indices, ax)
    rows = xr.shape[0]
    if rows == 0 or k == 0:
        return
    params = f"{what}: k={k} axis={axis} largest={largest} sorted={sorted} x{x.shape}"

    def fail(bad_rows, msg):
        r, at = _where(bad_rows, x.shape, ax)
        raise AssertionError(f"{params}: {msg} at {at}; got indices {ir[r][:12].tolist()}"
                             f"{' ...' if k > 12 else ''}, values {vr[r][:12].tolist()}")

    bad = ((ir < 0) | (ir >= n)).any(axis=1)
    if bad.any():
        fail(bad, f"indices outside [0, {n})")
    seen = np.zeros((rows, n), bool)
    seen[np.arange(rows)[:, None], ir] = True
    bad = seen.sum(axis=1) != k
    if bad.any():
        fail(bad, "repeated indices")
    bad = (bits_of(np.take_along_axis(xr, ir, -1)) != bits_of(vr)).any(axis=1)
    if bad.any():
        fail(bad, "values are not x at the indices (bit for bit)")
    kx = rank_keys(xr, largest)
    kv = np.take_along_axis(kx, ir, -1)
    kth = np.partition(kx, n - k, axis=-1)[:, n - k:n - k + 1]  # the row's k-th highest key
    above = np.count_nonzero(kx > kth, axis=1)
    bad = (kv < kth).any(axis=1) | (np.count_nonzero(kv > kth, axis=1) != above)
    if bad.any():
        fail(bad, "not the row's top k by rank")
    if lowest_ties:
        # the elements tied with the k-th that were taken are the first (k - above) of them
        tie_rank = np.cumsum(kx == kth, axis=1)
        taken = np.take_along_axis(tie_rank, ir, -1)
        bad = ((kv == kth) & (taken > (k - above)[:, None])).any(axis=1)
        if bad.any():
            fail(bad, "ties with the k-th not taken at the lowest indices")
    if sorted and k > 1:
        a, b = kv[:, :-1], kv[:, 1:]
        bad = ((a < b) | ((a == b) & (ir[:, :-1] >= ir[:, 1:]))).any(axis=1)
        if bad.any():
            fail(bad, "not in rank order (keys non-increasing, equal keys by increasing index)")
