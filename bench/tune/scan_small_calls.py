# Scans of rows that fit one block_per_row tile (up to 8192 items) but are too few for "auto"'s
# many-row warp_per_row and block_per_row rules (cpp/src/scan/dispatch.cpp), where auto took the
# decoupled look-back until session 41 (a tile-status buffer allocated and cleared on every call)
# and takes block_per_row or warp_per_row since, by what this probe measured. Each shape's
# variants against torch.cumsum in one process, two ways:
# - "event": CUDA-event medians of one call with out= preallocated, inputs rotated past L2 (the GPU
#   time, and the host time where the call is shorter than its enqueue);
# - "loop": microseconds a call over 1000 back-to-back calls without out= (what a model's loop sees:
#   enqueue, allocation and the kernels, overlapped).
#   python3 bench/tune/scan_small_calls.py
import torch

import gpuprims
from gpuprims.bench._timing import host_us_per_call, median_ms
from gpuprims.bench.reduce import _buffers

props = torch.cuda.get_device_properties(0)
print(props.name, f"{props.multi_processor_count} SMs", flush=True)
ALGORITHMS = ("auto", "block_per_row", "warp_per_row", "decoupled_lookback")
SHAPES = ((1, 1000), (1, 8192), (8, 2048), (64, 1024), (16, 8192), (256, 256), (500, 1024), (1000, 2048),
          (100, 4096), (250, 8192))

for dtype in (torch.float32, torch.float64):
    for rows, row in SHAPES:
        xs = [t.view(rows, row) for t in _buffers(torch, rows * row, dtype, props.L2_cache_size)]
        cur = [xs[0]]

        def rotate(i):
            cur[0] = xs[i % len(xs)]

        out = torch.empty_like(xs[0])
        ref = torch.cumsum(xs[0].double(), -1)
        event = {"torch": median_ms(lambda: torch.cumsum(cur[0], -1, out=out), before=rotate, reps=50)}
        loop = {"torch": lambda: torch.cumsum(xs[0], -1)}
        for algorithm in ALGORITHMS:
            out.fill_(float("nan"))
            gpuprims.cumsum(xs[0], axis=-1, algorithm=algorithm, out=out)
            err = ((out.double() - ref).abs() / (ref.abs() + 1)).max().item()
            assert err < (1e-4 if dtype == torch.float32 else 1e-12), (algorithm, rows, row, err)
            event[algorithm] = median_ms(lambda: gpuprims.cumsum(cur[0], axis=-1, algorithm=algorithm, out=out),
                                         before=rotate, reps=50)
            loop[algorithm] = lambda a=algorithm: gpuprims.cumsum(xs[0], axis=-1, algorithm=a)
        loop_us = host_us_per_call(loop, calls=1000, rounds=5)
        dname = str(dtype)[6:]
        print(f"({rows}, {row}) {dname} event us: " + ", ".join(f"{k} {1000 * v:.2f}" for k, v in event.items()),
              flush=True)
        print(f"({rows}, {row}) {dname} loop us:  " + ", ".join(f"{k} {v:.2f}" for k, v in loop_us.items()),
              flush=True)
        del xs, cur, out, ref
