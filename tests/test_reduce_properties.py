"""Property tests of the reduction layout (dimension merging, flipped negative strides, kept axes,
strided out=) through the CPU reference, against numpy on random views. The GPU kernels read the
same layout, so this guards them too."""
from __future__ import annotations

import numpy as np
import pytest

import gpuprims

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def strided_views(draw):
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.integers(0, 6)) for _ in range(ndim))
    dtype = draw(st.sampled_from(["int8", "int32", "uint16", "int64", "float32", "float64"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    base = rng.integers(-9, 10, size=tuple(s * 2 + 1 for s in shape)).astype(dtype)
    index = []
    for s in shape:
        step = draw(st.sampled_from([1, 2, -1, -2]))
        start = draw(st.integers(0, 1)) if step > 0 else 2 * s - draw(st.integers(0, 1))
        index.append(slice(start, None, step))
    view = base[tuple(index)]
    view = view[tuple(slice(0, s) for s in shape)]
    if ndim >= 2 and draw(st.booleans()):
        view = view.swapaxes(0, ndim - 1)
    if draw(st.booleans()):
        view = view.copy(order="F") if draw(st.booleans()) else view
    return view


@settings(max_examples=400, deadline=None, derandomize=True)
@given(strided_views(), st.sampled_from(["sum", "max", "min", "prod"]), st.data())
def test_layouts_match_numpy(view, op, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-view.ndim, view.ndim - 1)) if view.ndim else st.none())
    keepdims = data.draw(st.booleans())
    npop = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max}[op]
    empty_axis = view.size == 0 if axis is None else view.shape[axis] == 0
    if op in ("min", "max") and empty_axis:  # numpy raises, even when the result would be empty
        with pytest.raises(ValueError, match="zero-size array"):
            gpuprims.reduce(view, op, axis, keepdims=keepdims)
        return
    want = npop(view.astype(np.float64) if view.dtype.kind == "f" else view, axis=axis, keepdims=keepdims)
    got = gpuprims.reduce(view, op, axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    if view.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(strided_views(), st.data())
def test_strided_out_matches_numpy(view, data):
    if view.ndim == 0:
        return
    axis = data.draw(st.integers(0, view.ndim - 1))
    out_shape = view.shape[:axis] + view.shape[axis + 1:]
    holder = np.full(tuple(2 * s for s in out_shape), -7, dtype=np.int64 if view.dtype.kind in "iu" else view.dtype)
    out = holder[tuple(slice(None, None, 2) for _ in out_shape)] if out_shape else holder[...]
    if view.dtype.kind == "u":
        return  # unsigned sums are uint64 (numpy's rule); covered above
    gpuprims.sum(view, axis=axis, out=out)
    want = view.astype(np.float64).sum(axis=axis) if view.dtype.kind == "f" else view.sum(axis=axis)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    if out_shape:
        assert np.all(holder[tuple(slice(1, None, 2) for _ in out_shape)] == -7), "wrote outside out"
