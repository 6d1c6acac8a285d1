"""Row ops along an axis that is not the contiguous one (softmax over the channels of an NCHW
batch, layer_norm along axis 0), against torch in the same process, "auto" and "row_on_chip" (the
block-per-row kernels that "auto" ran on these rows before the columns kernel). Each result is checked against
torch first (float64 reference tolerance loose: this is a timing probe; the tests check values).
Bytes: x read once, y written once. Inputs rotate through 4x L2.

    python3 bench/tune/norms_strided_axis.py
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms
from scan_held_dtypes import Rotation  # this folder: run as a script

CASES = [  # (op, shape, axis, dtype); widths of 16 and 32 adjacent rows last
    ("softmax", (8192, 4096), 0, "float32"),
    ("softmax", (32, 21, 256, 256), 1, "float32"),
    ("softmax", (32, 21, 256, 256), 1, "bfloat16"),
    ("log_softmax", (16, 150, 128, 128), 1, "float16"),
    ("softmax", (64, 1000, 4096), 1, "bfloat16"),
    ("layer_norm", (8192, 4096), 0, "float32"),
    ("layer_norm", (64, 768, 1024), 1, "bfloat16"),
    ("rms_norm", (256, 64, 4096), 1, "float32"),
    ("layer_norm", (8, 8192, 1024), 1, "float32"),
    ("softmax", (4096, 64, 32), 1, "float32"),
    ("softmax", (8192, 64, 16), 1, "float32"),
    ("softmax", (32, 16, 256, 256), 1, "float32"),
    ("layer_norm", (64, 3, 512, 512), 1, "float32"),
    ("rms_norm", (256, 64, 4096), 1, "bfloat16"),
    ("softmax", (64, 256, 4096), 1, "float32"),
    ("layer_norm", (64, 96, 56, 56), 1, "float32"),   # ConvNeXt's channels-first LayerNorm
    ("layer_norm", (64, 96, 56, 56), 1, "bfloat16"),
    ("layer_norm", (256, 768, 7, 7), 1, "float32"),
]


def torch_op(op, x, axis, weight=None):
    """torch's op along `axis` (its norms normalize the last axis: moved there and back)."""
    if op == "softmax":
        return torch.softmax(x, axis)
    if op == "log_softmax":
        return torch.log_softmax(x, axis)
    moved = x.movedim(axis, -1)
    n = moved.shape[-1]
    if op == "layer_norm":
        return F.layer_norm(moved, (n,), weight).movedim(-1, axis)
    return F.rms_norm(moved, (n,), weight, eps=1e-6).movedim(-1, axis)


def ours(op, x, axis, algorithm="auto"):
    return getattr(gpuprims, op)(x, axis=axis, algorithm=algorithm)


def probe_cases(cases):
    """(copy GB/s, L2 bytes, then per case op, shape, axis, dtype name, torch dtype, a seeded
    generator), the GPU and the copy ceiling printed first."""
    copy = copy_gbps(1 << 30)
    print(f"{torch.cuda.get_device_name()}: copy {copy:.0f} GB/s")
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    for op, shape, axis, dtype in cases:
        gen = torch.Generator(device="cuda").manual_seed(len(shape) * 1000 + axis)
        yield copy, l2, op, shape, axis, dtype, getattr(torch, dtype), gen


def report(head, copy, nbytes, rotation, ours_at, theirs_at):
    """Times ours_at(buf) ("auto"), theirs_at(buf) and ours_at(buf, "row_on_chip") over the rotating
    buffers and prints one line after `head`: µs and % of copy (`nbytes` a call), x torch."""
    t_ours = median_ms(lambda: ours_at(rotation.cur), before=rotation.rotate)
    t_torch = median_ms(lambda: theirs_at(rotation.cur), before=rotation.rotate)
    t_chip = median_ms(lambda: ours_at(rotation.cur, "row_on_chip"), before=rotation.rotate)
    pct = lambda t: 100 * nbytes / t / 1e6 / copy  # noqa: E731
    print(f"{head}  gpuprims {t_ours * 1e3:8.1f} us {pct(t_ours):5.1f} %  torch {t_torch * 1e3:8.1f} us "
          f"{pct(t_torch):5.1f} %  x torch {t_torch / t_ours:5.2f}  row_on_chip {pct(t_chip):5.1f} %", flush=True)


def main():
    for copy, l2, op, shape, axis, dtype, dt, gen in probe_cases(CASES):
        inputs = Rotation(lambda: (torch.randn(shape, device="cuda", generator=gen) * 3).to(dt), l2)
        x = inputs.bufs[0]
        want = torch_op(op, x.double(), axis)
        err = (ours(op, x, axis).double() - want).abs().max().item()
        terr = (torch_op(op, x, axis).double() - want).abs().max().item()
        ok = err <= 4 * terr + 1e-6
        label = f"{op} axis={axis} {dtype} {'x'.join(map(str, shape))}"
        report(f"{label:44s} {'ok' if ok else 'MISMATCH'} (err {err:.1e}, torch {terr:.1e})", copy,
               2 * x.numel() * x.element_size(), inputs, lambda b, a="auto": ours(op, b, axis, a),
               lambda b: torch_op(op, b, axis))


if __name__ == "__main__":
    main()
