"""histogram / bincount on the CPU reference: numpy's exact results on random and adversarial data,
argument checking, dtype rules, layouts. Runs everywhere (CI has no GPU)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import torch

import gpuprims

NUMERIC = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64")
VARIANTS = tuple(v.name for v in gpuprims.variants("histogram"))


def random_samples(rng, n, dtype):
    """Fresh data spanning the dtype's interesting range (never all zeros)."""
    if dtype == "bool":
        return rng.random(n) < 0.3
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        lo, hi = max(int(info.min), -(2**40)), min(int(info.max), 2**40)
        return rng.integers(lo, hi, size=n, endpoint=True).astype(dtype)
    return (rng.standard_normal(n) * 3).astype(dtype)


def edge_samples(edges: np.ndarray, dtype: str) -> np.ndarray:
    """Every edge and its float neighbours in the sample dtype, plus far outside values."""
    e = edges.astype(dtype)
    if np.dtype(dtype).kind == "f":
        up, down = np.nextafter(e, np.inf, dtype=dtype), np.nextafter(e, -np.inf, dtype=dtype)
        extra = np.array([np.nan, np.inf, -np.inf], dtype=dtype)
        return np.concatenate([e, up, down, extra])
    return np.concatenate([e, e + 1, e - 1]).astype(dtype)


def check_histogram(a, bins=10, range=None, weights=None, **kwargs):  # noqa: A002
    expected = np.histogram(a, bins=bins, range=range, weights=weights)[0]
    got = gpuprims.histogram(a, bins, range, weights=weights, **kwargs)
    assert isinstance(got, np.ndarray) and got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if weights is None or weights.dtype.kind in "biu":  # integer weights sum exactly in float64
        np.testing.assert_array_equal(got, expected)
    else:
        rtol = {np.float16: 2.0 ** -10, np.float32: 1e-5}.get(weights.dtype.type, 1e-12)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-6)
    return got


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("bins", [1, 7, 256, 1000])
def test_random_with_range(rng, dtype, bins):
    a = random_samples(rng, 5000, dtype)
    lo, hi = (float(v) for v in np.percentile(a.astype(np.float64), [5, 90]))  # Python numbers (see docstring)
    if dtype.startswith(("int", "uint")):
        lo, hi = int(lo), int(hi) + 1
    check_histogram(a, bins, (lo, hi))


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("bins", [1, 10, 333])
def test_random_data_range(rng, dtype, bins):
    # range=None: numpy's min/max rule; for floats every step in the input dtype.
    a = random_samples(rng, 4000, dtype)
    if dtype == "float16" and bins > 100:
        a = a.astype(np.float32).clip(-4, 4).astype(dtype)
    check_histogram(a, bins)


@pytest.mark.parametrize("dtype", ("float16", "float32", "float64", "int16", "int64", "uint8"))
@pytest.mark.parametrize("bins,range_", [(10, (0.1, 0.7)), (256, (-3.3, 5.1)), (97, (-1e3, 1e3)), (5, (0, 3))])
def test_every_edge_and_its_neighbours(dtype, bins, range_):
    try:
        edges = np.histogram_bin_edges(np.zeros(0, dtype), bins, range_)
    except ValueError:
        pytest.skip("numpy: too many bins for this dtype")
    a = edge_samples(edges, dtype)
    a = np.concatenate([a, np.array(range_, dtype=np.float64).astype(dtype)])
    check_histogram(a, bins, range_)


@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
def test_data_range_edges(rng, dtype):
    # range=None with samples on the data-derived edges, including the min and max themselves.
    base = random_samples(rng, 200, dtype)
    edges = np.histogram_bin_edges(base, 37)
    a = np.concatenate([base, edges.astype(dtype)]).astype(dtype)
    a = a[(a >= base.min()) & (a <= base.max())]
    check_histogram(a, 37)


