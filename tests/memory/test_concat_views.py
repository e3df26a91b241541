"""A Concat whose inputs are contiguous blocks of its output (codegen/lower/band_views.py's
concat_views): its producers write straight into their blocks, the copies are gone, the
outputs are bit-exact, and the compiler keeps the views only where the arena is not larger."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.ir import Graph, GraphBuilder, Quant, run_graph
from codegen.verify.host import run_generated
from codegen.verify.samples import random_samples
from helpers import build_graph


def _fc(b: GraphBuilder, x: str, k: int, n: int, rng, q: Quant) -> str:
    w = b.const(f"w{len(b.g.nodes)}", rng.integers(-127, 128, (n, k), dtype=np.int8), quant=Quant.of(0.01, 0))
    return b.node("FullyConnected", [x, w], activation="relu", quant=q)


def branches(dtype: str = "int8") -> Graph:
    """x -> three fully connected branches -> Concat along the vector -> one more layer."""
    rng = np.random.default_rng(3)
    b = GraphBuilder("concat_vectors")
    q = Quant.of(0.05, -7)
    x = b.input("x", "int8", (1, 32), Quant.of(0.04, 2))
    hs = [_fc(b, x, 32, 24, rng, q) for _ in range(3)]
    y = b.node("Concat", hs, axis=1, quant=q)
    return b.output(_fc(b, y, 72, 10, rng, Quant.of(0.2, 0))).build()


def rows() -> Graph:
    """Two convolutions of one image concatenated along H (N = 1): contiguous blocks."""
    rng = np.random.default_rng(4)
    b = GraphBuilder("concat_rows")
    x = b.input("x", "int8", (1, 6, 6, 8), Quant.of(0.04, 2))
    q = Quant.of(0.06, 3)
    hs = []
    for k in range(2):
        w = b.const(f"w{k}", rng.integers(-127, 128, (8, 1, 1, 8), dtype=np.int8), quant=Quant.of(0.01, 0))
        hs.append(b.node("Conv2D", [x, w], quant=q))
    y = b.node("Concat", hs, axis=1, quant=q)
    w = b.const("w_out", rng.integers(-127, 128, (4, 1, 1, 8), dtype=np.int8), quant=Quant.of(0.01, 0))
    return b.output(b.node("Conv2D", [y, w], quant=Quant.of(0.1, 0))).build()


@pytest.mark.parametrize("make", [branches, rows])
def test_producers_write_into_the_concat(make):
    g = make()
    build = build_graph(g)
    assert "concat" not in [c.kernel for c in build.lowered.calls]
    samples = random_samples(build.manifest["inputs"], 3, 0)
    for sample, got in zip(samples, run_generated(build.files, "t", samples, sanitize=True)):
        want = run_graph(g, sample)
        for name in g.outputs:
            np.testing.assert_array_equal(got[name], want[name])


def test_vectors_arena_shrinks_by_the_copy():
    """Without the views the three branch outputs and the Concat's output are live together."""
    build = build_graph(branches())
    assert build.manifest["arena_bytes"] <= 3 * 24 + 16  # the Concat's 72 bytes, aligned
