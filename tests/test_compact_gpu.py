"""compact / nonzero / segmented_reduce on the GPU: masks of every density, sizes across tiles and
beyond 2^32 bits of output, out= without synchronization, irregular segments."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import ALL_DTYPES, Framework, framework_params, to_numpy, torch
from scan_reference import identity, nonzero_values

import gpuprims

pytestmark = pytest.mark.gpu
TORCH_CUDA = Framework("torch", "cuda")
# Tiles hold 4096 items for 8-byte outputs (int64 values, nonzero's indices), 8192 for the rest.
SIZES = (1, 15, 16, 17, 31, 33, 4095, 4096, 4097, 8191, 8192, 8193, 3 * 4096 + 5, 3 * 8192 + 5, 2**20 + 3)


def need(fw):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed with GPU support")


def masks(rng, n):
    return {"none": np.zeros(n, bool), "all": np.ones(n, bool), "random": rng.random(n) < 0.5,
            "alternating": np.arange(n) % 2 == 0, "sparse": rng.random(n) < 0.001}


@pytest.mark.parametrize("dtype", ("uint8", "float16", "float32", "int64"))
def test_compact_masks(rng, dtype):
    need(TORCH_CUDA)
    for n in SIZES:
        x = (rng.standard_normal(n) * 100).astype(np.float32).astype(dtype)
        xt = torch.from_numpy(x).cuda()
        for name, m in masks(rng, n).items():
            mt = torch.from_numpy(m).cuda()
            np.testing.assert_array_equal(to_numpy(gpuprims.compact(xt, mt)), x[m], err_msg=f"{name} n={n}")
            np.testing.assert_array_equal(to_numpy(gpuprims.nonzero(mt)), np.flatnonzero(m), err_msg=f"{name} n={n}")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_nonzero_of_any_dtype(rng, dtype):
    """nonzero() of masks of every dtype (-0.0 is zero; NaN, +-inf, subnormals and integers whose only
    set bit is the top one are not) across tiles, with the 16-byte loads of each width, misaligned by
    one element, strided; with out= too (no count read first)."""
    need(TORCH_CUDA)
    for n in (1, 7, 4095, 4097, 3 * 4096 + 5, 2**20 + 3):
        a = nonzero_values(rng, n + 1, dtype)
        t = TORCH_CUDA.make(a, dtype)
        for view, host in ((t[:n], a[:n]), (t[1:], a[1:]), (t[::2], a[::2])):
            want = np.flatnonzero(host)
            np.testing.assert_array_equal(to_numpy(gpuprims.nonzero(view)), want, err_msg=f"n={n}")
            out = torch.full((len(host),), -7, dtype=torch.int64, device="cuda")
            _, count = gpuprims.nonzero(view, out=out)
            assert int(count) == len(want), n
            np.testing.assert_array_equal(to_numpy(out[:len(want)]), want, err_msg=f"out= n={n}")


def test_compact_out_no_sync_and_strides(rng):
    need(TORCH_CUDA)
    n = 300001
    base = torch.randn(2 * n, device="cuda")
    x = base[::2]
    m = torch.rand(2 * n, device="cuda")[1::2] < 0.3
    out = torch.full((n,), float("nan"), device="cuda")
    got, count = gpuprims.compact(x, m, out=out)
    assert got is out and count.is_cuda and count.dtype == torch.int64
    k = int(count)
    ref = x[m]
    assert k == ref.numel()
    assert torch.equal(out[:k], ref)
    short = torch.zeros(10, device="cuda")
    _, count = gpuprims.compact(x, m, out=short)
    assert int(count) == k and torch.equal(short, ref[:10])


@pytest.mark.parametrize("fw", framework_params("cuda"))
def test_compact_frameworks(fw, rng):
    need(fw)
    x = rng.standard_normal(10000).astype(np.float32)
    m = rng.random(10000) < 0.4
    got = gpuprims.compact(fw.make(x), fw.make(m))
    assert fw.is_native(got)
    np.testing.assert_array_equal(to_numpy(got), x[m])
    values = nonzero_values(rng, 10000, "float32")
    got = gpuprims.nonzero(fw.make(values))
    assert fw.is_native(got)
    np.testing.assert_array_equal(to_numpy(got), np.flatnonzero(values))


@pytest.mark.parametrize("op", ("sum", "prod", "min", "max"))
@pytest.mark.parametrize("dtype", ("int32", "int64", "float16", "bfloat16", "float32", "float64"))
def test_segmented_reduce(rng, op, dtype):
    need(TORCH_CUDA)
    lengths = np.concatenate([[0, 1, 0, 5000, 3], rng.integers(0, 40, 2000), [70000, 0, 1]])
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    n = int(offsets[-1])
    if op == "prod":
        x = rng.uniform(0.999, 1.001, n) if dtype.startswith(("float", "bfloat")) else rng.choice([1, -1], n)
    else:
        x = rng.standard_normal(n) * 100
    tdt = getattr(torch, dtype)
    xt = torch.from_numpy(x).to(tdt).cuda()
    x64 = xt.double().cpu().numpy()
    got = gpuprims.segmented_reduce(xt, torch.from_numpy(offsets).cuda(), op)
    g = got.double().cpu().numpy()
    ufunc = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}[op]
    for s, (b, e) in enumerate(zip(offsets[:-1], offsets[1:])):
        if b == e:
            continue
        ref = ufunc.reduce(x64[b:e])
        if dtype.startswith(("float", "bfloat")) and op in ("sum", "prod"):
            eps = {"float16": 2**-11, "bfloat16": 2**-8, "float32": 2**-24, "float64": 2**-53}[dtype]
            acc_eps = 2**-53 if dtype == "float64" else 2**-24
            # sums: a tree of depth ~log n over sum|x|; products: k roundings, ~sqrt(k) in practice
            acc = 64 * acc_eps * np.abs(x64[b:e]).sum() if op == "sum" else 8 * np.sqrt(e - b) * acc_eps * abs(ref)
            assert abs(g[s] - ref) <= 2 * eps * abs(ref) + acc + 1e-30, (s, g[s], ref)
        else:
            assert g[s] == ref, (s, g[s], ref)
    empties = np.flatnonzero(lengths == 0)
    identity = {"sum": 0.0, "prod": 1.0}.get(op)
    if identity is not None:
        assert np.all(g[empties] == identity)


def test_segmented_reduce_int32_offsets_and_strides(rng):
    need(TORCH_CUDA)
    x = torch.randn(200000, device="cuda")[::2]
    offsets = torch.tensor([0, 10, 10, 50000, 100000], dtype=torch.int32, device="cuda")
    got = gpuprims.segmented_reduce(x, offsets, "max")
    ref = torch.stack([x[0:10].max(), torch.tensor(-float("inf"), device="cuda"), x[10:50000].max(), x[50000:].max()])
    assert torch.equal(got, ref)


# The range kernels give each warp 4096 work units (items + segment ends); a segment longer than
# that is cut at tile boundaries and its pieces folded in tile order by a second kernel (by one
# thread up to 16 tiles, by a block beyond). These lengths cross every one of those paths.
def irregular_lengths(rng, case):
    if case == "huge_then_tiny":
        return np.array([2**22 - 1000] + [1] * 1000)
    if case == "tiny_then_huge":
        return np.array([1] * 1000 + [2**22 - 1000])
    if case == "power_law":
        w = np.arange(1, 2**14 + 1, dtype=np.float64) ** -1.5
        lengths = (w / w.sum() * 2**22).astype(np.int64)
        return rng.permutation(lengths)
    if case == "around_tile":
        return np.array([4095, 4096, 4097, 4098, 8191, 8192, 8193, 16 * 4096 + 1, 17 * 4096 - 3, 1, 0, 0, 20000, 3])
    # runs of empty segments around long ones, and trailing empty segments at len(x)
    return np.array([0] * 5000 + [3000] + [0] * 5000 + [70000] + [0] * 9000 + [5] * 100 + [0] * 3000)


def check_float32_sums(got, x, offsets):
    """Segment sums of float32 x against float64 prefix sums, within float32 summation's bound."""
    prefix = np.concatenate([[0.0], np.cumsum(x.astype(np.float64))])
    prefix_abs = np.concatenate([[0.0], np.cumsum(np.abs(x.astype(np.float64)))])
    ref = prefix[offsets[1:]] - prefix[offsets[:-1]]
    tol = 64 * 2.0**-24 * (prefix_abs[offsets[1:]] - prefix_abs[offsets[:-1]]) + 1e-30
    bad = np.flatnonzero(~(np.abs(got - ref) <= tol))
    assert bad.size == 0, (bad[:5], got[bad[:5]], ref[bad[:5]])


