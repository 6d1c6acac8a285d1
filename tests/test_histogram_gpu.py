"""histogram / bincount on the GPU: every variant and dtype against numpy and the CPU reference
(itself checked against numpy bit for bit in test_histogram.py), edges, skew, layouts, weights,
frameworks, streams, graphs, sizes beyond 2^32."""
from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import Framework, cupy, framework_params, to_numpy, torch
from test_histogram import VARIANTS, edge_samples, random_samples

import gpuprims

pytestmark = pytest.mark.gpu
TORCH_CUDA = Framework("torch", "cuda")
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64")
SIZES = (0, 1, 15, 16, 17, 33, 4097, 2**20 + 7)
ALGORITHMS = ("auto",) + VARIANTS


def need(fw):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed with GPU support")


def cuda(a: np.ndarray, dtype: str):
    need(TORCH_CUDA)
    return TORCH_CUDA.make(a, dtype)


def samples(rng, n, dtype):
    """numpy data for `dtype` (bfloat16 as float32 values, rounded when the tensor is made)."""
    return random_samples(rng, n, "float32" if dtype == "bfloat16" else dtype)


def check(x, bins, range_=None, weights=None, algorithm="auto"):
    """GPU result (written into a poisoned out=) == CPU reference on the same data; returns it."""
    wdtype = None if weights is None else weights.dtype
    out_dtype = torch.int64 if weights is None else wdtype
    out = torch.full((bins,), 7 if out_dtype in (torch.uint8, torch.bool) else -7, dtype=out_dtype, device="cuda")
    got = gpuprims.histogram(x, bins, range_, weights=weights, algorithm=algorithm, out=out)
    assert got is out
    expected = gpuprims.histogram(x.cpu(), bins, range_, weights=None if weights is None else weights.cpu())
    if weights is None or not wdtype.is_floating_point:  # integer weights sum exactly in float64
        assert torch.equal(out.cpu(), expected), (algorithm, bins, range_)
    else:
        rtol = {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7, torch.float32: 1e-5}.get(wdtype, 1e-12)
        torch.testing.assert_close(out.cpu().double(), expected.double(), rtol=rtol, atol=1e-5)
    return out


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_variant_dtype_sizes(rng, algorithm, dtype):
    for i, n in enumerate(SIZES):
        a = samples(rng, n, dtype)
        x = cuda(a, dtype)
        # bfloat16 holds 8 significant bits: more bins over (-5, 40) would collapse edges (ValueError)
        bins = ((1, 7, 16, 64) if dtype == "bfloat16" else (1, 7, 256, 1000))[i % 4]
        got = check(x, bins, (-5, 40) if dtype != "bool" else (0, 2), algorithm=algorithm)
        direct = dtype not in ("bfloat16", "bool") and n <= 4097  # numpy itself too (time budget)
        if direct:
            np.testing.assert_array_equal(got.cpu().numpy(), np.histogram(a, bins, (-5, 40))[0])
        if n:
            bins = min(bins, {"float16": 256, "bfloat16": 16}.get(dtype, bins))  # edges in E stay distinct
            got = check(x, bins, None, algorithm=algorithm)  # numpy's data range (two reductions, one sync)
            if direct:
                np.testing.assert_array_equal(got.cpu().numpy(), np.histogram(a, bins)[0])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", ("float16", "float32", "float64", "int16", "int64", "uint8", "int8"))
