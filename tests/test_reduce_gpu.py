"""reduce on the GPU: every variant, dtype and op; every framework; layouts, streams, graphs,
determinism, sizes beyond 2^31 and CUDA error mapping. Skipped (with the reason) without a GPU."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import ALL_DTYPES, GPU_COUNT, Framework, cupy, framework_params, random_values, to_numpy, torch
from test_reduce import OPS, VARIANTS, check, values_for

import gpuprims

pytestmark = pytest.mark.gpu
TORCH_CUDA = Framework("torch", "cuda")
GPU_SIZES = (0, 1, 31, 32, 33, 1023, 4097, 2**20 + 7)


def need(fw):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed with GPU support")


def cuda_sizes(op):
    return [n for n in GPU_SIZES if not (n == 0 and op in ("min", "max"))]


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_variant_dtype_op(rng, algorithm, dtype, op):
    """Every variant by name, every dtype and op, sizes 0 .. 2^20+7, against float64/exact refs."""
    need(TORCH_CUDA)
    for n in cuda_sizes(op):
        if algorithm == "thread_per_output" and n > 4097:
            continue  # one thread for the whole array: correct, but minutes at this size
        check(TORCH_CUDA, values_for(rng, n, dtype, op), dtype, op, algorithm=algorithm)


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
@pytest.mark.parametrize("axis", (0, 1, 2, -1))
@pytest.mark.parametrize("keepdims", (False, True))
def test_variant_axes(rng, algorithm, axis, keepdims):
    need(TORCH_CUDA)
    for shape in ((3, 5, 7), (2, 1031, 9), (67, 3, 130)):
        a = random_values(rng, int(np.prod(shape)), "float32").reshape(shape)
        check(TORCH_CUDA, a, "float32", "sum", axis, keepdims=keepdims, algorithm=algorithm)
        check(TORCH_CUDA, a, "float32", "max", axis, keepdims=keepdims, algorithm=algorithm)


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
@pytest.mark.parametrize("axis", ((), (0, 1), (0, 2), (1, 2), (-1, 0, 1)), ids=str)
@pytest.mark.parametrize("keepdims", (False, True))
def test_variant_axis_tuples(rng, algorithm, axis, keepdims):
    """Several reduced axes: rows of strided runs (elem_offset over several dimensions) with many rows."""
    need(TORCH_CUDA)
    for shape in ((3, 5, 7), (2, 1031, 9), (67, 3, 130), (129, 2, 2000)):
        a = random_values(rng, int(np.prod(shape)), "float32").reshape(shape)
        check(TORCH_CUDA, a, "float32", "sum", axis, keepdims=keepdims, algorithm=algorithm)
        check(TORCH_CUDA, a, "float32", "max", axis, keepdims=keepdims, algorithm=algorithm)
    i = random_values(rng, 9 * 4 * 6 * 33, "int32").reshape(9, 4, 6, 33)[:, ::-1, :, 1::2]
    check(TORCH_CUDA, i, "int32", "sum", (1, 3), keepdims=keepdims, algorithm=algorithm)
    check(TORCH_CUDA, i, "int32", "min", (0, 2), keepdims=keepdims, algorithm=algorithm)


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
def test_two_step_reductions(rng, algorithm):
    """Reduced runs that do not merge, each of 512 bytes or more (dispatch.cpp, run_in_two_steps):
    the runs into a scratch of accumulators, then each output's runs. Every op and accumulator kind,
    keepdims, an out= view, and a full sum of a view whose rows are cut short."""
    need(TORCH_CUDA)
    for dtype, op, result in (("float32", "sum", None), ("float16", "sum", None), ("bfloat16", "max", None),
                              ("float64", "prod", None), ("int8", "sum", "int16"), ("uint16", "sum", None),
                              ("bool", "max", None), ("int32", "min", None), ("float32", "sum", "float64")):
        a = values_for(rng, 3 * 5 * 8 * 130, dtype, op).reshape(3, 5, 8, 130)  # NCHW, runs of 8 x 130
        check(TORCH_CUDA, a, dtype, op, (0, 2, 3), keepdims=op == "max", algorithm=algorithm, result_dtype=result)
        check(TORCH_CUDA, a, dtype, op, (0, 3), algorithm=algorithm, result_dtype=result)
    wide = random_values(rng, 40 * 1000, "float32").reshape(40, 1000)
    check(TORCH_CUDA, wide[:, :700], "float32", "sum", None, algorithm=algorithm)  # 40 runs of 700
    check(TORCH_CUDA, wide[::-2, 100:900], "float32", "max", None, algorithm=algorithm)
    x = TORCH_CUDA.make(wide.reshape(4, 10, 1000), "float32")
    out = torch.full((20,), float("nan"), device="cuda")[::2]  # poisoned, strided
    gpuprims.sum(x, axis=(0, 2), out=out, algorithm=algorithm)
    np.testing.assert_allclose(to_numpy(out), wide.reshape(4, 10, 1000).astype(np.float64).sum(axis=(0, 2)),
                               rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("algorithm", ("auto", "warp_per_row", "vectorized"))
def test_many_short_rows(rng, algorithm):
    """Thousands of contiguous rows of 40 .. 1031 elements ("auto" takes warp_per_row from 16 rows
    per SM): odd lengths, so most rows start off a 16-byte boundary, groups of 4 and 8 lanes
    narrower than a vector of 1- and 2-byte elements, a view one element into its buffer, and
    two-step reductions whose first step enumerates its runs in address order (kept
    and reduced dimensions interleaved, so the scratch's order differs from the rows')."""
    need(TORCH_CUDA)
    for shape, dtype, op, result in (((2500, 1023), "float32", "sum", None), ((2500, 1031), "bfloat16", "max", None),
                                     ((2300, 515), "int32", "sum", None), ((2200, 257), "float64", "prod", None),
                                     ((3000, 40), "float16", "sum", None), ((2400, 300), "int8", "sum", "int16"),
                                     ((3000, 70), "uint8", "max", None)):
        a = values_for(rng, int(np.prod(shape)), dtype, op).reshape(shape)
        check(TORCH_CUDA, a, dtype, op, -1, algorithm=algorithm, result_dtype=result)
        check(MisalignedTorch(1), a, dtype, op, 1, keepdims=True, algorithm=algorithm, result_dtype=result)
    a = random_values(rng, 5 * 80 * 6 * 200, "float32").reshape(5, 80, 6, 200)
    for keepdims in (False, True):
        check(TORCH_CUDA, a, "float32", "sum", (1, 3), keepdims=keepdims, algorithm=algorithm)
        check(TORCH_CUDA, a, "float32", "min", (3, 0), keepdims=keepdims, algorithm=algorithm)
    i = values_for(rng, 7 * 600 * 3 * 130, "int32", "sum").reshape(7, 600, 3, 130)  # runs of 520 bytes
    check(TORCH_CUDA, i, "int32", "sum", (0, 3), algorithm=algorithm)


@pytest.mark.parametrize("fw", framework_params("cuda"))
@pytest.mark.parametrize("dtype", ("bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"))
def test_frameworks(fw, rng, dtype):
    """Results come back in the input's framework, on its device, right."""
    need(fw)
    if fw.name in ("cupy", "cuda.core") and dtype == "bfloat16":
        pytest.skip(f"{fw.name} holds no bfloat16")
    a = random_values(rng, 129 * 77, dtype).reshape(129, 77)
    for axis in (None, 0, 1, (0, 1), ()):
        for op in OPS:
            check(fw, values_for(rng, a.size, dtype, op).reshape(a.shape), dtype, op, axis)