@pytest.mark.parametrize("offsets_dtype", ("int32", "int64"))
@pytest.mark.parametrize("case", ("huge_then_tiny", "tiny_then_huge", "power_law", "around_tile", "empty_runs"))
def test_segmented_reduce_irregular_lengths(rng, case, offsets_dtype):
    need(TORCH_CUDA)
    lengths = irregular_lengths(rng, case)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    n = int(offsets[-1])
    off = torch.from_numpy(offsets.astype(offsets_dtype)).cuda()
    x = rng.standard_normal(n).astype(np.float32)
    got = gpuprims.segmented_reduce(torch.from_numpy(x).cuda(), off).cpu().numpy().astype(np.float64)
    check_float32_sums(got, x, offsets)
    xi = rng.integers(-(2**40), 2**40, n)
    got_i = gpuprims.segmented_reduce(torch.from_numpy(xi).cuda(), off).cpu().numpy()
    prefix_i = np.concatenate([[0], np.cumsum(xi)])
    np.testing.assert_array_equal(got_i, prefix_i[offsets[1:]] - prefix_i[offsets[:-1]])


@pytest.mark.parametrize("algorithm", ("auto", "blocks", "ranges"))
@pytest.mark.parametrize("op", ("sum", "prod", "min", "max"))
@pytest.mark.parametrize("dtype", ("bool", "int8", "uint16", "int32", "int64", "float16", "bfloat16", "float64"))
def test_segmented_reduce_irregular_dtypes(rng, op, dtype, algorithm):
    need(TORCH_CUDA)
    lengths = irregular_lengths(rng, "around_tile")
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    n = int(offsets[-1])
    if op == "prod":
        x = rng.uniform(0.9999, 1.0001, n) if dtype.startswith(("float", "bfloat")) else rng.choice([1, -1], n)
    else:
        x = rng.standard_normal(n) * 100
    if dtype in ("int8", "uint16"):  # clipped to the dtype's range (out-of-range float casts are undefined)
        info = np.iinfo(dtype)
        xt = torch.from_numpy(np.clip(np.rint(x), info.min, info.max).astype(dtype)).cuda()
    else:
        xt = torch.from_numpy(x).to(getattr(torch, dtype)).cuda()
    x64 = to_numpy(xt).astype(np.float64)
    got = to_numpy(gpuprims.segmented_reduce(xt, torch.from_numpy(offsets).cuda(), op, algorithm=algorithm))
    got = got.astype(np.float64)
    ufunc = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}[op]
    for s, (b, e) in enumerate(zip(offsets[:-1], offsets[1:])):
        if b == e:
            assert got[s] == identity(op, dtype), (s, got[s])
            continue
        ref = ufunc.reduce(x64[b:e])
        if dtype.startswith(("float", "bfloat")) and op in ("sum", "prod"):
            eps = {"float16": 2**-11, "bfloat16": 2**-8, "float64": 2**-53}[dtype]
            acc_eps = 2**-53 if dtype == "float64" else 2**-24
            acc = 64 * acc_eps * np.abs(x64[b:e]).sum() if op == "sum" else 8 * np.sqrt(e - b) * acc_eps * abs(ref)
            assert abs(got[s] - ref) <= 2 * eps * abs(ref) + acc + 1e-30, (s, got[s], ref)
        else:
            assert got[s] == ref, (s, got[s], ref)


