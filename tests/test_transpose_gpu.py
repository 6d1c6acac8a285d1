"""transpose on the GPU: every variant, element size and permutation against torch's permute +
contiguous bit for bit, into poisoned outputs; views of any strides and alignment, the row and
memcpy paths, out= layouts, frameworks, streams, graphs, sizes beyond 2^31 elements."""
from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from conftest import ALL_DTYPES, Framework, cupy, framework_params, random_values, to_numpy, torch
from test_transpose import ALGORITHMS

import gpuprims

pytestmark = pytest.mark.gpu
TORCH_CUDA = Framework("torch", "cuda")
POISON = {1: 0x5A, 2: 0x5A5A, 4: 0x5A5A5A5A, 8: 0x5A5A5A5A5A5A5A5A}
SIGNED = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64} if torch is not None else {}


def need(fw=TORCH_CUDA):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed with GPU support")


def as_bits(t):
    """The tensor's bit patterns as signed integers of its element size (torch.equal on NaNs)."""
    return t.view(SIGNED[t.element_size()]) if t.dtype != torch.bool else t.view(torch.int8)


def cuda(rng, shape, dtype):
    need()
    return TORCH_CUDA.make(random_values(rng, int(np.prod(shape)), dtype).reshape(shape), dtype)


def poisoned(shape, like):
    out = torch.empty(shape, dtype=like.dtype, device=like.device)
    as_bits(out).fill_(POISON[out.element_size()])
    return out


def check(x, axes=None, algorithm="auto", out=None):
    """transpose(x) == torch's permute + contiguous, bit for bit, written over poison."""
    perm = tuple(range(x.ndim - 1, -1, -1)) if axes is None else tuple(a % x.ndim for a in axes)
    want = x.permute(perm).contiguous()
    if out is None:
        out = poisoned(want.shape, x)
    got = gpuprims.transpose(x, axes, out=out, algorithm=algorithm)
    assert got is out
    assert torch.equal(as_bits(out), as_bits(want)), (tuple(x.shape), x.stride(), axes, algorithm)
    return out


SHAPES_2D = ((1, 1), (1, 40), (40, 1), (31, 33), (32, 32), (33, 31), (64, 64), (65, 127), (128, 128), (129, 255),
             (1000, 3), (3, 1000), (257, 4099), (260, 516), (516, 260), (257, 516), (516, 257))
# (260, 516) and (516, 260): interior and edge word tiles; (257, 516) and (516, 257): words on one side only


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_variant_dtype_2d(rng, algorithm, dtype):
    for shape in SHAPES_2D:
        check(cuda(rng, shape, dtype), algorithm=algorithm)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", ("uint8", "bfloat16", "float32", "float64"))
def test_every_permutation_4d(rng, algorithm, dtype):
    x = cuda(rng, (5, 66, 7, 68), dtype)
    for axes in itertools.permutations(range(4)):
        check(x, axes, algorithm)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", ("uint8", "int16", "float32", "int64"))
def test_views_of_any_strides_and_alignment(rng, algorithm, dtype):
    base = cuda(rng, (130, 260), dtype)
    flat = cuda(rng, (64 * 130 + 1,), dtype)
    views = (base[1:, 1:], base[:, 1:-1], base[::2, ::3], base.flip(0), base.flip(1), base.t(),
             base[:-2, :-3],  # rows of whole words, the last word cut at the i edge
             flat[1:].view(64, 130), flat[1:].view(130, 64)[:, 2:],  # misaligned by one element
             base[:1].expand(300, 260), base[:, :1].expand(130, 70))  # zero strides
    for v in views:
        check(v, algorithm=algorithm)
        check(v.unsqueeze(1), (2, 1, 0), algorithm=algorithm)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", ("uint8", "float16", "float32", "float64"))
def test_rows_and_memcpy_paths(rng, algorithm, dtype):
    x = cuda(rng, (9, 11, 1030), dtype)
    check(x, (1, 0, 2), algorithm)             # long rows, 16-byte aligned: vector rows
    check(x[:, :, 1:], (1, 0, 2), algorithm)   # misaligned rows: element rows
    check(x[:, :, :5], (1, 0, 2), algorithm)   # short rows of elements
    check(x[:, :, :64], (1, 0, 2), algorithm)  # short rows of vectors (attention heads)
    check(x, (0, 1, 2), algorithm)             # a contiguous copy: one cudaMemcpyAsync
    check(x.flatten().flip(0), None, algorithm)  # one row of step -1
    check(x[:, :, ::2], (0, 1, 2), algorithm)  # rows of step 2


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_out_of_any_strides(rng, algorithm):
    x = cuda(rng, (70, 90), "float32")
    check(x, algorithm=algorithm, out=poisoned((70, 90), x).t())      # F-order out: merges into a copy
    buf = poisoned((200, 200), x)
    check(x, algorithm=algorithm, out=buf[5:95, 3:143:2])               # strided out, rest untouched
    assert torch.all(as_bits(buf[:5]) == as_bits(poisoned((1,), x))[0])
    check(x, algorithm=algorithm, out=poisoned((70, 90), x).flip(0).t())  # negative destination stride


