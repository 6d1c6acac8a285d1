"""topk on the CPU reference (runs in CI without a GPU): every dtype, shape and axis against numpy's
stable ranking (check_topk with the reference's lowest-index ties), NaN / inf / signed zeros and
ties, views of any strides, out= of any strides, frameworks, torch.topk where torch is installed,
and the argument checks the GPU path shares."""
from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from conftest import FLOAT_DTYPES, INT_DTYPES, TORCH_CPU, Framework, _optional, jax, random_values, to_numpy, torch
from topk_reference import bits_of, check_topk, reference_topk

import gpuprims

NUMERIC_DTYPES = INT_DTYPES + FLOAT_DTYPES
VARIANTS = tuple(v.name for v in gpuprims.variants("topk"))
ALGORITHMS = ("auto",) + VARIANTS
SIZES = (1, 2, 31, 33, 1000, 4097)
FLAGS = tuple(itertools.product((True, False), (True, False)))  # (largest, sorted)
# NaNs of every sign and payload class (quiet, signalling), as bit patterns of each float width
NAN_BITS = {"float16": (0x7E00, 0xFE00, 0x7C01, 0xFFFF), "bfloat16": (0x7FC0, 0xFFC0, 0x7F81, 0xFFFF),
            "float32": (0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFC12345),
            "float64": (0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFF123456789ABCD)}
UNSIGNED = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _ml_bfloat16():
    """ml_dtypes' bfloat16 where numpy arrays of it reach gpuprims, else a skip saying why."""
    ml = _optional("ml_dtypes")
    if ml is None:
        pytest.skip("bfloat16 on the CPU needs torch or ml_dtypes")
    try:
        gpuprims.topk(np.zeros(2, ml.bfloat16), 1)
    except TypeError as e:
        pytest.skip(f"bfloat16 on the CPU needs torch: numpy's ml_dtypes arrays are refused ({e})")
    return ml.bfloat16


def make(a: np.ndarray, dtype: str):
    """An x of `dtype` holding a's values: a numpy array; bfloat16 (which numpy holds only through
    ml_dtypes) a torch CPU tensor, or else a numpy array of ml_dtypes.bfloat16."""
    if dtype != "bfloat16":
        return np.asarray(a).astype(dtype)
    if torch is not None:
        return TORCH_CPU.make(np.asarray(a, np.float32), "bfloat16")
    return np.asarray(a, np.float32).astype(_ml_bfloat16())


def from_bits(bits: np.ndarray, dtype: str):
    """An x of float `dtype` with exactly these bit patterns (NaN payloads, -0.0)."""
    u = np.asarray(bits).astype(UNSIGNED[np.dtype("float16" if dtype == "bfloat16" else dtype).itemsize])
    if dtype != "bfloat16":
        return u.view(dtype)
    if torch is not None:
        return torch.from_numpy(u.view(np.int16).copy()).view(torch.bfloat16)
    return u.view(_ml_bfloat16())


def special_values(dtype: str) -> np.ndarray:
    """Bit patterns of a row of every special value: each NaN of NAN_BITS, +-inf, +-0.0, +-1, a
    subnormal, the largest finite, duplicates of them."""
    b = {"float16": (0x7C00, 0x0000, 0x3C00, 0x0001, 0x7BFF), "bfloat16": (0x7F80, 0x0000, 0x3F80, 0x0001, 0x7F7F),
         "float32": (0x7F800000, 0, 0x3F800000, 1, 0x7F7FFFFF),
         "float64": (0x7FF0000000000000, 0, 0x3FF0000000000000, 1, 0x7FEFFFFFFFFFFFFF)}[dtype]
    sign = 1 << (8 * (2 if dtype == "bfloat16" else np.dtype(dtype).itemsize) - 1)
    finite = [v | s for v in b for s in (0, sign)]
    return np.array(list(NAN_BITS[dtype]) + finite + finite[:4] + list(NAN_BITS[dtype][:2]), np.uint64)


