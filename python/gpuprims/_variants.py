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
             "bincount": _C.histogram_variants, "matmul": _C.matmul_variants, "gemv": _C.gemv_variants,
             "segmented_reduce": _C.segmented_reduce_variants,
             "transpose": _C.transpose_variants, "topk": _C.topk_variants}
_FAMILIES.update({op: functools.partial(_C.norm_variants, op) for op in ("softmax", "log_softmax", "layer_norm",
                                                                          "rms_norm")})
_FAMILIES.update({op + "_backward": functools.partial(_C.norm_backward_variants, op)
                  for op in ("softmax", "log_softmax", "layer_norm", "rms_norm")})
# Every public op's name works: the shorthands and add-norms run their family's variants, ...
_FAMILIES.update({op: _FAMILIES["reduce"] for op in ("sum", "prod", "min", "max")})
_FAMILIES.update(cumsum=_FAMILIES["scan"], cumprod=_FAMILIES["scan"], add_layer_norm=_FAMILIES["layer_norm"],
                 add_rms_norm=_FAMILIES["rms_norm"])
# ... and the ops with one implementation list none (their algorithm= takes "auto" only).
_SINGLE = ("compact", "nonzero", "bias_dropout_add")
_FAMILIES.update({op: list for op in _SINGLE})


def gpu_status():
    """(usable, reason): whether device 0 can run gpuprims kernels."""
    if _C.cuda_device_count() == 0:
        return False, "no CUDA device is visible"
    cap = _C.device_capability(0)
    if cap < _MIN_CAPABILITY:
        return False, f"compute capability {cap[0]}.{cap[1]} is older than the built sm_80"
    return True, ""


def variants(family: str | None = None):
    """Lists the named variants of a family ("reduce", "histogram", ...) or of any public op ("cumsum",
    "add_layer_norm"; an op with one implementation has none): name, whether it runs on this machine's
    GPU, what it does, and whether its float results are run-to-run reproducible. None: a dict of
    every family and op name to its list."""
    if family is None:
        return {name: variants(name) for name in sorted(_FAMILIES)}
    rows = _FAMILIES.get(family) if isinstance(family, str) else None
    if rows is None:
        raise ValueError(f"variants: argument 'family': expected one of {', '.join(sorted(_FAMILIES))}, got {family!r}")
    usable, reason = gpu_status()
    return [Variant(name, usable, description, deterministic, reason)
            for name, description, deterministic in rows()]


def check_auto_only(op: str, algorithm) -> None:
    """algorithm= of an op with one implementation (every op takes the argument)."""
    if algorithm.__class__ is not str:
        raise TypeError(f"{op}: argument 'algorithm': expected a str, got {algorithm!r}")
    if algorithm != "auto":
        raise ValueError(f"{op}: argument 'algorithm': expected 'auto' (the op has one implementation), "
                         f"got {algorithm!r}")
