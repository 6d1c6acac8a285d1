"""Norms benchmark: every variant of softmax, log_softmax, layer_norm and rms_norm next to torch
(the peer) on the same buffers; their backward passes next to torch autograd of the same ops; the
fused add_rms_norm / add_layer_norm / bias_dropout_add next to torch eager's unfused sequences.

Bytes are the minimum traffic: forward, x read once and y written once (plus weight and bias,
read once); backward, dy and the saved row (y, or x) read once and dx written once, plus the
small vectors (weight, statistics, dweight, dbias); add-norms, x and residual read, the output and
the sum written; bias_dropout_add, x and residual read, out written. The ceiling is the
device-to-device copy bandwidth measured in the same run. gpuprims writes into a preallocated
out=; torch allocates its results from its caching allocator (no cudaMalloc in the timed region
either way).
"""
from __future__ import annotations

import gpuprims

from ._timing import bandwidth_row, bandwidth_table, copy_gbps, median_ms, torch_cuda

ROTATE_FACTOR = 4  # inputs smaller than 4x L2 rotate through enough buffers to defeat the cache
OPS = ("softmax", "log_softmax", "layer_norm", "rms_norm")


def _peer(torch, op, n):
    F = torch.nn.functional
    return {"softmax": (lambda x, w, b: torch.softmax(x, -1), "torch.softmax"),
            "log_softmax": (lambda x, w, b: torch.log_softmax(x, -1), "torch.log_softmax"),
            "layer_norm": (lambda x, w, b: F.layer_norm(x, (n,), w, b), "F.layer_norm"),
            "rms_norm": (lambda x, w, b: F.rms_norm(x, (n,), w, eps=1e-6), "F.rms_norm")}[op]


def _ours(op, x, w, b, out, algorithm):
    if op == "layer_norm":
        return gpuprims.layer_norm(x, w, b, out=out, algorithm=algorithm)
    if op == "rms_norm":
        return gpuprims.rms_norm(x, w, out=out, algorithm=algorithm)
    return getattr(gpuprims, op)(x, out=out, algorithm=algorithm)