def check(x, k, axis=-1, largest=True, sorted=True, algorithm="auto", out=None):  # noqa: A002
    """topk(x) against numpy's ranking: a TopK of fresh arrays (or of out's), the CPU reference's
    answer exactly (ties by lowest index)."""
    got = gpuprims.topk(x, k, axis, largest=largest, sorted=sorted, algorithm=algorithm, out=out)
    assert isinstance(got, gpuprims.TopK) and len(got) == 2
    if out is not None:
        assert got.values is out[0] and got.indices is out[1]
    else:
        assert type(got.values) is type(x) and type(got.indices) is type(x)
    check_topk(to_numpy(x), k, axis, largest, sorted, to_numpy(got.values), to_numpy(got.indices), lowest_ties=True,
               what=f"topk[{algorithm}]")
    return got


def test_variants_listed():
    assert VARIANTS[-2:] == ("block_per_row", "split_row")  # the radix selections, last on the ladder
    assert set(VARIANTS) <= {"sort", "block_per_row", "split_row"}
    assert all(v.description for v in gpuprims.variants("topk"))
    assert not any(v.deterministic for v in gpuprims.variants("topk") if v.name in ("block_per_row", "split_row"))


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
def test_every_dtype_1d(rng, dtype):
    for n in SIZES:
        x = make(random_values(rng, n, dtype), dtype)
        for k in sorted({0, 1, n, int(rng.integers(0, n + 1))}):
            for largest, srt in FLAGS:
                check(x, k, largest=largest, sorted=srt)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