@pytest.mark.parametrize("fw", framework_params("cuda"))
def test_frameworks_out_and_empty(fw, rng):
    need(fw)
    x = fw.make(random_values(rng, 1000, "float32"))
    assert float(to_numpy(gpuprims.sum(fw.make(np.zeros(0, np.float32))))) == 0.0
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        gpuprims.max(fw.make(np.zeros(0, np.float32)))
    if fw.name == "jax":
        with pytest.raises(TypeError, match="JAX arrays are immutable"):
            gpuprims.sum(x, out=fw.make(np.zeros((), np.float32)))
    elif fw.name in ("torch", "cupy"):
        out = fw.make(np.full((), np.nan, np.float32))
        assert gpuprims.sum(x, out=out) is out
        np.testing.assert_allclose(to_numpy(out), to_numpy(x).astype(np.float64).sum(), rtol=1e-5)


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
@pytest.mark.parametrize("dtype", ("uint8", "float16", "bfloat16", "float32", "float64"))
def test_misaligned_and_strided_views(rng, algorithm, dtype):
    """Offset-by-k views (never a misaligned 16-byte load), steps, transposes, zero strides."""
    need(TORCH_CUDA)
    base = TORCH_CUDA.make(random_values(rng, 4099 * 3, dtype), dtype)
    ref64 = torch.from_numpy(to_numpy(base).astype(np.float64))
    views = {f"offset{k}": (base[k:], ref64[k:]) for k in (1, 2, 3, 5, 7)}
    views["step3"] = (base[1::3], ref64[1::3])
    m, m64 = base[: 4099 * 3].view(3, 4099), ref64.view(3, 4099)
    views["transposed"] = (m.t(), m64.t())
    views["zero_stride"] = (base[:1].expand(5000), ref64[:1].expand(5000))
    for name, (x, x64) in views.items():
        for axis in (None, 0, -1) if x.dim() > 1 else (None,):
            got = to_numpy(gpuprims.max(x, axis=axis, algorithm=algorithm)).astype(np.float64)
            want = (x64.amax() if axis is None else x64.amax(dim=axis)).numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{name} axis={axis}")
            got = to_numpy(gpuprims.sum(x, axis=axis, dtype="float64", algorithm=algorithm))
            want = (x64.sum() if axis is None else x64.sum(dim=axis)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, err_msg=f"{name} axis={axis}")