@pytest.mark.parametrize("fw_name", ("torch", "cupy"))
def test_copied_views_on_an_explicit_stream(rng, fw_name):
    """compact, nonzero and scan(axis=None) of views whose C-order reshape copies, launched on a
    stream other than the producer's current one: the copies stay valid for the launch (their
    memory handed out again right after the call and overwritten on the current stream)."""
    fw = Framework(fw_name, "cuda")
    need(fw)
    a = rng.standard_normal((512, 384)).astype(np.float32)
    m = rng.random((512, 384)) < 0.5
    x, mask = fw.make(a).T, fw.make(m).T
    if fw_name == "torch":
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        sync = torch.cuda.synchronize
        clobber = lambda: torch.full((512 * 384,), 7.0, device="cuda")  # noqa: E731
    else:
        import cupy
        stream = cupy.cuda.Stream(non_blocking=True)
        stream.wait_event(cupy.cuda.get_current_stream().record())
        sync = cupy.cuda.runtime.deviceSynchronize
        clobber = lambda: cupy.full((512 * 384,), 7.0, dtype=cupy.float32)  # noqa: E731
    for _ in range(5):
        got_c = gpuprims.compact(x, mask, stream=stream)
        got_n = gpuprims.nonzero(mask, stream=stream)
        got_s = gpuprims.scan(x, axis=None, stream=stream)
        junk = [clobber() for _ in range(4)]  # noqa: F841
        sync()
        np.testing.assert_array_equal(to_numpy(got_c), a.T[m.T])
        np.testing.assert_array_equal(to_numpy(got_n), np.flatnonzero(m.T))
        np.testing.assert_allclose(to_numpy(got_s), np.cumsum(a.T.astype(np.float64)), rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("algorithm", ("auto", "ranges", "blocks"))
def test_segmented_reduce_all_empty(algorithm):
    need(TORCH_CUDA)
    x = torch.randn(10000, device="cuda")
    for where in (0, 5000, 10000):
        off = torch.full((100001,), where, dtype=torch.int64, device="cuda")
        assert torch.equal(gpuprims.segmented_reduce(x, off, algorithm=algorithm), torch.zeros(100000, device="cuda"))
        got = gpuprims.segmented_reduce(x, off.int(), "max", algorithm=algorithm)
        assert torch.equal(got, torch.full((100000,), -float("inf"), device="cuda"))
    no_items = torch.zeros(0, device="cuda")
    got = gpuprims.segmented_reduce(no_items, torch.zeros(7, dtype=torch.int64, device="cuda"), "min",
                                    algorithm=algorithm)
    assert torch.equal(got, torch.full((6,), float("inf"), device="cuda"))


@pytest.mark.parametrize("algorithm", ("ranges", "blocks"))
@pytest.mark.parametrize("case", ("power_law", "huge_then_tiny"))
def test_segmented_reduce_deterministic(rng, case, algorithm):
    """Bitwise equal run to run; the single-pass reductions in between share the stream's counters
    with the block path's list (each kernel returns them to zero)."""
    need(TORCH_CUDA)
    offsets = torch.from_numpy(np.concatenate([[0], np.cumsum(irregular_lengths(rng, case))])).cuda()
    x = torch.randn(int(offsets[-1]), device="cuda")
    first = gpuprims.segmented_reduce(x, offsets, algorithm=algorithm)
    rows = torch.randn(4, 2**20, device="cuda")
    rows_want, rows_tol = rows.double().sum(1), 64 * 2.0**-24 * rows.double().abs().sum(1)
    for _ in range(5):
        assert torch.equal(gpuprims.segmented_reduce(x, offsets, algorithm=algorithm), first)
        rows_got = gpuprims.reduce(rows, axis=1, algorithm="vectorized")  # a ticket per row
        assert ((rows_got.double() - rows_want).abs() <= rows_tol).all()


@pytest.mark.parametrize("algorithm", ("ranges", "blocks"))
def test_segmented_reduce_graph_and_side_stream(rng, algorithm):
    """Each path's two kernels (the second launched with programmatic stream serialization on
    sm_90+; the block path's list counters, under capture, zeroed by a memset node) captured in a
    CUDA graph and replayed, and issued on a side stream right behind the kernel that writes x:
    results equal the eager call's, bit for bit."""
    need(TORCH_CUDA)
    lengths = irregular_lengths(rng, "huge_then_tiny")
    offsets = torch.from_numpy(np.concatenate([[0], np.cumsum(lengths)])).cuda()
    x = torch.randn(int(offsets[-1]), device="cuda")
    want = gpuprims.segmented_reduce(x, offsets, algorithm=algorithm)
    out = torch.full_like(want, float("nan"))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=side):
            gpuprims.segmented_reduce(x, offsets, out=out, algorithm=algorithm)
    for _ in range(3):
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, want)
    y = torch.empty_like(x)
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)  # the producer of y is still running when the reduction is issued
        y.copy_(x)
        got = gpuprims.segmented_reduce(y, offsets, algorithm=algorithm)
    torch.cuda.synchronize()
    assert torch.equal(got, want)



