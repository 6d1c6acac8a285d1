# Host cost of small calls on CUDA torch tensors, next to torch's own op, in one process: reduce,
# the norms ops and scan through their C++ fast paths (_C.reduce_torch, _C.norm_forward_torch,
# _C.scan_torch) and through the general Python path, compact (Python path only), and
# gpuprims.torch's modules (inference and training forward). Then few-row sums (66 to 8448 rows of
# 1024 / 4096 float32) timed with CUDA events, as bench/tune/reduce_short_rows.py times them
# (docs/reduce.md, "Host cost of a small call").
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
mask = x > 0
flat_out = torch.empty(x.numel(), device="cuda")
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
    "norms": {
        "torch.softmax(x, -1)": lambda: torch.softmax(x, -1),
        "gpuprims.softmax(x) fast path": lambda: gpuprims.softmax(x),
        "gpuprims.softmax(x) general path": general(lambda: gpuprims.softmax(x)),
        "F.layer_norm(x, (1024,), w, b)": lambda: F.layer_norm(x, (1024,), w, b),
        "gpuprims.layer_norm(x, w, b) fast path": lambda: gpuprims.layer_norm(x, w, b),
        "gpuprims.layer_norm(x, w, b) general path": general(lambda: gpuprims.layer_norm(x, w, b)),
        "F.rms_norm(x, (1024,), w)": lambda: F.rms_norm(x, (1024,), w),
        "gpuprims.rms_norm(x, w) fast path": lambda: gpuprims.rms_norm(x, w),
        "gpuprims.rms_norm(x, w) general path": general(lambda: gpuprims.rms_norm(x, w)),
    },
    "scan": {
        "torch.cumsum(x, -1)": lambda: torch.cumsum(x, -1),
        "gpuprims.cumsum(x, axis=-1) fast path": lambda: gpuprims.cumsum(x, axis=-1),
        "gpuprims.cumsum(x, axis=-1) general path": general(lambda: gpuprims.cumsum(x, axis=-1)),
        # "auto" took the decoupled look-back for 64 rows of 1024 until session 41 (a tile-status
        # buffer allocated and cleared each call) and takes block_per_row since: both scratch-free
        # variants beside it (docs/scan.md, "Small scans take a block per row").
        "gpuprims.cumsum(x, axis=-1) block_per_row": lambda: gpuprims.cumsum(x, axis=-1, algorithm="block_per_row"),
        "gpuprims.cumsum(x, axis=-1) warp_per_row": lambda: gpuprims.cumsum(x, axis=-1, algorithm="warp_per_row"),
    },
    # Small compactions (no C++ fast path; the look-back over tile counts allocates and clears its
    # status buffer each call): with out= nothing synchronizes; without it both sides read the count.
    "compact": {
        "x[mask]": lambda: x[mask],
        "gpuprims.compact(x, mask)": lambda: gpuprims.compact(x, mask),
        "gpuprims.compact(x, mask, out=)": lambda: gpuprims.compact(x, mask, out=flat_out),
    },
}
modules = {"LayerNorm": (torch.nn.LayerNorm(1024), gtorch.LayerNorm(1024)),
           "RMSNorm": (torch.nn.RMSNorm(1024, eps=1e-6), gtorch.RMSNorm(1024, eps=1e-6)),
           "Softmax": (torch.nn.Softmax(-1), gtorch.Softmax(-1))}
groups["modules under torch.no_grad"] = {}
groups["modules, training forward (parameters require grad)"] = {}
for name, (theirs, ours) in modules.items():
    theirs, ours = theirs.cuda(), ours.cuda()
    for title in ("modules under torch.no_grad", "modules, training forward (parameters require grad)"):
        groups[title].update({f"torch.nn.{name}": lambda m=theirs: m(x), f"gpuprims.torch.{name}": lambda m=ours: m(x)})
for title, fns in groups.items():
    print(f"{title}, us a call (64 x 1024 float32):", flush=True)
    with torch.set_grad_enabled(title != "modules under torch.no_grad"):
        for name, us in host_us_per_call(fns, calls=1000, rounds=9).items():
            print(f"  {name:44s} {us:6.2f}", flush=True)

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