def test_every_edge_and_its_neighbours(algorithm, dtype):
    for bins, range_ in ((10, (0.1, 0.7)), (256, (-3.3, 5.1)), (97, (-100, 100)), (256, (0, 256))):
        edges = np.histogram_bin_edges(np.zeros(0, dtype), bins, range_)
        a = edge_samples(edges, dtype)
        a = np.tile(a, 37)  # several vectors and blocks, every lane position
        got = check(cuda(a, dtype), bins, range_, algorithm=algorithm)
        np.testing.assert_array_equal(got.cpu().numpy(), np.histogram(a, bins, range_)[0])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_uint64_beyond_int64(rng, algorithm):
    """uint64 samples above 2^63: the data's range read back as uint64, and a float range up there."""
    a = (rng.integers(0, 2**62, 100003, dtype=np.uint64) * np.uint64(3)) | np.uint64(1)
    a[:3] = 0, 2**63, 2**64 - 1
    x = cuda(a, "uint64")
    for bins in (1, 7, 1000):
        np.testing.assert_array_equal(check(x, bins, algorithm=algorithm).cpu().numpy(), np.histogram(a, bins)[0])
        range_ = (2.0**60, 2.0**63 + 2.0**62)
        got = check(x, bins, range_, algorithm=algorithm).cpu().numpy()
        np.testing.assert_array_equal(got, np.histogram(a, bins, range_)[0])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_bin_count_regimes(rng, algorithm):
    # Shared copies shrink with the bin count (32 lanes' copies to 376 bins, fewer up to 12032, warp
    # sub-histograms to 1504); beyond 12032 every variant counts in global memory.
    a = rng.standard_normal(300_001).astype(np.float32)
    x = cuda(a, "float32")
    for bins in (375, 376, 377, 1503, 1504, 1505, 12032, 12033, 100_000):
        got = check(x, bins, (-3, 3), algorithm=algorithm)
        np.testing.assert_array_equal(got.cpu().numpy(), np.histogram(a, bins, (-3, 3))[0])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_skewed_and_single_bin(rng, algorithm):
    n = (1 << 22) + 5
    for dtype, value in (("uint8", 200), ("float32", 0.3), ("int32", 7)):
        a = np.full(n, value, dtype=dtype)
        a[rng.integers(0, n, 1000)] = 1  # a few samples elsewhere
        got = check(cuda(a, dtype), 256, (0, 256) if dtype != "float32" else (0, 1), algorithm=algorithm)
        np.testing.assert_array_equal(got.cpu().numpy(),
                                      np.histogram(a, 256, (0, 256) if dtype != "float32" else (0, 1))[0])
    zipf = np.minimum(rng.zipf(1.3, 1 << 20), 255).astype(np.uint8)
    got = check(cuda(zipf, "uint8"), 256, (0, 256), algorithm=algorithm)
    np.testing.assert_array_equal(got.cpu().numpy(), np.bincount(zipf, minlength=256))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", ("uint8", "float16", "float32", "float64"))
def test_strided_misaligned_negative_views(rng, algorithm, dtype):
    a = samples(rng, 64 * 129, dtype).reshape(64, 129)
    x = cuda(a, dtype)
    views = (x[1:], x[:, 3:], x.t(), x.flip(0), x.flip(1)[::2], x[5, 1:], x[:1].expand(7, 129), x.reshape(-1)[3:])
    for v in views:
        got = check(v, 50, (-4, 100), algorithm=algorithm)
        np.testing.assert_array_equal(got.cpu().numpy(), np.histogram(v.cpu().numpy(), 50, (-4, 100))[0])


def test_nan_inf_and_data_range_errors():
    a = np.array([np.nan, np.inf, -np.inf, 0.0, 0.25, 1.0, 2.0] * 1000, np.float32)
    for algorithm in ALGORITHMS:
        got = check(cuda(a, "float32"), 4, (0, 1), algorithm=algorithm)
        np.testing.assert_array_equal(got.cpu().numpy(), np.histogram(a, 4, (0, 1))[0])
    with pytest.raises(ValueError, match="autodetected range"):
        gpuprims.histogram(cuda(a, "float32"), 4)


@pytest.mark.parametrize("wdtype", ("float32", "float64"))
def test_weights(rng, wdtype):
    a = rng.standard_normal(100_003).astype(np.float32)
    w = rng.standard_normal(100_003).astype(wdtype)
    x, wx = cuda(a, "float32"), cuda(w, wdtype)
    for algorithm in ALGORITHMS:
        got = check(x, 100, (-2, 2), weights=wx, algorithm=algorithm)
        np.testing.assert_allclose(got.cpu().numpy(), np.histogram(a, 100, (-2, 2), weights=w.astype(np.float64))[0],
                                   rtol=1e-5 if wdtype == "float32" else 1e-10, atol=1e-4)
    m, wm = x[:99_900].view(333, 300).t(), wx[:99_900].view(333, 300).t()  # transposed, with their weights
    check(m, 64, None, weights=wm)
    check(x.to(torch.uint8), 16, (0, 4), weights=wx)


