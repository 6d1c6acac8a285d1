"""out= sharing memory with an input, or with itself: refused before any work on every op whose kernels
read inputs while writing out (silently wrong values otherwise); in-place scans (out = x) still work."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import torch

import gpuprims

POISON = -7.0


def _ramp(rng, n, dtype=np.float64):
    # Random nonzero data: an all-zero input would hide a wrong overlap result.
    return (rng.standard_normal(n) + 3.0).astype(dtype)


@pytest.mark.parametrize("make_out", [
    lambda buf: (buf[:-1], buf[1:]),                # shifted by one element
    lambda buf: (buf, buf[::-1]),                   # the same elements, reversed
    lambda buf: (buf[:11], buf[1::3]),              # other strides, sharing elements 1, 4, 7, 10
    lambda buf: (buf[2:], buf[:-2]),
], ids=["shift", "reversed", "other_strides", "shift_back"])
def test_scan_partial_overlap_is_refused(rng, make_out):
    buf = _ramp(rng, 33)
    before = buf.copy()
    x, out = make_out(buf)
    with pytest.raises(ValueError, match=r"scan: arguments 'x' and 'out': .*overlapping memory"):
        gpuprims.cumsum(x, out=out)
    np.testing.assert_array_equal(buf, before)  # raised before any work


def test_scan_in_place_still_works(rng):
    for x in (_ramp(rng, 33), _ramp(rng, 40).reshape(5, 8).T):
        expected = np.cumsum(x.astype(np.float64), axis=0)
        assert gpuprims.cumsum(x, axis=0, out=x) is x
        np.testing.assert_allclose(x, expected, rtol=1e-12)


def test_interleaved_views_sharing_no_element_are_accepted(rng):
    # One shape and strides, shifted by a whole element pattern that never lands on another element:
    # the halves of each row, alternate elements.
    buf = _ramp(rng, 64).reshape(8, 8)
    x, out = buf[:, :4], buf[:, 4:]
    expected = np.cumsum(x, axis=1)
    gpuprims.cumsum(x, axis=1, out=out)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    expected = gpuprims.softmax(out.copy())
    assert gpuprims.softmax(out, out=x) is x
    np.testing.assert_array_equal(x, expected)
    flat = _ramp(rng, 64)
    expected = np.cumsum(flat[::2])
    gpuprims.cumsum(flat[::2], out=flat[1::2])
    np.testing.assert_allclose(flat[1::2], expected, rtol=1e-12)


def test_scan_disjoint_views_of_one_buffer(rng):
    buf = _ramp(rng, 66)
    x, out = buf[:33], buf[33:]
    expected = np.cumsum(x)
    gpuprims.cumsum(x, out=out)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_reduce_out_inside_x_is_refused(rng):
    x = _ramp(rng, 12).reshape(3, 4)
    before = x.copy()
    with pytest.raises(ValueError, match=r"reduce: arguments 'x' and 'out': .*overlapping memory"):
        gpuprims.sum(x, axis=1, out=x[:, 0])
    with pytest.raises(ValueError, match="overlapping memory"):  # even where it is x's own layout
        gpuprims.sum(x[:, :1], axis=1, keepdims=True, out=x[:, :1])
    np.testing.assert_array_equal(x, before)


def test_compact_and_segmented_reduce_overlap_is_refused(rng):
    buf = _ramp(rng, 20)
    mask = rng.random(10) < 0.5
    mask[0] = True
    with pytest.raises(ValueError, match=r"compact: arguments 'x' and 'out': .*overlapping memory"):
        gpuprims.compact(buf[:10], mask, out=buf[5:15])
    offsets = np.array([0, 3, 10], np.int64)
    with pytest.raises(ValueError, match=r"segmented_reduce: arguments 'x' and 'out': .*overlapping memory"):
        gpuprims.segmented_reduce(buf[:10], offsets, out=buf[1:3])


def test_histogram_and_matmul_overlap_is_refused(rng):
    counts = np.arange(8, dtype=np.int64)
    with pytest.raises(ValueError, match=r"bincount: arguments 'x' and 'out': .*overlapping memory"):
        gpuprims.bincount(counts[:4], out=counts)
    a = _ramp(rng, 16).reshape(4, 4)
    b = _ramp(rng, 16).reshape(4, 4)
    with pytest.raises(ValueError, match=r"matmul: arguments 'a' and 'out': .*overlapping memory"):
        gpuprims.matmul(a, b, out=a)
    with pytest.raises(ValueError, match=r"matmul: arguments 'b' and 'out': .*overlapping memory"):
        gpuprims.matmul(a, b, out=b.T)
    with pytest.raises(ValueError, match=r"gemv: arguments 'x' and 'out': .*overlapping memory"):
        gpuprims.gemv(a, b[0], out=b[0])


@pytest.mark.skipif(torch is None, reason="needs torch")
@pytest.mark.parametrize("call", [
    lambda x, out: gpuprims.sum(x, axis=0, out=out),
    lambda x, out: gpuprims.cumsum(x[0], out=out),
    lambda x, out: gpuprims.matmul(x, x.T.contiguous(), out=out.expand(4, 4)[:3, :3]),
], ids=["reduce", "scan", "matmul"])
def test_zero_stride_out_is_refused(rng, call):
    # torch's expand makes writable views whose elements share one address: threads would race.
    x = torch.from_numpy(_ramp(rng, 12).reshape(3, 4))
    out = torch.full((1,), POISON, dtype=torch.float64).expand(4)
    with pytest.raises(ValueError, match="expected distinct elements, got a zero stride"):
        call(x, out)
    assert out[0].item() == POISON


def _shifted_rows(rng):
    # x and out: (3, 4) views of one buffer, out one element past x (each row overlaps the next).
    buf = _ramp(rng, 16).astype(np.float32)
    return buf, buf[:12].reshape(3, 4), buf[1:13].reshape(3, 4)


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "layer_norm", "rms_norm"])
def test_norms_partial_overlap_is_refused_in_place_works(rng, op):
    buf, x, out = _shifted_rows(rng)
    before = buf.copy()
    with pytest.raises(ValueError, match=rf"^{op}: arguments 'x' and 'out': .*overlapping memory"):
        getattr(gpuprims, op)(x, out=out)
    np.testing.assert_array_equal(buf, before)
    expected = getattr(gpuprims, op)(x.copy())
    assert getattr(gpuprims, op)(x, out=x) is x
    np.testing.assert_array_equal(x, expected)


def test_add_norm_and_dropout_overlap_is_refused(rng):
    buf, x, out = _shifted_rows(rng)
    r = _ramp(rng, 12).astype(np.float32).reshape(3, 4)
    before = buf.copy()
    with pytest.raises(ValueError, match=r"^add_layer_norm: arguments 'x' and 'out': .*overlapping memory"):
        gpuprims.add_layer_norm(x, r, out=out)
    with pytest.raises(ValueError, match=r"^add_rms_norm: arguments 'residual' and 'out': .*overlapping memory"):
        gpuprims.add_rms_norm(r, x, out=out)
    with pytest.raises(ValueError, match=r"^bias_dropout_add: arguments 'residual' and 'out': .*overlapping memory"):
        gpuprims.bias_dropout_add(r, None, x, 0.5, seed=1, offset=0, out=out)
    np.testing.assert_array_equal(buf, before)


def test_norm_backward_out_sharing_an_input_is_refused(rng):
    x = _ramp(rng, 12).reshape(3, 4)
    y = gpuprims.softmax(x)
    dy = _ramp(rng, 12).reshape(3, 4)
    dy_before = dy.copy()
    # Not even in place: two_pass reads dy again after writing dx.
    with pytest.raises(ValueError, match=r"^softmax_backward: arguments 'dy' and 'out': .*overlapping memory"):
        gpuprims.softmax_backward(y, dy, out=dy)
    with pytest.raises(ValueError, match=r"^softmax_backward: arguments 'y' and 'out': .*overlapping memory"):
        gpuprims.softmax_backward(y, dy, out=y)
    np.testing.assert_array_equal(dy, dy_before)


@pytest.mark.skipif(torch is None, reason="needs torch")
def test_norms_zero_stride_out_is_refused(rng):
    x = torch.from_numpy(_ramp(rng, 12).reshape(3, 4))
    out = torch.full((1, 4), POISON, dtype=torch.float64).expand(3, 4)
    for call in (lambda: gpuprims.softmax(x, out=out), lambda: gpuprims.layer_norm(x, out=out),
                 lambda: gpuprims.bias_dropout_add(x, None, x, 0.5, seed=1, offset=0, out=out),
                 lambda: gpuprims.softmax_backward(x, x, out=out)):
        with pytest.raises(ValueError, match="expected distinct elements, got a zero stride at axis 0"):
            call()
    assert (out == POISON).all()


@pytest.mark.gpu
@pytest.mark.skipif(torch is None, reason="needs torch")
def test_cuda_tensors_are_checked_alike(rng):
    # The checks are host arithmetic on the views: CUDA arrays are refused before any launch too.
    buf = torch.from_numpy(_ramp(rng, 33)).cuda()
    before = buf.clone()
    with pytest.raises(ValueError, match=r"^scan: arguments 'x' and 'out': .*overlapping memory"):
        gpuprims.cumsum(buf[:-1], out=buf[1:])
    x = buf[:32].reshape(4, 8)
    with pytest.raises(ValueError, match=r"^reduce: arguments 'x' and 'out': .*overlapping memory"):
        gpuprims.sum(x, axis=1, out=x[:, 0])
    with pytest.raises(ValueError, match=r"^softmax: arguments 'x' and 'out': .*overlapping memory"):
        gpuprims.softmax(buf[:32].reshape(4, 8), out=buf[1:].reshape(4, 8))
    with pytest.raises(ValueError, match="expected distinct elements, got a zero stride"):
        gpuprims.matmul(x, x.T.contiguous(), out=torch.empty(1, 4, device="cuda", dtype=x.dtype).expand(4, 4))
    torch.cuda.synchronize()
    assert torch.equal(buf, before)
    y = x.clone()  # in place still works
    expected = torch.cumsum(y, 1)
    assert gpuprims.cumsum(y, axis=1, out=y) is y
    torch.testing.assert_close(y, expected, rtol=1e-12, atol=1e-12)
    z = x.clone()
    assert gpuprims.softmax(z, out=z) is z
    torch.testing.assert_close(z, torch.softmax(x, 1), rtol=1e-12, atol=1e-12)