class MisalignedTorch:
    """TORCH_CUDA, but make() returns a view that starts `offset` elements into its CUDA buffer."""

    def __init__(self, offset):
        self.offset = offset

    def make(self, a, dtype):
        flat = np.ascontiguousarray(a).reshape(-1)
        buffer = TORCH_CUDA.make(np.concatenate([flat[: self.offset], flat]), dtype)
        return buffer[self.offset:].view(a.shape)

    def is_native(self, x):
        return TORCH_CUDA.is_native(x)


class TorchView:
    """TORCH_CUDA, but make() returns view(the CUDA tensor of base): pass view(base) as the array."""

    def __init__(self, base, view):
        self.base, self.view = base, view

    def make(self, a, dtype):
        return self.view(TORCH_CUDA.make(self.base, dtype))

    def is_native(self, x):
        return TORCH_CUDA.is_native(x)


@pytest.mark.parametrize("algorithm", ("auto", "bulk_copy", "window", "vectorized"))
@pytest.mark.parametrize("dtype", ("uint8", "int32", "int64", "bfloat16", "float32", "float64"))
def test_long_contiguous_rows(rng, algorithm, dtype):
    """Rows of 2 MiB and more ("auto" takes window on sm_90): several rows, starts 1
    and 3 elements past a 16-byte boundary, a last bulk stage (window chunk) shorter than the
    others, every op."""
    need(TORCH_CUDA)
    itemsize = {"uint8": 1, "bfloat16": 2}.get(dtype) or np.dtype(dtype).itemsize
    row = (1 << 21) // itemsize + 37
    for op in OPS:
        a = values_for(rng, 3 * row, dtype, op)
        check(MisalignedTorch(1), a.reshape(3, row), dtype, op, -1, algorithm=algorithm)
        check(MisalignedTorch(3), a, dtype, op, algorithm=algorithm)


@pytest.mark.parametrize("algorithm", ("auto", "column_tiles"))
@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32", "int32", "uint16"))
def test_column_tiles_vector_loads(rng, algorithm, dtype):
    """Reductions along outer axes where column_tiles loads each lane's adjacent outputs as one
    16-byte vector (2- and 4-byte items into 4-byte accumulators), next to the layouts that fall back
    to a scalar load an output: whole tiles, a last tile of partial vectors, odd column counts, views
    16 bytes and one element into their rows, every other row, two reduced axes, a reduced dimension
    split over many blocks, NaN and Inf in a column."""
    need(TORCH_CUDA)
    cases = []
    for shape, axis in (((257, 2048), 0), ((300, 1000), 0), ((129, 1001), 0), ((20, 6, 512), (0, 1)),
                        ((4096, 520), 0), ((3, 40, 2056), 1)):
        cases.append((shape, axis, lambda a: a))
    cases.append(((200, 1032), 0, lambda a: a[:, 8:]))  # 16 and 32 bytes in: still aligned
    cases.append(((200, 1032), 0, lambda a: a[:, 1:]))  # one element in: scalar loads
    cases.append(((400, 1024), 0, lambda a: a[::2]))    # every other row
    for op in OPS:
        for shape, axis, view in cases:
            base = values_for(rng, int(np.prod(shape)), dtype, op).reshape(shape)
            check(TorchView(base, view), view(base), dtype, op, axis, algorithm=algorithm)
    if dtype in ("float16", "bfloat16", "float32"):
        a = random_values(rng, 64 * 1024, dtype).reshape(64, 1024)
        a[5, 3], a[60, 700], a[7, 1023], a[9, 1023] = np.nan, np.inf, np.inf, -np.inf
        x, a64 = TORCH_CUDA.make(a, dtype), a.astype(np.float64)
        for op in ("min", "max"):
            got = to_numpy(gpuprims.reduce(x, op, 0, algorithm=algorithm)).astype(np.float64)
            np.testing.assert_array_equal(got, getattr(np, op)(a64, axis=0), err_msg=op)
        with np.errstate(invalid="ignore"):
            want = a64.sum(axis=0)  # NaN where inf meets -inf
        got = to_numpy(gpuprims.reduce(x, "sum", 0, dtype="float32", algorithm=algorithm))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4, equal_nan=True)


@pytest.mark.parametrize("algorithm", ("auto", "window"))
def test_long_rows_whose_kept_dimensions_do_not_merge(rng, algorithm):
    """window addresses rows as one strided run; a view whose kept dimensions cannot merge (rows
    2 * row apart within a block, 3 * row between blocks) runs vectorized instead, same values."""
    need(TORCH_CUDA)
    row = (1 << 19) + 13
    a = random_values(rng, 2 * 3 * row, "float32").reshape(2, 3, row)
    x = torch.as_tensor(a, device="cuda")[:, ::2, :]
    for op in ("sum", "min", "max"):  # a product of 2^19 normal values overflows: no reference
        got = to_numpy(gpuprims.reduce(x, op, axis=-1, algorithm=algorithm))
        want = getattr(np, op)(a[:, ::2, :].astype(np.float64), axis=-1)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-3)


