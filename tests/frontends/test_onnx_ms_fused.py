"""onnxruntime's fused float contrib operators and dynamically quantized MatMuls (domain
com.microsoft, codegen/frontends/onnx/ops_ms_fused.py), each in a one-node model compiled,
run on the host and compared with onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.run import verify_model

pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(7)


def _const(name: str, shape, dtype=np.float32, scale: float = 0.5):
    if np.issubdtype(dtype, np.integer):
        # 7-bit weights: onnxruntime's u8s8 kernels add products in int16 pairs, which
        # saturate on x86 without VNNI beyond 255 * 64 * 2
        data = RNG.integers(-60, 61, shape).astype(dtype)
    else:
        data = (RNG.standard_normal(shape) * scale).astype(dtype)
    return numpy_helper.from_array(np.asarray(data), name)


def _model(op: str, inputs: dict, consts: list, out_shape, n_out: int = 1, **attrs) -> onnx.ModelProto:
    names = list(inputs) + [c.name if c is not None else "" for c in consts]
    outs = ["y"] + [""] * (n_out - 1)
    node = helper.make_node(op, names, outs, domain="com.microsoft", name=op.lower(), **attrs)
    graph = helper.make_graph([node], op, [helper.make_tensor_value_info(k, TensorProto.FLOAT, s)
                                           for k, s in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
                              [c for c in consts if c is not None])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                             ir_version=8)


CASES = {
    "FusedConv_relu": lambda: _model("FusedConv", {"x": [1, 3, 8, 8]}, [_const("w", (4, 3, 3, 3)), _const("b", (4,))],
                                     [1, 4, 8, 8], pads=[1, 1, 1, 1], activation="Relu"),
    "FusedConv_leaky": lambda: _model("FusedConv", {"x": [1, 3, 8, 8]}, [_const("w", (4, 3, 3, 3))], [1, 4, 6, 6],
                                      activation="LeakyRelu", activation_params=[0.2]),
    "FusedConv_clip": lambda: _model("FusedConv", {"x": [1, 3, 8, 8]}, [_const("w", (4, 3, 1, 1))], [1, 4, 8, 8],
                                     activation="Clip", activation_params=[0.0, 0.5]),
    "FusedGemm_sigmoid": lambda: _model("FusedGemm", {"x": [2, 6]}, [_const("w", (5, 6)), _const("b", (5,))], [2, 5],
                                        transB=1, activation="Sigmoid"),
    "Gelu": lambda: _model("Gelu", {"x": [2, 16]}, [], [2, 16]),
    "FastGelu_bias": lambda: _model("FastGelu", {"x": [2, 16]}, [_const("b", (16,))], [2, 16]),
    "BiasGelu": lambda: _model("BiasGelu", {"x": [2, 16]}, [_const("b", (16,))], [2, 16]),
    "SkipLayerNormalization": lambda: _model("SkipLayerNormalization", {"x": [1, 4, 16], "skip": [1, 4, 16]},
                                             [_const("gamma", (16,)), _const("beta", (16,)), _const("bias", (16,))],
                                             [1, 4, 16], epsilon=1e-5),
    "DynamicQuantizeMatMul": lambda: _model("DynamicQuantizeMatMul", {"x": [2, 16]},
                                            [_const("w", (16, 8), np.int8), _const("ws", (8,), scale=0.01),
                                             _const("wz", (8,), np.int8), _const("b", (8,))], [2, 8]),
}


def _matmul_integer_to_float() -> onnx.ModelProto:
    """x quantized to uint8 by a QuantizeLinear, then MatMulIntegerToFloat with int8 B."""
    model = _model("MatMulIntegerToFloat", {"xq": [2, 16]},
                   [_const("w", (16, 8), np.int8), numpy_helper.from_array(np.float32(0.02), "as"),
                    _const("ws", (8,), scale=0.01), numpy_helper.from_array(np.uint8(120), "az"), None,
                    _const("b", (8,))], [2, 8])
    g = model.graph
    for t in g.initializer:
        if t.name == "ws":
            t.CopyFrom(numpy_helper.from_array(np.abs(numpy_helper.to_array(t)) + np.float32(0.001), "ws"))
    g.input[0].name = "x"
    g.node.insert(0, helper.make_node("QuantizeLinear", ["x", "as", "az"], ["xq"]))
    return model


CASES["MatMulIntegerToFloat"] = _matmul_integer_to_float


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_contrib_operator_matches_onnxruntime(case, tmp_path):
    model = CASES[case]()
    if case == "DynamicQuantizeMatMul":  # symmetric weights per column, positive scales
        for t in model.graph.initializer:
            if t.name == "ws":
                t.CopyFrom(numpy_helper.from_array(np.abs(numpy_helper.to_array(t)) + np.float32(0.001), "ws"))
            if t.name == "wz":
                t.CopyFrom(numpy_helper.from_array(np.zeros(8, np.int8), "wz"))
    path = tmp_path / f"{case}.onnx"
    onnx.save(model, path)
    result = verify_model(path, CompileOptions(load_target("host")), samples=4)
    assert result.ok, [(o.name, o.max_rel_error) for o in result.outputs]
