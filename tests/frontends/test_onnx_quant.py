"""ONNX quantization operators: uint8 as shifted int8, QOperator weights, and what is refused."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnx_models as om
from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.ir import run_graph


def _save(model, tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    return path


def qdq_roundtrip(zp) -> onnx.ModelProto:
    b = om.ModelBuilder("u8", 13)
    x = b.input("x", [2, 16])
    ins = [x, b.scalar("s", 0.03)] + ([b.init("z", zp)] if zp is not None else [])
    q = b.node("QuantizeLinear", ins)
    b.nodes.append(helper.make_node("DequantizeLinear", [q] + ins[1:], ["y"], name="dq"))
    return b.output("y", [2, 16]).model()


@pytest.mark.parametrize("zp,kiln_zp", [(None, -128), (np.array(140, np.uint8), 12), (np.array(-7, np.int8), -7)])
def test_uint8_is_int8_with_the_zero_point_shifted(zp, kiln_zp, tmp_path):
    model = qdq_roundtrip(zp)
    g = load(_save(model, tmp_path), {})
    q = next(v for v in g.values.values() if v.dtype == "int8")
    assert q.quant.zp == kiln_zp
    feeds = {"x": (np.random.default_rng(0).standard_normal((2, 16)) * 3).astype(np.float32)}
    np.testing.assert_array_equal(run_graph(g, feeds)["y"], om.ort_outputs(model, feeds)["y"])


def one_node(op, inputs, inits, out_shape=(1, 4), **attrs) -> onnx.ModelProto:
    b = om.ModelBuilder("one", 13)
    b.input("x", [1, 4])
    for name, data in inits.items():
        b.init(name, data)
    b.nodes.append(helper.make_node(op, list(inputs), ["y"], name="n", **attrs))
    b.outputs.append(helper.make_tensor_value_info("y", TensorProto.INT8, list(out_shape)))
    return b.model()


def test_qdq_refuses_a_negative_scale(tmp_path):
    b = om.ModelBuilder("neg", 13)
    x = b.input("x", [2, 16])
    ins = [x, b.scalar("s", -0.03)]
    b.nodes.append(helper.make_node("QuantizeLinear", ins, ["q"], name="n"))
    b.nodes.append(helper.make_node("DequantizeLinear", ["q"] + ins[1:], ["y"], name="dq"))
    with pytest.raises(KilnError, match="positive") as info:
        load(_save(b.output("y", [2, 16]).model(), tmp_path), {})
    assert info.value.node == "n"


@pytest.mark.parametrize("inits,attrs,out_type", [
    ({"s": np.float32([0.1, 0.2, 0.05, 0.3]), "z": np.int8([0, 3, -2, 1])}, {"axis": 1}, TensorProto.INT8),
    ({"s": np.array(0.01, np.float32), "z": np.array(-300, np.int16)}, {}, TensorProto.INT16),
])
def test_per_axis_and_int16_quantize_linear_are_float_arithmetic(inits, attrs, out_type, tmp_path):
    """Not QDQ activations: round_half_even(x / s) + zp, saturated, as onnxruntime computes it."""
    model = one_node("QuantizeLinear", ["x", "s", "z"], inits, **attrs)
    model.graph.output[0].type.tensor_type.elem_type = out_type
    model.opset_import[0].version, model.ir_version = 21, om.ir_version_for(21)  # int16 from opset 21
    g = load(_save(model, tmp_path), {})
    x = np.float32([[0.25, -1.3, 0.075, 400.0]])
    np.testing.assert_array_equal(run_graph(g, {"x": x})["y"], om.ort_outputs(model, {"x": x})["y"])


def test_qlinear_conv_with_asymmetric_weights_is_float_arithmetic(tmp_path):
    """Kiln's int8 kernels take symmetric weights; others compute as ONNX defines QLinearConv."""
    b = om.ModelBuilder("qconv", 13)
    x = b.input("x", [1, 2, 4, 4])
    s, z = b.scalar("s", 0.1), b.init("z", np.array(0, np.int8))
    q = b.node("QuantizeLinear", [x, s, z])
    w = b.init("w", np.ones((3, 2, 1, 1), np.int8))
    wz = b.init("wz", np.array(5, np.int8))
    b.nodes.append(helper.make_node("QLinearConv", [q, s, z, w, s, wz, s, z], ["y"], name="conv"))
    b.outputs.append(helper.make_tensor_value_info("y", TensorProto.INT8, [1, 3, 4, 4]))
    model = b.model()
    g = load(_save(model, tmp_path), {})
    assert not any(n.op == "Conv2D" and g.values[n.inputs[0]].dtype == "int8" for n in g.nodes)
    feeds = {"x": (np.random.default_rng(0).standard_normal((1, 2, 4, 4)) * 2).astype(np.float32)}
    np.testing.assert_array_equal(run_graph(g, feeds)["y"], om.ort_outputs(model, feeds)["y"])


@pytest.mark.parametrize("op,last", [("ArgMax", 0), ("ArgMin", 1)])
@pytest.mark.parametrize("zp", [None, np.array(-7, np.int8)])
def test_arg_extreme_of_a_quantized_tensor_is_onnxruntimes(op, last, zp, tmp_path):
    """ArgMax/ArgMin on a uint8 or int8 activation (QOperator writes them so): the dequantized
    values keep the stored order, ties included (coarse steps make many), so the indices are
    onnxruntime's, in the interpreter and in the generated C."""
    from helpers import run_c

    b = om.ModelBuilder("argq", 13)
    x = b.input("x", [3, 24])
    ins = [x, b.scalar("s", 0.25)] + ([b.init("z", zp)] if zp is not None else [])
    q = b.node("QuantizeLinear", ins)
    b.nodes.append(helper.make_node(op, [q], ["y"], name="arg", axis=1, keepdims=0, select_last_index=last))
    b.outputs.append(helper.make_tensor_value_info("y", TensorProto.INT64, [3]))
    model = b.model()
    g = load(_save(model, tmp_path), {})
    rng = np.random.default_rng(1)
    feeds = [{"x": rng.uniform(-3, 3, (3, 24)).astype(np.float32)} for _ in range(3)]
    got = run_c(g, feeds)
    for feed, out in zip(feeds, got):
        want = om.ort_outputs(model, feed)["y"]
        np.testing.assert_array_equal(run_graph(g, feed)["y"], want)
        np.testing.assert_array_equal(out["y"], want)
