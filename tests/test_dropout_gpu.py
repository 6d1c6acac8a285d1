"""bias_dropout_add on the GPU: the mask bit for bit against the documented mapping (and the CPU
reference), every dtype, vector and element-wise paths, odd sizes, views, frameworks, streams,
determinism and indices beyond 2^31. Skipped (with the reason) without a GPU."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import Framework, framework_params, to_numpy, torch
from dropout_reference import keep_mask, reference, tolerance
from norms_reference import FLOATS, round_to

import gpuprims

pytestmark = pytest.mark.gpu
TORCH_CUDA = Framework("torch", "cuda")


def need(fw=TORCH_CUDA):
    if not fw.available():
        pytest.skip(f"{fw.name} is not installed with GPU support")


def check(fw, shape, dtype, rng, p=0.3, seed=5, offset=11, view=None, bias=True, training=True):
    a = round_to(rng.standard_normal(shape), dtype)
    r = round_to(rng.standard_normal(shape), dtype)
    x, res = fw.make(a, dtype), fw.make(r, dtype)
    if view is not None:
        x, res = view(x), view(res)
    n = tuple(x.shape)[-1]
    b = fw.make(round_to(rng.standard_normal(n), dtype), dtype) if bias else None
    got = gpuprims.bias_dropout_add(x, b, res, p, seed=seed, offset=offset, training=training)
    want, keep, mag = reference(x, b, res, p, seed, offset, training)
    g = to_numpy(got).astype(np.float64)
    np.testing.assert_array_equal(g[~keep], to_numpy(res).astype(np.float64)[~keep])  # dropped: exactly residual
    assert np.all(np.abs(g - want) <= tolerance(dtype, want, mag))
    return got


@pytest.mark.parametrize("dtype", FLOATS)
def test_every_dtype_and_size_matches_the_mapping(rng, dtype):
    need()
    for shape in ((1,), (3,), (4, 7), (5, 64), (3, 1001), (2, 4096), (300, 40)):
        for p in (0.0, 0.1, 0.5, 1.0):
            check(TORCH_CUDA, shape, dtype, rng, p=p)
        check(TORCH_CUDA, shape, dtype, rng, bias=False, training=False)


def test_views_take_the_element_wise_path(rng):
    need()
    for view in (lambda v: v[:, 1:], lambda v: v.T, lambda v: v[::2, ::3]):
        check(TORCH_CUDA, (40, 66), "float32", rng, view=view)
        check(TORCH_CUDA, (40, 66), "bfloat16", rng, view=view)


def test_matches_the_cpu_reference_bit_for_bit_where_dropped(rng):
    need()
    x = torch.randn(257, 1000, device="cuda")
    r = torch.randn(257, 1000, device="cuda")
    gpu = gpuprims.bias_dropout_add(x, None, r, 0.4, seed=2**40 + 3, offset=2**33)
    cpu = gpuprims.bias_dropout_add(x.cpu(), None, r.cpu(), 0.4, seed=2**40 + 3, offset=2**33)
    np.testing.assert_array_equal((gpu.cpu() == r.cpu()).numpy(), (cpu == r.cpu()).numpy())
    torch.testing.assert_close(gpu.cpu(), cpu, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fw", framework_params("cuda"))
def test_frameworks(fw, rng):
    need(fw)
    for dtype in FLOATS:
        if fw.name in ("cupy", "cuda.core") and dtype == "bfloat16":
            continue
        check(fw, (17, 160), dtype, rng)


def test_torch_side_stream_ordering():
    need()
    x = torch.full((1024, 4096), float("nan"), device="cuda")
    r = torch.zeros(1024, 4096, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        x.fill_(2.0)
        out = gpuprims.bias_dropout_add(x, None, r, 0.5, seed=1, offset=0)
    torch.cuda.synchronize()
    assert set(torch.unique(out).tolist()) == {0.0, 4.0}


def test_bitwise_reproducible():
    need()
    x = torch.randn(333, 4096, device="cuda", dtype=torch.bfloat16)
    r = torch.randn(333, 4096, device="cuda", dtype=torch.bfloat16)
    first = gpuprims.bias_dropout_add(x, None, r, 0.1, seed=8, offset=0)
    for _ in range(3):
        assert torch.equal(gpuprims.bias_dropout_add(x, None, r, 0.1, seed=8, offset=0), first)


@pytest.mark.big
def test_beyond_2_31_elements():
    """Element indices beyond 2^31 (and i // 4 beyond 2^29): the tail's mask against the mapping."""
    need()
    n = (1 << 31) + 12
    x = torch.ones(n, device="cuda", dtype=torch.bfloat16)
    r = torch.zeros(n, device="cuda", dtype=torch.bfloat16)
    out = gpuprims.bias_dropout_add(x, None, r, 0.5, seed=77, offset=3)
    tail = (out[-4000:] != 0).cpu().numpy()
    np.testing.assert_array_equal(tail, keep_mask(4000, 0.5, 77, 3, first=n - 4000))


def test_sanitize_dropout_small(rng):
    need()
    for shape in ((3, 64), (5, 33), (1, 7)):
        check(TORCH_CUDA, shape, "float32", rng)
        check(TORCH_CUDA, shape, "float64", rng)
        check(TORCH_CUDA, shape, "float16", rng, view=lambda v: v[:, 1:])