@pytest.mark.parametrize("dtype", ("float16", "float32", "float64", "int32", "uint16"))
def test_random_ranges_and_bin_counts(rng, dtype):
    # Many (bins, range) pairs, with samples on and next to every edge: exercises the float32
    # shortcut and the margin (bin_math.hpp) against numpy's own rounding.
    for _ in range(60):
        bins = int(rng.choice([1, 2, 3, 10, 100, 255, 256, 1000, 4099]))
        lo = float(rng.standard_normal() * 10.0 ** rng.integers(-3, 4))
        hi = lo + float(rng.exponential() * 10.0 ** rng.integers(-2, 4))
        if dtype in ("int32", "uint16"):
            lo, hi = int(np.floor(abs(lo))), int(np.floor(abs(lo))) + int(np.ceil(hi - lo)) + 1
        try:
            edges = np.histogram_bin_edges(np.zeros(0, dtype), bins, (lo, hi))
        except ValueError:
            with pytest.raises(ValueError, match="too many bins"):
                gpuprims.histogram(np.zeros(3, dtype), bins, (lo, hi))
            continue
        a = np.concatenate([edge_samples(edges, dtype),
                            np.linspace(lo, hi, 997).astype(dtype),
                            (lo + (hi - lo) * rng.random(500)).astype(dtype)])
        check_histogram(a, bins, (lo, hi))


def test_range_bounds_beyond_float64_raise():
    with pytest.raises(ValueError, match="histogram: argument 'range': expected finite"):
        gpuprims.histogram(np.zeros(3), 2, (0, 10**400))


def test_integer_ranges_and_full_dtype_ranges(rng):
    for dtype in ("int8", "int16", "uint8", "uint16"):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, size=3000, endpoint=True).astype(dtype)
        a[:2] = info.min, info.max
        for bins in (1, 3, 256, 1000):
            check_histogram(a, bins, (int(info.min), int(info.max) + 1))
            check_histogram(a, bins, (int(info.min), int(info.max)))
            check_histogram(a, bins)
    check_histogram(np.arange(-5, 20, dtype=np.int32), 7, (0, 10))  # 10 not divisible by 7


def test_uint64_beyond_int64(rng):
    """uint64 samples above 2^63 (no int64 holds them): the data's range read back as uint64, and
    explicit ranges up there, against numpy."""
    a = (rng.integers(0, 2**62, 3000, dtype=np.uint64) * np.uint64(3)) | np.uint64(1)
    a[:3] = 0, 2**63, 2**64 - 1
    for bins in (1, 4, 7, 1000):
        check_histogram(a, bins)
        check_histogram(a, bins, (2.0**60, 2.0**63 + 2.0**62))  # numpy overflows on ints this large
    top = np.full(5, 2**64 - 1, np.uint64)
    top[1::2] = 2**63
    check_histogram(top, 3)


def test_bool_counts_as_uint8(rng):
    a = rng.random(1000) < 0.4
    with pytest.warns(RuntimeWarning):
        expected = np.histogram(a, 2)[0]
    np.testing.assert_array_equal(gpuprims.histogram(a, 2), expected)
    np.testing.assert_array_equal(gpuprims.histogram(a, 4, (0, 2)), np.histogram(a.astype(np.uint8), 4, (0, 2))[0])


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("wdtype", (torch.float32, torch.float64) if torch is not None else ())
def test_weights_of_an_empty_torch_input(wdtype):
    """An empty torch tensor's data pointer is null: the call must still see weights given (float
    sums), not counts (it once wrote int64 counts into the float32 output, past its end)."""
    out = torch.full((8,), -7.0, dtype=wdtype)
    got = gpuprims.histogram(torch.zeros(0), 4, (0.0, 1.0), weights=torch.zeros(0, dtype=wdtype), out=out[:4])
    assert got.dtype == wdtype
    assert torch.equal(out, torch.tensor([0, 0, 0, 0, -7, -7, -7, -7], dtype=wdtype))
    fresh = gpuprims.histogram(torch.zeros(0), 32, (-8, 8), weights=torch.zeros(0, dtype=wdtype))
    assert fresh.dtype == wdtype and torch.equal(fresh, torch.zeros(32, dtype=wdtype))
    counts = gpuprims.bincount(torch.zeros(0, dtype=torch.int64), minlength=5, weights=torch.zeros(0, dtype=wdtype))
    assert torch.equal(counts, torch.zeros(5, dtype=torch.float64))


def test_single_value_and_empty_inputs():
    check_histogram(np.full(100, 3.5, np.float32), 5)  # numpy widens to (3, 4)
    check_histogram(np.full(100, 7, np.uint8), 4)
    check_histogram(np.zeros(0, np.float32), 4)
    check_histogram(np.zeros(0, np.int16), 3, (1, 2))
    check_histogram(np.zeros((3, 0), np.float64), 3)


