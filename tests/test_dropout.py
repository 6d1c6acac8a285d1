"""bias_dropout_add on the CPU reference: the Philox4x32-10 generator against published answers,
the documented mask mapping, statistics, strides, special values and argument errors. Runs in CI
without a GPU."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import torch
from dropout_reference import keep_mask, reference, tolerance
from norms_reference import round_to

import gpuprims
from gpuprims import _C


def test_philox_known_answers():
    # Random123's kat_vectors for philox4x32_10.
    assert _C.philox4x32_10((0, 0, 0, 0), 0, 0) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)
    assert _C.philox4x32_10((0xFFFFFFFF,) * 4, 0xFFFFFFFF, 0xFFFFFFFF) == (0x408F276D, 0x41C83B0E, 0xA20BC7C6,
                                                                            0x6D5451FD)
    assert _C.philox4x32_10((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), 0xA4093822, 0x299F31D0) == (
        0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)


def _check(x, bias, residual, p, seed, offset, dtype, training=True, out=None):
    got = gpuprims.bias_dropout_add(x, bias, residual, p, seed=seed, offset=offset, training=training, out=out)
    ref, keep, mag = reference(x, bias, residual, p, seed, offset, training)
    g = np.asarray(got, np.float64) if not hasattr(got, "float") else got.float().numpy().astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(ref))
    ok = ~np.isnan(ref)
    assert np.all(np.abs(g[ok] - ref[ok]) <= tolerance(dtype, ref, mag)[ok])
    return got, keep


@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
@pytest.mark.parametrize("p", (0.0, 0.1, 0.5, 1.0))
def test_against_the_documented_mask(rng, dtype, p):
    for shape in ((1,), (7,), (3, 5), (4, 33), (2, 3, 16)):
        x = round_to(rng.standard_normal(shape), dtype)
        b = round_to(rng.standard_normal(shape[-1]), dtype)
        r = round_to(rng.standard_normal(shape), dtype)
        _check(x, b, r, p, 12345, 678, dtype)
        _check(x, None, r, p, 2**64 - 1, 2**63 + 5, dtype)


def test_bfloat16_on_torch(rng):
    if torch is None:
        pytest.skip("bfloat16 on the CPU needs torch")
    x, r = (torch.randn(6, 40).bfloat16() for _ in range(2))
    b = torch.randn(40).bfloat16()
    _check(x, b, r, 0.3, 7, 9, "bfloat16")


def test_training_false_and_dropped_elements_are_exactly_the_residual(rng):
    x = rng.standard_normal((8, 64)).astype(np.float32)
    r = rng.standard_normal((8, 64)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    _check(x, b, r, 0.7, 1, 2, "float32", training=False)
    got, keep = _check(x, b, r, 0.7, 1, 2, "float32")
    np.testing.assert_array_equal(got[~keep], r[~keep])
    assert 0 < keep.sum() < keep.size


def test_keep_rate_and_independence_of_offsets(rng):
    n = 1 << 16
    x = np.ones(n, np.float32)
    r = np.zeros(n, np.float32)
    p = 0.3
    kept = gpuprims.bias_dropout_add(x, None, r, p, seed=99, offset=0) != 0
    sigma = np.sqrt(n * p * (1 - p))
    assert abs(kept.sum() - n * (1 - p)) < 6 * sigma
    again = gpuprims.bias_dropout_add(x, None, r, p, seed=99, offset=0) != 0
    other = gpuprims.bias_dropout_add(x, None, r, p, seed=99, offset=n // 4) != 0
    np.testing.assert_array_equal(kept, again)
    agree = (kept == other).mean()
    assert abs(agree - (p * p + (1 - p) ** 2)) < 0.02  # independent masks agree by chance only
    np.testing.assert_array_equal(kept[:1000], keep_mask(1000, p, 99, 0))


def test_mask_follows_c_order_not_strides(rng):
    a = rng.standard_normal((10, 12)).astype(np.float32)
    r = rng.standard_normal((12, 10)).astype(np.float32)
    b = rng.standard_normal(10).astype(np.float32)
    view = a.T  # (12, 10), transposed strides
    got = gpuprims.bias_dropout_add(view, b[::-1], r[::-1][::-1], 0.5, seed=3, offset=4)
    want = gpuprims.bias_dropout_add(np.ascontiguousarray(view), b[::-1].copy(), r, 0.5, seed=3, offset=4)
    np.testing.assert_array_equal(got, want)


def test_out_may_be_x(rng):
    x = rng.standard_normal((5, 8)).astype(np.float32)
    r = rng.standard_normal((5, 8)).astype(np.float32)
    want = gpuprims.bias_dropout_add(x, None, r, 0.5, seed=1, offset=1)
    assert gpuprims.bias_dropout_add(x, None, r, 0.5, seed=1, offset=1, out=x) is x
    np.testing.assert_array_equal(x, want)


def test_nan_propagates_like_torch():
    x = np.array([np.nan] * 8, np.float32)
    out = gpuprims.bias_dropout_add(x, None, np.zeros(8, np.float32), 0.5, seed=0, offset=0)
    assert np.isnan(out).all()  # dropped NaNs too: (x + b) * 0


def test_empty():
    assert gpuprims.bias_dropout_add(np.zeros((0, 4), np.float32), None, np.zeros((0, 4), np.float32), 0.5,
                                     seed=0, offset=0).shape == (0, 4)


def test_argument_errors():
    x = np.ones((2, 4), np.float32)
    call = gpuprims.bias_dropout_add
    with pytest.raises(TypeError, match=r"bias_dropout_add: argument 'x': expected float16"):
        call(np.ones((2, 4), np.int32), None, x, 0.1, seed=0, offset=0)
    with pytest.raises(TypeError, match=r"bias_dropout_add: argument 'residual': expected dtype float32"):
        call(x, None, x.astype(np.float64), 0.1, seed=0, offset=0)
    with pytest.raises(ValueError, match=r"bias_dropout_add: argument 'residual': expected shape \(2, 4\)"):
        call(x, None, x[:, :3], 0.1, seed=0, offset=0)
    with pytest.raises(ValueError, match=r"bias_dropout_add: argument 'bias': expected shape \(4,\)"):
        call(x, np.ones(3, np.float32), x, 0.1, seed=0, offset=0)
    with pytest.raises(ValueError, match=r"bias_dropout_add: argument 'p': expected a probability in \[0, 1\]"):
        call(x, None, x, 1.5, seed=0, offset=0)
    with pytest.raises(TypeError, match=r"bias_dropout_add: argument 'p': expected a float"):
        call(x, None, x, "0.1", seed=0, offset=0)
    with pytest.raises(ValueError, match=r"bias_dropout_add: argument 'seed': expected an int in \[0, 2\*\*64\)"):
        call(x, None, x, 0.1, seed=-1, offset=0)
    with pytest.raises(TypeError, match=r"bias_dropout_add: argument 'offset': expected an int"):
        call(x, None, x, 0.1, seed=0, offset=1.5)
    with pytest.raises(TypeError, match=r"bias_dropout_add: argument 'training': expected a bool"):
        call(x, None, x, 0.1, seed=0, offset=0, training=1)
    with pytest.raises(TypeError, match=r"bias_dropout_add: argument 'out': expected dtype float32"):
        call(x, None, x, 0.1, seed=0, offset=0, out=np.empty((2, 4), np.float64))