# The block path (algorithm="blocks"; auto's choice for segments of 12 KiB and more on average)
# lists segments over 16 of its rounds (128 threads x 8 16-byte vectors a round: 256 KiB) for a
# second kernel that cuts them into chunks. These lengths sit on both sides of that bound, start
# at every 16-byte alignment, and include a segment of 41 chunks.
def block_path_lengths(itemsize):
    long = 262144 // itemsize
    return np.array([0, 1, 7, 3, long - 1, long, long + 1, 0, 2, 12345, 3 * long + 5, 1, 40 * long + 3, 5, 0])


def reference_values(rng, op, dtype, n):
    """x on the GPU for op and dtype (products stay finite), and its values as float64 / exact ints."""
    if dtype == "bool":
        xt = torch.from_numpy(rng.random(n) < (0.9999 if op == "prod" else 0.5)).cuda()
    elif dtype.startswith(("float", "bfloat")):
        v = rng.uniform(0.9999, 1.0001, n) if op == "prod" else rng.standard_normal(n)
        xt = torch.from_numpy(v).to(getattr(torch, dtype)).cuda()
    else:
        if op == "prod":  # unsigned products wrap like numpy's uint64 product
            v = rng.choice([1, 1, 1, 3], n) if dtype.startswith("uint") else rng.choice([1, -1], n)
        else:
            v = rng.integers(0, 2**31, n) if dtype.startswith("uint") else rng.integers(-(10**6), 10**6, n)
        xt = torch.from_numpy(v.astype(dtype)).cuda()
    host = xt.cpu()
    exact = host.numpy() if dtype.startswith(("int", "uint", "bool")) else host.double().numpy()
    return xt, exact


