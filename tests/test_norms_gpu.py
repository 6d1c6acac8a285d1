"""norms on the GPU: every variant, dtype and op against float64; tile boundaries, vector and
element-wise paths, strided/misaligned/transposed/negative views, empty inputs, special values,
numerics, frameworks, streams, graphs, determinism and sizes beyond 2^31. Skipped (with the
reason) without a GPU."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import Framework, cupy, framework_params, random_values, to_numpy, torch
from norms_reference import (FLOATS, NORM_OPS, OPS, OUT_EPS, assert_close, check, check_softmax_dtype, reference,
                             round_to, run_op, tolerance, variants)

import gpuprims

pytestmark = pytest.mark.gpu
TORCH_CUDA = Framework("torch", "cuda")
# Row lengths around every tile boundary of row_on_chip (narrow groups 128 / 256, warp 512 / 1024,
# block 2048 / 4096 / 8192 / 16384 by dtype) and split_row's chunk (8192), odd lengths (63: rows
# "auto" stages through shared memory, row_staged.cuh), and a multi-chunk row.
ROW_LENS = (1, 5, 32, 63, 128, 129, 256, 257, 512, 513, 1024, 1025, 2048, 2049, 4096, 4097, 5120, 8192, 8193, 12289, 16384,
            16385, 40000)


@pytest.mark.parametrize("algorithm", ("auto", "three_pass", "online", "row_on_chip", "split_row", "cluster_row",
                                       "row_lag", "row_hold", "row_staged"))
@pytest.mark.parametrize("n", (256, 40000))
def test_softmax_bfloat16_keeps_subnormal_outputs(algorithm, n):
    """bfloat16 shares float's exponent range: outputs between its smallest subnormal (2^-133) and
    2^-126 are values, not 0 (the lean exponential once flushed them; torch keeps them)."""
    need(TORCH_CUDA)
    a = np.zeros((3, n), np.float32)
    a[:, 1:] = -np.linspace(80.0, 91.0, n - 1, dtype=np.float32)  # outputs exp(x - max): 2e-35 to 3e-40
    a = round_to(a, "bfloat16")
    x = torch.tensor(a, device="cuda").to(torch.bfloat16)
    got = to_numpy(gpuprims.softmax(x, algorithm=algorithm)).astype(np.float64)
    e = np.exp(a.astype(np.float64) - a.max(axis=1, keepdims=True))
    want = round_to(e / e.sum(axis=1, keepdims=True), "bfloat16").astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=2.0**-7, atol=2.0**-133)
    tiny = (want > 0) & (want < 2.0**-126)
    assert tiny.sum() > n // 10 and (got[tiny] > 0).all()


def need(fw):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed with GPU support")


def data(rng, shape, dtype, scale=3.0):
    return round_to(random_values(rng, int(np.prod(shape)), "float32").reshape(shape) * scale, dtype)


def poisoned_like(x):
    return torch.full_like(x, float("nan"))


def check_torch(op, a, dtype, rng, *, algorithm="auto", view=None, affine=True):
    """check() through torch on the GPU, writing into a NaN-poisoned out= as well."""
    check(TORCH_CUDA, op, a, dtype, rng=rng, algorithm=algorithm, view=view, affine=affine)
    x = TORCH_CUDA.make(a, dtype)
    if view is not None:
        x, a = view(x), view(a)
    out = poisoned_like(x)
    assert run_op(op, x, algorithm=algorithm, out=out) is out
    ref = reference(op, a)[0]
    assert_close(out, ref, tolerance(op, dtype, a, ref), "out=")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", OPS)
def test_every_variant_dtype_and_row_length(rng, op, dtype):
    need(TORCH_CUDA)
    for algorithm in ("auto",) + variants(op):
        for n in ROW_LENS:
            rows = 3 if n > 4096 else 37
            check_torch(op, data(rng, (rows, n), dtype), dtype, rng, algorithm=algorithm)


@pytest.mark.parametrize("op", OPS)
def test_many_rows_and_empty(rng, op):
    """Grid-stride loops (rows beyond 65535 in split_row's grid.y), a warp's 4 rows per block with a
    remainder, and empty inputs that must launch nothing."""
    need(TORCH_CUDA)
    for algorithm in ("auto",) + variants(op):
        for shape in ((70001, 3), (4099, 33), (5, 0), (0, 7), (0, 0)):
            check_torch(op, data(rng, shape, "float32"), "float32", rng, algorithm=algorithm)


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32"))
@pytest.mark.parametrize("op", OPS)
def test_narrow_row_groups_with_a_remainder(rng, op, dtype):
    """Rows of up to 512 elements run groups of 2 to 32 lanes a row (launch_narrow_rows: 4 / 8 lanes
    for up to 64 / 128; for up to 256 / 512, 8 / 16 lanes of 32 values in 2-byte types, 16 / 32 of
    16 in float32; the element-wise path 2 / 4 / 8 / 16 lanes of 32 values): row counts that leave
    a warp's last groups without a row (their lanes skip the shuffles the others run), on the
    vector path and, with an offset view, the element-wise or ragged one."""
    need(TORCH_CUDA)
    for n in (1, 8, 64, 65, 100, 128, 200, 256, 257, 384, 512):
        for rows in (1, 2, 3, 5, 6, 7, 9, 17, 33, 70):
            a = data(rng, (rows, n + 1), dtype)
            check_torch(op, np.ascontiguousarray(a[:, :n]), dtype, rng)
            check_torch(op, a, dtype, rng, view=lambda v: v[:, 1:])


@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
@pytest.mark.parametrize("op", OPS)
def test_views_take_the_element_wise_path(rng, op, dtype):
    """Misaligned bases, padded and odd row strides, transposes, steps, other axes: every variant
    (a misaligned view must never reach a 16-byte access)."""
    need(TORCH_CUDA)
    views = {
        "offset1": lambda v: v.reshape(-1)[1:1 + 6 * 4096].reshape(6, 4096),
        "padded_rows": lambda v: v[:, :4000],
        "transposed": lambda v: v.T,
        "step2": lambda v: v[::2, ::2],
        "column_block": lambda v: v[1:5, 8:8 + 2048],
    }
    a = data(rng, (7, 4104), dtype)
    for algorithm in ("auto",) + variants(op):
        for name, view in views.items():
            check_torch(op, a, dtype, rng, algorithm=algorithm, view=view)
    b = data(rng, (5, 300, 6), dtype)
    for axis in (0, 1, 2):
        check(TORCH_CUDA, op, b, dtype, axis=axis, rng=rng)


# Rows along a strided axis whose neighbours lie one element apart (the columns kernel,
# column_rows.cuh): (planes, row_len, width) arrays along axis 1 -- NCHW channels, axis 0 of a
# matrix. Widths around its 32-row groups (16 is the least it takes; 15 runs row_on_chip), row lengths
# on both sides of its block shapes (a thread a row up to 16, 4 / 16 / 32 warps a group up to 64 /
# 256 / beyond) and of a thread's batch of 8 loads, groups that leave a block's last groups idle
# (8 groups a block for the shortest rows), rows of one element.
SIDE_BY_SIDE = ((3, 7, 45), (1, 16, 40), (2, 17, 33), (1, 65, 33), (3, 257, 16), (1, 64, 100), (2, 256, 31),
                (2, 1000, 40), (2, 3, 20), (1, 1, 50), (4, 9, 15), (1, 9, 300))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", OPS)
def test_rows_side_by_side(rng, op, dtype):
    need(TORCH_CUDA)
    for shape in SIDE_BY_SIDE:
        a = data(rng, shape, dtype)
        for algorithm in ("auto", "columns"):
            res = check(TORCH_CUDA, op, a, dtype, axis=1, rng=rng, algorithm=algorithm)
            y = res[0] if op in NORM_OPS else res
            x = TORCH_CUDA.make(a, dtype)
            out = poisoned_like(x)
            w = None if op not in NORM_OPS else TORCH_CUDA.make(round_to(rng.uniform(0.5, 1.5, shape[1]), dtype), dtype)
            want = run_op(op, x, w, axis=1, algorithm=algorithm)
            assert run_op(op, x, w, axis=1, algorithm=algorithm, out=out) is out
            assert torch.equal(out, want), (shape, algorithm)
            assert y.shape == x.shape


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", OPS)
def test_rows_side_by_side_staged_and_registers(rng, op, dtype):
    """Rows side by side of more than 32 elements whose pieces are 16-byte aligned are staged through
    shared memory (column_staged.cuh) on fewer warps a row than the register kernels take; the
    same rows in a view one element off alignment are held in registers. Both against float64.
    (64, 40, 4096) gives each block of the staged grid several steps (both stages, the copy of one
    step over the work of another); rows of 21 stay in registers either way; 512 is the longest
    staged row (float64: 128)."""
    need(TORCH_CUDA)
    for shape in ((2, 21, 64), (2, 33, 64), (3, 150, 48), (1, 512, 40), (64, 40, 4096)):
        a = data(rng, shape[:-1] + (shape[-1] + 1,), dtype)
        for algorithm in ("auto", "columns"):
            check(TORCH_CUDA, op, np.ascontiguousarray(a[..., 1:]), dtype, axis=1, rng=rng, algorithm=algorithm)
            check(TORCH_CUDA, op, a, dtype, axis=1, rng=rng, algorithm=algorithm, view=lambda v: v[..., 1:])


@pytest.mark.parametrize("op", OPS)
def test_rows_side_by_side_special_values(rng, op):
    """The columns kernel per row: rows of -inf, with one +inf, with a NaN, half -inf (softmax kind,
    against torch); constant rows (layer_norm gives the bias exactly), first elements 0 to 100
    deviations off the mean (the statistics move their frame to the mean for those rows only), rows
    near 1e30 -- each in one lane among ordinary rows."""
    need(TORCH_CUDA)
    for n in (5, 700):
        a = data(rng, (2, n, 40), "float32")
        a[0, :, 3] = -np.inf
        a[0, n // 2, 4] = np.inf
        a[1, n - 1, 5] = np.nan
        a[1, : n // 2, 6] = -np.inf
        t = torch.from_numpy(a).cuda()
        moved = t.movedim(1, -1)
        want = {"softmax": lambda: torch.softmax(t, 1), "log_softmax": lambda: torch.log_softmax(t, 1),
                "layer_norm": lambda: torch.nn.functional.layer_norm(moved, (n,)).movedim(-1, 1),
                "rms_norm": lambda: torch.nn.functional.rms_norm(moved.cpu(), (n,), eps=1e-6).movedim(-1, 1)}[op]()
        want = want.cpu().numpy()
        for algorithm in ("auto", "columns"):
            got = to_numpy(run_op(op, t, axis=1, algorithm=algorithm))
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{algorithm} n={n}")
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=f"{algorithm} n={n}")
    if op not in NORM_OPS:
        return
    for dtype in ("float16", "float32", "float64"):
        for n in (40, 700):
            a = data(rng, (n, 64), dtype).astype(np.float64)
            a[0, :32] = a[1:, :32].mean(axis=0) + np.linspace(0.0, 100.0, 32) * a[1:, :32].std(axis=0)
            a[:, 40:44] = 1234.567  # constant rows
            if dtype != "float16":
                a[:, 50:54] = 1e30 * (1.0 + 0.05 * rng.standard_normal((n, 4)))
            a = round_to(a, dtype)
            for algorithm in ("auto", "columns"):
                check(TORCH_CUDA, op, a, dtype, axis=0, rng=rng, algorithm=algorithm)
            if op == "layer_norm":
                x = TORCH_CUDA.make(a, dtype)
                b = TORCH_CUDA.make(round_to(rng.standard_normal(n), dtype), dtype)
                y = gpuprims.layer_norm(x, None, b, axis=0)
                assert torch.equal(y[:, 40:44], b[:, None].expand(n, 4)), (dtype, n)


@pytest.mark.parametrize("fw", framework_params("cuda"))
@pytest.mark.parametrize("op", ("softmax", "log_softmax"))
def test_softmax_dtype_casts_first(fw, rng, op):
    """dtype= as torch's (x cast first), with the GPU frameworks: bfloat16 / float16 logits to
    float32, float32 to float16, integers (cast by the framework); on a row long enough for
    split_row's and row_hold's paths too. cuda.core views: float x converted by the kernels, an
    integer x (no framework cast) a TypeError naming dtype."""
    need(fw)
    a = data(rng, (3, 5000), "float32") * 4
    if fw.name == "cuda.core":
        check_softmax_dtype(fw, op, a, "float16", "float32")
        check_softmax_dtype(fw, op, a, "float32", "float16")
        with pytest.raises(TypeError, match="argument 'dtype': casting int32 x needs"):
            getattr(gpuprims, op)(fw.make(np.round(a), "int32"), dtype="float16")
        return
    pairs = [("float16", "float32"), ("float32", "float16"), ("float32", "float64")]
    if fw.name != "cupy":  # CuPy holds no bfloat16
        pairs.append(("bfloat16", "float32"))
    for from_dtype, to_dtype in pairs:
        check_softmax_dtype(fw, op, a, from_dtype, to_dtype)
    check_softmax_dtype(fw, op, np.round(a), "int32", "float32")
    check_softmax_dtype(fw, op, data(rng, (2, 300000), "float32"), "float16", "float32")


# (x's dtype, dtype=): the four with a one-pass kernel, then pairs that convert first.
CONVERTING_PAIRS = (("float16", "float32"), ("bfloat16", "float32"), ("float32", "float16"), ("float32", "bfloat16"),
                    ("bfloat16", "float16"), ("float64", "float32"), ("float32", "float64"))


@pytest.mark.parametrize("pair", CONVERTING_PAIRS, ids="_to_".join)
@pytest.mark.parametrize("op", ("softmax", "log_softmax"))
def test_softmax_dtype_converting_kernels(rng, op, pair):
    """softmax(x, dtype=) read in x's dtype and written in dtype's: the one-pass row_on_chip
    conversion on every tile (warp, 128-, 256- and 1024-thread blocks; odd rows and offset views on
    its ragged kernels), cluster_row's on clusters of 1 to 16 CTAs (sm_90), and the
    convert-then-in-place path (transposed views, other variants, rows beyond a cluster, pairs
    without a one-pass kernel), into
    NaN-poisoned out= and fresh results, against float64 of x rounded to dtype; rows of -inf, with
    +inf, with NaN."""
    need(TORCH_CUDA)
    from_dtype, to_dtype = pair
    target = getattr(torch, to_dtype)
    fn = getattr(gpuprims, op)
    for n in (4, 8, 64, 512, 520, 1024, 1032, 2048, 4096, 4104, 8192, 12288, 16384, 16392, 5, 1001, 40000, 100000, 300000):
        a = data(rng, (6, n), "float32") * 1.5
        a[1, :] = -np.inf
        a[2, n // 2] = np.inf
        a[3, n - 1] = np.nan
        x = TORCH_CUDA.make(a, from_dtype)
        cast = round_to(to_numpy(x).astype(np.float64), to_dtype).astype(np.float64)
        ref = reference(op, cast)[0]
        tol = tolerance(op, to_dtype, cast, ref)
        for algorithm in ("auto", "row_on_chip", "cluster_row", "three_pass") if n <= 16384 else \
                ("auto", "cluster_row", "row_hold"):
            what = f"{from_dtype} -> {to_dtype} n={n} {algorithm}"
            out = torch.full(a.shape, float("nan"), dtype=target, device="cuda")
            assert fn(x, dtype=target, algorithm=algorithm, out=out) is out
            assert_close(out, ref, tol, what)
            y = fn(x, dtype=target, algorithm=algorithm)
            assert y.dtype == target
            assert_close(y, ref, tol, what)
        if n > 1:  # offset by one element: rows no longer 16-byte aligned
            ref1 = reference(op, cast[:, 1:])[0]
            assert_close(fn(x[:, 1:], dtype=target), ref1, tolerance(op, to_dtype, cast[:, 1:], ref1), f"{n} offset")
        reft = reference(op, cast.T, axis=0)[0]  # rows along axis 0 of the transpose: strided
        assert_close(fn(x.T, axis=0, dtype=target), reft, tolerance(op, to_dtype, cast.T, reft, axis=0), f"{n} .T")
    np.testing.assert_array_equal(to_numpy(x), to_numpy(TORCH_CUDA.make(a, from_dtype)))  # x untouched


def padded_rows(n, lanes):
    """(rows, stride) of the ragged-row tests: lanes + 2 rows padded to stride = 1 mod lanes
    elements, so consecutive rows start at every offset into their 16-byte vector."""
    stride = n + (1 - n) % lanes
    return lanes + 2, stride + (lanes if stride == 1 else 0)


def rows_view(buf, offset, rows, stride, n):
    """The (rows, n) view of the flat buffer buf (torch or numpy) at `offset`, rows `stride` apart."""
    return buf[offset:offset + rows * stride].reshape(rows, stride)[:, :n]


def outside_rows(buf, rows_of):
    """True where the flat torch buffer buf holds no element of rows_of(buf)."""
    mask = torch.ones_like(buf, dtype=torch.bool)
    rows_of(mask)[:] = False
    return mask


# softmax(x) dtypes and softmax(x, dtype=) pairs of the ragged kernels: (x's dtype, out's dtype).
RAGGED_PAIRS = tuple((d, d) for d in FLOATS) + CONVERTING_PAIRS[:4]


@pytest.mark.parametrize("pair", RAGGED_PAIRS, ids="_to_".join)
@pytest.mark.parametrize("op", ("softmax", "log_softmax"))
def test_softmax_ragged_rows(rng, op, pair):
    """Unit-stride rows that are not whole aligned vectors (odd lengths, offset views), with out's
    rows misaligned as x's: row_on_chip's ragged kernels (each row rotated so that its aligned
    body takes 16-byte accesses, its ends element by element) on every tile, at each tile's
    capacity and one element either side; beyond one block, cluster_row's ragged kernels on
    clusters of 1, 2, 3 and 16 CTAs (slices of C = 64 KiB of x: lengths C + 1, 2 C +- 1, a
    vocabulary of 50257, 16 C - 1) and split_row past them (16 C + 1); every misalignment (rows
    padded to S = 1 mod lanes elements, so consecutive rows start at every offset), -inf / NaN /
    +inf in the first and last
    elements; into a fresh result, a NaN-poisoned out= and in place. Nothing outside the rows is
    written: the gaps between rows and the ends of out's buffer keep a sentinel."""
    need(TORCH_CUDA)
    from_dtype, to_dtype = pair
    fn = getattr(gpuprims, op)
    x_dt, y_dt = getattr(torch, from_dtype), getattr(torch, to_dtype)
    kw = {} if from_dtype == to_dtype else {"dtype": y_dt}
    lanes = 16 // torch.empty(0, dtype=x_dt).element_size()
    limits = (512, 2048, 4096, 8192) if from_dtype == "float64" else (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
    slice_len = 4096 * lanes  # cluster_row's slice of x per CTA (64 KiB)
    lengths = (1, 3, 9, 100) + tuple(n for c in limits for n in (c - 1, c, c + 1)) + \
        (slice_len + 1, 2 * slice_len - 1, 2 * slice_len + 1, 50257, 16 * slice_len - 1, 16 * slice_len + 1)
    sentinel = 1234.5
    for n in lengths:
        rows, stride = padded_rows(n, lanes)
        a = data(rng, (rows, stride), "float32")
        a[0, :] = -np.inf
        a[1, 0] = np.nan
        a[2, n - 1] = np.inf
        a[3, 0] = a[3, n - 1] = 40.0  # the maximum in the ends
        for offset in (0, 3):
            what = f"{from_dtype} -> {to_dtype} n={n} offset={offset}"

            def buffer(fill, dtype):  # the rows' storage, with room around them
                return torch.full((offset + rows * stride + lanes,), fill, dtype=dtype, device="cuda")

            def rows_of(buf):
                return rows_view(buf, offset, rows, stride, n)

            flat = buffer(float("nan"), x_dt)
            x = rows_of(flat)
            x.copy_(torch.from_numpy(a[:, :n]))
            cast = round_to(to_numpy(x).astype(np.float64), to_dtype).astype(np.float64)
            ref = reference(op, cast)[0]
            tol = tolerance(op, to_dtype, cast, ref)
            for algorithm in ("auto", "row_on_chip") if n <= 16384 else ("auto", "cluster_row"):
                out_flat = buffer(sentinel, y_dt)
                out = rows_of(out_flat)
                out.fill_(float("nan"))
                assert fn(x, algorithm=algorithm, out=out, **kw) is out
                assert_close(out, ref, tol, f"{what} {algorithm} out=")
                written_outside = out_flat[outside_rows(out_flat, rows_of)] != sentinel
                assert not bool(written_outside.any()), f"{what} {algorithm}: a write outside the rows"
                if offset == 0 and stride == n:
                    assert_close(fn(x, algorithm=algorithm, **kw), ref, tol, f"{what} {algorithm} fresh")
            if from_dtype == to_dtype:
                inplace = flat.clone()
                v = rows_of(inplace)
                assert fn(v, out=v) is v
                assert_close(v, ref, tol, f"{what} in place")
                keep = outside_rows(flat, rows_of)
                assert torch.equal(inplace[keep].isnan(), flat[keep].isnan()), \
                    f"{what}: in place wrote outside the rows"
        # contiguous rows of odd length: the common case (fresh result misaligned as x)
        b = data(rng, (rows, n), "float32")
        xb = TORCH_CUDA.make(b, from_dtype)
        castb = round_to(to_numpy(xb).astype(np.float64), to_dtype).astype(np.float64)
        refb = reference(op, castb)[0]
        assert_close(fn(xb, **kw), refb, tolerance(op, to_dtype, castb, refb),
                     f"{from_dtype} -> {to_dtype} n={n} contiguous")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", NORM_OPS)
def test_norm_ragged_rows(rng, op, dtype):
    """layer_norm / rms_norm on unit-stride rows that are not whole aligned vectors: row_on_chip's
    ragged kernels (each row rotated to its first 16-byte boundary, the affine vectors funnelled
    to the same rotation: RaggedRow::load_affine) on every tile, at each tile's capacity and one
    element either side, and split_row beyond. Contiguous odd rows (a fresh result laid out as x:
    ragged), with and without weight and bias, with the statistics; rows padded to S = 1 mod lanes
    elements (consecutive rows start at every offset), views 0 and 3 elements into memory, into a
    NaN-poisoned out= laid out alike (ragged) with nothing written outside the rows, and into a
    fresh result (laid out otherwise: the element-wise path); weight and bias that are views one
    element in themselves (the element-wise path). layer_norm with an outlier first in a row (its
    mean far from its first element: the statistics move their frame) on both paths, within twice
    torch's own error (the issue's bound; the per-element tolerance models no outlier)."""
    need(TORCH_CUDA)
    lanes = 16 // torch.empty(0, dtype=getattr(torch, dtype)).element_size()
    limits = (512, 2048, 4096, 8192) if dtype == "float64" else (64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
    lengths = (1, 3, 9, 100) + tuple(n for c in limits for n in (c - 1, c + 1))
    sentinel = 1234.5
    for n in lengths:
        rows, stride = padded_rows(n, lanes)
        flat = data(rng, (rows * stride + lanes + 3,), dtype)
        contiguous = np.ascontiguousarray(flat[:rows * n].reshape(rows, n))
        check(TORCH_CUDA, op, contiguous, dtype, rng=rng)
        check(TORCH_CUDA, op, contiguous, dtype, rng=rng, affine=False, stats=False)
        outlier = flat.copy()
        outlier[3 + stride] = round_to(np.array([1000.0]), dtype)[0]  # row 1's first element at offset 3
        if op == "layer_norm" and n > 3:
            assert_within_twice_torch(np.ascontiguousarray(outlier[stride + 3:][:(rows - 1) * n]
                                                           .reshape(rows - 1, n)), dtype, ("auto",), "outlier")
        for offset in (0, 3):
            def rows_of(buf):
                return rows_view(buf, offset, rows, stride, n)

            what = f"{dtype} n={n} offset={offset}"
            check(TORCH_CUDA, op, flat, dtype, rng=rng, view=rows_of)
            if op == "layer_norm" and n > 3:
                assert_within_twice_torch(outlier, dtype, ("auto",), f"outlier {what}", view=rows_of)
            a = rows_of(flat)
            weight = round_to(rng.uniform(0.5, 1.5, n + 1), dtype)
            bias = round_to(rng.standard_normal(n + 1), dtype)
            x = rows_of(TORCH_CUDA.make(flat, dtype))
            for first in (0, 1):  # aligned affine vectors (the ragged kernels), one element in (element-wise)
                w = TORCH_CUDA.make(weight, dtype)[first:first + n]
                b = TORCH_CUDA.make(bias, dtype)[first:first + n] if op == "layer_norm" else None
                ref = reference(op, a, -1, weight[first:first + n], None if b is None else bias[first:first + n])[0]
                out_flat = torch.full((flat.size,), sentinel, dtype=x.dtype, device="cuda")
                out = rows_of(out_flat)
                out.fill_(float("nan"))
                assert run_op(op, x, w, b, out=out) is out
                assert_close(out, ref, tolerance(op, dtype, a, ref, -1, weight[first:first + n],
                                                 None if b is None else bias[first:first + n]), f"{what} first={first}")
                keep = outside_rows(out_flat, rows_of)
                assert bool((out_flat[keep] == sentinel).all()), f"{what}: a write outside the rows"


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ("softmax", "log_softmax"))
def test_row_staged_back_to_back_rows(rng, op, dtype):
    """row_staged: softmax rows of up to 128 elements that lie back to back but are not whole
    aligned vectors (contiguous rows of odd length, and views 1 and 3 elements into a buffer)
    copied through shared memory a run of rows at a time (row_staged.cuh), on both tiles (groups of
    4 and 8 lanes), run counts that leave the last run partial, and 70001 rows of 63 (blocks that
    take several runs); -inf / NaN / +inf in the first rows; into a fresh result, into a
    NaN-poisoned out= with sentinels around it (nothing written outside the rows, whose two outer
    vectors are partly other data), and in place. The same values as row_on_chip, bit for bit (the
    same ragged rows, read from shared memory instead of global), and within tolerance of float64.
    Longer rows and float64 (no staged kernel) run row_on_chip itself; "auto" stages where it
    measured faster (odd 2-byte rows, float32 rows of up to 64 elements;
    test_every_variant_dtype_and_row_length covers it on fresh rows)."""
    need(TORCH_CUDA)
    dt = getattr(torch, dtype)
    lanes = 16 // torch.empty(0, dtype=dt).element_size()
    cases = [(n, 37) for n in (1, 3, 9, 33, 63, 65, 77, 100, 127, 129, 300)] + [(4095, 3), (63, 70001)]
    sentinel = 1234.5
    for n, rows in cases:
        flat = data(rng, (rows * n + 2 * lanes,), dtype)
        if rows > 3:
            flat[[0, n, 3 * n - 1]] = (-np.inf, np.nan, np.inf)  # row 0's first, row 1's first, row 2's last
        for offset in (0, 1, 3):
            what = f"{dtype} n={n} rows={rows} offset={offset}"

            def rows_of(buf):
                return buf[offset:offset + rows * n].reshape(rows, n)

            if rows < 1000 or offset == 1:
                check(TORCH_CUDA, op, flat, dtype, rng=rng, algorithm="row_staged", view=rows_of)
            x = rows_of(TORCH_CUDA.make(flat, dtype))
            want = rows_of(torch.full((flat.size,), float("nan"), dtype=dt, device="cuda"))  # laid out as x: ragged
            run_op(op, x, algorithm="row_on_chip", out=want)
            out_flat = torch.full((flat.size,), sentinel, dtype=dt, device="cuda")
            out = rows_of(out_flat)
            out.fill_(float("nan"))
            assert run_op(op, x, algorithm="row_staged", out=out) is out
            torch.testing.assert_close(out, want, rtol=0, atol=0, equal_nan=True, msg=f"{what}: not row_on_chip's")
            keep = outside_rows(out_flat, rows_of)
            assert bool((out_flat[keep] == sentinel).all()), f"{what}: a write outside the rows"
            v = rows_of(TORCH_CUDA.make(flat, dtype))  # a copy laid out as x
            assert run_op(op, v, algorithm="row_staged", out=v) is v
            torch.testing.assert_close(v, want, rtol=0, atol=0, equal_nan=True, msg=f"{what}: in place")


@pytest.mark.parametrize("op", OPS)
def test_in_place(rng, op):
    """out=x: every element is read before it is written, also across split_row's chunks."""
    need(TORCH_CUDA)
    for n in (300, 5120, 40000):
        a = data(rng, (5, n), "float32") + 7.0  # an offset: the norm shift (x[row, 0]) matters
        for algorithm in ("auto",) + variants(op):
            x = torch.from_numpy(a).cuda()
            assert run_op(op, x, out=x, algorithm=algorithm) is x
            ref = reference(op, a)[0]
            assert_close(x, ref, tolerance(op, "float32", a, ref), f"{algorithm} n={n}")


@pytest.mark.skipif(cupy is None, reason="cupy is not installed")
@pytest.mark.parametrize("op", OPS)
def test_negative_strides(rng, op):
    a = data(rng, (30, 1000), "float32")
    c = cupy.asarray(a)
    for view, ref in ((c[::-1], a[::-1]), (c[:, ::-1], a[:, ::-1]), (c[::-1, ::-3].T, a[::-1, ::-3].T)):
        got = run_op(op, view)
        want = reference(op, ref)[0]
        assert_close(got, want, tolerance(op, "float32", ref, want))


@pytest.mark.parametrize("op", NORM_OPS)
def test_affine_vectors_strided_and_misaligned(rng, op):
    need(TORCH_CUDA)
    a = data(rng, (9, 4096), "float32")
    x = torch.from_numpy(a).cuda()
    wbuf = torch.from_numpy(round_to(rng.uniform(0.5, 1.5, 2 * 4096 + 1), "float32")).cuda()
    for w in (wbuf[1:4097], wbuf[::2][:4096], wbuf[:4096]):
        b = w.flip(0) if op == "layer_norm" else None
        for algorithm in ("auto",) + variants(op):
            y = run_op(op, x, w, b, algorithm=algorithm)
            ref = reference(op, a, -1, w.cpu().numpy(), None if b is None else b.cpu().numpy())[0]
            assert_close(y, ref, tolerance(op, "float32", a, ref, -1, None, None if b is None else b.cpu().numpy()))


# ---------------------------------------------------------------------------------------------
# special values and numerics


SPECIAL = {"all -inf": -np.inf, "+inf": np.inf, "nan": np.nan}


@pytest.mark.parametrize("op", OPS)
def test_special_values_match_torch_every_variant(rng, op):
    need(TORCH_CUDA)
    for n in (5, 700, 4096, 12289, 40000):
        a = data(rng, (4, n), "float32")
        a[0, :] = -np.inf
        a[1, n // 2] = np.inf
        a[2, n - 1] = np.nan
        a[3, : n // 2] = -np.inf  # finite values in the other half (and in other chunks)
        t = torch.from_numpy(a).cuda()
        want = {"softmax": lambda: torch.softmax(t, -1), "log_softmax": lambda: torch.log_softmax(t, -1),
                "layer_norm": lambda: torch.nn.functional.layer_norm(t, (n,)),
                # torch's CPU rms_norm: its CUDA kernel turns a whole row holding +-inf into NaN, while
                # the IEEE result (and torch on the CPU) is x * rsqrt(inf) = 0 for the finite elements
                "rms_norm": lambda: torch.nn.functional.rms_norm(t.cpu(), (n,), eps=1e-6)}[op]().cpu().numpy()
        for algorithm in ("auto",) + variants(op):
            got = to_numpy(run_op(op, t, algorithm=algorithm))
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{algorithm} n={n}")
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=f"{algorithm} n={n}")


# cluster_row (sm_90: a row across the shared memory of a thread block cluster; 64 KiB slices of 16384
# float32 / 32768 float16-bfloat16 elements, up to 16 slices), row_lag (chunks of 8192 elements,
# each read twice in one launch) and row_hold (the same chunks, each held in shared memory until its
# row is complete; "auto" gives it up to 256 a row): one slice, a short last slice, 16 full slices, and lengths they
# hand to split_row (odd: not whole 16-byte vectors; float64; cluster_row: more than 16 slices).
# On GPUs below sm_90 cluster_row runs split_row, and must pass the same way; "auto" takes row_hold
# for float32 rows from 65537 (softmax kind: 16385) to 2097152 elements, in batches of 2^23 elements,
# on sm_90 GPUs. float16's 1048576 runs row_lag and
# row_hold over 128 chunks a row (partials beyond a warp's 32 lanes).
CLUSTER_ROW_LENS = (16388, 40000, 100000, 262144, 262145, 524288, 1048576)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", OPS)
def test_cluster_row_long_rows(rng, op, dtype):
    need(TORCH_CUDA)
    for n in CLUSTER_ROW_LENS:
        if dtype in ("float32", "float64") and n > 262145:
            continue  # CPU reference time; float32 beyond 16 slices is covered by float16's 1048576
        for algorithm in ("auto", "cluster_row", "row_lag", "row_hold"):
            check_torch(op, data(rng, (2, n), dtype), dtype, rng, algorithm=algorithm)


@pytest.mark.parametrize("op", OPS)
def test_row_lag_more_chunks_than_its_lag(rng, op):
    """row_lag over many more chunks than its lag (5/8 or 3/4 of the resident blocks, 250-300 on a
    132-SM GPU) and than one wave of its persistent grid, so phase B of most tickets waits for rows
    that other blocks complete: 100 rows of 140000 float32 (18 chunks, the last one short) and 1500
    rows of 16392 (3 chunks). row_hold over the same rows: every block holds two chunks and writes
    each once its row is complete. "auto" runs row_hold on the first (sm_90)."""
    need(TORCH_CUDA)
    for rows, n in ((100, 140000), (1500, 16392)):
        a = data(rng, (rows, n), "float32")
        for algorithm in ("auto", "row_lag", "row_hold"):
            check_torch(op, a, "float32", rng, algorithm=algorithm)


@pytest.mark.parametrize("op", OPS)
def test_row_hold_rows_of_many_chunks(rng, op):
    """row_hold where "auto" takes it for the longest rows: 4 x 2097152 float32 (2^23 elements,
    256 chunks a row), each row's statistics combined once by its last-arriving chunk and folded by
    lanes that hold 8 partials each; and 8 x 1048584 (129 chunks, the last one of 8 elements)."""
    need(TORCH_CUDA)
    for rows, n in ((4, 2097152), (8, 1048584)):
        a = data(rng, (rows, n), "float32")
        for algorithm in ("auto", "row_hold"):
            check_torch(op, a, "float32", rng, algorithm=algorithm)


@pytest.mark.parametrize("op", ("softmax", "layer_norm"))
def test_row_hold_behind_a_kernel_that_fills_the_gpu(rng, op):
    """row_hold launched on one stream while a large matmul on another holds the SMs: its blocks
    start only once the matmul's leave room for the whole cooperative grid, and must neither hang
    nor err. Rows of 64 chunks (524288 float32)."""
    need(TORCH_CUDA)
    a = data(rng, (6, 524288), "float32")
    x = torch.from_numpy(a).cuda()
    m = torch.randn(8192, 8192, device="cuda")
    busy, mine = torch.cuda.Stream(), torch.cuda.Stream()
    busy.wait_stream(torch.cuda.current_stream())
    mine.wait_stream(torch.cuda.current_stream())
    outs = []
    for _ in range(3):
        with torch.cuda.stream(busy):
            m = m @ m / 8192.0
        with torch.cuda.stream(mine):
            outs.append(run_op(op, x, algorithm="row_hold"))
    torch.cuda.synchronize()
    ref = reference(op, a)[0]
    for y in outs:
        assert_close(y, ref, tolerance(op, "float32", a, ref), "row_hold behind a matmul")


@pytest.mark.parametrize("algorithm", ("cluster_row", "row_lag", "row_hold"))
@pytest.mark.parametrize("op", OPS)
def test_cluster_row_special_values_per_slice(rng, op, algorithm):
    """Slices (chunks) of -inf next to finite ones, a whole row of -inf, +inf and NaN in the last
    slice, and out=x across slices (every slice's statistics exchanged before any CTA writes; row_lag:
    chunk 0, the norm kind's frame, overwritten before the row's last chunk is written)."""
    need(TORCH_CUDA)
    n = 3 * 16384 + 4 * 1000
    a = data(rng, (4, n), "float32") + 7.0
    a[0, :] = -np.inf
    a[1, n - 3] = np.inf
    a[2, n - 1] = np.nan
    a[3, 16384: 2 * 16384] = -np.inf  # the second slice all -inf, finite values around it
    t = torch.from_numpy(a).cuda()
    want = {"softmax": lambda: torch.softmax(t, -1), "log_softmax": lambda: torch.log_softmax(t, -1),
            "layer_norm": lambda: torch.nn.functional.layer_norm(t, (n,)),
            "rms_norm": lambda: torch.nn.functional.rms_norm(t.cpu(), (n,), eps=1e-6)}[op]().cpu().numpy()
    got = to_numpy(run_op(op, t, algorithm=algorithm))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    b = data(rng, (3, n), "float32") + 7.0
    x = torch.from_numpy(b).cuda()
    assert run_op(op, x, out=x, algorithm=algorithm) is x
    ref = reference(op, b)[0]
    assert_close(x, ref, tolerance(op, "float32", b, ref), "out=x")


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_constant_rows_return_bias_exactly(rng, dtype):
    need(TORCH_CUDA)
    for n in (7, 777, 5120, 40000):
        a = np.empty((3, n))
        a[0], a[1], a[2] = 1234.567, -3.3, 7777.0
        a = round_to(a, dtype)
        w = round_to(rng.uniform(0.5, 2, n), dtype)
        b = round_to(rng.standard_normal(n), dtype)
        x, wt, bt = (TORCH_CUDA.make(v, dtype) for v in (a, w, b))
        for algorithm in ("auto",) + variants("layer_norm"):
            y, mean, rstd = gpuprims.layer_norm(x, wt, bt, return_stats=True, algorithm=algorithm)
            assert torch.equal(y, bt.expand_as(y)), (algorithm, n)
            np.testing.assert_array_equal(to_numpy(mean)[:, 0], to_numpy(x)[:, 0])
            assert torch.isfinite(rstd).all()


@pytest.mark.parametrize("dtype,offset,noise", [("float32", 1234.0, 1e-3), ("float16", 7600.0, 8.0),
                                                ("float32", 1e30, 1e27), ("float64", 1e300, 1e297)])
@pytest.mark.parametrize("op", NORM_OPS)
def test_norm_statistics_without_cancellation(rng, op, dtype, offset, noise):
    need(TORCH_CUDA)
    for n in (1000, 12289, 40000):
        a = round_to(offset + noise * rng.standard_normal((3, n)), dtype)
        for algorithm in ("auto",) + variants(op):
            res = check(TORCH_CUDA, op, a, dtype, rng=rng, algorithm=algorithm)
            assert all(torch.isfinite(r).all() for r in res), algorithm


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32"))
def test_error_within_twice_torch(rng, op, dtype):
    """The issue's bound: error against float64 at most 2x torch's own same-dtype error (+ noise)."""
    need(TORCH_CUDA)
    for n in (1000, 4096, 12289):
        a = data(rng, (64, n), dtype)
        x = TORCH_CUDA.make(a, dtype)
        t = {"softmax": lambda: torch.softmax(x, -1), "log_softmax": lambda: torch.log_softmax(x, -1),
             "layer_norm": lambda: torch.nn.functional.layer_norm(x, (n,)),
             "rms_norm": lambda: torch.nn.functional.rms_norm(x, (n,), eps=1e-6)}[op]()
        ref = reference(op, a)[0]
        torch_err = np.abs(to_numpy(t).astype(np.float64) - ref).max()
        noise = 4 * {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24}[dtype] * np.abs(ref).max()
        for algorithm in ("auto",) + variants(op):
            err = np.abs(to_numpy(run_op(op, x, algorithm=algorithm)).astype(np.float64) - ref).max()
            assert err <= 2 * torch_err + noise, (algorithm, n, err, torch_err)


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32"))
def test_layer_norm_far_first_element(rng, dtype):
    """Rows whose first element (the statistics' frame) lies 3 to ~100 deviations from the mean: the
    whole-row variants keep the issue's accuracy on the other elements (row_partial, row_stats.cuh).
    split_row / cluster_row: test_layer_norm_far_first_element_long_rows."""
    need(TORCH_CUDA)
    for n in (4096, 16384):
        a = rng.standard_normal((4, n))
        a[:, 0] = [3.0, 30.0, 300.0, 3e3]  # float16 holds up to 65504
        a = round_to(a, dtype)
        x = TORCH_CUDA.make(a, dtype)
        ref = reference("layer_norm", a)[0][:, 1:]  # the outlier's own output set aside
        theirs = to_numpy(torch.nn.functional.layer_norm(x, (n,))).astype(np.float64)[:, 1:]
        torch_err = np.abs(theirs - ref).max(axis=1)
        unit = 2 * {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24}[dtype] * np.abs(ref).max(axis=1)
        for algorithm in ("auto", "row_on_chip", "two_pass", "welford"):
            ours = to_numpy(run_op("layer_norm", x, algorithm=algorithm)).astype(np.float64)[:, 1:]
            err = np.abs(ours - ref).max(axis=1)
            # The bound (2x torch + rounding, as test_error_within_twice_torch): the streaming
            # two_pass sums a row whose variance the outlier holds with 2-4 ulp of cancellation, where
            # torch's Welford errs by ~1 (session 12 gate); the first-element frame erred by k ulp.
            assert (err <= 2 * torch_err + 2 * unit).all(), (algorithm, n, err / unit, torch_err / unit)


def assert_within_twice_torch(a, dtype, algorithms, what, drop_first=False, view=None):
    """Per row: error against float64 at most 2x torch's own plus two rounding units of the largest
    output (the issue's bound, as test_error_within_twice_torch); drop_first sets the outlier's own
    output aside; view: the rows are view(x) of the array of `a` (the result laid out as torch's
    full_like lays it out)."""
    x = TORCH_CUDA.make(a, dtype)
    if view is not None:
        x, a = view(x), view(a)
    n = x.shape[-1]
    cut = slice(1, None) if drop_first else slice(None)
    ref = reference("layer_norm", a)[0][:, cut]
    theirs = to_numpy(torch.nn.functional.layer_norm(x, (n,))).astype(np.float64)[:, cut]
    torch_err = np.abs(theirs - ref).max(axis=1)
    unit = 2 * OUT_EPS[dtype] * np.abs(ref).max(axis=1)
    for algorithm in algorithms:
        out = poisoned_like(x)
        assert run_op("layer_norm", x, algorithm=algorithm, out=out) is out
        err = np.abs(to_numpy(out).astype(np.float64)[:, cut] - ref).max(axis=1)
        assert (err <= 2 * torch_err + 2 * unit).all(), (what, algorithm, n, err / unit, torch_err / unit)


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_far_first_element_long_rows(rng, dtype):
    """test_layer_norm_far_first_element for the variants of rows beyond one block: split_row (chunks
    of 8192) and cluster_row (slices of 16384 float32 / 32768 float16-bfloat16 elements: 4 and 16, 2
    and 8 slices here; float64 runs split_row), and auto, which takes cluster_row or split_row there.
    Each chunk's moments are measured about its own centre and combined about chunk 0's centre
    (chunk_moments.cuh). The statistics kept relative to the row's first element erred by about
    k ulp (of float32 / float64) of a deviation in every output, k the outlier's distance in
    deviations (here ~250-500 once the outlier's own share of the variance is counted): 1e-5 in
    float32 where the bound is ~1e-7. fp16 / bf16 keep the first-element frame (their outputs round
    at 2^-11 / 2^-8): covered to hold the bound."""
    need(TORCH_CUDA)
    for n in (65536, 262144):
        a = rng.standard_normal((4, n))
        a[:, 0] = [3.0, 30.0, 300.0, 3e3]  # float16 holds up to 65504
        assert_within_twice_torch(round_to(a, dtype), dtype, ("auto", "split_row", "cluster_row", "row_lag", "row_hold"),
                                  "far first",
                                  drop_first=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_common_offset_every_variant(rng, dtype):
    """Rows with a large common offset (mean 1e4; deviation 1, or 100 in float16 / bfloat16, whose ulp at
    1e4 is 8 / 64): every variant measures the statistics relative to an element or a chunk centre
    near the mean, so nothing is lost to the offset's rounding. Whole-row lengths and the long rows
    of split_row / cluster_row (several chunks / slices, each with its own anchor)."""
    need(TORCH_CUDA)
    std = 100.0 if dtype in ("float16", "bfloat16") else 1.0
    for rows, n in ((8, 4096), (4, 65536), (2, 262144)):
        a = round_to(1e4 + std * rng.standard_normal((rows, n)), dtype)
        assert_within_twice_torch(a, dtype, ("auto",) + variants("layer_norm"), "offset")


def test_layer_norm_stats_match_torch(rng):
    need(TORCH_CUDA)
    a = data(rng, (33, 3000), "float32")
    x = torch.from_numpy(a).cuda()
    _, mean, rstd = torch.native_layer_norm(x, (3000,), None, None, 1e-5)
    for algorithm in ("auto",) + variants("layer_norm"):
        _, m, r = gpuprims.layer_norm(x, return_stats=True, algorithm=algorithm)
        assert m.shape == mean.shape == (33, 1) and r.dtype == torch.float32
        torch.testing.assert_close(m, mean, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(r, rstd, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# frameworks, streams, graphs, determinism


@pytest.mark.parametrize("fw", framework_params("cuda"))
@pytest.mark.parametrize("op", OPS)
def test_frameworks(fw, rng, op):
    need(fw)
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        if fw.name in ("cupy", "cuda.core") and dtype == "bfloat16":
            continue
        check(fw, op, data(rng, (17, 1500), dtype), dtype, rng=rng)
    if fw.name == "jax":
        with pytest.raises(TypeError, match="JAX arrays are immutable"):
            run_op(op, fw.make(data(rng, (2, 3), "float32")), out=fw.make(np.zeros((2, 3), np.float32)))


def test_torch_side_stream_ordering(rng):
    """Issued on a side stream right behind a long kernel that produces x: right answer, no sync."""
    need(TORCH_CUDA)
    x = torch.full((512, 4096), float("nan"), device="cuda")
    w = torch.full((4096,), float("nan"), device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        x.fill_(2.0)
        x[:, ::2] = -2.0
        w.fill_(3.0)
        y = gpuprims.layer_norm(x, w)
        s = gpuprims.softmax(x)
        out = torch.empty_like(x)
    gpuprims.rms_norm(x, w, out=out, stream=side)
    torch.cuda.synchronize()
    expect = 3.0 * x / torch.sqrt(torch.tensor(4.0 + 1e-5))
    torch.testing.assert_close(y, expect)
    torch.testing.assert_close(s, torch.softmax(x, -1))
    torch.testing.assert_close(out, 3.0 * x / torch.sqrt(torch.tensor(4.0 + 1e-6)))


@pytest.mark.parametrize("op", ("softmax", "log_softmax"))
def test_softmax_dtype_on_a_side_stream(op):
    """dtype= with stream= a side stream while x is produced on it behind a long kernel, the current
    stream idle: the cast waits for x (it runs on the launch stream, not the current one). And x
    produced on the current stream, launched on a side stream: the side stream waits for it."""
    need(TORCH_CUDA)
    x = torch.full((256, 4096), float("nan"), device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        x.fill_(1.0)
        x[:, ::3] = -2.0
    y = getattr(gpuprims, op)(x, dtype=torch.float32, stream=side)
    side.synchronize()
    torch.testing.assert_close(y, getattr(torch, op)(x, -1, dtype=torch.float32))
    torch.cuda._sleep(200_000_000)
    x2 = x * 2  # on the current stream, behind the long kernel
    z = getattr(gpuprims, op)(x2, dtype=torch.float32, stream=side)
    side.synchronize()
    torch.testing.assert_close(z, getattr(torch, op)(x * 2, -1, dtype=torch.float32))
    if cupy is not None:
        a = cupy.full((256, 4096), cupy.nan, dtype=cupy.float16)
        cupy.cuda.Device().synchronize()
        cside = cupy.cuda.Stream(non_blocking=True)
        with torch.cuda.stream(torch.cuda.ExternalStream(cside.ptr)):
            torch.cuda._sleep(200_000_000)  # a long kernel on CuPy's side stream
        with cside:
            a.fill(0.5)
            a[:, ::3] = -1.0
        got = getattr(gpuprims, op)(a, dtype="float32", stream=cside)
        cside.synchronize()
        ref = reference(op, cupy.asnumpy(a).astype(np.float64))[0]
        np.testing.assert_allclose(cupy.asnumpy(got), ref, rtol=1e-5, atol=1e-6)


def test_cuda_graph_capture(rng):
    need(TORCH_CUDA)
    x = torch.from_numpy(data(rng, (64, 40000), "float32")).cuda()
    y = torch.empty_like(x)
    y_split = torch.empty_like(x)  # split_row: scratch inside the graph
    y_lag = torch.empty_like(x)  # row_lag: scratch and the counters' memset inside the graph
    y_hold = torch.empty_like(x)  # row_hold: likewise, and its dynamic shared memory
    small = torch.from_numpy(data(rng, (100, 300), "float32")).cuda()
    y_small = torch.empty_like(small)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up: cluster_row's one-time attribute and occupancy queries
        gpuprims.softmax(x, out=y)
        gpuprims.softmax(x, out=y_split, algorithm="split_row")
        gpuprims.softmax(x, out=y_lag, algorithm="row_lag")
        gpuprims.softmax(x, out=y_hold, algorithm="row_hold")
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        gpuprims.softmax(x, out=y)  # cluster_row (a cluster launch) where it runs
        gpuprims.softmax(x, out=y_split, algorithm="split_row")
        gpuprims.softmax(x, out=y_lag, algorithm="row_lag")
        gpuprims.softmax(x, out=y_hold, algorithm="row_hold")
        gpuprims.layer_norm(small, out=y_small)
    x.copy_(torch.from_numpy(data(rng, (64, 40000), "float32")).cuda())
    small.copy_(torch.from_numpy(data(rng, (100, 300), "float32")).cuda())
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.softmax(x, -1))
    torch.testing.assert_close(y_split, torch.softmax(x, -1))
    torch.testing.assert_close(y_lag, torch.softmax(x, -1))
    torch.testing.assert_close(y_hold, torch.softmax(x, -1))
    torch.testing.assert_close(y_small, torch.nn.functional.layer_norm(small, (300,)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32"))
@pytest.mark.parametrize("op", OPS)
def test_lean_tiles_many_rows_and_special_values(rng, op, dtype):
    """row_on_chip's tuned 4096- / 8192-element tiles (docs/norms.md, performance step 2: the lean
    vector path; a prefetching configuration would also walk several rows per group, as these row
    counts exceed one wave of resident blocks): full and partly filled tiles, the statistics
    outputs (check()), and special rows late in the grid (the lean path's fmax row max must still
    give NaN rows, its ex2 exponential -inf -> 0)."""
    need(TORCH_CUDA)
    for n, rows in ((4096, 1601), (2056, 1601), (8192, 701), (6144, 701)):
        a = data(rng, (rows, n), dtype)
        check_torch(op, a, dtype, rng)
        a[rows - 1, :] = -np.inf
        a[rows - 2, n // 3] = np.nan
        a[rows - 3, : n // 2] = -np.inf
        a[rows - 4, n - 1] = np.inf
        x = TORCH_CUDA.make(a, dtype)
        t = torch.from_numpy(a.astype(np.float32))  # torch on the CPU, float32, as the IEEE reference
        want = {"softmax": lambda: torch.softmax(t, -1), "log_softmax": lambda: torch.log_softmax(t, -1),
                "layer_norm": lambda: torch.nn.functional.layer_norm(t, (n,)),
                "rms_norm": lambda: torch.nn.functional.rms_norm(t, (n,), eps=1e-6)}[op]().numpy()
        got = to_numpy(run_op(op, x)).astype(np.float64)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"n={n}")
        tol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5}[dtype]
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.nanmax(np.abs(want[np.isfinite(want)])),
                                   err_msg=f"n={n}")


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
@pytest.mark.parametrize("op", NORM_OPS)
def test_packed_half_norm_tiles(rng, op, dtype):
    """The fp16 / bf16 norm kind's tuned 4096- / 8192-element tiles keep the row packed
    (PackedRowTile, docs/norms.md performance step 3): every pass converts per slot and skips the
    slots past the row's end, which are never loaded. Lengths that fill one slot of one thread
    (520 = 65 vectors in the 128-thread tile, 4104 in the 256-thread one), the last vector of a
    full slot (4096, 8192), one vector short (8184), more rows than one wave of resident blocks, and
    every affine combination (weight and bias, none, weight only, bias only), out= poisoned."""
    need(TORCH_CUDA)
    for n, rows in ((520, 1201), (2056, 1201), (4096, 1201), (4104, 601), (6144, 601), (8184, 601), (8192, 601)):
        a = data(rng, (rows, n), dtype)
        for affine in (True, False):
            check(TORCH_CUDA, op, a, dtype, rng=rng, affine=affine, algorithm="row_on_chip")
        check_torch(op, a, dtype, rng, algorithm="row_on_chip")
        if op == "layer_norm":
            x = TORCH_CUDA.make(a, dtype)
            w = round_to(rng.uniform(0.5, 1.5, n), dtype)
            b = round_to(rng.standard_normal(n), dtype)
            for weight, bias in ((w, None), (None, b)):
                got = run_op(op, x, None if weight is None else TORCH_CUDA.make(weight, dtype),
                             None if bias is None else TORCH_CUDA.make(bias, dtype), algorithm="row_on_chip")
                ref = reference(op, a, -1, weight, bias)[0]
                assert_close(got, ref, tolerance(op, dtype, a, ref, -1, weight, bias), f"n={n}")


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
@pytest.mark.parametrize("op", NORM_OPS)
def test_one_pass_statistics_fallbacks(rng, op, dtype):
    """The fp16 / bf16 norm kind's one-pass statistics (norm_partial_one_pass, docs/norms.md
    performance step 5) where they must fall back: layer_norm rows whose first element lies 0 to
    100 deviations from the mean (the one-pass variance is taken within about 3.9 deviations, the
    exact second pass beyond), rows of 1234 + noise, rows whose mean lies 0 to 8 deviations from 0
    (kOrigin's sums about 0, round 2), and bfloat16 rows near 1e30, whose unscaled
    sum of squares (rms_norm) overflows float32; in the 4096- and 8192-element tiles, through
    row_on_chip and auto, with and without the affine vectors."""
    need(TORCH_CUDA)
    for n in (4096, 8192):
        a = data(rng, (64, n), dtype).astype(np.float64)
        a[:, 0] = a[:, 1:].mean(axis=1) + np.linspace(0.0, 100.0, 64) * a[:, 1:].std(axis=1)
        a[40:48] = 1234.0 + 16.0 * rng.standard_normal((8, n))
        a[40:48, 0] += np.linspace(0.0, 160.0, 8)
        # Means 0 to 8 deviations from 0 (kOrigin's sums about 0 are taken within about 3.9), some
        # of them with the first element 20 deviations off: every form declines.
        a[48:56] = rng.standard_normal((8, n)) + np.linspace(0.0, 8.0, 8)[:, None]
        a[52:56, 0] += 20.0
        if dtype == "bfloat16":
            a[56:] = 1e30 * (1.0 + 0.05 * rng.standard_normal((8, n)))
        a = round_to(a, dtype)
        for algorithm in ("auto", "row_on_chip"):
            for affine in (True, False):
                check(TORCH_CUDA, op, a, dtype, rng=rng, affine=affine, algorithm=algorithm)


@pytest.mark.parametrize("op", OPS)
def test_bitwise_reproducible(rng, op):
    need(TORCH_CUDA)
    for n in (700, 8192, 40000):
        x = torch.from_numpy(data(rng, (50, n), "float32")).cuda()
        for algorithm in ("auto",) + variants(op):
            first = run_op(op, x, algorithm=algorithm)
            for _ in range(5):
                assert torch.equal(run_op(op, x, algorithm=algorithm), first), (algorithm, n)


@pytest.mark.big
@pytest.mark.parametrize("op", ("softmax", "layer_norm"))
def test_beyond_2_31_elements(op):
    """2^31 + 8192 elements in rows of 8192 (int64 row offsets), and one row of 2^31 + 5 elements
    (split_row's chunk indices and int64 element offsets)."""
    need(TORCH_CUDA)
    rows = (1 << 31) // 8192 + 1
    x = torch.randn(rows, 8192, device="cuda", dtype=torch.bfloat16)
    y = run_op(op, x)
    for r in (0, rows // 2, rows - 1):
        want = torch.softmax(x[r].float(), -1) if op == "softmax" else torch.nn.functional.layer_norm(
            x[r].float(), (8192,))
        torch.testing.assert_close(y[r].float(), want, rtol=1e-2, atol=1e-2)
    del x, y
    torch.cuda.empty_cache()
    n = (1 << 31) + 5
    x = torch.randn(1, n, device="cuda", dtype=torch.bfloat16)
    y = run_op(op, x)
    xf = x[0].float()
    if op == "softmax":
        # torch.softmax refuses a row this long (an internal assert in torch 2.11's SoftMax.cu, seen on
        # the H200 machine in session 10's gate): the reference from the row's max and float64 sum.
        m = xf.max()
        total = torch.exp(xf - m).sum(dtype=torch.float64)
        reference = lambda sl: (torch.exp(xf[sl].double() - m.double()) / total).float()  # noqa: E731
    else:
        want = torch.nn.functional.layer_norm(xf, (n,))
        reference = lambda sl: want[sl]  # noqa: E731
    for sl in (slice(0, 1000), slice(n // 2, n // 2 + 1000), slice(n - 1000, n)):
        torch.testing.assert_close(y[0, sl].float(), reference(sl), rtol=1e-2, atol=1e-6)


@pytest.mark.big
@pytest.mark.parametrize("op", ("softmax", "layer_norm"))
def test_row_hold_beyond_2_31_elements(op):
    """auto's row_hold over 8193 float32 rows of 262144 (2^31 + 262144 elements, 262176 chunks):
    64-bit row offsets and chunk numbers past any 32-bit element index."""
    need(TORCH_CUDA)
    rows, n = 8193, 262144
    x = torch.randn(rows, n, device="cuda")
    y = run_op(op, x)
    for r in (0, rows // 2, rows - 1):
        want = torch.softmax(x[r], -1) if op == "softmax" else torch.nn.functional.layer_norm(x[r], (n,))
        torch.testing.assert_close(y[r], want, rtol=1e-5, atol=1e-6)


@pytest.mark.big
@pytest.mark.parametrize("op", ("softmax", "rms_norm"))
def test_cluster_row_beyond_65535_rows(op):
    """More rows than cluster_row's grid.y (65535): the rows' loop within each cluster."""
    need(TORCH_CUDA)
    rows, n = 65537, 16392
    x = torch.randn(rows, n, device="cuda", dtype=torch.bfloat16)
    y = run_op(op, x, algorithm="cluster_row")
    for r in (0, 65534, 65535, rows - 1):
        want = torch.softmax(x[r].float(), -1) if op == "softmax" else torch.nn.functional.rms_norm(
            x[r].float(), (n,), eps=1e-6)
        torch.testing.assert_close(y[r].float(), want, rtol=1e-2, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# the compute-sanitizer selection (scripts/gpu_check.sh runs `-k sanitize` under memcheck and
# racecheck): every kernel once, on the vector and element-wise paths, small.


@pytest.mark.parametrize("op", OPS)
def test_sanitize_small(rng, op):
    need(TORCH_CUDA)
    for algorithm in variants(op):
        for shape in ((9, 64), (3, 1000), (1, 20000), (2, 0)):
            check_torch(op, data(rng, shape, "float32"), "float32", rng, algorithm=algorithm)
        a = data(rng, (3, 1001), "float32")
        check_torch(op, a, "float32", rng, algorithm=algorithm, view=lambda v: v[:, 1:])  # element-wise path
        check_torch(op, data(rng, (2, 3000), "bfloat16"), "bfloat16", rng, algorithm=algorithm)


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
@pytest.mark.parametrize("op", NORM_OPS)
def test_folded_half_norm_offset_and_constant_rows(rng, op, dtype):
    """The fp16 / bf16 norm kind's tuned tiles fold the row shift into per-row constants (kFold,
    docs/norms.md performance step 4). Rows far from 0 (where folding the shift into the output's
    mean would round at the row's magnitude), a first element ten deviations off the mean (the
    shift every fold is taken against), and constant rows, whose layer_norm output must be the
    bias exactly and whose mean the row's value, in both packed tiles (2056: 128 threads, 8192:
    256) and over more rows than one wave of blocks."""
    need(TORCH_CUDA)
    offset, noise = {"float16": (2000.0, 8.0), "bfloat16": (300.0, 4.0)}[dtype]
    for n, rows in ((2056, 1201), (8192, 601)):
        a = round_to(offset + noise * rng.standard_normal((rows, n)), dtype)
        a[1::7, 0] = round_to(np.full(len(a[1::7]), offset + 10 * noise), dtype)
        check(TORCH_CUDA, op, a, dtype, rng=rng, algorithm="row_on_chip")
        if op == "layer_norm":
            const = np.empty((rows, n))
            const[:] = round_to(offset + noise * rng.standard_normal((rows, 1)), dtype)
            x = TORCH_CUDA.make(const, dtype)
            w = TORCH_CUDA.make(round_to(rng.uniform(0.5, 2, n), dtype), dtype)
            b = TORCH_CUDA.make(round_to(rng.standard_normal(n), dtype), dtype)
            y, mean, _ = gpuprims.layer_norm(x, w, b, return_stats=True, algorithm="row_on_chip")
            assert torch.equal(y, b.expand_as(y)), n
            np.testing.assert_array_equal(to_numpy(mean)[:, 0], to_numpy(x)[:, 0])
