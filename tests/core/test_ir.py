import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Node, format_graph, run_graph, verify_graph


def small_graph():
    b = GraphBuilder("g")
    x = b.input("x", "float32", (2, 3))
    y = b.node("Add", [x, b.const("c", np.arange(3, dtype=np.float32))], activation="relu")
    z = b.node("Reshape", [y], shape=(3, 2))
    return b.output(z).build()


def test_builder_infers_types_and_interpreter_runs():
    g = small_graph()
    assert g.values["reshape"].shape == (3, 2)
    x = np.array([[-5, 1, 2], [0, -1, -9]], np.float32)
    out = run_graph(g, {"x": x})["reshape"]
    np.testing.assert_array_equal(out, np.maximum(x + np.arange(3), 0).reshape(3, 2))


def test_printer_lists_every_node_and_type():
    text = format_graph(small_graph())
    assert "input  %x: float32[2x3]" in text
    assert "Add(%x, %c) {activation=relu}" in text
    assert "return %reshape" in text


def test_verifier_rejects_use_before_definition():
    g = small_graph()
    g.nodes.reverse()
    with pytest.raises(KilnError, match="used before it is defined"):
        verify_graph(g)


def test_verifier_rejects_wrong_stored_shape():
    g = small_graph()
    g.values["reshape"].shape = (6,)
    with pytest.raises(KilnError, match="Reshape gives"):
        verify_graph(g)


def test_verifier_rejects_unknown_attribute():
    g = small_graph()
    g.nodes[0].attrs["alpha"] = 1.0
    with pytest.raises(KilnError, match="attributes"):
        verify_graph(g)


def test_unknown_op_is_a_clear_error():
    g = small_graph()
    g.nodes.append(Node("NoSuchOp", "n", ["x"], ["y"]))
    with pytest.raises(KilnError, match="no Kiln operator 'NoSuchOp'"):
        verify_graph(g)


def test_bad_reshape_names_the_node():
    b = GraphBuilder("g")
    x = b.input("x", "float32", (2, 3))
    with pytest.raises(KilnError, match="cannot reshape"):
        b.node("Reshape", [x], shape=(4, 2), name="bad")
