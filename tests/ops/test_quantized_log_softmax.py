"""QuantizedLogSoftmax (TFLite's int8 LOG_SOFTMAX): the reference against TFLite Micro one-op
models bit for bit (short and long rows, ties at the maximum, coarse and fine input scales,
zero points at both ends), the generated C against the reference, the fixed output format."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from op_testing import assert_c_equals_reference, finish, graph_of_cases, random_feeds

OP = "QuantizedLogSoftmax"
OUT = (16 / 256, 127)
# (shape, input scale, input zero point)
CASES = [((2, 3, 4), 0.05, -3), ((4, 37), 0.1, 0), ((3, 256), 0.01, 10), ((1, 5), 1.0, -128),
         ((2, 1000), 0.3, 127), ((7,), 0.002, 0), ((2, 2, 2, 9), 0.5, 5)]


def _case(shape, scale, zp, out=OUT):
    def build(b: GraphBuilder, prefix: str) -> str:
        return b.node(OP, [b.input(f"{prefix}x", "int8", shape, Quant.of(scale, zp))], quant=Quant.of(*out))
    return build


def _feed(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, shape).astype(np.int8)
    flat = x.reshape(-1, shape[-1])
    flat[0, : min(3, shape[-1])] = 127  # ties at the row maximum
    return x


@pytest.mark.parametrize("shape,scale,zp", CASES)
def test_int8_matches_tflm(shape, scale, zp):
    from tflite_models import TensorSpec, run_tflm, single_op_model

    g = graph_of_cases(OP, [_case(shape, scale, zp)])
    model = single_op_model("LOG_SOFTMAX", [TensorSpec(shape, "int8", scale, zp)], [TensorSpec(shape, "int8", *OUT)])
    for seed in range(3):
        x = _feed(shape, seed)
        np.testing.assert_array_equal(run_graph(g, {"c0_x": x})[g.outputs[0]], run_tflm(model, x)[0].reshape(shape))


def test_generated_c_equals_reference():
    g = graph_of_cases(OP, [_case(*c) for c in CASES])
    assert_c_equals_reference(g, random_feeds(g, 2, 1))


def test_an_output_other_than_tflms_is_refused():
    from helpers import build_graph

    b = GraphBuilder(OP)
    g = finish(b, b.node(OP, [b.input("x", "int8", (2, 4), Quant.of(0.1, 0))], quant=Quant.of(1 / 256, -128)))
    with pytest.raises(KilnError, match="16/256") as err:
        build_graph(g)
    assert err.value.node == g.nodes[0].name
