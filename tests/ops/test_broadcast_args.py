"""BroadcastArgs (TFLite BROADCAST_ARGS of shapes computed at run time): the reference against
TFLite Micro one-op models (shapes of different lengths, ones on either side, equal shapes,
int64 dimensions past 32 bits that TFLM reads as a C int), the generated C against the
reference, including incompatible dimensions (TFLM stops there; the kernel stays defined)."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.ir import GraphBuilder, run_graph
from op_testing import assert_c_equals_reference, finish

OP = "BroadcastArgs"
PAIRS = [([2, 1, 4], [3, 1]), ([5], [7, 1, 5]), ([1, 1], [1, 1]), ([6, 2, 1, 3], [6, 2, 9, 3]), ([1], [4]),
         ([(1 << 32) + 3, 1], [1, (1 << 33) - 2])]


def _graph(dtype, na, nb):
    b = GraphBuilder(OP)
    return finish(b, b.node(OP, [b.input("a", dtype, (na,)), b.input("b", dtype, (nb,))]))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("a,b", PAIRS)
def test_matches_tflm(dtype, a, b):
    from tflite_models import TensorSpec, run_tflm, single_op_model

    if dtype == "int32" and max(a + b) >= 1 << 31:
        pytest.skip("int64 dimensions only")
    a, b = np.array(a, dtype), np.array(b, dtype)
    n = max(a.size, b.size)
    model = single_op_model("BROADCAST_ARGS", [TensorSpec(a.shape, dtype), TensorSpec(b.shape, dtype)],
                            [TensorSpec((n,), dtype)])
    g = _graph(dtype, a.size, b.size)
    got = run_graph(g, {"a": a, "b": b})[g.outputs[0]]
    np.testing.assert_array_equal(got, run_tflm(model, a, b)[0])
    assert got.dtype == dtype


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_generated_c_equals_reference(dtype):
    feeds = [{"a": np.array(a, dtype), "b": np.array(b, dtype)} for a, b in
             (([6, 2, 1, 3], [9, 1]), ([1, 1, 5, 3], [8, 3]), ([4, 4, 4, 4], [7, 1]))]  # the last: incompatible
    if dtype == "int64":
        feeds.append({"a": np.array([1 << 40, 1, 2, 1], dtype), "b": np.array([-5, (1 << 32) + 1], dtype)})
    assert_c_equals_reference(_graph(dtype, 4, 2), feeds)
