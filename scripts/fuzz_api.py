#!/usr/bin/env python3
"""Randomized differential fuzzing of gpuprims' public API against float64 / exact numpy references.

    python3 scripts/fuzz_api.py --device cuda --seconds 120 --seed 1 [--ops reduce,scan] [--replay GEN:FW:SEED]
                                [--gpu K] [--frameworks torch,cuda.core]

Every case draws shapes, dtypes, views (transposes, steps, negative strides, offset starts, stride-0
broadcasts), axes, dtype=/out= arguments, algorithms, frameworks and (on cuda) launch streams from its
own seed; on cuda the frameworks are torch, CuPy, JAX and cuda.core (CuPy views handed over as
StridedMemoryViews). With --gpu K the arrays (and side streams) live on GPU K while the current device stays
GPU 0: every op must run on its inputs' device. A mismatch or an unexpected exception prints one line with GEN:FW:SEED (--replay reruns
that case with a traceback); the summary per API function comes last; the exit code is always 0.
References and tolerances come from tests/*_reference.py and tests/conftest.py where they fit.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
import dropout_reference as DR  # noqa: E402
import gemm_reference as GR  # noqa: E402
import norms_backward_reference as NBR  # noqa: E402
import norms_reference as NR  # noqa: E402
import scan_reference as SR  # noqa: E402
import topk_reference as TR  # noqa: E402
from conftest import bf16_round, cupy, float_tolerance, jax, random_values, reduced_count, to_numpy, torch  # noqa: E402  (optional frameworks)

import gpuprims as gp  # noqa: E402

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
ALL = ("bool",) + INTS + FLOATS
OPS4 = ("sum", "prod", "min", "max")
# scan variants that refuse deterministic=True for float sums and products (the variant table's flag)
NONDETERMINISTIC_SCANS = {v.name for v in gp.variants("scan") if not v.deterministic}
EPS = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24, "float64": 2.0 ** -53}
TINY = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -133, "float32": 2.0 ** -149, "float64": 2.0 ** -1074}
FMAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38, "float64": np.inf}
WIDENS = {("float16", "float32"), ("float16", "float64"), ("bfloat16", "float32"), ("bfloat16", "float64"),
          ("float32", "float64")}
SIZES = (1, 1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 33, 63, 64, 65, 127, 129, 255, 256, 257, 1023, 1024, 1025, 4097, 5120,
         12289)
BIG = (65537, 100003, 131072, 262147, 300000)
CPU = True  # set from the command line
IN_PLACE_P = 0.1  # how often an op that may write over its input does (--in-place)
GPU = 0  # the GPU holding the arrays (--gpu); the current device stays 0

class Fail(Exception):
    """A mismatch against the reference."""

class Expected(Exception):
    """The call raised the error that the reference predicts for invalid arguments."""



# ---------------------------------------------------------------------------------------------
# frameworks and host copies

class FW:
    """A framework. "cuda.core": CuPy arrays (and views) wrapped in cuda.core StridedMemoryViews, the
    form in which cuda.core hands arrays to a library."""

    def __init__(self, name, device):
        self.name, self.device = name, device
        self.neg, self.writable = name != "torch", name != "jax"  # torch: no negative strides; JAX: immutable
        self.cupy_backed = name in ("cupy", "cuda.core")

    def __str__(self):
        return f"{self.name}-{self.device}"

    def holds(self, dt):  # bfloat16 needs ml_dtypes in numpy and does not exist in CuPy: left out there
        return dt != "bfloat16" or self.name in ("torch", "jax")

    def make(self, v, dt, delay=False):
        if self.name == "numpy":
            return v.astype(dt)
        if self.cupy_backed:
            with cupy.cuda.Device(GPU):
                return cupy.asarray(v.astype(dt))
        if self.name == "torch":
            t = torch.from_numpy(np.ascontiguousarray(v.astype(np.float32 if dt == "bfloat16" else dt)))
            t = t.to(device=self.torch_device(), dtype=getattr(torch, dt))
            if delay:  # the data lands after a GPU sleep on torch's stream: an unordered reader sees garbage
                with torch.cuda.device(GPU):
                    torch.cuda._sleep(2_000_000)
                    t = t.clone()
            return t
        import jax.numpy as jnp
        return jax.device_put(jnp.asarray(v.astype(np.float32 if dt == "bfloat16" else dt),
                                          dtype=jnp.bfloat16 if dt == "bfloat16" else dt),
                              jax.devices("cpu" if self.device == "cpu" else "gpu")[0 if self.device == "cpu" else GPU])

    def torch_device(self):
        return torch.device("cpu" if self.device == "cpu" else f"cuda:{GPU}")

    def expand(self, a, shape):
        if self.name == "torch":
            return a.expand(*shape)
        return (np if self.name == "numpy" else cupy if self.cupy_backed else __import__("jax.numpy").numpy
                ).broadcast_to(a, shape)

    def permute(self, a, perm):
        return a.permute(*perm) if self.name == "torch" else a.transpose(perm)

    def native(self, o):
        return {"numpy": lambda: type(o) is np.ndarray, "cupy": lambda: isinstance(o, cupy.ndarray),
                "torch": lambda: isinstance(o, torch.Tensor) and o.device == self.torch_device(),
                "jax": lambda: isinstance(o, jax.Array),
                "cuda.core": lambda: type(o).__name__ == "StridedMemoryView" and o.device_id == GPU}[self.name]()

    def wrap(self, a):
        """The array handed to gpuprims: a StridedMemoryView of the CuPy view for cuda.core (made
        without stream ordering: the fuzzer synchronizes around every call), else the view itself."""
        if self.name != "cuda.core":
            return a
        from cuda.core.utils import StridedMemoryView
        make = getattr(StridedMemoryView, "from_dlpack", StridedMemoryView)
        return make(a, stream_ptr=-1)

    def sync(self):
        if self.device == "cuda" and self.name == "torch":
            torch.cuda.synchronize(GPU)
        elif self.cupy_backed:
            cupy.cuda.Device(GPU).synchronize()

def frameworks(device):
    fws = []
    for n in (("numpy", "torch", "jax") if device == "cpu" else ("torch", "cupy", "jax", "cuda.core")):
        ok = {"numpy": True, "torch": torch is not None and (device == "cpu" or torch.cuda.is_available()),
              "cupy": cupy is not None, "jax": jax is not None, "cuda.core": cupy is not None and _has_cuda_core()}[n]
        try:
            ok = ok and (n != "jax" or bool(jax.devices("cpu" if device == "cpu" else "gpu")))
        except Exception:  # noqa: BLE001 - no such JAX backend
            ok = False
        fws += [FW(n, device)] * ok
    return fws

def dtname(o):
    return str(o.dtype)[6:] if torch is not None and isinstance(o, torch.Tensor) else o.dtype.name

def _has_cuda_core():
    try:
        from cuda.core.utils import StridedMemoryView  # noqa: F401
    except ImportError:
        return False
    return True

def to_np(o):
    """Host numpy copy of any array (bfloat16 as float32)."""
    if type(o).__name__ == "StridedMemoryView":  # a cuda.core view of a CuPy array or of a gpuprims result
        o = o.exporting_obj
        o = o if isinstance(o, cupy.ndarray) else cupy.from_dlpack(o)
    if torch is not None and isinstance(o, torch.Tensor):
        o = o.detach().cpu()
        return (o.float() if o.dtype == torch.bfloat16 else o).numpy()
    a = cupy.asnumpy(o) if cupy is not None and isinstance(o, cupy.ndarray) else np.asarray(o)
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a

def strides_of(x):
    if torch is not None and isinstance(x, torch.Tensor):
        return tuple(x.stride())
    if type(x).__name__ == "StridedMemoryView":  # in elements already
        return None if x.strides is None else tuple(x.strides)
    st = getattr(x, "strides", None)
    return None if st is None else tuple(s // x.itemsize for s in st)

def poison(n, dt):
    if dt in FLOATS:
        return np.full(n, np.nan, np.float32 if dt == "bfloat16" else dt)
    return np.ones(n, bool) if dt == "bool" else np.full(n, 0x5A5A5A5A5A5A5A5A, np.uint64).astype(dt)

def same(a, b):
    """Elementwise equality of two host arrays, NaN equal to NaN."""
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        a, b = a.astype(np.float64), b.astype(np.float64)
        return (a == b) | (np.isnan(a) & np.isnan(b))
    return a == b.astype(a.dtype)

def exact(what, g, r):
    g, r = np.asarray(g), np.asarray(r)
    if g.shape != r.shape:
        raise Fail(f"{what}: shape {g.shape} != reference {r.shape}")
    bad = ~same(g, r)
    if bad.any():
        i = tuple(int(v) for v in np.argwhere(bad)[0])
        raise Fail(f"{what}: {int(bad.sum())} of {bad.size} differ; first at {i}: got {g[i]!r}, want {r[i]!r}")

def close(what, g, r, tol, dt=None):
    """|g - r| <= tol, NaN where r is NaN, infinities exact; a finite r beyond dt's range by more than
    tol must come back as that infinity, one within tol of the edge may."""
    g, r = np.asarray(g, np.float64), np.asarray(r, np.float64)
    if g.shape != r.shape:
        raise Fail(f"{what}: shape {g.shape} != reference {r.shape}")
    tol = np.broadcast_to(np.nan_to_num(np.asarray(tol, np.float64), nan=0.0), r.shape)
    edge = np.zeros(r.shape, bool)
    if dt in FMAX:
        over = np.isfinite(r) & (np.abs(r) - tol > FMAX[dt])
        r = np.where(over, np.sign(r) * np.inf, r)
        edge = np.isfinite(r) & (np.abs(r) + tol > FMAX[dt]) & (g == np.sign(r) * np.inf)
    nan_r, inf_r = np.isnan(r), np.isinf(r)
    err = np.where(nan_r | inf_r, 0.0, np.abs(g - r))
    bad = (np.isnan(g) != nan_r) | (inf_r & (g != r)) | (~nan_r & ~inf_r & ~(err <= tol) & ~edge)
    if bad.any():
        i = tuple(int(v) for v in np.argwhere(bad)[0])
        fe = np.where(bad & np.isfinite(err), err, 0.0).max()
        raise Fail(f"{what}: {int(bad.sum())} of {bad.size} off, max err {fe:.4g}; first at {i}: got {g[i]!r}, "
                   f"want {r[i]!r} +- {tol[i]:.3g}")


# ---------------------------------------------------------------------------------------------
# a case: random views, poisoned outputs, launch streams

class Arr:
    """x: the framework array (a view); v: its logical values (numpy, bfloat16 as float32); flat /
    flat_v: the backing 1-D framework array and the values written to it; idx: x's positions in flat."""

    def __init__(self, x, v, flat, flat_v, idx, bcast, ro):
        self.x, self.v, self.flat, self.flat_v, self.idx, self.bcast, self.ro = x, v, flat, flat_v, idx, bcast, ro
        self.modified = False

