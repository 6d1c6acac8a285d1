"""reduce: every dtype, op, axis, layout and variant against float64/exact references."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import (ALL_DTYPES, FLOAT_DTYPES, NUMPY_CPU, bf16_round, float_tolerance, framework_params,
                      random_values, reduced_count, to_numpy, torch)

import gpuprims
from gpuprims._dtypes import reduce_result_dtype

OPS = ("sum", "prod", "min", "max")
SIZES = (1, 31, 32, 33, 1023, 4097, 2**20 + 7)
VARIANTS = tuple(v.name for v in gpuprims.variants("reduce"))
SUBNORMAL = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -133, "float32": 2.0 ** -149, "float64": 0.0}
ACC_EPS = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -24, "float32": 2.0 ** -24, "float64": 2.0 ** -53}


def values_for(rng, n, dtype, op):
    a = random_values(rng, n, dtype)
    if op == "prod" and dtype in FLOAT_DTYPES:
        # Products of standard normals under- or overflow; values near 1 keep them meaningful.
        a = rng.uniform(0.99, 1.01, n).astype(np.float32)
        a = bf16_round(a) if dtype == "bfloat16" else a.astype(dtype)
    return a


def reference(a: np.ndarray, op: str, axis, out_dtype: str, in_dtype: str):
    """(value, tolerance) of reduce(a) in float64 (floats) or numpy's exact wrapped integers."""
    if out_dtype in FLOAT_DTYPES:
        x64 = a.astype(np.float64)
        if op == "sum":
            acc_eps = ACC_EPS["float64" if out_dtype == "float64" or in_dtype == "float64" else "float32"]
            if in_dtype not in FLOAT_DTYPES:
                acc_eps = 0.0  # integers accumulate exactly
            return x64.sum(axis=axis), float_tolerance(x64, axis, out_dtype, acc_eps)
        if op == "prod":
            n = reduced_count(x64.shape, axis)
            ref = x64.prod(axis=axis)
            eps = ACC_EPS["float64" if out_dtype == "float64" or in_dtype == "float64" else "float32"]
            out_eps = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24, "float64": 2.0 ** -53}
            # plus half the spacing of the output's subnormals: a tiny product rounds absolutely
            return ref, np.abs(ref) * ((n + 2) * eps + out_eps[out_dtype]) + SUBNORMAL[out_dtype]
        ref = x64.min(axis=axis) if op == "min" else x64.max(axis=axis)
        return ref, 0.0
    npop = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max}[op]
    src = a.astype(np.uint8) if in_dtype == "bool" else a
    if op in ("sum", "prod"):
        return npop(src, axis=axis, dtype=out_dtype), None
    return npop(src, axis=axis).astype(out_dtype), None


def check(fw, a, dtype, op, axis=None, *, keepdims=False, algorithm="auto", result_dtype=None):
    """reduce(a) along `axis` (None, an int or a tuple of ints, negative ones too) against numpy."""
    x = fw.make(a, dtype)
    got = gpuprims.reduce(x, op, axis, keepdims=keepdims, algorithm=algorithm, dtype=result_dtype)
    if axis is not None:
        axis = tuple(sorted(d % a.ndim for d in ((axis,) if isinstance(axis, int) else axis)))
    assert fw.is_native(got), type(got)
    out_dtype = reduce_result_dtype(op, dtype, result_dtype)
    g = to_numpy(got)
    ref, tol = reference(a, op, axis, out_dtype, dtype)
    expected_shape = np.asarray(ref).shape if not keepdims else (
        (1,) * a.ndim if axis is None else tuple(1 if d in axis else n for d, n in enumerate(a.shape)))
    assert g.shape == expected_shape
    g = g.reshape(np.shape(ref))
    if tol is None:
        np.testing.assert_array_equal(g, ref)
    else:
        g64 = g.astype(np.float64)
        nan = np.isnan(ref)
        assert np.array_equal(np.isnan(g64), nan), "NaN where the reference has none, or the reverse"
        err = np.abs(np.where(nan, 0, g64 - ref))
        assert np.all(err <= np.where(nan, 0, tol)), f"max error {err.max()} > tolerance {np.max(tol)}"
    return got


# ---------------------------------------------------------------------------------------------
# the CPU reference (runs in CI, no GPU)


def test_readme_demo():
    r = gpuprims.reduce(np.arange(10))
    assert isinstance(r, np.ndarray) and r.dtype == np.int64 and r.shape == () and int(r) == 45


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_cpu_all_dtypes(rng, dtype, op):
    if dtype == "bfloat16":
        pytest.skip("numpy holds no bfloat16; covered through torch and jax")
    for n in SIZES:
        check(NUMPY_CPU, values_for(rng, n, dtype, op), dtype, op)


