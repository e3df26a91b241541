"""Take: the reference against numpy.take (with -1 filling zeros), the generated C against
the reference for float32, int8 and int64 data; indices must be constant and in range."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from op_testing import assert_c_equals_reference, graph_of_cases

IDX = np.array([[5, -1, 0], [11, 3, 3]], np.int64)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int64"])
def test_take_matches_numpy_and_c(dtype):
    x = (np.arange(12) * 3 - 7).astype(dtype).reshape(3, 4)
    g = graph_of_cases("take", [lambda b, p: b.node("Take", [b.input(f"{p}x", dtype, (3, 4)), b.const(f"{p}i", IDX)])])
    got = run_graph(g, {"c0_x": x})[g.outputs[0]]
    want = np.where(IDX < 0, 0, np.take(x.reshape(-1), np.maximum(IDX, 0))).astype(dtype)
    np.testing.assert_array_equal(got, want)
    assert_c_equals_reference(g, [{"c0_x": x}])


def test_indices_must_be_constant_and_in_range():
    b = GraphBuilder("take_bad")
    x = b.input("x", "float32", (4,))
    with pytest.raises(KilnError, match="outside"):
        b.node("Take", [x, b.const("i", np.array([4], np.int64))])
    with pytest.raises(KilnError, match="constant"):
        b.node("Take", [x, b.input("j", "int64", (2,))])
