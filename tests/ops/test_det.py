"""Det: the reference against onnxruntime, the generated C against the reference on batches of
well-conditioned, singular and pivot-needing matrices."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node
from helpers import run_c


def matrices(rng, batch, n):
    """Random matrices, plus one with a zero leading pivot and one singular."""
    x = rng.standard_normal((batch, n, n)).astype(np.float32) + np.eye(n, dtype=np.float32) * 2
    x[0, 0, 0] = 0.0  # elimination must swap rows
    x[1, -1] = x[1, 0] * 2  # two proportional rows: determinant 0
    return x


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_reference_matches_onnxruntime(n):
    x = matrices(np.random.default_rng(n), 4, n) if n > 1 else np.float32([[[3.0]], [[-2.0]]])
    b = GraphBuilder("t")
    y = b.node("Det", [b.input("x", "float32", x.shape)])
    got = run_graph(b.output(y).build(), {"x": x})[y]
    np.testing.assert_allclose(got, ort_node("Det", {"x": x})[0], rtol=1e-4, atol=1e-5)


def test_c_matches_reference():
    rng = np.random.default_rng(0)
    b = GraphBuilder("det")
    for k, shape in enumerate([(2, 3, 4, 4), (3, 3), (6, 2, 2)]):
        b.output(b.node("Det", [b.input(f"x{k}", "float32", shape)]))
    g = b.build()
    feed = {"x0": matrices(rng, 6, 4).reshape(2, 3, 4, 4), "x1": matrices(rng, 2, 3)[0],
            "x2": matrices(rng, 6, 2)}
    (out,) = run_c(g, [feed])
    for name, want in run_graph(g, feed).items():
        np.testing.assert_allclose(out[name], want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()), err_msg=name)


def test_non_square_is_refused():
    b = GraphBuilder("t")
    with pytest.raises(KilnError, match="square matrices"):
        b.node("Det", [b.input("x", "float32", (2, 3))])
