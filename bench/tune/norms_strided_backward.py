"""Backward passes along an axis that is not the contiguous one (the gradients of softmax over
NCHW channels, of a channels-first LayerNorm), against torch autograd's backward in the same
process, "auto" next to "row_on_chip" (the block-per-row kernels). "auto" runs the columns kernel
on such rows (the norm kind's for rows of up to 256 elements, float64 64). Each result
is checked against torch first. Bytes: y (or x), dy read, dx written (the weight and statistics
vectors not counted). Inputs rotate through 4x L2.

    python3 bench/tune/norms_strided_backward.py
"""
from __future__ import annotations

import torch

import gpuprims
from norms_strided_axis import probe_cases, report, torch_op  # this folder: run as a script
from scan_held_dtypes import Rotation

CASES = [  # (op, shape, axis, dtype)
    ("softmax", (32, 21, 256, 256), 1, "float32"),
    ("log_softmax", (16, 150, 128, 128), 1, "float16"),
    ("softmax", (8192, 4096), 0, "float32"),
    ("layer_norm", (64, 96, 56, 56), 1, "float32"),
    ("layer_norm", (64, 96, 56, 56), 1, "bfloat16"),
    ("layer_norm", (64, 192, 28, 28), 1, "float32"),
    ("layer_norm", (256, 8192), 0, "float32"),
    ("rms_norm", (256, 64, 4096), 1, "bfloat16"),
]


def main():
    for copy, l2, op, shape, axis, dtype, dt, gen in probe_cases(CASES):
        n = shape[axis]
        w = (torch.rand(n, device="cuda", generator=gen) + 0.5).to(dt) if op in ("layer_norm", "rms_norm") else None
        x = (torch.randn(shape, device="cuda", generator=gen) * 3).to(dt)
        dys = Rotation(lambda: torch.randn(shape, device="cuda", generator=gen).to(dt), l2)
        xr = x.detach().requires_grad_()
        y = torch_op(op, xr, axis, w)
        if op in ("softmax", "log_softmax"):
            ours = lambda dy, a="auto": getattr(gpuprims, f"{op}_backward")(y.detach(), dy, axis, algorithm=a)  # noqa: E731
        elif op == "layer_norm":
            _, mean, rstd = gpuprims.layer_norm(x, w, None, axis=axis, return_stats=True)
            ours = lambda dy, a="auto": gpuprims.layer_norm_backward(dy, x, w, mean, rstd, axis=axis, algorithm=a)[0]  # noqa: E731
        else:
            _, rstd = gpuprims.rms_norm(x, w, axis=axis, return_stats=True)
            ours = lambda dy, a="auto": gpuprims.rms_norm_backward(dy, x, w, rstd, axis=axis, algorithm=a)[0]  # noqa: E731
        theirs = lambda dy: torch.autograd.grad(y, xr, dy, retain_graph=True)[0]  # noqa: E731
        dy = dys.bufs[0]
        err = (ours(dy).double() - theirs(dy).double()).abs().max().item()
        scale = theirs(dy).double().abs().max().item()
        label = f"{op}_backward axis={axis} {dtype} {'x'.join(map(str, shape))}"
        report(f"{label:52s} max |ours - torch| {err:.1e} (of {scale:.1e})", copy, 3 * x.numel() * x.element_size(),
               dys, ours, theirs)


if __name__ == "__main__":
    main()
