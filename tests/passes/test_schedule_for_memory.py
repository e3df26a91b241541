"""Memory-aware scheduling: the exact order beats the file order on an inception-style block."""

from __future__ import annotations

import numpy as np

from codegen.ir.builder import GraphBuilder
from codegen.ir.interpreter import run_graph
from codegen.ir.verifier import verify_graph
from codegen.passes.schedule_for_memory import memory_order, order_peak, schedule_for_memory
from codegen.passes.pipeline import PIPELINE

H, W, C = 16, 16, 8  # stem output: 16*16*8 float32 = 8 KiB
WIDE, NARROW, BRANCHES = 32, 4, 4  # each branch: a wide 1x1 conv (32 KiB), then a narrow one (4 KiB)


def _conv(b: GraphBuilder, x: str, cin: int, cout: int, rng, name: str) -> str:
    w = b.const(f"w_{name}", rng.standard_normal((cout, 1, 1, cin)).astype(np.float32))
    bias = b.const(f"b_{name}", rng.standard_normal(cout).astype(np.float32))
    return b.node("Conv2D", [x, w, bias], name=name, activation="relu")


def inception_block():
    """Stem, four branches (wide then narrow 1x1 conv), concat — written breadth-first, as
    exporters often do: every branch's wide layer first, so all four wide tensors are live."""
    rng = np.random.default_rng(0)
    b = GraphBuilder("inception")
    x = b.input("x", "float32", (1, H, W, 3))
    stem = _conv(b, x, 3, C, rng, "stem")
    wide = [_conv(b, stem, C, WIDE, rng, f"wide{k}") for k in range(BRANCHES)]
    narrow = [_conv(b, wide[k], WIDE, NARROW, rng, f"narrow{k}") for k in range(BRANCHES)]
    y = b.node("Concat", narrow, name="concat", axis=3)
    return b.output(y).build()


def test_scheduled_peak_is_lower_than_file_order():
    g = inception_block()
    kib = 1024
    file_peak = order_peak(g)
    order, how = memory_order(g)
    best_peak = order_peak(g, order)
    # File order: stem (8 KiB) + four wide tensors (4 x 32 KiB) live when the last wide conv runs.
    assert file_peak == 8 * kib + 4 * 32 * kib == 136 * kib
    # Depth-first: at most stem + three narrow outputs + the last wide tensor.
    assert how == "exact"
    assert best_peak == 8 * kib + 3 * 4 * kib + 32 * kib == 52 * kib
    print(f"inception block: file order peak {file_peak} B, scheduled peak {best_peak} B")


def test_schedule_pass_reorders_only_and_keeps_results():
    g = inception_block()
    s = schedule_for_memory(g)
    verify_graph(s)
    assert sorted(n.name for n in s.nodes) == sorted(n.name for n in g.nodes)
    assert [n.name for n in s.nodes] != [n.name for n in g.nodes]
    assert order_peak(s) < order_peak(g)
    x = np.random.default_rng(1).standard_normal((1, H, W, 3)).astype(np.float32)
    (before,), (after,) = run_graph(g, {"x": x}).values(), run_graph(s, {"x": x}).values()
    np.testing.assert_array_equal(before, after)


def test_chain_keeps_file_order_and_pass_is_last_in_pipeline():
    rng = np.random.default_rng(2)
    b = GraphBuilder("chain")
    x = b.input("x", "float32", (1, 4, 4, 3))
    y = _conv(b, _conv(b, _conv(b, x, 3, 8, rng, "a"), 8, 8, rng, "b"), 8, 2, rng, "c")
    g = b.output(y).build()
    assert schedule_for_memory(g) is g
    assert PIPELINE[-1][0] == "schedule"


def test_greedy_fallback_past_the_state_bound():
    g = inception_block()
    order, how = memory_order(g, max_states=10)
    assert how == "greedy"
    assert order_peak(g, order) < order_peak(g)
