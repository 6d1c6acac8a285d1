"""scan on the CPU reference (runs in CI without a GPU): semantics, dtype rules and argument checks."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import NUMPY_CPU, cpu_framework, torch
from scan_reference import CONVERTED_PAIRS, OPS, SCAN_DTYPES, check, compare, reference, scan_values

import gpuprims
from gpuprims._dtypes import reduce_result_dtype

VARIANTS = tuple(v.name for v in gpuprims.variants("scan"))


def test_variants_listed():
    assert VARIANTS == ("hillis_steele", "blelloch", "warp_shuffle", "reduce_then_scan", "decoupled_lookback",
                        "lagged_lookback", "held_lookback", "block_per_row", "warp_per_row", "columns")
    det = {v.name: v.deterministic for v in gpuprims.variants("scan")}
    assert not det["decoupled_lookback"] and not det["lagged_lookback"] and not det["held_lookback"]
    assert not det["columns"]
    assert det["reduce_then_scan"]
    assert det["block_per_row"] and det["warp_per_row"]


@pytest.mark.parametrize("dtype", SCAN_DTYPES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("exclusive", (False, True))
def test_cpu_reference(rng, dtype, op, exclusive):
    for n in (1, 2, 33, 1000):
        check(cpu_framework(dtype), scan_values(rng, n, dtype, op), dtype, op, exclusive=exclusive, sequential=True)


@pytest.mark.parametrize("dtype,result", CONVERTED_PAIRS, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_cpu_converted_pairs(rng, dtype, result, op):
    """Pairs without a kernel of their own: x converted to dtype=, then scanned in it (numpy's rule)."""
    fw = cpu_framework("bfloat16" if "bfloat16" in (dtype, result) else dtype)
    for n, exclusive in ((1, False), (33, True), (1000, False)):
        check(fw, scan_values(rng, n, dtype, op), dtype, op, exclusive=exclusive, result_dtype=result,
              sequential=True)
    a = scan_values(rng, 6 * 50, dtype, op).reshape(6, 50)[::-1, ::3]
    check(fw, a, dtype, op, 1, result_dtype=result, sequential=True)
    check(fw, a, dtype, op, 0, exclusive=True, result_dtype=result, sequential=True)


def test_cpu_converted_pairs_match_numpy():
    """numpy's own results where they are defined: ints to floats beyond 2^24 (rounded once each,
    then summed in float32), wrapping narrow ints, floats truncated toward zero."""
    big = np.array([2**24 + 1, 3, 2**40 + 7, -5], np.int64)
    np.testing.assert_array_equal(gpuprims.cumsum(big, dtype="float32"), np.cumsum(big, dtype=np.float32))
    w = np.array([300, -200, 127, 1], np.int64)
    np.testing.assert_array_equal(gpuprims.cumsum(w, dtype="int8"), np.cumsum(w, dtype=np.int8))
    f = np.array([1.9, -2.7, 0.5, 3.99], np.float64)
    np.testing.assert_array_equal(gpuprims.cumsum(f, dtype="int32"), np.cumsum(f, dtype=np.int32))
    np.testing.assert_array_equal(gpuprims.scan(f, "max", dtype="int64"), np.maximum.accumulate(f.astype(np.int64)))
    # out of range and NaN saturate / give 0 (numpy's result there is platform-defined)
    g = np.array([1e20, np.nan, -1e20], np.float32)
    np.testing.assert_array_equal(gpuprims.scan(g, "max", dtype="int32"), [2**31 - 1] * 3)
    np.testing.assert_array_equal(gpuprims.cumsum(g[1:2], dtype="int64"), [0])


@pytest.mark.parametrize("dtype", ("int8", "int16", "uint8", "uint16"))
def test_cpu_narrow_integers(rng, dtype):
    # numpy's promotion (sums to int64/uint64) and the wrapping of sums and products kept narrow by
    # dtype=, which the 32-bit accumulator must reproduce bit for bit.
    a = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, size=700, endpoint=True).astype(dtype)
    got = gpuprims.cumsum(a)
    assert got.dtype == np.cumsum(a).dtype
    np.testing.assert_array_equal(got, np.cumsum(a))
    for op, ufunc in (("sum", np.add), ("prod", np.multiply)):
        with np.errstate(over="ignore"):
            want = ufunc.accumulate(a, dtype=dtype)
        np.testing.assert_array_equal(gpuprims.scan(a, op, dtype=dtype), want)
    low = gpuprims.scan(a, "min", exclusive=True)
    assert low.dtype == a.dtype and low[0] == np.iinfo(dtype).max
    np.testing.assert_array_equal(low[1:], np.minimum.accumulate(a)[:-1])


