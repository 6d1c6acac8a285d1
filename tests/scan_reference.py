"""float64 / exact references for the scan family, shared by the CPU and GPU tests."""
from __future__ import annotations

import numpy as np
from conftest import FLOAT_DTYPES, bf16_round, to_numpy

import gpuprims
from gpuprims._dtypes import reduce_result_dtype

OPS = ("sum", "prod", "min", "max")
SCAN_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16",
               "float32", "float64")
ACC_EPS = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -24, "float32": 2.0 ** -24, "float64": 2.0 ** -53}
OUT_EPS = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24, "float64": 2.0 ** -53}
# Half the smallest subnormal: what rounding a tiny (underflowing) value to the output may lose.
OUT_TINY = {"float16": 2.0 ** -25, "bfloat16": 2.0 ** -134, "float32": 2.0 ** -150, "float64": 0.0}
# (input, dtype=) pairs without scan kernels of their own: scan() converts the input into the result
# first, then scans it in place. Integer <-> float, narrowing, signedness changes, float -> integer.
CONVERTED_PAIRS = (("int32", "float32"), ("int64", "float64"), ("int8", "float16"), ("int16", "bfloat16"),
                   ("bool", "float32"), ("int64", "int32"), ("uint64", "int8"), ("int16", "int32"),
                   ("uint16", "int64"), ("float64", "float32"), ("float32", "float16"), ("float64", "bfloat16"),
                   ("float16", "bfloat16"), ("float32", "int64"), ("float64", "int16"), ("bool", "uint8"))
# Variants that round float16/bfloat16 results twice (tile scan, then the propagated prefix).
TWICE_ROUNDED = ("hillis_steele", "blelloch", "warp_shuffle")
# Items of the axis between two links of the chain of tile prefixes: at least 64 for the column tiles
# (an axis that needs more than one tile gets tiles of 64 or 256 items), 2048 for every other variant.
COLUMN_TILE_LEN = 64


def prefix_chain(algorithm):
    return COLUMN_TILE_LEN if algorithm == "columns" else 2048


def scan_values(rng, n, dtype, op):
    """Fresh random data that keeps every op meaningful (products near 1, integers small)."""
    if dtype == "bool":
        if op == "sum":
            return rng.random(n) < 0.5
        # About two of the value that changes a running all (min, prod) or any (max), at random
        # places: the result flips somewhere inside the array, not at its first items.
        rare = rng.random(n) < 2.0 / max(n, 1)
        return rare if op == "max" else ~rare
    if dtype in ("float16", "bfloat16") and op == "prod":
        # Signed powers of two (mostly +-1): every partial product is exact in the float32
        # accumulator (the exponent's random walk stays far inside float32's range over 2^20
        # items), so the half-precision result must equal the reference rounded once.
        return rng.choice(np.array([1.0, -1.0, 2.0, 0.5], np.float32), n, p=[0.4999, 0.4999, 0.0001, 0.0001])
    if dtype in FLOAT_DTYPES:
        a = rng.uniform(0.99, 1.01, n) if op == "prod" else rng.standard_normal(n)
        a = a.astype(np.float32)
        return bf16_round(a) if dtype == "bfloat16" else a.astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = (max(int(info.min), -3), 3) if op == "prod" else (max(int(info.min), -1000), min(int(info.max), 1000))
    return rng.integers(lo, hi, size=n, endpoint=True).astype(dtype)


