"""gpuprims.torch: autograd Functions and drop-in modules. gradcheck in float64 and module parity
with torch run on CPU tensors (the CPU reference), so in CI; the GPU parity test is marked gpu."""
from __future__ import annotations

import pytest
from conftest import GPU_COUNT, torch

if torch is None:
    pytest.skip("gpuprims.torch needs torch", allow_module_level=True)

import gpuprims.torch as gt  # noqa: E402


def _inputs(shape, dtype=torch.float64, device="cpu", seed=0):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * 2 + 0.5).to(device=device, dtype=dtype)
    return x.requires_grad_()


@pytest.mark.parametrize("dim", (-1, 0, 1))
@pytest.mark.parametrize("fn", ("softmax", "log_softmax"))
def test_softmax_gradcheck(fn, dim):
    x = _inputs((4, 7))
    assert torch.autograd.gradcheck(lambda t: getattr(gt, fn)(t, dim), (x,))


@pytest.mark.parametrize("fn", ("softmax", "log_softmax"))
def test_softmax_dtype_like_torch(fn):
    """dtype= casts first, as torch's: float32 logits to float64 results, gradients back in float32."""
    x = _inputs((4, 7), dtype=torch.float32)
    y = getattr(gt, fn)(x, -1, dtype=torch.float64)
    want = getattr(torch, fn)(x.detach().clone().requires_grad_(), -1, dtype=torch.float64)
    assert y.dtype == torch.float64
    torch.testing.assert_close(y, want)
    y.sum().backward()
    assert x.grad.dtype == torch.float32
    x64 = _inputs((4, 7))
    assert torch.autograd.gradcheck(lambda t: getattr(gt, fn)(t, 0, dtype=torch.float64), (x64,))


def test_layer_norm_gradcheck():
    x = _inputs((5, 3, 4))
    w = _inputs((3, 4), seed=1)
    b = _inputs((3, 4), seed=2)
    assert torch.autograd.gradcheck(lambda t, u, v: gt.layer_norm(t, (3, 4), u, v, 1e-5), (x, w, b))
    assert torch.autograd.gradcheck(lambda t: gt.layer_norm(t, 4), (x,))


def test_rms_norm_gradcheck():
    x = _inputs((6, 9))
    w = _inputs((9,), seed=3)
    assert torch.autograd.gradcheck(lambda t, u: gt.rms_norm(t, (9,), u, 1e-6), (x, w))
    assert torch.autograd.gradcheck(lambda t: gt.rms_norm(t, 9), (x,))


def test_layer_norm_constant_row_has_finite_gradients():
    x = torch.full((3, 16), 2.5, dtype=torch.float32, requires_grad=True)
    w = torch.linspace(0.5, 1.5, 16, requires_grad=True)
    b = torch.linspace(-1, 1, 16, requires_grad=True)
    y = gt.layer_norm(x, 16, w, b)
    assert torch.equal(y, b.detach().expand(3, 16))
    y.square().sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (x, w, b))


def _parity(device):
    torch.manual_seed(0)
    for ours, theirs, shape in (
        (gt.LayerNorm(64), torch.nn.LayerNorm(64), (8, 64)),
        (gt.LayerNorm((4, 16), bias=False), torch.nn.LayerNorm((4, 16), bias=False), (3, 4, 16)),
        (gt.RMSNorm(64, eps=1e-6), torch.nn.RMSNorm(64, eps=1e-6), (8, 64)),
        # n-d x with one normalized dimension: the kernels take it as it is (no reshape), gradients too
        (gt.LayerNorm(64), torch.nn.LayerNorm(64), (3, 5, 64)),
        (gt.RMSNorm(64, eps=1e-6), torch.nn.RMSNorm(64, eps=1e-6), (2, 3, 5, 64)),
        (gt.Softmax(dim=1), torch.nn.Softmax(dim=1), (8, 64)),
    ):
        ours, theirs = ours.to(device), theirs.to(device)
        with torch.no_grad():
            for p in theirs.parameters():
                p.uniform_(0.5, 1.5)
        ours.load_state_dict(theirs.state_dict())
        x1 = torch.randn(shape, device=device, requires_grad=True)
        x2 = x1.detach().clone().requires_grad_()
        dy = torch.randn(shape, device=device)
        y1, y2 = ours(x1), theirs(x2)
        torch.testing.assert_close(y1, y2, rtol=1e-5, atol=1e-5)
        y1.backward(dy)
        y2.backward(dy)
        torch.testing.assert_close(x1.grad, x2.grad, rtol=1e-4, atol=1e-5)
        for p1, p2 in zip(ours.parameters(), theirs.parameters()):
            torch.testing.assert_close(p1.grad, p2.grad, rtol=1e-4, atol=1e-4)


def test_modules_match_torch_on_cpu():
    _parity("cpu")


@pytest.mark.gpu
def test_modules_match_torch_on_gpu():
    if not GPU_COUNT or not torch.cuda.is_available():
        pytest.skip("needs torch with CUDA")
    _parity("cuda")


