"""Adagrad, Momentum (standard and Nesterov) and Adam of ai.onnx.preview.training
(ops_training.py) against ONNX's reference implementation, one and two tensors per node,
the step count 0 (no bias correction) and later; one build of the generated C."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from codegen.frontends.onnx import load
from codegen.ir import run_graph
from helpers import run_c

DOMAIN = "ai.onnx.preview.training"
KINDS = {"Adagrad": "XGH", "Momentum": "XGV", "Adam": "XGVH"}
OUT_KINDS = {"Adagrad": "XH", "Momentum": "XV", "Adam": "XVH"}


def optimizer_model(op, shapes, **attrs):
    inputs = [helper.make_tensor_value_info("R", TensorProto.FLOAT, []),
              helper.make_tensor_value_info("T", TensorProto.INT64, [])]
    names = ["R", "T"]
    for kind in KINDS[op]:
        for k, shape in enumerate(shapes):
            names.append(f"{kind}{k}")
            inputs.append(helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, shape))
    outs = [f"{kind}{k}_new" for kind in OUT_KINDS[op] for k in range(len(shapes))]
    node = helper.make_node(op, names, outs, domain=DOMAIN, **attrs)
    graph = helper.make_graph([node], "opt", inputs, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                                                      for o in outs])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)])
    m.ir_version = 8
    return m


def feeds(m, step, seed=0):
    rng = np.random.default_rng(seed)
    out = {"R": np.float32(0.1), "T": np.int64(step)}
    for vi in m.graph.input[2:]:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        data = rng.standard_normal(shape).astype(np.float32)
        out[vi.name] = np.abs(data) if vi.name.startswith("H") else data  # squared sums are positive
    return {k: np.asarray(v) for k, v in out.items()}


CASES = [
    ("Adagrad", dict(decay_factor=0.1, epsilon=1e-5, norm_coefficient=0.001)),
    ("Momentum", dict(alpha=0.95, beta=0.1, mode="standard", norm_coefficient=0.001)),
    ("Momentum", dict(alpha=0.9, beta=0.5, mode="nesterov", norm_coefficient=0.01)),
    ("Adam", dict(alpha=0.9, beta=0.85, epsilon=1e-2, norm_coefficient=0.001, norm_coefficient_post=0.01)),
]


@pytest.mark.parametrize("op,attrs", CASES, ids=[f"{c[0]}_{c[1].get('mode', '')}" for c in CASES])
@pytest.mark.parametrize("step", [0, 3])
def test_matches_onnx_reference(op, attrs, step, tmp_path):
    m = optimizer_model(op, [(3,), (2, 2)], **attrs)
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    feed = feeds(m, step)
    want = dict(zip([o.name for o in m.graph.output], ReferenceEvaluator(m).run(None, feed)))
    got = run_graph(g, feed)
    for name, exp in want.items():
        np.testing.assert_allclose(got[name], exp, rtol=1e-5, atol=1e-6, err_msg=name)


def test_generated_c_matches_onnx_reference(tmp_path):
    m = optimizer_model("Adam", [(4,)], alpha=0.9, beta=0.99, epsilon=1e-3)
    onnx.save(m, tmp_path / "m.onnx")
    feed = feeds(m, 5, seed=1)
    (out,) = run_c(load(tmp_path / "m.onnx", {}), [feed])
    for name, exp in zip([o.name for o in m.graph.output], ReferenceEvaluator(m).run(None, feed)):
        np.testing.assert_allclose(out[name], exp, rtol=1e-5, atol=1e-6, err_msg=name)
