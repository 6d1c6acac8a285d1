"""gpuprims: GPU primitives, GEMMs and ML ops with their whole optimization ladder, callable on
numpy, torch, CuPy, JAX and cuda.core arrays (anything with DLPack)."""
from ._C import CudaError, CudaFatalError, DeviceArray
from ._variants import Variant, variants
from .histogram import bincount, histogram
from .reduce import max, min, prod, reduce, sum  # noqa: A004
from .compact import compact, nonzero, segmented_reduce
from .scan import cumprod, cumsum, scan

__version__ = "0.1.0"

__all__ = [
    "CudaError", "CudaFatalError", "DeviceArray", "Variant", "variants",
    "reduce", "sum", "prod", "min", "max",
    "scan", "cumsum", "cumprod", "compact", "nonzero", "segmented_reduce",
    "histogram", "bincount",
]