@pytest.mark.skipif(cupy is None, reason="cupy is not installed")
def test_negative_strides(rng):
    a = random_values(rng, 3000, "float32").reshape(30, 100)
    c = cupy.asarray(a)
    for view, ref in ((c[::-1], a[::-1]), (c[:, ::-2], a[:, ::-2]), (c[::-1, ::-1].T, a[::-1, ::-1].T)):
        for axis in (None, 0, 1):
            np.testing.assert_allclose(to_numpy(gpuprims.sum(view, axis=axis)),
                                       ref.astype(np.float64).sum(axis=axis), rtol=1e-5, atol=1e-4)


def test_nan_inf_every_variant(rng):
    need(TORCH_CUDA)
    for algorithm in ("auto",) + VARIANTS:
        a = random_values(rng, 70_001, "float32")
        a[12_345] = np.nan
        x = torch.from_numpy(a).cuda()
        assert np.isnan(float(gpuprims.max(x, algorithm=algorithm)))
        assert np.isnan(float(gpuprims.min(x, algorithm=algorithm)))
        a[12_345] = np.inf
        x = torch.from_numpy(a).cuda()
        assert float(gpuprims.max(x, algorithm=algorithm)) == np.inf
        assert float(gpuprims.sum(x, algorithm=algorithm)) == np.inf


