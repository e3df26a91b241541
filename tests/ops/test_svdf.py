"""SVDF: the generated C against the numpy reference (float32; int8 with int16 state bit for
bit), with the state as a plain input and the next state as an output. Against TFLite Micro
over consecutive calls, with the state kept between them: tests/frontends/test_tflite_recurrent.py."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder
from codegen.ir.types import Quant
from helpers import assert_c_matches_interpreter, build_graph

RNG = np.random.default_rng(7)


def svdf_graph(dtype: str, batch=2, features=5, units=3, rank=2, memory=4, bias=True, activation="none"):
    b = GraphBuilder("g")
    filters = units * rank
    if dtype == "float32":
        x = b.input("x", "float32", (batch, features))
        state = b.input("state", "float32", (batch, filters * memory))
        wf = b.const("wf", RNG.standard_normal((filters, features)).astype(np.float32))
        wt = b.const("wt", RNG.standard_normal((filters, memory)).astype(np.float32))
        bb = b.const("b", RNG.standard_normal(units).astype(np.float32)) if bias else ""
        quants = [None, None]
    else:
        x = b.input("x", "int8", (batch, features), Quant.of(0.03, 2))
        sq = Quant.of(0.004, 0)
        state = b.input("state", "int16", (batch, filters * memory), sq)
        wf = b.const("wf", RNG.integers(-127, 128, (filters, features)).astype(np.int8), quant=Quant.of(0.01))
        wt = b.const("wt", RNG.integers(-3000, 3001, (filters, memory)).astype(np.int16), quant=Quant.of(2e-4))
        bb = b.const("b", RNG.integers(-2000, 2001, units).astype(np.int32)) if bias else ""
        quants = [Quant.of(0.05, -3), sq]
    y, nxt = b.node("SVDF", [x, wf, wt, bb, state], quant=quants, rank=rank, activation=activation)
    return b.output(y, nxt).build()


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("bias", [True, False])
def test_c_matches_reference(dtype, bias):
    assert_c_matches_interpreter(svdf_graph(dtype, bias=bias), count=3)


def test_float_activation_clamps():
    assert_c_matches_interpreter(svdf_graph("float32", rank=1, activation="relu6"), count=2)


def test_kernels():
    assert [c.kernel for c in build_graph(svdf_graph("int8")).lowered.calls] == ["svdf_s8"]
    assert [c.kernel for c in build_graph(svdf_graph("float32")).lowered.calls] == ["svdf_f32"]


def test_filters_not_a_multiple_of_rank_are_refused():
    from codegen.ir.verifier import verify_graph

    g = svdf_graph("float32", units=3, rank=2)  # 6 filters
    g.nodes[0].attrs["rank"] = 4
    with pytest.raises(KilnError, match="with rank 4"):
        verify_graph(g)


def test_integer_svdf_needs_its_quantization():
    g = svdf_graph("int8")
    g.values["state"].quant = None
    with pytest.raises(KilnError, match="SVDF 'state' needs one quantization scale"):
        build_graph(g)
