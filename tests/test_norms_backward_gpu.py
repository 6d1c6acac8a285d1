"""norms backward passes on the GPU: every variant, dtype and op against float64 from the same
inputs; tile boundaries, grid-stride loops, vector and element-wise paths, strided/transposed/
negative views, empty inputs, NaN, frameworks, streams, determinism, error against torch's, and
sizes beyond 2^31. Skipped (with the reason) without a GPU."""
from __future__ import annotations

import pytest
from conftest import Framework, cupy, framework_params, torch
from norms_backward_reference import (
    BACKWARD_OPS,
    SOFTMAX_OPS,
    backward_reference,
    backward_tolerance,
    check_backward,
    forward_for_backward,
    run_backward,
)
from norms_reference import FLOATS, assert_close, round_to

import gpuprims

pytestmark = pytest.mark.gpu
TORCH_CUDA = Framework("torch", "cuda")
# Around every tile boundary of the backward row_on_chip (a warp: 256, 2-byte types 512, float64
# 128; blocks: 4096 and 8192, float64 2048 and 4096), then two_pass, and odd lengths.
ROW_LENS = (1, 5, 128, 129, 256, 257, 512, 513, 1031, 2048, 2049, 4096, 4097, 5120, 8192, 8193, 12289)


def need(fw=TORCH_CUDA):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed with GPU support")


def variants(op):
    return ("auto",) + tuple(v.name for v in gpuprims.variants(op + "_backward"))