@pytest.mark.parametrize("wdtype", ("int32", "int64", "uint8", "bool", "float16", "bfloat16"))
def test_weights_of_any_dtype(rng, wdtype):
    """Weights of any dtype: float64 sums converted once to the weights' dtype (bincount: float64)."""
    a = rng.standard_normal(100_003).astype(np.float32)
    x = cuda(a, "float32")
    if wdtype == "bool":
        wx = torch.from_numpy(rng.random(a.size) < 0.3).cuda()
    elif wdtype in ("float16", "bfloat16"):
        wx = torch.from_numpy(rng.standard_normal(a.size).astype(np.float32)).to(getattr(torch, wdtype)).cuda()
    elif wdtype == "uint8":  # sparse, so that a bin's sum stays in range (it saturates beyond)
        wx = torch.from_numpy(rng.random(a.size) < 0.05).to(torch.uint8).cuda()
    else:
        wx = torch.from_numpy(rng.integers(0, 100, a.size)).to(getattr(torch, wdtype)).cuda()
    for algorithm in ALGORITHMS:
        got = check(x, 100, (-2, 2), weights=wx, algorithm=algorithm)
        assert got.dtype == wx.dtype
        want = np.histogram(a, 100, (-2, 2), weights=wx.cpu().double().numpy())[0]
        np.testing.assert_allclose(got.cpu().double().numpy(), want.astype(np.float64) if wdtype != "bool" else want != 0,
                                   rtol=2.0 ** -7, atol=0)
    check(x[1::3], 7, None, weights=wx[1::3])
    xb = cuda(rng.integers(0, 300, a.size).astype(np.int32), "int32")
    torch.testing.assert_close(gpuprims.bincount(xb, weights=wx), torch.bincount(xb, weights=wx.double()))


def test_bincount(rng):
    a = rng.integers(0, 256, (1 << 20) + 3).astype(np.uint8)
    x = cuda(a, "uint8")
    for algorithm in ALGORITHMS:
        got = gpuprims.bincount(x, algorithm=algorithm)
        assert torch.equal(got, torch.bincount(x))
    b = rng.integers(0, 5000, 100_001).astype(np.int32)
    xb = cuda(b, "int32")
    for algorithm in ALGORITHMS:
        assert torch.equal(gpuprims.bincount(xb, 6000, algorithm=algorithm), torch.bincount(xb, minlength=6000))
    out = torch.full((100,), -1, dtype=torch.int64, device="cuda")
    with pytest.raises(ValueError, match=r"values outside \[0, 100\)"):
        gpuprims.bincount(xb, out=out)
    gpuprims.bincount(xb, out=out, out_of_range="ignore")
    assert torch.equal(out, torch.bincount(xb)[:100])
    with pytest.raises(ValueError, match="expected non-negative values"):
        gpuprims.bincount(cuda(np.array([1, -2, 3], np.int16), "int16"))
    w = cuda(rng.standard_normal(100_001), "float64")
    torch.testing.assert_close(gpuprims.bincount(xb, weights=w), torch.bincount(xb, weights=w))
    with pytest.raises(ValueError, match=r"values outside \[0, 100\)"):
        gpuprims.bincount(xb, weights=w, out=torch.zeros(100, dtype=torch.float64, device="cuda"))
    assert gpuprims.bincount(cuda(np.zeros(0, np.int64), "int64"), 3).tolist() == [0, 0, 0]


