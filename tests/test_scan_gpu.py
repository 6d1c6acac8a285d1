"""scan on the GPU: every variant, dtype pair and op; tile boundaries; layouts; frameworks; streams;
determinism; look-back stress; sizes beyond 2^31. Skipped (with the reason) without a GPU."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import Framework, cupy, framework_params, to_numpy, torch
from scan_reference import CONVERTED_PAIRS, OPS, SCAN_DTYPES, check, compare, prefix_chain, reference, scan_values

import gpuprims
from gpuprims._dtypes import reduce_result_dtype

pytestmark = pytest.mark.gpu
TORCH_CUDA = Framework("torch", "cuda")
VARIANTS = tuple(v.name for v in gpuprims.variants("scan"))
TILE = 4096  # items per striped tile (256 threads x 16)
LOOKBACK_TILE = 8192  # the look-back's tile for 4-byte items (256 threads x 32, group prefixes folded)
LAG = 384  # tiles between a tile's two reads in the lagged look-back (kDefaultLag)
SIZES = (1, 31, 33, 511, 513, 1025, TILE - 1, TILE, TILE + 1, LOOKBACK_TILE - 1, LOOKBACK_TILE, 2 * TILE + 1,
         3 * TILE + 17, 2 * LOOKBACK_TILE - 1, 2**20 + 7)
PAIRS = [(d, None) for d in SCAN_DTYPES] + [("bool", None), ("bool", "bool"), ("int32", "int32"), ("uint32", "uint32"),
                                             ("int8", "int8"), ("uint16", "uint16"), ("float16", "float32"),
                                             ("bfloat16", "float32"), ("bfloat16", "float64"), ("float32", "float64")]


def need(fw):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed with GPU support")


def sizes_for(algorithm):
    # a 1-D scan is one column: its column tiles of 256 items follow each other in one look-back chain
    return [n for n in SIZES if algorithm != "columns" or n < 10**5]


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
@pytest.mark.parametrize("dtype,result", PAIRS)
@pytest.mark.parametrize("op", OPS)
def test_variant_dtype_op(rng, algorithm, dtype, result, op):
    need(TORCH_CUDA)
    for n in sizes_for(algorithm):
        exclusive = n % 2 == 1
        check(TORCH_CUDA, scan_values(rng, n, dtype, op), dtype, op, exclusive=exclusive, algorithm=algorithm,
              result_dtype=result)


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
@pytest.mark.parametrize("dtype,result", CONVERTED_PAIRS, ids=str)
def test_converted_pairs(rng, algorithm, dtype, result):
    """Pairs without kernels of their own: x converted into the result, then scanned there in place."""
    need(TORCH_CUDA)
    # float16 sums of int8 values stay finite over a few thousand items (a random walk of ~74 a step)
    longest = 4097 if result == "float16" else 70001
    for op in OPS:
        for n in (1, 33, TILE + 1, longest):
            a = scan_values(rng, n, dtype, op)
            if op == "prod" and result == "float16" and dtype == "int8":
                # products of [-3, 3] overflow float16 within a tile, which the variants that round a
                # tile's partial to the result (TWICE_ROUNDED) keep as inf (documented): +-1 and 0
                a = rng.choice(np.array([-1, 0, 1, 1, 1], np.int8), n)
            check(TORCH_CUDA, a, dtype, op, exclusive=n % 2 == 0, algorithm=algorithm, result_dtype=result)
    a = scan_values(rng, 40 * 300, dtype, "sum").reshape(40, 300)[:, ::-2]
    check(TORCH_CUDA, a, dtype, "sum", 1, algorithm=algorithm, result_dtype=result)
    check(TORCH_CUDA, a, dtype, "max", 0, exclusive=True, algorithm=algorithm, result_dtype=result)


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
@pytest.mark.parametrize("shape,axis", [((7, 5000), 1), ((5000, 7), 0), ((3, 4, 9000), 2), ((2, 9000, 3), 1),
                                        ((3000, 5), 1), ((5, 3000), 0), ((4096, 33), 1)])
def test_axes(rng, algorithm, shape, axis):
    need(TORCH_CUDA)
    a = scan_values(rng, int(np.prod(shape)), "float32", "sum").reshape(shape)
    check(TORCH_CUDA, a, "float32", "sum", axis, algorithm=algorithm)
    check(TORCH_CUDA, a.astype(np.int64), "int64", "max", axis, exclusive=True, algorithm=algorithm)


@pytest.mark.parametrize("dtype,op", [("float32", "sum"), ("int64", "max"), ("bfloat16", "sum"), ("float64", "prod")])
def test_block_per_row_shapes(rng, dtype, op):
    """Many rows longer than 2048 items ("auto" takes block_per_row there): rows of one tile, of
    one item past a tile, of several tiles with a ragged end, odd lengths (no vector path), exclusive
    and in place; the same rows through warp_per_row for the auto choice's neighbour."""
    need(TORCH_CUDA)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for rows, length in ((2 * sms, 2049), (2 * sms + 3, 4096), (300, 4097), (270, 8192), (2 * sms, 8193), (300, 20001)):
        a = scan_values(rng, rows * length, dtype, op).reshape(rows, length)
        for algorithm in ("auto", "block_per_row", "warp_per_row"):
            check(TORCH_CUDA, a, dtype, op, 1, exclusive=length % 2 == 1, algorithm=algorithm)
    a = scan_values(rng, 300 * 8193, "float32", "sum").reshape(300, 8193)
    y = torch.from_numpy(a).cuda()
    gpuprims.cumsum(y, axis=1, out=y, algorithm="block_per_row")
    ref, tol = reference(a, "sum", 1, "float32")
    compare(y, ref, tol, "float32")


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
def test_strided_and_misaligned_views(rng, algorithm):
    need(TORCH_CUDA)
    base = torch.from_numpy(scan_values(rng, 3 * 20000 + 1, "float32", "sum")).cuda()
    for view in (base[1:], base.flip(0), base[::3], base[1:].view(3, 20000).t(), base[5:9005].view(9, 1000)[:, 1:]):
        a = view.cpu().numpy()
        axis = None if view.dim() == 1 else 0
        got = gpuprims.cumsum(view, axis=axis, algorithm=algorithm)
        ref, tol = reference(a.reshape(-1) if axis is None else a, "sum", 0, "float32", chain=prefix_chain(algorithm))
        compare(got, ref, tol, "float32")


