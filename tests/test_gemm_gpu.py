"""matmul and gemv on the GPU: every variant and dtype against float64, odd shapes around every
tile size, batching and broadcasting, transposed / negative / padded / misaligned views (vector
and scalar paths), strided out=, K = 0 and empty inputs, exact integer products, NaN/Inf,
frameworks, streams, graph capture, determinism and sizes beyond 2^31. Skipped (with the reason)
without a GPU."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import Framework, framework_params, to_numpy, torch
from gemm_reference import (FLOAT32_VARIANTS, FLOATS, GEMV_VARIANTS, assert_close, check_gemv, check_matmul, data,
                            integer_data, matmul_reference, matmul_tolerance, matmul_variants_for)

import gpuprims

pytestmark = pytest.mark.gpu
TORCH_CUDA = Framework("torch", "cuda")
# Every way to run float32 data: (algorithm, allow_tf32); wmma only as TF32.
FLOAT32_RUNS = (("auto", False),) + tuple((v, False) for v in matmul_variants_for("float32")) + (("wmma", True),)
# (M, K, N) around the tiles: 32 (naive, coalesced, smem_tiled), 64 (blocktile_1d), 128
# (blocktile_2d, vectorized, warptile, wmma, mma_pipelined), 256, K slices of 8, 16, 32 and 64,
# float4 tails (K, N not multiples of 4). (warptile's Stream-K split runs only on products that
# give every one of its blocks work: test_warptile_large_product, test_warptile_streamk.)
SHAPES = ((1, 1, 1), (7, 13, 5), (127, 129, 131), (128, 16, 128), (129, 9, 257), (65, 33, 63), (3, 1, 300),
          (200, 2, 1), (1, 300, 130), (257, 17, 255), (130, 48, 513))


def need(fw):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed with GPU support")


def poisoned(shape, dtype):
    return torch.full(shape, float("nan"), device="cuda", dtype=getattr(torch, dtype))


def check_into_poisoned_out(a, b, dtype, algorithm, view_a=None, view_b=None, allow_tf32=False):
    """check_matmul through torch, writing into a NaN-filled out=. Returns the result."""
    ref_a, ref_b = (view_a(a) if view_a else a), (view_b(b) if view_b else b)
    # The product's shape without computing it (numpy multiplies float16 without BLAS: a 2252 x 1000
    # x 2044 product took most of a 137-s test).
    out = poisoned(np.broadcast_shapes(ref_a.shape[:-2], ref_b.shape[:-2]) + (ref_a.shape[-2], ref_b.shape[-1]), dtype)
    return check_matmul(TORCH_CUDA, a, b, dtype, algorithm=algorithm, view_a=view_a, view_b=view_b, out=out,
                        allow_tf32=allow_tf32)


@pytest.mark.parametrize("dtype", FLOATS)
def test_every_variant_dtype_and_shape(rng, dtype):
    need(TORCH_CUDA)
    runs = FLOAT32_RUNS if dtype == "float32" else tuple((v, False) for v in ("auto",) + matmul_variants_for(dtype))
    for algorithm, tf32 in runs:
        for m, k, n in SHAPES:
            a, b = data(rng, (m, k), dtype), data(rng, (k, n), dtype)
            check_into_poisoned_out(a, b, dtype, algorithm, allow_tf32=tf32)
            check_matmul(TORCH_CUDA, a, b, dtype, algorithm=algorithm, allow_tf32=tf32)


def test_float32_only_variants_reject_other_dtypes():
    need(TORCH_CUDA)
    a = torch.ones((4, 4), device="cuda", dtype=torch.float16)
    for algorithm in FLOAT32_VARIANTS:
        with pytest.raises(TypeError, match=f"algorithm '{algorithm}' takes float32 inputs, got float16"):
            gpuprims.matmul(a, a, algorithm=algorithm)
    with pytest.raises(TypeError, match="algorithm 'wmma' takes float16 or bfloat16 inputs, or float32 with "
                                        "allow_tf32=True, got float32 with allow_tf32=False"):
        gpuprims.matmul(a.float(), a.float(), algorithm="wmma")
    with pytest.raises(TypeError, match="algorithm 'mma_pipelined' takes float16 or bfloat16 inputs, got float32"):
        gpuprims.matmul(a.float(), a.float(), algorithm="mma_pipelined")


def test_tall_odd_shape_every_variant(rng):
    """4097 x 31 x 1023: many row tiles, a K that is no multiple of any slice, ragged column tiles."""
    need(TORCH_CUDA)
    a, b = data(rng, (4097, 31), "float32"), data(rng, (31, 1023), "float32")
    ref = matmul_reference(a, b)
    x, y = TORCH_CUDA.make(a), TORCH_CUDA.make(b)
    for algorithm, tf32 in FLOAT32_RUNS:
        assert_close(gpuprims.matmul(x, y, algorithm=algorithm, allow_tf32=tf32), ref,
                     matmul_tolerance(a, b, "float32", tf32), algorithm)


def test_1000_cubed(rng):
    need(TORCH_CUDA)
    a, b = data(rng, (1000, 1000), "float32"), data(rng, (1000, 1000), "float32")
    ref, tol = matmul_reference(a, b), matmul_tolerance(a, b, "float32")
    x, y = TORCH_CUDA.make(a), TORCH_CUDA.make(b)
    for algorithm in ("smem_tiled", "blocktile_1d", "vectorized", "warptile"):
        assert_close(gpuprims.matmul(x, y, algorithm=algorithm), ref, tol, algorithm)
    assert_close(gpuprims.matmul(x, y, algorithm="wmma", allow_tf32=True), ref,
                 matmul_tolerance(a, b, "float32", tf32=True), "wmma tf32")
    for dtype in ("float16", "bfloat16"):
        a16, b16 = data(rng, (1000, 1000), dtype), data(rng, (1000, 1000), dtype)
        assert_close(gpuprims.matmul(TORCH_CUDA.make(a16, dtype), TORCH_CUDA.make(b16, dtype)),
                     matmul_reference(a16, b16), matmul_tolerance(a16, b16, dtype), f"auto {dtype}")


def test_tile_edges_on_16_byte_paths(rng):
    """Rows that keep the 16-byte paths (float4 loads, cp.async, 16-byte C stores) while M, N and K
    end inside a tile (warptile's 16-deep slices fetched in two parts, mma_pipelined's 64-deep
    slices), into a padded out= whose aligned rows end inside a 16-byte chunk (the padding after
    column n must stay untouched)."""
    need(TORCH_CUDA)
    for dtype, algorithm in (("float32", "warptile"), ("bfloat16", "mma_pipelined"), ("float16", "mma_pipelined")):
        for m, k, n in ((200, 40, 264), (264, 104, 520), (129, 8, 256), (1, 16, 8)):
            check_into_poisoned_out(data(rng, (m, k), dtype), data(rng, (k, n), dtype), dtype, algorithm)
        a, b = data(rng, (3, 131, 72), dtype), data(rng, (72, 260), dtype)
        out_base = poisoned((3, 131, 264), dtype)  # rows of 264: 16-byte aligned, 4 columns of padding
        out = out_base[:, :, :260]
        assert gpuprims.matmul(TORCH_CUDA.make(a, dtype), TORCH_CUDA.make(b, dtype), algorithm=algorithm, out=out) is out
        assert_close(out, matmul_reference(a, b), matmul_tolerance(a, b, dtype), f"{algorithm} {dtype} padded out")
        assert out_base[:, :, 260:].isnan().all(), f"{algorithm} {dtype} wrote past the last column"


def test_mma_pipelined_long_k_both_load_paths(rng):
    """K = 1000 (15 full 64-deep slices and a 40-deep tail): the 3 pipeline stages are reused five
    times, so each stage's full and empty mbarriers go through five phases (MmaPipelinedConfig's
    stage synchronization) with edge tiles in M and N; once with row-major operands (cp.async and
    16-byte paths) and once with a transposed A (every chunk gathered element by element and
    stored synchronously, which the barriers must order too)."""
    need(TORCH_CUDA)
    for dtype in ("bfloat16", "float16"):
        a, b = data(rng, (300, 1000), dtype), data(rng, (1000, 200), dtype)
        check_into_poisoned_out(a, b, dtype, "mma_pipelined")
        check_into_poisoned_out(np.ascontiguousarray(a.T), b, dtype, "mma_pipelined", view_a=lambda v: v.T)


def test_warptile_large_product(rng):
    """Two waves and more of warptile's 128 x 128 tiles: ragged M, N and K on the 16-byte path
    (whole waves by the plain kernel, the rest split Stream-K) and, for the same sizes, the strided
    loader (no Stream-K)."""
    need(TORCH_CUDA)
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    row_tiles = 9
    col_tiles = -(-4 * sms // row_tiles) + 1
    m, k, n = 128 * row_tiles - 52, 44, 128 * col_tiles - 4
    a, b = data(rng, (m, k), "float32"), data(rng, (k, n), "float32")
    check_into_poisoned_out(a, b, "float32", "warptile")
    check_into_poisoned_out(a, b, "float32", "auto")
    check_into_poisoned_out(a, b, "float32", "warptile", view_b=lambda v: v.T.T[:, 1:])


def test_warptile_streamk(rng):
    """warptile splits the K loops of the 128 x 128 tiles past the last whole wave over two blocks
    per SM (Stream-K, warptile_streamk.cuh) in units of 32 K: a batch with whole waves ahead of the
    split tiles and K = 300 (a tail of 12 after the last 16-deep slice); a batch with fewer tiles
    than blocks (all split) and K = 1012; and K = 4 (fewer units than blocks: no split). Into a
    poisoned out=, bitwise equal from run to run (the partials are added in a fixed order) and when
    replayed from a CUDA graph (counters from the graph's scratch)."""
    need(TORCH_CUDA)
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    grid = 2 * sms
    batch, row_tiles = 2, 5
    col_tiles = -(-(5 * grid // 2) // (batch * row_tiles))  # about two and a half waves
    while batch * row_tiles * col_tiles % grid * 10 < grid:  # split units (10 a tile at K = 300) fill the grid
        col_tiles += 1
    m, n = 128 * row_tiles - 37, 128 * col_tiles - 100
    cases = (((batch, m, 300), (300, n)), ((3, 300, 1012), (3, 1012, 500)), ((batch, m, 4), (4, n)))
    for shape_a, shape_b in cases:
        a, b = data(rng, shape_a, "float32"), data(rng, shape_b, "float32")
        first = check_into_poisoned_out(a, b, "float32", "warptile")
        x, y = TORCH_CUDA.make(a), TORCH_CUDA.make(b)
        for _ in range(3):
            assert torch.equal(gpuprims.matmul(x, y, algorithm="warptile"), first)
        out = poisoned(tuple(first.shape), "float32")
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            gpuprims.matmul(x, y, out=out, algorithm="warptile")  # warm-up outside the capture
        torch.cuda.current_stream().wait_stream(s)
        out.fill_(float("nan"))
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            gpuprims.matmul(x, y, out=out, algorithm="warptile")
        for _ in range(2):
            g.replay()
            torch.cuda.synchronize()
            assert torch.equal(out, first)


def test_mma_pipelined_large_tiling(rng):
    """mma_pipelined switches to MmaPipelinedLargeConfig (256 x 128 tiles, 16 warps, one block per
    SM) once a product has a wave of those tiles and the device lets a block opt in to its shared
    memory (Hopper; elsewhere these run the 128 x 128 kernel and check that): ragged M, N and a
    K = 1000 (16 slices: each of the 4 stages' mbarriers through four phases, a 40-deep tail), a
    batch whose tiles make the wave only together, and the same sizes with a transposed A (the
    gather path, which stays on the 128 x 128 tiling)."""
    need(TORCH_CUDA)
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    row_tiles = 9
    col_tiles = -(-sms // row_tiles) + 1
    m, k, n = 256 * row_tiles - 52, 1000, 128 * col_tiles - 4
    for dtype in ("bfloat16", "float16"):
        a, b = data(rng, (m, k), dtype), data(rng, (k, n), dtype)
        check_into_poisoned_out(a, b, dtype, "mma_pipelined")
        check_into_poisoned_out(a, b, dtype, "auto")
        check_into_poisoned_out(np.ascontiguousarray(a.T), b, dtype, "mma_pipelined", view_a=lambda v: v.T)
        batch_col_tiles = -(-sms // (2 * 5)) + 1  # 2 batches of 5 x batch_col_tiles tiles
        a3, b3 = data(rng, (2, 256 * 5 - 7, 72), dtype), data(rng, (2, 72, 128 * batch_col_tiles - 12), dtype)
        check_into_poisoned_out(a3, b3, dtype, "mma_pipelined")


@pytest.mark.parametrize("dtype", FLOATS)
def test_integer_products_are_exact(rng, dtype):
    need(TORCH_CUDA)
    for algorithm in matmul_variants_for(dtype):
        for m, k, n in ((37, 64, 130), (129, 17, 5)):
            a, b = integer_data(rng, (m, k), dtype, k), integer_data(rng, (k, n), dtype, k)
            got = to_numpy(gpuprims.matmul(TORCH_CUDA.make(a, dtype), TORCH_CUDA.make(b, dtype), algorithm=algorithm))
            np.testing.assert_array_equal(got, matmul_reference(a, b), err_msg=f"{algorithm} {dtype}")


def test_batched_and_broadcast(rng):
    need(TORCH_CUDA)
    for dtype in ("float32", "float16"):
        a3, b3 = data(rng, (5, 33, 19), dtype), data(rng, (5, 19, 130), dtype)
        a2, b2 = data(rng, (33, 19), dtype), data(rng, (19, 130), dtype)
        cases = ((a3, b3), (a3, b2), (a2, b3), (a3[:1], b3), (a3, b3[:1]))
        for algorithm in ("auto",) + matmul_variants_for(dtype):
            for a, b in cases:
                check_into_poisoned_out(a, b, dtype, algorithm)
            for a, b in ((a3[:0], b2), (a3[:0], b3[:1]), (a2[:0], b3), (a3[:, :, :0], b3[:, :0])):
                r = gpuprims.matmul(TORCH_CUDA.make(a, dtype), TORCH_CUDA.make(b, dtype), algorithm=algorithm)
                assert tuple(r.shape) == np.matmul(a, b).shape
                assert torch.count_nonzero(r) == 0


# Views of target shape (r, c): how to make the base array, and the view (numpy, torch and cupy
# alike). ld_pad4 keeps rows 16-byte aligned when c % 4 == 0 (vector path with ld > width);
# misaligned starts one element in (scalar path); column_major and step2 take the strided loader.
VIEWS = {
    "row_major": (lambda r, c: (r, c), lambda v: v),
    "column_major": (lambda r, c: (c, r), lambda v: v.T),
    "ld_pad4": (lambda r, c: (r, c + 4), lambda v: v[:, 2:-2]),
    "misaligned": (lambda r, c: (r, c + 1), lambda v: v[:, 1:]),
    "step2": (lambda r, c: (2 * r, 2 * c), lambda v: v[::2, ::2]),
}


def viewed(rng, name, r, c, dtype="float32"):
    base_shape, view = VIEWS[name]
    return data(rng, base_shape(r, c), dtype), view


@pytest.mark.parametrize("view_b", list(VIEWS))
@pytest.mark.parametrize("view_a", list(VIEWS))
def test_views_every_variant(rng, view_a, view_b):
    """Every stride pattern on both operands: 16-byte loads only where rows are contiguous and
    aligned, the strided loader (row- or column-fastest) elsewhere."""
    need(TORCH_CUDA)
    m, k, n = 131, 72, 264
    a, va = viewed(rng, view_a, m, k)
    b, vb = viewed(rng, view_b, k, n)
    for algorithm, tf32 in FLOAT32_RUNS:
        check_into_poisoned_out(a, b, "float32", algorithm, view_a=va, view_b=vb, allow_tf32=tf32)
    a16, va16 = viewed(rng, view_a, m, k, "bfloat16")
    b16, vb16 = viewed(rng, view_b, k, n, "bfloat16")
    for algorithm in ("auto",) + matmul_variants_for("bfloat16"):
        check_into_poisoned_out(a16, b16, "bfloat16", algorithm, view_a=va16, view_b=vb16)


def test_negative_strides_every_variant(rng):
    fw = Framework("cupy", "cuda")
    need(fw)
    a, b = data(rng, (70, 45), "float32"), data(rng, (45, 133), "float32")
    for algorithm, tf32 in FLOAT32_RUNS:
        for va, vb in ((lambda v: v[::-1], lambda v: v[:, ::-1]), (lambda v: v[::-1, ::-1], lambda v: v[::-1].T.T),
                       (lambda v: v[:, ::-1], lambda v: v[::-1, ::-2])):
            if vb(b).shape[0] != va(a).shape[1]:
                continue
            check_matmul(fw, a, b, "float32", algorithm=algorithm, view_a=va, view_b=vb, allow_tf32=tf32)


def test_batched_views(rng):
    """Batch strides: a batch that is not outermost in memory, and misaligned rows and batches."""
    need(TORCH_CUDA)
    a, b = data(rng, (19, 3, 40), "float32"), data(rng, (3, 40, 133), "float32")
    a_off, b_off = data(rng, (3, 40, 41), "float32"), data(rng, (3, 41, 133), "float32")
    for algorithm, tf32 in FLOAT32_RUNS:
        check_into_poisoned_out(a, b, "float32", algorithm, view_a=lambda v: v.swapaxes(0, 1), allow_tf32=tf32)
        check_into_poisoned_out(a_off, b_off, "float32", algorithm, view_a=lambda v: v[:, :, 1:],
                                view_b=lambda v: v[:, 1:, :], allow_tf32=tf32)


def test_strided_and_misaligned_out(rng):
    need(TORCH_CUDA)
    a, b = data(rng, (37, 20), "float32"), data(rng, (20, 130), "float32")
    ref = matmul_reference(a, b)
    x, y = TORCH_CUDA.make(a), TORCH_CUDA.make(b)
    for algorithm, tf32 in FLOAT32_RUNS:
        col_major = poisoned((130, 37), "float32").T
        misaligned = poisoned((37 * 131 + 1,), "float32")[1:].view(37, 131)[:, :130]
        for out in (col_major, misaligned):
            assert gpuprims.matmul(x, y, algorithm=algorithm, out=out, allow_tf32=tf32) is out
            assert_close(out, ref, matmul_tolerance(a, b, "float32", tf32), f"{algorithm} out strides {out.stride()}")


def test_k_zero_writes_zeros(rng):
    need(TORCH_CUDA)
    for dtype in FLOATS:
        for algorithm in ("auto",) + matmul_variants_for(dtype):
            out = poisoned((130, 67), dtype)
            a = torch.empty((130, 0), device="cuda", dtype=getattr(torch, dtype))
            b = torch.empty((0, 67), device="cuda", dtype=getattr(torch, dtype))
            gpuprims.matmul(a, b, algorithm=algorithm, out=out)
            assert torch.count_nonzero(out) == 0 and not out.isnan().any(), algorithm
        for algorithm in GEMV_VARIANTS:
            y = poisoned((33,), dtype)
            gpuprims.gemv(torch.empty((33, 0), device="cuda", dtype=y.dtype), torch.empty(0, device="cuda",
                                                                                            dtype=y.dtype),
                          algorithm=algorithm, out=y)
            assert torch.count_nonzero(y) == 0 and not y.isnan().any(), algorithm


def test_nan_and_inf_propagate(rng):
    need(TORCH_CUDA)
    a, b = data(rng, (40, 30), "float32"), data(rng, (30, 140), "float32")
    a[3, 5] = np.nan
    b[7, 2] = np.inf
    b[9, 100] = -np.inf
    ref = matmul_reference(a, b)
    for algorithm, tf32 in FLOAT32_RUNS:
        got = to_numpy(gpuprims.matmul(TORCH_CUDA.make(a), TORCH_CUDA.make(b), algorithm=algorithm,
                                       allow_tf32=tf32)).astype(np.float64)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=algorithm)
        np.testing.assert_array_equal(got[np.isinf(ref)], ref[np.isinf(ref)], err_msg=algorithm)
        finite = np.isfinite(ref)
        tol = 1e-2 if tf32 else 1e-4
        np.testing.assert_allclose(got[finite], ref[finite], rtol=tol, atol=tol, err_msg=algorithm)
    for algorithm in GEMV_VARIANTS:
        got = to_numpy(gpuprims.gemv(TORCH_CUDA.make(b.T.copy()), TORCH_CUDA.make(a[3].copy()),
                                     algorithm=algorithm)).astype(np.float64)
        assert np.isnan(got).all(), algorithm


# ---------------------------------------------------------------------------------------------
# gemv


@pytest.mark.parametrize("dtype", FLOATS)
def test_gemv_every_variant_dtype_and_shape(rng, dtype):
    need(TORCH_CUDA)
    for algorithm in ("auto",) + GEMV_VARIANTS:
        for m, k in ((1, 1), (7, 13), (129, 1031), (4099, 37), (3, 4096), (5, 0), (0, 5)):
            check_gemv(TORCH_CUDA, data(rng, (m, k), dtype), data(rng, k, dtype), dtype, algorithm=algorithm)


@pytest.mark.parametrize("view_a", list(VIEWS))
def test_gemv_views(rng, view_a):
    """Vector loads only for contiguous aligned rows with a contiguous aligned x; strided x too."""
    need(TORCH_CUDA)
    for dtype in ("float32", "float16"):
        a, va = viewed(rng, view_a, 300, 1000, dtype)
        x = data(rng, 2001, dtype)
        for algorithm in ("auto",) + GEMV_VARIANTS:
            for vx in (lambda v: v[:1000], lambda v: v[1:1001], lambda v: v[:2000:2]):
                check_gemv(TORCH_CUDA, a, x, dtype, algorithm=algorithm, view_a=va, view_x=vx)
            out = poisoned((300,), dtype)
            assert gpuprims.gemv(va(TORCH_CUDA.make(a, dtype)),
                                 TORCH_CUDA.make(x[:1000].copy(), dtype), algorithm=algorithm, out=out) is out
            assert not out.isnan().any()


# ---------------------------------------------------------------------------------------------
# frameworks, streams, graphs, determinism


@pytest.mark.parametrize("fw", framework_params("cuda"))
def test_frameworks(fw, rng):
    need(fw)
    for dtype in FLOATS:
        if fw.name in ("cupy", "cuda.core") and dtype == "bfloat16":
            continue
        r = check_matmul(fw, data(rng, (33, 70), dtype), data(rng, (70, 129), dtype), dtype)
        assert fw.is_native(r)
        r = check_gemv(fw, data(rng, (33, 70), dtype), data(rng, 70, dtype), dtype)
        assert fw.is_native(r)
    if fw.name == "jax":
        with pytest.raises(TypeError, match="JAX arrays are immutable"):
            gpuprims.matmul(fw.make(data(rng, (2, 3), "float32")), fw.make(data(rng, (3, 2), "float32")),
                            out=fw.make(np.zeros((2, 2), np.float32)))


def test_device_mismatch():
    need(TORCH_CUDA)
    with pytest.raises(ValueError, match="matmul: arguments 'a' and 'b' must be on the same device, got a on cuda:0 "
                                         "and b on cpu"):
        gpuprims.matmul(torch.ones((2, 2), device="cuda"), torch.ones((2, 2)))
    with pytest.raises(ValueError, match="gemv: arguments 'a' and 'x' must be on the same device"):
        gpuprims.gemv(torch.ones((2, 2), device="cuda"), torch.ones(2))


def test_torch_side_stream_ordering(rng):
    """Issued on a side stream right behind a long kernel that produces the operands: right
    answer without a host synchronization in between."""
    need(TORCH_CUDA)
    a = torch.full((300, 200), float("nan"), device="cuda")
    b = torch.full((200, 100), float("nan"), device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        a.fill_(0.5)
        b.fill_(2.0)
        c = gpuprims.matmul(a, b)
        y = gpuprims.gemv(a, b[:, 0])
        out = torch.empty((300, 100), device="cuda")
    gpuprims.matmul(a, b, out=out, stream=side)
    torch.cuda.synchronize()
    assert torch.all(c == 200.0) and torch.all(out == 200.0) and torch.all(y == 200.0)


def test_cuda_graph_capture(rng):
    """No host synchronization or allocation inside: capturable."""
    need(TORCH_CUDA)
    a = torch.from_numpy(data(rng, (257, 300), "float32")).cuda()
    b = torch.from_numpy(data(rng, (300, 129), "float32")).cuda()
    c = torch.empty((257, 129), device="cuda")
    y = torch.empty((257,), device="cuda")
    # bfloat16 with rows that take mma_pipelined's cp.async path (its launcher sets the kernel's
    # dynamic shared-memory attribute before every launch, inside the capture too)
    a16, b16 = a[:, :296].bfloat16(), b[:296, :128].bfloat16()
    c16 = torch.empty((257, 128), device="cuda", dtype=torch.bfloat16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        gpuprims.matmul(a, b, out=c)
        gpuprims.matmul(a16, b16, out=c16)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        gpuprims.matmul(a, b, out=c)
        gpuprims.gemv(a, b[:, 0], out=y)
        gpuprims.matmul(a16, b16, out=c16)
    a.copy_(torch.from_numpy(data(rng, (257, 300), "float32")).cuda())
    a16.copy_(a[:, :296])
    g.replay()
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    torch.testing.assert_close(c.double(), ref, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(y.double(), ref[:, 0], rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(c16.double(), a16.double() @ b16.double(), rtol=2e-2, atol=2e-2)


def test_bitwise_reproducible(rng):
    need(TORCH_CUDA)
    a = torch.from_numpy(data(rng, (300, 517), "float32")).cuda()
    b = torch.from_numpy(data(rng, (517, 260), "float32")).cuda()
    for algorithm, tf32 in FLOAT32_RUNS:
        first = gpuprims.matmul(a, b, algorithm=algorithm, allow_tf32=tf32)
        for _ in range(3):
            assert torch.equal(gpuprims.matmul(a, b, algorithm=algorithm, allow_tf32=tf32), first), algorithm
    for algorithm in GEMV_VARIANTS:
        first = gpuprims.gemv(a, b[:, 0].contiguous(), algorithm=algorithm)
        for _ in range(3):
            assert torch.equal(gpuprims.gemv(a, b[:, 0].contiguous(), algorithm=algorithm), first), algorithm


@pytest.mark.big
def test_beyond_2_31_elements():
    """An A of more than 2^31 elements (int64 offsets in the loaders and in gemv's rows), and a C of
    more than 2^31 elements (int64 output offsets, 8.5 million tiles in the 1-D tile walk)."""
    need(TORCH_CUDA)
    m, k = (1 << 31) // 520 + 4, 520
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, 3, device="cuda")
    rows = torch.tensor([0, m // 2, m - 1], device="cuda")
    for algorithm in ("smem_tiled", "warptile"):
        c = gpuprims.matmul(a, b, algorithm=algorithm)
        torch.testing.assert_close(c[rows].double(), a[rows].double() @ b.double(), rtol=1e-4, atol=1e-3)
        del c
    for algorithm in GEMV_VARIANTS:
        y = gpuprims.gemv(a, b[:, 0].contiguous(), algorithm=algorithm)
        torch.testing.assert_close(y[rows].double(), a[rows].double() @ b[:, 0].double(), rtol=1e-4, atol=1e-3)
    del a, y
    torch.cuda.empty_cache()
    m, n = 600_000, 3600  # 2.16e9 outputs
    a = torch.randn(m, 2, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(2, n, device="cuda", dtype=torch.bfloat16)
    c = gpuprims.matmul(a, b, algorithm="coalesced")
    for r in (0, m // 2, m - 1):
        torch.testing.assert_close(c[r].float(), (a[r].float() @ b.float()).bfloat16().float(), rtol=1e-2, atol=1e-2)


# ---------------------------------------------------------------------------------------------
# the compute-sanitizer selection (scripts/gpu_check.sh runs `-k sanitize` under memcheck and
# racecheck): every kernel once, on the vector and scalar paths, small.


def test_sanitize_small(rng):
    need(TORCH_CUDA)
    a, b = data(rng, (70, 72), "float32"), data(rng, (72, 132), "float32")
    for algorithm, tf32 in FLOAT32_RUNS[1:]:
        check_into_poisoned_out(a, b, "float32", algorithm, allow_tf32=tf32)  # vector path where there is one
        check_into_poisoned_out(a, b, "float32", algorithm, view_a=lambda v: v[:, 1:], view_b=lambda v: v.T.T[1:],
                                allow_tf32=tf32)
        check_into_poisoned_out(a[:, :5], b[:5], "float32", algorithm, allow_tf32=tf32)
    # warptile's Stream-K kernel: two 128 x 128 tiles whose 32-deep K units give each of its two
    # blocks per SM at least one
    k = 32 * torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count + 12
    check_into_poisoned_out(data(rng, (100, k), "float32"), data(rng, (k, 200), "float32"), "float32", "warptile")
    a16, b16 = data(rng, (2, 33, 17), "float16"), data(rng, (17, 40), "float16")  # element-wise loads
    aligned16, baligned16 = data(rng, (64, 40), "bfloat16"), data(rng, (40, 136), "bfloat16")  # 16-byte rows
    out_base = poisoned((64, 136), "bfloat16")  # aligned rows, the last chunk of each row partial
    for algorithm in matmul_variants_for("float16"):
        check_into_poisoned_out(a16, b16, "float16", algorithm)
        check_into_poisoned_out(aligned16, baligned16, "bfloat16", algorithm)
        check_matmul(TORCH_CUDA, aligned16, baligned16[:, :132], "bfloat16", algorithm=algorithm,
                     out=out_base[:, :132])
    for algorithm in GEMV_VARIANTS:
        check_gemv(TORCH_CUDA, a, b[:, 0].copy(), "float32", algorithm=algorithm)
        check_gemv(TORCH_CUDA, a, b[:, 0].copy(), "float32", algorithm=algorithm, view_a=lambda v: v[:, 1:],
                   view_x=lambda v: v[1:])


def test_cublas_peer_agrees(rng):
    """The benchmark's peer computes the same function (where this build bound cuBLAS)."""
    need(TORCH_CUDA)
    from gpuprims import _cub_ref

    if not _cub_ref.cublas_available():
        pytest.skip("this build has no cuBLAS")
    a, b = data(rng, (65, 33), "float32"), data(rng, (33, 130), "float32")
    x, y = TORCH_CUDA.make(a), TORCH_CUDA.make(b)
    c = torch.empty((65, 130), device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    _cub_ref.cublas_gemm("float32", 65, 130, 33, x.data_ptr(), y.data_ptr(), c.data_ptr(), False, stream)
    assert_close(c, matmul_reference(a, b), matmul_tolerance(a, b, "float32"), "cublas_gemm")
    v = torch.empty(65, device="cuda")
    x0 = y[:, 0].contiguous()
    _cub_ref.cublas_sgemv(65, 33, x.data_ptr(), x0.data_ptr(), v.data_ptr(), stream)
    assert_close(v, matmul_reference(a, b[:, 0]), matmul_tolerance(a, b[:, :1], "float32")[:, 0], "cublas_sgemv")