@pytest.mark.parametrize("fw", framework_params("cuda"))
def test_frameworks(fw, rng):
    need(fw)
    a = rng.standard_normal(10_000).astype(np.float32)
    x = fw.make(a)
    got = gpuprims.histogram(x, 30, (-2, 2))
    assert fw.is_native(got)
    np.testing.assert_array_equal(to_numpy(got), np.histogram(a, 30, (-2, 2))[0])
    b = rng.integers(0, 40, 10_000).astype(np.int32)
    got = gpuprims.bincount(fw.make(b))
    assert fw.is_native(got)
    np.testing.assert_array_equal(to_numpy(got), np.bincount(b))
    for hi in (40, 256):  # uint8: one counting pass, the length read back from the counts
        b8 = rng.integers(0, hi, 10_000).astype(np.uint8)
        got = gpuprims.bincount(fw.make(b8))
        assert fw.is_native(got)
        np.testing.assert_array_equal(to_numpy(got), np.bincount(b8))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_bincount_byte_values_one_pass(rng, algorithm):
    """bincount without out= of uint8/bool on a GPU: one counting pass into max(minlength, 256)
    counts, trimmed to max(minlength, max + 1)."""
    need(TORCH_CUDA)
    for hi, minlength in ((256, 0), (100, 0), (100, 300), (1, 0), (256, 1000), (50, 256), (200, 7)):
        x = cuda(rng.integers(0, hi, 10_001).astype(np.uint8), "uint8")
        for view in (x, x[1::3], x.flip(0)):
            got = gpuprims.bincount(view, minlength, algorithm=algorithm)
            expected = np.bincount(view.cpu().numpy(), minlength=minlength)
            assert got.dtype == torch.int64 and tuple(got.shape) == expected.shape and got.is_contiguous()
            np.testing.assert_array_equal(got.cpu().numpy(), expected)
    for values in (rng.integers(0, 2, 999), np.zeros(999, np.int64), np.ones(5, np.int64)):
        b = values.astype(bool)
        got = gpuprims.bincount(cuda(b, "bool"), algorithm=algorithm)
        np.testing.assert_array_equal(got.cpu().numpy(), np.bincount(b.astype(np.int64)))


def test_stream_respected_without_host_sync(rng):
    """With range= and out= the call enqueues on the side stream and returns while it is still busy."""
    need(TORCH_CUDA)
    n = 1 << 24
    x = torch.full((n,), float("nan"), device="cuda")
    out = torch.full((8,), -1, dtype=torch.int64, device="cuda")
    cnt = torch.full((300,), -1, dtype=torch.int64, device="cuda")
    xi = torch.zeros(n, dtype=torch.int32, device="cuda")
    gpuprims.histogram(x[:100], 8, (0, 1), out=out)  # first launches (lazy module loading) out of the timing
    gpuprims.bincount(xi[:100], out=cnt, out_of_range="ignore")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(500_000_000)
        x.fill_(0.5)
        xi.fill_(299)
        t0 = time.perf_counter()
        gpuprims.histogram(x, 8, (0, 1), out=out)
        gpuprims.bincount(xi, out=cnt, out_of_range="ignore")
        elapsed = time.perf_counter() - t0
        busy = not side.query()
    torch.cuda.synchronize()
    assert busy and elapsed < 0.05, (busy, elapsed)
    assert out.tolist() == [0, 0, 0, 0, n, 0, 0, 0]
    assert cnt[299].item() == n and cnt[:299].sum().item() == 0


@pytest.mark.skipif(cupy is None, reason="cupy is not installed")
def test_cupy_stream(rng):
    x = cupy.full((1 << 20,), np.nan, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    with cupy.cuda.Stream(non_blocking=True) as s:
        x[:] = 0.75
        r = gpuprims.histogram(x, 4, (0, 1))
    s.synchronize()
    assert r.tolist() == [0, 0, 0, 1 << 20]


def test_cuda_graph_capture(rng):
    need(TORCH_CUDA)
    x = torch.rand(1 << 20, device="cuda")
    out = torch.empty(64, dtype=torch.int64, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        gpuprims.histogram(x, 64, (0, 1), out=out)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        gpuprims.histogram(x, 64, (0, 1), out=out)
    x.copy_(torch.rand(1 << 20, device="cuda") ** 2)
    g.replay()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), np.histogram(x.cpu().numpy(), 64, (0, 1))[0])


@pytest.mark.big
def test_2_32_samples_in_one_bin():
    need(TORCH_CUDA)
    n = 2**32
    x = torch.full((n,), 77, dtype=torch.uint8, device="cuda")
    for algorithm in ALGORITHMS:
        got = gpuprims.histogram(x, 256, (0, 256), algorithm=algorithm)
        assert got[77].item() == n and got.sum().item() == n, algorithm
    assert gpuprims.bincount(x)[77].item() == n
    strided = x.view(2**16, 2**16)[:, ::2]  # 2^31 samples through the strided path
    assert gpuprims.histogram(strided, 4, (0, 256))[1].item() == 2**31
    del x, strided
    torch.cuda.empty_cache()


