"""add_layer_norm / add_rms_norm on the CPU: (norm(x + residual), x + residual) against the unfused
sequence and float64, strides, axes, stats and argument errors. Runs in CI without a GPU (the CPU
path writes the sum, then normalizes it)."""
from __future__ import annotations

import numpy as np
import pytest
from norms_reference import assert_close, reference, round_to, tolerance

import gpuprims

ADD_OPS = ("add_layer_norm", "add_rms_norm")


def run(op, x, r, w=None, b=None, **kw):
    if op == "add_layer_norm":
        return gpuprims.add_layer_norm(x, r, w, b, **kw)
    return gpuprims.add_rms_norm(x, r, w, **kw)


def check(op, x, r, dtype, rng, axis=-1):
    n = x.shape[axis]
    w = round_to(rng.uniform(0.5, 1.5, n), dtype)
    b = round_to(rng.standard_normal(n), dtype) if op == "add_layer_norm" else None
    y, s = run(op, x, r, w, b, axis=axis)
    want_s = (x + r).astype(dtype)  # one rounding of the sum to the dtype
    np.testing.assert_array_equal(s, want_s)
    base = op[len("add_"):]
    ref = reference(base, want_s, axis, w, b)[0]
    assert_close(y, ref, tolerance(base, dtype, want_s, ref, axis, w, b))


@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
@pytest.mark.parametrize("op", ADD_OPS)
def test_against_the_unfused_sequence(rng, op, dtype):
    for shape in ((1, 1), (3, 5), (2, 1031), (2, 20000)):
        x = round_to(rng.standard_normal(shape) * 3, dtype)
        r = round_to(rng.standard_normal(shape) * 3, dtype)
        check(op, x, r, dtype, rng)


@pytest.mark.parametrize("op", ADD_OPS)
def test_axis_views_and_stats(rng, op):
    x = rng.standard_normal((6, 7, 9)).astype(np.float32)
    r = rng.standard_normal((9, 7, 6)).astype(np.float32).transpose(2, 1, 0)
    check(op, x, r, "float32", rng, axis=1)
    check(op, x[:, ::-2], r[:, ::-2], "float32", rng)
    res = run(op, x, r, return_stats=True)
    plain = gpuprims.layer_norm(x + r, return_stats=True) if op == "add_layer_norm" else gpuprims.rms_norm(
        x + r, return_stats=True)
    assert len(res) == len(plain) + 1
    for got, want in zip((res[0],) + tuple(res[2:]), plain):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_out_and_empty(rng):
    x = rng.standard_normal((4, 8)).astype(np.float32)
    out = np.full((4, 8), np.nan, np.float32)
    y, s = gpuprims.add_rms_norm(x, x, out=out)
    assert y is out
    np.testing.assert_allclose(out, gpuprims.rms_norm(x + x), rtol=1e-6, atol=1e-6)
    y, s = gpuprims.add_layer_norm(np.zeros((0, 8), np.float32), np.zeros((0, 8), np.float32))
    assert y.shape == s.shape == (0, 8)


@pytest.mark.parametrize("op", ADD_OPS)
def test_in_place(rng, op):
    """out may be x or residual itself; the sum is a new array either way."""
    for target in ("x", "residual"):
        x = rng.standard_normal((5, 37)).astype(np.float32)
        r = rng.standard_normal((5, 37)).astype(np.float32)
        want_y, want_s = run(op, x.copy(), r.copy())
        out = x if target == "x" else r
        y, s = run(op, x, r, out=out)
        assert y is out
        np.testing.assert_array_equal(s, want_s)
        np.testing.assert_array_equal(y, want_y)


def test_argument_errors():
    x = np.ones((3, 8), np.float32)
    # Every error names the op called (add_*), also those raised in C++ and by the shared import.
    with pytest.raises(TypeError, match=r"^add_layer_norm: argument 'residual': expected dtype float32"):
        gpuprims.add_layer_norm(x, x.astype(np.float64))
    with pytest.raises(ValueError, match=r"^add_rms_norm: argument 'residual': expected shape \(3, 8\)"):
        gpuprims.add_rms_norm(x, x[:, :4])
    with pytest.raises(ValueError, match=r"add_rms_norm: argument 'eps'"):
        gpuprims.add_rms_norm(x, x, eps=-1.0)
    with pytest.raises(TypeError, match=r"add_layer_norm: argument 'algorithm': expected a str"):
        gpuprims.add_layer_norm(x, x, algorithm=None)
    with pytest.raises(TypeError, match=r"^add_layer_norm: argument 'x': expected float16"):
        gpuprims.add_layer_norm(x.astype(np.int32), x)
    with pytest.raises(ValueError, match=r"^add_rms_norm: argument 'weight': expected shape \(8,\)"):
        gpuprims.add_rms_norm(x, x, np.ones(4, np.float32))


def test_errors_come_before_the_unfused_sum_is_written():
    # The CPU (and long-row GPU) path writes s = x + residual first: every argument is checked before.
    x = np.ones((3, 8), np.float32)
    out = np.full((3, 8), -7.0, np.float32)
    with pytest.raises(ValueError, match=r"^add_layer_norm: argument 'algorithm': expected one of"):
        gpuprims.add_layer_norm(x, x, algorithm="online", out=out)  # a softmax variant
    with pytest.raises(ValueError, match=r"^add_layer_norm: argument 'bias': expected shape \(8,\)"):
        gpuprims.add_layer_norm(x, x, None, np.ones(3, np.float32), out=out)
    assert (out == -7.0).all()
