"""matmul and gemv on the CPU reference: shapes, batching and broadcasting, strides, K = 0, empty
inputs, special values, exact integer products, dtype rules and argument errors. Runs in CI
without a GPU."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import NUMPY_CPU, cpu_framework, framework_params, to_numpy
from gemm_reference import (FLOATS, GEMV_VARIANTS, MATMUL_VARIANTS, assert_close, check_gemv, check_matmul, data,
                            integer_data, matmul_reference, matmul_variants_for)

import gpuprims

SHAPES = ((1, 1, 1), (7, 13, 5), (127, 129, 131), (64, 1, 33), (3, 200, 1), (1, 77, 1))


def test_variant_tables():
    assert [v.name for v in gpuprims.variants("matmul")] == list(MATMUL_VARIANTS)
    assert [v.name for v in gpuprims.variants("gemv")] == list(GEMV_VARIANTS)
    assert all(v.deterministic and v.description for v in gpuprims.variants("matmul") + gpuprims.variants("gemv"))


@pytest.mark.parametrize("dtype", FLOATS)
def test_cpu_reference_against_float64(rng, dtype):
    fw = cpu_framework(dtype)
    for m, k, n in SHAPES:
        check_matmul(fw, data(rng, (m, k), dtype), data(rng, (k, n), dtype), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_integer_products_are_exact(rng, dtype):
    fw = cpu_framework(dtype)
    m, k, n = 9, 40, 11
    a, b = integer_data(rng, (m, k), dtype, k), integer_data(rng, (k, n), dtype, k)
    got = to_numpy(gpuprims.matmul(fw.make(a, dtype), fw.make(b, dtype)))
    np.testing.assert_array_equal(got, matmul_reference(a, b))


def test_batched_and_broadcast(rng):
    a3, b3 = data(rng, (5, 7, 13), "float32"), data(rng, (5, 13, 6), "float32")
    a2, b2 = data(rng, (7, 13), "float32"), data(rng, (13, 6), "float32")
    for a, b in ((a3, b3), (a3, b2), (a2, b3), (a3[:1], b3), (a3, b3[:1]), (a3[:0], b2), (a3[:0], b3[:1])):
        r = check_matmul(NUMPY_CPU, a, b, "float32")
        assert r.shape == np.matmul(a, b).shape


def test_strided_transposed_and_negative_views(rng):
    a, b = data(rng, (40, 30), "float64"), data(rng, (30, 50), "float64")
    views = (None, lambda v: v.T.copy().T, lambda v: v[::-1], lambda v: v[:, ::-1], lambda v: v[::-1, ::-1])
    for va in views:
        for vb in views:
            check_matmul(NUMPY_CPU, a, b, "float64", view_a=va, view_b=vb)
    check_matmul(NUMPY_CPU, data(rng, (80, 60), "float64"), data(rng, (60, 100), "float64"), "float64",
                 view_a=lambda v: v[::2, ::-2], view_b=lambda v: v[::-2, 1::2])
    # column-major operands and leading dimensions larger than the width
    check_matmul(NUMPY_CPU, data(rng, (30, 40), "float32"), data(rng, (50, 30), "float32"), "float32",
                 view_a=lambda v: v.T, view_b=lambda v: v.T)
    check_matmul(NUMPY_CPU, data(rng, (40, 64), "float32"), data(rng, (33, 70), "float32"), "float32",
                 view_a=lambda v: v[:, 5:38], view_b=lambda v: v[:, 3:53])
    check_matmul(NUMPY_CPU, data(rng, (4, 13, 9), "float32"), data(rng, (9, 4, 7), "float32"), "float32",
                 view_b=lambda v: v.transpose(1, 0, 2))


def test_out_any_strides(rng):
    a, b = data(rng, (6, 8), "float32"), data(rng, (8, 5), "float32")
    backing = np.full((5, 12), np.nan, np.float32)
    out = backing[:, ::2][:, ::-1].T  # (6, 5), negative and non-unit strides
    assert gpuprims.matmul(a, b, out=out) is out
    assert_close(out, matmul_reference(a, b), np.full((6, 5), 1e-5), "strided out=")


def test_k_zero_gives_zeros_and_empty_shapes():
    out = np.full((3, 4), np.nan, np.float32)
    gpuprims.matmul(np.ones((3, 0), np.float32), np.ones((0, 4), np.float32), out=out)
    np.testing.assert_array_equal(out, np.zeros((3, 4), np.float32))
    assert gpuprims.matmul(np.ones((0, 5), np.float32), np.ones((5, 4), np.float32)).shape == (0, 4)
    assert gpuprims.matmul(np.ones((3, 5), np.float32), np.ones((5, 0), np.float32)).shape == (3, 0)
    assert gpuprims.matmul(np.ones((0, 3, 5), np.float32), np.ones((5, 2), np.float32)).shape == (0, 3, 2)
    y = np.full(3, np.nan, np.float64)
    gpuprims.gemv(np.ones((3, 0)), np.ones(0), out=y)
    np.testing.assert_array_equal(y, np.zeros(3))


def test_nan_and_inf_propagate():
    a = np.array([[1.0, np.nan], [2.0, 3.0], [np.inf, 1.0], [np.inf, 0.0]], np.float32)
    b = np.array([[1.0, 0.0], [1.0, 2.0]], np.float32)
    got = gpuprims.matmul(a, b)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got, np.matmul(a.astype(np.float64), b).astype(np.float32))


@pytest.mark.parametrize("fw", framework_params("cpu"))
def test_frameworks(rng, fw):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed")
    r = check_matmul(fw, data(rng, (9, 17), "float32"), data(rng, (17, 4), "float32"), "float32")
    assert fw.is_native(r)
    r = check_gemv(fw, data(rng, (9, 17), "float32"), data(rng, 17, "float32"), "float32")
    assert fw.is_native(r)


@pytest.mark.parametrize("dtype", FLOATS)
def test_gemv_against_float64(rng, dtype):
    fw = cpu_framework(dtype)
    for m, k in ((1, 1), (7, 13), (129, 1031), (5, 0)):
        check_gemv(fw, data(rng, (m, k), dtype), data(rng, k, dtype), dtype)


def test_gemv_strided(rng):
    a, x = data(rng, (20, 30), "float32"), data(rng, 60, "float32")
    check_gemv(NUMPY_CPU, a, x, "float32", view_a=lambda v: v[::-1, ::-1], view_x=lambda v: v[::-2])
    check_gemv(NUMPY_CPU, data(rng, (30, 20), "float32"), data(rng, 30, "float32"), "float32",
               view_a=lambda v: v.T)


def test_algorithm_names_run_the_reference_on_cpu(rng):
    a, b = data(rng, (5, 6), "float32"), data(rng, (6, 7), "float32")
    for name in ("auto",) + MATMUL_VARIANTS:
        if name != "mma_pipelined":
            check_matmul(NUMPY_CPU, a, b, "float32", algorithm=name, allow_tf32=name == "wmma")
    a16, b16 = data(rng, (5, 6), "float16"), data(rng, (6, 7), "float16")
    for name in ("auto",) + matmul_variants_for("float16"):
        check_matmul(NUMPY_CPU, a16, b16, "float16", algorithm=name)
    for name in ("auto",) + GEMV_VARIANTS:
        check_gemv(NUMPY_CPU, a, b[:, 0].copy(), "float32", algorithm=name)


def test_argument_errors():
    f32, f16 = np.ones((3, 4), np.float32), np.ones((4, 2), np.float16)
    with pytest.raises(TypeError, match=r"matmul: arguments 'a' and 'b' must have the same dtype, got float32 and "
                                        r"float16"):
        gpuprims.matmul(f32, f16)
    with pytest.raises(TypeError, match=r"matmul: argument 'a': expected float16, bfloat16, float32 or float64, "
                                        r"got int32"):
        gpuprims.matmul(np.ones((3, 4), np.int32), np.ones((4, 2), np.int32))
    with pytest.raises(ValueError, match=r"matmul: arguments 'a' and 'b' have mismatched inner dimensions"):
        gpuprims.matmul(f32, np.ones((5, 2), np.float32))
    with pytest.raises(ValueError, match=r"matmul: argument 'a': expected a 2-D or 3-D array, got shape \(4,\)"):
        gpuprims.matmul(np.ones(4, np.float32), f32)
    with pytest.raises(ValueError, match=r"matmul: argument 'b': expected a 2-D or 3-D array"):
        gpuprims.matmul(f32, np.ones((1, 1, 4, 2), np.float32))
    with pytest.raises(ValueError, match=r"batch sizes that do not broadcast"):
        gpuprims.matmul(np.ones((2, 3, 4), np.float32), np.ones((3, 4, 2), np.float32))
    with pytest.raises(ValueError, match=r"matmul: argument 'out': expected shape \(3, 2\), got \(2, 3\)"):
        gpuprims.matmul(f32, np.ones((4, 2), np.float32), out=np.empty((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"matmul: argument 'out': expected dtype float32, got float64"):
        gpuprims.matmul(f32, np.ones((4, 2), np.float32), out=np.empty((3, 2)))
    with pytest.raises(ValueError, match=r"matmul: argument 'algorithm': expected one of 'auto', 'naive'"):
        gpuprims.matmul(f32, np.ones((4, 2), np.float32), algorithm="cublas")
    with pytest.raises(TypeError, match=r"matmul: argument 'algorithm': expected a str"):
        gpuprims.matmul(f32, np.ones((4, 2), np.float32), algorithm=3)
    with pytest.raises(TypeError, match=r"matmul: argument 'allow_tf32': expected a bool"):
        gpuprims.matmul(f32, np.ones((4, 2), np.float32), allow_tf32=1)
    with pytest.raises(TypeError, match=r"matmul: argument 'a': algorithm 'warptile' takes float32 inputs, got "
                                        r"float64"):
        gpuprims.matmul(np.ones((3, 4)), np.ones((4, 2)), algorithm="warptile")
    with pytest.raises(TypeError, match=r"matmul: argument 'a': algorithm 'wmma' takes float16 or bfloat16 inputs, "
                                        r"or float32 with allow_tf32=True, got float32 with allow_tf32=False"):
        gpuprims.matmul(f32, np.ones((4, 2), np.float32), algorithm="wmma")
    with pytest.raises(TypeError, match=r"algorithm 'wmma' takes float16 or bfloat16 inputs, .*got float64"):
        gpuprims.matmul(np.ones((3, 4)), np.ones((4, 2)), algorithm="wmma", allow_tf32=True)
    with pytest.raises(TypeError, match=r"matmul: argument 'a': algorithm 'mma_pipelined' takes float16 or "
                                        r"bfloat16 inputs, got float32"):
        gpuprims.matmul(f32, np.ones((4, 2), np.float32), algorithm="mma_pipelined", allow_tf32=True)
    with pytest.raises(TypeError, match=r"matmul: argument 'a': expected an array supporting DLPack"):
        gpuprims.matmul([[1.0]], f32)
    with pytest.raises(TypeError, match=r"gemv: arguments 'a' and 'x' must have the same dtype"):
        gpuprims.gemv(f32, np.ones(4, np.float64))
    with pytest.raises(ValueError, match=r"gemv: argument 'x': expected shape \(4,\) \(a's column count\), got "
                                         r"\(3,\)"):
        gpuprims.gemv(f32, np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"gemv: argument 'a': expected a 2-D array"):
        gpuprims.gemv(np.ones((2, 3, 4), np.float32), np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"gemv: argument 'out': expected shape \(3,\)"):
        gpuprims.gemv(f32, np.ones(4, np.float32), out=np.empty(4, np.float32))
    with pytest.raises(ValueError, match=r"gemv: argument 'algorithm': expected one of 'auto', 'naive', "
                                         r"'warp_per_row', 'vectorized', got 'warptile'"):
        gpuprims.gemv(f32, np.ones(4, np.float32), algorithm="warptile")
    ro = np.empty((3, 2), np.float32)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match=r"matmul: argument 'out': expected a writable array"):
        gpuprims.matmul(f32, np.ones((4, 2), np.float32), out=ro)