class Ctx:
    def __init__(self, rng, fw, device):
        self.rng, self.fw, self.device = rng, fw, device
        self.P, self.name, self.inputs, self.stream, self.delay = {}, None, [], None, False
        if device == "cuda" and fw.name in ("torch", "cupy") and self.coin(0.12):
            self.stream = self.pick(("current", "explicit", "explicit-int")) if fw.name == "torch" else "current"
            self.delay = self.stream != "current" and self.coin(0.5)

    def coin(self, p):
        return self.rng.random() < p

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def shape(self, lo=0, hi=4, cap=60_000):
        nd = int(self.rng.integers(lo, hi + 1))
        s = [int(self.rng.choice(SIZES)) for _ in range(nd)]
        if nd and self.coin(0.03):  # one long dimension among 1s
            s = [1] * nd
            s[int(self.rng.integers(nd))] = int(self.rng.choice(BIG))
            return tuple(s)
        if nd and self.coin(0.06):
            s[int(self.rng.integers(nd))] = 0
        while math.prod(max(v, 1) for v in s) > cap:  # zero-size arrays too: their reductions are not empty
            i = int(np.argmax(s))
            s[i] = int(self.rng.choice([v for v in SIZES if v < s[i]]))
        return tuple(s)

    def algo(self, family):
        names = [v.name for v in gp.variants(family)]
        return "auto" if not names or self.coin(0.35) else self.pick(names)

    def arr(self, shape, dt, data, *, label, bcast=True, out=False):
        """A framework array of `shape`/`dt` behind a random view. data: n -> n flat numpy values, or the
        logical values (an array of `shape`); out=True: poisoned, never broadcast."""
        rng, fw, nd = self.rng, self.fw, len(shape)
        perm, steps, starts, neg, bd = list(range(nd)), [1] * nd, [0] * nd, [False] * nd, None
        if nd and self.coin(0.55):
            if nd > 1 and self.coin(0.5):
                perm = [int(p) for p in rng.permutation(nd)]
            grow = 1
            for d in range(nd):  # d counts the dimensions before the permutation
                s = shape[perm[d]]
                if s > 0 and grow < 4 and self.coin(0.35):
                    steps[d], starts[d] = int(rng.integers(2, 4)), int(rng.integers(0, 2))
                    grow *= steps[d]
                neg[d] = fw.neg and s > 1 and self.coin(0.25)
            cands = [d for d in range(nd) if shape[perm[d]] > 1]
            if bcast and not out and callable(data) and cands and self.coin(0.2):
                bd = int(rng.choice(cands))
        off = int(self.coin(0.25))
        ps = [shape[p] for p in perm]
        zs = [1 if d == bd else (starts[d] + ps[d] * steps[d] if ps[d] else 0) for d in range(nd)]
        sl = tuple(slice(None) if d == bd else
                   slice(starts[d] + (ps[d] - 1) * steps[d], starts[d] - 1 if starts[d] else None, -steps[d])
                   if neg[d] else slice(starts[d], starts[d] + ps[d] * steps[d], steps[d]) for d in range(nd))
        inv = tuple(int(i) for i in np.argsort(perm))

        def view(a, f):
            a = a[off:].reshape(zs)
            a = a[sl] if nd else a
            if bd is not None:
                a = f.expand(a, ps) if f else np.broadcast_to(a, ps)
            return a if inv == tuple(range(nd)) else f.permute(a, inv) if f else a.transpose(inv)

        total = math.prod(zs) + off
        idx = view(np.arange(total), None)
        if out or not callable(data):
            flat = poison(total, dt)
            if not out:
                flat[idx] = data
        else:
            flat = np.asarray(data(total))
            if nd and self.coin(0.4):  # poison what the view skips: a kernel reading it shows
                keep = np.zeros(total, bool)
                keep[idx.reshape(-1)] = True
                flat = np.where(keep, flat, poison(total, dt)).astype(flat.dtype)
        base = fw.make(flat, dt, self.delay)
        x = fw.wrap(view(base, fw))
        ro = fw.name == "numpy" and not out and self.coin(0.1)
        if ro:
            x.setflags(write=False)
        parts = [f"{dt}{tuple(shape)}"] + [f"{k}={tuple(int(e) for e in v)}" for k, v, d in (
            ("perm", perm, range(nd)), ("step", steps, [1] * nd), ("start", starts, [0] * nd), ("neg", neg, [0] * nd))
            if list(v) != list(d)] + [f"bcast_dim={bd}"] * (bd is not None) + ["off1"] * off + ["readonly"] * ro
        st = strides_of(x)
        self.P[label] = " ".join(parts + [f"strides={st}"] * (st is not None and len(parts) > 1))
        a = Arr(x, flat[idx].copy(), base, flat, idx, bd is not None, ro)
        if not out:
            self.inputs.append(a)
        return a

    def out(self, shape, dt, p=0.25):
        """A poisoned out= array (sometimes; never for JAX)."""
        ok = self.fw.writable and self.fw.holds(dt) and self.coin(p)
        return self.arr(shape, dt, None, label="out", out=True) if ok else None

    def inplace(self, a, label="x"):
        if self.fw.writable and not a.bcast and not a.ro and self.coin(IN_PLACE_P):
            self.P["out"], a.modified = f"{label} (in place)", True
            return a
        return None

    def call(self, fn):
        """fn(**stream_kwargs) on the default stream, or on a side stream (as torch's / CuPy's current
        stream, or passed as stream=), then synchronized."""
        m = self.stream
        if m is None:
            r = fn()
        elif self.fw.name == "cupy":  # CuPy's current stream is per device: GPU's is made current
            cupy.cuda.Device(GPU).synchronize()
            with cupy.cuda.Device(GPU), cupy.cuda.Stream(non_blocking=True):
                r = fn()
        else:  # torch.cuda.stream(s) also makes s's device current
            s = torch.cuda.Stream(device=GPU)
            if m == "current":
                s.wait_stream(torch.cuda.current_stream(GPU))
                with torch.cuda.stream(s):
                    r = fn()
            else:  # no wait: ordering after the inputs' producers is the library's job
                r = fn(stream=s if m == "explicit" else s.cuda_stream)
        if m is not None:
            self.P["stream"] = m + "+delayed-inputs" * self.delay
        self.fw.sync()
        return r

    def expect(self, exc, fn):
        try:
            self.call(fn)
        except exc:
            raise Expected from None
        except Exception as e:  # noqa: BLE001
            raise Fail(f"expected {exc.__name__} (reference: invalid call), got {type(e).__name__}: {e}") from None
        raise Fail(f"expected {exc.__name__} (reference: invalid call), got a result")

    def untouched(self, a, written=None, what="out"):
        """The backing buffer of `a` outside the result (or outside `written`) keeps its values."""
        fl = to_np(a.flat).reshape(-1)
        m = np.ones(fl.size, bool)
        m[a.idx.reshape(-1) if written is None else written] = False
        bad = m & ~same(fl, a.flat_v)
        if bad.any():
            raise Fail(f"{what}: {int(bad.sum())} element(s) outside the result were written, first at flat "
                       f"index {int(np.argmax(bad))}: {fl[np.argmax(bad)]!r}")

    def result(self, got, shape, dt, o=None, what="result"):
        """The result as numpy, after checking it is out= (and nothing else was written) or a fresh array
        of the input's framework, device, dtype and shape."""
        if o is not None:
            if got is not o.x:
                raise Fail(f"{what}: out= was not returned")
            self.untouched(o, what=what)
            return to_np(o.x)
        if not self.fw.native(got):
            raise Fail(f"{what}: got a {type(got).__module__}.{type(got).__name__}, not a {self.fw} array")
        if dtname(got) != dt or tuple(got.shape) != tuple(shape):
            raise Fail(f"{what}: {dtname(got)}{tuple(got.shape)}, want {dt}{tuple(shape)}")
        return to_np(got)

