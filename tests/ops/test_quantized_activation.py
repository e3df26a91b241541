"""QuantizedActivation (onnxruntime's QLinearSigmoid / QLinearLeakyRelu as one int8 table):
the numpy reference against the float function quantized exactly, the generated C against
onnxruntime in TFLite's numerics (tests/quant/test_onnxruntime_numerics.py has the exact
onnxruntime numerics), and the refusal of an unknown function."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ir.types import Quant, Value
from codegen.ops.quantized_activation import QuantizedActivation
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.run import verify_model

CODES = np.arange(-128, 128, dtype=np.int64).astype(np.int8)


def _graph(function: str, alpha: float = 0.1) -> Graph:
    g = Graph("g")
    g.add_value(Value("x", "int8", (256,), Quant.of(0.05, 3)))
    g.add_value(Value("y", "int8", (256,), Quant.of(1 / 255 if function == "sigmoid" else 0.04, -128 if
                                                   function == "sigmoid" else -20)))
    g.nodes.append(Node("QuantizedActivation", "act", ["x"], ["y"], {"function": function, "alpha": alpha}))
    return g


@pytest.mark.parametrize("function", ["sigmoid", "leaky_relu"])
def test_reference_is_the_float_function_quantized(function):
    g = _graph(function)
    (got,) = QuantizedActivation.reference(g.nodes[0], [CODES], g)
    x = 0.05 * (CODES.astype(np.float64) - 3)
    y = 1 / (1 + np.exp(-x)) if function == "sigmoid" else np.where(x < 0, 0.1 * x, x)
    qo = g.values["y"].quant
    v = y / qo.s
    exact = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5) + qo.zp, -128, 127)  # Kiln's Quantize: ties away from 0
    assert np.abs(got.astype(np.int64) - exact).max() <= 1  # float32 against float64 arithmetic
    assert (got.astype(np.int64) == exact).mean() > 0.98


def test_unknown_function_is_refused():
    g = _graph("tanh")
    with pytest.raises(KilnError, match="tanh"):
        QuantizedActivation.check(g.nodes[0], g)


def _model(op: str, dtype: str, attrs: dict) -> onnx.ModelProto:
    tp = TensorProto.UINT8 if dtype == "uint8" else TensorProto.INT8
    npd = np.uint8 if dtype == "uint8" else np.int8
    lo = 0 if dtype == "uint8" else -128
    inits = [numpy_helper.from_array(np.float32(0.047), "xs"), numpy_helper.from_array(np.array(lo + 120, npd), "xz"),
             numpy_helper.from_array(np.float32(1 / 255 if op == "QLinearSigmoid" else 0.031), "ys"),
             numpy_helper.from_array(np.array(lo if op == "QLinearSigmoid" else lo + 70, npd), "yz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node(op, ["xq", "xs", "xz", "ys", "yz"], ["yq"], domain="com.microsoft", **attrs),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 300])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 300])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)],
                             ir_version=8)


@pytest.mark.parametrize("op,attrs", [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.2})])
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_generated_table_within_one_step_of_onnxruntime(op, attrs, dtype, tmp_path):
    pytest.importorskip("onnxruntime")
    path = tmp_path / "act.onnx"
    onnx.save(_model(op, dtype, attrs), path)
    (out,) = verify_model(path, CompileOptions(load_target("host")), samples=5).outputs
    assert out.ok and out.max_lsb <= 1, out
    assert math.isfinite(out.max_lsb)