def test_nan_and_inf_are_ignored_with_a_range():
    a = np.array([np.nan, np.inf, -np.inf, 0.0, 0.5, 1.0, 1.5], np.float32)
    check_histogram(a, 4, (0, 1))


def test_nan_or_inf_in_data_range_raises_like_numpy():
    for bad in (np.nan, np.inf):
        a = np.array([0.0, bad, 1.0])
        with pytest.raises(ValueError):
            np.histogram(a, 3)
        with pytest.raises(ValueError, match="histogram: argument 'x': autodetected range"):
            gpuprims.histogram(a, 3)


def test_float16_too_many_bins_raises_like_numpy():
    a = np.array([1.0, 1.0078125], np.float16)  # 8 float16 values apart
    with pytest.raises(ValueError):
        np.histogram(a, 64)
    with pytest.raises(ValueError, match="too many bins"):
        gpuprims.histogram(a, 64)
    check_histogram(a, 8)
    with pytest.raises(ValueError):
        np.histogram(a, 1000, (1.0, 1.01))
    with pytest.raises(ValueError, match="too many bins"):
        gpuprims.histogram(a, 1000, (1.0, 1.01))


def test_bins_beyond_float_resolution_of_wide_ranges(rng):
    a = (1e6 + rng.random(2000) * 64).astype(np.float32)
    for bins in (16, 63, 64, 100):
        try:
            np.histogram(a, bins, (1e6, 1e6 + 64))
        except ValueError:
            with pytest.raises(ValueError, match="too many bins"):
                gpuprims.histogram(a, bins, (1e6, 1e6 + 64))
            continue
        check_histogram(a, bins, (1e6, 1e6 + 64))


WEIGHT_DTYPES = ("float32", "float64", "float16", "int32", "int64", "uint8", "int8", "uint64", "bool")


def random_weights(rng, n, wdtype):
    if wdtype == "bool":
        return rng.random(n) < 0.3
    if wdtype in ("int8", "uint8"):  # sparse, so that a bin's sum stays in range (it saturates beyond)
        return ((rng.random(n) < 0.05) * rng.integers(1, 3, n)).astype(wdtype)
    if np.dtype(wdtype).kind in "iu":
        info = np.iinfo(wdtype)
        return rng.integers(max(int(info.min), -1000), min(int(info.max), 1000), n, endpoint=True).astype(wdtype)
    return rng.standard_normal(n).astype(wdtype)


@pytest.mark.parametrize("wdtype", WEIGHT_DTYPES)
@pytest.mark.parametrize("dtype", ("uint8", "int32", "float32"))
def test_weights(rng, dtype, wdtype):
    """Weights of any dtype: the result in the weights' dtype, numpy's (float64 sums, converted once)."""
    a = random_samples(rng, 3000, dtype)
    w = random_weights(rng, 3000, wdtype)
    check_histogram(a, 17, None, weights=w)
    check_histogram(a, 5, (0, 50), weights=w)


def test_any_layout(rng):
    a = random_samples(rng, 6 * 7 * 5, "float32").reshape(6, 7, 5)
    for view in (a, a.T, a[::-1, :, ::2], a[:, 3], a[::2, ::-3], np.broadcast_to(a[0:1], (4, 7, 5)), a[2, 3, 1]):
        check_histogram(view, 9, (-2, 3))
        w = rng.random(view.shape)
        check_histogram(view, 9, (-2, 3), weights=w)
        check_histogram(view, 9, (-2, 3), weights=np.asarray(w.T.copy().T))


@pytest.mark.parametrize("algorithm", VARIANTS + ("auto",))
def test_every_algorithm_name_runs_the_reference(rng, algorithm):
    a = random_samples(rng, 1000, "uint8")
    check_histogram(a, 256, (0, 256), algorithm=algorithm)


def test_out_argument(rng):
    a = random_samples(rng, 1000, "float64")
    out = np.full(8, -7, np.int64)
    got = gpuprims.histogram(a, 8, (-1, 1), out=out)
    assert got is out
    np.testing.assert_array_equal(out, np.histogram(a, 8, (-1, 1))[0])
    strided = np.full(16, -7, np.int64)
    gpuprims.histogram(a, 8, (-1, 1), out=strided[::2])
    np.testing.assert_array_equal(strided[::2], out)
    assert (strided[1::2] == -7).all()
    with pytest.raises(TypeError, match="histogram: argument 'out': expected dtype int64, got int32"):
        gpuprims.histogram(a, 8, out=np.zeros(8, np.int32))
    with pytest.raises(ValueError, match="histogram: argument 'out': expected shape"):
        gpuprims.histogram(a, 8, out=np.zeros(9, np.int64))
    ro = np.zeros(8, np.int64)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="read-only"):
        gpuprims.histogram(a, 8, out=ro)


