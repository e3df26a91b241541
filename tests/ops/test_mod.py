"""Mod: fmod=1 (C's fmodf) and fmod=0 (numpy.mod, the divisor's sign) against onnxruntime
(fmod=0 on floats against numpy: onnxruntime refuses it), the C against the reference."""

import numpy as np
import pytest

from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import check_binary
from op_testing import assert_c_equals_reference


def test_fmod_matches_onnxruntime_and_c():
    check_binary("Mod", "Mod", {"fmod": 1}, lo=-10, hi=10, b_lo=0.5, b_hi=4.0)


@pytest.mark.parametrize("a,b", [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (-7.5, -2.0), (4.0, 2.0)])
def test_python_mod_takes_the_divisor_sign(a, b):
    g = GraphBuilder("mod")
    y = g.node("Mod", [g.input("a", "float32", (1,)), g.input("b", "float32", (1,))])
    graph = g.output(y).build()
    feed = {"a": np.float32([a]), "b": np.float32([b])}
    assert run_graph(graph, feed)[y][0] == np.float32(np.mod(a, b))


def test_python_mod_c_matches_reference():
    g = GraphBuilder("mod0")
    y = g.node("Mod", [g.input("a", "float32", (2, 50)), g.input("b", "float32", (50,))])
    graph = g.output(y).build()
    rng = np.random.default_rng(0)
    feed = {"a": rng.uniform(-20, 20, (2, 50)).astype(np.float32),
            "b": (rng.uniform(0.5, 4, 50) * rng.choice([-1, 1], 50)).astype(np.float32)}
    assert_c_equals_reference(graph, [feed])
