"""Concat: float32 against onnxruntime, int8 against TFLite Micro's CONCATENATION, and the
generated C (float32, int8 and other dtypes, all cases in one build) against the reference."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from helpers import build_graph
from op_testing import (assert_c_equals_reference, finish, graph_of_cases, random_feeds,
                        run_onnx_node)

CASES = [  # input shapes, axis
    ([(2, 3, 4), (2, 5, 4), (2, 1, 4)], 1),
    ([(1, 4, 4, 8), (1, 4, 4, 3)], -1),
    ([(3, 2), (1, 2)], 0),
    ([(1, 2, 2, 3)], 3),
]
Q = Quant.of(0.037, -5)


def case(dtype: str, shapes, axis: int, quant: Quant | None = None, out_quant: Quant | None = None):
    def build(b: GraphBuilder, prefix: str) -> str:
        xs = [b.input(f"{prefix}x{k}", dtype, s, quant) for k, s in enumerate(shapes)]
        return b.node("Concat", xs, axis=axis, quant=out_quant or quant)
    return build


def with_constant(b: GraphBuilder, prefix: str) -> str:
    """A constant input (read from flash) between two graph inputs."""
    x = b.input(f"{prefix}x", "float32", (2, 2, 3))
    c = b.const(f"{prefix}c", np.arange(12, dtype=np.float32).reshape(2, 2, 3))
    return b.node("Concat", [x, c, x], axis=2)


def inputs(feed: dict, n: int) -> list[np.ndarray]:
    return [feed[f"c0_x{k}"] for k in range(n)]


@pytest.mark.parametrize("shapes,axis", CASES)
def test_float_matches_onnxruntime(shapes, axis):
    g = graph_of_cases("concat", [case("float32", shapes, axis)])
    for feed in random_feeds(g, 2, axis + 5):
        xs = {f"x{k}": x for k, x in enumerate(inputs(feed, len(shapes)))}
        np.testing.assert_array_equal(run_graph(g, feed)[g.outputs[0]],
                                      run_onnx_node("Concat", xs, {"axis": axis}))


@pytest.mark.parametrize("shapes,axis", CASES)
def test_int8_matches_tflm(shapes, axis):
    from tflite_models import TensorSpec, run_tflm, single_op_model

    g = graph_of_cases("concat", [case("int8", shapes, axis, Q)])
    model = single_op_model("CONCATENATION", [TensorSpec(s, "int8", Q.s, Q.zp) for s in shapes],
                            [TensorSpec(g.values[g.outputs[0]].shape, "int8", Q.s, Q.zp)],
                            {"axis": axis, "fused_activation_function": "NONE"})
    for feed in random_feeds(g, 2, axis + 10):
        np.testing.assert_array_equal(run_graph(g, feed)[g.outputs[0]],
                                      run_tflm(model, *inputs(feed, len(shapes)))[0])


def test_generated_c_equals_reference():
    cases = [case("float32", s, a) for s, a in CASES] + [case("int8", s, a, Q) for s, a in CASES]
    cases += [case(dt, [(2, 3), (2, 2)], 1) for dt in ("int32", "int16", "uint8")]
    cases.insert(0, with_constant)
    g = graph_of_cases("concat", cases)
    feeds = random_feeds(g, 2, 3)
    got = assert_c_equals_reference(g, feeds)
    # And the reference is numpy's concatenate (the C moves bytes whatever the dtype).
    last = len(cases) - 1
    np.testing.assert_array_equal(got[0][g.outputs[last]],
                                  np.concatenate([feeds[0][f"c{last}_x0"], feeds[0][f"c{last}_x1"]], 1))


def test_int8_with_different_quantization_is_refused():
    b = GraphBuilder("concat")
    g = finish(b, case("int8", [(1, 4), (1, 4)], 1, Quant.of(0.1, 0), Quant.of(0.2, 0))(b, ""))
    with pytest.raises(KilnError, match="requantize") as err:
        build_graph(g)
    assert err.value.node == g.nodes[0].name


def test_mismatched_shapes_are_refused():
    b = GraphBuilder("concat")
    xs = [b.input("a", "float32", (2, 3)), b.input("b", "float32", (3, 3))]
    with pytest.raises(KilnError, match="shapes"):
        b.node("Concat", xs, axis=1)