def data(rng, shape, dtype, scale=3.0):
    return round_to(rng.standard_normal(shape) * scale, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_every_variant_dtype_and_row_length(rng, op, dtype):
    need()
    for algorithm in variants(op)[1:]:  # "auto" is row_on_chip
        for n in ROW_LENS:
            rows = 3 if n > 2048 else 37
            check_backward(TORCH_CUDA, op, data(rng, (rows, n), dtype), dtype, rng, algorithm=algorithm)


@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_many_rows_grid_stride_and_empty(rng, op):
    """More rows than one wave of groups (the grid-stride loop and register partials over many
    rows), a warp's 4 rows per block with a remainder, zero rows and zero-length rows."""
    need()
    for algorithm in variants(op):
        check_backward(TORCH_CUDA, op, data(rng, (40001, 64), "float32"), "float32", rng, algorithm=algorithm)
        check_backward(TORCH_CUDA, op, data(rng, (3001, 1000), "bfloat16"), "bfloat16", rng, algorithm=algorithm)
        check_backward(TORCH_CUDA, op, data(rng, (0, 300), "float32"), "float32", rng, algorithm=algorithm)
        check_backward(TORCH_CUDA, op, data(rng, (5, 0), "float32"), "float32", rng, algorithm=algorithm)


@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_views_take_the_element_wise_path(rng, op, dtype):
    need()
    a = data(rng, (24, 1030), dtype)
    for algorithm in variants(op):
        for view in (lambda v: v[:, 1:1025], lambda v: v[::3, ::2], lambda v: v.T[::7], lambda v: v[:, :1024]):
            check_backward(TORCH_CUDA, op, a, dtype, rng, algorithm=algorithm, view=view)
        check_backward(TORCH_CUDA, op, data(rng, (3, 5, 7), dtype), dtype, rng, algorithm=algorithm, axis=1)


# The columns backward (column_backward.cuh): rows side by side along axis 1 of (planes, row_len,
# width) arrays, around its block shapes (8 elements a thread held: rows of 8, 16, 32, 64, 128, 256
# on 1-32 warps; float64 half) and beyond (the softmax kind reads twice, the norm kind runs
# row_on_chip), widths around its 32-row groups (15 runs row_on_chip). The norm kind with and
# without a weight (its column sums over a resident grid; many steps a block: the staged test below
# and the sanitize test).
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_rows_side_by_side(rng, op, dtype):
    need()
    for shape in ((3, 7, 45), (1, 8, 40), (2, 9, 33), (1, 65, 33), (3, 257, 16), (2, 256, 31), (2, 1000, 40),
                  (1, 1, 50), (4, 9, 15), (5, 96, 196)):
        for algorithm in ("auto", "columns"):
            check_backward(TORCH_CUDA, op, data(rng, shape, dtype), dtype, rng, algorithm=algorithm, axis=1)
            if op not in SOFTMAX_OPS and shape[1] <= 96:
                check_backward(TORCH_CUDA, op, data(rng, shape, dtype), dtype, rng, algorithm=algorithm, axis=1,
                               weight=False)


# A channels-first LayerNorm's gradient (ConvNeXt: channels 96 / 192 of 56 x 56 / 28 x 28 maps) and
# axis 0 of a matrix: the cases the norm kind's columns backward is for.
@pytest.mark.parametrize("dtype", ("bfloat16", "float32"))
@pytest.mark.parametrize("op", ("layer_norm", "rms_norm"))
def test_norm_rows_side_by_side_channels_first(rng, op, dtype):
    need()
    for shape, axis in (((4, 96, 56, 56), 1), ((2, 192, 28, 28), 1), ((200, 3000), 0)):
        check_backward(TORCH_CUDA, op, data(rng, shape, dtype), dtype, rng, axis=axis)
    a = data(rng, (2, 96, 40), dtype)
    a[:, :, 5:9] = 1234.0  # constant rows: xhat is 0, rstd 1 / sqrt(eps); finite gradients
    dx, dw, db = check_backward(TORCH_CUDA, op, a, dtype, rng, axis=1)
    assert torch.isfinite(dx).all() and torch.isfinite(dw).all()


# Aligned rows side by side of more than 32 elements are staged through shared memory
# (column_staged.cuh); the same rows one element off alignment run the register kernel. The norm
# kind's staged kernel keeps the register kernel's shape: the same values summed in the same order,
# so dx is bitwise equal (dweight / dbias are summed over each kernel's own resident grid: close,
# not bitwise). The softmax kind's takes fewer warps a row (kColumnStagedShare): close.
# (64, 40, 4096) gives each staged block several steps; rows of 257 and 512 are beyond the held
# shapes (the softmax kind reads both twice from global memory, the norm kind runs row_on_chip),
# rows of 21 stay in registers either way.
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_rows_side_by_side_staged_and_registers(rng, op, dtype):
    need()
    for shape in ((2, 21, 64), (2, 33, 64), (1, 150, 48), (3, 256, 16), (3, 257, 16), (2, 512, 40), (64, 40, 4096)):
        wide = shape[:-1] + (shape[-1] + 1,)
        x = TORCH_CUDA.make(data(rng, wide, dtype), dtype)[..., 1:]
        dy = TORCH_CUDA.make(data(rng, wide, dtype), dtype)[..., 1:]
        w = TORCH_CUDA.make(round_to(rng.uniform(0.5, 1.5, shape[1]), dtype), dtype) if op not in SOFTMAX_OPS else None
        saved, mean, rstd = forward_for_backward(op, x, w, None, axis=1)
        saved_shifted = TORCH_CUDA.make(data(rng, wide, dtype), dtype)[..., 1:]
        saved_shifted.copy_(saved)  # the saved row's values one element off alignment
        aligned = saved.contiguous()
        for algorithm in ("auto", "columns"):
            got = run_backward(op, dy.contiguous(), aligned, w, mean, rstd, axis=1, algorithm=algorithm)
            want = run_backward(op, dy, saved_shifted, w, mean, rstd, axis=1, algorithm=algorithm)
            if op in SOFTMAX_OPS:  # the staged kernel on fewer warps a row: each against float64
                rdx, _, _, mags = backward_reference(op, dy, saved, axis=1)
                for dx in (got[0], want[0]):
                    assert_close(dx, rdx, backward_tolerance(dtype, rdx, mags[0], shape[1]), "dx")
            else:  # the norm kind's staged kernel keeps the register shape
                assert torch.equal(got[0], want[0]), (shape, algorithm)
            for g, r in zip(got[1:], want[1:]):
                if r is not None:
                    torch.testing.assert_close(g, r, rtol=2e-2 if dtype in ("float16", "bfloat16") else 1e-5, atol=1e-3)
    check_backward(TORCH_CUDA, op, data(rng, (64, 40, 4096), dtype), dtype, rng, axis=1)


@pytest.mark.skipif(cupy is None, reason="cupy is not installed")
@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_negative_strides(rng, op):
    fw = Framework("cupy", "cuda")
    need(fw)
    for algorithm in variants(op):
        check_backward(fw, op, data(rng, (9, 700), "float32"), "float32", rng, algorithm=algorithm,
                       view=lambda v: v[::-1, ::-1])


@pytest.mark.parametrize("op", ("layer_norm", "rms_norm"))
def test_weight_strided_misaligned_and_absent(rng, op):
    need()
    x = TORCH_CUDA.make(data(rng, (33, 1024), "float32"), "float32")
    dy = TORCH_CUDA.make(data(rng, (33, 1024), "float32"), "float32")
    storage = torch.from_numpy(round_to(rng.uniform(0.5, 1.5, 2050), "float32")).cuda()
    for w in (storage[1:1025], storage[::2][:1024], None):
        saved, mean, rstd = forward_for_backward(op, x, w)
        for algorithm in variants(op):
            got = run_backward(op, dy, saved, w, mean, rstd, algorithm=algorithm)
            want = run_backward(op, dy.cpu(), saved.cpu(), None if w is None else w.cpu(),
                                None if mean is None else mean.cpu(), rstd.cpu())
            for g, r in zip(got, want):
                if r is not None:
                    torch.testing.assert_close(g.cpu(), r, rtol=1e-5, atol=1e-4)


# Vector-path row lengths that leave the last 16-byte slots of a tile empty (the lean kernel tests
# bounds once per slot): just past a warp's or block's half, one vector short of a full tile, one
# vector into the next tile. Multiples of 8 so every dtype stays on the vector path.
PARTIAL_TILE_LENS = (8, 136, 264, 504, 520, 1032, 2056, 4088, 4104, 6152, 8184)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_lean_vector_path_partial_tiles(rng, op, dtype):
    """row_backward_lean_kernel (the vector path): partial tiles, with and without a weight (the
    shared-memory column sums with one or both partial rows), against float64."""
    need()
    for n in PARTIAL_TILE_LENS:
        rows = 5 if n > 2048 else 41
        check_backward(TORCH_CUDA, op, data(rng, (rows, n), dtype), dtype, rng)
        if op not in SOFTMAX_OPS:
            check_backward(TORCH_CUDA, op, data(rng, (rows, n), dtype), dtype, rng, weight=False)


@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_lean_many_rows_prefetch_and_column_sums(rng, op):
    """Many rows per group (the prefetch of the next row and the column sums over many rows in
    shared memory), fewer rows than groups (a prefetch with no next row, groups without rows
    writing zero partial rows), in every dtype."""
    need()
    for dtype in FLOATS:
        for shape in ((9001, 520), (2051, 4096), (603, 8192), (3, 8192), (1, 264)):
            check_backward(TORCH_CUDA, op, data(rng, shape, dtype), dtype, rng)


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32"))
@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_staged_rows_wrap_the_stage_ring(rng, op, dtype):
    """row_backward_staged_kernel (block tiles of the vector path, rows copied kStages - 1 ahead
    into a ring of shared-memory stages): many rows per block, so every stage is rewritten many
    times (a stage reused before its row was read would show as another row's values); a row
    count that leaves some blocks one row short; partial tiles of both block widths; the norms
    with and without a weight (register column sums over many rows)."""
    need()
    for shape in ((4003, 2056), (1201, 8184), (2, 4104)):
        check_backward(TORCH_CUDA, op, data(rng, shape, dtype), dtype, rng)
        if op not in SOFTMAX_OPS:
            check_backward(TORCH_CUDA, op, data(rng, shape, dtype), dtype, rng, weight=False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_nan_and_inf_inputs_every_dtype(rng, op, dtype):
    """A NaN or inf in a row's dy or saved values makes that row's dx NaN (its row sums are NaN:
    softmax Σ dy·y, log_softmax Σ dy, the norms Σ g·x̂) and leaves the other rows finite; the norms'
    column sums are NaN exactly in the affected columns. Every tile width (vector path)."""
    need()
    tdt = getattr(torch, dtype)
    for n in (256, 4096, 8192):
        x = torch.randn(6, n, device="cuda", dtype=torch.float32).to(tdt)
        w = (torch.rand(n, device="cuda") + 0.5).to(tdt)
        saved, mean, rstd = forward_for_backward(op, x, None if op in SOFTMAX_OPS else w)
        dy = torch.randn(6, n, device="cuda", dtype=torch.float32).to(tdt)
        dy[0, n - 1] = float("nan")
        dy[1, 3] = float("inf")
        dy[2, n // 2] = float("-inf")
        saved = saved.clone()
        saved[3, 5] = float("nan")
        dx, dw, db = run_backward(op, dy, saved, None if op in SOFTMAX_OPS else w, mean, rstd)
        assert torch.isnan(dx[0]).all() and torch.isnan(dx[1]).any() and torch.isnan(dx[2]).any(), (n, dtype)
        assert not torch.isfinite(dx[3]).all(), (n, dtype)
        assert torch.isfinite(dx[4:]).all(), (n, dtype)
        if dw is not None:
            bad = torch.zeros(n, dtype=torch.bool, device="cuda")
            bad[[n - 1, 3, n // 2, 5]] = True
            assert not torch.isfinite(dw[bad]).any() and torch.isfinite(dw[~bad]).all(), (n, dtype)


@pytest.mark.parametrize("op", SOFTMAX_OPS)
def test_nan_and_inf_rows(rng, op):
    need()
    x = torch.randn(4, 300, device="cuda")
    x[0, 7] = float("nan")
    x[1, 3] = float("inf")
    x[2] = float("-inf")
    dy = torch.randn(4, 300, device="cuda")
    for algorithm in variants(op):
        y = getattr(gpuprims, op)(x)
        dx = getattr(gpuprims, op + "_backward")(y, dy, algorithm=algorithm)
        assert torch.isnan(dx[:3]).all() and torch.isfinite(dx[3]).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_constant_rows_have_finite_gradients(rng, dtype):
    need()
    x = torch.full((7, 3000), 1234.0, device="cuda").to(getattr(torch, dtype))
    dy = torch.randn(7, 3000, device="cuda").to(x.dtype)
    for algorithm in variants("layer_norm"):
        _, mean, rstd = gpuprims.layer_norm(x, return_stats=True)
        dx, dw, db = gpuprims.layer_norm_backward(dy, x, None, mean, rstd, algorithm=algorithm)
        assert all(torch.isfinite(t).all() for t in (dx, dw, db))


@pytest.mark.parametrize("op", BACKWARD_OPS)
@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32"))
def test_error_within_three_times_torch(rng, op, dtype):
    """|ours - float64| <= 3 |torch - float64| + rounding noise, torch autograd in the same dtype."""
    need()
    tdt = getattr(torch, dtype)
    for n in (100, 1024, 5120):
        x64 = torch.randn(64, n, device="cuda", dtype=torch.float64) * 2
        w64 = torch.rand(n, device="cuda", dtype=torch.float64) + 0.5
        dy64 = torch.randn(64, n, device="cuda", dtype=torch.float64)

        def torch_grads(x, w, dy):
            x = x.detach().requires_grad_()
            w = w.detach().requires_grad_()
            if op == "softmax":
                y = torch.softmax(x, -1)
            elif op == "log_softmax":
                y = torch.log_softmax(x, -1)
            elif op == "layer_norm":
                y = torch.nn.functional.layer_norm(x, (n,), w, None)
            else:
                y = torch.nn.functional.rms_norm(x, (n,), w, 1e-6)
            y.backward(dy)
            return x.grad, (None if op in SOFTMAX_OPS else w.grad)

        ref = torch_grads(x64, w64, dy64)
        x, w, dy = x64.to(tdt), w64.to(tdt), dy64.to(tdt)
        theirs = torch_grads(x, w, dy)
        saved, mean, rstd = forward_for_backward(op, x, None if op in SOFTMAX_OPS else w)
        ours = run_backward(op, dy, saved, None if op in SOFTMAX_OPS else w, mean, rstd)
        eps = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24}[dtype]
        for o, t, r in zip(ours[:2], theirs, ref):
            if r is None:
                continue
            ours_err = (o.double() - r).abs().max().item()
            their_err = (t.double() - r).abs().max().item()
            assert ours_err <= 3 * their_err + 4 * eps * r.abs().max().item(), (n, ours_err, their_err)


@pytest.mark.parametrize("fw", framework_params("cuda"))
@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_frameworks(fw, rng, op):
    need(fw)
    for dtype in FLOATS:
        if fw.name in ("cupy", "cuda.core") and dtype == "bfloat16":
            continue
        check_backward(fw, op, data(rng, (17, 1500), dtype), dtype, rng)


def test_torch_side_stream_ordering(rng):
    """Issued on a side stream right behind a long kernel that produces dy: right answer, no sync."""
    need()
    x = torch.randn(512, 4096, device="cuda")
    w = torch.rand(4096, device="cuda") + 0.5
    _, mean, rstd = gpuprims.layer_norm(x, w, return_stats=True)
    y = gpuprims.softmax(x)
    dy = torch.full_like(x, float("nan"))
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        dy.copy_(torch.linspace(-1, 1, 4096, device="cuda").expand(512, 4096))
        dx, dw, db = gpuprims.layer_norm_backward(dy, x, w, mean, rstd)
        ds = gpuprims.softmax_backward(y, dy)
    torch.cuda.synchronize()
    want = gpuprims.layer_norm_backward(dy.cpu(), x.cpu(), w.cpu(), mean.cpu(), rstd.cpu())
    for g, r in zip((dx, dw, db), want):
        torch.testing.assert_close(g.cpu(), r, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(ds.cpu(), gpuprims.softmax_backward(y.cpu(), dy.cpu()), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_bitwise_reproducible(rng, op):
    need()
    for n in (200, 4000, 8192, 20000):
        x = torch.from_numpy(data(rng, (300, n), "float32")).cuda()
        w = torch.rand(n, device="cuda") + 0.5
        dy = torch.randn(300, n, device="cuda")
        saved, mean, rstd = forward_for_backward(op, x, None if op in SOFTMAX_OPS else w)
        for algorithm in variants(op):
            first = run_backward(op, dy, saved, None if op in SOFTMAX_OPS else w, mean, rstd, algorithm=algorithm)
            for _ in range(3):
                again = run_backward(op, dy, saved, None if op in SOFTMAX_OPS else w, mean, rstd,
                                     algorithm=algorithm)
                for a, b in zip(first, again):
                    assert a is None or torch.equal(a, b), (algorithm, n)


@pytest.mark.big
def test_beyond_2_31_elements():
    """layer_norm backward on 2^31 + 8192 bfloat16 elements in rows of 8192 (row_on_chip, int64 row
    offsets), and one row of 2^31 + 5 elements (two_pass, int64 element offsets)."""
    need()
    rows = (1 << 31) // 8192 + 1
    x = torch.randn(rows, 8192, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(rows, 8192, device="cuda", dtype=torch.bfloat16)
    _, mean, rstd = gpuprims.layer_norm(x, return_stats=True)
    dx, dw, db = gpuprims.layer_norm_backward(dy, x, None, mean, rstd)
    for r in (0, rows // 2, rows - 1):
        xr = x[r].float().requires_grad_()
        torch.nn.functional.layer_norm(xr, (8192,)).backward(dy[r].float())
        torch.testing.assert_close(dx[r].float(), xr.grad, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(db.float(), dy.float().sum(0), rtol=2e-2, atol=1.0)
    del x, dy, dx, dw, db
    torch.cuda.empty_cache()

    n = (1 << 31) + 5
    x = torch.randn(1, n, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(1, n, device="cuda", dtype=torch.bfloat16)
    _, mean, rstd = gpuprims.layer_norm(x, return_stats=True)
    dx, dw, db = gpuprims.layer_norm_backward(dy, x, None, mean, rstd)
    # The reference from the same statistics, with the row sums in float64 (torch's own kernels are
    # not relied on for a 2^31-element row), summed in chunks of 2^27 so that the float64
    # temporaries stay near 3 GiB (whole-row float64 copies did not fit an 80 GB H100 beside the
    # five bfloat16 arrays).
    def xhat_of(part):
        return (x[0, part].double() - mean[0, 0].double()) * rstd[0, 0].double()

    sum_g = sum_gx = 0.0
    for start in range(0, n, 1 << 27):
        part = slice(start, min(n, start + (1 << 27)))
        d = dy[0, part].double()
        sum_g += d.sum().item()
        sum_gx += (d * xhat_of(part)).sum().item()
        del d
    mean_g, mean_gx = sum_g / n, sum_gx / n
    tail = slice(n - 5000, n)
    d, xhat = dy[0, tail].double(), xhat_of(tail)
    want = rstd[0, 0].double() * (d - mean_g - xhat * mean_gx)
    torch.testing.assert_close(dx[0, tail].double(), want, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(dw[tail].double(), d * xhat, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(db[tail], dy[0, tail], rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------
# the compute-sanitizer selection (scripts/gpu_check.sh runs `-k sanitize`): every backward
# kernel once, on the vector and element-wise paths, small.


@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_sanitize_backward_small(rng, op):
    need()
    for algorithm in variants(op)[1:]:
        for shape in ((9, 64), (3, 1000), (2, 6000), (1, 9000), (0, 5)):
            check_backward(TORCH_CUDA, op, data(rng, shape, "float32"), "float32", rng, algorithm=algorithm)
        check_backward(TORCH_CUDA, op, data(rng, (3, 1001), "float32"), "float32", rng, algorithm=algorithm,
                       view=lambda v: v[:, 1:])
        check_backward(TORCH_CUDA, op, data(rng, (2, 3000), "bfloat16"), "bfloat16", rng, algorithm=algorithm)


@pytest.mark.parametrize("op", BACKWARD_OPS)
def test_sanitize_backward_rows_side_by_side(rng, op):
    """The columns backward kernels: staged (aligned, rows of 40 and 150) and in registers (one
    element off alignment, rows of 21), more groups than the resident grid (100 x 32 groups of 40
    rows: several times around each block's ring of stages, the column sums over its steps), a
    partial last group."""
    need()
    for dtype in ("float32", "bfloat16"):
        for shape in ((100, 40, 1024), (2, 150, 70), (3, 21, 64)):
            check_backward(TORCH_CUDA, op, data(rng, shape, dtype), dtype, rng, algorithm="columns", axis=1)
        check_backward(TORCH_CUDA, op, data(rng, (2, 40, 65), dtype), dtype, rng, algorithm="columns", axis=1,
                       view=lambda v: v[..., 1:])
