"""The pass manager, and random graphs through the whole pipeline: same interpreter results."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, format_graph
from codegen.passes.pipeline import PIPELINE, run_pipeline
from pass_testing import assert_same_results
from random_graphs import float_graphs, int8_graphs

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(float_graphs())
def test_random_float_graphs_keep_their_results(g):
    text = format_graph(g)
    after = run_pipeline(g, verify_each=True)
    assert format_graph(g) == text  # passes are pure
    assert_same_results(g, after, rtol=1e-5)
    assert len(after.nodes) <= len(g.nodes)


@SETTINGS
@given(int8_graphs())
def test_random_int8_graphs_keep_their_results_bit_for_bit(g):
    after = run_pipeline(g, verify_each=True)
    assert_same_results(g, after, seeds=range(3))
    assert len(after.nodes) <= len(g.nodes)


def test_every_pass_is_named_once_and_schedule_comes_last():
    names = [name for name, _ in PIPELINE]
    assert len(set(names)) == len(names)
    assert names[-1] == "schedule"
    assert all(fn.__doc__ or fn.__module__ for _, fn in PIPELINE)


def test_dump_ir_writes_the_graph_before_and_after_each_pass(tmp_path):
    b = GraphBuilder("g")
    x = b.input("x", "float32", (1, 4))
    g = b.output(b.node("Clip", [b.node("FullyConnected", [x, b.const("w", np.ones((2, 4), np.float32))])],
                        min=0.0)).build()
    run_pipeline(g, dump_dir=tmp_path / "ir")
    files = sorted(p.name for p in (tmp_path / "ir").iterdir())
    assert files[0] == "00_input.ir" and len(files) == len(PIPELINE) + 1
    assert files[-1] == f"{len(PIPELINE):02d}_schedule.ir"
    assert "Clip" in (tmp_path / "ir" / "00_input.ir").read_text()
    fused = (tmp_path / "ir" / files[-1]).read_text()
    assert "Clip" not in fused and "activation=relu" in fused


def test_verify_each_names_the_pass_that_broke_the_graph():
    b = GraphBuilder("g")
    x = b.input("x", "float32", (2,))
    g = b.output(b.node("Sigmoid", [x])).build()

    def broken(graph):
        graph.nodes[0].inputs = ["nowhere"]
        return graph

    with pytest.raises(KilnError, match="after pass 'broken'"):
        run_pipeline(g, verify_each=True, passes=[("broken", broken)])