@pytest.mark.parametrize("axis", (0, 1, 2, -1))
def test_cpu_axes_and_layouts(rng, axis):
    a = scan_values(rng, 4 * 5 * 6, "float32", "sum").reshape(4, 5, 6)
    check(NUMPY_CPU, a, "float32", "sum", axis, sequential=True)
    t = np.ascontiguousarray(a.transpose(2, 0, 1))
    view = t.transpose(0, 2, 1)[:, :, ::-1]  # non-contiguous, a negative stride
    check(NUMPY_CPU, np.ascontiguousarray(view), "float32", "max", axis, sequential=True, x=view)


def test_cpu_strided_views(rng):
    a = scan_values(rng, 200, "int64", "sum")
    for view in (a[::-1], a[::3], a[5:150:7]):
        check(NUMPY_CPU, np.ascontiguousarray(view), "int64", "sum", x=view)
    m = scan_values(rng, 30 * 40, "int32", "sum").reshape(30, 40)
    check(NUMPY_CPU, np.ascontiguousarray(m.T), "int32", "sum", 1, x=m.T)
    check(NUMPY_CPU, m.reshape(-1), "int32", "sum", None, x=m.T.copy().T)  # axis=None flattens in C order


def test_axis_none_flattens():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    np.testing.assert_array_equal(gpuprims.cumsum(a), np.cumsum(a))
    np.testing.assert_array_equal(gpuprims.cumsum(a.T), np.cumsum(a.T))
    np.testing.assert_array_equal(gpuprims.cumsum(np.float32(2.5)), np.cumsum(np.float32(2.5)))


def test_dtype_rules():
    assert gpuprims.cumsum(np.ones(3, np.int32)).dtype == np.int64
    assert gpuprims.cumsum(np.ones(3, np.uint32)).dtype == np.uint64
    assert gpuprims.cumsum(np.ones(3, np.bool_)).dtype == np.int64
    assert gpuprims.scan(np.ones(3, np.int32), "max").dtype == np.int32
    assert gpuprims.cumsum(np.ones(3, np.int32), dtype="int32").dtype == np.int32
    assert gpuprims.cumsum(np.ones(3, np.float16)).dtype == np.float16


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype,result", [("float16", "float32"), ("float16", "float64"), ("float32", "float64")])
def test_float_to_wider_float(rng, op, dtype, result):
    """A float scan with a wider float result (torch.cumsum(x, dtype=torch.float32) of float16 x):
    accumulated in the result dtype, so it matches numpy's scan of the widened input."""
    a = scan_values(rng, 5000, dtype, op).reshape(50, 100)
    for axis in (None, 0, 1):
        for exclusive in (False, True):
            got = gpuprims.scan(a, op, axis, exclusive=exclusive, dtype=result)
            assert got.dtype == result
            src, ax = (a.reshape(-1), 0) if axis is None else (a, axis)
            want, tol = reference(src, op, ax, result, exclusive=exclusive, sequential=True)
            compare(got, want, tol, result)


@pytest.mark.parametrize("op", OPS)
def test_bool_scans(rng, op):
    """min / max of bool are bool (a running all / any), sums and products int64; with dtype=bool
    a sum is numpy's logical or and a product its logical and."""
    b = scan_values(rng, 300, "bool", op).reshape(3, 100)
    assert gpuprims.scan(b, op).dtype == (np.bool_ if op in ("min", "max") else np.int64)
    for axis in (None, 1, 0):
        for exclusive in (False, True):
            for result in (None, "bool"):
                out_dtype = reduce_result_dtype(op, "bool", result, "scan")
                src, ax = (b.reshape(-1), 0) if axis is None else (b, axis)
                want, _ = reference(src, op, ax, out_dtype, exclusive=exclusive)
                got = gpuprims.scan(b, op, axis, exclusive=exclusive, dtype=result)
                np.testing.assert_array_equal(got, want, err_msg=f"{op} axis={axis} exclusive={exclusive} {result}")


