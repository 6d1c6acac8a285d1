# Host cost of small calls on CUDA torch tensors, next to torch's own op, in one process: reduce along
# an axis through the C++ fast path (_C.reduce_torch) and through the general Python path, and the
# general path of the other families' common calls, to see where the interpreter time goes. Then
# few-row sums (66 to 8448 rows of 1024 / 4096 float32) timed with CUDA events, as
# bench/tune/reduce_short_rows.py times them (docs/reduce.md, "Host cost of a small call").
#   python3 bench/tune/host_axis_calls.py
import torch
import torch.nn.functional as F

import gpuprims
import gpuprims.torch as gtorch
from gpuprims import _interop
from gpuprims.bench._timing import host_us_per_call, median_ms
from gpuprims.bench.reduce import _buffers

props = torch.cuda.get_device_properties(0)
print(props.name, flush=True)
x = torch.randn(64, 1024, device="cuda")
w, b = torch.randn(1024, device="cuda"), torch.randn(1024, device="cuda")
row_out = torch.empty(64, device="cuda")
gpuprims.sum(x)  # installs the torch bridge
TENSOR = _interop.torch_tensor_type


def general(f):
    """f() with the C++ fast path switched off: the general Python path of the same call."""
    def call():
        _interop.torch_tensor_type = None
        try:
            return f()
        finally:
            _interop.torch_tensor_type = TENSOR
    return call


ln_torch, ln_ours = torch.nn.LayerNorm(1024, device="cuda"), gtorch.LayerNorm(1024).cuda()
groups = {
    "sum(x, axis=-1)": {
        "torch.sum(x, -1)": lambda: torch.sum(x, -1),
        "gpuprims fast path": lambda: gpuprims.sum(x, axis=-1),
        "gpuprims general path": general(lambda: gpuprims.sum(x, axis=-1)),
    },
    "sum(x, axis=-1, out=)": {
        "torch.sum(x, -1, out=)": lambda: torch.sum(x, -1, out=row_out),
        "gpuprims fast path": lambda: gpuprims.sum(x, axis=-1, out=row_out),
        "gpuprims general path": general(lambda: gpuprims.sum(x, axis=-1, out=row_out)),
    },
    "sum(x)": {
        "torch.sum(x)": lambda: torch.sum(x),
        "gpuprims fast path": lambda: gpuprims.sum(x),
        "gpuprims general path": general(lambda: gpuprims.sum(x)),
    },
    "other families (general path)": {
        "torch.cumsum(x, -1)": lambda: torch.cumsum(x, -1),
        "gpuprims.cumsum(x, axis=-1)": lambda: gpuprims.cumsum(x, axis=-1),
        "torch.softmax(x, -1)": lambda: torch.softmax(x, -1),
        "gpuprims.softmax(x)": lambda: gpuprims.softmax(x),
        "F.layer_norm(x, (1024,), w, b)": lambda: F.layer_norm(x, (1024,), w, b),
        "gpuprims.layer_norm(x, w, b)": lambda: gpuprims.layer_norm(x, w, b),
        "F.rms_norm(x, (1024,), w)": lambda: F.rms_norm(x, (1024,), w),
        "gpuprims.rms_norm(x, w)": lambda: gpuprims.rms_norm(x, w),
    },
}
with torch.no_grad():
    groups["other families (general path)"].update({
        "torch.nn.LayerNorm (no_grad)": lambda: ln_torch(x),
        "gpuprims.torch.LayerNorm (no_grad)": lambda: ln_ours(x),
    })
    for title, fns in groups.items():
        print(f"{title}, us a call (64 x 1024 float32):", flush=True)
        for name, us in host_us_per_call(fns, calls=1000, rounds=9).items():
            print(f"  {name:40s} {us:6.2f}", flush=True)

for rows in (66, 132, 528, 2112, 8448):
    for row in (1024, 4096):
        xs = [t.view(rows, row) for t in _buffers(torch, rows * row, torch.float32, props.L2_cache_size)]
        cur = [xs[0]]

        def rotate(i):
            cur[0] = xs[i % len(xs)]

        out = torch.empty(rows, device="cuda")
        t = {"torch": median_ms(lambda: torch.sum(cur[0], -1), before=rotate),
             "torch out=": median_ms(lambda: torch.sum(cur[0], -1, out=out), before=rotate),
             "auto": median_ms(lambda: gpuprims.sum(cur[0], axis=-1), before=rotate),
             "auto out=": median_ms(lambda: gpuprims.sum(cur[0], axis=-1, out=out), before=rotate),
             "auto general": median_ms(general(lambda: gpuprims.sum(cur[0], axis=-1)), before=rotate)}
        print(f"few rows ({rows}, {row}) float32 axis=-1, ms: " + ", ".join(f"{k} {v:.4f}" for k, v in t.items()) +
              f"; auto {t['torch'] / t['auto']:.3f}x torch, out= {t['torch out='] / t['auto out=']:.3f}x, "
              f"general {t['torch'] / t['auto general']:.3f}x", flush=True)
