"""Mean: float32 against onnxruntime's ReduceMean, int8 against TFLite Micro's MEAN (one-op
models, with input and output quantizations equal or not), and the generated C against the
numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from codegen.ops import get_op
from op_testing import assert_c_equals_reference, finish, run_onnx_node
from pool_testing import all_int8_values

OP = "Mean"


def mean_graph(shape, dtype, qi, qo, **attrs):
    b = GraphBuilder("mean")
    x = b.input("x", dtype, shape, qi)
    return finish(b, b.node(OP, [x], quant=qo, **attrs))


@pytest.mark.parametrize("shape,axes,keepdims", [
    ((2, 5, 6, 3), (1, 2), True),       # global average pooling, NHWC
    ((2, 5, 6, 3), (0, 2), False),      # non-adjacent axes
    ((2, 5, 6, 3), (), True),           # all axes
    ((3, 7), (-1,), False),
    ((2, 3, 4, 5, 6), (1, 3), True),    # kept / reduced alternate five times
    ((4, 1, 5), (1,), True),            # reducing a size-1 axis
])
def test_float_matches_onnxruntime_and_c(shape, axes, keepdims):
    rng = np.random.default_rng(0)
    g = mean_graph(shape, "float32", None, None, axes=axes, keepdims=keepdims)
    feeds = [{"x": (rng.standard_normal(shape) * 3).astype(np.float32)} for _ in range(2)]
    attrs = {"keepdims": int(keepdims)}
    if axes:
        attrs["axes"] = list(axes)
    for feed in feeds:
        want = run_onnx_node("ReduceMean", feed, attrs)
        got = run_graph(g, feed)[g.outputs[0]]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert_c_equals_reference(g, feeds)


def tflm_mean(shape, axes, keepdims, qi, qo, x):
    from tflite_models import TensorSpec, const, run_tflm, single_op_model

    out_shape = run_graph(mean_graph(shape, "int8", Quant.of(*qi), Quant.of(*qo), axes=axes,
                                     keepdims=keepdims), {"x": x}, keep_all=True)["mean"].shape
    model = single_op_model("MEAN", [TensorSpec(shape, "int8", *qi), const(np.array(axes, np.int32))],
                            [TensorSpec(out_shape, "int8", *qo)], {"keep_dims": keepdims})
    return run_tflm(model, x)[0]


@pytest.mark.parametrize("shape,axes,keepdims,qi,qo", [
    ((1, 5, 6, 8), (1, 2), True, (0.05, -3), (0.05, -3)),      # same quantization
    ((1, 5, 6, 8), (1, 2), True, (0.05, -3), (0.02, 7)),       # requantized
    ((2, 3, 4, 5), (3,), False, (0.1, 20), (0.03, -60)),
    ((2, 3, 4, 5), (0, 2), True, (0.02, -128), (0.05, 0)),
    ((2, 3, 7), (1,), False, (0.5, 0), (0.01, 3)),             # saturates
    ((1, 64, 64, 1), (1, 2), True, (1e-5, 10), (100.0, 0)),    # count shift capped by 31 + shift
])
def test_int8_matches_tflm_and_c(shape, axes, keepdims, qi, qo):
    rng = np.random.default_rng(1)
    g = mean_graph(shape, "int8", Quant.of(*qi), Quant.of(*qo), axes=axes, keepdims=keepdims)
    feeds = [{"x": all_int8_values(shape, rng)} for _ in range(2)]
    feeds.append({"x": np.full(shape, 127, np.int8)})
    for feed in feeds:
        want = tflm_mean(shape, axes, keepdims, qi, qo, feed["x"])
        got = run_graph(g, feed)[g.outputs[0]]
        np.testing.assert_array_equal(got.reshape(want.shape), want)
    assert_c_equals_reference(g, feeds)


def test_int8_multiplier_folds_the_count():
    import sys

    # Through the registry: importing codegen.ops.mean first would leave the registry with Mean only.
    mean_int8_params = sys.modules[get_op(OP).__module__].mean_int8_params
    m, s = mean_int8_params(0.05, 0.05, 49)     # ratio 1: (2**30, 1) before folding
    assert (m, s) == ((2**30 << 5) // 49, 1 - 5)
    assert mean_int8_params(1.0, 1.0, 1) == (2**30, 1)


def test_too_many_alternating_axes_is_refused():
    b = GraphBuilder("mean")
    x = b.input("x", "float32", (2, 3, 2, 3, 2, 3, 2))
    y = b.node(OP, [x], axes=(1, 3, 5))
    with pytest.raises(KilnError, match="alternates"):
        from helpers import build_graph
        build_graph(b.output(y).build())


def test_axis_out_of_range_is_refused():
    b = GraphBuilder("mean")
    x = b.input("x", "float32", (2, 3))
    with pytest.raises(KilnError, match="out of range"):
        b.node(OP, [x], axes=(2,))