def test_integer_wraparound_is_exact():
    big = np.array([2**31 - 1, 1, 2**31 - 1, 5], np.int32)
    np.testing.assert_array_equal(gpuprims.cumsum(big, dtype="int32"), np.cumsum(big, dtype=np.int32))
    np.testing.assert_array_equal(gpuprims.cumsum(big), np.cumsum(big, dtype=np.int64))
    u = np.array([2**32 - 1, 7, 2**32 - 5], np.uint32)
    np.testing.assert_array_equal(gpuprims.cumsum(u, dtype="uint32"), np.cumsum(u, dtype=np.uint32))
    p = np.full(70, 3, np.int64)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(gpuprims.cumprod(p), np.cumprod(p))


def test_special_values():
    z = gpuprims.cumsum(np.array([-0.0, -0.0], np.float64))
    assert np.all(np.signbit(z))
    x = np.array([1.0, np.nan, 2.0, -np.inf], np.float32)
    np.testing.assert_array_equal(gpuprims.cumsum(x), np.cumsum(x))
    np.testing.assert_array_equal(gpuprims.scan(x, "max"), np.maximum.accumulate(x))
    np.testing.assert_array_equal(gpuprims.scan(x, "min"), np.minimum.accumulate(x))
    inf = np.array([np.inf, -np.inf, 1.0], np.float32)
    np.testing.assert_array_equal(gpuprims.cumsum(inf), np.cumsum(inf))


def test_exclusive_identities():
    x = np.array([3, 1, 2], np.int32)
    np.testing.assert_array_equal(gpuprims.cumsum(x, exclusive=True), [0, 3, 4])
    np.testing.assert_array_equal(gpuprims.cumprod(x, exclusive=True), [1, 3, 3])
    np.testing.assert_array_equal(gpuprims.scan(x, "min", exclusive=True), [2**31 - 1, 3, 1])
    f = gpuprims.scan(np.array([2.0, 1.0]), "max", exclusive=True)
    assert f[0] == -np.inf and f[1] == 2.0
    z = gpuprims.cumsum(np.array([-1.0, 1.0]), exclusive=True)
    assert z[0] == 0.0 and not np.signbit(z[0])


def test_empty_and_out():
    assert gpuprims.cumsum(np.zeros((0,), np.float32)).shape == (0,)
    assert gpuprims.cumsum(np.zeros((3, 0), np.float32), axis=0).shape == (3, 0)
    x = np.arange(1, 6, dtype=np.float64)
    out = np.full(5, np.nan)
    assert gpuprims.cumsum(x, out=out) is out
    np.testing.assert_array_equal(out, np.cumsum(x))
    gpuprims.cumsum(x, out=x)  # in place
    np.testing.assert_array_equal(x, np.cumsum(np.arange(1, 6, dtype=np.float64)))


