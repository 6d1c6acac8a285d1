"""Calls from several host threads at once. The bindings release the GIL while an op enqueues its
kernels, so two threads' launch sequences interleave on the host; where they share a stream (torch's
and CuPy's default stream is one stream for every thread) the ops whose second launch reads what
the first left in the stream's persistent state (the window reduce's partials, the bulk-copy
reduce's completion tickets, segmented_reduce's list of long segments) must still each read their
own. Every result is compared bitwise with the same call made alone (both ops are deterministic)
and with a float64 reference. Skipped without a GPU."""
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


@pytest.mark.parametrize("algorithm", ("window", "bulk_copy"))
@pytest.mark.parametrize("shared_stream", (True, False), ids=("default_stream", "own_streams"))
def test_long_sums_from_threads(shared_stream, algorithm):
    """Full sums of a MiB and more, auto's two choices on sm_90: window (two launches: block partials
    in the stream's region, then their combination) and bulk_copy (one launch whose last block,
    found by the stream's ticket counter, combines the partials; vectorized before sm_90)."""
    need_torch()
    n = (1 << 20) + 37
    gen = torch.Generator(device="cuda").manual_seed(2901)
    xs = [torch.randn(n, device="cuda", generator=gen) for _ in range(THREADS)]
    alone = [gpuprims.sum(x, out=torch.empty((), device="cuda"), algorithm=algorithm) for x in xs]
    for x, s in zip(xs, alone):
        ref = x.double().sum().item()
        assert abs(s.item() - ref) <= 1e-5 * x.double().abs().sum().item()
    outs = [torch.full((CALLS,), float("nan"), device="cuda") for _ in range(THREADS)]
    streams = thread_streams(shared_stream)

    def work(t):
        with on_stream(streams, t):
            for k in range(CALLS):
                # out=: the general path, GIL released
                gpuprims.sum(xs[t], out=outs[t][k], algorithm=algorithm)

    run_in_threads(work)
    torch.cuda.synchronize()
    for t in range(THREADS):
        assert torch.equal(outs[t], alone[t].expand(CALLS)), (t, outs[t], alone[t])


@pytest.mark.parametrize("shared_stream", (True, False), ids=("default_stream", "own_streams"))
def test_segmented_sums_with_long_segments_from_threads(shared_stream):
    """segmented_reduce's block path lists segments of more than 16 rounds for a second kernel
    through the stream's counters: each thread's long segment must be read from its own x."""
    need_torch()
    lengths = [4096] * 190 + [1 << 18] + [4096] * 7 + [1000]  # averages over 3072 items: blocks
    offsets = torch.tensor(np.concatenate(([0], np.cumsum(lengths))), device="cuda")
    n = int(offsets[-1])
    gen = torch.Generator(device="cuda").manual_seed(2902)
    xs = [torch.randn(n, device="cuda", generator=gen) for _ in range(THREADS)]
    alone = [gpuprims.segmented_reduce(x, offsets) for x in xs]
    for x, s in zip(xs, alone):
        bounds = offsets.cpu().numpy()
        x64 = x.double().cpu().numpy()
        ref = np.add.reduceat(x64, bounds[:-1])
        mag = np.add.reduceat(np.abs(x64), bounds[:-1])
        assert np.all(np.abs(s.double().cpu().numpy() - ref) <= 1e-5 * mag)
    outs = [torch.full((CALLS, len(lengths)), float("nan"), device="cuda") for _ in range(THREADS)]
    streams = thread_streams(shared_stream)

    def work(t):
        with on_stream(streams, t):
            for k in range(CALLS):
                gpuprims.segmented_reduce(xs[t], offsets, out=outs[t][k])

    run_in_threads(work)
    torch.cuda.synchronize()
    for t in range(THREADS):
        assert torch.equal(outs[t], alone[t].expand(CALLS, -1)), t