@pytest.mark.parametrize("fw", framework_params("cuda"))
@pytest.mark.parametrize("dtype", ("int32", "float32", "float16", "bfloat16", "float64"))
def test_frameworks(fw, rng, dtype):
    need(fw)
    if fw.name in ("cupy", "cuda.core") and dtype == "bfloat16":
        pytest.skip(f"{fw.name} holds no bfloat16")
    check(fw, scan_values(rng, 50000, dtype, "sum"), dtype, "sum")


def test_out_in_place_and_poisoned_output(rng):
    need(TORCH_CUDA)
    a = scan_values(rng, 100003, "float32", "sum")
    x = torch.from_numpy(a).cuda()
    out = torch.full_like(x, float("nan"))
    assert gpuprims.cumsum(x, out=out) is out
    ref, tol = reference(a, "sum", 0, "float32")
    compare(out, ref, tol, "float32")
    for algorithm in VARIANTS:
        y = torch.from_numpy(a).cuda()
        gpuprims.cumsum(y, axis=0, out=y, algorithm=algorithm)
        compare(y, ref, reference(a, "sum", 0, "float32", chain=prefix_chain(algorithm))[1], "float32")


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
def test_exclusive_in_place_every_variant(rng, algorithm):
    """out = x, exclusive: each item's value is known before the item itself is needed, so a kernel
    must not store it before reading the item (session 20's fuzzer: the column scan did, its
    pointers declared __restrict__). Strided columns, short rows (no vector path), long columns and
    a vector, with minima of uint64 / int64 and float32 sums: identities unlike any input."""
    cases = [(Framework("cupy", "cuda"), "uint64", "min"), (TORCH_CUDA, "int64", "min"), (TORCH_CUDA, "float32", "sum")]
    cases = [c for c in cases if c[0].available()]
    if not cases:
        pytest.skip("neither CuPy nor torch with CUDA")
    for fw, dtype, op in cases:
        for shape, axis in (((32, 3, 257), -2), ((300, 37), 1), ((64, 5000), 0), ((100003,), None)):
            a = scan_values(rng, int(np.prod(shape)), dtype, op).reshape(shape)
            y = fw.make(a, dtype)
            assert gpuprims.scan(y, op, axis, exclusive=True, algorithm=algorithm, out=y) is y
            ref, tol = reference(a.reshape(-1) if axis is None else a, op, 0 if axis is None else axis, dtype,
                                 exclusive=True, chain=prefix_chain(algorithm))
            compare(y, ref.reshape(shape), tol, dtype)