@pytest.mark.parametrize("fw", framework_params("cpu"))
@pytest.mark.parametrize("dtype", ("int32", "bfloat16", "float16", "float32", "uint8", "bool"))
def test_cpu_frameworks(fw, rng, dtype):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed")
    if fw.name == "numpy" and dtype == "bfloat16":
        pytest.skip("numpy holds no bfloat16")
    a = random_values(rng, 37 * 41, dtype).reshape(37, 41)
    for axis in (None, 0, 1, -1):
        check(fw, a, dtype, "sum", axis)
        check(fw, a, dtype, "max", axis)


@pytest.mark.parametrize("axis", (None, 0, 1, 2, -1, -3))
@pytest.mark.parametrize("keepdims", (False, True))
@pytest.mark.parametrize("op", OPS)
def test_cpu_axes(rng, axis, keepdims, op):
    a = values_for(rng, 5 * 7 * 9, "float32", op).reshape(5, 7, 9)
    check(NUMPY_CPU, a, "float32", op, axis, keepdims=keepdims)


AXIS_TUPLES = ((), (0,), (0, 1), (0, 2), (1, 2), (-1, 0), (0, 1, 2), [2, 0])


@pytest.mark.parametrize("axis", AXIS_TUPLES, ids=str)
@pytest.mark.parametrize("keepdims", (False, True))
@pytest.mark.parametrize("op", OPS)
def test_cpu_axis_tuples(rng, axis, keepdims, op):
    """numpy's tuple of axes (a list taken like one): contiguous and strided views, float and int."""
    a = values_for(rng, 5 * 7 * 9, "float32", op).reshape(5, 7, 9)
    check(NUMPY_CPU, a, "float32", op, axis, keepdims=keepdims)
    check(NUMPY_CPU, a.transpose(2, 0, 1)[::-1, :, ::2], "float32", op, axis, keepdims=keepdims)
    i = random_values(rng, 6 * 4 * 11, "int16").reshape(6, 4, 11)
    check(NUMPY_CPU, i[:, ::-1], "int16", op, axis, keepdims=keepdims)


def test_cpu_axis_tuples_that_leave_unmergeable_dimensions(rng):
    """Reduced and kept axes interleaved in 4 and 5 dimensions: rows of several strided runs."""
    a = random_values(rng, 4 * 6 * 3 * 10 * 2, "float64").reshape(4, 6, 3, 10, 2)
    for axis in ((1, 3), (0, 2, 4), (0, 3), (-4, -2, -1)):
        check(NUMPY_CPU, a, "float64", "sum", axis)
        check(NUMPY_CPU, a[:, ::2, :, ::-3], "float64", "max", axis, keepdims=True)


def test_cpu_axis_tuples_of_empty_arrays():
    e = np.zeros((0, 3, 4), np.float32)
    np.testing.assert_array_equal(gpuprims.sum(e, axis=(0, 2)), np.zeros(3, np.float32))
    assert gpuprims.max(e, axis=(1, 2)).shape == (0,)  # every reduced row has 12 elements
    assert gpuprims.min(e, axis=()).shape == (0, 3, 4)
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        gpuprims.max(e, axis=(0, 1))


def test_cpu_empty_axis_tuple_converts_to_the_result_dtype(rng):
    a = rng.integers(-100, 100, (3, 5)).astype(np.int8)
    r = gpuprims.sum(a, axis=())
    assert r.dtype == np.int64 and r.shape == (3, 5)
    np.testing.assert_array_equal(r, np.sum(a, axis=()))
    np.testing.assert_array_equal(gpuprims.max(a, axis=()), a)


def test_cpu_core_checks_the_axes_itself():
    """The C++ entry point refuses repeated and out-of-range axes with the Python layer's messages."""
    from gpuprims import _C, _interop

    xin = _interop.prepare_input(np.ones((3, 4), np.float32), None, "reduce")
    _, out_arg = _interop.new_output(xin, (4,), "float32", "reduce")
    with pytest.raises(ValueError, match="reduce: argument 'axis': expected each axis once, got axis 0 twice"):
        _C.reduce(xin[3], out_arg, "sum", (0, -2), "auto", xin[2])
    with pytest.raises(ValueError, match=r"reduce: argument 'axis': expected an int in \[-2, 2\).*got 2"):
        _C.reduce(xin[3], out_arg, "sum", (2,), "auto", xin[2])
    with pytest.raises(ValueError, match=r"reduce: argument 'out': expected shape \(3,\) \(or with a 1 at axis 1\)"):
        _C.reduce(xin[3], out_arg, "sum", (1,), "auto", xin[2])