def nonzero_values(rng, n, dtype):
    """Mostly zeros, with every kind of nonzero a wrong bit test would miss: integers whose only set
    bit is the top one (int8's -128, uint16's 0x8000), and for floats NaN, +-inf and +-subnormals
    among zeros of both signs. bfloat16 comes as float32 values it holds exactly."""
    if dtype == "bool":
        return rng.random(n) < 0.3
    pick = rng.random(n) < 0.3
    if dtype in FLOAT_DTYPES:
        host = "float32" if dtype == "bfloat16" else dtype
        tiny = 2.0 ** -133 if dtype == "bfloat16" else np.finfo(host).smallest_subnormal
        a = np.where(rng.random(n) < 0.5, -0.0, 0.0).astype(host)
        a[pick] = rng.choice(np.array([np.nan, np.inf, -np.inf, tiny, -tiny, 1.5, -3.0], host), int(pick.sum()))
        return bf16_round(a) if dtype == "bfloat16" else a
    info = np.iinfo(dtype)
    top_bit_only = int(info.min) if info.min < 0 else int(info.max) // 2 + 1
    a = np.zeros(n, dtype)
    a[pick] = rng.choice(np.array([top_bit_only, 1, info.max], dtype), int(pick.sum()))
    return a


def identity(op, dtype):
    """op's identity in `dtype`: an exclusive scan's first value, an empty segment's reduction."""
    if op == "sum":
        return 0
    if op == "prod":
        return 1
    if dtype == "bool":
        return op == "min"
    if dtype in FLOAT_DTYPES:
        return np.inf if op == "min" else -np.inf
    info = np.iinfo(dtype)
    return info.max if op == "min" else info.min


def _exclusive(ref, op, dtype, axis):
    first = np.full_like(np.take(ref, [0], axis=axis), identity(op, dtype))
    return np.concatenate([first, np.take(ref, np.arange(ref.shape[axis] - 1), axis=axis)], axis=axis)


def as_result_dtype(a, out_dtype):
    """a converted to an integer or bool result dtype as scan() converts it: numpy's astype, except
    that floats saturate at the integer's limits and NaN becomes 0 (numpy's result is platform-defined)."""
    if a.dtype.kind != "f" or out_dtype == "bool":
        return a.astype(out_dtype)
    info = np.iinfo(out_dtype)
    f = np.nan_to_num(a.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf)
    low, high = f <= float(info.min), f >= float(info.max)
    x = np.trunc(np.where(low | high, 0.0, f)).astype(out_dtype)
    x[low], x[high] = info.min, info.max
    return x


def reference(a, op, axis, out_dtype, *, exclusive=False, sequential=False, twice_rounded=False, chain=2048):
    """(expected, tolerance or None for exact) of scan(a) along `axis` (a is at least 1-D)."""
    if out_dtype not in FLOAT_DTYPES:
        x = as_result_dtype(a, out_dtype)
        with np.errstate(over="ignore"):
            ref = {"sum": lambda: np.cumsum(x, axis, dtype=out_dtype), "prod": lambda: np.cumprod(x, axis, dtype=out_dtype),
                   "min": lambda: np.minimum.accumulate(x, axis), "max": lambda: np.maximum.accumulate(x, axis)}[op]()
        return (_exclusive(ref, op, out_dtype, axis) if exclusive else ref), None
    # the input converted to the result dtype first (numpy's cumsum(x, dtype=)), held in float64
    x64 = a.astype(np.float64)
    if out_dtype != "float64":
        with np.errstate(over="ignore"):
            x64 = (bf16_round(x64) if out_dtype == "bfloat16" else x64.astype(out_dtype)).astype(np.float64)
    n = a.shape[axis]
    # Rounding steps on the longest path to an item: sequential on the CPU; on the GPU a thread's
    # serial run, the warp and block trees, and the chain of tile prefixes (one per `chain` items).
    depth = n if sequential else 2 * int(np.ceil(np.log2(max(n, 2)))) + 64 + n // chain
    acc_eps = ACC_EPS["float64" if out_dtype == "float64" else "float32"]
    out_eps = OUT_EPS[out_dtype]
    powers_of_two = bool(np.all(np.abs(np.frexp(x64)[0]) == 0.5))
    if op in ("min", "max") or (op == "prod" and out_dtype in ("float16", "bfloat16") and powers_of_two):
        # exact: min/max select values; half-precision products of scan_values' powers of two
        ufunc = {"min": np.minimum, "max": np.maximum, "prod": np.multiply}[op]
        ref = ufunc.accumulate(x64, axis)
        tol = None
    elif op == "sum":
        ref = np.cumsum(x64, axis)
        magnitude = np.cumsum(np.abs(x64), axis)
        # twice rounded: the tile-local partial (at most `magnitude`) is rounded to the output first
        tol = (acc_eps * depth + (out_eps if twice_rounded else 0.0)) * magnitude + out_eps * np.abs(ref)
    else:
        # A product of k factors takes k roundings whatever the tree; they are independent, so the
        # relative error stays within a few sqrt(k) eps (8 sqrt(k) is ~28 standard deviations).
        ref = np.cumprod(x64, axis)
        k = np.cumsum(np.ones_like(x64), axis)
        tol = (acc_eps * (8 * np.sqrt(k) + depth) + out_eps * (3 if twice_rounded else 1)) * np.abs(ref)
    if tol is not None:
        tol = tol + OUT_TINY[out_dtype] * (2 if twice_rounded else 1)
    if tol is not None and out_dtype != "float64":
        # A float32 accumulator or a half-precision result overflows where the float64 reference
        # does not (products of converted integers, long sums into float16): there the result is
        # +-inf, or NaN after inf * 0, as a sequential float32 scan rounded to the result gives.
        with np.errstate(over="ignore", invalid="ignore"):
            seq = (np.cumsum if op == "sum" else np.cumprod)(x64.astype(np.float32), axis)
            seq = (bf16_round(seq) if out_dtype == "bfloat16" else seq.astype(out_dtype)).astype(np.float64)
        overflow = ~np.isfinite(seq) & np.isfinite(ref)
        ref, tol = np.where(overflow, seq, ref), np.where(overflow, 0.0, tol)
    if exclusive:
        ref = _exclusive(ref, op, out_dtype, axis)
        if tol is not None:
            tol = _exclusive(tol, "sum", out_dtype, axis)
    return ref, tol


