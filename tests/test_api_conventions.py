"""DESIGN.md's API conventions checked over every public op: algorithm=, out= and stream= are taken
everywhere, and gpuprims.variants() answers for every family and op name."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import gpuprims

OPS = [name for name in gpuprims.__all__
       if inspect.isfunction(getattr(gpuprims, name)) and name != "variants"]


@pytest.mark.parametrize("name", OPS)
def test_every_op_takes_algorithm_out_and_stream(name):
    params = inspect.signature(getattr(gpuprims, name)).parameters
    for arg in ("algorithm", "out", "stream"):
        assert arg in params and params[arg].kind is inspect.Parameter.KEYWORD_ONLY, (name, arg)
    assert params["algorithm"].default == "auto"


@pytest.mark.parametrize("name", OPS)
def test_variants_answers_for_every_op(name):
    rows = gpuprims.variants(name)
    assert all(isinstance(v, gpuprims.Variant) and v.name != "auto" for v in rows)


def test_variants_without_a_family_lists_them_all():
    everything = gpuprims.variants()
    assert set(OPS) <= set(everything)
    assert [v.name for v in everything["scan"]] == [v.name for v in gpuprims.variants("scan")]
    assert everything["compact"] == []
    with pytest.raises(ValueError, match=r"^variants: argument 'family': expected one of .*got 'nope'"):
        gpuprims.variants("nope")


def test_single_implementation_ops_take_auto_only(rng):
    x = rng.standard_normal(8) + 2.0
    mask = x > 2.0
    np.testing.assert_array_equal(gpuprims.compact(x, mask, algorithm="auto"), x[mask])
    np.testing.assert_array_equal(gpuprims.nonzero(mask, algorithm="auto"), np.flatnonzero(mask))
    y = gpuprims.bias_dropout_add(x, None, x, 0.0, seed=1, offset=0, algorithm="auto")
    np.testing.assert_allclose(y, 2 * x, rtol=1e-12)
    calls = {
        "compact": lambda a: gpuprims.compact(x, mask, algorithm=a),
        "nonzero": lambda a: gpuprims.nonzero(mask, algorithm=a),
        "bias_dropout_add": lambda a: gpuprims.bias_dropout_add(x, None, x, 0.5, seed=1, offset=0, algorithm=a),
    }
    for op, call in calls.items():
        with pytest.raises(ValueError, match=rf"^{op}: argument 'algorithm': expected 'auto' .*got 'fast'"):
            call("fast")
        with pytest.raises(TypeError, match=rf"^{op}: argument 'algorithm': expected a str, got None"):
            call(None)
