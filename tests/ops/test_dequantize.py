"""Dequantize: int8 -> float32 on all 256 inputs against TFLite Micro's DEQUANTIZE (exactly)
and onnxruntime's DequantizeLinear, and the generated C against the numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

import unary_testing as ut
from codegen.ir import Quant, run_graph
from op_testing import assert_c_equals_reference

OP = "Dequantize"


def ort_dequantize(x: np.ndarray, scale: float, zp: int) -> np.ndarray:
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["x", "scale", "zp"], ["y"])], "dq",
        [helper.make_tensor_value_info("x", TensorProto.INT8, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, x.shape)],
        [numpy_helper.from_array(np.array(scale, np.float32), "scale"),
         numpy_helper.from_array(np.array(zp, np.int8), "zp")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


@pytest.mark.parametrize("seed", range(4))
def test_matches_tflm_onnxruntime_and_c(seed):
    scale, zp = ut.rand_quant(np.random.default_rng(seed))
    x = ut.ALL_INT8
    g = ut.unary_graph(OP, x.shape, "int8", Quant.of(scale, zp), None)
    got = run_graph(g, {"x": x})[g.outputs[0]]
    want = ut.tflite_unary("DEQUANTIZE", (scale, zp), None, x, out_dtype="float32")
    np.testing.assert_array_equal(got, want)
    ort = ort_dequantize(x, scale, zp)
    np.testing.assert_allclose(got, ort, rtol=1e-6, atol=0)
    out = assert_c_equals_reference(g, [{"x": x}], rtol=0)
    np.testing.assert_array_equal(out[0][g.outputs[0]], want)
