"""Where the host time of one small gpuprims.sum call goes, next to torch.sum (GPU machine).

    python3 bench/tune/host_overhead.py
"""
import timeit

import torch

import gpuprims
from gpuprims import _C, _interop
from gpuprims._dtypes import reduce_result_dtype

x = torch.randn(1024, device="cuda")
out = torch.empty((), device="cuda")
dev = torch.device("cuda", 0)
n = 20000


def us(f):
    for _ in range(200):
        f()
    torch.cuda.synchronize()
    t = min(timeit.repeat(f, number=n, repeat=5)) / n * 1e6
    torch.cuda.synchronize()
    return t


xin = _interop.prepare_input(x, None, "reduce")
obj, oarg = _interop.new_output(xin, (), "float32", "reduce")
xc = torch.randn(1)
xcin = _interop.prepare_input(xc, None, "reduce")
_, ocarg = _interop.new_output(xcin, (), "float32", "reduce")
proto = torch.empty((), device="cuda")
empty_like, raw_stream = torch.empty_like, torch._C._cuda_getCurrentRawStream


def minimal_sum(x=x):
    """The floor of this architecture: no checks, one allocation, one binding call."""
    o = empty_like(proto)
    _C.reduce((x.data_ptr(), "float32", x.shape, x.stride(), True, 0, False),
              (o.data_ptr(), "float32", (), None, True, 0, False), "sum", None, "auto", raw_stream(0))
    return o


rows = {
    "minimal_sum (floor)": minimal_sum,
    "_C.reduce on a 1-element CPU tensor": lambda: _C.reduce(xcin[3], ocarg, "sum", None, "auto", 0),
    "_C.cuda_device_count()": lambda: _C.cuda_device_count(),
    "gpuprims.sum(x)": lambda: gpuprims.sum(x),
    "gpuprims.sum(x, out=out)": lambda: gpuprims.sum(x, out=out),
    "torch.sum(x)": lambda: torch.sum(x),
    "torch.sum(x, 0, out=out)": lambda: torch.sum(x, 0, out=out),
    "prepare_input": lambda: _interop.prepare_input(x, None, "reduce"),
    "new_output": lambda: _interop.new_output(xin, (), "float32", "reduce"),
    "_C.reduce (launch)": lambda: _C.reduce(xin[3], oarg, "sum", None, "auto", xin[2]),
    "torch.empty(device=int)": lambda: torch.empty((), dtype=torch.float32, device=0),
    "torch.empty(device=x.device)": lambda: torch.empty((), dtype=torch.float32, device=x.device),
    "x.new_empty": lambda: x.new_empty(()),
    "torch.empty(device=cuda obj)": lambda: torch.empty((), dtype=torch.float32, device=dev),
    "torch.empty_like(out)": lambda: torch.empty_like(out),
    "result()": lambda: _interop.result(xin, obj),
    "torch current raw stream": lambda: torch._C._cuda_getCurrentRawStream(0),
    "x.data_ptr()+shape+stride": lambda: (x.data_ptr(), tuple(x.shape), x.stride()),
    "x.is_cuda + x.get_device()": lambda: (x.is_cuda, x.get_device()),
    "x.dtype": lambda: x.dtype,
    "x.shape + x.stride()": lambda: (x.shape, x.stride()),
    "x.numel() + x.is_contiguous()": lambda: (x.numel(), x.is_contiguous()),
    "_C.reduce_torch (no Python frames)": lambda: _C.reduce_torch(x, "sum", None, False, "auto", None),
    "gpuprims.reduce(x) (one frame more than sum)": lambda: gpuprims.reduce(x),
    "framework_of": lambda: _interop.framework_of(x, "reduce", "x"),
    "out.new_empty(())": lambda: out.new_empty(()),
    "_C.reduce (vectorized)": lambda: _C.reduce(xin[3], oarg, "sum", None, "vectorized", xin[2]),
    "reduce_result_dtype": lambda: reduce_result_dtype("sum", "float32", None),
    "import_output": lambda: _interop.import_output(out, "float32", xin, "reduce"),
}
for name, f in rows.items():
    print(f"{name:34s} {us(f):7.2f} us")
from gpuprims import _cub_ref

for name, ns in _cub_ref.launch_probe():
    print(f"C++: {name:40s} {ns / 1000:7.2f} us")
