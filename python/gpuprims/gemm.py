"""The gemm family: matrix products on the SIMT optimization ladder and tensor cores.

``matmul(a, b)`` is ``a @ b`` for 2-D operands and for batches of them; ``gemv(a, x)`` is the
matrix-vector product. Operands of any strides (row-major, column-major, transposed or sliced
views, negative strides) are read in place: the kernels take each operand's row and column
strides and pick the loader that walks its contiguous dimension. Nothing is copied.
"""
from __future__ import annotations

from . import _C, _interop
from ._dtypes import FLOATS

_FLOAT_NAMES = "float16, bfloat16, float32 or float64"


def _check_algorithm(op, algorithm):
    if algorithm.__class__ is not str:
        raise TypeError(f"{op}: argument 'algorithm': expected a str, got {algorithm!r}")


def _import_operands(op, first, second, second_name, stream):
    """Imports both operands on the first's launch stream and checks dtypes and devices."""
    fin = _interop.prepare_input(first, stream, op, "a")
    sin = _interop.prepare_input(second, fin[2], op, second_name)
    if fin[5] not in FLOATS:
        raise TypeError(f"{op}: argument 'a': expected {_FLOAT_NAMES}, got {fin[5]}")
    if sin[5] != fin[5]:
        raise TypeError(f"{op}: arguments 'a' and '{second_name}' must have the same dtype, got {fin[5]} and "
                        f"{sin[5]}")
    if sin[1] != fin[1]:
        raise ValueError(f"{op}: arguments 'a' and '{second_name}' must be on the same device, got a on "
                         f"{_interop.device_string(fin[1])} and {second_name} on {_interop.device_string(sin[1])}")
    return fin, sin


def _output(op, ain, shape, out):
    if out is None:
        obj, arg = _interop.new_output(ain, shape, ain[5], op)
        return obj, arg, True
    return out, _interop.import_output(out, ain[5], ain, op), False


def _matmul_shape(a_shape, b_shape):
    for name, shape in (("a", a_shape), ("b", b_shape)):
        if len(shape) not in (2, 3):
            raise ValueError(f"matmul: argument '{name}': expected a 2-D or 3-D array, got shape {tuple(shape)}")
    if a_shape[-1] != b_shape[-2]:
        raise ValueError(f"matmul: arguments 'a' and 'b' have mismatched inner dimensions: a is {tuple(a_shape)} "
                         f"and b is {tuple(b_shape)}")
    m, n = a_shape[-2], b_shape[-1]
    if len(a_shape) == 2 and len(b_shape) == 2:
        return (m, n)
    a_batch = a_shape[0] if len(a_shape) == 3 else 1
    b_batch = b_shape[0] if len(b_shape) == 3 else 1
    if a_batch != b_batch and 1 not in (a_batch, b_batch):
        raise ValueError(f"matmul: arguments 'a' and 'b' have batch sizes that do not broadcast: a is "
                         f"{tuple(a_shape)} and b is {tuple(b_shape)}")
    return (b_batch if a_batch == 1 else a_batch, m, n)


