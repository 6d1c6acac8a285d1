"""python -m gpuprims.demo: a few reductions on this machine's GPU, checked against numpy.

Uses torch (or CuPy) CUDA arrays when a GPU is visible; otherwise numpy arrays, which run the C++
CPU reference, and says so.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import gpuprims
from gpuprims._variants import gpu_status


def _device_array(a: np.ndarray):
    try:
        import torch

        if torch.cuda.is_available():
            return torch.from_numpy(a).cuda(), "torch", lambda r: r.cpu().numpy(), torch.cuda.synchronize
    except ImportError:
        pass
    try:
        import cupy

        return cupy.asarray(a), "cupy", cupy.asnumpy, cupy.cuda.Device().synchronize
    except ImportError:
        return None


def main() -> int:
    usable, reason = gpu_status()
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1 << 24).astype(np.float32)
    found = _device_array(a) if usable else None
    if found is None:
        where = "the CPU reference: " + (reason if not usable else "neither torch nor CuPy can hold GPU arrays")
        x, framework, to_host, sync = a, "numpy", np.asarray, lambda: None
    else:
        x, framework, to_host, sync = found
        from gpuprims import _C

        where = f"the GPU (device 0, compute capability {'.'.join(map(str, _C.device_capability(0)))})"
    print(f"gpuprims {gpuprims.__version__}: running on {where}, with {framework} arrays of {a.size:,} float32")
    ref = a.astype(np.float64)
    for op, want in (("sum", ref.sum()), ("min", ref.min()), ("max", ref.max())):
        t0 = time.perf_counter()
        got = float(to_host(gpuprims.reduce(x, op)))
        sync()
        ms = (time.perf_counter() - t0) * 1e3
        print(f"  {op:4s} = {got:+.6e}   numpy float64: {want:+.6e}   ({ms:.2f} ms wall, first calls include setup)")
    rows = x.reshape(4096, -1) if framework != "numpy" else a.reshape(4096, -1)
    r = to_host(gpuprims.sum(rows, axis=1))
    err = np.abs(r - ref.reshape(4096, -1).sum(axis=1)).max()
    print(f"  row sums of a 4096 x {a.size // 4096} view: max |error| vs float64 = {err:.2e}")
    print("variants of reduce:", ", ".join(v.name for v in gpuprims.variants("reduce")))
    if found is None:
        print("No GPU was used: numpy arrays run the CPU reference. On a CUDA machine, pass torch, CuPy or JAX arrays.")
    else:
        print("Timings against CUB and torch: python -m gpuprims.bench reduce")
    return 0


if __name__ == "__main__":
    sys.exit(main())
