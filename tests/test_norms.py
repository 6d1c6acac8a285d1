"""norms (softmax, log_softmax, layer_norm, rms_norm) on the CPU reference: dtypes, axes, strides,
empty inputs, special values, numerics and argument errors. Runs in CI without a GPU."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import NUMPY_CPU, cpu_framework, framework_params, random_values, to_numpy, torch
from norms_reference import FLOATS, NORM_OPS, OPS, check, check_softmax_dtype, reference, round_to, run_op, variants

import gpuprims

def data(rng, shape, dtype, scale=1.0):
    return round_to(random_values(rng, int(np.prod(shape)), "float32").reshape(shape) * scale, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", OPS)
def test_cpu_reference_against_float64(rng, op, dtype):
    fw = cpu_framework(dtype)
    for shape in ((1, 1), (3, 5), (4, 1), (2, 1031), (3, 12289), (1, 40000)):
        check(fw, op, data(rng, shape, dtype, 3.0), dtype, rng=rng)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", (0, 1, 2, -1, -2))
def test_any_axis(rng, op, axis):
    a = data(rng, (3, 7, 5), "float32")
    check(NUMPY_CPU, op, a, "float32", axis=axis, rng=rng)


@pytest.mark.parametrize("op", OPS)
def test_strided_transposed_and_negative_views(rng, op):
    a = data(rng, (12, 34), "float32")
    for view in (lambda v: v.T, lambda v: v[::-1, ::-2], lambda v: v[1::3, 5:29], lambda v: v[:, ::-1].T):
        check(NUMPY_CPU, op, a, "float32", view=view, rng=rng)
    b = data(rng, (4, 6, 8), "float64")
    check(NUMPY_CPU, op, b, "float64", axis=1, view=lambda v: v.transpose(2, 0, 1)[::-1], rng=rng)


@pytest.mark.parametrize("op", NORM_OPS)
def test_strided_affine_vectors(rng, op):
    a = data(rng, (5, 9), "float32")
    w = round_to(rng.uniform(0.5, 1.5, 18), "float32")
    b = round_to(rng.standard_normal(27), "float32")
    y = run_op(op, a, w[::2], b[::-3] if op == "layer_norm" else None)
    ref = reference(op, a, -1, w[::2], b[::-3] if op == "layer_norm" else None)[0]
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", OPS)
def test_empty_inputs(op):
    y = run_op(op, np.zeros((0, 5), np.float32), return_stats=op in NORM_OPS)
    ys = y if isinstance(y, tuple) else (y,)
    assert ys[0].shape == (0, 5)
    for s in ys[1:]:
        assert s.shape == (0, 1) and s.dtype == np.float32
    y = run_op(op, np.zeros((3, 0), np.float64), return_stats=op in NORM_OPS)
    ys = y if isinstance(y, tuple) else (y,)
    assert ys[0].shape == (3, 0)
    if op == "layer_norm":  # as torch.native_layer_norm: mean 0, rstd NaN
        np.testing.assert_array_equal(ys[1], np.zeros((3, 1)))
    if op in NORM_OPS:
        assert np.isnan(ys[-1]).all() and ys[-1].dtype == np.float64


@pytest.mark.parametrize("fw", framework_params("cpu"))
@pytest.mark.parametrize("op", OPS)
def test_cpu_frameworks_and_out(fw, rng, op):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed")
    a = data(rng, (6, 10), "float32")
    check(fw, op, a, "float32", rng=rng)
    if fw.name in ("numpy", "torch"):
        out = fw.make(np.full((6, 10), np.nan, np.float32))
        assert run_op(op, fw.make(a), out=out) is out
        np.testing.assert_allclose(to_numpy(out), reference(op, a)[0], rtol=1e-5, atol=1e-6)
        x = fw.make(a)
        run_op(op, x, out=x)  # in place
        np.testing.assert_allclose(to_numpy(x), reference(op, a)[0], rtol=1e-5, atol=1e-6)
        strided = fw.make(np.full((10, 6), np.nan, np.float32)).T  # out= with transposed strides
        run_op(op, fw.make(a), out=strided)
        np.testing.assert_allclose(to_numpy(strided), reference(op, a)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fw", framework_params("cpu"))
@pytest.mark.parametrize("op", ("softmax", "log_softmax"))
def test_softmax_dtype_casts_first(fw, rng, op):
    """dtype= as torch's: x cast first, the result in that dtype (up, down, from integers)."""
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed")
    a = data(rng, (5, 33), "float32") * 4
    pairs = [("float16", "float32"), ("float32", "float16"), ("float32", "float64"), ("float32", "float32"),
             ("float64", "float16")]
    if fw.name != "numpy":
        pairs += [("bfloat16", "float32"), ("float64", "bfloat16")]
    for from_dtype, to_dtype in pairs:
        check_softmax_dtype(fw, op, a, from_dtype, to_dtype)
    check_softmax_dtype(fw, op, np.round(a), "int32", "float32")
    if fw.name == "torch":  # a tensor that requires grad: a plain result, as without dtype=
        t = torch.from_numpy(a).half().requires_grad_()
        y = getattr(gpuprims, op)(t, dtype=torch.float32)
        assert y.dtype == torch.float32 and not y.requires_grad and t.grad is None
        np.testing.assert_allclose(y.numpy(), reference(op, t.detach().double().numpy())[0], rtol=1e-5, atol=1e-6)
    if fw.name == "numpy":
        xt = a.astype(np.float16).T  # strided rows along axis 0
        yt = getattr(gpuprims, op)(xt, axis=0, dtype="float32")
        assert yt.dtype == np.float32
        np.testing.assert_allclose(yt, reference(op, xt.astype(np.float64), axis=0)[0], rtol=1e-5, atol=1e-6)
        x = a.astype(np.float16)
        out = np.full(a.shape, np.nan, np.float32)
        assert getattr(gpuprims, op)(x, dtype=np.float32, out=out) is out
        np.testing.assert_allclose(out, reference(op, x.astype(np.float64))[0], rtol=1e-5, atol=1e-6)
        with pytest.raises(TypeError, match="argument 'out': expected dtype float32"):
            getattr(gpuprims, op)(x, dtype="float32", out=np.zeros(a.shape, np.float16))
        with pytest.raises(TypeError, match="argument 'dtype': expected float16, bfloat16, float32 or float64"):
            getattr(gpuprims, op)(x, dtype="int32")
        with pytest.raises(TypeError, match="argument 'dtype'"):
            getattr(gpuprims, op)(x, dtype="complex64")


