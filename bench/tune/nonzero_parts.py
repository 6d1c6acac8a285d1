"""Where nonzero()'s time goes (session 45's probe had 2^28 bool, 50 % set, at 0.83x torch.nonzero):
the whole call (count, device-to-host read, compaction), its parts (the count as a bool sum, the
compaction with out= given), torch.nonzero and torch.count_nonzero, and compact() of float32 values
with out= for scale. Each result is checked against torch.nonzero first. Inputs rotate through 4x L2.

    python3 bench/tune/nonzero_parts.py
"""
from __future__ import annotations

import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms
from scan_held_dtypes import Rotation  # this folder: run as a script


def main():
    copy = copy_gbps(1 << 30)
    print(f"{torch.cuda.get_device_name()}: copy {copy:.0f} GB/s")
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    for n, density in ((1 << 28, 0.5), (1 << 28, 0.05), (1 << 24, 0.5)):
        gen = torch.Generator(device="cuda").manual_seed(n)
        inputs = Rotation(lambda: torch.rand(n, device="cuda", generator=gen) < density, l2)
        masks, rotate = inputs.bufs, inputs.rotate
        values = torch.randn(n, device="cuda", generator=gen)

        want = torch.nonzero(masks[0]).flatten()
        ok = torch.equal(gpuprims.nonzero(masks[0]), want)
        out = torch.empty(n, dtype=torch.int64, device="cuda")
        _, count = gpuprims.nonzero(masks[0], out=out)
        ok = ok and int(count) == want.numel() and torch.equal(out[: want.numel()], want)
        vout = torch.empty(n, device="cuda")
        ms = {"nonzero": median_ms(lambda: gpuprims.nonzero(inputs.cur), before=rotate),
              "nonzero out=": median_ms(lambda: gpuprims.nonzero(inputs.cur, out=out), before=rotate),
              "sum (count)": median_ms(lambda: gpuprims.sum(inputs.cur), before=rotate),
              "torch.nonzero": median_ms(lambda: torch.nonzero(inputs.cur), before=rotate),
              "torch.count_nonzero": median_ms(lambda: torch.count_nonzero(inputs.cur), before=rotate),
              "compact f32 out=": median_ms(lambda: gpuprims.compact(values, inputs.cur, out=vout), before=rotate)}
        selected = want.numel()
        print(f"2^{n.bit_length() - 1} bool, {density:.0%} set: {'ok' if ok else 'MISMATCH'}; minimum bytes of nonzero "
              f"{(n + 8 * selected) / 1e6:.0f} MB", flush=True)
        for name, t in ms.items():
            nbytes = n + 8 * selected if "nonzero" in name and "count" not in name else n
            nbytes = n * 5 + 4 * selected if name.startswith("compact") else nbytes
            print(f"  {name:20s} {t * 1e3:9.1f} us  {100 * nbytes / t / 1e6 / copy:5.1f} % of copy", flush=True)
        print(f"  nonzero x torch.nonzero {ms['torch.nonzero'] / ms['nonzero']:.2f}", flush=True)


if __name__ == "__main__":
    main()
