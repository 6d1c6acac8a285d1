"""Is the per-call cost of a small gpuprims.sum host-bound or device-bound? (GPU machine)

    python3 bench/tune/host_queue.py

The family's benchmark times 2000 back-to-back calls per synchronization. If a call's kernels take
longer on the GPU than the host takes to enqueue them, the launch queue fills and that loop runs at
the GPU's rate. This separates the two for gpuprims.sum and torch.sum on 1024 float32:
  host: enqueue time per call of batches of 100 calls issued while the GPU is held busy by a
        sleep kernel (the queue never fills, the GPU never waits for us), the sync not timed;
  GPU:  time per call of 500 calls executed back to back, all queued behind a sleep kernel, from
        events around them;
  loop: the benchmark's own method (2000 calls, then one synchronization).
"""
import statistics
import time

import torch

import gpuprims

x = torch.randn(1024, device="cuda")
out = torch.empty((), device="cuda")
fns = {"gpuprims.sum(x)": lambda: gpuprims.sum(x), "gpuprims.sum(x, out=out)": lambda: gpuprims.sum(x, out=out),
       "torch.sum(x)": lambda: torch.sum(x)}
SLEEP_CYCLES_PER_CALL = 40_000  # ~20 us of GPU sleep per queued call: longer than its enqueue


def host_enqueue_us(f, batch=100, rounds=30):
    samples = []
    for _ in range(rounds):
        torch.cuda._sleep(SLEEP_CYCLES_PER_CALL * batch)
        t0 = time.perf_counter()
        for _ in range(batch):
            f()
        samples.append((time.perf_counter() - t0) / batch * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def gpu_us(f, calls=500, rounds=5):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(rounds):
        torch.cuda._sleep(SLEEP_CYCLES_PER_CALL * calls)
        start.record()
        for _ in range(calls):
            f()
        stop.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(stop) / calls * 1e3)
    return statistics.median(samples)


def loop_us(f, calls=2000, rounds=9):
    samples = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples)


for f in fns.values():
    for _ in range(300):
        f()
torch.cuda.synchronize()
for name, f in fns.items():
    print(f"{name:26s} host enqueue {host_enqueue_us(f):6.2f} us/call   GPU {gpu_us(f):6.2f} us/call   "
          f"2000-call loop {loop_us(f):6.2f} us/call")