@pytest.mark.gpu
@pytest.mark.parametrize("autocast", (False, True))
def test_mixed_precision_like_torch(autocast):
    """bfloat16 activations with float32 parameters (as mixed-precision training keeps them), with
    and without autocast: torch's result dtype where torch takes the mix (under autocast, float32 for
    layer_norm and softmax; torch 2.11 refuses LayerNorm's mix without autocast, gpuprims keeps x's
    dtype), and the values and gradients of torch's modules run in float32 on the same data."""
    if not GPU_COUNT or not torch.cuda.is_available():
        pytest.skip("needs torch with CUDA")
    torch.manual_seed(0)
    for ours, theirs in ((gt.LayerNorm(256), torch.nn.LayerNorm(256)),
                         (gt.RMSNorm(256, 1e-6), torch.nn.RMSNorm(256, 1e-6)),
                         (gt.Softmax(dim=-1), torch.nn.Softmax(dim=-1))):
        ours, theirs = ours.cuda(), theirs.cuda()
        with torch.no_grad():
            for p in theirs.parameters():
                p.uniform_(0.5, 1.5)
        ours.load_state_dict(theirs.state_dict())
        name = f"{type(ours).__name__} autocast={autocast}"
        x1 = torch.randn(8, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        x2 = x1.detach().clone().requires_grad_()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            y1 = ours(x1)
            try:
                dtype = theirs(x1.detach()).dtype
            except RuntimeError:  # torch refuses the mix: gpuprims keeps x's dtype
                dtype = x1.dtype
        assert y1.dtype == dtype, (name, y1.dtype, dtype)
        y2 = theirs(x2.float())  # the reference: torch in float32, gradients back to x2 in bfloat16
        torch.testing.assert_close(y1.float(), y2, rtol=1e-2, atol=1e-2, msg=name)
        dy = torch.randn_like(y2)
        y1.backward(dy.to(y1.dtype))
        y2.backward(dy)
        assert x1.grad.dtype == torch.bfloat16, name
        torch.testing.assert_close(x1.grad, x2.grad, rtol=2e-2, atol=2e-2, msg=name)
        for p1, p2 in zip(ours.parameters(), theirs.parameters()):
            assert p1.grad.dtype == torch.float32, name
            torch.testing.assert_close(p1.grad, p2.grad, rtol=2e-2, atol=2e-2, msg=name)


def _inference_matches_autograd(device):
    """Without a graph to build (torch.no_grad, or nothing requiring grad) the ops call the kernels
    directly, skipping the autograd Function and its saved statistics: the same values, bit for bit,
    as the autograd path; n-d and strided inputs, one and two normalized dimensions."""
    torch.manual_seed(1)
    x = torch.randn(5, 6, 64, device=device)
    for ours, inputs in (
        (gt.LayerNorm(64), (x, x.transpose(0, 1))),
        (gt.LayerNorm((6, 64)), (x,)),
        (gt.RMSNorm(64, eps=1e-6), (x, x[:, ::2])),
        (gt.Softmax(dim=1), (x, x.transpose(1, 2))),
        (gt.Softmax(dim=-1), (x[0, 0, 0],)),  # 0-d: a row of one
    ):
        ours = ours.to(device)
        with torch.no_grad():
            for p in ours.parameters():
                p.uniform_(0.5, 1.5)
        for xi in inputs:
            graph = ours(xi.detach().requires_grad_())
            assert graph.grad_fn is not None
            with torch.no_grad():
                plain = ours(xi)
            assert plain.grad_fn is None and plain.shape == graph.shape
            assert torch.equal(plain, graph.detach()), (ours, tuple(xi.shape))


def test_inference_matches_autograd_on_cpu():
    _inference_matches_autograd("cpu")


@pytest.mark.gpu
def test_inference_matches_autograd_on_gpu():
    if not GPU_COUNT or not torch.cuda.is_available():
        pytest.skip("needs torch with CUDA")
    _inference_matches_autograd("cuda")


def test_argument_errors():
    with pytest.raises(ValueError, match="layer_norm: argument 'normalized_shape'"):
        gt.layer_norm(torch.ones(3, 4), (5,))
    with pytest.raises(TypeError, match="Softmax: argument 'dim'"):
        gt.Softmax(None)


def test_backward_runs_the_gpuprims_kernels_once_differentiable():
    # The backward passes are gpuprims' fused kernels, not torch operations: no double backward.
    x = _inputs((3, 8))
    (gx,) = torch.autograd.grad(gt.softmax(x, -1)[:, 0].sum(), x, create_graph=True)
    with pytest.raises(RuntimeError):
        gx.sum().backward()


def test_broadcast_output_gradient():
    # sum().backward() hands the backward an expanded dy (stride 0 along every axis).
    x1 = _inputs((4, 10))
    x2 = x1.detach().clone().requires_grad_()
    w = torch.linspace(0.5, 1.5, 10, dtype=torch.float64)
    (gt.layer_norm(x1, 10, w, None) * torch.arange(10.0, dtype=torch.float64)).sum().backward()
    (torch.nn.functional.layer_norm(x2, (10,), w, None) * torch.arange(10.0, dtype=torch.float64)).sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad)
    x3 = _inputs((4, 10))
    gt.log_softmax(x3, -1).sum().backward()
    x4 = x3.detach().clone().requires_grad_()
    torch.log_softmax(x4, -1).sum().backward()
    torch.testing.assert_close(x3.grad, x4.grad)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_of_a_scalar_like_torch(log):
    ours, theirs = (gt.log_softmax, torch.log_softmax) if log else (gt.softmax, torch.softmax)
    for dim in (0, -1):
        x = torch.tensor(-2.5, dtype=torch.float64, requires_grad=True)
        y = ours(x, dim)
        assert y.shape == () and y.item() == theirs(x.detach(), dim).item()
        y.backward()
        assert x.grad.shape == () and x.grad.item() == 0.0
