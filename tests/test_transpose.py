"""transpose on the CPU reference (runs in CI): every dtype, permutation and layout against numpy
bit for bit, out= of any strides, frameworks, and the argument checks the GPU path shares."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import ALL_DTYPES, Framework, cpu_framework, jax, random_values, torch

import gpuprims

VARIANTS = tuple(v.name for v in gpuprims.variants("transpose"))
ALGORITHMS = ("auto",) + VARIANTS


def bits(a):
    """The elements' bit patterns (bit-exact comparisons: NaN payloads, -0.0, bool bytes)."""
    if torch is not None and torch.is_tensor(a):
        a = a.view(torch.int16) if a.dtype == torch.bfloat16 else a
        return a.numpy().view(f"u{a.element_size()}")
    a = np.asarray(a)
    return a.view(f"u{a.itemsize}")


def expected_of(x, axes):
    """numpy's (or torch's) transpose, written out contiguously."""
    if torch is not None and torch.is_tensor(x):
        perm = tuple(range(x.ndim - 1, -1, -1)) if axes is None else axes
        return x.permute(*perm).contiguous()
    return np.ascontiguousarray(np.transpose(x, axes))


def test_variants_listed():
    assert VARIANTS == ("naive", "smem_tiled", "smem_padded", "packed", "register_blocks")
    assert all(v.deterministic for v in gpuprims.variants("transpose"))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype_2d_and_3d(rng, dtype):
    fw = cpu_framework(dtype)
    for shape, axes in (((5, 7), None), ((3, 4, 5), (2, 0, 1)), ((3, 4, 5), (0, 2, 1)), ((2, 3, 4), (1, 0, 2))):
        x = fw.make(random_values(rng, int(np.prod(shape)), dtype).reshape(shape), dtype)
        got = gpuprims.transpose(x, axes)
        want = expected_of(x, axes)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(bits(got), bits(want), err_msg=f"{dtype} {shape} {axes}")


def test_every_permutation_of_4d(rng):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    for axes in itertools.permutations(range(4)):
        got = gpuprims.transpose(x, axes)
        assert got.flags.c_contiguous
        np.testing.assert_array_equal(got, np.transpose(x, axes))
    # negative axes count from the end, as numpy's; any sequence of ints
    np.testing.assert_array_equal(gpuprims.transpose(x, (-1, 0, -3, -2)), np.transpose(x, (3, 0, 1, 2)))
    for axes in ([3, 0, 1, 2], range(3, -1, -1), np.array([1, 0, 3, 2])):
        np.testing.assert_array_equal(gpuprims.transpose(x, axes), np.transpose(x, tuple(axes)))


def test_many_dimensions(rng):
    # the CPU reference walks the views as they are: no limit on dimensions that do not merge
    x = rng.standard_normal((2,) * 19).astype(np.float32)
    np.testing.assert_array_equal(gpuprims.transpose(x), x.T)


def test_bits_kept(rng):
    payload = np.array([0x7FC00001, 0xFFC12345, 0x80000000, 0x7F800000, 0xFF800000, 1], dtype=np.uint32)
    x = np.tile(payload, 4).view(np.float32).reshape(4, 6)
    np.testing.assert_array_equal(bits(gpuprims.transpose(x)), bits(x.T.copy()))


@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (0, 5), (5, 0), (1, 1), (1, 9), (9, 1), (2, 0, 3)])
def test_small_and_empty_shapes(rng, shape):
    x = rng.standard_normal(shape).astype(np.float64)
    got = gpuprims.transpose(x)
    assert got.shape == x.T.shape
    np.testing.assert_array_equal(got, x.T)


def test_views_of_any_strides(rng):
    base = rng.standard_normal((40, 50, 6)).astype(np.float32)
    for x in (base[::-1], base[:, ::-3], base[1:, 2:, 1], base[::2, 1::5].transpose(2, 0, 1),
              np.broadcast_to(base[:1, :1, :1], (4, 5, 6)), base.view(np.uint8)[:, 1:-3]):
        for axes in (None, tuple(range(x.ndim))[::-1], (1, 0) + tuple(range(2, x.ndim))):
            np.testing.assert_array_equal(gpuprims.transpose(x, axes), np.transpose(x, axes))


