"""What the gemm tests share: data exactly representable in each dtype, float64 references, error
bounds, and running matmul / gemv through any framework."""
from __future__ import annotations

import numpy as np
from conftest import bf16_round, to_numpy

import gpuprims

FLOATS = ("float16", "bfloat16", "float32", "float64")
# Variants by the dtypes they take (dispatch rejects the rest with TypeError). The tensor-core
# variants take float16 and bfloat16; wmma also float32 with allow_tf32=True (tested with TF32
# tolerances on its own).
ALL_DTYPE_VARIANTS = ("naive", "coalesced", "smem_tiled")
FLOAT32_VARIANTS = ("blocktile_1d", "blocktile_2d", "vectorized", "warptile")
TENSOR_CORE_VARIANTS = ("wmma", "mma_pipelined")
MATMUL_VARIANTS = ALL_DTYPE_VARIANTS + FLOAT32_VARIANTS + TENSOR_CORE_VARIANTS
GEMV_VARIANTS = ("naive", "warp_per_row", "vectorized")
_EPS = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24, "float64": 2.0 ** -53}
# Half the smallest subnormal: the absolute rounding error of results that land in the subnormal range.
_TINY = {"float16": 2.0 ** -25, "bfloat16": 2.0 ** -134, "float32": 2.0 ** -150, "float64": 2.0 ** -1074}


def matmul_variants_for(dtype):
    """The variants that take dtype without TF32."""
    if dtype == "float32":
        return ALL_DTYPE_VARIANTS + FLOAT32_VARIANTS
    if dtype in ("float16", "bfloat16"):
        return ALL_DTYPE_VARIANTS + TENSOR_CORE_VARIANTS
    return ALL_DTYPE_VARIANTS


def round_to(a: np.ndarray, dtype: str) -> np.ndarray:
    """Values of `a` representable in dtype (float32 storage for bfloat16)."""
    if dtype == "bfloat16":
        return bf16_round(a.astype(np.float32))
    return a.astype(dtype)


def data(rng, shape, dtype, scale=1.0):
    """Fresh standard-normal data rounded to dtype: never all zeros."""
    return round_to(rng.standard_normal(shape) * scale, dtype)


def integer_data(rng, shape, dtype, k):
    """Small integers whose products and every partial sum along K are exact in dtype (and in the
    float32 accumulator): |result| <= 2048 for float16, 256 for bfloat16."""
    limit = {"float16": 2048, "bfloat16": 256}.get(dtype, 1 << 20)
    bound = max(1, int(np.sqrt(limit / max(k, 1))))
    return rng.integers(-bound, bound, size=shape, endpoint=True).astype(np.float32)


def matmul_reference(a, b):
    return np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))


def matmul_tolerance(a, b, dtype, tf32=False):
    """|result - float64| bound: accumulation in float32 (float64 for float64) over K terms in any
    order (K * eps * |a| @ |b|), plus one rounding to the output dtype (absolute in its subnormal
    range); with tf32, each input
    rounded to 10 mantissa bits first (2 * 2^-11 relative per product)."""
    k = np.shape(a)[-1]
    acc_eps = _EPS["float64" if dtype == "float64" else "float32"]
    mag = np.matmul(np.abs(np.asarray(a, np.float64)), np.abs(np.asarray(b, np.float64)))
    ref = matmul_reference(a, b)
    input_rounding = 2.0 ** -10 * mag if tf32 else 0.0
    return (k + 2) * acc_eps * mag + input_rounding + _EPS[dtype] * np.abs(ref) + _TINY[dtype] + 1e-300


def assert_close(result, ref, tol, what=""):
    got = to_numpy(result).astype(np.float64)
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    err = np.abs(got - ref)
    bad = ~(err <= tol)
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} outside tolerance; first at {idx}: "
                             f"got {got[idx]!r}, expected {ref[idx]!r} +- {tol[idx]!r}")


def check_matmul(fw, a, b, dtype, *, algorithm="auto", view_a=None, view_b=None, out=None, allow_tf32=False):
    """matmul through framework fw against float64, views applied to the framework arrays and the
    numpy data alike. Returns the result."""
    x, y = fw.make(a, dtype), fw.make(b, dtype)
    if view_a is not None:
        x, a = view_a(x), view_a(a)
    if view_b is not None:
        y, b = view_b(y), view_b(b)
    result = gpuprims.matmul(x, y, algorithm=algorithm, out=out, allow_tf32=allow_tf32)
    if out is not None:
        assert result is out
    assert_close(result, matmul_reference(a, b), matmul_tolerance(a, b, dtype, allow_tf32),
                 f"matmul {algorithm} {dtype}")
    return result


def check_gemv(fw, a, x, dtype, *, algorithm="auto", view_a=None, view_x=None):
    av, xv = fw.make(a, dtype), fw.make(x, dtype)
    if view_a is not None:
        av, a = view_a(av), view_a(a)
    if view_x is not None:
        xv, x = view_x(xv), view_x(x)
    result = gpuprims.gemv(av, xv, algorithm=algorithm)
    assert_close(result, matmul_reference(a, x), matmul_tolerance(a, x[:, None], dtype)[:, 0],
                 f"gemv {algorithm} {dtype}")
    return result