# ---------------------------------------------------------------------------------------------
# special values and numerics (issue 5)


SPECIAL_ROWS = {
    "all -inf": [-np.inf] * 5,
    "+inf": [1.0, np.inf, 2.0, -1.0, 0.5],
    "nan": [1.0, 2.0, np.nan, 0.0, -3.0],
    "-inf and finite": [-np.inf, 1.0, 2.0, -np.inf, 0.0],
    "finite": [0.25, -1.5, 3.0, 2.0, -0.75],
}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("row", sorted(SPECIAL_ROWS))
def test_special_values_match_torch(op, row):
    if torch is None:
        pytest.skip("needs torch")
    a = np.array([SPECIAL_ROWS[row]] * 3, np.float32)
    t = torch.from_numpy(a)
    want = {"softmax": lambda: torch.softmax(t, -1), "log_softmax": lambda: torch.log_softmax(t, -1),
            "layer_norm": lambda: torch.nn.functional.layer_norm(t, (5,)),
            "rms_norm": lambda: torch.nn.functional.rms_norm(t, (5,), eps=1e-6)}[op]().numpy()
    got = run_op(op, a)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ("softmax", "log_softmax"))
def test_softmax_fp16_large_values(op):
    a = np.array([[1e4, 1e4 - 8, 1e4 - 16, -1e4, 1e4 + 8]], np.float16)
    y = run_op(op, a)
    ref = reference(op, a.astype(np.float64))[0]
    np.testing.assert_allclose(y.astype(np.float64), ref, rtol=2e-3, atol=1e-3 if op == "softmax" else 2e-2)


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_constant_row_returns_bias_exactly(rng, dtype):
    fw = cpu_framework(dtype)
    n = 777
    a = np.full((4, n), 1234.567, np.float64)
    a[1] = -3.3
    a[2] = 1e30 if dtype in ("float32", "float64") else 7777.0
    a[3] = 0.0
    a = round_to(a, dtype)
    w = round_to(rng.uniform(0.5, 2, n), dtype)
    b = round_to(rng.standard_normal(n), dtype)
    y, mean, rstd = gpuprims.layer_norm(fw.make(a, dtype), fw.make(w, dtype), fw.make(b, dtype), return_stats=True)
    np.testing.assert_array_equal(to_numpy(y), np.broadcast_to(b.astype(np.float64), a.shape).astype(to_numpy(y).dtype))
    np.testing.assert_array_equal(to_numpy(mean)[:, 0], a[:, 0].astype(to_numpy(mean).dtype))
    assert np.isfinite(to_numpy(rstd)).all()