def test_read_only_input_untouched(rng):
    x = rng.standard_normal((6, 8)).astype(np.float32)
    x.flags.writeable = False
    before = x.copy()
    np.testing.assert_array_equal(gpuprims.transpose(x), before.T)
    np.testing.assert_array_equal(x, before)


def test_out_of_any_strides(rng):
    x = rng.standard_normal((6, 9)).astype(np.float32)
    buf = np.full((12, 20), -7.0, dtype=np.float32)
    dest = buf[1:10, 2:14:2]  # (9, 6), strided
    assert gpuprims.transpose(x, out=dest) is dest
    np.testing.assert_array_equal(dest, x.T)
    untouched = np.ones(buf.shape, dtype=bool)
    untouched[1:10, 2:14:2] = False
    assert np.all(buf[untouched] == -7.0)
    col = np.empty((9, 6), dtype=np.float32, order="F")
    np.testing.assert_array_equal(gpuprims.transpose(x, out=col), x.T)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_name_accepted(rng, algorithm):
    x = rng.integers(0, 100, size=(33, 17)).astype(np.int16)
    np.testing.assert_array_equal(gpuprims.transpose(x, algorithm=algorithm), x.T)


@pytest.mark.parametrize("name", ["torch", "jax"])
def test_cpu_frameworks_keep_their_type(rng, name):
    fw = Framework(name, "cpu")
    if not fw.available():
        pytest.skip(f"{name} is not installed")
    a = rng.standard_normal((4, 5, 6)).astype(np.float32)
    got = gpuprims.transpose(fw.make(a), (2, 0, 1))
    assert fw.is_native(got)
    np.testing.assert_array_equal(np.asarray(got), np.transpose(a, (2, 0, 1)))
    if name == "jax":
        assert isinstance(got, jax.Array)


@pytest.mark.parametrize("axes, exc, match", [
    ((0,), ValueError, r"transpose: argument 'axes': expected a permutation of 2 axes"),
    ((0, 1, 2), ValueError, r"expected a permutation of 2 axes"),
    ((0, 0), ValueError, r"expected each axis once"),
    ((0, 2), ValueError, r"expected axes in \[-2, 2\)"),
    ((0, -3), ValueError, r"expected axes in \[-2, 2\)"),
    ((0, 1.0), TypeError, r"transpose: argument 'axes': expected None or a sequence of ints"),
    (1, TypeError, r"expected None or a sequence of ints"),
    ("10", TypeError, r"expected None or a sequence of ints"),
])
def test_bad_axes(axes, exc, match):
    with pytest.raises(exc, match=match):
        gpuprims.transpose(np.zeros((2, 3), np.float32) + 1, axes)


def test_bad_out_and_algorithm():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises(ValueError, match=r"transpose: argument 'out': expected shape \(3, 2\), got \(2, 3\)"):
        gpuprims.transpose(x, out=np.empty((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"transpose: argument 'out': expected dtype float32, got float64"):
        gpuprims.transpose(x, out=np.empty((3, 2), np.float64))
    ro = np.empty((3, 2), np.float32)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match=r"transpose: argument 'out': expected a writable array"):
        gpuprims.transpose(x, out=ro)
    with pytest.raises(ValueError, match=r"argument 'out': expected distinct elements"):
        gpuprims.transpose(x, out=np.lib.stride_tricks.as_strided(np.empty(2, np.float32), (3, 2), (0, 4)))
    sq = np.arange(9, dtype=np.float32).reshape(3, 3)
    with pytest.raises(ValueError, match=r"arguments 'x' and 'out'"):
        gpuprims.transpose(sq, out=sq)
    with pytest.raises(ValueError, match=r"transpose: argument 'algorithm': expected one of 'auto', 'naive'"):
        gpuprims.transpose(x, algorithm="fast")
    with pytest.raises(TypeError, match=r"transpose: argument 'algorithm': expected a str"):
        gpuprims.transpose(x, algorithm=None)


def test_jax_out_refused():
    if jax is None:
        pytest.skip("jax is not installed")
    with pytest.raises(TypeError, match=r"transpose: argument 'out': JAX arrays are immutable"):
        gpuprims.transpose(np.ones((2, 3), np.float32), out=jax.numpy.zeros((3, 2), np.float32))
