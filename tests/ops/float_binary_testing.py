"""Shared checks of the two-input broadcasting ops (broadcast_binary.BroadcastBinaryOp): float32 functions and the
bool-valued ones (comparisons, logic): the reference against onnxruntime on several
broadcasts, then the generated C of every case (one build) against the reference."""

from __future__ import annotations

import numpy as np

from codegen.ir import run_graph
from op_testing import assert_c_equals_reference, graph_of_cases

# (a shape, b shape): same shape, trailing vector, scalar, both broadcasting, 5-D.
SHAPES = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 3, 4), ()), ((2, 1, 4), (3, 1)),
          ((2, 3, 1, 4, 5), (1, 1, 2, 4, 1))]

NP_DTYPES = {"float32": np.float32, "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "int32": np.int32,
             "int64": np.int64, "bool": np.bool_}


def ort_node(op_type: str, inputs: dict[str, np.ndarray], attrs: dict | None = None, opset: int = 18,
             n_out: int = 1) -> list[np.ndarray]:
    """Outputs of one ONNX node in onnxruntime, any input dtypes (output types inferred); an
    input given as None is left out (an empty name)."""
    import onnx
    import onnxruntime as ort
    from onnx import helper

    node = helper.make_node(op_type, [k if v is not None else "" for k, v in inputs.items()],
                            [f"y{i}" for i in range(n_out)], **(attrs or {}))
    inputs = {k: v for k, v in inputs.items() if v is not None}
    vis = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for k, v in inputs.items()]
    probe = helper.make_model(helper.make_graph([node], "probe", vis, []),
                              opset_imports=[helper.make_opsetid("", opset)])
    probe.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(probe).graph.value_info
    types = {vi.name: vi.type.tensor_type.elem_type for vi in inferred}
    first = vis[0].type.tensor_type.elem_type  # when inference cannot tell: the first input's type
    outs = [helper.make_tensor_value_info(f"y{i}", types.get(f"y{i}", first), None) for i in range(n_out)]
    model = helper.make_model(helper.make_graph([node], "one_node", vis, outs),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)


def make(shape, dtype: str, rng, lo: float, hi: float) -> np.ndarray:
    if dtype == "bool":
        return np.asarray(rng.integers(0, 2, shape)).astype(np.bool_)
    if dtype == "float32":
        return np.asarray(rng.uniform(lo, hi, shape)).astype(np.float32)
    return np.asarray(rng.integers(int(lo), int(hi) + 1, shape)).astype(NP_DTYPES[dtype])


def check_binary(op: str, onnx_op: str, attrs: dict | None = None, lo: float = -5.0, hi: float = 5.0,
                 b_lo: float | None = None, b_hi: float | None = None, dtype: str = "float32",
                 shapes=SHAPES, opset: int = 18, seed: int = 0, rtol: float = 1e-5) -> None:
    attrs = attrs or {}
    rng = np.random.default_rng(seed)
    cases, feeds = [], {}
    for k, (sa, sb) in enumerate(shapes):
        def case(b, prefix, sa=sa, sb=sb):
            return b.node(op, [b.input(f"{prefix}a", dtype, sa), b.input(f"{prefix}b", dtype, sb)], **attrs)
        cases.append(case)
        feeds[f"c{k}_a"] = make(sa, dtype, rng, lo, hi)
        feeds[f"c{k}_b"] = make(sb, dtype, rng, lo if b_lo is None else b_lo, hi if b_hi is None else b_hi)
        if b_lo is not None and dtype == "float32":  # both signs: the range is mirrored at random
            feeds[f"c{k}_b"] *= rng.choice(np.float32([-1, 1]), sb)
    g = graph_of_cases(op.lower(), cases)
    got = run_graph(g, feeds)
    onnx_attrs = {k: v for k, v in attrs.items() if k != "activation"}
    for k in range(len(shapes)):
        want = ort_node(onnx_op, {"a": feeds[f"c{k}_a"], "b": feeds[f"c{k}_b"]}, onnx_attrs, opset=opset)[0]
        actual = got[g.outputs[k]]
        assert actual.dtype == want.dtype and actual.shape == want.shape
        if dtype == "float32" and want.dtype == np.float32:
            np.testing.assert_allclose(actual, want, rtol=0, atol=rtol * float(np.abs(want).max()))
        else:
            np.testing.assert_array_equal(actual, want)
    assert_c_equals_reference(g, [feeds], rtol=rtol)


def reference_node(op_type: str, inputs: dict[str, np.ndarray | None], attrs: dict | None = None,
                   opset: int = 18, n_out: int = 1) -> list[np.ndarray]:
    """Outputs of one ONNX node in ONNX's own reference implementation (for ops or attribute
    combinations onnxruntime lacks or mishandles); None inputs are left out."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node(op_type, [k if v is not None else "" for k, v in inputs.items()],
                            [f"y{i}" for i in range(n_out)], **(attrs or {}))
    feeds = {k: v for k, v in inputs.items() if v is not None}
    return ReferenceEvaluator(node, opsets={"": opset}).run(None, feeds)
