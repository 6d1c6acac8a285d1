"""gpuprims: GPU primitives, GEMMs and ML ops with their whole optimization ladder, callable on
numpy, torch, CuPy, JAX and cuda.core arrays (anything with DLPack)."""
from ._C import CudaError, CudaFatalError, DeviceArray
from ._variants import Variant, variants
from .dropout import bias_dropout_add
from .gemm import gemv, matmul
from .histogram import bincount, histogram
from .nn import (add_layer_norm, add_rms_norm, layer_norm, layer_norm_backward, log_softmax, log_softmax_backward,
                 rms_norm, rms_norm_backward, softmax, softmax_backward)
from .reduce import max, min, prod, reduce, sum  # noqa: A004
from .compact import compact, nonzero, segmented_reduce
from .scan import cumprod, cumsum, scan
from .topk import TopK, topk
from .transpose import transpose

__version__ = "0.1.0"

__all__ = [
    "CudaError", "CudaFatalError", "DeviceArray", "Variant", "variants",
    "reduce", "sum", "prod", "min", "max",
    "softmax", "log_softmax", "layer_norm", "rms_norm",
    "softmax_backward", "log_softmax_backward", "layer_norm_backward", "rms_norm_backward",
    "add_layer_norm", "add_rms_norm", "bias_dropout_add",
    "scan", "cumsum", "cumprod", "compact", "nonzero", "segmented_reduce",
    "histogram", "bincount",
    "matmul", "gemv",
    "transpose",
    "topk", "TopK",
]