@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
def test_min_max_nan_anywhere_every_variant(rng, dtype):
    """NaN propagates from any place (first, last and middle item, every item), in a whole
    reduction and in the one row or column of an axis reduction that holds it; the others keep
    their exact extremes. float32 runs PTX's min.NaN / max.NaN, the others the select
    (reduce_ops.hpp), and each kernel folds items in its own order."""
    need(TORCH_CUDA)
    for algorithm in ("auto",) + VARIANTS:
        for n in (1, 33, 4097, 70_001):
            for where in ("first", "last", "middle", "all"):
                a = random_values(rng, n, dtype)
                if where == "all":
                    a[:] = np.nan
                else:
                    a[{"first": 0, "last": n - 1, "middle": n // 2}[where]] = np.nan
                x = torch.from_numpy(a).cuda()
                for op in ("min", "max"):
                    got = float(gpuprims.reduce(x, op, algorithm=algorithm))
                    assert np.isnan(got), (algorithm, n, where, op)
        m = random_values(rng, 300 * 257, dtype).reshape(300, 257)
        m[17, 100] = np.nan
        x = torch.from_numpy(m).cuda()
        for axis in (0, 1):
            for op in ("min", "max"):
                got = to_numpy(gpuprims.reduce(x, op, axis, algorithm=algorithm)).astype(np.float64)
                want = getattr(np, op)(m.astype(np.float64), axis=axis)
                np.testing.assert_array_equal(got, want, err_msg=f"{algorithm} axis={axis} {op}")
                assert np.isnan(got).sum() == 1


def test_poisoned_output_fully_written(rng):
    need(TORCH_CUDA)
    a = torch.from_numpy(random_values(rng, 513 * 257, "float32").reshape(513, 257)).cuda()
    for algorithm in ("auto",) + VARIANTS:
        for axis in (0, 1):
            out = torch.full((a.shape[1 - axis],), float("nan"), device="cuda")
            gpuprims.sum(a, axis=axis, out=out, algorithm=algorithm)
            assert not torch.isnan(out).any(), algorithm
            torch.testing.assert_close(out.double(), a.double().sum(dim=axis), rtol=1e-5, atol=1e-4)


def test_deterministic_variants_are_bitwise_reproducible(rng):
    need(TORCH_CUDA)
    x = torch.from_numpy(random_values(rng, 2**24 + 3, "float32")).cuda()
    for v in gpuprims.variants("reduce"):
        if not v.deterministic or v.name == "thread_per_output":
            continue
        first = gpuprims.sum(x, algorithm=v.name)
        for _ in range(20):
            assert torch.equal(gpuprims.sum(x, algorithm=v.name), first), v.name


# ---------------------------------------------------------------------------------------------
# streams and graphs


def test_torch_side_stream_ordering():
    """Issued on a side stream right behind a long kernel that produces x: right answer, no sync."""
    need(TORCH_CUDA)
    n = 1 << 24
    x = torch.full((n,), float("nan"), device="cuda")  # poisoned until the side stream fills it
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # ~0.1 s of spinning ahead of the producer
        x.fill_(0.5)
        r = gpuprims.sum(x)  # current stream = side
        r_explicit = torch.empty((), device="cuda")
    gpuprims.sum(x, out=r_explicit, stream=side)  # explicit stream= from outside the context
    torch.cuda.synchronize()
    assert float(r) == n * 0.5 and float(r_explicit) == n * 0.5


def test_imports_on_a_foreign_stream_are_held_until_their_launch_ran(rng):
    """An input whose producer's allocator is not ordered on the launch stream stays held after the
    call returns, until the launches queued then have run (cpp/bindings/deferred_release.hpp): a
    torch tensor read on a stream= other than torch's current one, and every JAX array (JAX's
    streams are non-blocking; ours is the legacy default stream). Without the hold, a JAX array
    whose last reference was the import goes back to JAX at return, and the same-size arrays JAX
    makes next may land under the kernel."""
    need(TORCH_CUDA)
    from gpuprims import _C

    x = torch.randn(1 << 20, device="cuda")
    side = torch.cuda.Stream()
    # Warm-up: the first launch of a kernel loads its module, which waits for the whole device
    # (lazy loading) and would drain the held stream before the import is dropped.
    gpuprims.sum(x, stream=side)
    torch.cuda.synchronize()
    _C.flush_releases()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)  # holds the side stream for tens of milliseconds
    r = gpuprims.sum(x, stream=side)
    assert _C.pending_releases() >= 1  # x's import, until the sum on `side` has run
    side.synchronize()
    assert _C.pending_releases() == 0
    assert abs(float(r) - float(x.double().sum())) <= 1e-3 * float(x.abs().sum())

    jax_cuda = Framework("jax", "cuda")
    if not jax_cuda.available():
        return
    a = rng.standard_normal((3, 5000)) * 4
    ref = a - a.max(axis=1, keepdims=True)
    ref -= np.log(np.exp(ref).sum(axis=1, keepdims=True))
    x = jax_cuda.make(a, "float32")
    poison = jax_cuda.make(np.full(a.shape, np.nan), "float32")
    gpuprims.log_softmax(x + 0)  # warm-up: our kernel, JAX's additions
    (poison + 1).block_until_ready()
    torch.cuda.synchronize()
    # Kept: dropped JAX results make gpuprims synchronize the device now and then (before it reuses
    # their memory: device_buffer_cache.hpp), which would drain the held stream before the check.
    results = []
    for _ in range(5):
        temporary = (x + 0).block_until_ready()
        torch.cuda._sleep(50_000_000)  # torch's default stream: the legacy default stream, JAX's launch stream
        results.append(gpuprims.log_softmax(temporary))
        del temporary  # the import holds the only reference now
        assert _C.pending_releases() >= 1
        # JAX kernels on JAX's own stream make same-size NaN arrays at once: without the hold, one
        # would take the temporary's memory before our kernel read it.
        reuses = [poison + j for j in range(8)]
        np.testing.assert_allclose(to_numpy(results[-1]), ref, rtol=0, atol=1e-4)
        del reuses
    torch.cuda.synchronize()
    assert _C.pending_releases() == 0


def test_dropped_jax_results_memory_is_reused_only_after_its_readers_ran(rng):
    """A dropped JAX result's memory goes back to gpuprims, which reuses it for a later result only
    after a device synchronization that began after the drop (cpp/bindings/device_buffer_cache.hpp):
    XLA may still be reading it on its own stream. Every round queues a JAX read of the result
    behind a matmul on JAX's stream, drops the result and makes the next one at once; over 150
    rounds (two synchronizations of 64 dropped results) the later results land in earlier ones'
    memory, and every read must still see its own round's values."""
    jax_cuda = Framework("jax", "cuda")
    need(jax_cuda)

    a = rng.standard_normal((64, 4096))
    w = rng.standard_normal((64, 4096))
    scales = (0.5, 1.0, 2.0, 3.0, 5.0)
    refs = []
    for k in scales:
        e = np.exp(a * k - (a * k).max(axis=1, keepdims=True))
        refs.append(e / e.sum(axis=1, keepdims=True) * w)
    xs = [jax_cuda.make(a * k, "float32") for k in scales]
    wj = jax_cuda.make(w, "float32")
    m = jax_cuda.make(rng.standard_normal((2048, 2048)), "float32")
    reads = []
    for i in range(150):
        y = gpuprims.softmax(xs[i % len(scales)])
        busy = m @ m  # JAX's stream is busy, so the read below waits behind it
        reads.append(y * wj + 0 * busy[0, 0])
        del y, busy
    for i, r in enumerate(reads):
        np.testing.assert_allclose(to_numpy(r), refs[i % len(scales)], rtol=1e-4, atol=1e-7, err_msg=f"round {i}")


def test_a_held_import_may_outlive_its_launch_stream(rng):
    """A held import records the event it waits for as the binding that read it returns, while the
    launch stream is alive. An exception's traceback keeps the op's frame, and its imports, alive
    after the caller destroyed the stream; recording when the import is dropped touched the
    destroyed stream (a segfault the GPU API fuzzer hit in session 32: bincount raising inside
    `with cupy.cuda.Stream():`)."""
    cupy_cuda = Framework("cupy", "cuda")
    need(cupy_cuda)
    from gpuprims import _C

    values = rng.integers(0, 50, 100_000)
    x = cupy_cuda.make(values, "int32")
    out = cupy.zeros(10, cupy.int64)  # too short for values up to 49: bincount raises after its launch
    for _ in range(20):
        stream = cupy.cuda.Stream(non_blocking=True)
        try:
            gpuprims.bincount(x, out=out, stream=stream.ptr)  # not CuPy's current stream: x and out are held
        except ValueError as e:
            error = e
        stream.synchronize()
        del stream  # destroyed; error's traceback still holds bincount's frame and its imports
        del error  # the imports go now
    _C.flush_releases()
    assert _C.pending_releases() == 0
    counts = gpuprims.bincount(x, minlength=50)
    np.testing.assert_array_equal(cupy.asnumpy(counts), np.bincount(values, minlength=50))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_torch_fast_path_matches_general_path(rng, dtype, monkeypatch):
    """Calls on CUDA tensors with dtype= and stream= at their defaults run in C++ (_C.reduce_torch)
    without the Python array layer; they must give what the general path gives: value, dtype,
    shape, device, a fresh tensor (or out=, written)."""
    need(TORCH_CUDA)
    from gpuprims import _interop

    axes = (None, -1, 0, (0, 2), [2, 1], (), (-3, -2, -1))
    for op in OPS:
        base = TORCH_CUDA.make(values_for(rng, 6 * 35 * 41 + 1, dtype, op), dtype)[1:].view(6, 35, 41)
        for x in (base, base.transpose(0, 2)[:, ::2]):  # misaligned start; a strided view
            for axis in axes:
                for keepdims in (False, True):
                    # stream=: the general path
                    general = gpuprims.reduce(x, op, axis, keepdims=keepdims, stream=torch.cuda.current_stream())
                    with monkeypatch.context() as m:
                        m.setattr(_interop, "prepare_input", lambda *a, **k: pytest.fail("fast path not taken"))
                        fast = gpuprims.reduce(x, op, axis, keepdims=keepdims)
                        again = gpuprims.reduce(x, op, axis, keepdims=keepdims)
                        out = torch.full_like(general, 7)  # poisoned
                        into = gpuprims.reduce(x, op, axis, keepdims=keepdims, out=out)
                    what = f"{op} {tuple(x.shape)} {x.stride()} axis={axis} keepdims={keepdims}"
                    assert isinstance(fast, torch.Tensor) and fast.device == x.device, what
                    assert fast.shape == general.shape and fast.dtype == general.dtype, what
                    assert fast.is_contiguous() and fast.data_ptr() != again.data_ptr(), what
                    assert into is out, what
                    np.testing.assert_array_equal(to_numpy(fast), to_numpy(general), err_msg=what)
                    np.testing.assert_array_equal(to_numpy(out), to_numpy(general), err_msg=what)


def test_torch_fast_path_declines_to_the_general_path():
    """What the C++ fast path does not take reaches the general path, which raises its typed errors."""
    need(TORCH_CUDA)
    x = torch.randn(4, 5, device="cuda")
    assert gpuprims.sum(torch.zeros(0, device="cuda")).item() == 0.0
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        gpuprims.max(torch.zeros(0, device="cuda"))
    with pytest.raises(ValueError, match=r"argument 'axis': expected an int in \[-2, 2\)"):
        gpuprims.sum(x, axis=2)
    with pytest.raises(ValueError, match="expected each axis once"):
        gpuprims.sum(x, axis=(1, -1))
    with pytest.raises(TypeError, match="argument 'axis'"):
        gpuprims.sum(x, axis=1.0)
    with pytest.raises(TypeError, match="argument 'out': expected dtype float32, got float64"):
        gpuprims.sum(x, axis=1, out=torch.empty(4, dtype=torch.float64, device="cuda"))
    with pytest.raises(ValueError, match="argument 'out'"):
        gpuprims.sum(x, axis=1, out=torch.empty(5, device="cuda"))
    with pytest.raises(ValueError, match="same device"):
        gpuprims.sum(x, axis=1, out=torch.empty(4))
    with pytest.raises(TypeError, match="does not require grad"):
        gpuprims.sum(x, axis=1, out=torch.empty(4, device="cuda", requires_grad=True))
    # numpy-like integer axes that are not Python ints take the general path and the same result
    np.testing.assert_array_equal(to_numpy(gpuprims.sum(x, axis=np.int64(1))), to_numpy(gpuprims.sum(x, axis=1)))


@pytest.mark.skipif(cupy is None, reason="cupy is not installed")
def test_cupy_stream_ordering():
    n = 1 << 22
    x = cupy.full((n,), np.nan, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    with cupy.cuda.Stream(non_blocking=True) as s:
        x[:] = 0.25
        r = gpuprims.sum(x)
    s.synchronize()
    assert float(r) == n * 0.25


def test_cuda_graph_capture(rng):
    need(TORCH_CUDA)
    x = torch.from_numpy(random_values(rng, 1 << 22, "float32")).cuda()
    out = torch.empty((), device="cuda")
    small = torch.from_numpy(random_values(rng, 1000, "float32")).cuda()
    out_small = torch.empty((), device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        gpuprims.sum(x, out=out)  # warm-up outside capture (first-use setup)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        gpuprims.sum(x, out=out)
        gpuprims.max(small, out=out_small)
    x.copy_(torch.from_numpy(random_values(rng, 1 << 22, "float32")).cuda())
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out.double(), x.double().sum(), rtol=1e-5, atol=1e-3)
    assert float(out_small) == float(small.max())


@pytest.mark.skipif(GPU_COUNT < 2, reason="needs two GPUs")
def test_second_gpu_and_mixed_devices(rng):
    a = random_values(rng, 10_000, "float32")
    x1 = torch.from_numpy(a).to("cuda:1")
    r = gpuprims.sum(x1)
    assert r.device == x1.device
    np.testing.assert_allclose(float(r), a.astype(np.float64).sum(), rtol=1e-5)
    with pytest.raises(ValueError, match="must be on the same device, got x on cuda:1 and out on cuda:0"):
        gpuprims.sum(x1, out=torch.empty((), device="cuda:0"))


# ---------------------------------------------------------------------------------------------
# sizes beyond 2^31, errors


@pytest.mark.big
def test_beyond_2_31_elements():
    need(TORCH_CUDA)
    n = 2**31 + 5
    x = torch.randint(-3, 4, (n,), dtype=torch.int8, device="cuda")
    expected = int(torch.sum(x, dtype=torch.int64))
    for algorithm in ("auto", "warp_shuffle", "atomic_per_block"):
        assert int(gpuprims.sum(x, algorithm=algorithm)) == expected, algorithm
    assert int(gpuprims.max(x)) == 3 and int(gpuprims.min(x)) == -3
    rows = x[: 2**31].view(2, 2**30)
    torch.testing.assert_close(gpuprims.sum(rows, axis=1), rows.sum(dim=1, dtype=torch.int64))
    del x
    h = torch.full((n,), 0.5, dtype=torch.float16, device="cuda")
    assert float(gpuprims.sum(h, dtype="float64")) == n * 0.5
    del h
    f = torch.rand(n, dtype=torch.float32, device="cuda")  # [0, 1): the extremes planted past 2^31
    f[n - 3], f[n - 2] = 2.0, -1.0
    assert float(gpuprims.max(f)) == 2.0 and float(gpuprims.min(f)) == -1.0
    f[n - 1] = float("nan")
    assert np.isnan(float(gpuprims.max(f))) and np.isnan(float(gpuprims.min(f)))
    del f
    torch.cuda.empty_cache()


def test_out_of_memory_is_memory_error():
    with pytest.raises(MemoryError, match="cudaErrorMemoryAllocation"):
        gpuprims.DeviceArray([1 << 50], "float32", 0)
    assert float(gpuprims.sum(torch.ones(10, device="cuda"))) == 10.0  # the next call succeeds


def test_sticky_error_is_fatal_and_latched():
    """An illegal address surfaces as CudaFatalError (GPUPRIMS_SYNC=1) and later calls fail fast."""
    code = textwrap.dedent("""
        import gpuprims
        from gpuprims import _C
        bogus = (0x7F0000000000, "float32", (1 << 20,), None, True, 0, True)  # unmapped device address
        out = gpuprims.DeviceArray([], "float32", 0)
        view = _C.ImportedArray.from_capsule(out.__dlpack__(stream=-1), "t", "out")
        try:
            _C.reduce(bogus, view, "sum", None, "auto", 0)
        except gpuprims.CudaFatalError as e:
            print("FATAL1", e)
        try:
            _C.reduce(bogus, view, "sum", None, "auto", 0)
        except gpuprims.CudaFatalError as e:
            print("FATAL2", e)
    """)
    env = dict(os.environ, GPUPRIMS_SYNC="1")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    # Which sticky error a wild address raises depends on what the driver maps near it and on the
    # instruction that touched it (cudaErrorIllegalAddress until session 51; on the H200 of session
    # 52's device run 2, cudaErrorInvalidAddressSpace from the same call): CudaFatalError, raised
    # only for sticky errors, names one, and the next call names the same one, latched.
    first = re.search(r"FATAL1 reduce: (cudaError\w+) ", p.stdout)
    assert first, p.stdout + p.stderr
    assert f"FATAL2 reduce: an earlier {first.group(1)} lost the CUDA context" in p.stdout, p.stdout


# ---------------------------------------------------------------------------------------------
# the compute-sanitizer selection (scripts/gpu_check.sh runs `-k sanitize` under memcheck and
# racecheck): every kernel instantiation family at small sizes, edges and odd layouts


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
def test_sanitize_small(rng, algorithm):
    need(TORCH_CUDA)
    for dtype in ("bool", "int8", "uint16", "int64", "float16", "bfloat16", "float32", "float64"):
        for op in OPS:
            for n in (0, 1, 33, 4097):
                if n == 0 and op in ("min", "max"):
                    continue
                check(TORCH_CUDA, values_for(rng, n, dtype, op), dtype, op, algorithm=algorithm)
            a = values_for(rng, 3 * 257 * 5, dtype, op).reshape(3, 257, 5)
            for axis in (0, 1, 2, (0, 2)):
                check(TORCH_CUDA, a, dtype, op, axis, algorithm=algorithm)
            b = values_for(rng, 2 * 3 * 600, dtype, op).reshape(2, 3, 600)
            check(TORCH_CUDA, b, dtype, op, (0, 2), algorithm=algorithm)  # two steps: runs of 600
    x = TORCH_CUDA.make(random_values(rng, 999, "float16"), "float16")
    for k in (1, 3):
        got = float(to_numpy(gpuprims.sum(x[k:], dtype="float64", algorithm=algorithm)))
        np.testing.assert_allclose(got, to_numpy(x[k:]).astype(np.float64).sum(), rtol=1e-9)
    big = torch.from_numpy(random_values(rng, 1 << 18, "float32")).cuda()  # several blocks per row
    np.testing.assert_allclose(float(gpuprims.sum(big, dtype="float64", algorithm=algorithm)),
                               big.double().sum().item(), rtol=1e-9)


def test_single_pass_counters_across_streams_and_sizes(rng):
    """Stream-kept completion tickets: back-to-back launches of every shape on several streams,
    exact integer results (a ticket left non-zero would drop or double a row)."""
    need(TORCH_CUDA)
    streams = [torch.cuda.Stream() for _ in range(3)]
    cases = []
    for i in range(120):
        shape = (int(rng.integers(1, 5)), int(rng.integers(1, 300_000))) if i % 2 else \
            (int(rng.integers(1, 40_000)), int(rng.integers(1, 64)))
        x = torch.from_numpy(rng.integers(-50, 50, size=shape, dtype=np.int32)).cuda()
        cases.append((x, i % 3, i % 4 == 0))
    torch.cuda.synchronize()
    results = []
    for x, si, along_rows in cases:
        with torch.cuda.stream(streams[si]):
            axis = 1 if along_rows else 0
            results.append((gpuprims.sum(x, axis=axis), x.sum(dim=axis, dtype=torch.int64),
                            gpuprims.sum(x), x.sum(dtype=torch.int64)))
    torch.cuda.synchronize()
    for got_axis, want_axis, got_all, want_all in results:
        assert torch.equal(got_axis, want_axis) and torch.equal(got_all, want_all)


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
def test_narrow_integer_sums_full_range(rng, algorithm):
    """Sums of 1- and 2-byte integers over their whole range (the vector paths add each 16-byte vector
    by dot products with 1s: signed bytes and halves must sign-extend, unsigned ones not), aligned
    and misaligned (x[3:]), exactly numpy's, default and wrapped results."""
    need(TORCH_CUDA)
    n = 2**20 + 7 if algorithm != "thread_per_output" else 4097
    for dtype in ("int8", "uint8", "int16", "uint16", "bool"):
        if dtype == "bool":
            a = rng.random(n) < 0.7
        else:
            info = np.iinfo(dtype)
            a = rng.integers(int(info.min), int(info.max), size=n, endpoint=True).astype(dtype)
        x = torch.from_numpy(a).cuda()
        for view, ref in ((x, a), (x[3:], a[3:])):
            got = to_numpy(gpuprims.sum(view, algorithm=algorithm))
            assert int(got) == int(np.sum(ref)), (dtype, len(ref))
            if dtype != "bool":
                assert int(to_numpy(gpuprims.sum(view, dtype=dtype, algorithm=algorithm))) == \
                    int(np.sum(ref, dtype=dtype)), (dtype, "wrapped")


@pytest.mark.parametrize("algorithm", ("auto",) + VARIANTS)
def test_narrow_integer_results_wrap_like_numpy(rng, algorithm):
    """Narrow integer results (dtype=int32, uint16, ...) carry numpy's wrapped bits."""
    need(TORCH_CUDA)
    n = 70_001 if algorithm != "thread_per_output" else 4097
    a = rng.integers(-2**31, 2**31 - 1, size=n, dtype=np.int64).astype(np.int32)
    x = torch.from_numpy(a).cuda()
    for dtype in ("int32", "uint32", "int16", "uint8"):
        got = to_numpy(gpuprims.sum(x, dtype=dtype, algorithm=algorithm))
        assert got.dtype == np.dtype(dtype) and int(got) == int(np.sum(a, dtype=dtype)), dtype
        got = to_numpy(gpuprims.prod(x[:1000], dtype=dtype, algorithm=algorithm))
        assert int(got) == int(np.prod(a[:1000], dtype=dtype)), dtype
    b = rng.integers(0, 256, size=n, dtype=np.uint8)
    assert int(to_numpy(gpuprims.sum(torch.from_numpy(b).cuda(), dtype="uint16", algorithm=algorithm))) == \
        int(np.sum(b, dtype=np.uint16))
