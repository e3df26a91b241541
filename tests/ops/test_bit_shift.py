"""BitShift: the reference against ONNX's own reference implementation (opset 28: signed types,
arithmetic right shift, amounts out of range) and the generated C against the reference, with
every amount from -2 to the width + 2."""

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from bitwise_testing import check_binary_c, int_values
from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from codegen.ops.bitwise import INTEGERS
from helpers import build_graph


def amounts(dtype, shape, rng):
    """Shift amounts around the valid range [0, bits): negative and too large ones included."""
    bits = np.dtype(dtype).itemsize * 8
    low = -2 if np.iinfo(np.dtype(dtype)).min < 0 else 0
    return rng.integers(low, bits + 3, shape).astype(dtype)


def onnx_shift(x, y, direction):
    node = helper.make_node("BitShift", ["x", "y"], ["z"], direction=direction)
    return ReferenceEvaluator(node, opsets={"": 28}).run(None, {"x": x, "y": y})[0]


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", INTEGERS)
def test_reference_matches_onnx(dtype, direction):
    rng = np.random.default_rng(0)
    x, y = int_values(dtype, (6, 8), rng), amounts(dtype, (6, 8), rng)
    b = GraphBuilder("t")
    z = b.node("BitShift", [b.input("x", dtype, x.shape), b.input("y", dtype, (8,))], direction=direction)
    got = run_graph(b.output(z).build(), {"x": x, "y": y[0]})[z]
    np.testing.assert_array_equal(got, onnx_shift(x, y[0], direction))


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_c_matches_reference(direction):
    check_binary_c("BitShift", amounts, direction=direction)


def test_bad_direction_is_refused():
    b = GraphBuilder("t")
    z = b.node("BitShift", [b.input("x", "uint8", (2,)), b.input("y", "uint8", (2,))], direction="UP")
    with pytest.raises(KilnError, match="direction 'UP'"):
        build_graph(b.output(z).build())