def inject(c, a, dt):
    """NaN / +-inf at a few random positions of float data (in 10 % of the arrays)."""
    if dt in FLOATS and a.size and c.coin(0.1):
        k = int(c.rng.integers(1, 4))
        a[c.rng.integers(0, a.size, k)] = c.rng.choice(np.array([np.nan, np.inf, -np.inf]), k)
        c.P["special"] = True
    return a

def vals(c, n, dt, op=None, scale=1.0):
    """Fresh data of dt (never all zeros): ints within +-100, normals, or values near 1 for products."""
    if dt == "bool":
        a = c.rng.random(n) < c.pick((0.5, 0.1, 0.9))
    elif dt in INTS:
        a = random_values(c.rng, n, dt)
    else:
        a = NR.round_to(c.rng.uniform(0.99, 1.01, n) if op == "prod" else c.rng.standard_normal(n) * scale, dt)
    if n and not a.any():
        a[int(c.rng.integers(n))] = 1
    return inject(c, a, dt)

def reduce_dtype(op, dt):
    return dt if op in ("min", "max") or dt in FLOATS else "uint64" if dt.startswith("uint") else "int64"

def loosen(c, tol, n):
    """The tests' tree bounds assume random data; broadcast (repeated) inputs make rounding errors
    correlated, so serial runs of n terms may add up linearly."""
    return tol * (1 + n / 64) if any(a.bcast for a in c.inputs) else tol

def check(what, g, ref, tol, dt):
    exact(what, g, ref) if tol is None else close(what, g, ref, tol, dt)


# ---------------------------------------------------------------------------------------------
# generators: reduce, scan, compact, segmented_reduce

def reduce_ref(a, op, axis, dt, odt, serial=False):
    """(reference, tolerance; None: exact) of reduce(a) as odt. Floats: the tests' tree bound (the CPU
    sums runs of 128 in order), or for broadcast (repeated, so correlated) data that of any order."""
    if dt not in FLOATS:  # 64-bit accumulation (wrapping), then one conversion
        src = a.astype(np.uint8) if dt == "bool" else a
        if op in ("sum", "prod"):
            acc = np.asarray((np.sum if op == "sum" else np.prod)(
                src, axis=axis, dtype=np.uint64 if dt.startswith("uint") else np.int64))
        else:
            acc = np.asarray((np.min if op == "min" else np.max)(src, axis=axis))
        if odt in FLOATS:
            return acc.astype(np.float64), 2 * EPS[odt] * np.abs(acc.astype(np.float64)) + TINY[odt]
        return acc.astype(odt), None
    x = a.astype(np.float64)
    n = reduced_count(x.shape, axis)
    acc = 2.0 ** -53 if "float64" in (dt, odt) else 2.0 ** -24
    if op == "sum":
        r = x.sum(axis=axis)
        depth = n if serial else min(n, 128) + 2 if CPU else 0
        return r, (float_tolerance(x, axis, odt, acc) + 2.0 ** -24 * np.abs(r) + TINY[odt]
                   + depth * acc * np.abs(x).sum(axis=axis))
    if op == "prod":  # n roundings, each also absolute in the subnormal range
        r = x.prod(axis=axis)
        return r, np.abs(r) * ((n + 2) * acc + 2 * EPS[odt]) + (n + 1) * TINY[odt]
    r = x.min(axis=axis) if op == "min" else x.max(axis=axis)
    return r, 0.0 if dt == odt or (dt, odt) in WIDENS else 2 * EPS[odt] * np.abs(r) + TINY[odt]

def gen_reduce(c):
    op, dt, shape = c.pick(OPS4), c.pick([d for d in ALL if c.fw.holds(d)]), c.shape()
    nd = len(shape)
    if nd == 0 or c.coin(0.3):
        axis = None
    elif c.coin(0.7):
        axis = int(c.rng.integers(-nd, nd))
    else:  # numpy's tuple of axes: any subset (the empty one too), in any order, some negative
        axis = tuple(int(d) - nd * c.coin(0.3) for d in c.rng.permutation(nd)[:c.rng.integers(0, nd + 1)])
    keep = c.coin(0.3)
    ovr = c.pick([d for d in (FLOATS if dt in FLOATS else INTS + ("bool", "float16", "float32", "float64"))
                  if c.fw.holds(d)]) if c.coin(0.25) else None
    odt, algo, c.name = ovr or reduce_dtype(op, dt), c.algo("reduce"), c.pick(("reduce", op))
    c.P.update(op=op, axis=axis, keepdims=keep, dtype=ovr, algorithm=algo)
    a = c.arr(shape, dt, lambda n: vals(c, n, dt, op), label="x")
    reduced = range(nd) if axis is None else {d % nd for d in (axis if isinstance(axis, tuple) else (axis,))}
    oshape = tuple(1 if d in reduced else n for d, n in enumerate(shape) if keep or d not in reduced)
    rlen = reduced_count(shape, axis)
    o = c.out(oshape, odt)
    kw = dict(dtype=ovr, keepdims=keep, algorithm=algo, out=o and o.x)
    args = (a.x, op, axis) if c.name == "reduce" else (a.x, axis)
    fn = lambda **s: getattr(gp, c.name)(*args, **kw, **s)  # noqa: E731
    if ovr == "bool" and dt != "bool":  # numpy's result converts each element first (reduce.py)
        return c.expect(TypeError, fn)
    if op in ("min", "max") and rlen == 0:
        return c.expect(ValueError, fn)
    g = c.result(c.call(fn), oshape, odt, o)
    ref, tol = reduce_ref(a.v, op, axis, dt, odt, a.bcast)
    check("result", g, np.reshape(ref, oshape), np.reshape(tol, oshape) if np.ndim(tol) else tol, odt)

def needs_copy_to_flatten(a):
    """A cuda.core view (no reshape()) of 2+ dimensions that is not one strided run in C order: scan
    with axis=None, compact and nonzero refuse it with a TypeError (_interop.flat_view)."""
    x = a.x
    if type(x).__name__ != "StridedMemoryView" or x.strides is None or math.prod(x.shape) <= 1:
        return False
    kept = [(e, st) for e, st in zip(x.shape, x.strides) if e != 1]
    return any(so != e * si for (_, so), (e, si) in zip(kept, kept[1:]))