def test_argument_errors():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises(ValueError, match="argument 'op'"):
        gpuprims.scan(x, "mean")
    with pytest.raises(ValueError, match="argument 'axis'"):
        gpuprims.scan(x, axis=2)
    with pytest.raises(TypeError, match="argument 'axis'"):
        gpuprims.scan(x, axis=1.5)
    with pytest.raises(ValueError, match="argument 'algorithm'"):
        gpuprims.scan(x, algorithm="nope")
    with pytest.raises(TypeError, match="argument 'exclusive'"):
        gpuprims.scan(x, exclusive=1)
    with pytest.raises(TypeError, match="argument 'dtype'"):
        gpuprims.cumsum(x, dtype="complex64")
    i = np.arange(6, dtype=np.int32)
    with pytest.raises(ValueError, match="scan: arguments 'x' and 'out'"):  # converted into out first
        gpuprims.cumsum(i, dtype="float32", out=i.view(np.float32))
    with pytest.raises(ValueError, match="argument 'out'"):
        gpuprims.cumsum(x, axis=0, out=np.empty((3, 2), np.float32))
    with pytest.raises(TypeError, match="argument 'out'"):
        gpuprims.cumsum(x, axis=0, out=np.empty((2, 3), np.float64))
    with pytest.raises(ValueError, match="decoupled_lookback"):
        gpuprims.cumsum(x, algorithm="decoupled_lookback", deterministic=True)
    with pytest.raises(ValueError, match="lagged_lookback"):
        gpuprims.cumsum(x, algorithm="lagged_lookback", deterministic=True)
    with pytest.raises(ValueError, match="held_lookback"):
        gpuprims.cumsum(x, algorithm="held_lookback", deterministic=True)
    with pytest.raises(ValueError, match="columns"):
        gpuprims.cumsum(x, axis=0, algorithm="columns", deterministic=True)
    with pytest.raises(ValueError, match="0-d"):
        gpuprims.scan(np.float32(1), axis=0)


@pytest.mark.parametrize("algorithm", VARIANTS)
def test_named_variants_accepted_on_cpu(algorithm):
    # The CPU reference serves every variant name (the variants are GPU kernels).
    x = np.arange(10, dtype=np.int64)
    np.testing.assert_array_equal(gpuprims.cumsum(x, algorithm=algorithm), np.cumsum(x))


def test_non_arrays_get_the_usual_type_error():
    # axis=None and compact flatten first; a list must still be named as what it is, not as an
    # array lacking reshape().
    with pytest.raises(TypeError, match=r"scan: argument 'x': expected an array supporting DLPack"):
        gpuprims.cumsum([1.0, 2.0])
    with pytest.raises(TypeError, match=r"compact: argument 'x': expected an array supporting DLPack"):
        gpuprims.compact([1.0, 2.0], [True, False])


def _core_input(shape, strides):
    # prepare_input's tuple for a cuda.core view: (fw, device, stream, view, shape, dtype, ordered),
    # the view (ptr, dtype, shape, strides in elements or None, on CUDA, device, read-only).
    return ("cuda.core", (2, 0), 0, (4096, "float32", shape, strides, True, 0, False), shape, "float32", True)


@pytest.mark.parametrize("shape,strides,flat_strides", [
    ((2, 3, 4), None, (1,)),             # C-contiguous (no strides given)
    ((2, 3, 4), (12, 4, 1), (1,)),
    ((2, 3), (6, 2), (2,)),              # one strided run
    ((1, 5, 1), (99, 3, 7), (3,)),       # size-1 dimensions do not count
    ((2, 3), (-3, -1), (-1,)),           # a reversed run
    ((4, 3), (0, 0), (0,)),              # one element broadcast
    ((), None, (1,)), ((), (), (1,)),    # 0-d
    ((0, 3), (3, 1), (1,)), ((3, 0, 2), (7, 5, 3), (1,)),  # empty
])
def test_flat_view_merges_one_strided_run(shape, strides, flat_strides):
    """axis=None scans and compact take a cuda.core view (no reshape()) in C order when its
    dimensions form one strided run: a 1-D view of the same memory, no copy."""
    from gpuprims import _interop

    n = int(np.prod(shape))
    flat = _interop.flat_view(_core_input(shape, strides), "scan", "x")
    assert flat[4] == (n,) and flat[3][2] == (n,) and flat[3][3] == flat_strides
    assert flat[3][0] == 4096 and flat[:3] == ("cuda.core", (2, 0), 0) and flat[5:] == ("float32", True)


@pytest.mark.parametrize("shape,strides", [((3, 2), (1, 3)), ((2, 3), (6, 1)), ((2, 2, 2), (4, 1, 2))])
def test_flat_view_names_views_that_need_a_copy(shape, strides):
    from gpuprims import _interop

    with pytest.raises(TypeError, match=r"compact: argument 'mask': a \d-d view of shape .* is not one strided run "
                                        r"in C order.*pass a C-contiguous or 1-D view"):
        _interop.flat_view(_core_input(shape, strides), "compact", "mask")
