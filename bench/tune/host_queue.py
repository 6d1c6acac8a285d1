"""Is the per-call cost of a small gpuprims.sum host-bound or device-bound? (GPU machine)

    python3 bench/tune/host_queue.py

The family's benchmark times 2000 back-to-back calls per synchronization. If a call's kernel takes
longer on the GPU than the host takes to enqueue it, the launch queue fills and the loop runs at the
GPU's rate instead. This times the same calls with 50, 200 and 2000 calls per synchronization, and
the GPU's time per call from events around the loop, for gpuprims.sum and torch.sum.
"""
import statistics
import time

import torch

import gpuprims

x = torch.randn(1024, device="cuda")
fns = {"gpuprims.sum": lambda: gpuprims.sum(x), "torch.sum": lambda: torch.sum(x),
       "gpuprims.sum algorithm=vectorized": lambda: gpuprims.sum(x, algorithm="vectorized")}
for f in fns.values():
    for _ in range(500):
        f()
torch.cuda.synchronize()
start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
for calls in (50, 200, 2000):
    host = {name: [] for name in fns}
    gpu = {name: [] for name in fns}
    for _ in range(15):
        for name, f in fns.items():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            start.record()
            for _ in range(calls):
                f()
            stop.record()
            torch.cuda.synchronize()
            host[name].append((time.perf_counter() - t0) / calls * 1e6)
            gpu[name].append(start.elapsed_time(stop) / calls * 1e3)
    for name in fns:
        print(f"{calls:5d} calls/sync  {name:36s} host+sync {statistics.median(host[name]):6.2f} us/call   "
              f"GPU span {statistics.median(gpu[name]):6.2f} us/call")