def test_argument_errors():
    a = np.arange(10, dtype=np.float32)
    with pytest.raises(TypeError, match="histogram: argument 'bins': expected an int"):
        gpuprims.histogram(a, 2.5)
    with pytest.raises(TypeError, match="histogram: argument 'bins'"):
        gpuprims.histogram(a, "auto")
    with pytest.raises(ValueError, match=r"histogram: argument 'bins': expected an int in \[1, "):
        gpuprims.histogram(a, 0)
    with pytest.raises(ValueError, match="histogram: argument 'range': expected min <= max"):
        gpuprims.histogram(a, 3, (2, 1))
    with pytest.raises(ValueError, match="histogram: argument 'range': expected finite"):
        gpuprims.histogram(a, 3, (0, np.inf))
    with pytest.raises(ValueError, match="histogram: argument 'range': expected a pair"):
        gpuprims.histogram(a, 3, (0, 1, 2))
    with pytest.raises(TypeError, match="histogram: argument 'range'"):
        gpuprims.histogram(a, 3, (0, "x"))
    with pytest.raises(TypeError, match="argument 'x': expected a bool, integer or float dtype, got complex64"):
        gpuprims.histogram(a.astype(np.complex64), 3)
    with pytest.raises(TypeError, match="histogram: argument 'weights': expected a bool, integer or float dtype, got complex64"):
        gpuprims.histogram(a, 3, weights=np.ones(10, np.complex64))
    with pytest.raises(ValueError, match="histogram: argument 'weights': expected the shape of x"):
        gpuprims.histogram(a, 3, weights=np.ones(11))
    with pytest.raises(ValueError, match="histogram: argument 'algorithm': expected one of 'auto'"):
        gpuprims.histogram(a, 3, algorithm="fastest")
    with pytest.raises(TypeError, match="histogram: argument 'algorithm': expected a str"):
        gpuprims.histogram(a, 3, algorithm=1)
    with pytest.raises(TypeError, match="histogram: argument 'x': expected an array"):
        gpuprims.histogram([1, 2, 3], 3)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_bfloat16_through_torch_cpu(rng):
    # numpy holds no bfloat16 without ml_dtypes; with edges exact in bfloat16 numpy's float32 result
    # on the same values is the bfloat16 result.
    v = np.round(rng.standard_normal(4000) * 16) / 8
    t = torch.tensor(v, dtype=torch.bfloat16)
    a32 = t.float().numpy()
    for bins, range_ in ((16, (-2, 2)), (64, (-4, 4)), (1, (0, 1))):
        got = gpuprims.histogram(t, bins, range_)
        assert torch.is_tensor(got) and got.dtype == torch.int64
        np.testing.assert_array_equal(got.numpy(), np.histogram(a32, bins, range_)[0])


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torch_cpu_tensors_and_out(rng):
    v = rng.standard_normal(1000)
    t = torch.tensor(v, dtype=torch.float64)
    got = gpuprims.histogram(t[::3], 12, (-2, 2))
    np.testing.assert_array_equal(got.numpy(), np.histogram(v[::3], 12, (-2, 2))[0])
    out = torch.full((12,), -1, dtype=torch.int64)
    assert gpuprims.histogram(t, 12, (-2, 2), out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.histogram(v, 12, (-2, 2))[0])


# ---------------------------------------------------------------------------------------------
# bincount


@pytest.mark.parametrize("dtype", ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"))
def test_bincount_random(rng, dtype):
    high = 1 if dtype == "bool" else 300 if dtype not in ("int8", "uint8") else 127
    a = rng.integers(0, high, size=2000, endpoint=True).astype(dtype)
    for minlength in (0, 5, 1000):
        expected = np.bincount(a, minlength=minlength)
        got = gpuprims.bincount(a, minlength)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, expected)
    w = rng.standard_normal(2000)
    np.testing.assert_allclose(gpuprims.bincount(a, weights=w), np.bincount(a, weights=w), rtol=1e-12, atol=1e-12)
    got = gpuprims.bincount(a, weights=w.astype(np.float32))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.bincount(a, weights=w.astype(np.float32)), rtol=1e-12, atol=1e-12)
    for wdtype in ("int32", "uint8", "bool", "float16", "uint64"):  # numpy's float64 sums, whatever the weights
        wi = random_weights(rng, 2000, wdtype)
        got = gpuprims.bincount(a, weights=wi)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, np.bincount(a, weights=wi), rtol=1e-12, atol=1e-12)


