"""compact / nonzero / segmented_reduce on the CPU reference (CI): semantics and argument checks."""
from __future__ import annotations

import numpy as np
import pytest

import gpuprims
from conftest import ALL_DTYPES, torch
from scan_reference import nonzero_values


def masks(rng, n):
    yield np.zeros(n, bool)
    yield np.ones(n, bool)
    yield rng.random(n) < 0.5
    yield np.arange(n) % 2 == 0


@pytest.mark.parametrize("dtype", ("uint8", "int16", "float32", "float64", "int64"))
def test_compact_and_nonzero(rng, dtype):
    for n in (0, 1, 17, 5000):
        x = (rng.standard_normal(n) * 100).astype(dtype)
        for m in masks(rng, n):
            np.testing.assert_array_equal(gpuprims.compact(x, m), x[m])
            np.testing.assert_array_equal(gpuprims.nonzero(m), np.flatnonzero(m))
            out = np.full(n, 7, dtype)
            got, count = gpuprims.compact(x, m, out=out)
            assert got is out and int(count) == m.sum()
            np.testing.assert_array_equal(out[:m.sum()], x[m])


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != "bfloat16"])  # numpy holds no bfloat16
def test_nonzero_of_any_dtype(rng, dtype):
    """numpy's flatnonzero of any dtype: -0.0 is zero; NaN, +-inf, subnormals and integers whose only set
    bit is the top one are not."""
    for n in (0, 1, 17, 5000):
        a = nonzero_values(rng, n, dtype)
        want = np.flatnonzero(a)
        np.testing.assert_array_equal(gpuprims.nonzero(a), want)
        np.testing.assert_array_equal(gpuprims.nonzero(a[::-3]), np.flatnonzero(a[::-3]))
        out = np.full(n, -7, np.int64)
        got, count = gpuprims.nonzero(a, out=out)
        assert got is out and int(count) == len(want)
        np.testing.assert_array_equal(out[:len(want)], want)
    grid = nonzero_values(rng, 42, dtype).reshape(6, 7)
    np.testing.assert_array_equal(gpuprims.nonzero(grid.T), np.flatnonzero(grid.T))


def test_compact_nd_strided_and_short_out(rng):
    x = rng.standard_normal((6, 7))
    m = rng.random((6, 7)) < 0.3
    np.testing.assert_array_equal(gpuprims.compact(x, m), x[m])
    np.testing.assert_array_equal(gpuprims.compact(x.T, m.T), x.T[m.T])
    y = rng.standard_normal(100)[::-3]
    k = np.ones(len(y), bool)
    np.testing.assert_array_equal(gpuprims.compact(y, k), y)
    out = np.zeros(3)
    _, count = gpuprims.compact(y, k, out=out)
    assert int(count) == len(y)
    np.testing.assert_array_equal(out, y[:3])


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_compact_of_torch_views_that_reshape_copies():
    """x.reshape(-1) of a transposed or stepped tensor is a copy, which the call must keep alive
    until its kernels ran (it once dropped it first: wrong values or a spurious overlap error)."""
    base = torch.arange(1, 4097, dtype=torch.int64).reshape(64, 64)
    m = torch.rand(64, 64, generator=torch.Generator().manual_seed(3)) < 0.5
    for x, mask in ((base.T, m), (base[:, ::2], m[:, ::2]), (base.T, m.T)):
        for _ in range(20):  # the freed copy is handed out again by the next allocations
            got = gpuprims.compact(x, mask)
            scratch = torch.full((4096,), -1, dtype=torch.int64)  # noqa: F841 (reuses freed memory)
            assert torch.equal(got, x.reshape(-1)[mask.reshape(-1)])
            assert torch.equal(gpuprims.nonzero(mask), torch.nonzero(mask.reshape(-1)).reshape(-1))


def test_compact_errors():
    x = np.arange(4.0)
    with pytest.raises(TypeError, match="argument 'mask'"):
        gpuprims.compact(x, np.ones(4, np.int32))
    with pytest.raises(ValueError, match="same shape"):
        gpuprims.compact(x, np.ones(5, bool))
    # a list is no array: named as such, not compared as a shape ()
    with pytest.raises(TypeError, match="argument 'x': expected an array supporting DLPack"):
        gpuprims.compact([0.0, 1.0, 2.0, 3.0], np.ones(4, bool))
    with pytest.raises(TypeError, match="argument 'mask': expected an array supporting DLPack"):
        gpuprims.compact(x, [True, False, True, False])
    with pytest.raises(TypeError, match="argument 'out'"):
        gpuprims.compact(x, np.ones(4, bool), out=np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="argument 'out'"):
        gpuprims.nonzero(np.ones(4, bool), out=np.zeros(4, np.int32))


