"""norms backward passes (softmax_backward, log_softmax_backward, layer_norm_backward,
rms_norm_backward) on the CPU reference: float64 references, axes, strides, empty inputs and
argument errors. Runs in CI without a GPU."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import NUMPY_CPU, cpu_framework, torch
from norms_backward_reference import BACKWARD_OPS, SOFTMAX_OPS, check_backward, forward_for_backward, run_backward
from norms_reference import FLOATS, round_to

import gpuprims

def data(rng, shape, dtype, scale=1.0, offset=0.0):
    return round_to(rng.standard_normal(shape) * scale + offset, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_cpu_reference_against_float64(rng, op, dtype):
    fw = cpu_framework(dtype)
    for shape in ((1, 1), (3, 5), (4, 1), (2, 1031), (3, 4096), (1, 12289)):
        check_backward(fw, op, data(rng, shape, dtype, 3.0), dtype, rng)


@pytest.mark.parametrize("op", ("layer_norm", "rms_norm"))
def test_without_weight_and_offset_rows(rng, op):
    # Rows like 1234 + noise: xhat from the saved mean stays accurate.
    check_backward(NUMPY_CPU, op, data(rng, (6, 300), "float32", 0.01, 1234.0), "float32", rng, weight=False)


@pytest.mark.parametrize("op", BACKWARD_OPS)
@pytest.mark.parametrize("axis", (0, 1, -1))
def test_any_axis(rng, op, axis):
    check_backward(NUMPY_CPU, op, data(rng, (4, 7, 5), "float32"), "float32", rng, axis=axis)


@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_strided_transposed_and_negative_views(rng, op):
    a = data(rng, (12, 34), "float64")
    for view in (lambda v: v.T, lambda v: v[::-1, ::-2], lambda v: v[1::3, 5:29]):
        check_backward(NUMPY_CPU, op, a, "float64", rng, view=view)


@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_matches_torch_autograd(rng, op):
    if torch is None:
        pytest.skip("needs torch")
    x = torch.tensor(data(rng, (5, 37), "float64"), requires_grad=True)
    w = torch.tensor(rng.uniform(0.5, 1.5, 37), requires_grad=True)
    b = torch.tensor(rng.standard_normal(37), requires_grad=True)
    dy = torch.tensor(rng.standard_normal((5, 37)))
    if op == "softmax":
        y = torch.softmax(x, -1)
    elif op == "log_softmax":
        y = torch.log_softmax(x, -1)
    elif op == "layer_norm":
        y = torch.nn.functional.layer_norm(x, (37,), w, b, 1e-5)
    else:
        y = torch.nn.functional.rms_norm(x, (37,), w, 1e-6)
    y.backward(dy)
    saved, mean, rstd = forward_for_backward(op, x.detach(), w.detach(), b.detach())
    dx, dw, db = run_backward(op, dy, saved, None if op in SOFTMAX_OPS else w.detach(), mean, rstd)
    np.testing.assert_allclose(dx.numpy(), x.grad.numpy(), rtol=1e-10, atol=1e-12)
    if dw is not None:
        np.testing.assert_allclose(dw.numpy(), w.grad.numpy(), rtol=1e-10, atol=1e-12)
    if db is not None:
        np.testing.assert_allclose(db.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_zero_rows_give_zero_parameter_gradients():
    x = np.zeros((0, 6), np.float32)
    mean = np.zeros((0, 1), np.float32)
    rstd = np.zeros((0, 1), np.float32)
    dx, dw, db = gpuprims.layer_norm_backward(x, x, np.ones(6, np.float32), mean, rstd)
    assert dx.shape == (0, 6)
    np.testing.assert_array_equal(dw, np.zeros(6, np.float32))
    np.testing.assert_array_equal(db, np.zeros(6, np.float32))
    dx, dw = gpuprims.rms_norm_backward(x, x, None, rstd)
    np.testing.assert_array_equal(dw, np.zeros(6, np.float32))


def test_empty_rows():
    y = np.zeros((3, 0), np.float32)
    assert gpuprims.softmax_backward(y, y).shape == (3, 0)
    dx, dw, db = gpuprims.layer_norm_backward(y, y, None, np.zeros((3, 1), np.float32), np.zeros((3, 1), np.float32))
    assert dx.shape == (3, 0) and dw.shape == (0,) and db.shape == (0,)


def test_nan_rows_stay_nan(rng):
    y = gpuprims.softmax(np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0]], np.float32))
    dx = gpuprims.softmax_backward(y, rng.standard_normal((2, 3)).astype(np.float32))
    assert np.isnan(dx[0]).all() and np.isfinite(dx[1]).all()


def test_constant_row_has_finite_gradients(rng):
    x = np.full((2, 64), 3.25, np.float32)
    _, mean, rstd = gpuprims.layer_norm(x, return_stats=True)
    dx, dw, db = gpuprims.layer_norm_backward(rng.standard_normal((2, 64)).astype(np.float32), x, None, mean, rstd)
    assert np.isfinite(dx).all() and np.isfinite(dw).all() and np.isfinite(db).all()


def test_out_is_written_and_returned(rng):
    y = gpuprims.softmax(data(rng, (4, 9), "float32"))
    dy = data(rng, (4, 9), "float32")
    out = np.full((4, 9), np.nan, np.float32)
    assert gpuprims.softmax_backward(y, dy, out=out) is out
    np.testing.assert_allclose(out, gpuprims.softmax_backward(y, dy), rtol=0, atol=0)


def test_variants_listed():
    for op in BACKWARD_OPS:
        names = {v.name for v in gpuprims.variants(op + "_backward")}
        assert names == {"two_pass", "row_on_chip", "columns"}
        assert all(v.deterministic for v in gpuprims.variants(op + "_backward"))


def test_columns_is_a_backward_variant_of_every_op():
    y, dy = np.full((3, 4), 0.25, np.float32), np.ones((3, 4), np.float32)
    np.testing.assert_allclose(gpuprims.softmax_backward(y, dy, 0, algorithm="columns"), gpuprims.softmax_backward(y, dy, 0))
    x, rstd = np.arange(12, dtype=np.float32).reshape(3, 4), np.ones((3, 1), np.float32)
    for got, want in zip(gpuprims.rms_norm_backward(dy, x, None, rstd, algorithm="columns"),
                         gpuprims.rms_norm_backward(dy, x, None, rstd)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="layer_norm_backward: argument 'algorithm'.*'columns', got 'welford'"):
        gpuprims.layer_norm_backward(dy, x, None, np.zeros((3, 1), np.float32), rstd, algorithm="welford")


# ---------------------------------------------------------------------------------------------
# argument errors


def _norm_args(dtype="float32", n=8):
    x = np.ones((3, n), dtype)
    x[:, 0] = 2
    stats = np.ones((3, 1), np.float64 if dtype == "float64" else np.float32)
    return x, stats


def test_dtype_errors():
    x, stats = _norm_args()
    with pytest.raises(TypeError, match=r"softmax_backward: argument 'dy': expected float16"):
        gpuprims.softmax_backward(np.ones((2, 3), np.int32), np.ones((2, 3), np.int32))
    with pytest.raises(TypeError, match=r"softmax_backward: argument 'y': expected dtype float32"):
        gpuprims.softmax_backward(x.astype(np.float64), x)
    with pytest.raises(TypeError, match=r"layer_norm_backward: argument 'mean': expected dtype float32, got float64"):
        gpuprims.layer_norm_backward(x, x, None, stats.astype(np.float64), stats)
    with pytest.raises(TypeError, match=r"rms_norm_backward: argument 'weight': expected dtype float32"):
        gpuprims.rms_norm_backward(x, x, np.ones(8, np.float64), stats)
    with pytest.raises(TypeError, match=r"layer_norm_backward: argument 'out': expected dtype float32"):
        gpuprims.layer_norm_backward(x, x, None, stats, stats, out=np.empty((3, 8), np.float64))


def test_shape_errors():
    x, stats = _norm_args()
    with pytest.raises(ValueError, match=r"log_softmax_backward: argument 'y': expected shape \(3, 8\)"):
        gpuprims.log_softmax_backward(x[:, :4], x)
    with pytest.raises(ValueError, match=r"layer_norm_backward: argument 'rstd': expected 3 elements"):
        gpuprims.layer_norm_backward(x, x, None, stats, stats[:2])
    with pytest.raises(ValueError, match=r"rms_norm_backward: argument 'weight': expected shape \(8,\)"):
        gpuprims.rms_norm_backward(x, x, np.ones(7, np.float32), stats)
    with pytest.raises(ValueError, match=r"layer_norm_backward: argument 'out': expected shape"):
        gpuprims.layer_norm_backward(x, x, None, stats, stats, out=np.empty((3, 7), np.float32))
    with pytest.raises(ValueError, match=r"softmax_backward: argument 'axis': expected an int in \[-2, 2\)"):
        gpuprims.softmax_backward(x, x, axis=2)


def test_missing_statistics_and_bad_algorithm():
    x, stats = _norm_args()
    with pytest.raises(ValueError, match=r"layer_norm_backward: argument 'mean': expected an array, got None"):
        gpuprims.layer_norm_backward(x, x, None, None, stats)
    with pytest.raises(ValueError, match=r"rms_norm_backward: argument 'rstd': expected an array, got None"):
        gpuprims.rms_norm_backward(x, x, None, None)
    with pytest.raises(ValueError, match=r"softmax_backward: argument 'algorithm': expected one of 'auto', "):
        gpuprims.softmax_backward(x, x, algorithm="welford")
    with pytest.raises(TypeError, match=r"softmax_backward: argument 'algorithm': expected a str"):
        gpuprims.softmax_backward(x, x, algorithm=1)


def test_read_only_out_rejected():
    x, stats = _norm_args()
    out = np.empty_like(x)
    out.flags.writeable = False
    with pytest.raises((TypeError, ValueError), match=r"argument 'out'"):
        gpuprims.rms_norm_backward(x, x, None, stats, out=out)