def compare(got, ref, tol, out_dtype):
    g = to_numpy(got)
    assert g.shape == ref.shape, (g.shape, ref.shape)
    if tol is None and out_dtype in FLOAT_DTYPES:
        # min/max: exact values of the output dtype (the reference rounded to it)
        with np.errstate(over="ignore"):
            r = bf16_round(ref.astype(np.float32)) if out_dtype == "bfloat16" else ref.astype(out_dtype)
        np.testing.assert_array_equal(g.astype(np.float64), r.astype(np.float64))
    elif tol is None:
        np.testing.assert_array_equal(g, ref)
    else:
        g64 = g.astype(np.float64)
        nan = np.isnan(ref)
        assert np.array_equal(np.isnan(g64), nan), "NaN where the reference has none, or the reverse"
        err = np.abs(np.where(nan, 0, g64 - np.where(nan, 0, ref)))
        bad = err > np.where(nan, 0, tol)
        where = np.flatnonzero(bad)[:4]
        assert not bad.any(), (f"{bad.sum()} items off, max error {err.max()}; first (index, got, expected, "
                               f"tolerance): {[(int(i), g64.flat[i], ref.flat[i], tol.flat[i]) for i in where]}")


def check(fw, a, dtype, op, axis=None, *, exclusive=False, algorithm="auto", result_dtype=None, sequential=False,
          x=None):
    """Runs gpuprims.scan on fw's copy of `a` and compares with the reference."""
    x = fw.make(a, dtype) if x is None else x
    got = gpuprims.scan(x, op, axis, exclusive=exclusive, algorithm=algorithm, dtype=result_dtype)
    assert fw.is_native(got), type(got)
    out_dtype = reduce_result_dtype(op, dtype, result_dtype)
    a_ref = a.reshape(-1) if axis is None else a
    ref, tol = reference(a_ref, op, 0 if axis is None else axis, out_dtype, exclusive=exclusive,
                         sequential=sequential, twice_rounded=algorithm in TWICE_ROUNDED, chain=prefix_chain(algorithm))
    compare(got, ref, tol, out_dtype)
    return got