@pytest.mark.parametrize("fw", framework_params("cuda"))
def test_frameworks_keep_their_type(rng, fw):
    need(fw)
    a = random_values(rng, 3 * 40 * 50, "float32").reshape(3, 40, 50)
    got = gpuprims.transpose(fw.make(a), (2, 0, 1))
    assert fw.is_native(got)
    np.testing.assert_array_equal(to_numpy(got), np.transpose(a, (2, 0, 1)))


def test_empty_and_single_element(rng):
    x = cuda(rng, (5, 7), "float32")
    for v in (x[:0], x[:, :0], x[:1, :1], x[0, 0]):
        check(v)


def test_dimensions_that_do_not_merge(rng):
    """Reversed axes of a (2,) * n array merge nowhere: 18 dimensions run (a tile plane and 16
    batch dimensions), 19 are a ValueError naming the limit."""
    x = cuda(rng, (2,) * 18, "float32")
    check(x)
    with pytest.raises(ValueError, match=r"transpose: argument 'axes': .* at most 16 are supported"):
        gpuprims.transpose(cuda(rng, (2,) * 19, "float32"))


def test_torch_side_stream_ordering(rng):
    """Issued on a side stream right behind a long kernel that writes x: the right answer, and the
    call returns while the stream is still busy (no host synchronization)."""
    need()
    x = torch.zeros(4096, 4096, device="cuda")
    out = torch.empty(4096, 4096, device="cuda")
    gpuprims.transpose(x[:64, :64])  # first launch (module loading) outside the timing
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(300_000_000)
        x.copy_(torch.arange(4096 * 4096, device="cuda", dtype=torch.float32).view(4096, 4096))
        t0 = time.perf_counter()
        gpuprims.transpose(x, out=out)
        elapsed = time.perf_counter() - t0
        busy = not side.query()
    torch.cuda.synchronize()
    assert busy and elapsed < 0.05, (busy, elapsed)
    assert torch.equal(out, x.t())


@pytest.mark.skipif(cupy is None, reason="cupy is not installed")
def test_cupy_stream(rng):
    x = cupy.zeros((300, 500), dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    with cupy.cuda.Stream(non_blocking=True) as s:
        x[:] = cupy.arange(300 * 500, dtype=cupy.float32).reshape(300, 500)
        r = gpuprims.transpose(x)
    s.synchronize()
    assert bool((r == x.T).all())


def test_cuda_graph_capture(rng):
    need()
    x = torch.rand(500, 300, device="cuda")
    outs = [torch.empty(300, 500, device="cuda"), torch.empty(500, 300, device="cuda")]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        gpuprims.transpose(x, out=outs[0])
        gpuprims.transpose(x, (0, 1), out=outs[1])
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        gpuprims.transpose(x, out=outs[0])
        gpuprims.transpose(x, (0, 1), out=outs[1])  # the memcpy path as a graph node
    x.copy_(torch.rand(500, 300, device="cuda"))
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(outs[0], x.t()) and torch.equal(outs[1], x)


@pytest.mark.big
@pytest.mark.parametrize("algorithm", ("auto", "smem_padded", "packed"))
# odd sides: no words (auto: elements on both sides; packed: smem_padded); multiples of 4: words
@pytest.mark.parametrize("rows, cols", ((46349, 46351), (46348, 46352)))
def test_beyond_2_31_elements(algorithm, rows, cols):
    need()  # rows x cols > 2^31 bytes: offsets past 2^31
    x = torch.randint(0, 255, (rows, cols), dtype=torch.uint8, device="cuda")
    out = gpuprims.transpose(x, algorithm=algorithm)
    assert out.shape == (cols, rows)
    for r in (0, 1, rows // 2, rows - 2, rows - 1):
        assert torch.equal(out[:, r], x[r])
    for c in (0, cols // 3, cols - 1):
        assert torch.equal(out[c], x[:, c])
    del out
    torch.cuda.empty_cache()


# ---------------------------------------------------------------------------------------------
# the selection scripts/gpu_check.sh runs under compute-sanitizer (memcheck, racecheck)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_sanitize_transpose(rng, algorithm):
    for dtype in ("uint8", "bfloat16", "float32", "float64"):
        x = cuda(rng, (67, 131), dtype)
        check(x, algorithm=algorithm)
        check(x[1:, 1:], algorithm=algorithm)
        check(x.view(67, 1, 131).expand(67, 3, 131), (2, 1, 0), algorithm)
        check(cuda(rng, (4, 1030), dtype), (1, 0), algorithm)
        check(cuda(rng, (3, 4, 1030), dtype), (1, 0, 2), algorithm)