def byte_runs(rng, n):
    """Random bytes with runs of one value (whole 16-byte vectors of equal bytes at any alignment)."""
    a = rng.integers(0, 256, n).astype(np.uint8)
    for start in rng.integers(0, max(n - 64, 1), 8):
        a[start:start + int(rng.integers(1, 64))] = rng.integers(0, 256)
    return a


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_byte_window_kernel(rng, algorithm):
    """8-bit inputs whose bins are a window of byte values: shared_privatized's word-wise kernel
    (full cover, shifted, partial, int8-biased and empty windows; constant runs; bincount drops)."""
    for n in (1, 15, 16, 17, 4095, 16 * 4096 + 5, (1 << 20) + 7):
        x = cuda(byte_runs(rng, n), "uint8")
        for view in (x, x[3:]):  # 16-byte aligned and misaligned starts
            a = view.cpu().numpy()
            got = check(view, 256, (0, 256), algorithm=algorithm)  # all 256 values count
            np.testing.assert_array_equal(got.cpu().numpy(), np.bincount(a, minlength=256))
            got = check(view, 276, (-10, 266), algorithm=algorithm)  # full cover, 10 bins in
            np.testing.assert_array_equal(got.cpu().numpy()[10:266], np.bincount(a, minlength=256))
            check(view, 128, (-0.5, 127.5), algorithm=algorithm)  # values 0..127 only
            check(view, 10, (300, 400), algorithm=algorithm)  # an empty window
            s8 = cuda(a.view(np.int8), "int8")
            check(s8, 256, (-128.5, 127.5), algorithm=algorithm)  # biased full cover
            check(s8, 128, (-0.5, 127.5), algorithm=algorithm)  # biased partial window
            out = torch.full((100,), -7, dtype=torch.int64, device="cuda")
            gpuprims.bincount(view, out=out, out_of_range="ignore", algorithm=algorithm)
            np.testing.assert_array_equal(out.cpu().numpy(), np.bincount(a, minlength=256)[:100])
            dropped = int((a >= 100).sum())
            if dropped:
                with pytest.raises(ValueError, match=f"{dropped} values outside"):
                    gpuprims.bincount(view, out=out, algorithm=algorithm)
            assert torch.equal(gpuprims.bincount(view, algorithm=algorithm), torch.bincount(view))
            out = torch.full((128,), -7, dtype=torch.int64, device="cuda")
            gpuprims.bincount(s8, out=out, out_of_range="ignore", algorithm=algorithm)
            a8 = a.view(np.int8)
            np.testing.assert_array_equal(out.cpu().numpy(), np.bincount(a8[a8 >= 0], minlength=128))
    for value in (0, 201, 255):  # every vector one run: one atomic of 16 per vector
        c = cuda(np.full(70_001, value, np.uint8), "uint8")
        assert check(c, 256, (0, 256), algorithm=algorithm)[value].item() == 70_001
        assert check(c[1:], 128, (-0.5, 127.5), algorithm=algorithm).sum().item() == (70_000 if value < 128 else 0)