def test_stream_is_respected(rng):
    need(TORCH_CUDA)
    s = torch.cuda.Stream()
    a = scan_values(rng, 2**22 + 3, "int32", "sum")
    with torch.cuda.stream(s):
        x = torch.from_numpy(a).cuda(non_blocking=False)
        y = gpuprims.cumsum(x)
    s.synchronize()
    np.testing.assert_array_equal(to_numpy(y), np.cumsum(a, dtype=np.int64))
    out = torch.empty(len(a), dtype=torch.int64, device="cuda")
    gpuprims.cumsum(x, out=out, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(to_numpy(out), np.cumsum(a, dtype=np.int64))


def test_flattening_copy_runs_on_the_launch_stream():
    """axis=None on a transposed x (the C-order copy is the framework's) produced on a side stream
    behind a long kernel, launched there with stream= while the current stream is idle: the copy
    waits for x. compact / nonzero flatten the same way."""
    need(TORCH_CUDA)
    x = torch.full((512, 768), -1, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        x.copy_(torch.arange(x.numel(), device="cuda", dtype=torch.int32).reshape(x.shape) % 7)
        mask = x.T > 3
    view = x.T
    y = gpuprims.cumsum(view, stream=side)
    picked = gpuprims.compact(view, mask, stream=side)
    side.synchronize()
    flat = view.contiguous().reshape(-1)
    assert torch.equal(y, torch.cumsum(flat, 0))
    assert torch.equal(picked, flat[flat > 3])


def test_deterministic_float_scans_bitwise(rng):
    need(TORCH_CUDA)
    x = torch.from_numpy(scan_values(rng, 2**21 + 5, "float32", "sum")).cuda()
    first = gpuprims.cumsum(x, deterministic=True)
    for _ in range(100):
        assert torch.equal(gpuprims.cumsum(x, deterministic=True), first)


@pytest.mark.parametrize("lookback", ("decoupled_lookback", "lagged_lookback", "held_lookback"))
def test_lookback_stress_against_reduce_then_scan(rng, lookback):
    """Random sizes, integer data (exact): each look-back must equal the three-pass scan bitwise, with
    another kernel running concurrently on a second stream."""
    need(TORCH_CUDA)
    other = torch.cuda.Stream()
    busy = torch.randn(4096, 4096, device="cuda")
    for i in range(1000):
        n = int(rng.integers(1, 3 * 10**5)) if i % 10 else int(rng.integers(10**6, 4 * 10**6))
        x = torch.randint(-1000, 1000, (n,), dtype=torch.int32, device="cuda")
        if i % 50 == 0:
            with torch.cuda.stream(other):
                busy = busy @ busy.T * 1e-4
        a = gpuprims.cumsum(x, algorithm=lookback)
        b = gpuprims.cumsum(x, algorithm="reduce_then_scan")
        assert torch.equal(a, b), f"launch {i}, n={n}"
    torch.cuda.synchronize()


@pytest.mark.parametrize("algorithm", VARIANTS)
def test_narrow_min_max_identities_across_tiles(rng, algorithm):
    """Exclusive min / max of 8- and 16-bit integers over several tiles, all values on the side of
    zero where the 32-bit accumulator's identity, stored into the result and read back, is 0 (or -1
    for int8 min): each tile's first item must still get its prefix (session 46's fuzzer: hillis_steele,
    int16 max, a tile's first item 0 instead of the running max)."""
    need(TORCH_CUDA)
    for dtype, op, lo, hi in (("int16", "max", -30000, -1), ("int8", "min", 1, 127), ("int8", "max", -128, -2),
                              ("uint8", "min", 1, 255)):
        a = rng.integers(lo, hi, 3 * TILE + 2).astype(dtype)
        check(TORCH_CUDA, a, dtype, op, exclusive=True, algorithm=algorithm)
        check(TORCH_CUDA, a[::-1].reshape(5, -1), dtype, op, 1, exclusive=True, algorithm=algorithm)


def test_column_tiles_stress_against_torch(rng):
    """Random shapes scanned along axis 0, integer data (exact): the column tiles' per-column look-back
    must equal torch.cumsum bitwise on every launch, with another kernel running concurrently."""
    need(TORCH_CUDA)
    other = torch.cuda.Stream()
    busy = torch.randn(4096, 4096, device="cuda")
    for i in range(300):
        shape = (int(rng.integers(1, 3000)), int(rng.integers(1, 2000)))
        x = torch.randint(-1000, 1000, shape, dtype=torch.int32, device="cuda")
        if i % 25 == 0:
            with torch.cuda.stream(other):
                busy = busy @ busy.T * 1e-4
        got = gpuprims.cumsum(x, axis=0, algorithm="columns")
        assert torch.equal(got, torch.cumsum(x, 0)), f"launch {i}, shape {shape}"
    torch.cuda.synchronize()


@pytest.mark.parametrize("dtype,op,result", [("float32", "sum", None), ("int64", "max", None), ("int32", "sum", None),
                                             ("bfloat16", "sum", "float32"), ("bool", "sum", None),
                                             ("uint8", "min", None), ("float64", "prod", None)])
def test_column_tiles_shapes(rng, dtype, op, result):
    """Column tiles (16-256 columns x 16-256 items of the axis a block, by the axis length): column
    counts and axis lengths around the tile's edges, inclusive and exclusive; 3-D arrays whose columns
    merge, a reversed axis, columns of a strided view (not adjacent), a middle axis."""
    need(TORCH_CUDA)
    for rows, cols in ((1, 1), (30, 70), (63, 65), (64, 64), (65, 63), (1000, 130), (129, 1), (3, 200), (4097, 16)):
        a = scan_values(rng, rows * cols, dtype, op).reshape(rows, cols)
        for algorithm in ("columns", "auto"):
            check(TORCH_CUDA, a, dtype, op, 0, exclusive=(rows + cols) % 2 == 0, algorithm=algorithm,
                  result_dtype=result)
    a = scan_values(rng, 130 * 7 * 19, dtype, op).reshape(130, 7, 19)
    for view, axis in ((a, 0), (a[::-1], 0), (a[:, :, ::2], 0), (a, 1)):
        check(TORCH_CUDA, view, dtype, op, axis, algorithm="columns", result_dtype=result)
        check(TORCH_CUDA, view, dtype, op, axis, exclusive=True, algorithm="columns", result_dtype=result)


@pytest.mark.parametrize("dtype,op", [("float32", "sum"), ("int32", "max"), ("int64", "sum"), ("float16", "sum"),
                                      ("uint32", "prod")])
def test_lagged_around_the_lag(rng, dtype, op):
    """Tile counts around and beyond the lagged scan's lag (LAG tiles; the lag is min(LAG, tiles)), so
    that phase B reads tiles phase A loaded long before; 1-D (inclusive and exclusive) and long rows.
    (16-item tiles of 8-byte and 2-byte items: twice as many tiles.)"""
    need(TORCH_CUDA)
    for n in (LAG * LOOKBACK_TILE - 1, LAG * LOOKBACK_TILE + 1, 2 * LAG * LOOKBACK_TILE + 5):
        check(TORCH_CUDA, scan_values(rng, n, dtype, op), dtype, op, exclusive=n % 2 == 0,
              algorithm="lagged_lookback")
    a = scan_values(rng, 3 * (LAG + 10) * LOOKBACK_TILE, dtype, op).reshape(3, -1)
    check(TORCH_CUDA, a, dtype, op, 1, algorithm="lagged_lookback")
    check(TORCH_CUDA, a, dtype, op, 1, exclusive=True, algorithm="lagged_lookback")


def held_tiling(dtype, result):
    """The held look-back's tile (items) and persistent grid on this GPU where it runs its measured
    blocks an SM (sm_90): 256 x 32 items at 3 blocks an SM for 4-byte accumulators, 256 x 12 at 4 for
    8-byte ones of 4- and 8-byte items, 256 x 16 at 3 for 8-byte ones of 1- and 2-byte items (two
    slots of 32 / 24 / 32 KiB a block). Elsewhere the tile counts below still span one to several
    rounds of tickets."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    if result not in ("int64", "uint64", "float64"):
        return LOOKBACK_TILE, 3 * sms
    itemsize = {"bfloat16": 2}.get(dtype) or np.dtype(dtype).itemsize
    return (256 * 12, 4 * sms) if itemsize >= 4 else (256 * 16, 3 * sms)


@pytest.mark.parametrize("dtype,op,result", [
    ("float32", "sum", None), ("int32", "max", None), ("int64", "sum", None), ("float16", "sum", None),
    ("uint32", "prod", None), ("float64", "sum", None), ("int32", "sum", None),
    # widening scans: full tiles stored from the slot across lanes (held_transposes)
    ("int8", "sum", None), ("bool", "sum", None), ("uint16", "sum", None), ("float16", "sum", "float32"),
    ("bfloat16", "sum", "float64"), ("float32", "sum", "float64")])
def test_held_around_the_grid(rng, dtype, op, result):
    """Tile counts below, at and beyond the held look-back's persistent grid (a block holds two tiles,
    so a round of tickets is 2 x grid), 1-D (inclusive and exclusive) and rows whose first tiles fall
    anywhere in a round."""
    need(TORCH_CUDA)
    tile, g = held_tiling(dtype, result or reduce_result_dtype(op, dtype, None))
    for tiles in (1, 2, g - 1, g, g + 1, 2 * g - 1, 2 * g + 1, 5 * g + 7):
        n = tiles * tile - (3 if tiles % 2 else 0)
        check(TORCH_CUDA, scan_values(rng, n, dtype, op), dtype, op, exclusive=tiles % 3 == 0,
              algorithm="held_lookback", result_dtype=result)
    a = scan_values(rng, 7 * (g // 3 + 5) * tile + 7 * 11, dtype, op).reshape(7, -1)
    check(TORCH_CUDA, a, dtype, op, 1, algorithm="held_lookback", result_dtype=result)
    check(TORCH_CUDA, a, dtype, op, 1, exclusive=True, algorithm="held_lookback", result_dtype=result)


@pytest.mark.parametrize("dtype,op,result", [("bool", "sum", None), ("int8", "sum", None), ("int16", "max", "int64"),
                                             ("bfloat16", "sum", "float32"), ("float16", "sum", "float64")])
def test_widening_row_scans(rng, dtype, op, result):
    """Rows of 1- and 2-byte items into 4- or 8-byte results, long and many enough that "auto" takes
    the held scan on sm_90 (widening_rows_take_held): rows of one tile, of several with a ragged
    end, a strided row start (a column slice), inclusive and exclusive; deterministic=True keeps
    float sums reproducible there."""
    need(TORCH_CUDA)
    for rows, length in ((520, 8192), (400, 3 * 4096 + 5)):
        a = scan_values(rng, rows * length, dtype, op).reshape(rows, length)
        check(TORCH_CUDA, a, dtype, op, 1, result_dtype=result)
        check(TORCH_CUDA, a, dtype, op, 1, exclusive=True, result_dtype=result)
    a = scan_values(rng, 600 * 8200, dtype, op).reshape(600, 8200)
    check(TORCH_CUDA, a[:, 8:], dtype, op, 1, result_dtype=result)
    if dtype == "float16":
        x = torch.from_numpy(a).cuda()
        first = gpuprims.cumsum(x, axis=1, dtype=result, deterministic=True)
        for _ in range(5):
            assert torch.equal(gpuprims.cumsum(x, axis=1, dtype=result, deterministic=True), first)


@pytest.mark.parametrize("algorithm", ("lagged_lookback", "held_lookback"))
def test_in_place_short_rows(rng, algorithm):
    """In place (out = x) with rows of one and two tiles, many rows, so that every block of the
    launch is resident at once; repeated, since the races are ones of timing. lagged_lookback: a
    row's first tile is scanned by phase B while phase A of the same tile (another block, an earlier
    ticket) may still be reading it, so phase B must wait for A's aggregate before it stores.
    held_lookback: a tile's store overwrites only what its own threads read, whichever block holds
    its row's other tile."""
    need(TORCH_CUDA)
    for length in (LOOKBACK_TILE, 2 * LOOKBACK_TILE - 3):
        a = scan_values(rng, 3000 * length, "int32", "sum").reshape(3000, length)
        want = np.cumsum(a, axis=1, dtype=np.int32)
        for _ in range(4):
            y = torch.from_numpy(a).cuda()
            gpuprims.cumsum(y, axis=1, dtype="int32", out=y, algorithm=algorithm)
            np.testing.assert_array_equal(to_numpy(y), want)


