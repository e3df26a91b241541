"""QuantizedL2Normalization (TFLite's int8 L2_NORMALIZATION): the reference against TFLite Micro
one-op models bit for bit (short and long rows, rows at the zero point, zero points at both
ends, outputs quantized otherwise than TFLM writes them), the generated C against the reference."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.ir import GraphBuilder, Quant, run_graph
from op_testing import assert_c_equals_reference, graph_of_cases, random_feeds

OP = "QuantizedL2Normalization"
# (shape, input scale, input zero point, output scale, output zero point)
CASES = [((2, 3, 4), 0.05, -3, 0.05, -3), ((4, 37), 0.1, 0, 1 / 128, 0), ((3, 256), 0.01, 10, 0.3, 20),
         ((1, 5), 1.0, -128, 1 / 128, 0), ((2, 1000), 0.3, 127, 1 / 128, 0), ((7, 1), 0.002, 0, 1 / 128, 0)]


def _case(shape, scale, zp, s_out, zp_out):
    def build(b: GraphBuilder, prefix: str) -> str:
        return b.node(OP, [b.input(f"{prefix}x", "int8", shape, Quant.of(scale, zp))], quant=Quant.of(s_out, zp_out))
    return build


def _feed(shape, zp, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, shape).astype(np.int8)
    flat = x.reshape(-1, shape[-1])
    flat[0] = zp  # a zero sum of squares: TFLM treats it as 1
    return x


@pytest.mark.parametrize("shape,scale,zp,s_out,zp_out", CASES)
def test_int8_matches_tflm(shape, scale, zp, s_out, zp_out):
    from tflite_models import TensorSpec, run_tflm, single_op_model

    g = graph_of_cases(OP, [_case(shape, scale, zp, s_out, zp_out)])
    model = single_op_model("L2_NORMALIZATION", [TensorSpec(shape, "int8", scale, zp)],
                            [TensorSpec(shape, "int8", s_out, zp_out)])
    for seed in range(3):
        x = _feed(shape, zp, seed)
        np.testing.assert_array_equal(run_graph(g, {"c0_x": x})[g.outputs[0]], run_tflm(model, x)[0].reshape(shape))


def test_generated_c_equals_reference():
    g = graph_of_cases(OP, [_case(*c) for c in CASES])
    assert_c_equals_reference(g, random_feeds(g, 2, 1))