# (input, result) dtypes the scan kernels read directly; any other pair is converted into the result first
SCAN_PAIRS = {("float16", "float32"), ("float16", "float64"), ("bfloat16", "float32"), ("bfloat16", "float64"),
              ("float32", "float64"), ("bool", "bool"), ("bool", "int64"), ("int8", "int64"), ("int16", "int64"),
              ("int32", "int64"), ("uint8", "uint64"), ("uint16", "uint64"), ("uint32", "uint64")}
SCAN_SELF = INTS + FLOATS

def gen_scan(c):
    op = c.pick(OPS4)
    dt = c.pick([d for d in SCAN_SELF + ("bool",) if c.fw.holds(d)])
    shape = c.shape(0, 3)
    nd = len(shape)
    axis = None if c.coin(0.35) or (nd == 0 and c.coin(0.9)) else int(c.rng.integers(-nd, nd)) if nd else 0
    excl, det = c.coin(0.3), c.coin(0.2)
    ovr = None if not c.coin(0.3) else c.pick([o for i, o in SCAN_PAIRS if i == dt] + [dt]) if c.coin(0.6) else \
        c.pick([d for d in ALL if c.fw.holds(d)])
    odt, algo = ovr or reduce_dtype(op, dt), c.algo("scan")
    if algo in SR.TWICE_ROUNDED and odt == "float16" and op != "min" and op != "max" and dt not in FLOATS:
        algo = "auto"  # a tile's partial of integers beyond float16's range stays inf there (scan.py)
    c.name = "cumsum" if op == "sum" and c.coin(0.5) else "cumprod" if op == "prod" and c.coin(0.5) else "scan"
    c.P.update(op=op, axis=axis, exclusive=excl, deterministic=det, dtype=ovr, algorithm=algo)
    a = c.arr(shape, dt, lambda n: inject(c, SR.scan_values(c.rng, n, dt, op), dt), label="x")
    oshape = (math.prod(shape),) if axis is None else shape
    o = (c.inplace(a) if odt == dt and (axis is not None or nd == 1) else None) or c.out(oshape, odt)
    kw = dict(exclusive=excl, dtype=ovr, deterministic=det, algorithm=algo, out=o and o.x)
    args = (a.x, op, axis) if c.name == "scan" else (a.x, axis)
    fn = lambda **s: getattr(gp, c.name)(*args, **kw, **s)  # noqa: E731
    if axis is not None and nd == 0:
        return c.expect(ValueError, fn)
    if axis is None and needs_copy_to_flatten(a):
        return c.expect(TypeError, fn)
    if det and algo in NONDETERMINISTIC_SCANS and odt in FLOATS and op in ("sum", "prod"):
        return c.expect(ValueError, fn)
    g = c.result(c.call(fn), oshape, odt, o)
    src, ax = (a.v.reshape(-1), 0) if axis is None else (a.v, axis % nd)
    if not src.size:
        return exact("result", g, np.zeros(src.shape, g.dtype))
    # "auto" takes the column tiles for strided axes: their chain of prefixes, one per 64 items
    ref, tol = SR.reference(src, op, ax, odt, exclusive=excl, sequential=CPU or a.bcast,
                            twice_rounded=algo in SR.TWICE_ROUNDED,
                            chain=SR.prefix_chain("columns" if algo == "auto" else algo))
    if op == "prod" and tol is not None:  # each rounding in the subnormal range is absolute
        tol = tol + np.cumsum(np.ones(ref.shape), axis=ax) * TINY[odt]
    if tol is None and odt in ("float16", "bfloat16"):
        # Exact half-precision products (powers of two) still round once to odt where they fall
        # below its smallest subnormal (2^-25 in float16 is a tie: 0).
        with np.errstate(over="ignore"):
            ref = (bf16_round(ref) if odt == "bfloat16" else ref.astype(np.float16)).astype(np.float64)
    if op == "prod" and odt in ("float16", "bfloat16", "float32"):
        # Combined as a tree, the items after a zero may overflow the accumulator on their own: 0 * inf
        # = NaN where the sequential product stays 0 (scan's docstring, Notes).
        limit = FMAX["float16"] if odt == "float16" and algo in SR.TWICE_ROUNDED else FMAX["float32"]
        nan_ok = overflow_after_zero(src.astype(np.float64), ax, limit, excl) & (ref == 0)
        ref = np.where(nan_ok & np.isnan(np.asarray(g, np.float64)), np.nan, ref)
    check("result", g, ref, 0.0 if tol is None and odt in FLOATS else tol, odt)

def overflow_after_zero(x, axis, limit, exclusive):
    """Where a scan's product covers a zero followed by items whose own product exceeds `limit` in
    magnitude (each item at least 1 in magnitude or 0, as the integer inputs that reach it are), and
    every item after such a place (a NaN stays NaN, later zeros included)."""
    a = np.moveaxis(np.abs(x), axis, -1)
    zero = a == 0
    logs = np.cumsum(np.where(zero, 0.0, np.log2(np.where(zero, 1.0, a))), -1)
    last = np.maximum.accumulate(np.where(zero, np.arange(a.shape[-1]), -1), -1)  # the last zero up to i
    since = logs - np.take_along_axis(logs, np.maximum(last, 0), -1)  # log2 |product| after it
    m = np.logical_or.accumulate((last >= 0) & (since > np.log2(limit) - 1), -1)  # NaN stays NaN
    if exclusive:  # item i covers the items before it
        m = np.concatenate([np.zeros_like(m[..., :1]), m[..., :-1]], -1)
    return np.moveaxis(m, -1, axis)

def gen_compact(c):
    nz = c.coin(0.3)
    c.name = "nonzero" if nz else "compact"
    dt, shape, dens = c.pick([d for d in ALL if c.fw.holds(d)]), c.shape(0, 3), c.pick((0.0, 1.0, 0.5, 0.05, 0.95))
    c.P["density"] = dens
    if nz and c.coin(0.5):  # nonzero() of any dtype: -0.0, NaN, subnormals, top-bit-only integers
        m = c.arr(shape, dt, lambda n: SR.nonzero_values(c.rng, n, dt), label="mask")
    else:
        m = c.arr(shape, "bool", lambda n: c.rng.random(n) < dens, label="mask")
    x = None
    if not nz:
        x = c.arr(shape[:-1] + (shape[-1] + 1,) if shape and c.coin(0.03) else shape, dt, lambda n: vals(c, n, dt),
                  label="x")
        if c.fw.name == "torch" and x.x.reshape(-1).data_ptr() != x.x.data_ptr():
            c.P["note"] = "x.reshape(-1) copies"
    mv = m.v.reshape(-1)
    cnt, odt = int(np.count_nonzero(mv)), "int64" if nz else dt
    o = c.out((c.pick((mv.size, cnt, max(cnt - 1, 0), mv.size + 3, 0)),), odt, 0.35)
    kw = dict(algorithm="auto", out=o and o.x)
    fn = (lambda **s: gp.nonzero(m.x, **kw, **s)) if nz else (lambda **s: gp.compact(x.x, m.x, **kw, **s))
    if x is not None and x.v.shape != m.v.shape:
        return c.expect(ValueError, fn)
    if needs_copy_to_flatten(m) or (x is not None and needs_copy_to_flatten(x)):
        return c.expect(TypeError, fn)
    ref, res = np.flatnonzero(mv) if nz else x.v.reshape(-1)[mv], c.call(fn)
    if o is None:
        return exact("result", c.result(res, (cnt,), odt), ref)
    if not (isinstance(res, tuple) and len(res) == 2 and res[0] is o.x):
        raise Fail("out=: expected (out, count) back")
    if int(c.result(res[1], (), "int64", what="count")) != cnt:
        raise Fail(f"count {int(to_np(res[1]))} != {cnt}")
    k = min(cnt, o.v.size)
    exact("result", to_np(o.x)[:k], ref[:k])
    c.untouched(o, written=o.idx.reshape(-1)[:k])