def test_every_dtype_2d_and_3d(rng, dtype):
    for shape, axes in (((33, 31), (0, 1, -1, -2)), ((4, 33, 5), (0, 1, 2, -1, -3)), ((2, 1000, 3), (1,)),
                        ((1, 4097), (-1,)), ((5, 1), (0, 1))):
        x = make(random_values(rng, int(np.prod(shape)), dtype).reshape(shape), dtype)
        for i, axis in enumerate(axes):
            n = shape[axis]
            for j, k in enumerate(sorted({1, n, int(rng.integers(0, n + 1))})):
                largest, srt = FLAGS[(i + j) % 4]
                check(x, k, axis, largest=largest, sorted=srt)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integers_of_the_full_range(rng, dtype):
    """Keys of every bit pattern: the sign bit of signed types, the top bit of unsigned ones, the
    extremes (the key transform's edges)."""
    info = np.iinfo(dtype)
    for n in (2, 33, 4097):
        a = rng.integers(int(info.min), int(info.max), size=n, endpoint=True, dtype=dtype)
        a[rng.integers(0, n, 2)] = info.min
        a[rng.integers(0, n, 2)] = info.max
        for k in (1, n // 2, n):
            for largest, srt in FLAGS:
                check(a, k, largest=largest, sorted=srt)
    if info.min < 0:  # -1 and 0: adjacent keys across the sign flip
        got = gpuprims.topk(np.array([0, -1, 1, info.min, info.max], dtype), 5)
        np.testing.assert_array_equal(got.indices, [4, 2, 0, 1, 3])


def special_row_bits(dtype):
    """[1, NaN, -0.0, +0.0, -inf, +inf, -NaN with a payload] as bit patterns of dtype."""
    one, nan, inf, nneg = {"float16": (0x3C00, 0x7E00, 0x7C00, 0xFE01), "bfloat16": (0x3F80, 0x7FC0, 0x7F80, 0xFFC1),
                           "float32": (0x3F800000, 0x7FC00000, 0x7F800000, 0xFFC00001),
                           "float64": (0x3FF0000000000000, 0x7FF8000000000000, 0x7FF0000000000000,
                                       0xFFF8000000000001)}[dtype]
    sign = 1 << (8 * (2 if dtype == "bfloat16" else np.dtype(dtype).itemsize) - 1)
    return np.array([one, nan, sign, 0, inf | sign, inf, nneg], np.uint64)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_nan_inf_and_signed_zeros_rank(dtype):
    """NaN (any sign, any payload) above +inf for both directions, -0.0 just below +0.0, values
    copied bit for bit; ties (every NaN is one rank) by increasing index."""
    x = from_bits(special_row_bits(dtype), dtype)
    xb = bits_of(to_numpy(x))
    for k, largest, want in ((7, True, [1, 6, 5, 0, 3, 2, 4]), (7, False, [4, 2, 3, 0, 5, 1, 6]),
                             (1, True, [1]), (2, True, [1, 6]), (3, True, [1, 6, 5]),
                             (5, False, [4, 2, 3, 0, 5]),  # NaNs for largest=False only when needed
                             (6, False, [4, 2, 3, 0, 5, 1]), (2, False, [4, 2])):
        got = gpuprims.topk(x, k, largest=largest)
        np.testing.assert_array_equal(to_numpy(got.indices), want, err_msg=f"k={k} largest={largest}")
        np.testing.assert_array_equal(bits_of(to_numpy(got.values)), xb[want])
        got = gpuprims.topk(x, k, largest=largest, sorted=False)
        assert sorted(to_numpy(got.indices).tolist()) == sorted(want)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_special_value_rows(rng, dtype):
    """Rows of special values mixed with random data, all NaN, all -inf, all equal, only signed zeros,
    few distinct values (the k-th tied with many), at every size."""
    pool = special_values(dtype)
    normal_bits = bits_of(to_numpy(make(random_values(rng, 5000, dtype), dtype)))
    if dtype == "bfloat16" and normal_bits.itemsize == 4:
        normal_bits = normal_bits >> 16  # to_numpy reads torch's bfloat16 back as float32
    sign = 1 << (8 * (2 if dtype == "bfloat16" else np.dtype(dtype).itemsize) - 1)
    for n in (1, 2, 31, 33, 1000, 4097):
        rows = [rng.choice(pool, n),  # only special values
                np.where(rng.random(n) < 0.2, rng.choice(pool, n), normal_bits[:n]),  # sprinkled
                np.full(n, NAN_BITS[dtype][0]), rng.choice(np.array(NAN_BITS[dtype], np.uint64), n),
                np.full(n, pool[len(NAN_BITS[dtype])] | sign),  # all -inf
                np.full(n, normal_bits[0]),  # all equal
                rng.choice(np.array([0, sign], np.uint64), n),  # +-0.0
                rng.choice(normal_bits[:3], n)]  # three values: ties at the k-th
        x = from_bits(np.stack(rows).astype(np.uint64), dtype)
        for k in sorted({1, n // 2 + 1, n}):
            for largest, srt in FLAGS:
                check(x, k, largest=largest, sorted=srt)
        check(x.T if isinstance(x, np.ndarray) else x.t(), max(1, n // 3), 0)


def test_ties_take_the_lowest_indices():
    x = np.array([5, 1, 5, 5, 2, 1], np.int32)
    np.testing.assert_array_equal(gpuprims.topk(x, 2).indices, [0, 2])
    np.testing.assert_array_equal(gpuprims.topk(x, 2, largest=False).indices, [1, 5])
    np.testing.assert_array_equal(gpuprims.topk(x, 4, sorted=True).indices, [0, 2, 3, 4])
    assert sorted(gpuprims.topk(x, 4, sorted=False).indices.tolist()) == [0, 2, 3, 4]
    z = np.zeros((3, 40), np.float32) + 2.5
    np.testing.assert_array_equal(gpuprims.topk(z, 7).indices, np.tile(np.arange(7), (3, 1)))


@pytest.mark.parametrize("dtype", ("int16", "uint32", "float32", "float64"))
def test_many_ties(rng, dtype):
    for n in (33, 1000, 4097):
        x = rng.integers(0, 3, size=(3, n)).astype(dtype)
        for k in (1, n // 3, n // 2, n - 1, n):
            for largest, srt in FLAGS:
                check(x, k, largest=largest, sorted=srt)


def test_views_of_any_strides(rng):
    base = rng.standard_normal((40, 50, 6)).astype(np.float32)
    views = (base[::-1], base[:, ::-3], base[1:, 2:, 1], base[::2, 1::5].transpose(2, 0, 1), base.T,
             np.broadcast_to(base[:1, :1, :1], (4, 5, 6)), np.broadcast_to(base[:, :1, 0], (40, 50)),
             base[:, :, ::-1].transpose(1, 2, 0), base.view(np.int32)[3:, ::-7])
    for v in views:
        for axis in range(v.ndim):
            n = v.shape[axis]
            for k, (largest, srt) in zip((1, n, max(1, n // 2)), FLAGS):
                check(v, k, axis, largest=largest, sorted=srt)
                check(v, k, axis - v.ndim, largest=largest, sorted=srt, algorithm="split_row")


def test_many_dimensions(rng):
    """Dimensions that do not merge: 8 besides the axis run, 9 are a ValueError naming the limit."""
    x = rng.standard_normal((2,) * 9).astype(np.float32).transpose()
    check(x, 1, 0)
    check(x, 2, 4, largest=False)
    check(rng.standard_normal((3, 2, 4, 5, 2, 3)).astype(np.float64), 3, 2)  # contiguous: merges
    with pytest.raises(ValueError, match=r"topk: argument 'x': expected at most 8 dimensions besides the axis"):
        gpuprims.topk(rng.standard_normal((2,) * 10).astype(np.float32).transpose(), 1)


def test_read_only_input_untouched(rng):
    x = rng.standard_normal((6, 80)).astype(np.float32)
    x.flags.writeable = False
    before = x.copy()
    check(x, 5)
    check(x, 3, 0, largest=False, sorted=False)
    np.testing.assert_array_equal(x, before)


def test_result_arrays(rng):
    x = rng.standard_normal((3, 20, 4)).astype(np.float16)
    got = gpuprims.topk(x, 5, 1)
    values, indices = got
    assert got._fields == ("values", "indices") and values is got.values and indices is got.indices
    assert values.dtype == np.float16 and indices.dtype == np.int64
    assert values.shape == indices.shape == (3, 5, 4)
    assert values.flags.c_contiguous and indices.flags.c_contiguous and values.flags.writeable
    want_v, want_i = reference_topk(x, 5, 1)
    np.testing.assert_array_equal(values, want_v)
    np.testing.assert_array_equal(indices, want_i)
    np.testing.assert_array_equal(np.take_along_axis(x, indices, 1), values)


@pytest.mark.parametrize("shape, k, axis", [((0,), 0, 0), ((0, 5), 3, -1), ((5, 0), 0, 1), ((5, 0), 2, 0),
                                            ((3, 0, 4), 0, 1), ((3, 7), 0, 1), ((1,), 1, 0), ((1, 1, 1), 1, 1)])
def test_small_and_empty_shapes(rng, shape, k, axis):
    x = rng.standard_normal(shape).astype(np.float64)
    for out in (None, (np.full(shape[:axis % len(shape)] + (k,) + shape[axis % len(shape) + 1:], np.nan),
                       np.full(shape[:axis % len(shape)] + (k,) + shape[axis % len(shape) + 1:], -1, np.int64))):
        got = check(x, k, axis, out=out)
        assert got.values.shape == got.indices.shape == shape[:axis % len(shape)] + (k,) + shape[axis % len(shape) + 1:]


def test_out_of_any_strides(rng):
    x = rng.standard_normal((6, 90)).astype(np.float32)
    vbuf = np.full((14, 30), np.nan, np.float32)
    ibuf = np.full((18, 12), -1, np.int64)
    out = (vbuf[1:13:2, 3:27:3], ibuf[::-3, ::-1][:, 2:10])  # (6, 8) each, strided, the indices reversed
    assert out[1].shape == (6, 8)
    for largest, srt in FLAGS:
        check(x, 8, out=out, largest=largest, sorted=srt)
    vmask = np.ones(vbuf.shape, bool)
    vmask[1:13:2, 3:27:3] = False
    assert np.isnan(vbuf[vmask]).all()  # nothing outside the view written
    imask = np.ones(ibuf.shape, bool)
    imask[::-3, ::-1][:, 2:10] = False
    assert (ibuf[imask] == -1).all()
    # F-order outs along axis 0; a list is taken like a tuple; the arrays come back as given
    v, i = np.empty((4, 90), np.float32, order="F"), np.empty((90, 4), np.int64).T
    check(x, 4, 0, out=(v, i))
    check(x, 4, 0, out=[v, i], largest=False)
    got = gpuprims.topk(x, 4, 0, out=[v, i])
    assert got.values is v and got.indices is i


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_name_accepted(rng, algorithm):
    x = rng.integers(-50, 50, size=(33, 170)).astype(np.int16)
    check(x, 7, algorithm=algorithm)
    check(x, 5, 0, largest=False, algorithm=algorithm)


@pytest.mark.parametrize("name", ["torch", "jax"])
def test_cpu_frameworks_keep_their_type(rng, name):
    fw = Framework(name, "cpu")
    if not fw.available():
        pytest.skip(f"{name} is not installed")
    for dtype in ("float32", "int64", "bfloat16"):
        a = random_values(rng, 4 * 50 * 6, dtype).reshape(4, 50, 6)
        x = fw.make(a, dtype)
        got = gpuprims.topk(x, 9, 1, largest=False)
        assert fw.is_native(got.values) and fw.is_native(got.indices)
        check_topk(to_numpy(x), 9, 1, False, True, to_numpy(got.values), to_numpy(got.indices), lowest_ties=True)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("dtype", ("int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32",
                                   "float64"))
def test_matches_torch_topk(rng, dtype):
    """torch.topk (CPU) on distinct values, where every answer is unique: values and indices equal,
    sorted; as sets unsorted. NaN and infinities in the row too (torch ranks NaN above +inf)."""
    for shape, axis in (((7, 200), -1), ((200, 5), 0), ((3, 40, 6), 1), ((1000,), 0)):
        ax, n = axis % len(shape), shape[axis]
        if n > 200 and dtype in ("int8", "uint8"):
            continue
        moved = shape[:ax] + shape[ax + 1:] + (n,)
        rows = int(np.prod(moved[:-1]))
        if dtype == "bfloat16":  # distinct bfloat16 values: distinct finite magnitudes, either sign
            mags = np.stack([rng.choice(np.arange(1, 0x7F80), n, replace=False) for _ in range(rows)])
            signed = (mags | (rng.integers(0, 2, mags.shape) << 15)).astype(np.uint32) << 16
            a = signed.view(np.float32).astype(np.float64)
        else:  # a permutation of integers per row, centred for signed types (exact in float16 too)
            a = np.stack([rng.permutation(n) for _ in range(rows)]) - (0 if dtype.startswith("uint") else n // 2)
        if dtype in FLOAT_DTYPES and n >= 3:  # specials in each row: NaN, +inf, -inf in place of three values
            a = a.astype(np.float64)
            a[:, 0], a[:, 1], a[:, 2] = np.nan, np.inf, -np.inf
            a = a[:, rng.permutation(n)]
        a = np.moveaxis(a.reshape(moved), -1, ax)
        t = torch.from_numpy(np.ascontiguousarray(a.astype(np.float32 if dtype == "bfloat16" else dtype)))
        t = t.to(getattr(torch, dtype))
        for k in (1, n // 3 + 1, n):
            for largest, srt in FLAGS:
                want = torch.topk(t, k, dim=axis, largest=largest, sorted=True)
                got = gpuprims.topk(t, k, axis, largest=largest, sorted=srt)
                if srt:
                    assert torch.equal(got.indices, want.indices), (dtype, shape, axis, k, largest)
                else:
                    assert torch.equal(got.indices.sort(dim=axis).values, want.indices.sort(dim=axis).values)
                w = want.values if srt else torch.gather(t, axis, got.indices)
                assert torch.equal(got.values.isnan(), w.isnan())
                assert torch.equal(torch.nan_to_num(got.values), torch.nan_to_num(w))


def test_k_and_axis_of_numpy_ints(rng):
    x = rng.standard_normal((5, 30)).astype(np.float32)
    check(x, np.int64(4), np.int32(0))
    check(x, np.uint8(3), np.int64(-1), largest=False, sorted=False)


def test_numpy_bool_flags_accepted(rng):
    """largest= and sorted= take numpy bools as Python bools (topk.py's _flag)."""
    x = rng.standard_normal((5, 30)).astype(np.float32)
    check(x, 4, largest=np.bool_(False), sorted=np.bool_(True))
    check(x, 3, 0, largest=np.True_, sorted=np.False_)


X = np.arange(20, dtype=np.float32).reshape(4, 5) * 0.5 - 3


@pytest.mark.parametrize("x, kwargs, exc, match", [
    (np.ones(4, bool), {}, TypeError, r"topk: argument 'x': expected a numeric dtype \(int8\.\.int64, uint8\.\.uint64, "
                                      r"float16, bfloat16, float32, float64\), got bool"),
    ([1.0, 2.0, 3.0], {}, TypeError, r"topk: argument 'x': expected an array supporting DLPack"),
    (np.array(3.0, np.float32), {"k": 0}, ValueError, r"topk: argument 'x': expected at least 1 dimension, got a 0-d"),
    (np.float32(3.0), {"k": 0}, ValueError, r"topk: argument 'x': expected at least 1 dimension"),
    (X, {"k": -1}, ValueError, r"topk: argument 'k': expected 0 <= k <= 5 \(the length of axis 1\), got -1"),
    (X, {"k": 6}, ValueError, r"topk: argument 'k': expected 0 <= k <= 5 \(the length of axis 1\), got 6"),
    (X, {"k": 5, "axis": 0}, ValueError, r"topk: argument 'k': expected 0 <= k <= 4 \(the length of axis 0\), got 5"),
    (X, {"k": 5, "axis": -2}, ValueError, r"expected 0 <= k <= 4 \(the length of axis 0\), got 5"),
    (np.ones(0, np.float32), {"k": 1}, ValueError,
     r"topk: argument 'k': expected 0 <= k <= 0 \(the length of axis 0\), got 1"),
    (X, {"k": True}, TypeError, r"topk: argument 'k': expected an int, got True"),
    (X, {"k": 2.0}, TypeError, r"topk: argument 'k': expected an int, got 2\.0"),
    (X, {"k": "2"}, TypeError, r"topk: argument 'k': expected an int, got '2'"),
    (X, {"k": None}, TypeError, r"topk: argument 'k': expected an int, got None"),
    (X, {"axis": 2}, ValueError, r"topk: argument 'axis': expected an int in \[-2, 2\) for an array of 2 dimensions, "
                                 r"got 2"),
    (X, {"axis": -3}, ValueError, r"topk: argument 'axis': expected an int in \[-2, 2\)"),
    (X, {"axis": 1.0}, TypeError, r"topk: argument 'axis': expected an int, got 1\.0"),
    (X, {"axis": None}, TypeError, r"topk: argument 'axis': expected an int, got None"),
    (X, {"largest": 1}, TypeError, r"topk: argument 'largest': expected a bool, got 1"),
    (X, {"largest": None}, TypeError, r"topk: argument 'largest': expected a bool, got None"),
    (X, {"largest": "True"}, TypeError, r"topk: argument 'largest': expected a bool, got 'True'"),
    (X, {"sorted": 0}, TypeError, r"topk: argument 'sorted': expected a bool, got 0"),
    (X, {"sorted": np.float32(1)}, TypeError, r"topk: argument 'sorted': expected a bool"),
    (X, {"algorithm": "fast"}, ValueError, re.escape("topk: argument 'algorithm': expected one of "
                                                     + ", ".join(f"'{a}'" for a in ALGORITHMS) + ", got 'fast'")),
    (X, {"algorithm": "Block_Per_Row"}, ValueError, r"topk: argument 'algorithm': expected one of 'auto'"),
    (X, {"algorithm": None}, TypeError, r"topk: argument 'algorithm': expected a str, got None"),
    (X, {"algorithm": 1}, TypeError, r"topk: argument 'algorithm': expected a str, got 1"),
])
def test_bad_arguments(x, kwargs, exc, match):
    kwargs = {"k": 2} | kwargs
    with pytest.raises(exc, match=match):
        gpuprims.topk(x, **kwargs)


def ro(a):
    a.flags.writeable = False
    return a


def f32(*shape):
    return np.full(shape, np.nan, np.float32)


def i64(*shape):
    return np.full(shape, -1, np.int64)


@pytest.mark.parametrize("out, exc, match", [
    (f32(4, 3), TypeError, r"topk: argument 'out': expected a tuple \(values, indices\) of two arrays, got"),
    ((f32(4, 3),), TypeError, r"topk: argument 'out': expected a tuple \(values, indices\) of two arrays"),
    ((f32(4, 3), i64(4, 3), i64(4, 3)), TypeError, r"topk: argument 'out': expected a tuple \(values, indices\)"),
    ({"values": f32(4, 3)}, TypeError, r"topk: argument 'out': expected a tuple"),
    ((np.empty((4, 3), np.float64), i64(4, 3)), TypeError, r"topk: argument 'out\[0\]': expected dtype float32, "
                                                           r"got float64"),
    ((f32(4, 3), np.empty((4, 3), np.int32)), TypeError, r"topk: argument 'out\[1\]': expected dtype int64, got int32"),
    ((f32(4, 3), f32(4, 3)), TypeError, r"topk: argument 'out\[1\]': expected dtype int64, got float32"),
    ((f32(4, 4), i64(4, 3)), ValueError, r"topk: argument 'out\[0\]': expected shape \(4, 3\), got \(4, 4\)"),
    ((f32(4, 3), i64(3, 4)), ValueError, r"topk: argument 'out\[1\]': expected shape \(4, 3\), got \(3, 4\)"),
    ((f32(4, 3, 1), i64(4, 3)), ValueError, r"topk: argument 'out\[0\]': expected shape \(4, 3\), got \(4, 3, 1\)"),
    ((f32(12), i64(4, 3)), ValueError, r"topk: argument 'out\[0\]': expected shape \(4, 3\), got \(12,\)"),
    ((ro(f32(4, 3)), i64(4, 3)), TypeError, r"topk: argument 'out\[0\]': expected a writable array"),
    ((f32(4, 3), ro(i64(4, 3))), TypeError, r"topk: argument 'out\[1\]': expected a writable array"),
    ((np.float32(1.0), i64(4, 3)), TypeError, r"topk: argument 'out\[0\]': expected a writable array, got a numpy "
                                              r"scalar"),
    (([[0.0] * 3] * 4, i64(4, 3)), TypeError, r"topk: argument 'out\[0\]': expected an array supporting DLPack"),
    ((np.lib.stride_tricks.as_strided(f32(3), (4, 3), (0, 4)), i64(4, 3)), ValueError,
     r"topk: argument 'out\[0\]': expected distinct elements"),
    ((f32(4, 3), np.lib.stride_tricks.as_strided(i64(4), (4, 3), (8, 0))), ValueError,
     r"topk: argument 'out\[1\]': expected distinct elements"),
])
def test_bad_out(out, exc, match):
    with pytest.raises(exc, match=match):
        gpuprims.topk(X, 3, out=out)


def test_out_sharing_memory():
    x = np.arange(20, dtype=np.int64).reshape(4, 5)[:, ::-1].copy()
    with pytest.raises(ValueError, match=r"topk: arguments 'x' and 'out\[0\]': expected 'out\[0\]' to share no "
                                         r"memory with 'x', got overlapping memory"):
        gpuprims.topk(x, 3, out=(x[:, :3], i64(4, 3)))
    with pytest.raises(ValueError, match=r"topk: arguments 'x' and 'out\[1\]': expected 'out\[1\]' to share no memory"):
        gpuprims.topk(x, 3, out=(np.empty((4, 3), np.int64), x[:, 1:4]))
    with pytest.raises(ValueError, match=r"topk: arguments 'x' and 'out\[0\]'"):
        gpuprims.topk(x, 5, out=(x, i64(4, 5)))  # in place is refused too
    buf = i64(4, 3)
    with pytest.raises(ValueError, match=r"topk: arguments 'out\[0\]' and 'out\[1\]': expected 'out\[1\]' to share no "
                                         r"memory with 'out\[0\]'"):
        gpuprims.topk(x, 3, out=(buf, buf))
    # interleaved views of one buffer that share no element are fine
    both = np.full((4, 6), -1, np.int64)
    check(x, 3, out=(both[:, ::2], both[:, 1::2]))
    np.testing.assert_array_equal(both[:, 1::2], reference_topk(x, 3)[1])


def test_jax_out_refused():
    if jax is None:
        pytest.skip("jax is not installed")
    with pytest.raises(TypeError, match=r"topk: argument 'out\[0\]': JAX arrays are immutable"):
        gpuprims.topk(X, 3, out=(jax.numpy.zeros((4, 3), np.float32), i64(4, 3)))