def check_segments(got, exact, offsets, op, dtype):
    ufunc = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}[op]
    g = got.cpu()
    g = g.numpy() if g.dtype not in (torch.float16, torch.bfloat16) else g.double().numpy()
    for s, (b, e) in enumerate(zip(offsets[:-1], offsets[1:])):
        if b == e:
            continue
        if dtype.startswith(("float", "bfloat")) and op in ("sum", "prod"):
            ref = ufunc.reduce(exact[b:e])
            eps = {"float16": 2**-11, "bfloat16": 2**-8, "float32": 2**-24, "float64": 2**-53}[dtype]
            acc_eps = 2**-53 if dtype == "float64" else 2**-24
            # sums: a tree of depth ~log n over sum|x|. Products of values near 1: (k - 1) roundings,
            # biased (the spacing of floats doubles at 1), so the bound is linear in k, not sqrt(k).
            acc = 64 * acc_eps * np.abs(exact[b:e]).sum() if op == "sum" else (e - b) * acc_eps * abs(ref)
            assert abs(g[s] - ref) <= 2 * eps * abs(ref) + acc + 1e-30, (s, g[s], ref)
        else:
            wide = exact[b:e].astype(g.dtype) if op in ("sum", "prod") else exact[b:e]
            assert g[s] == ufunc.reduce(wide), (s, g[s], ufunc.reduce(wide))


