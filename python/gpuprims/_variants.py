"""gpuprims.variants(family): the optimization ladder of each family, and whether it runs here."""
from __future__ import annotations

import functools
from typing import NamedTuple

from . import _C

_MIN_CAPABILITY = (8, 0)  # the oldest architecture the package is built for (sm_80)


class Variant(NamedTuple):
    name: str
    available: bool
    description: str
    deterministic: bool
    reason: str  # why it is not available, "" when it is


# bincount shares the histogram variants (the same counting kernels).
_FAMILIES = {"reduce": _C.reduce_variants, "scan": _C.scan_variants, "histogram": _C.histogram_variants,
             "bincount": _C.histogram_variants, "matmul": _C.matmul_variants, "gemv": _C.gemv_variants}
_FAMILIES.update({op: functools.partial(_C.norm_variants, op) for op in ("softmax", "log_softmax", "layer_norm",
                                                                          "rms_norm")})
_FAMILIES.update({op + "_backward": functools.partial(_C.norm_backward_variants, op)
                  for op in ("softmax", "log_softmax", "layer_norm", "rms_norm")})


def gpu_status():
    """(usable, reason): whether device 0 can run gpuprims kernels."""
    if _C.cuda_device_count() == 0:
        return False, "no CUDA device is visible"
    cap = _C.device_capability(0)
    if cap < _MIN_CAPABILITY:
        return False, f"compute capability {cap[0]}.{cap[1]} is older than the built sm_80"
    return True, ""


def variants(family: str) -> list[Variant]:
    """Lists the named variants of a family ("reduce", "histogram", ...): name, whether it runs on this machine's
    GPU, what it does, and whether its float results are run-to-run reproducible."""
    rows = _FAMILIES.get(family)
    if rows is None:
        raise ValueError(f"variants: argument 'family': expected one of {', '.join(sorted(_FAMILIES))}, got {family!r}")
    usable, reason = gpu_status()
    return [Variant(name, usable, description, deterministic, reason)
            for name, description, deterministic in rows()]