@pytest.mark.parametrize("op", ("sum", "prod", "min", "max"))
@pytest.mark.parametrize("dtype", ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "float32",
                                   "float64"))
def test_segmented_reduce(rng, op, dtype):
    lengths = [0, 1, 5, 0, 300, 2, 0]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    n = int(offsets[-1])
    if op == "prod":
        x = (rng.uniform(0.9, 1.1, n) if dtype.startswith("float") else rng.integers(1, 4, n)).astype(dtype)
    else:
        x = (rng.standard_normal(n) * 50).astype(dtype)
    for off in (offsets.astype(np.int64), offsets.astype(np.int32)):
        got = gpuprims.segmented_reduce(x, off, op)
        ufunc = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}[op]
        acc = x.astype(got.dtype)
        for s, (b, e) in enumerate(zip(off[:-1], off[1:])):
            if b == e:
                identity = {"sum": 0, "prod": 1}.get(op)
                if identity is None:
                    big = np.inf if got.dtype.kind == "f" else (np.iinfo(got.dtype).max if op == "min" else np.iinfo(got.dtype).min)
                    identity = big if op == "min" else (-big if got.dtype.kind == "f" else big)
                assert got[s] == identity, (s, got[s])
            elif dtype.startswith("float") and op in ("sum", "prod"):
                np.testing.assert_allclose(got[s], ufunc.reduce(acc[b:e].astype(np.float64)), rtol=1e-5)
            else:
                assert got[s] == ufunc.reduce(acc[b:e]), s


def test_segmented_reduce_all_empty():
    x = np.arange(10.0)
    for where in (0, 4, 10):
        off = np.full(6, where, np.int32)
        np.testing.assert_array_equal(gpuprims.segmented_reduce(x, off), np.zeros(5))
        np.testing.assert_array_equal(gpuprims.segmented_reduce(x, off, "min"), np.full(5, np.inf))
    np.testing.assert_array_equal(gpuprims.segmented_reduce(np.zeros(0, np.int64), np.zeros(3, np.int64), "max"),
                                  np.full(2, np.iinfo(np.int64).min))


def test_segmented_reduce_errors():
    x = np.arange(10.0)
    with pytest.raises(ValueError, match="argument 'offsets'"):
        gpuprims.segmented_reduce(x, np.array([0, 5, 3]))
    with pytest.raises(ValueError, match="argument 'offsets'"):
        gpuprims.segmented_reduce(x, np.array([0, 11]))
    with pytest.raises(TypeError, match="argument 'offsets'"):
        gpuprims.segmented_reduce(x, np.array([0.0, 5.0]))
    with pytest.raises(ValueError, match="argument 'op'"):
        gpuprims.segmented_reduce(x, np.array([0, 5]), "mean")
    assert gpuprims.segmented_reduce(x, np.array([0])).shape == (0,)
    with pytest.raises(ValueError, match=r"^segmented_reduce: argument 'algorithm': expected one of 'auto', 'ranges', "
                                         r"'blocks', got 'fast'$"):
        gpuprims.segmented_reduce(x, np.array([0, 5]), algorithm="fast")
    with pytest.raises(TypeError, match=r"^segmented_reduce: argument 'algorithm': expected a str, got None$"):
        gpuprims.segmented_reduce(x, np.array([0, 5]), algorithm=None)


def test_segmented_reduce_variants_on_the_cpu(rng):
    """Both GPU paths are listed; on CPU arrays every algorithm= runs the CPU reference."""
    rows = gpuprims.variants("segmented_reduce")
    assert [v.name for v in rows] == ["ranges", "blocks"]
    assert all(v.deterministic and v.description for v in rows)
    x = rng.standard_normal(1000)
    offsets = np.array([0, 3, 3, 700, 1000], np.int64)
    want = [x[0:3].sum(), 0.0, x[3:700].sum(), x[700:].sum()]
    for algorithm in ("auto", "ranges", "blocks"):
        np.testing.assert_allclose(gpuprims.segmented_reduce(x, offsets, algorithm=algorithm), want, rtol=1e-12)
