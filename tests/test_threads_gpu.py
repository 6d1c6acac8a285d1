"""Calls from several host threads at once. The bindings release the GIL while an op enqueues its
kernels, so two threads' launch sequences interleave on the host; where they share a stream (torch's
and CuPy's default stream is one stream for every thread) the ops whose second launch reads what
the first left in the stream's persistent state (the window reduce's partials, segmented_reduce's
list of long segments) must still each read their own, and the ops that take the stream's counters
for one launch (the bulk-copy reduce's and the column tiles' completion tickets, warptile's
Stream-K flags) must not lose them to another thread's call. Every result is compared bitwise with
the same call made alone (these ops are deterministic) and with a float64 reference. Skipped
without a GPU."""
from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest
from conftest import Framework, torch

import gpuprims

pytestmark = pytest.mark.gpu
TORCH_CUDA = Framework("torch", "cuda")
THREADS = 8
CALLS = 40


def need_torch():
    if not TORCH_CUDA.available():
        pytest.skip("torch is not installed with GPU support")


def run_in_threads(work):
    """work(t) in THREADS threads started together; the first exception is raised here."""
    errors = []
    start = threading.Barrier(THREADS)

    def body(t):
        try:
            start.wait()
            work(t)
        except BaseException as e:  # noqa: BLE001 (re-raised below, in the test's thread)
            errors.append(e)

    threads = [threading.Thread(target=body, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


def thread_streams(shared_stream):
    """None (every thread on the default stream), or a stream per thread ordered after the work
    already on the current stream (the poisoned outputs' fills): torch's streams do not wait for the
    default stream by themselves, so without it a late fill overwrites a result (session 30 run 1)."""
    if shared_stream:
        return None
    streams = [torch.cuda.Stream() for _ in range(THREADS)]
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
    return streams


def on_stream(streams, t):
    return torch.cuda.stream(streams[t]) if streams else contextlib.nullcontext()


def threads_match_alone(shared_stream, inputs, call, shape):
    """call(inputs[t], out) into a NaN-poisoned float32 out of `shape`, made once alone per input,
    then CALLS times from each of THREADS threads (inputs[t] in thread t, on the default stream or
    each on its own); every threaded result must equal the one made alone bitwise. Returns the
    results made alone, for the caller's float64 check."""
    alone = []
    for inp in inputs:
        alone.append(torch.full(shape, float("nan"), device="cuda"))
        call(inp, alone[-1])
    outs = [torch.full((CALLS, *shape), float("nan"), device="cuda") for _ in range(THREADS)]
    streams = thread_streams(shared_stream)

    def work(t):
        with on_stream(streams, t):
            for k in range(CALLS):
                call(inputs[t], outs[t][k])  # out=: the general path, GIL released

    run_in_threads(work)
    torch.cuda.synchronize()
    for t in range(THREADS):
        assert torch.equal(outs[t], alone[t].expand(CALLS, *shape)), t
    return alone


def assert_near(got, ref, magnitude, rel):
    """|got - ref| <= rel * magnitude elementwise (ref and magnitude in float64)."""
    assert np.all(np.abs(got.double().cpu().numpy() - ref) <= rel * magnitude)


@pytest.mark.parametrize("algorithm", ("window", "bulk_copy"))
@pytest.mark.parametrize("shared_stream", (True, False), ids=("default_stream", "own_streams"))
def test_long_sums_from_threads(shared_stream, algorithm):
    """Full sums of a MiB and more, auto's two choices on sm_90: window (two launches: block partials
    in the stream's region, then their combination) and bulk_copy (one launch whose last block,
    found by the stream's ticket counter, combines the partials; vectorized before sm_90)."""
    need_torch()
    gen = torch.Generator(device="cuda").manual_seed(2901)
    xs = [torch.randn((1 << 20) + 37, device="cuda", generator=gen) for _ in range(THREADS)]
    alone = threads_match_alone(
        shared_stream, xs, lambda x, out: gpuprims.sum(x, out=out, algorithm=algorithm), ())
    for x, s in zip(xs, alone):
        x64 = x.double()
        assert_near(s, x64.sum().item(), x64.abs().sum().item(), 1e-5)


@pytest.mark.parametrize("shared_stream", (True, False), ids=("default_stream", "own_streams"))
def test_column_sums_from_threads(shared_stream):
    """column_tiles splits 8192 x 500 column sums over 128 blocks per column tile (one launch; the
    last block of a tile, found by the stream's ticket counter, combines its partials)."""
    need_torch()
    gen = torch.Generator(device="cuda").manual_seed(2903)
    xs = [torch.randn((8192, 500), device="cuda", generator=gen) for _ in range(THREADS)]
    alone = threads_match_alone(
        shared_stream, xs, lambda x, out: gpuprims.sum(x, axis=0, out=out, algorithm="column_tiles"), (500,))
    for x, s in zip(xs, alone):
        x64 = x.double().cpu().numpy()
        assert_near(s, x64.sum(axis=0), np.abs(x64).sum(axis=0), 1e-5)


@pytest.mark.parametrize("shared_stream", (True, False), ids=("default_stream", "own_streams"))
def test_streamk_matmuls_from_threads(shared_stream):
    """warptile splits the K loops of a batch with fewer 128 x 128 tiles than blocks over its grid
    (Stream-K: partial tiles in scratch, flags in the stream's counters, added in a fixed order)."""
    need_torch()
    gen = torch.Generator(device="cuda").manual_seed(2904)
    pairs = [(torch.randn((3, 300, 1012), device="cuda", generator=gen),
              torch.randn((3, 1012, 500), device="cuda", generator=gen)) for _ in range(THREADS)]
    def product(ab, out):
        gpuprims.matmul(*ab, out=out, algorithm="warptile")

    alone = threads_match_alone(shared_stream, pairs, product, (3, 300, 500))
    for (a, b), c in zip(pairs, alone):
        a64, b64 = a.double().cpu().numpy(), b.double().cpu().numpy()
        assert_near(c, a64 @ b64, np.abs(a64) @ np.abs(b64), 1e-5)


@pytest.mark.parametrize("shared_stream", (True, False), ids=("default_stream", "own_streams"))
def test_segmented_sums_with_long_segments_from_threads(shared_stream):
    """segmented_reduce's block path lists segments of more than 16 rounds for a second kernel
    through the stream's counters: each thread's long segment must be read from its own x."""
    need_torch()
    lengths = [4096] * 190 + [1 << 18] + [4096] * 7 + [1000]  # averages over 3072 items: blocks
    offsets = torch.tensor(np.concatenate(([0], np.cumsum(lengths))), device="cuda")
    bounds = offsets.cpu().numpy()
    gen = torch.Generator(device="cuda").manual_seed(2902)
    xs = [torch.randn(int(bounds[-1]), device="cuda", generator=gen) for _ in range(THREADS)]
    alone = threads_match_alone(
        shared_stream, xs, lambda x, out: gpuprims.segmented_reduce(x, offsets, out=out), (len(lengths),))
    for x, s in zip(xs, alone):
        x64 = x.double().cpu().numpy()
        starts = bounds[:-1]
        assert_near(s, np.add.reduceat(x64, starts), np.add.reduceat(np.abs(x64), starts), 1e-5)