@pytest.mark.parametrize("algorithm", ("ranges", "blocks"))
@pytest.mark.parametrize("op", ("sum", "prod", "min", "max"))
@pytest.mark.parametrize("dtype", ("bool", "int32", "int64", "uint32", "uint64", "float16", "bfloat16", "float32",
                                   "float64"))
def test_segmented_reduce_paths(rng, algorithm, op, dtype):
    need(TORCH_CUDA)
    itemsize = torch.empty(0, dtype=getattr(torch, dtype)).element_size()
    offsets = np.concatenate([[0], np.cumsum(block_path_lengths(itemsize))])
    xt, exact = reference_values(rng, op, dtype, int(offsets[-1]))
    for off in (offsets.astype(np.int64), offsets.astype(np.int32)):
        got = gpuprims.segmented_reduce(xt, torch.from_numpy(off).cuda(), op, algorithm=algorithm)
        check_segments(got, exact, off, op, dtype)
    shifted = torch.empty(xt.numel() + 1, dtype=xt.dtype, device="cuda")[1:]  # one element into memory
    shifted.copy_(xt)
    got = gpuprims.segmented_reduce(shifted, torch.from_numpy(offsets).cuda(), op, algorithm=algorithm)
    check_segments(got, exact, offsets, op, dtype)


@pytest.mark.parametrize("algorithm", ("ranges", "blocks"))
@pytest.mark.parametrize("view", ("offset_1", "offset_3", "strided"))
def test_segmented_reduce_views(rng, view, algorithm):
    """Views of x: at an element offset (no 16-byte alignment: the block path starts each segment's
    vectors at its first 16-byte boundary, the range kernels read item by item) and strided (the
    block path hands those to the range kernels: bitwise the same result)."""
    need(TORCH_CUDA)
    offsets = np.concatenate([[0], np.cumsum(block_path_lengths(4))])
    n = int(offsets[-1])
    base = torch.randn(2 * n + 4, device="cuda")
    x = base[: 2 * n : 2] if view == "strided" else base[int(view[-1]):int(view[-1]) + n]
    off = torch.from_numpy(offsets).cuda()
    got = gpuprims.segmented_reduce(x, off, algorithm=algorithm)
    check_segments(got, x.double().cpu().numpy(), offsets, "sum", "float32")
    for op in ("min", "max"):
        check_segments(gpuprims.segmented_reduce(x, off, op, algorithm=algorithm), x.double().cpu().numpy(),
                       offsets, op, "float32")
    if view == "strided":
        assert torch.equal(got, gpuprims.segmented_reduce(x, off, algorithm="ranges"))


def test_arguments_on_two_devices_name_both():
    need(TORCH_CUDA)
    x, mask = np.arange(10.0), np.arange(10) % 3 == 0
    with pytest.raises(ValueError, match="compact: arguments 'x' and 'mask' must be on the same device, got x on "
                                         "cpu and mask on cuda:0"):
        gpuprims.compact(x, torch.from_numpy(mask).cuda())
    with pytest.raises(ValueError, match="must be on the same device, got x on cuda:0 and offsets on cpu"):
        gpuprims.segmented_reduce(torch.from_numpy(x).cuda(), np.array([0, 4, 10]))


def test_segmented_reduce_blocks_long_lists(rng):
    """A hundred listed segments (chunk marks across many slots), short ones between them, and a
    segment long enough for chunks larger than the minimum (1024 chunks of 17 rounds)."""
    need(TORCH_CUDA)
    long = 65536  # float32 items in 16 rounds
    lengths = np.stack([rng.integers(long + 1, 3 * long, 100), rng.integers(0, 5000, 100)], axis=1).ravel()
    lengths = np.concatenate([lengths[:100], [1024 * long + 12345], lengths[100:]])
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    x = rng.standard_normal(int(offsets[-1])).astype(np.float32)
    off = torch.from_numpy(offsets).cuda()
    got = gpuprims.segmented_reduce(torch.from_numpy(x).cuda(), off, algorithm="blocks").cpu().numpy()
    check_float32_sums(got, x, offsets)