@pytest.mark.parametrize("view", ("transposed", "reversed", "step2", "broadcast", "offset1", "readonly", "0d"))
@pytest.mark.parametrize("axis", (None, 0, -1))
def test_cpu_layouts(rng, view, axis):
    base = random_values(rng, 12 * 34, "float32").reshape(12, 34)
    a = {"transposed": base.T, "reversed": base[::-1, ::-1], "step2": base[::2, 1::3],
         "broadcast": np.broadcast_to(base[:, :1], (12, 34)), "offset1": base.reshape(-1)[1:].reshape(1, -1),
         "readonly": base.copy(), "0d": np.asarray(base[0, 0])}[view]
    if view == "readonly":
        a.setflags(write=False)
    if view == "0d" and axis is not None:
        with pytest.raises(ValueError, match="reduce: argument 'axis'"):
            gpuprims.sum(a, axis=axis)
        return
    got = gpuprims.sum(a, axis=axis)
    np.testing.assert_allclose(got, a.astype(np.float64).sum(axis=axis), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(gpuprims.max(a, axis=axis), a.max(axis=axis))


def test_cpu_special_values():
    a = np.array([1.0, np.nan, -np.inf, 3.0], dtype=np.float32)
    assert np.isnan(gpuprims.min(a)) and np.isnan(gpuprims.max(a)) and np.isnan(gpuprims.sum(a))
    b = np.array([1.0, np.inf, 2.0], dtype=np.float32)
    assert gpuprims.max(b) == np.inf and gpuprims.min(b) == 1.0 and gpuprims.sum(b) == np.inf
    assert np.isnan(gpuprims.sum(np.array([np.inf, -np.inf], dtype=np.float16)))
    # NaN in any row position propagates along an axis, row by row
    c = np.array([[1.0, 2.0], [np.nan, 0.0], [5.0, np.nan]], dtype=np.float64)
    r = gpuprims.max(c, axis=1)
    assert r[0] == 2.0 and np.isnan(r[1]) and np.isnan(r[2])
    # float16 sums beyond 65504 accumulate in float32 and overflow only when rounded to the output
    h = np.full(4096, 30.0, dtype=np.float16)
    assert float(gpuprims.sum(h, dtype="float32")) == 4096 * 30.0
    assert gpuprims.sum(h) == np.float16(np.inf)


def test_cpu_empty():
    for dtype in ("int32", "float32", "uint8"):
        e = np.zeros((0,), dtype=dtype)
        assert gpuprims.sum(e) == 0 and gpuprims.prod(e) == 1
        for op in ("min", "max"):
            with pytest.raises(ValueError, match=f"reduce: zero-size array to reduction operation {op} which has no identity"):
                gpuprims.reduce(e, op)
    e2 = np.zeros((3, 0), dtype=np.float32)
    np.testing.assert_array_equal(gpuprims.sum(e2, axis=1), np.zeros(3, dtype=np.float32))
    assert gpuprims.max(e2, axis=0).shape == (0,)
    with pytest.raises(ValueError, match="zero-size"):
        gpuprims.max(e2, axis=1)
    with pytest.raises(ValueError, match="zero-size"):  # empty axis, empty result: numpy raises too
        gpuprims.min(np.zeros((0, 0), np.float32), axis=0)


def test_cpu_numpy_scalars_are_0d_arrays():
    assert gpuprims.sum(np.float32(2.5)) == 2.5 and gpuprims.max(np.arange(5)[3]) == 3
    with pytest.raises(TypeError, match="argument 'out': expected a writable array, got a numpy scalar"):
        gpuprims.sum(np.ones(3), out=np.float64(0))


def test_cpu_dtype_argument(rng):
    a = rng.integers(-2**31, 2**31 - 1, size=100_003, dtype=np.int64).astype(np.int32)
    assert gpuprims.sum(a).dtype == np.int64 and int(gpuprims.sum(a)) == int(a.astype(np.int64).sum())
    r = gpuprims.sum(a, dtype=np.int32)  # numpy wraps in int32; so do we
    assert r.dtype == np.int32 and int(r) == int(np.sum(a, dtype=np.int32))
    u = rng.integers(0, 255, size=1000, dtype=np.uint8)
    assert gpuprims.sum(u).dtype == np.uint64
    f = rng.standard_normal(10_000).astype(np.float32)
    r64 = gpuprims.sum(f, dtype="float64")
    assert r64.dtype == np.float64 and abs(float(r64) - f.astype(np.float64).sum()) < 1e-9
    assert gpuprims.max(f, dtype=np.float64) == f.max().astype(np.float64)
    assert gpuprims.sum(np.array([True, False, True])) == 2


def test_result_dtypes_match_numpy(rng):
    """dtype= pairs other than the defaults, against numpy (which reduces x converted to dtype)."""
    f = np.clip(rng.standard_normal(1001) * 40, -120, 120).astype(np.float32)  # within int8's range
    for dtype in ("int8", "int64", "uint32"):  # min/max of a float x as integers: truncated extremes
        for op, npop in (("min", np.min), ("max", np.max)):
            want = npop(f.astype(np.int64)).astype(dtype) if dtype != "uint32" else None
            got = gpuprims.reduce(f, op, dtype=dtype)
            assert got.dtype == np.dtype(dtype)
            if want is not None:
                assert got == want, (op, dtype)
    i = rng.integers(-2**40, 2**40, 999)
    for dtype in ("float32", "float16", "int16", "uint64"):
        with np.errstate(over="ignore", invalid="ignore"):  # float16 overflows to inf, as ours
            want = np.sum(i, dtype=dtype)
            exact_then_rounded = np.asarray(i.sum()).astype(dtype)
        got = gpuprims.sum(i, dtype=dtype)
        assert got.dtype == np.dtype(dtype)
        if dtype.startswith(("int", "uint")):
            assert got == want, dtype
        else:  # exact int64 accumulation, one rounding (numpy sums in dtype: within its rounding)
            assert got == exact_then_rounded, dtype
    assert gpuprims.max(np.array([True, False]), dtype="int8") == 1


def test_float64_to_float16_results_are_rounded_once(rng):
    """A float64 result stored as float16 is rounded once, as numpy does: through float32 rounded to
    nearest first, values just off a float16 tie came out one unit away."""
    ties = 1.0 + (2 * rng.integers(0, 1024, 200) + 1) * 2.0**-11  # midway between float16 neighbours
    nudged = np.concatenate([ties + 2.0**-30, ties - 2.0**-30, ties, -ties - 2.0**-30, ties * 2.0**-20])
    for v in nudged:
        for op in ("sum", "max"):
            got = gpuprims.reduce(np.array([v]), op, dtype="float16")
            assert got == np.float16(v), (op, v, got, np.float16(v))


def test_cpu_out_argument(rng):
    a = random_values(rng, 6 * 8, "float32").reshape(6, 8)
    out = np.full(6, np.nan, dtype=np.float32)  # poisoned
    r = gpuprims.sum(a, axis=1, out=out)
    assert r is out
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-6)
    strided = np.full(12, np.nan, dtype=np.float32)[::2]
    gpuprims.max(a, axis=1, out=strided)
    np.testing.assert_array_equal(strided, a.max(axis=1))
    keep = np.full((6, 1), np.nan, dtype=np.float32)
    gpuprims.min(a, axis=1, out=keep)
    np.testing.assert_array_equal(keep[:, 0], a.min(axis=1))


