"""torch's side of bench/tune/norms_backward_tune.cu, timed on the same machine in the same call:
torch.autograd.grad through log_softmax (float32 / bfloat16, 16384 x 8192 and 65536 x 4096) and
layer_norm (bfloat16 16384 x 8192), as `python -m gpuprims.bench norms` times the peer (CUDA-event
median after warm-up), next to torch's copy of one array. Bytes counted as in the harness: dy and
the saved row read, dx written (3 arrays) against the copy's 2, so its "%copy" and the harness's
compare directly. Needs only torch with CUDA (no gpuprims build):
    python3 bench/tune/norms_backward_torch.py
"""
import statistics

import torch


def median_ms(fn, reps=30, warmup=3):
    for _ in range(warmup):
        fn()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def main():
    F = torch.nn.functional
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    cases = [("log_softmax", d, r, n) for d in (torch.float32, torch.bfloat16) for r, n in ((16384, 8192), (65536, 4096))]
    cases.append(("layer_norm", torch.bfloat16, 16384, 8192))
    for op, dtype, rows, n in cases:
        gen = torch.Generator(device="cuda").manual_seed(99)
        x = torch.randn(rows, n, device="cuda", dtype=dtype, generator=gen).requires_grad_()
        dy = torch.randn(rows, n, device="cuda", dtype=dtype, generator=gen)
        if op == "log_softmax":
            inputs = [x]
            y = torch.log_softmax(x, -1)
        else:
            w = (torch.rand(n, device="cuda", dtype=dtype, generator=gen) + 0.5).requires_grad_()
            b = torch.randn(n, device="cuda", dtype=dtype, generator=gen).requires_grad_()
            inputs = [x, w, b]
            y = F.layer_norm(x, (n,), w, b)
        ms = median_ms(lambda: torch.autograd.grad(y, inputs, dy, retain_graph=True))
        dst = torch.empty_like(dy)
        copy_ms = median_ms(lambda: dst.copy_(dy))
        nbytes = rows * n * dy.element_size()
        print(f"torch {op}_backward {str(dtype)[6:]:9s} {rows}x{n}: {ms:.4f} ms {3 * nbytes / ms / 1e6:6.0f} GB/s "
              f"{100 * (3 * nbytes / ms) / (2 * nbytes / copy_ms):5.1f} %copy (torch copy {2 * nbytes / copy_ms / 1e6:.0f} GB/s)")
        del x, dy, y, inputs, dst
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
