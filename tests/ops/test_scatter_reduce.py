"""ScatterReduce: every reduction with repeated and dropped targets against numpy's ufunc.at
(and onnxruntime's ScatterElements with a reduction), the generated C against the
reference; offsets must be constant and inside the data."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference, graph_of_cases

OFFSETS = np.array([[5, 1, 5], [-1, 11, 0]], np.int64)


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
def test_scatter_reduce_matches_numpy_and_c(reduction):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3, 4)).astype(np.float32)
    upd = rng.standard_normal((2, 3)).astype(np.float32)
    g = graph_of_cases("scatter", [lambda b, p: b.node("ScatterReduce", [
        b.input(f"{p}d", "float32", (3, 4)), b.input(f"{p}u", "float32", (2, 3)), b.const(f"{p}o", OFFSETS)],
        reduction=reduction)])
    feed = {"c0_d": data, "c0_u": upd}
    want = data.copy().reshape(-1)
    keep = OFFSETS.reshape(-1) >= 0
    {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[reduction].at(
        want, OFFSETS.reshape(-1)[keep], upd.reshape(-1)[keep])
    np.testing.assert_array_equal(run_graph(g, feed)[g.outputs[0]], want.reshape(3, 4))
    assert_c_equals_reference(g, [feed])


def test_scatter_elements_reduction_matches_onnxruntime():
    rng = np.random.default_rng(1)
    data = rng.standard_normal((3, 4)).astype(np.float32)
    upd = rng.standard_normal((3, 2)).astype(np.float32)
    idx = np.array([[1, 1], [0, 3], [2, 2]], np.int64)
    offsets = (np.arange(3)[:, None] * 4 + idx).astype(np.int64)
    b = GraphBuilder("se")
    y = b.node("ScatterReduce", [b.input("d", "float32", (3, 4)), b.input("u", "float32", (3, 2)), b.const("o", offsets)],
               reduction="add")
    g = b.output(y).build()
    want = ort_node("ScatterElements", {"d": data, "i": idx, "u": upd}, {"axis": 1, "reduction": "add"}, opset=18)[0]
    np.testing.assert_allclose(run_graph(g, {"d": data, "u": upd})[y], want, rtol=1e-6)


def test_offsets_must_be_constant_and_inside():
    b = GraphBuilder("bad")
    d, u = b.input("d", "float32", (4,)), b.input("u", "float32", (1,))
    with pytest.raises(KilnError, match="outside"):
        b.node("ScatterReduce", [d, u, b.const("o", np.array([4], np.int64))])
