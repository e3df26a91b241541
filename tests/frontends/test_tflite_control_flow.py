"""IF and WHILE compiled without an interpreter: branches inlined and selected, loops unrolled
at compile time; against TFLite Micro (bit-exact), and what Kiln refuses in one line."""

from __future__ import annotations

import numpy as np
import pytest
from tflite_case_table import cases_for
from tflite_cases import run_case
from tflite_recurrent_models import if_model, while_model

from codegen.errors import KilnError
from codegen.frontends.tflite import load_bytes


@pytest.mark.parametrize("builtin", ["IF", "WHILE"])
def test_cases_match_tflite_micro(builtin):
    for case in cases_for(builtin, "none"):
        outcome = run_case(case, samples=2)
        assert outcome.status == "pass", f"{case.id}: {outcome.reason}"


def test_if_inlines_both_branches_and_selects():
    g = load_bytes(if_model("float32"))
    assert sorted(n.op for n in g.nodes) == ["Add", "Mul", "Reshape", "Where"]


def test_while_is_unrolled_and_its_counter_folds():
    g = load_bytes(while_model(3))
    assert [n.op for n in g.nodes].count("Mul") == 3  # one body per trip; the conditions fold away later


def test_while_with_a_run_time_condition_is_refused_in_one_line():
    with pytest.raises(KilnError) as err:
        load_bytes(while_model(counter_input=True))
    message = str(err.value)
    assert "WHILE: the loop condition depends on run-time values" in message and "\n" not in message


def test_while_past_the_trip_limit_is_refused():
    from codegen.frontends.tflite import ops_control

    with pytest.raises(KilnError, match="runs more than 4 trips"):
        old, ops_control.MAX_TRIPS = ops_control.MAX_TRIPS, 4
        try:
            load_bytes(while_model(10))
        finally:
            ops_control.MAX_TRIPS = old


def test_static_value_follows_constants_only():
    from codegen.frontends.tflite.ops_control import static_value
    from codegen.ir import GraphBuilder

    b = GraphBuilder("g")
    x = b.input("x", "int32", (2,))
    k = b.node("Add", [b.const("a", np.array([1, 2], np.int32)), b.const("b", np.array([3, 4], np.int32))])
    y = b.node("Add", [k, x])
    g = b.output(y).build()
    assert static_value(g, k).tolist() == [4, 6] and static_value(g, y) is None
