"""gpuprims: GPU primitives, GEMMs and ML ops with their whole optimization ladder, callable on
numpy, torch, CuPy, JAX and cuda.core arrays (anything with DLPack)."""
from ._C import CudaError, CudaFatalError, DeviceArray
from ._variants import Variant, variants
from .gemm import gemv, matmul
from .histogram import bincount, histogram
from .nn import layer_norm, log_softmax, rms_norm, softmax
from .reduce import max, min, prod, reduce, sum  # noqa: A004
from .compact import compact, nonzero, segmented_reduce
from .scan import cumprod, cumsum, scan

__version__ = "0.1.0"

__all__ = [
    "CudaError", "CudaFatalError", "DeviceArray", "Variant", "variants",
    "reduce", "sum", "prod", "min", "max",
    "softmax", "log_softmax", "layer_norm", "rms_norm",
    "scan", "cumsum", "cumprod", "compact", "nonzero", "segmented_reduce",
    "histogram", "bincount",
    "matmul", "gemv",
]
