"""Benchmarks: each variant next to the best peer, timed in the same process (``python -m gpuprims.bench``)."""
