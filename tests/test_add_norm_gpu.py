"""add_layer_norm / add_rms_norm on the GPU: the fused row_on_chip path (every tile shape, vector
and element-wise) and the unfused fallback (long rows, other variants) against the unfused
sequence; the sum bit for bit. Skipped (with the reason) without a GPU."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import Framework, framework_params, to_numpy, torch
from norms_reference import FLOATS, assert_close, reference, round_to, tolerance

import gpuprims

pytestmark = pytest.mark.gpu
TORCH_CUDA = Framework("torch", "cuda")
ADD_OPS = ("add_layer_norm", "add_rms_norm")
# Around row_on_chip's tiles (512; 2048 / 4096 / 8192; 8192 / 16384) and past its capacity (fallback).
ROW_LENS = (1, 5, 512, 513, 2048, 2049, 4096, 4097, 8192, 8193, 12289, 16384, 16385)


def need(fw=TORCH_CUDA):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed with GPU support")


def check(fw, op, shape, dtype, rng, algorithm="auto", view=None, affine=True, inputs=None, out=None):
    """out: None, or "x" / "residual" for the normalized output written over that input."""
    a = round_to(rng.standard_normal(shape) * 3, dtype) if inputs is None else inputs[0]
    c = round_to(rng.standard_normal(shape) * 3, dtype) if inputs is None else inputs[1]
    x, r = fw.make(a, dtype), fw.make(c, dtype)
    if view is not None:
        x, r = view(x), view(r)
    n = tuple(x.shape)[-1]
    w = round_to(rng.uniform(0.5, 1.5, n), dtype) if affine else None
    b = round_to(rng.standard_normal(n), dtype) if op == "add_layer_norm" and affine else None
    args = (() if w is None else (fw.make(w, dtype),)) + ((fw.make(b, dtype),) if b is not None else ())
    xs, rs = to_numpy(x).astype(np.float64), to_numpy(r).astype(np.float64)
    target = {None: None, "x": x, "residual": r}[out]
    y, s = getattr(gpuprims, op)(x, r, *args, algorithm=algorithm, out=target)
    assert target is None or y is target
    want_s = round_to(xs + rs, dtype).astype(np.float64)
    np.testing.assert_array_equal(to_numpy(s).astype(np.float64), want_s)
    base = op[len("add_"):]
    ref = reference(base, want_s, -1, w, b)[0]
    assert_close(y, ref, tolerance(base, dtype, want_s, ref, -1, w, b))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ADD_OPS)
def test_every_dtype_row_length_and_variant(rng, op, dtype):
    need()
    for algorithm in ("auto",) + tuple(v.name for v in gpuprims.variants(op[len("add_"):])):
        for n in ROW_LENS:
            check(TORCH_CUDA, op, (3 if n > 4096 else 37, n), dtype, rng, algorithm)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ADD_OPS)
def test_tuned_tiles_many_rows(rng, op, dtype):
    """Since performance step 4 (docs/norms.md) the 4096- / 8192-element tiles of the add-norms
    are the tuned ones (lean; packed and folded for fp16 / bf16) with the vector residual prologue
    (add_residual_vectors: pairs rounded by the hardware, the sum kept as the tile). Lengths that
    fill one slot of one thread (520, 4104), part of the tiles (2056, 6144, 8184), whole tiles, more
    rows than one wave of blocks, with and without the affine vectors; the sum bit for bit. The
    fp16 / bf16 8192-element tile stages its rows through two shared-memory stages on a persistent
    grid (session 16): 601 rows give blocks of a 2-per-SM wave on a 132-SM GPU three rows each,
    so every stage is refilled."""
    need()
    for n, rows in ((520, 601), (2056, 601), (4096, 601), (4104, 601), (6144, 601), (8184, 601), (8192, 601)):
        check(TORCH_CUDA, op, (rows, n), dtype, rng, algorithm="row_on_chip")
        check(TORCH_CUDA, op, (rows, n), dtype, rng, algorithm="row_on_chip", affine=False)


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
@pytest.mark.parametrize("op", ADD_OPS)
def test_prologue_statistics_fallbacks(rng, op, dtype):
    """The add-norms' one-pass statistics from the residual prologue (RowOnChipConfig::kOrigin,
    origin_stats: the sums of s and s^2 about 0, docs/norms.md) where they must decline and fall
    back: sums whose mean lies 0 to 8 deviations from 0 (accepted within about 3.9), of which some
    with a first element far from the mean (the first-element form declines too: the re-centred
    pass), 1234 + noise, constant rows (outputs exactly the bias), and, for bfloat16, rows near
    1e30 (the squares overflow) and near 1e-25 (the squares underflow); 4096- and 8192-element tiles."""
    need()
    for n in (4096, 8192):
        a = rng.standard_normal((64, n))
        sd = a[:, 1:].std(axis=1)
        a += (np.linspace(0.0, 8.0, 64) * sd)[:, None]
        a[16:32, 0] = a[16:32, 1:].mean(axis=1) + 20.0 * sd[16:32]
        a[40:48] = 1234.0 + 16.0 * rng.standard_normal((8, n))
        a[48:52] = 3.0
        if dtype == "bfloat16":
            a[52:56] = 1e-25 * (1.0 + rng.standard_normal((4, n)))
            a[56:] = 1e30 * (1.0 + 0.05 * rng.standard_normal((8, n)))
        a = round_to(a, dtype)
        c = np.zeros_like(a)  # the sum is x exactly
        for algorithm in ("auto", "row_on_chip"):
            for affine in (True, False):
                check(TORCH_CUDA, op, a.shape, dtype, rng, algorithm, affine=affine, inputs=(a, c))


@pytest.mark.parametrize("op", ADD_OPS)
def test_views_and_many_rows(rng, op):
    need()
    check(TORCH_CUDA, op, (20000, 64), "float32", rng)
    for view in (lambda v: v[:, 1:], lambda v: v[::2, ::3], lambda v: v.T):  # torch holds no negative strides
        check(TORCH_CUDA, op, (30, 1000), "bfloat16", rng, view=view)


@pytest.mark.parametrize("op", ADD_OPS)
def test_in_place(rng, op):
    """out=x or out=residual: the fused kernel (rows on chip) and the unfused path (the sum written
    first, then normalized) read both inputs before writing over either."""
    need()
    for shape, algorithms in (((9, 1024), ("auto", "row_on_chip", "two_pass")), ((3, 20000), ("auto", "split_row"))):
        for algorithm in algorithms:
            for out in ("x", "residual"):
                check(TORCH_CUDA, op, shape, "float32", rng, algorithm, out=out)


@pytest.mark.parametrize("fw", framework_params("cuda"))
def test_frameworks(fw, rng):
    need(fw)
    for op in ADD_OPS:
        check(fw, op, (9, 1024), "float32", rng)


def test_torch_side_stream_ordering():
    need()
    x = torch.full((256, 2048), float("nan"), device="cuda")
    r = torch.zeros(256, 2048, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        x.fill_(1.0)
        x[:, ::2] = 3.0
        y, s = gpuprims.add_rms_norm(x, r)
    torch.cuda.synchronize()
    torch.testing.assert_close(s, x)
    torch.testing.assert_close(y, x / torch.sqrt(torch.tensor(5.0 + 1e-6)))


@pytest.mark.big
@pytest.mark.parametrize("op", ADD_OPS)
def test_beyond_2_31_elements(op):
    """2^31 + 8192 bfloat16 elements in rows of 8192 (the fused kernel): int64 row offsets into x,
    residual, the sum and the output."""
    need()
    rows = (1 << 31) // 8192 + 1
    x = torch.randn(rows, 8192, device="cuda", dtype=torch.bfloat16)
    r = torch.randn(rows, 8192, device="cuda", dtype=torch.bfloat16)
    y, s = getattr(gpuprims, op)(x, r)
    for i in (0, rows // 2, rows - 1):
        want_s = (x[i].float() + r[i].float()).to(torch.bfloat16)
        torch.testing.assert_close(s[i], want_s, rtol=0, atol=0)
        v = want_s.float()
        want = torch.nn.functional.layer_norm(v, (8192,)) if op == "add_layer_norm" else \
            torch.nn.functional.rms_norm(v, (8192,), eps=1e-6)
        torch.testing.assert_close(y[i].float(), want, rtol=1e-2, atol=1e-2)


def test_sanitize_add_norm_small(rng):
    need()
    for op in ADD_OPS:
        for shape in ((9, 64), (3, 1000), (2, 20000)):
            check(TORCH_CUDA, op, shape, "float32", rng)
        check(TORCH_CUDA, op, (3, 1001), "float32", rng, view=lambda v: v[:, 1:])
        check(TORCH_CUDA, op, (600, 4104), "bfloat16", rng)  # the staged tile (shared-memory stages)