def test_bincount_empty_strided_and_out(rng):
    np.testing.assert_array_equal(gpuprims.bincount(np.zeros(0, np.int32)), np.bincount(np.zeros(0, np.int32)))
    np.testing.assert_array_equal(gpuprims.bincount(np.zeros(0, np.int32), 4), np.zeros(4, np.int64))
    a = rng.integers(0, 50, 999).astype(np.int32)
    np.testing.assert_array_equal(gpuprims.bincount(a[::-3]), np.bincount(a[::-3]))
    out = np.full(60, -1, np.int64)
    assert gpuprims.bincount(a, out=out) is out
    np.testing.assert_array_equal(out, np.bincount(a, minlength=60))
    short = np.full(10, -1, np.int64)
    with pytest.raises(ValueError, match=r"bincount: argument 'x': \d+ values outside \[0, 10\)"):
        gpuprims.bincount(a, out=short)
    gpuprims.bincount(a, out=short, out_of_range="ignore")
    np.testing.assert_array_equal(short, np.bincount(a)[:10])
    neg = np.array([3, -1, 2], np.int16)
    with pytest.raises(ValueError, match="bincount: argument 'x': expected non-negative values, got a minimum of -1"):
        gpuprims.bincount(neg)
    with pytest.raises(ValueError, match="bincount: argument 'x': 1 values outside"):
        gpuprims.bincount(neg, out=np.zeros(4, np.int64))
    with pytest.raises(ValueError, match="bincount: argument 'x': 1 values outside"):
        gpuprims.bincount(neg, weights=np.ones(3), out=np.zeros(4))


def test_bincount_argument_errors():
    a = np.arange(5, dtype=np.int32)
    with pytest.raises(TypeError, match="bincount: argument 'x': expected one of .*got float32"):
        gpuprims.bincount(a.astype(np.float32))
    with pytest.raises(TypeError, match="bincount: argument 'x': expected one of .*got uint64"):  # numpy's too
        gpuprims.bincount(a.astype(np.uint64))
    with pytest.raises(ValueError, match="bincount: argument 'x': expected a 1-D array"):
        gpuprims.bincount(a.reshape(1, 5))
    with pytest.raises(ValueError, match="bincount: argument 'minlength'"):
        gpuprims.bincount(a, -1)
    with pytest.raises(ValueError, match="bincount: argument 'out_of_range'"):
        gpuprims.bincount(a, out_of_range="clip")
    with pytest.raises(ValueError, match="bincount: argument 'out': expected at least minlength=9"):
        gpuprims.bincount(a, 9, out=np.zeros(6, np.int64))
    with pytest.raises(TypeError, match="bincount: argument 'out': expected dtype float64"):
        gpuprims.bincount(a, weights=np.ones(5), out=np.zeros(6, np.int64))


def test_variants_listed():
    names = [v.name for v in gpuprims.variants("histogram")]
    assert names == ["global_atomics", "shared_privatized", "warp_aggregated"]
    assert [v.name for v in gpuprims.variants("bincount")] == names


@pytest.mark.parametrize("call", [
    lambda x: gpuprims.histogram(x, 5, algorithm="nope"),
    lambda x: gpuprims.histogram(x, 5, out=np.empty(4, np.int64)),
    lambda x: gpuprims.histogram(x, 5, out=np.empty(5, np.float32)),
    lambda x: gpuprims.bincount(x.astype(np.int32), algorithm="nope"),
], ids=["histogram_algorithm", "histogram_out_shape", "histogram_out_dtype", "bincount_algorithm"])
def test_errors_come_before_the_data_range_is_read(monkeypatch, call):
    # range=None / bincount without out= read the data's min and max first (on a GPU: two
    # reductions and a synchronization); argument errors must not cost that work.
    reads = []
    monkeypatch.setattr(gpuprims._C, "data_range", lambda *args: reads.append(args) or (0.0, 1.0))
    with pytest.raises((ValueError, TypeError), match="argument '(algorithm|out)'"):
        call(np.arange(10.0))
    assert reads == []