@pytest.mark.parametrize("algorithm", ("auto", "held_lookback"))
def test_cupy_and_graph_capture(rng, algorithm):
    """A captured scan replayed twice: the single-pass scans' counter and status words are cleared by
    a memset node of the graph, so each replay starts from "no tile published"."""
    need(TORCH_CUDA)
    a = scan_values(rng, 70001, "int64", "sum")
    x = torch.from_numpy(a).cuda()
    out = torch.empty_like(x)
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        gpuprims.cumsum(x, out=out, algorithm=algorithm)  # warm-up outside capture
        s.synchronize()
        with torch.cuda.graph(g, stream=s):
            gpuprims.cumsum(x, out=out, algorithm=algorithm)
    out.fill_(-1)
    g.replay()
    g.replay()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), np.cumsum(a))


def test_sanitize_scan_variants(rng):
    """Small inputs of every variant, for compute-sanitizer (memcheck, racecheck)."""
    need(TORCH_CUDA)
    for algorithm in VARIANTS:
        for n in (1, 33, TILE + 1, 3 * TILE + 17):
            check(TORCH_CUDA, scan_values(rng, n, "float32", "sum"), "float32", "sum", algorithm=algorithm,
                  exclusive=n % 2 == 1)
            check(TORCH_CUDA, scan_values(rng, n, "int64", "max"), "int64", "max", algorithm=algorithm)
            # 1- and 2-byte items: 16-byte vectors of 16 and 8 items, 32-bit accumulators
            check(TORCH_CUDA, scan_values(rng, n, "int8", "min"), "int8", "min", algorithm=algorithm, exclusive=True)
            check(TORCH_CUDA, scan_values(rng, n, "uint16", "sum"), "uint16", "sum", algorithm=algorithm)
            # widening: int8 into int64, float16 into float32 (the held scan's full tiles stored across lanes)
            check(TORCH_CUDA, scan_values(rng, n, "int8", "sum"), "int8", "sum", algorithm=algorithm,
                  exclusive=n % 2 == 1)
            check(TORCH_CUDA, scan_values(rng, n, "float16", "sum"), "float16", "sum", algorithm=algorithm,
                  result_dtype="float32")
        a = scan_values(rng, 3 * 1500, "float16", "sum").reshape(3, 1500)
        check(TORCH_CUDA, a, "float16", "sum", 1, algorithm=algorithm)
        check(TORCH_CUDA, a, "float16", "sum", 0, algorithm=algorithm)
        # converted into the output first, then scanned in place
        check(TORCH_CUDA, scan_values(rng, TILE + 1, "int32", "sum"), "int32", "sum", algorithm=algorithm,
              result_dtype="float32")
        check(TORCH_CUDA, a[:, ::-3], "float16", "max", 0, algorithm=algorithm, result_dtype="int16")