def _case(torch, op, rows, n, dtype, l2_bytes, copy):
    elem = torch.empty((), dtype=dtype).element_size()
    count = max(1, -(-ROTATE_FACTOR * l2_bytes // (rows * n * elem)))
    gen = torch.Generator(device="cuda").manual_seed(1234)
    xs = [torch.randn(rows, n, device="cuda", dtype=dtype, generator=gen) for _ in range(count)]
    w = torch.rand(n, device="cuda", dtype=dtype, generator=gen) + 0.5 if op in ("layer_norm", "rms_norm") else None
    b = torch.randn(n, device="cuda", dtype=dtype, generator=gen) if op == "layer_norm" else None
    out = torch.empty_like(xs[0])
    cur = [xs[0]]

    def rotate(i):
        cur[0] = xs[i % len(xs)]

    nbytes = 2 * rows * n * elem + n * elem * ((w is not None) + (b is not None))
    peer_fn, peer_name = _peer(torch, op, n)
    peer_ms = median_ms(lambda: peer_fn(cur[0], w, b), before=rotate)
    timings = [(peer_name, peer_ms)]
    for v in gpuprims.variants(op):
        timings.append((v.name, median_ms(lambda: _ours(op, cur[0], w, b, out, v.name), before=rotate)))
    timings.append(("auto", median_ms(lambda: _ours(op, cur[0], w, b, out, "auto"), before=rotate)))
    dname = str(dtype).replace("torch.", "")
    case = f"{op} {dname} {rows}x{n}"
    return [_row(case, impl, ms, nbytes, copy, peer_ms) for impl, ms in timings]


def _row(case, impl, ms, nbytes, copy, peer_ms):
    return bandwidth_row(case, impl, ms, nbytes, copy, peer_ms, "torch")


def _backward_case(torch, op, rows, n, dtype, copy):
    """Backward of op: every backward variant vs torch.autograd.grad through the same torch op."""
    F = torch.nn.functional
    gen = torch.Generator(device="cuda").manual_seed(99)
    elem = torch.empty((), dtype=dtype).element_size()
    x = torch.randn(rows, n, device="cuda", dtype=dtype, generator=gen).requires_grad_()
    dy = torch.randn(rows, n, device="cuda", dtype=dtype, generator=gen)
    norm = op in ("layer_norm", "rms_norm")
    w = (torch.rand(n, device="cuda", dtype=dtype, generator=gen) + 0.5).requires_grad_() if norm else None
    b = torch.randn(n, device="cuda", dtype=dtype, generator=gen).requires_grad_() if op == "layer_norm" else None
    inputs = [t for t in (x, w, b) if t is not None]
    y_t = {"softmax": lambda: torch.softmax(x, -1), "log_softmax": lambda: torch.log_softmax(x, -1),
           "layer_norm": lambda: F.layer_norm(x, (n,), w, b), "rms_norm": lambda: F.rms_norm(x, (n,), w, eps=1e-6)}[op]()
    peer_ms = median_ms(lambda: torch.autograd.grad(y_t, inputs, dy, retain_graph=True))
    xd, wd = x.detach(), None if w is None else w.detach()
    out = torch.empty_like(xd)
    stats = 0
    if op in ("softmax", "log_softmax"):
        y = getattr(gpuprims, op)(xd)
        fn = getattr(gpuprims, op + "_backward")
        call = lambda alg: fn(y, dy, out=out, algorithm=alg)  # noqa: E731
    elif op == "layer_norm":
        _, mean, rstd = gpuprims.layer_norm(xd, wd, None, return_stats=True)
        call = lambda alg: gpuprims.layer_norm_backward(dy, xd, wd, mean, rstd, out=out, algorithm=alg)  # noqa: E731
        stats = 2 * rows * 4 + 3 * n * elem  # mean, rstd; weight read, dweight and dbias written
    else:
        _, rstd = gpuprims.rms_norm(xd, wd, return_stats=True)
        call = lambda alg: gpuprims.rms_norm_backward(dy, xd, wd, rstd, out=out, algorithm=alg)  # noqa: E731
        stats = rows * 4 + 2 * n * elem
    nbytes = 3 * rows * n * elem + stats
    timings = [("torch autograd", peer_ms)]
    for v in gpuprims.variants(op + "_backward"):
        timings.append((v.name, median_ms(lambda: call(v.name))))
    timings.append(("auto", median_ms(lambda: call("auto"))))
    case = f"{op}_backward {str(dtype).replace('torch.', '')} {rows}x{n}"
    return [_row(case, impl, ms, nbytes, copy, peer_ms) for impl, ms in timings]


def _fused_case(torch, op, rows, n, dtype, copy):
    """add_rms_norm / add_layer_norm / bias_dropout_add vs torch eager's unfused sequence."""
    F = torch.nn.functional
    gen = torch.Generator(device="cuda").manual_seed(7)
    elem = torch.empty((), dtype=dtype).element_size()
    x = torch.randn(rows, n, device="cuda", dtype=dtype, generator=gen)
    r = torch.randn(rows, n, device="cuda", dtype=dtype, generator=gen)
    w = torch.rand(n, device="cuda", dtype=dtype, generator=gen) + 0.5
    b = torch.randn(n, device="cuda", dtype=dtype, generator=gen)
    out = torch.empty_like(x)
    if op == "add_rms_norm":
        peer = lambda: F.rms_norm(x + r, (n,), w, eps=1e-6)  # noqa: E731
        ours = lambda: gpuprims.add_rms_norm(x, r, w, out=out)  # noqa: E731
        nbytes, peer_name = 4 * rows * n * elem + n * elem, "torch x+r, F.rms_norm"
    elif op == "add_layer_norm":
        peer = lambda: F.layer_norm(x + r, (n,), w, b)  # noqa: E731
        ours = lambda: gpuprims.add_layer_norm(x, r, w, b, out=out)  # noqa: E731
        nbytes, peer_name = 4 * rows * n * elem + 2 * n * elem, "torch x+r, F.layer_norm"
    else:
        peer = lambda: r + F.dropout(x + b, 0.1, training=True)  # noqa: E731
        ours = lambda: gpuprims.bias_dropout_add(x, b, r, 0.1, seed=1, offset=0, out=out)  # noqa: E731
        nbytes, peer_name = 3 * rows * n * elem + n * elem, "torch r+dropout(x+b)"
    peer_ms = median_ms(peer)
    case = f"{op} {str(dtype).replace('torch.', '')} {rows}x{n}"
    return [_row(case, peer_name, peer_ms, nbytes, copy, peer_ms), _row(case, "gpuprims", median_ms(ours), nbytes,
                                                                      copy, peer_ms)]


def run(quick: bool = False) -> dict:
    torch = torch_cuda()
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    copy = copy_gbps(256 << 20 if quick else 1 << 30)
    shapes = ((2048, 8192), (8192, 4096)) if quick else ((16384, 8192), (65536, 4096))
    long_rows = (16, 262144) if quick else (256, 262144)
    cases = []
    for op in OPS:
        for dtype in (torch.float32, torch.bfloat16):
            for rows, n in shapes:
                cases += _case(torch, op, rows, n, dtype, l2, copy)
        cases += _case(torch, op, *long_rows, torch.float32, l2, copy)
    for op in OPS:
        for dtype in (torch.float32, torch.bfloat16):
            for rows, n in shapes:
                cases += _backward_case(torch, op, rows, n, dtype, copy)
                torch.cuda.empty_cache()
    for op in ("add_rms_norm", "add_layer_norm", "bias_dropout_add"):
        for dtype in (torch.float32, torch.bfloat16):
            for rows, n in shapes:
                cases += _fused_case(torch, op, rows, n, dtype, copy)
    return {"family": "norms", "copy_GBps": copy, "cases": cases}


def table(result: dict) -> str:
    lines = bandwidth_table(result, 44, 24)
    return "\n".join(lines)
