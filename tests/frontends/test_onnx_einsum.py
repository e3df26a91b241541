"""Einsum lowered to Take / ReduceSum / Transpose / Reshape / MatMul (ops_einsum.py): many
equations against numpy's einsum, one build of the generated C, and the refusals."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnx_models as om
from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.ir import run_graph
from helpers import run_c

# (equation, operand shapes)
CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),  # implicit output, broadcast ellipsis
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ii", [(4, 4)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
    ("abc,cd,de->ae", [(2, 3, 4), (4, 5), (5, 2)]),
    ("ijk,ikl->j", [(2, 3, 4), (2, 4, 5)]),
    ("i j , j ->i", [(3, 4), (4,)]),
    ("->", [()]),
]


def einsum_model(equation, shapes):
    names = [f"x{k}" for k in range(len(shapes))]
    graph = helper.make_graph([helper.make_node("Einsum", names, ["y"], equation=equation)], "einsum",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    m.ir_version = 7
    return m


def feeds_for(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return {f"x{k}": rng.standard_normal(s).astype(np.float32) for k, s in enumerate(shapes)}


@pytest.mark.parametrize("equation,shapes", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(equation, shapes, tmp_path):
    onnx.save(einsum_model(equation, shapes), tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    feed = feeds_for(shapes)
    want = np.einsum(equation.replace(" ", ""), *feed.values())
    got = run_graph(g, feed)["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_generated_c_matches_onnxruntime(tmp_path):
    m = einsum_model("abc,cd,de->ae", [(2, 3, 4), (4, 5), (5, 2)])
    onnx.save(m, tmp_path / "m.onnx")
    feed = feeds_for([(2, 3, 4), (4, 5), (5, 2)], seed=1)
    (out,) = run_c(load(tmp_path / "m.onnx", {}), [feed])
    assert om.max_rel_error(out["y"], om.ort_outputs(m, feed)["y"]) <= 1e-5


@pytest.mark.parametrize("equation,shapes,message", [
    ("ij,jk->ik", [(3, 4)], "names 2 operands"),
    ("ij->ik", [(3, 4)], "names one no operand has"),
    ("ijk->i", [(3, 4)], "does not match its rank"),
    ("iJ->i", [(3, 4)], "not lower-case labels"),
])
def test_bad_equations_are_refused(equation, shapes, message, tmp_path):
    onnx.save(einsum_model(equation, shapes), tmp_path / "m.onnx")
    with pytest.raises(KilnError, match=message):
        load(tmp_path / "m.onnx", {})