@pytest.mark.big
@pytest.mark.parametrize("n", (2**31 + 17, 2**32 + 17))
def test_beyond_2_31(n):
    need(TORCH_CUDA)
    free, _ = torch.cuda.mem_get_info()
    if free < n * 13:
        pytest.skip("needs 13 bytes per item of free GPU memory")
    x = torch.ones(n, dtype=torch.int8, device="cuda").to(torch.int32)
    x[n // 2] = 5
    y = gpuprims.cumsum(x)
    assert y.dtype == torch.int64
    assert int(y[-1]) == n + 4 and int(y[n // 2]) == n // 2 + 5 and int(y[n // 2 - 1]) == n // 2
    del y
    z = gpuprims.cumsum(x, dtype="int32")  # wraps at 32 bits exactly like numpy's int32 cumsum
    for i in (n // 2 - 1, n // 2, 2**31 - 2, 2**31 - 1, 2**31, n - 1):
        expected = i + 1 + (4 if i >= n // 2 else 0)
        assert int(z[i]) == int(np.int64(expected).astype(np.int32)), i


@pytest.mark.parametrize("dtype", SCAN_DTYPES + ("bool",))
def test_torch_fast_path_matches_general_path(rng, dtype, monkeypatch):
    """Calls on CUDA tensors with dtype= and stream= at their defaults run in C++ (_C.scan_torch)
    without the Python array layer; they must give what the general path gives: values, dtype,
    shape, device, a fresh tensor (or out=, written)."""
    need(TORCH_CUDA)
    from gpuprims import _interop

    for op in OPS:
        base = TORCH_CUDA.make(scan_values(rng, 5 * 37 * 67 + 1, dtype, op), dtype)[1:].view(5, 37, 67)
        cases = [(x, axis) for x in (base, base.transpose(0, 2)[:, ::2]) for axis in (-1, 0, 1)]
        cases += [(base[2, 3], None), (base[2, 3].flip(0), None)]  # axis=None on 1-D views
        for exclusive in (False, True):
            for x, axis in cases:
                what = f"{op} {tuple(x.shape)} {x.stride()} axis={axis} exclusive={exclusive}"
                general = gpuprims.scan(x, op, axis, exclusive=exclusive, stream=torch.cuda.current_stream())
                with monkeypatch.context() as m:
                    m.setattr(_interop, "prepare_input", lambda *a, **k: pytest.fail("fast path not taken"))
                    m.setattr(_interop, "prepare_flat_input", lambda *a, **k: pytest.fail("fast path not taken"))
                    fast = gpuprims.scan(x, op, axis, exclusive=exclusive)
                    again = gpuprims.scan(x, op, axis, exclusive=exclusive)
                    out = torch.full_like(general, 3)  # poisoned
                    into = gpuprims.scan(x, op, axis, exclusive=exclusive, out=out)
                assert type(fast) is torch.Tensor and fast.device == x.device, what
                assert fast.shape == general.shape and fast.dtype == general.dtype, what
                assert fast.is_contiguous() and fast.data_ptr() != again.data_ptr() and into is out, what
                np.testing.assert_array_equal(to_numpy(fast), to_numpy(general), err_msg=what)
                np.testing.assert_array_equal(to_numpy(out), to_numpy(general), err_msg=what)


def test_torch_fast_path_declines_to_the_general_path():
    """What the C++ fast path does not take reaches the general path and its typed errors."""
    need(TORCH_CUDA)
    x = torch.randn(4, 5, device="cuda")
    np.testing.assert_allclose(to_numpy(gpuprims.cumsum(x)), np.cumsum(to_numpy(x)), rtol=1e-6, atol=1e-6)  # n-d, None
    assert gpuprims.cumsum(torch.zeros(0, device="cuda")).shape == (0,)
    with pytest.raises(ValueError, match=r"scan: argument 'axis': expected an int in \[-2, 2\)"):
        gpuprims.cumsum(x, axis=2)
    with pytest.raises(ValueError, match="expected at least one dimension"):
        gpuprims.cumsum(torch.ones((), device="cuda"), axis=0)
    with pytest.raises(TypeError, match="argument 'out': expected dtype float32, got float64"):
        gpuprims.cumsum(x, axis=1, out=torch.empty(4, 5, dtype=torch.float64, device="cuda"))
    with pytest.raises(ValueError, match="argument 'out'"):
        gpuprims.cumsum(x, axis=1, out=torch.empty(5, 4, device="cuda"))
    with pytest.raises(ValueError, match="same device"):
        gpuprims.cumsum(x, axis=1, out=torch.empty(4, 5))
    with pytest.raises(TypeError, match="does not require grad"):
        gpuprims.cumsum(x, axis=1, out=torch.empty(4, 5, device="cuda", requires_grad=True))
    y = x.clone()
    assert gpuprims.cumsum(y, axis=1, out=y) is y  # in place, through the fast path
    np.testing.assert_allclose(to_numpy(y), np.cumsum(to_numpy(x), axis=1), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(to_numpy(gpuprims.cumsum(x, axis=np.int64(1))), to_numpy(gpuprims.cumsum(x, axis=1)))