def gen_segmented(c):
    c.name, op = "segmented_reduce", c.pick(OPS4)
    dt = c.pick([d for d in ALL if c.fw.holds(d)])
    n, nseg = (0 if c.coin(0.05) else c.shape(1, 1, cap=100_000)[0]), c.pick((0, 1, 2, 5, 33, 200, 1000))
    if c.coin(0.15):  # room for listed segments (over 256 KiB) and the long kernel's tail on the block path
        n = int(c.rng.integers(70_000, 600_000))
    algo = c.pick(("auto", "auto", "blocks", "ranges"))
    lo = int(c.rng.integers(0, n + 1)) if c.coin(0.3) else 0
    hi = int(c.rng.integers(lo, n + 1)) if c.coin(0.3) else n
    off = np.sort(c.rng.integers(lo, hi + 1, nseg + 1))
    if c.coin(0.5):
        off[0], off[-1] = lo, hi
    if nseg > 2 and c.coin(0.4):  # a run of empty segments before one long one
        i, j = sorted(int(v) for v in c.rng.integers(0, nseg + 1, 2))
        off[i:j] = off[i]
    c.P.update(op=op, n=n, segments=nseg, algorithm=algo)
    x = c.arr((n,), dt, lambda k: vals(c, k, dt, op), label="x")
    odt_off = c.pick(("int32", "int64"))
    offs = c.arr((nseg + 1,), odt_off, off.astype(odt_off), label="offsets")
    odt = reduce_dtype(op, dt)
    o = c.out((nseg,), odt)
    g = c.result(c.call(lambda **s: gp.segmented_reduce(x.x, offs.x, op, algorithm=algo, out=o and o.x, **s)),
                 (nseg,), odt, o)
    ref, tol = np.empty(nseg, np.float64 if odt in FLOATS else odt), np.zeros(nseg)
    for s in range(nseg):
        b, e = int(off[s]), int(off[s + 1])
        if b == e:
            ref[s] = SR.identity(op, odt)
            continue
        r, t = reduce_ref(x.v[b:e], op, None, dt, odt, x.bcast)
        ref[s], tol[s] = r, 0.0 if t is None else t
        if op == "sum" and odt in FLOATS:  # CPU: left to right; GPU: split across blocks (a deeper tree)
            tol[s] += (e - b if CPU else 64) * EPS["float64" if dt == "float64" else "float32"] * 2 * \
                np.abs(x.v[b:e].astype(np.float64)).sum()
    check("result", g, ref, None if odt not in FLOATS else tol, odt)


# ---------------------------------------------------------------------------------------------
# generators: histogram, bincount

