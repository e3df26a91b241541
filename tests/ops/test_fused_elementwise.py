"""FusedElementwise: the fused chain node's inference, reference and lowering."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.fusion.chain import fused_node
from codegen.ir.builder import GraphBuilder
from codegen.ir.interpreter import run_graph
from codegen.lower import lower_graph
from codegen.ops.fused_elementwise import step_fn
from codegen.ops.registry import get_op
from codegen.targets import load_target


def _graph(last_op: str = "Neg"):
    b = GraphBuilder("t")
    x = b.input("x", "float32", (2, 3, 4))
    s = b.const("s", np.linspace(-1, 1, 4).astype(np.float32))
    h = b.node("Sub", [s, x])  # the running value on the right
    h = b.node("Sigmoid", [h])
    h = b.node(last_op, [h])
    return b.output(h).build()


def _fuse(g):
    node = fused_node(g, list(g.nodes), "fused")
    g.nodes = [node]
    for n in list(g.values):
        if n not in (*g.inputs, *g.outputs) and not g.values[n].is_const:
            del g.values[n]
    return g


def test_reference_is_the_sequence():
    g = _graph()
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    want = run_graph(g, {"x": x})
    got = run_graph(_fuse(_graph()), {"x": x})
    (k,) = want
    np.testing.assert_array_equal(got[k], want[k])


def test_infer_and_lowering():
    g = _fuse(_graph())
    node = g.nodes[0]
    assert get_op("FusedElementwise").infer(node, [g.values["x"]]) == [("float32", (2, 3, 4))]
    assert node.inputs == ["x", "s"] and repr(node.attrs["body"]) == "[Sub -> Sigmoid -> Neg]"
    (call,) = lower_graph(g, load_target("host")).calls
    assert call.kernel.startswith("fused_elementwise_f32__")
    steps = dict(call.template_vars)["steps"]
    assert [s["fn"] for s in steps] == ["sub", "sigmoid_f32", "neg_f32"]
    assert steps[0]["value_left"] is False and steps[0]["operand"] == 1
    assert call.params["o1_strides"][-1] == 1 and call.params["x_strides"][-1] == 1


def test_a_step_without_a_fused_form_is_refused():
    """Float Mod with fmod=0 (Python's remainder) runs a helper function, not an expression."""
    b = GraphBuilder("t")
    h = b.node("Sigmoid", [b.input("x", "float32", (2, 3, 4))])
    g = b.output(b.node("Mod", [h, b.const("d", np.full((2, 3, 4), 0.5, np.float32))], fmod=0)).build()
    assert step_fn(g.nodes[-1], "float32") is None
    with pytest.raises(KilnError, match="cannot run inside a fused"):
        lower_graph(_fuse(g), load_target("host"))
