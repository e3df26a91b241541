"""AssignVariable: a streaming model's variable written for the next call, straight into the
persistent state region when the calls allow it, else by a copy (codegen/lower/state.py).
Whole streaming models against TFLite Micro: tests/frontends/test_tflite_streaming.py."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder
from codegen.ir.graph import Node
from codegen.ir.types import StateVar, Value
from codegen.ir.verifier import verify_graph
from codegen.lower.state import detach_state
from helpers import build_graph


def _stream(late_read: bool):
    """y = s * 3; s' = x + y; and (late_read) y2 = s * 4 after s' is computed."""
    b = GraphBuilder("g")
    x = b.input("x", "float32", (4,))
    s = b.input("s", "float32", (4,))
    y = b.node("Mul", [s, b.const("three", np.full(4, 3, np.float32))], name="y")
    nxt = b.node("Add", [x, y], name="next")
    outs = [y]
    if late_read:
        outs.append(b.node("Mul", [s, b.const("four", np.full(4, 4, np.float32))], name="y2"))
    g = b.output(*outs, nxt).build()
    g.values["s"].state = StateVar("s", np.arange(4, dtype=np.float32), "next")
    return g


def test_detach_moves_the_variable_out_of_the_io():
    g = detach_state(_stream(False))
    assert g.inputs == ["x"] and g.outputs == ["y"]
    last = g.nodes[-1]
    assert (last.op, last.inputs, last.outputs) == ("AssignVariable", ["next", "s"], [])
    verify_graph(g)


def test_value_computed_after_the_last_read_goes_straight_into_the_state():
    res = build_graph(_stream(False))
    assert [c.kernel for c in res.lowered.calls] == ["mul_f32", "add_f32"]
    assert res.lowered.root("next") == "s"
    assert "kiln_add_f32(&add_0_params, in_x_0, out_y_1, t_var_0)" in res.files["t.c"]
    assert res.manifest["arena_bytes"] == 0 and res.manifest["state_bytes"] == 16


def test_value_computed_before_a_later_read_is_copied_at_the_end():
    res = build_graph(_stream(True))
    kernels = [c.kernel for c in res.lowered.calls]
    assert kernels[-1] == "copy" and res.lowered.root("next") == "next"
    assert res.manifest["arena_bytes"] >= 16


def test_assigning_another_type_is_refused():
    g = _stream(False)
    g.add_value(Value("wrong", "float32", (3,), data=np.zeros(3, np.float32)))
    g.nodes.append(Node("AssignVariable", "bad", ["wrong", "s"], [], {}, ("bad",)))
    with pytest.raises(KilnError, match="assigns float32\\[3\\] to variable 's' of float32\\[4\\]"):
        verify_graph(g)


def test_assigning_to_a_plain_value_is_refused():
    g = _stream(False)
    g.nodes.append(Node("AssignVariable", "bad", ["next", "x"], [], {}, ("bad",)))
    with pytest.raises(KilnError, match="input 'x' is not a variable"):
        verify_graph(g)
