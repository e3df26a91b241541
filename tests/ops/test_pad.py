"""Pad: float32 against onnxruntime, int8 against TFLite Micro's PAD and PADV2, and the
generated C against the numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from helpers import build_graph
from op_testing import (assert_c_equals_reference, finish, graph_of_cases, random_feeds,
                        run_onnx_node)

CASES = [  # shape, pads (begins then ends)
    ((1, 5, 6, 3), (0, 1, 2, 0, 0, 2, 1, 0)),   # spatial, TFLM's "image style"
    ((1, 4, 4, 3), (0, 0, 0, 1, 0, 0, 0, 2)),   # channels only
    ((2, 3, 4, 5), (1, 0, 2, 1, 0, 3, 1, 1)),   # every dimension
    ((3, 4), (0, 0, 0, 0)),                     # nothing: a copy
    ((2, 3, 2, 2, 3, 2), (1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1)),  # six padded dimensions
]


Q = Quant.of(0.02, -9)


def case(dtype: str, shape, pads, value: float, quant: Quant | None = None,
         out_quant: Quant | None = None):
    def build(b: GraphBuilder, prefix: str) -> str:
        x = b.input(f"{prefix}x", dtype, shape, quant)
        return b.node("Pad", [x], pads=pads, value=value, quant=out_quant or quant)
    return build


def one(*args):
    b = GraphBuilder("pad")
    return finish(b, case(*args)(b, ""))


@pytest.mark.parametrize("shape,pads", CASES)
def test_float_matches_onnxruntime(shape, pads):
    g = graph_of_cases("pad", [case("float32", shape, pads, -0.75)])
    for feed in random_feeds(g, 2, len(shape)):
        want = run_onnx_node("Pad", {"x": feed["c0_x"]}, {"mode": "constant"},
                             {"pads": np.array(pads, np.int64), "value": np.array(-0.75, np.float32)})
        np.testing.assert_array_equal(run_graph(g, feed)[g.outputs[0]], want)


def tflite_paddings(pads) -> np.ndarray:
    rank = len(pads) // 2
    return np.array(list(zip(pads[:rank], pads[rank:])), np.int32).reshape(rank, 2)


@pytest.mark.parametrize("shape,pads", [c for c in CASES if len(c[0]) <= 4])  # TFLM: <= 4-D
def test_int8_pad_uses_the_output_zero_point_like_tflm(shape, pads):
    from tflite_models import TensorSpec, const, run_tflm, single_op_model

    g = graph_of_cases("pad", [case("int8", shape, pads, 0.0, Q)])
    out = g.values[g.outputs[0]]
    model = single_op_model("PAD", [TensorSpec(shape, "int8", Q.s, Q.zp), const(tflite_paddings(pads))],
                            [TensorSpec(out.shape, "int8", Q.s, Q.zp)])
    for feed in random_feeds(g, 2, 30 + len(shape)):
        got = run_graph(g, feed)[g.outputs[0]]
        np.testing.assert_array_equal(got, run_tflm(model, feed["c0_x"])[0])
        assert np.count_nonzero(got == Q.zp) >= out.size - int(np.prod(shape))


PADV2 = ((1, 3, 3, 2), (0, 1, 1, 0, 0, 1, 0, 0), 0.013, 4, -77)  # shape, pads, scale, zp, code


def padv2_value() -> float:
    _, _, scale, zp, code = PADV2
    return float(np.float32(scale) * (code - zp))


def test_int8_padv2_constant_is_quantized_back_exactly():
    """PADV2's int8 constant (output quantization) reaches Kiln as its real value."""
    from tflite_models import TensorSpec, const, run_tflm, single_op_model

    shape, pads, scale, zp, code = PADV2
    g = one("int8", shape, pads, padv2_value(), Quant.of(scale, zp))
    model = single_op_model(
        "PADV2", [TensorSpec(shape, "int8", scale, zp), const(tflite_paddings(pads)),
                  const(np.array([code], np.int8), "int8", scale=scale, zero_point=zp)],
        [TensorSpec(g.values[g.outputs[0]].shape, "int8", scale, zp)])
    feed = random_feeds(g, 1, 1)[0]
    got = run_graph(g, feed)[g.outputs[0]]
    np.testing.assert_array_equal(got, run_tflm(model, feed["x"])[0])
    assert got[0, 0, 0, 0] == code


def test_generated_c_equals_reference():
    shape, pads, scale, zp, _ = PADV2
    cases = [case("float32", s, p, -0.75) for s, p in CASES] + [case("int8", s, p, 0.0, Q) for s, p in CASES]
    cases.append(case("int8", shape, pads, padv2_value(), Quant.of(scale, zp)))
    g = graph_of_cases("pad", cases)
    assert_c_equals_reference(g, random_feeds(g, 2, 5))


def test_negative_pads_are_refused():
    b = GraphBuilder("pad")
    x = b.input("x", "float32", (2, 3))
    with pytest.raises(KilnError, match="negative"):
        b.node("Pad", [x], pads=(0, -1, 0, 0))


def test_int8_requantizing_is_refused():
    g = one("int8", (2, 3), (1, 1, 1, 1), 0.0, Quant.of(0.1, 0), Quant.of(0.2, 0))
    with pytest.raises(KilnError, match="quantization") as err:
        build_graph(g)
    assert err.value.node == g.nodes[0].name