def float32_edge_mix(rng, n, bins, range_):
    """float32 samples for `bins` bins over `range_` (None: the data's range): every edge and its
    nextafter neighbours up to 3 ulps (the float32 kernel's exact path), NaN, +-inf, lo and hi,
    values just above lo (fa tiny), out-of-range and uniform values, shuffled; n >= 1."""
    lo, hi = (-2.5, 7.25) if range_ is None else range_
    edges = np.histogram_bin_edges(np.array([lo, hi], np.float32), bins, range_)
    near = [edges.astype(np.float32)]
    for direction in (np.inf, -np.inf):
        e = near[0]
        for _ in range(3):
            e = np.nextafter(e, np.float32(direction), dtype=np.float32)
            near.append(e)
    lo32 = np.float32(lo)
    special = np.array([np.nan, np.inf, -np.inf, lo, hi, np.nextafter(lo32, np.float32(np.inf)),
                        lo32 + np.float32(1e-7) * abs(lo32 or 1), hi + 1, lo - 1], np.float32)
    width = hi - lo
    uniform = rng.uniform(lo - 0.1 * width, hi + 0.1 * width, n).astype(np.float32)
    a = np.concatenate([np.concatenate(near), special, uniform])
    a = np.resize(rng.permutation(a), n)
    if range_ is None:  # keep the data's min and max at lo and hi: numpy's range
        a[~np.isfinite(a) | (a < lo) | (a > hi)] = np.float32(lo)
        a[: min(n, 2)] = np.array([lo, hi], np.float32)[: min(n, 2)]
    return a


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_float32_kernel(rng, algorithm):
    """Contiguous float32 with the float32 shortcut on: what shared_privatized sends to the float32
    kernel (float32_kernel.cuh) when kLaunchFloat32Kernel is on, to the generic kernel otherwise.
    Every edge and its neighbours, NaN, inf, out of range, at 32, 16 and 1 lane-private copies,
    inexact edges and subtraction, range=None; full and partial (prefetched) loop steps, scalar head
    and tail at every misalignment; all samples on edges (every sample takes the exact path)."""
    setups = ((256, (0.0, 1.0)), (3, (0.0, 1.0)), (1, (0.0, 1.0)), (376, (-3.3, 5.1)), (377, (-3.3, 5.1)),
              (12032, (-1.0, 1.0)), (256, (1000.0, 1001.0)), (100, None))
    for n in (1, 5, 4099, 256 * 2 * 4 * 5 + 3, (1 << 20) + 7):
        for bins, range_ in setups:
            a = float32_edge_mix(rng, n, bins, range_)
            x = cuda(a, "float32")
            for offset in range(4 if n > 4 else 1):  # 16-byte aligned and the three misaligned starts
                v = x[offset:]
                got = check(v, bins, range_, algorithm=algorithm)
                np.testing.assert_array_equal(got.cpu().numpy(), np.histogram(a[offset:], bins, range_)[0])
    on_edges = np.resize(np.histogram_bin_edges(np.zeros(0, np.float32), 256, (0, 1)).astype(np.float32), 1 << 20)
    got = check(cuda(on_edges, "float32"), 256, (0, 1), algorithm=algorithm)
    np.testing.assert_array_equal(got.cpu().numpy(), np.histogram(on_edges, 256, (0, 1))[0])


# ---------------------------------------------------------------------------------------------
# the selection scripts/gpu_check.sh runs under compute-sanitizer (memcheck, racecheck)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_sanitize_small(rng, algorithm):
    need(TORCH_CUDA)
    for dtype in ("uint8", "int8", "int16", "float16", "bfloat16", "float32", "int64"):
        for n in (0, 1, 17, 4097):
            a = samples(rng, n, dtype)
            x = cuda(a, dtype)
            check(x, 7, (-5, 40), algorithm=algorithm)
            check(x[1:], 40 if dtype == "bfloat16" else 300, (-5, 40), algorithm=algorithm)
    x = cuda(rng.standard_normal(20_000).astype(np.float32), "float32")
    check(x, 20_000, (-3, 3), algorithm=algorithm)  # global-memory counts
    check(x[1:], 256, (-1, 1), algorithm=algorithm)  # float32 path: 32 copies (+ discard row), head/tail
    check(x, 12032, (-3, 3), algorithm=algorithm)  # float32 path: 1 copy, the largest shared histogram
    check(cuda(rng.integers(0, 256, 5000).astype(np.uint8), "uint8"), 376, (0, 256), algorithm=algorithm)
    runs = cuda(byte_runs(rng, 5003), "uint8")  # the byte-window kernel: full and partial windows
    check(runs[1:], 256, (0, 256), algorithm=algorithm)
    check(runs, 128, (-0.5, 127.5), algorithm=algorithm)
    check(x.view(100, 200).t(), 33, (-3, 3), algorithm=algorithm)
    check(x, 9, (-1, 1), weights=x, algorithm=algorithm)
    xi = cuda(rng.integers(0, 120, 5000).astype(np.int32), "int32")
    out = torch.empty(100, dtype=torch.int64, device="cuda")
    gpuprims.bincount(xi, out=out, out_of_range="ignore", algorithm=algorithm)
    assert torch.equal(out, torch.bincount(xi)[:100])