@pytest.mark.parametrize("dtype,offset,noise", [("float32", 1234.0, 1e-3), ("float16", 7600.0, 8.0),
                                                ("float32", 1e30, 1e27), ("bfloat16", 1e30, 1e28),
                                                ("float64", 1e300, 1e297), ("float32", -1e-30, 1e-33)])
@pytest.mark.parametrize("op", NORM_OPS)
def test_norm_statistics_without_cancellation(rng, op, dtype, offset, noise):
    """Large offsets with small spread keep accurate, finite statistics (no E[x^2] - E[x]^2)."""
    fw = cpu_framework(dtype)
    a = round_to(offset + noise * rng.standard_normal((3, 1000)), dtype)
    res = check(fw, op, a, dtype, rng=rng)
    assert all(np.isfinite(to_numpy(r)).all() for r in res)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_layer_norm_far_first_element(rng, dtype):
    """A row whose first element (the statistics' frame) lies far from the mean: the outputs keep
    about torch's accuracy (x - shift would otherwise round at the outlier's distance: k ulp of the
    output's unit for a first element k deviations off; one outlier in n values lies at most about
    sqrt(n) deviations off, hence the long rows)."""
    if torch is None:
        pytest.skip("the comparison is against torch's own error")
    n = 16384
    a = rng.standard_normal((5, n))
    a[:, 0] = [3.0, 30.0, 300.0, 3e3, 3e5]
    a = round_to(a, dtype)
    ref = reference("layer_norm", a)[0][:, 1:]  # the outlier's own output (~sqrt(n)) set aside
    ours = to_numpy(gpuprims.layer_norm(a)).astype(np.float64)[:, 1:]
    theirs = torch.nn.functional.layer_norm(torch.from_numpy(a), (n,)).numpy().astype(np.float64)[:, 1:]
    unit = np.finfo(dtype).eps * np.abs(ref).max(axis=1)
    err, torch_err = np.abs(ours - ref).max(axis=1), np.abs(theirs - ref).max(axis=1)
    assert (err <= 1.25 * torch_err + 2 * unit).all(), (err / unit, torch_err / unit)


# ---------------------------------------------------------------------------------------------
# arguments