def matmul(a, b, *, out=None, algorithm="auto", allow_tf32=False, stream=None):
    """``a @ b``: a (M, K) or (batch, M, K), b (K, N) or (batch, K, N).

    Parameters
    ----------
    a, b : array
        numpy, torch, cupy, jax, cuda.core or any DLPack arrays of one dtype: float16, bfloat16,
        float32 or float64 (mixed dtypes raise TypeError), on one device, any strides. A 2-D
        operand, or a batch dimension of 1, is broadcast over the other's batch.
    out : array, optional
        Written in place and returned: a's framework and device, the dtype of a, shape (M, N) or
        (batch, M, N), writable, any strides with distinct elements. Memory shared with a or b
        raises ValueError.
    algorithm : str
        "auto" or a variant name from ``gpuprims.variants("matmul")``: naive, coalesced and
        smem_tiled take every dtype; blocktile_1d, blocktile_2d, vectorized and warptile take
        float32 only; the tensor-core variants wmma and mma_pipelined take float16 and bfloat16,
        and wmma also float32 with allow_tf32=True. Other combinations raise TypeError. "auto"
        runs mma_pipelined for float16 and bfloat16, wmma for float32 when allow_tf32, warptile
        for float32 otherwise, smem_tiled for float64.
    allow_tf32 : bool
        Lets float32 products run on TF32 tensor cores (wmma, and "auto"): each input is rounded
        to 10 mantissa bits (relative error 2^-11) before the float32 accumulation. False (the
        default) keeps float32 in full precision.
    stream : int, stream object or None
        Launch stream; None means a's framework's current stream (torch, CuPy), else the default
        stream. The call never synchronizes the host and allocates no device memory except the
        result.

    Returns
    -------
    array
        a's framework, a's dtype.

    Notes
    -----
    Accuracy: float16/bfloat16/float32 products accumulate in float32 (float64 in float64) and
    are rounded once to the output dtype (float16/bfloat16 products are exact in float32); the summation order along K differs between variants,
    so results differ between variants within the usual ``K * eps`` bound, but each variant is
    run-to-run bitwise reproducible (no atomics, no split-K). NaN and Inf propagate as in IEEE
    arithmetic (0 * Inf is NaN). K = 0 gives zeros; empty M, N or batch give an empty result.
    CPU (numpy) inputs run the CPU reference, which sums in double (long double for float64).
    """
    _check_algorithm("matmul", algorithm)
    if allow_tf32.__class__ is not bool:
        raise TypeError(f"matmul: argument 'allow_tf32': expected a bool, got {allow_tf32!r}")
    ain, bin_ = _import_operands("matmul", a, b, "b", stream)
    shape = _matmul_shape(tuple(ain[4]), tuple(bin_[4]))
    obj, out_arg, fresh = _output("matmul", ain, shape, out)
    _C.matmul(ain[3], bin_[3], out_arg, algorithm, allow_tf32, ain[2])
    return _interop.result(ain, obj) if fresh else out


def gemv(a, x, *, out=None, algorithm="auto", stream=None):
    """``a @ x`` for a 2-D a (M, K) and a 1-D x (K,): shape (M,).

    Parameters
    ----------
    a, x : array
        As for ``matmul``: one floating dtype, one device, any strides.
    out : array, optional
        Written in place and returned: a's framework, device and dtype, shape (M,), any nonzero
        stride, sharing no memory with a or x (ValueError otherwise).
    algorithm : str
        "auto" or a variant name from ``gpuprims.variants("gemv")``, all dtypes. "auto" runs
        naive (a thread per row) for a column-major a and vectorized otherwise; vectorized uses
        16-byte loads when a's rows and x are contiguous and 16-byte aligned and is warp_per_row
        otherwise.
    stream : int, stream object or None
        As for ``matmul``; never synchronizes the host.

    Notes
    -----
    Accumulation and reproducibility as ``matmul`` (float32 for 16-bit and float32 inputs, fixed
    order per variant). K = 0 gives zeros.
    """
    _check_algorithm("gemv", algorithm)
    ain, xin = _import_operands("gemv", a, x, "x", stream)
    a_shape, x_shape = tuple(ain[4]), tuple(xin[4])
    if len(a_shape) != 2:
        raise ValueError(f"gemv: argument 'a': expected a 2-D array, got shape {a_shape}")
    if x_shape != (a_shape[1],):
        raise ValueError(f"gemv: argument 'x': expected shape ({a_shape[1]},) (a's column count), got {x_shape}")
    obj, out_arg, fresh = _output("gemv", ain, (a_shape[0],), out)
    _C.gemv(ain[3], xin[3], out_arg, algorithm, ain[2])
    return _interop.result(ain, obj) if fresh else out
