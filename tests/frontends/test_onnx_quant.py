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


@pytest.mark.parametrize("inits,attrs,words", [
    ({"s": np.full(4, 0.1, np.float32), "z": np.zeros(4, np.int8)}, {"axis": 1}, "per-axis"),
    ({"s": np.array(0.1, np.float32), "z": np.array(0, np.int16)}, {}, "int16"),
    ({"s": np.array(-0.1, np.float32), "z": np.array(0, np.int8)}, {}, "positive"),
])
def test_quantize_linear_refusals(inits, attrs, words, tmp_path):
    with pytest.raises(KilnError, match=words) as info:
        load(_save(one_node("QuantizeLinear", ["x", "s", "z"], inits, **attrs), tmp_path), {})
    assert info.value.node == "n"


def test_qlinear_conv_needs_symmetric_weights(tmp_path):
    b = om.ModelBuilder("qconv", 13)
    x = b.input("x", [1, 2, 4, 4])
    s, z = b.scalar("s", 0.1), b.init("z", np.array(0, np.int8))
    q = b.node("QuantizeLinear", [x, s, z])
    w = b.init("w", np.ones((3, 2, 1, 1), np.int8))
    wz = b.init("wz", np.array(5, np.int8))
    b.nodes.append(helper.make_node("QLinearConv", [q, s, z, w, s, wz, s, z], ["y"], name="conv"))
    b.outputs.append(helper.make_tensor_value_info("y", TensorProto.INT8, [1, 3, 4, 4]))
    with pytest.raises(KilnError, match="symmetric") as info:
        load(_save(b.model(), tmp_path), {})
    assert info.value.node == "conv"