@pytest.mark.parametrize("op", OPS)
def test_argument_errors(op):
    x = np.ones((3, 4), np.float32)
    with pytest.raises(TypeError, match=f"{op}: argument 'x': expected float16, bfloat16, float32 or float64, got int32"):
        run_op(op, np.ones((3, 4), np.int32))
    with pytest.raises(ValueError, match=f"{op}: argument 'x': expected at least 1 dimension"):
        run_op(op, np.float32(3.0))
    with pytest.raises(ValueError, match=f"{op}: argument 'axis': expected an int in \\[-2, 2\\)"):
        run_op(op, x, axis=2)
    with pytest.raises(TypeError, match=f"{op}: argument 'axis': expected an int"):
        run_op(op, x, axis=1.0)
    with pytest.raises(ValueError, match=f"{op}: argument 'algorithm': expected one of 'auto', "):
        run_op(op, x, algorithm="nope")
    with pytest.raises(TypeError, match=f"{op}: argument 'algorithm': expected a str"):
        run_op(op, x, algorithm=None)
    with pytest.raises(ValueError, match=f"{op}: argument 'out': expected shape \\(3, 4\\)"):
        run_op(op, x, out=np.zeros((4, 3), np.float32))
    with pytest.raises(TypeError, match=f"{op}: argument 'out': expected dtype float32, got float64"):
        run_op(op, x, out=np.zeros((3, 4), np.float64))
    ro = np.zeros((3, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match=f"{op}: argument 'out': expected a writable array"):
        run_op(op, x, out=ro)
    with pytest.raises(TypeError, match=f"{op}: argument 'x': expected an array supporting DLPack"):
        run_op(op, [[1.0, 2.0]])


@pytest.mark.parametrize("op", NORM_OPS)
def test_norm_argument_errors(op):
    x = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match=f"{op}: argument 'weight': expected shape \\(4,\\) \\(the row length\\), got \\(5,\\)"):
        run_op(op, x, np.ones(5, np.float32))
    with pytest.raises(ValueError, match=f"{op}: argument 'weight': expected shape \\(4,\\)"):
        run_op(op, x, np.ones((1, 4), np.float32))
    with pytest.raises(TypeError, match=f"{op}: argument 'weight': expected dtype float32 \\(x's\\), got float64"):
        run_op(op, x, np.ones(4, np.float64))
    for eps, err in ((-1.0, ValueError), (float("nan"), ValueError), (float("inf"), ValueError), ("1", TypeError),
                     (True, TypeError)):
        with pytest.raises(err, match=f"{op}: argument 'eps'"):
            run_op(op, x, eps=eps)
    if op == "layer_norm":
        with pytest.raises(ValueError, match="layer_norm: argument 'bias': expected shape \\(4,\\)"):
            run_op(op, x, None, np.ones(3, np.float32))


def test_algorithm_of_another_op_is_refused():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="softmax: argument 'algorithm': expected one of 'auto', 'three_pass', "
                                         "'online', 'row_on_chip', 'split_row', 'cluster_row', 'row_lag', "
                                         "'row_hold', 'row_staged', 'columns', got 'welford'"):
        gpuprims.softmax(x, algorithm="welford")
    with pytest.raises(ValueError, match="rms_norm: argument 'algorithm'.*got 'welford'"):
        gpuprims.rms_norm(x, algorithm="welford")


def test_variant_tables():
    assert variants("softmax") == ("three_pass", "online", "row_on_chip", "split_row", "cluster_row", "row_lag",
                                   "row_hold", "row_staged", "columns")
    assert variants("log_softmax") == variants("softmax")
    assert variants("layer_norm") == ("two_pass", "welford", "row_on_chip", "split_row", "cluster_row", "row_lag",
                                      "row_hold", "columns")
    assert variants("rms_norm") == ("two_pass", "row_on_chip", "split_row", "cluster_row", "row_lag", "row_hold",
                                    "columns")
    for op in OPS:
        for v in gpuprims.variants(op):
            assert v.description and v.deterministic


@pytest.mark.parametrize("op", ("softmax", "log_softmax"))
def test_row_staged_is_a_softmax_variant(rng, op):
    """row_staged (rows back to back staged through shared memory) is the softmax kind's: accepted
    there (CPU arrays run the reference), refused by layer_norm / rms_norm with their own names."""
    check(NUMPY_CPU, op, data(rng, (5, 63), "float32"), "float32", algorithm="row_staged", rng=rng)
    x = np.ones((3, 4), np.float32)
    for norm in ("layer_norm", "rms_norm"):
        with pytest.raises(ValueError, match=f"{norm}: argument 'algorithm'.*'columns', got 'row_staged'"):
            getattr(gpuprims, norm)(x, algorithm="row_staged")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("algorithm", ("auto", "row_on_chip", "split_row", "cluster_row", "row_lag", "row_hold",
                                       "columns"))
def test_every_algorithm_name_is_accepted_on_the_cpu(rng, op, algorithm):
    """CPU arrays always run the reference; algorithm= is still validated and accepted."""
    check(NUMPY_CPU, op, data(rng, (3, 17), "float32"), "float32", algorithm=algorithm, rng=rng)