@pytest.mark.parametrize("algorithm", VARIANTS)
def test_cpu_accepts_every_variant_name(rng, algorithm):
    a = random_values(rng, 100, "float32")
    np.testing.assert_allclose(gpuprims.sum(a, algorithm=algorithm), a.astype(np.float64).sum(), rtol=1e-5)


@pytest.mark.parametrize("op", OPS)
def test_default_result_dtype_rule(op):
    """numpy's rule, kept once in C++ (the Python layer and the C++ fast path of torch calls both use it)."""
    from gpuprims._dtypes import DTYPES

    for dtype in DTYPES:
        if op in ("min", "max") or dtype.startswith(("float", "bfloat")):
            want = dtype
        else:
            want = "uint64" if dtype.startswith("uint") else "int64"
        assert reduce_result_dtype(op, dtype, None) == want, dtype


def test_variants_listing():
    rows = gpuprims.variants("reduce")
    names = [v.name for v in rows]
    assert names == ["atomic_naive", "smem_interleaved", "smem_sequential", "warp_shuffle", "atomic_per_block",
                     "vectorized", "thread_per_output", "warp_per_row", "column_tiles", "bulk_copy", "window"]
    assert all(v.description for v in rows)
    assert [v.name for v in rows if not v.deterministic] == ["atomic_naive", "atomic_per_block"]
    with pytest.raises(ValueError, match="variants: argument 'family'"):
        gpuprims.variants("nope")