def test_segmented_reduce_blocks_tail(rng):
    """The long kernel reduces the last segments itself (a wave of its blocks, read while the blocks
    kernel's last wave runs), and the blocks kernel's first blocks list the long ones among them.
    Thousands of segments (a full tail on any GPU), long ones on both sides of the tail's start
    wherever it falls, and the last segment long; bitwise the same on a second call."""
    need(TORCH_CUDA)
    count = 6000
    lengths = rng.integers(0, 8000, count)
    for k in list(range(1, 3000, 97)) + [1]:
        lengths[count - k] = rng.integers(65537, 200000)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    x = rng.standard_normal(int(offsets[-1])).astype(np.float32)
    xt, off = torch.from_numpy(x).cuda(), torch.from_numpy(offsets).cuda()
    first = gpuprims.segmented_reduce(xt, off)  # auto: the block path (segments average over 12 KiB)
    check_float32_sums(first.cpu().numpy(), x, offsets)
    assert torch.equal(first, gpuprims.segmented_reduce(xt, off, algorithm="blocks"))


def test_sanitize_segmented_reduce_blocks_bad_offsets(rng):
    """Offsets that are not nondecreasing (unchecked on the GPU) overfill the block path's list:
    every access stays in bounds (compute-sanitizer runs this test), and the stream's counters
    come back to zero, so the next call is right."""
    need(TORCH_CUDA)
    n = 2**20
    x = torch.randn(n, device="cuda")
    bad = torch.tensor([0, n] * 200, dtype=torch.int64, device="cuda")  # 200 segments of all of x
    got = gpuprims.segmented_reduce(x, bad, algorithm="blocks")
    assert got.shape == (399,) and bool(torch.isfinite(got).all())
    offsets = np.concatenate([[0], np.cumsum([100000, 3, 2**19, 0, 50000])])
    off = torch.from_numpy(offsets).cuda()
    for _ in range(2):
        got = gpuprims.segmented_reduce(x[: int(offsets[-1])], off, algorithm="blocks")
        check_segments(got, x.double().cpu().numpy(), offsets, "sum", "float32")


@pytest.mark.big
@pytest.mark.parametrize("algorithm", ("ranges", "blocks"))
def test_segmented_reduce_beyond_2_31(algorithm):
    need(TORCH_CUDA)
    n = 2**31 + 40
    free, _ = torch.cuda.mem_get_info()
    if free < 2 * n:
        pytest.skip("needs 2 bytes per item of free GPU memory")
    x = torch.randint(0, 2, (n,), dtype=torch.uint8, device="cuda").bool()
    offsets = torch.tensor([0, 5, 2**31 + 5, 2**31 + 40], dtype=torch.int64, device="cuda")
    got = gpuprims.segmented_reduce(x, offsets, algorithm=algorithm)
    want = torch.stack([x[int(b):int(e)].sum() for b, e in zip(offsets[:-1], offsets[1:])])
    assert torch.equal(got, want)


@pytest.mark.parametrize("op", ("min", "max"))
def test_segmented_reduce_nan(rng, op):
    need(TORCH_CUDA)
    lengths = np.array([100000, 7, 5000, 3, 0, 20000])
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    x = torch.randn(int(offsets[-1]), device="cuda")
    x[70000] = float("nan")  # in a long segment, many tiles after its first
    x[offsets[1] + 2] = float("nan")  # in a 7-item segment (one lane reads it)
    x[offsets[3]] = float("nan")  # the first item of a 3-item segment
    got = gpuprims.segmented_reduce(x, torch.from_numpy(offsets).cuda(), op).cpu()
    f = torch.amin if op == "min" else torch.amax
    for s, (b, e) in enumerate(zip(offsets[:-1], offsets[1:])):
        if b == e:
            assert got[s] == (float("inf") if op == "min" else -float("inf"))
        elif s in (0, 1, 3):
            assert torch.isnan(got[s]), s
        else:
            assert got[s] == f(x[b:e]).cpu(), s


