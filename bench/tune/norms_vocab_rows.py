"""Softmax and log_softmax over vocabulary-sized rows, beyond one block (cluster_row and the
other long-row variants): odd lengths (GPT-2's 50257, 100003, 151937, 32001; ragged rows, held
rotated) next to an aligned 50264, float32 and bfloat16, and softmax(bfloat16, dtype=float32),
against torch on the same data; ms, % of the copy bandwidth of the same run (x read, y written),
ratio to torch, and the largest error against float64. docs/norms.md "Vocabulary rows".

    python bench/tune/norms_vocab_rows.py [VARIANT,...]   (default: auto,cluster_row,split_row)
"""
import sys

import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms

SHAPES = ((4096, 50257), (4096, 50264), (2048, 100003), (1024, 151937), (16384, 32001))


def main():
    variants = sys.argv[1].split(",") if len(sys.argv) > 1 else ["auto", "cluster_row", "split_row"]
    copy = copy_gbps(1 << 30)
    print(torch.cuda.get_device_name(), "copy", round(copy), "GB/s")
    for rows, n in SHAPES:
        for dtype in (torch.bfloat16, torch.float32):
            x = torch.randn(rows, n, device="cuda", dtype=dtype) * 3
            exact = torch.softmax(x.double(), -1)
            cases = [("softmax", gpuprims.softmax, lambda: torch.softmax(x, -1), {}, exact),
                     ("log_softmax", gpuprims.log_softmax, lambda: torch.log_softmax(x, -1), {}, exact.log())]
            if dtype == torch.bfloat16:
                cases.append(("softmax dtype=float32", gpuprims.softmax,
                              lambda: torch.softmax(x, -1, dtype=torch.float32), {"dtype": torch.float32}, exact))
            cells = []
            for name, fn, peer, kw, ref in cases:
                t_peer = median_ms(peer)
                for v in variants:
                    y = fn(x, algorithm=v, **kw)
                    err = (y.double() - ref).abs().max().item()
                    t = median_ms(lambda: fn(x, algorithm=v, **kw))
                    gbps = x.numel() * (x.element_size() + y.element_size()) / t / 1e6
                    cells.append(f"{name}/{v} {t:.4f} ms {100 * gbps / copy:.0f}% {t_peer / t:.2f}x err {err:.1e}")
                cells.append(f"torch {t_peer:.4f}")
            print(f"{rows}x{n} {str(dtype)[6:]}: " + " | ".join(cells), flush=True)
            del x, exact
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