# ---------------------------------------------------------------------------------------------
# bad arguments: typed errors naming op, argument, expected and got, raised before any launch


@pytest.mark.parametrize("call, exc, message", [
    (lambda a: gpuprims.reduce(a, "mean"), ValueError, r"reduce: argument 'op': expected one of .* got 'mean'"),
    (lambda a: gpuprims.sum(a, axis=2), ValueError, r"reduce: argument 'axis': expected an int in \[-2, 2\).*got 2"),
    (lambda a: gpuprims.sum(a, axis=1.0), TypeError, r"reduce: argument 'axis': expected None, an int or a tuple of ints, got 1.0"),
    (lambda a: gpuprims.sum(a, axis=(0, 1.0)), TypeError, r"reduce: argument 'axis': expected None, an int or a tuple of ints, got \(0, 1.0\)"),
    (lambda a: gpuprims.sum(a, axis=(0, -2)), ValueError, r"reduce: argument 'axis': expected each axis once, got \(0, -2\)"),
    (lambda a: gpuprims.sum(a, axis=(0, 2)), ValueError, r"reduce: argument 'axis': expected an int in \[-2, 2\).*got \(0, 2\)"),
    (lambda a: gpuprims.sum(a, axis="0"), TypeError, r"reduce: argument 'axis': expected None, an int or a tuple of ints, got '0'"),
    (lambda a: gpuprims.sum(a, dtype="complex64"), TypeError, r"reduce: argument 'dtype': expected one of .*complex64"),
    (lambda a: gpuprims.sum(a, dtype="int64"), TypeError, r"reduce: argument 'dtype': a sum of float32 elements as int64 is not supported"),
    (lambda a: gpuprims.prod(a, dtype=np.uint8), TypeError, r"reduce: argument 'dtype': a prod of float32 elements as uint8"),
    (lambda a: gpuprims.max(a.astype(np.int32), dtype=bool), TypeError, r"reduce: argument 'dtype': a bool result of int32 elements"),
    (lambda a: gpuprims.sum(a, algorithm="fastest"), ValueError, r"reduce: argument 'algorithm': expected one of 'auto'.*got 'fastest'"),
    (lambda a: gpuprims.sum(a, algorithm=3), TypeError, r"reduce: argument 'algorithm': expected a str"),
    (lambda a: gpuprims.sum([1, 2, 3]), TypeError, r"reduce: argument 'x': expected an array supporting DLPack.*builtins.list"),
    (lambda a: gpuprims.sum(a.astype(np.complex64)), TypeError, r"reduce: argument 'x': expected a bool, integer or float dtype, got complex64"),
    (lambda a: gpuprims.sum(a, axis=0, out=np.empty(4, np.float32)), ValueError, r"reduce: argument 'out': expected shape \(3,\)"),
    (lambda a: gpuprims.sum(a, axis=(0, 1), out=np.empty(4, np.float32)), ValueError, r"reduce: argument 'out': expected shape \(\) \(or with 1s at axes \(0, 1\)\)"),
    (lambda a: gpuprims.sum(a, out=np.empty((), np.float64)), TypeError, r"reduce: argument 'out': expected dtype float32, got float64"),
    (lambda a: gpuprims.sum(a, out=np.empty((2,), np.float32)), ValueError, r"reduce: argument 'out': expected one element for axis=None"),
    (lambda a: gpuprims.sum(a, stream=-1), ValueError, r"reduce: argument 'stream': expected a handle >= 0, got -1"),
    (lambda a: gpuprims.sum(a, stream="s"), TypeError, r"reduce: argument 'stream': expected an int handle"),
])
def test_bad_arguments(call, exc, message):
    a = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(exc, match=message):
        call(a)


def test_readonly_out_is_refused():
    out = np.empty((), np.float32)
    out.setflags(write=False)
    with pytest.raises(TypeError, match="reduce: argument 'out': expected a writable array"):
        gpuprims.sum(np.ones(3, np.float32), out=out)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torch_cpu_requires_grad_and_out():
    x = torch.ones(5, requires_grad=True)
    assert float(gpuprims.sum(x)) == 5.0
    with pytest.raises(TypeError, match="argument 'out': expected a tensor that does not require grad"):
        gpuprims.sum(x, out=torch.empty((), requires_grad=True))
    with pytest.raises(TypeError, match="argument 'x': expected a bool, integer or float dtype, got torch.complex64"):
        gpuprims.sum(torch.ones(3, dtype=torch.complex64))