def hist_samples(c, n, dt, range_, bins):
    if dt == "bool":
        return c.rng.random(n) < 0.3
    if dt == "bfloat16":
        return (np.round(c.rng.standard_normal(n) * 16) / 8).astype(np.float32)
    if dt in INTS:
        info, big = np.iinfo(dt), 2 ** 40 if c.coin(0.5) else 1000
        a = c.rng.integers(max(int(info.min), -big), min(int(info.max), big), size=n, endpoint=True).astype(dt)
        if dt == "uint64" and n and c.coin(0.3):  # beyond int64 too
            a[c.rng.integers(0, n, 1 + n // 3)] = c.rng.integers(2**63, 2**64 - 1, 1 + n // 3, dtype=np.uint64,
                                                                   endpoint=True)
    else:
        a = inject(c, (c.rng.standard_normal(n) * c.pick((1.0, 3.0, 100.0))).astype(dt), dt)
    if range_ is not None and n and c.coin(0.5):  # samples on and next to the edges
        try:
            e = np.histogram_bin_edges(np.zeros(0, dt), bins, range_).astype(dt)
        except ValueError:
            return a
        e = np.concatenate([e, np.nextafter(e, np.inf, dtype=dt), np.nextafter(e, -np.inf, dtype=dt)]) \
            if dt in FLOATS else np.concatenate([e, e + 1, e - 1]).astype(dt)
        k = min(e.size, n // 2 + 1)
        a[c.rng.integers(0, n, k)] = c.rng.choice(e, k)
    return a

def gen_histogram(c):
    c.name = "histogram"
    dt = c.pick([d for d in ("bool",) + INTS + FLOATS if c.fw.holds(d)])
    shape, bins = c.shape(0, 3), c.pick((1, 2, 3, 7, 10, 64, 100, 255, 256, 257, 1000, 4099))
    if dt == "bfloat16":  # numpy has no bfloat16: with edges exact in it, numpy's float32 result is ours
        bins, j = 2 ** int(c.rng.integers(0, 7)), int(c.rng.integers(0, 4))
        range_ = (-2 ** j, 2 ** j)
    elif c.coin(0.35):
        range_ = None
    else:
        probe = hist_samples(c, 200, dt, None, bins).astype(np.float64)
        lo, hi = (float(v) for v in np.percentile(probe[np.isfinite(probe)], [5, 90]))
        if c.coin(0.3):
            lo = float(c.rng.standard_normal() * 10.0 ** c.rng.integers(-3, 4))
            hi = lo + float(c.rng.exponential() * 10.0 ** c.rng.integers(-2, 4))
        # int bounds for integer samples; numpy overflows on uint64 samples against negative ints or
        # ints of 2^63 and more: float bounds there
        if dt in INTS + ("bool",) and (dt != "uint64" or 0 <= lo and hi < 2**62):
            range_ = (int(np.floor(lo)), int(np.floor(hi)) + 1)
        else:
            range_ = (lo, hi)
    algo = c.algo("histogram")
    c.P.update(bins=bins, range=range_, algorithm=algo)
    x = c.arr(shape, dt, lambda n: hist_samples(c, n, dt, range_, bins), label="x")
    wdt = c.pick([d for d in ALL if c.fw.holds(d)]) if c.coin(0.3) else None
    w = wdt and c.arr(shape, wdt, lambda n: weight_values(c, n, wdt), label="weights")
    odt = wdt or "int64"
    o = c.out((bins,), odt)
    fn = lambda **s: gp.histogram(x.x, bins, range_, weights=w and w.x, algorithm=algo, out=o and o.x, **s)  # noqa
    a = x.v.reshape(-1).astype(np.uint8) if dt == "bool" else x.v.reshape(-1)
    wv = None if w is None else w.v.reshape(-1).astype(np.float64)
    try:
        ref = np.histogram(a, bins, range_, weights=wv)[0]
    except ValueError:  # numpy's errors: too many bins for the range's resolution, non-finite data range
        return c.expect(ValueError, fn)
    except IndexError:  # numpy's own failure (float16 samples with a range inside one float16 spacing,
        # numpy 2.x: its bin index overshoots the edges): no reference, but the call must return counts
        c.result(c.call(fn), (bins,), odt, o)
        return None
    g = c.result(c.call(fn), (bins,), odt, o)
    if w is None:
        return exact("counts", g, ref)
    if wdt == "bool":  # float64 sums (exact for small integers) converted once, saturating
        return exact("weighted", g, ref != 0)
    if wdt not in FLOATS:
        info = np.iinfo(wdt)
        return exact("weighted", g, np.clip(ref, int(info.min), int(info.max)).astype(wdt))
    mag, cnt = np.histogram(a, bins, range_, weights=np.abs(wv))[0], np.histogram(a, bins, range_)[0]
    close("weighted", g, ref, 2 * EPS[odt] * np.abs(ref) + 2.0 ** -53 * (cnt + 2) * mag + 1e-300, odt)

def weight_values(c, n, dt):
    """Weights of any dtype: normals for floats, small integers (their float64 sums exact)."""
    if dt == "bfloat16":  # the values a bfloat16 array holds
        return bf16_round(c.rng.standard_normal(n).astype(np.float32))
    if dt in FLOATS:
        return c.rng.standard_normal(n).astype(dt)
    if dt == "bool":
        return c.rng.random(n) < 0.5
    return c.rng.integers(-3 if dt.startswith("int") else 0, 3, n, endpoint=True).astype(dt)

def gen_bincount(c):
    c.name = "bincount"
    dt = c.pick(("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32") + ("float32",) * c.coin(0.05))
    n = 0 if c.coin(0.05) else c.shape(1, 1, cap=100_000)[0]
    high = 1 if dt == "bool" else min(c.pick((1, 5, 255, 300, 5000)), 127 if dt == "int8" else 5000)
    neg, minlength = dt.startswith("int") and n > 0 and c.coin(0.1), c.pick((0, 0, 1, 5, 300, 1000))

    def data(k):
        v = c.rng.integers(0, high, size=k, endpoint=True)
        if neg:
            v[c.rng.integers(0, k, 2)] = -int(c.rng.integers(1, 6))
        return (v > 0) if dt == "bool" else v.astype(dt)

    x = c.arr((n,), dt, data, label="x")
    wdt = c.pick([d for d in ALL if c.fw.holds(d)]) if c.coin(0.3) else None
    w = wdt and c.arr((n,), wdt, lambda k: weight_values(c, k, wdt), label="weights")
    odt, xi = "float64" if w else "int64", x.v.astype(np.int64)
    top, oor, algo = int(xi.max()) + 1 if n else 0, c.pick(("raise", "ignore")), c.algo("bincount")
    o = c.out((max(1, c.pick((top, minlength, top + 5, top // 2))),), odt, 0.3)
    c.P.update(minlength=minlength, algorithm=algo, out_of_range=oor if o else None)
    kw = dict(weights=w and w.x, algorithm=algo) | (dict(out=o.x, out_of_range=oor) if o else {})
    fn = lambda **s: gp.bincount(x.x, minlength, **kw, **s)  # noqa: E731
    if dt == "float32":
        return c.expect(TypeError, fn)
    length = max(top, minlength) if o is None else o.v.size
    inside = (xi >= 0) & (xi < length)
    if not inside.all() and (o is None or oor == "raise") or (o is not None and length < minlength):
        return c.expect(ValueError, fn)
    wv = None if w is None else w.v.astype(np.float64)[inside]
    ref, g = np.bincount(xi[inside], weights=wv, minlength=length), c.result(c.call(fn), (length,), odt, o)
    if w is None:
        return exact("counts", g, ref)
    mag, cnt = np.bincount(xi[inside], np.abs(wv), minlength=length), np.bincount(xi[inside], minlength=length)
    close("weighted", g, ref, 2.0 ** -53 * (cnt + 2) * mag + 1e-300, odt)


# ---------------------------------------------------------------------------------------------
# generators: the norms family, dropout

def rows(c, lo=1):
    """(float dtype, shape, axis) of a row-wise op."""
    shape = c.shape(lo, 4)
    return c.pick([d for d in FLOATS if c.fw.holds(d)]), shape, (int(c.rng.integers(-len(shape), len(shape)))
                                                                   if shape else -1)

def affine(c, n, dt, bias):
    w = c.arr((n,), dt, lambda k: NR.round_to(c.rng.uniform(0.5, 1.5, k), dt), label="weight") if c.coin(0.7) else None
    b = c.arr((n,), dt, lambda k: vals(c, k, dt), label="bias") if bias and c.coin(0.6) else None
    return w, b

def gen_softmax(c):
    c.name = op = c.pick(("softmax", "log_softmax"))
    dt, shape, axis = rows(c, 1 if c.coin(0.97) else 0)
    scale, algo = c.pick((1.0, 3.0, 30.0) + (3000.0,) * (dt == "float16")), c.algo(op)
    c.P.update(axis=axis, scale=scale, algorithm=algo)
    x = c.arr(shape, dt, lambda n: vals(c, n, dt, scale=scale), label="x")
    # dtype= (torch's definition: x cast first) on some cases: the result and the reference in to_dt.
    # The kernels convert float x themselves, rounding once (torch's CPU float64 -> float16 cast
    # rounds twice, through float32; the reference here is the single rounding).
    casts = [d for d in FLOATS if d != dt and c.fw.holds(d)]
    to_dt = c.pick(casts) if casts and c.coin(0.2) else None
    kw = {} if to_dt is None else {"dtype": to_dt}
    if to_dt is not None:
        c.P.update(dtype=to_dt)
    o = (c.inplace(x) if to_dt is None else None) or c.out(shape, to_dt or dt)
    fn = lambda **s: getattr(gp, op)(x.x, axis, algorithm=algo, out=o and o.x, **kw, **s)  # noqa: E731
    if not shape:
        return c.expect(ValueError, fn)
    rdt, v = to_dt or dt, x.v if to_dt is None else NR.round_to(x.v.astype(np.float64), to_dt).astype(np.float64)
    g = c.result(c.call(fn), shape, rdt, o)
    ref = NR.reference(op, v, axis)[0]
    tol = NR.tolerance(op, rdt, v, ref, axis)
    if op == "softmax" and v.size:  # exp(x - max): x - max rounds in float32 (float64), exp scales that by |x - max|
        x64 = v.astype(np.float64)
        arg = np.nan_to_num(np.abs(x64 - x64.max(axis=axis, keepdims=True)), nan=0.0, posinf=0.0)
        tol = tol + 4 * (2.0 ** -53 if rdt == "float64" else 2.0 ** -24) * arg * np.abs(np.nan_to_num(ref))
    close("y", g, ref, loosen(c, tol, shape[axis]), rdt)

def check_stats(c, res, op, dt, src, mean, rstd, axis, shape):
    """mean / rstd as the tests check them, on rows of finite values (special rows: y only)."""
    ax = axis % len(shape)
    sdt, sshape = "float64" if dt == "float64" else "float32", shape[:ax] + (1,) + shape[ax + 1:]
    seps, src = 2.0 ** -40 if dt == "float64" else 2.0 ** -18, src.astype(np.float64)
    fin = np.isfinite(src).all(axis=axis, keepdims=True)
    if op == "layer_norm":
        g = c.result(res[-2], sshape, sdt, what="mean")
        spread = np.abs(np.where(np.isfinite(src), src, 0)).max(axis=axis, keepdims=True) if src.size else 0.0
        close("mean", g, np.where(fin, mean, g), seps * (spread + np.abs(np.nan_to_num(mean))) + 1e-300)
    g = c.result(res[-1], sshape, sdt, what="rstd")
    close("rstd", g, np.where(fin, rstd, g), seps * np.abs(np.nan_to_num(rstd)) * 8 + 1e-300)

def gen_norm(c):
    """layer_norm, rms_norm, add_layer_norm, add_rms_norm."""
    c.name = c.pick(("layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm"))
    base, add = c.name.replace("add_", ""), c.name.startswith("add_")
    dt, shape, axis = rows(c)
    x = c.arr(shape, dt, lambda k: vals(c, k, dt, scale=c.pick((1.0, 3.0, 100.0))), label="x")
    r = c.arr(shape, dt, lambda k: vals(c, k, dt, scale=3.0), label="residual") if add else None
    w, b = affine(c, shape[axis], dt, base == "layer_norm")
    eps = c.pick((None, 1e-5, 1e-3, 0.1) + (0.0,) * (shape[axis] >= 2 and not x.bcast and not add))
    stats, algo = c.coin(0.4), c.algo(c.name)
    c.P.update(axis=axis, eps=eps, return_stats=stats, algorithm=algo)
    o = c.inplace(x) or (c.inplace(r, "residual") if add else None) or c.out(shape, dt)
    kw = dict(axis=axis, return_stats=stats, algorithm=algo, out=o and o.x) | ({} if eps is None else dict(eps=eps))
    args = (x.x,) + ((r.x,) if add else ()) + (w and w.x,) + ((b and b.x,) if base == "layer_norm" else ())
    res = c.call(lambda **s: getattr(gp, c.name)(*args, **kw, **s))
    g = c.result(res[0] if stats or add else res, shape, dt, o)
    src = x.v
    if add:  # s = x + residual, rounded once to the dtype from float32 (float64), as the unfused sum
        wide = np.float64 if dt == "float64" else np.float32
        src = NR.round_to(x.v.astype(wide) + r.v.astype(wide), dt)
        exact("sum", c.result(res[1], shape, dt, what="sum"), src)
    ref, mean, rstd = NR.reference(base, src, axis, w and w.v, b and b.v, eps)
    close("y", g, ref, loosen(c, NR.tolerance(base, dt, src, ref, axis, w and w.v, b and b.v), shape[axis]), dt)
    if stats:
        check_stats(c, res, base, dt, src, mean, rstd, axis, shape)

def gen_backward(c):
    """softmax_backward, log_softmax_backward, layer_norm_backward, rms_norm_backward."""
    op = c.pick(("softmax", "log_softmax", "layer_norm", "rms_norm"))
    c.name, soft = op + "_backward", op in NBR.SOFTMAX_OPS
    dt, shape, axis = rows(c)
    n, algo = shape[axis], c.algo(op + "_backward")
    c.P.update(axis=axis, algorithm=algo)
    x = w = mean = rstd = None
    if soft:  # y: a (rounded) forward output, behind its own view
        xs = vals(c, math.prod(shape), dt, scale=c.pick((1.0, 3.0))).reshape(shape).astype(np.float64)
        x = c.arr(shape, dt, NR.round_to(NR.reference(op, xs, axis)[0], dt), label="y")
    else:
        x = c.arr(shape, dt, lambda k: vals(c, k, dt, scale=c.pick((1.0, 3.0))), label="x")
        w = affine(c, n, dt, False)[0]
        fwd = gp.layer_norm(x.x, w and w.x, None, axis=axis, return_stats=True) if op == "layer_norm" else \
            gp.rms_norm(x.x, w and w.x, axis=axis, return_stats=True)
        mean, rstd = (fwd[1] if op == "layer_norm" else None), fwd[-1]
        c.fw.sync()
    dy = c.arr(shape, dt, lambda k: vals(c, k, dt), label="dy")
    o = c.out(shape, dt)
    kw = dict(axis=axis, algorithm=algo, out=o and o.x)
    if soft:
        fn = lambda **s: getattr(gp, c.name)(x.x, dy.x, **kw, **s)  # noqa: E731
    elif op == "layer_norm":
        fn = lambda **s: gp.layer_norm_backward(dy.x, x.x, w and w.x, mean, rstd, **kw, **s)  # noqa: E731
    else:
        fn = lambda **s: gp.rms_norm_backward(dy.x, x.x, w and w.x, rstd, **kw, **s)  # noqa: E731
    res = c.call(fn)
    rdx, rdw, rdb, mags = NBR.backward_reference(op, dy.v, x.v, w and w.v, None if mean is None else to_np(mean),
                                                 None if rstd is None else to_np(rstd), axis)
    close("dx", c.result(res if soft else res[0], shape, dt, o), rdx,
          loosen(c, NBR.backward_tolerance(dt, rdx, mags[0], n), n), dt)
    nrows = 4 * (math.prod(shape) // n if n else 0)
    for i, what, ref in ((1, "dweight", rdw), (2, "dbias", rdb)):
        if not soft and ref is not None:
            close(what, c.result(res[i], (n,), dt, what=what), ref,
                  loosen(c, NBR.backward_tolerance(dt, ref, mags[i], nrows), nrows), dt)

def gen_dropout(c):
    c.name = "bias_dropout_add"
    dt = c.pick([d for d in FLOATS if c.fw.holds(d)])
    shape = c.shape(1 if c.coin(0.97) else 0, 4)
    x = c.arr(shape, dt, lambda k: vals(c, k, dt), label="x")
    r = c.arr(shape, dt, lambda k: vals(c, k, dt), label="residual")
    b = c.arr(shape[-1:], dt, lambda k: vals(c, k, dt), label="bias") if shape and c.coin(0.6) else None
    p, training = c.pick((0.0, 0.1, 0.5, 0.9, 1.0, float(c.rng.random()))), c.coin(0.85)
    seed, offset = (int(c.rng.integers(0, 2 ** 64, dtype=np.uint64)) for _ in range(2))
    c.P.update(p=p, seed=seed, offset=offset, training=training)
    o = c.inplace(x) or c.inplace(r, "residual") or c.out(shape, dt, 0.2)
    fn = lambda **s: gp.bias_dropout_add(x.x, b and b.x, r.x, p, seed=seed, offset=offset,  # noqa: E731
                                         training=training, out=o and o.x, **s)
    if not shape:
        return c.expect(ValueError, fn)
    g = c.result(c.call(fn), shape, dt, o).astype(np.float64)
    r64 = r.v.astype(np.float64)
    xb = x.v.astype(np.float64) + (0.0 if b is None else b.v.astype(np.float64))
    if not training or p == 0.0:
        return close("result", g, r64 + xb, DR.tolerance(dt, r64 + xb, np.abs(r64) + 2 * np.abs(xb)) + TINY[dt], dt)
    factor = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    kept, dropped = r64 + xb * factor, r64 + xb * 0.0
    tol = DR.tolerance(dt, kept, np.abs(r64) + np.abs(xb) * (1 + factor)) + TINY[dt]  # + subnormal spacing
    is_drop = same(g, dropped)
    is_keep = (np.isnan(kept) & np.isnan(g)) | (np.abs(g - kept) <= tol) | (np.isinf(kept) & (g == kept))
    if p >= 1 and not is_drop.all() or not (is_drop | is_keep).all():
        close("result (kept elements)", np.where(is_drop, kept, g), kept, tol, dt)
    if g.size <= 2048 and 0 < p < 1:  # the documented Philox mask, element by element in C order
        keep = DR.keep_mask(g.size, p, seed, offset).reshape(shape)
        bad = (is_drop != is_keep) & (keep != is_keep)  # where one candidate matches, it must be the mask's
        if bad.any():
            raise Fail(f"mask differs from the documented Philox mapping at {int(bad.sum())} elements, first at "
                       f"{tuple(int(v) for v in np.argwhere(bad)[0])}")
    if o is None:  # the same (seed, offset) twice: identical bits
        exact("second call", c.result(c.call(fn), shape, dt).astype(np.float64), g)


# ---------------------------------------------------------------------------------------------
# generators: matmul, gemv

def matmul_ok(algo, dt, tf32):
    if algo in ("auto",) + GR.ALL_DTYPE_VARIANTS:
        return True
    if algo in GR.FLOAT32_VARIANTS:
        return dt == "float32"
    return dt in ("float16", "bfloat16") or (algo == "wmma" and dt == "float32" and tf32)

def gen_matmul(c):
    c.name = "matmul"
    dt = c.pick([d for d in FLOATS if c.fw.holds(d)])
    m, k, n = (c.pick((0, 1, 1, 2, 3, 7, 16, 31, 33, 64, 65, 127, 129, 255, 257)) for _ in range(3))
    while m * k * n > (2_000_000 if CPU else 8_000_000):
        m, k = max(1, m // 2), max(1, k // 2)
    batch, ash, bsh = None if c.coin(0.5) else c.pick((0, 1, 2, 3, 5)), (m, k), (k, n)
    if batch is not None:  # both batched, one 2-D, or one with a batch of 1 (broadcast)
        form = c.pick(("both", "a", "b", "a1", "b1"))
        ash = (1 if form == "a1" else batch, m, k) if form != "b" else ash
        bsh = (1 if form == "b1" else batch, k, n) if form != "a" else bsh
    tf32, integer = c.coin(0.2), c.coin(0.2)
    algo = c.pick(("auto",) + tuple(v.name for v in gp.variants("matmul")
                                    if c.coin(0.15) or matmul_ok(v.name, dt, tf32)))
    c.P.update(mkn=(m, k, n), batch=batch, allow_tf32=tf32, algorithm=algo, integer=integer)

    def data(cnt):  # small integers: every product and partial sum exact (not under TF32)
        if integer:
            return NR.round_to(GR.integer_data(c.rng, cnt, dt, k), dt)
        return inject(c, GR.data(c.rng, cnt, dt), dt)

    a, b = c.arr(ash, dt, data, label="a"), c.arr(bsh, dt, data, label="b")
    rshape = np.matmul(np.zeros(ash, np.int8), np.zeros(bsh, np.int8)).shape
    o = c.out(rshape, dt)
    fn = lambda **s: gp.matmul(a.x, b.x, out=o and o.x, algorithm=algo, allow_tf32=tf32, **s)  # noqa: E731
    if not matmul_ok(algo, dt, tf32):
        return c.expect(TypeError, fn)
    g = c.result(c.call(fn), rshape, dt, o)
    tf32 = tf32 and dt == "float32"
    tol = None if integer and not tf32 else GR.matmul_tolerance(a.v, b.v, dt, tf32)
    check("result", g, GR.matmul_reference(a.v, b.v), tol, dt)

def gen_gemv(c):
    c.name = "gemv"
    dt, (m, k), algo = c.pick([d for d in FLOATS if c.fw.holds(d)]), c.shape(2, 2, cap=300_000), c.algo("gemv")
    c.P["algorithm"] = algo
    a = c.arr((m, k), dt, lambda n: inject(c, GR.data(c.rng, n, dt), dt), label="a")
    x = c.arr((k,), dt, lambda n: inject(c, GR.data(c.rng, n, dt), dt), label="x")
    o = c.out((m,), dt)
    g = c.result(c.call(lambda **s: gp.gemv(a.x, x.x, out=o and o.x, algorithm=algo, **s)), (m,), dt, o)
    close("result", g, GR.matmul_reference(a.v, x.v), GR.matmul_tolerance(a.v, x.v[:, None], dt)[:, 0], dt)

def gen_transpose(c):
    c.name = "transpose"
    dt = c.pick([d for d in ALL if c.fw.holds(d)])
    shape, algo = c.shape(0, 5, cap=200_000), c.algo("transpose")
    nd = len(shape)
    axes = None if c.coin(0.3) else [int(a) - (nd if c.coin(0.2) else 0) for a in c.rng.permutation(nd)]
    c.P.update(algorithm=algo, axes=axes)
    x = c.arr(shape, dt, lambda n: inject(c, vals(c, n, dt), dt), label="x")
    want = np.transpose(x.v, axes)
    o = c.out(want.shape, dt)
    g = c.result(c.call(lambda **s: gp.transpose(x.x, None if axes is None else tuple(axes), out=o and o.x,
                                                 algorithm=algo, **s)), want.shape, dt, o)
    exact("result", g, want)

def gen_topk(c):
    """topk: any numeric dtype, shape and axis; k from 0 to the whole row (around the shared-memory
    and sort-tile limits too); NaN of either sign, +-inf, +-0.0 and rows of few values (ties with
    the k-th); (values, indices) out= of any layout. Checked by tests/topk_reference.check_topk
    (on the CPU: the reference's lowest-index ties)."""
    c.name = "topk"
    dt = "bool" if c.coin(0.03) else c.pick([d for d in INTS + FLOATS if c.fw.holds(d)])
    shape = c.shape(0 if c.coin(0.03) else 1, 4, cap=200_000)
    nd = len(shape)
    axis = int(c.rng.integers(-nd, nd)) if nd and c.coin(0.8) else -1
    n = shape[axis] if nd else 0
    k = c.pick((0, 1, n, n, int(c.rng.integers(0, n + 1)), int(c.rng.integers(0, n + 1)),
                min(n, c.pick((7, 50, 1024, 2048, 2049, 5000)))))
    if c.coin(0.03):
        k = c.pick((-1, n + 1))
    largest, srt, algo = c.coin(0.5), c.coin(0.6), c.algo("topk")
    c.P.update(axis=axis, k=k, largest=largest, sorted=srt, algorithm=algo)

    def data(m):
        a = vals(c, m, dt)
        if dt in FLOATS and m and c.coin(0.15):  # signed zeros and negative NaNs
            j = c.rng.integers(0, m, 1 + m // 8)
            a[j] = c.rng.choice(np.array([0.0, -0.0, -np.nan], a.dtype), j.size)
            c.P["special"] = True
        if m and c.coin(0.2):  # a few distinct values: the k-th tied with many
            a = c.rng.choice(a[:3], m)
            c.P["ties"] = True
        return a

    x = c.arr(shape, dt, data, label="x")
    oshape = shape[:axis % nd] + (max(k, 0),) + shape[axis % nd + 1:] if nd else ()
    o = c.out(oshape, dt) if dt != "bool" and 0 <= k <= n else None
    oi = o and c.arr(oshape, "int64", None, label="out_indices", out=True)
    fn = lambda **s: gp.topk(x.x, k, axis, largest=largest, sorted=srt, algorithm=algo,  # noqa: E731
                             out=o and (o.x, oi.x), **s)
    if dt == "bool":
        return c.expect(TypeError, fn)
    if nd == 0 or not 0 <= k <= n:
        return c.expect(ValueError, fn)
    res = c.call(fn)
    if not (isinstance(res, tuple) and len(res) == 2):
        raise Fail(f"expected a (values, indices) pair back, got {type(res).__name__}")
    v = c.result(res[0], oshape, dt, o, what="values")
    i = c.result(res[1], oshape, "int64", oi, what="indices")
    xv = to_np(x.x) if dt in FLOATS else x.v  # the bits the array holds (conversions may quiet NaNs)
    try:
        TR.check_topk(xv, k, axis, largest, srt, v, i, lowest_ties=CPU)
    except AssertionError as e:
        raise Fail(str(e)) from None

GENS = {"reduce": gen_reduce, "scan": gen_scan, "compact": gen_compact, "segmented_reduce": gen_segmented,
        "histogram": gen_histogram, "bincount": gen_bincount, "softmax": gen_softmax, "norm": gen_norm,
        "backward": gen_backward, "bias_dropout_add": gen_dropout, "matmul": gen_matmul, "gemv": gen_gemv,
        "transpose": gen_transpose, "topk": gen_topk}


# ---------------------------------------------------------------------------------------------
# driver

def run_case(key, fw, seed, device, verbose=False):
    """(status: ok | expected | fail, API name, parameters, message)."""
    c = Ctx(np.random.default_rng(seed), fw, device)
    status, msg = "ok", ""
    try:
        GENS[key](c)
        if c.coin(0.2) and fw.name != "jax":  # the inputs (and what their views skip) are left as they were
            for a in c.inputs:
                if not a.modified:
                    c.untouched(a, written=[], what="input")
    except Expected:
        status = "expected"
    except Fail as e:
        status, msg = "fail", str(e)
    except Exception as e:  # noqa: BLE001
        status, msg = "fail", f"unexpected {type(e).__name__}: {e}"
        if verbose:
            traceback.print_exc()
    return status, c.name or key, c.P, msg

def main():
    global CPU, IN_PLACE_P, GPU
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ops", default="", help=f"comma-separated generators: {', '.join(GENS)}")
    ap.add_argument("--replay", default="", help="GEN:FW:SEED of a reported case: rerun it with a traceback")
    ap.add_argument("--max-lines", type=int, default=60, help="failure lines printed per API function")
    ap.add_argument("--in-place", type=float, default=IN_PLACE_P,
                    help="probability that an op which may write over its input does (out=x)")
    ap.add_argument("--trace", action="store_true", help="print every case before it runs (to find a crash)")
    ap.add_argument("--gpu", type=int, default=0, help="the GPU holding the arrays (cuda; the current device stays 0)")
    ap.add_argument("--frameworks", default="", help="comma-separated framework names (default: every one available)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    CPU, IN_PLACE_P, GPU = args.device == "cpu", args.in_place, args.gpu
    fws = [f for f in frameworks(args.device) if not args.frameworks or f.name in args.frameworks.split(",")]
    if not fws:
        sys.exit(print(f"no framework of --frameworks {args.frameworks!r} is available on {args.device}"))
    if args.device == "cuda" and not gp._variants.gpu_status()[0]:
        sys.exit(print(f"no usable GPU: {gp._variants.gpu_status()[1]}"))
    if args.replay:
        key, fwname, seed = args.replay.split(":")
        print(*run_case(key, next(f for f in fws if str(f) == fwname), int(seed), args.device, verbose=True))
        return
    keys = [k for k in (args.ops.split(",") if args.ops else GENS) if k]
    if any(k not in GENS for k in keys):
        sys.exit(print(f"unknown --ops {keys}; known: {', '.join(GENS)}"))
    print(f"gpuprims fuzz: device={args.device} gpu={GPU} seed={args.seed} seconds={args.seconds} "
          f"frameworks={[str(f) for f in fws]} generators={keys}", flush=True)
    rng, stats, end = np.random.default_rng(args.seed), {}, time.time() + args.seconds
    while time.time() < end:
        key, fw, seed = keys[int(rng.integers(len(keys)))], fws[int(rng.integers(len(fws)))], int(rng.integers(2 ** 62))
        if args.trace:
            print(f"case {key}:{fw}:{seed}", flush=True)
        st, name, params, msg = run_case(key, fw, seed, args.device)
        row = stats.setdefault(name, dict.fromkeys(("ok", "fail", "expected"), 0))
        row[st] += 1
        if st == "fail" and row["fail"] <= args.max_lines:
            p = " ".join(f"{k}={v}" for k, v in params.items())
            print(f"FAIL {name} [{key}:{fw}:{seed}] {p} :: {msg}".replace("\n", " ")[:1500], flush=True)
    tot = {k: sum(r[k] for r in stats.values()) for k in ("ok", "fail", "expected")}
    print(f"\nsummary ({args.device}, seed {args.seed}): {sum(tot.values())} cases, {tot['fail']} failures, "
          f"{tot['expected']} expected errors")
    print(f"{'api':<24}{'cases':>8}{'failures':>10}{'expected-err':>14}")
    for name, r in sorted(stats.items()):
        print(f"{name:<24}{sum(r.values()):>8}{r['fail']:>10}{r['expected']:>14}")


if __name__ == "__main__":
    main()