def test_sanitize_compact(rng):
    need(TORCH_CUDA)
    for n in (1, 4097, 3 * 4096 + 5, 8193, 3 * 8192 + 5):
        x = torch.randn(n, device="cuda")
        m = torch.rand(n, device="cuda") < 0.5
        assert torch.equal(gpuprims.compact(x, m), x[m])
        assert torch.equal(gpuprims.nonzero(m), torch.nonzero(m).flatten())
        for dtype in (torch.uint8, torch.float16, torch.float32, torch.float64):  # each width of mask_set
            values = (x * m).to(dtype)
            assert torch.equal(gpuprims.nonzero(values), torch.nonzero(values).flatten())
    offsets = torch.tensor([0, 3, 3, 3000, 5000], device="cuda")
    x = torch.randn(5000, device="cuda")
    got = gpuprims.segmented_reduce(x, offsets).double()
    # Against float64 sums, within float32 summation's bound (a float32 torch sum in another order
    # differed by 1.1e-5 on one seed: over torch's default atol)
    bounds = [(0, 3), (3, 3), (3, 3000), (3000, 5000)]
    want = torch.stack([x[b:e].double().sum() for b, e in bounds])
    tol = torch.stack([x[b:e].double().abs().sum() for b, e in bounds]) * 2.0**-24 * 16
    assert ((got - want).abs() <= tol).all(), (got - want, tol)


@pytest.mark.big
def test_compact_beyond_2_32():
    need(TORCH_CUDA)
    n = 2**32 + 17
    free, _ = torch.cuda.mem_get_info()
    if free < n * 3:
        pytest.skip("needs 3 bytes per item of free GPU memory")
    m = torch.zeros(n, dtype=torch.bool, device="cuda")
    m[::2**20] = True
    m[-1] = True
    idx = gpuprims.nonzero(m)
    expected = torch.arange(0, n, 2**20, device="cuda")
    assert torch.equal(idx[:-1], expected) and int(idx[-1]) == n - 1


def test_cuda_core_views_are_flattened_without_reshape(rng):
    """cuda.core's StridedMemoryView has no reshape(): scan(axis=None), compact and nonzero take 0-d
    and n-d views that form one strided run in C order as they are, and name the others."""
    fw = Framework("cuda.core", "cuda")
    if not fw.available():
        pytest.skip("cuda.core is not installed with GPU support")
    import cupy
    from cuda.core.utils import StridedMemoryView

    def view(a):
        return getattr(StridedMemoryView, "from_dlpack", StridedMemoryView)(a, stream_ptr=-1)

    a = rng.integers(-100, 100, (3, 5, 7)).astype(np.int32)
    np.testing.assert_array_equal(to_numpy(gpuprims.cumsum(fw.make(a))), np.cumsum(a))
    np.testing.assert_array_equal(to_numpy(gpuprims.cumsum(fw.make(np.array(7, np.int32)))), [7])
    backing = cupy.asarray(rng.standard_normal(2 * 3 * 4 * 2).astype(np.float32))
    strided = backing[::2].reshape(2, 3, 4)  # one run of stride 2
    got = gpuprims.scan(view(strided), "max")
    np.testing.assert_array_equal(to_numpy(got), np.maximum.accumulate(cupy.asnumpy(strided).reshape(-1)))
    m = rng.random(a.shape) < 0.5
    np.testing.assert_array_equal(to_numpy(gpuprims.compact(fw.make(a), fw.make(m))), a[m])
    np.testing.assert_array_equal(to_numpy(gpuprims.nonzero(fw.make(m))), np.flatnonzero(m))
    transposed = view(cupy.asarray(a).transpose(2, 0, 1))
    with pytest.raises(TypeError, match="not one strided run in C order"):
        gpuprims.cumsum(transposed)
    with pytest.raises(TypeError, match="not one strided run in C order"):
        gpuprims.nonzero(view(cupy.asarray(m).T))
