"""GEMM / GEMV benchmark: every variant, cuBLAS (bound in _cub_ref where the toolkit has it) and
torch.matmul / torch.mv on the same buffers.

matmul is reported in TFLOP/s (2 M N K flops) against cuBLAS (torch.matmul where cuBLAS is not
bound), with TF32 off everywhere: every SIMT variant computes in full float32. gemv is memory
bound: GB/s of the minimum traffic (A, x and y once) against the copy ceiling measured in the
same run. Operands larger than L2 are not rotated: GEMM re-reads its operands from L2 by design.
"""
from __future__ import annotations

import gpuprims
from gpuprims import _cub_ref

from ._timing import copy_gbps, host_us_per_call, median_ms, torch_cuda

# The thread-per-output variants take seconds per call at 4096^3: fewer repetitions for them.
_SLOW = ("naive", "coalesced")
# The variants measured per dtype (wmma's TF32 mode is not compared against full-float32 peers).
_FLOAT32 = ("naive", "coalesced", "smem_tiled", "blocktile_1d", "blocktile_2d", "vectorized", "warptile")
_HALF = ("naive", "coalesced", "smem_tiled", "wmma", "mma_pipelined")


def _operands(torch, shape_a, shape_b, dtype):
    gen = torch.Generator(device="cuda").manual_seed(1234)
    a = torch.randn(shape_a, device="cuda", dtype=dtype, generator=gen)
    b = torch.randn(shape_b, device="cuda", dtype=dtype, generator=gen)
    return a, b


def _peers(torch, dname, a, b, out, gemv):
    """(name, fn) of cuBLAS (when bound) and torch on the same buffers."""
    stream = torch.cuda.current_stream().cuda_stream
    peers = []
    if _cub_ref.cublas_available():
        if gemv and dname == "float32":
            m, k = a.shape
            peers.append(("cublasSgemv", lambda: _cub_ref.cublas_sgemv(m, k, a.data_ptr(), b.data_ptr(),
                                                                       out.data_ptr(), stream)))
        elif not gemv:
            m, k = a.shape
            n = b.shape[1]
            peers.append(("cublasGemmEx", lambda: _cub_ref.cublas_gemm(dname, m, n, k, a.data_ptr(), b.data_ptr(),
                                                                      out.data_ptr(), False, stream)))
    if gemv:
        peers.append(("torch.mv", lambda: torch.mv(a, b, out=out)))
    else:
        peers.append(("torch.matmul", lambda: torch.matmul(a, b, out=out)))
    return peers


def _matmul_case(torch, m, n, k, dtype, quick):
    dname = str(dtype).replace("torch.", "")
    a, b = _operands(torch, (m, k), (k, n), dtype)
    out = torch.empty((m, n), device="cuda", dtype=dtype)
    flops = 2.0 * m * n * k
    rows = [(name, median_ms(fn)) for name, fn in _peers(torch, dname, a, b, out, False)]
    peer_name, peer_ms = rows[0]
    takes = _FLOAT32 if dname == "float32" else _HALF
    for v in gpuprims.variants("matmul"):
        if v.name not in takes:
            continue
        slow = v.name in _SLOW
        if slow and quick:
            continue
        rows.append((v.name, median_ms(lambda: gpuprims.matmul(a, b, out=out, algorithm=v.name),
                                       reps=3 if slow else 20, warmup=1 if slow else 3)))
    rows.append(("auto", median_ms(lambda: gpuprims.matmul(a, b, out=out))))
    case = f"matmul {dname} {m}x{n}x{k}"
    return [{"case": case, "impl": impl, "ms": ms, "TFLOPs": flops / ms / 1e9, "vs_peer": peer_ms / ms,
             "peer": peer_name} for impl, ms in rows]


def _gemv_case(torch, m, k, dtype, copy):
    dname = str(dtype).replace("torch.", "")
    a, x = _operands(torch, (m, k), (k,), dtype)
    y = torch.empty((m,), device="cuda", dtype=dtype)
    nbytes = (m * k + k + m) * a.element_size()
    rows = [(name, median_ms(fn)) for name, fn in _peers(torch, dname, a, x, y, True)]
    peer_name, peer_ms = rows[0]
    for v in gpuprims.variants("gemv"):
        rows.append((v.name, median_ms(lambda: gpuprims.gemv(a, x, out=y, algorithm=v.name))))
    rows.append(("auto", median_ms(lambda: gpuprims.gemv(a, x, out=y))))
    case = f"gemv {dname} {m}x{k}"
    return [{"case": case, "impl": impl, "ms": ms, "GBps": nbytes / ms / 1e6,
             "pct_copy": 100 * nbytes / ms / 1e6 / copy, "vs_peer": peer_ms / ms, "peer": peer_name}
            for impl, ms in rows]


def run(quick: bool = False) -> dict:
    torch = torch_cuda()
    torch.backends.cuda.matmul.allow_tf32 = False  # the peers compute in full float32 too
    copy = copy_gbps(256 << 20 if quick else 1 << 30)
    big = 1024 if quick else 4096
    cases = []
    cases += _matmul_case(torch, big, big, big, torch.float32, quick)
    cases += _matmul_case(torch, 1000, 1000, 1000, torch.float32, quick)
    cases += _matmul_case(torch, big, big, big, torch.bfloat16, quick)
    rows = 4096 if quick else 16384
    cases += _gemv_case(torch, rows, rows, torch.float32, copy)
    cases += _gemv_case(torch, rows, rows, torch.bfloat16, copy)

    a, b = _operands(torch, (64, 64), (64, 64), torch.float32)
    out = torch.empty((64, 64), device="cuda")
    overhead = {"case": "64x64x64 float32 matmul, per call (enqueue + sync amortized)"}
    overhead.update(host_us_per_call({
        "gpuprims.matmul_us": lambda: gpuprims.matmul(a, b),
        "gpuprims.matmul_out_us": lambda: gpuprims.matmul(a, b, out=out),
        "torch.matmul_us": lambda: torch.matmul(a, b),
    }))
    return {"family": "gemm", "copy_GBps": copy, "cublas_bound": _cub_ref.cublas_available(), "cases": cases,
            "host_overhead": overhead}


def table(result: dict) -> str:
    lines = [f"copy ceiling: {result['copy_GBps']:.0f} GB/s (read + write); cuBLAS bound: {result['cublas_bound']}",
             ""]
    lines.append(f"{'case':30s} {'impl':16s} {'ms':>9s} {'TFLOP/s':>8s} {'GB/s':>7s} {'%copy':>6s} {'x peer':>7s}")
    for r in result["cases"]:
        tflops = f"{r['TFLOPs']:8.2f}" if "TFLOPs" in r else f"{'':8s}"
        gbps = f"{r['GBps']:7.0f} {r['pct_copy']:6.1f}" if "GBps" in r else f"{'':7s} {'':6s}"
        lines.append(f"{r['case']:30s} {r['impl']:16s} {r['ms']:9.4f} {tflops} {gbps} {r['vs_peer']:6.3f}x {r['peer']}")
    o = result["host_overhead"]
    lines += ["", f"{o['case']}: gpuprims.matmul {o['gpuprims.matmul_us']:.2f} us, with out= "
                  f"{o['gpuprims.matmul_out_us']:.2f} us, torch.matmul {o['torch.matmul_us']:.2f} us"]
    return "\n".join(lines)
