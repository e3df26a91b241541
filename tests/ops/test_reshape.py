"""Reshape: a view sharing its input's arena buffer, a copy only where it must be."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder
from helpers import assert_c_matches_interpreter, build_graph


def chain(dtype="float32"):
    b = GraphBuilder("g")
    x = b.input("x", dtype, (1, 4, 6))
    a = b.node("Add", [x, x])
    r = b.node("Reshape", [a], shape=(2, 12))
    y = b.node("Add", [r, r])
    return b.output(y).build()


def test_inner_reshape_is_a_view_without_kernel():
    res = build_graph(chain())
    assert [c.kernel for c in res.lowered.calls] == ["add_f32", "add_f32"]
    assert res.lowered.root("reshape") == "add"
    assert_c_matches_interpreter(chain())


def test_reshape_of_an_input_to_an_output_is_a_copy():
    b = GraphBuilder("g")
    x = b.input("x", "int8", (2, 3))
    g = b.output(b.node("Reshape", [x], shape=(3, 2))).build()
    res = build_graph(g)
    assert [c.kernel for c in res.lowered.calls] == ["copy"]
    assert res.manifest["arena_bytes"] == 0
    assert_c_matches_interpreter(g)


def test_reshape_keeps_element_count():
    b = GraphBuilder("g")
    x = b.input("x", "float32", (2, 3))
    with pytest.raises(KilnError, match=r"cannot reshape \[2, 3\] to \[4\]"):
        b.node("Reshape", [x], shape=(4,))
    np.testing.assert_equal(chain().values["reshape"].shape, (2, 12))
