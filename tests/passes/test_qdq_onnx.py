"""A CNN quantized by onnxruntime (QDQ format) compiles to Kiln's int8 ops and agrees with
onnxruntime to within a quantization step or two at the output.

Why not bit-exact: Kiln's int8 ops use TFLite's arithmetic (DESIGN.md): requantization by a
31-bit fixed-point multiplier and two roundings (SaturatingRoundingDoublingHighMul, then a
rounding right shift), Add through TFLite's 20-bit rescaling of both inputs. onnxruntime
requantizes with a float multiplier and one rounding (half to even). Both are within half a
step of the exact value, so one op's results differ by at most one step (1 LSB) where the
exact value lies near a rounding boundary; through a chain of ops such differences can add up
at the output. Measured here: at most 1 LSB per op, at most 2 LSB at the output of this
7-layer network.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

import onnx_models as om
from codegen.compiler import compile_model
from codegen.frontends.onnx import load
from codegen.ir import Graph, GraphBuilder, run_graph
from codegen.options import CompileOptions
from codegen.passes.pipeline import run_pipeline
from codegen.targets import load_target
from codegen.verify.run import verify_model

quantization = pytest.importorskip("onnxruntime.quantization")


def qcnn() -> onnx.ModelProto:
    """Conv, Relu, MaxPool, depthwise Conv, pointwise Conv, residual Add, global pool, Gemm."""
    b = om.ModelBuilder("qcnn", 13, seed=7)
    x = b.input("x", [1, 3, 12, 12])
    h = b.node("Conv", [x, b.weight("c1.w", (8, 3, 3, 3)), b.weight("c1.b", (8,), 0.1)], pads=[1, 1, 1, 1])
    h = b.node("Relu", [h])
    p = b.node("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = b.node("Conv", [p, b.weight("dw.w", (8, 1, 3, 3)), b.weight("dw.b", (8,), 0.1)], group=8, pads=[1, 1, 1, 1])
    h = b.node("Relu", [h])
    h = b.node("Conv", [h, b.weight("pw.w", (8, 8, 1, 1), 0.3), b.weight("pw.b", (8,), 0.1)])
    h = b.node("Add", [h, p])
    h = b.node("Relu", [h])
    h = b.node("GlobalAveragePool", [h])
    h = b.node("Flatten", [h])
    b.nodes.append(helper.make_node("Gemm", [h, b.weight("fc.w", (10, 8)), b.weight("fc.b", (10,), 0.1)], ["y"],
                                    name="fc", transB=1))
    return b.output("y", [1, 10]).model()


class _Calibration(quantization.CalibrationDataReader):
    def __init__(self, model: onnx.ModelProto):
        self._feeds = iter([om.random_feeds(model, seed) for seed in range(16)])

    def get_next(self):
        return next(self._feeds, None)


def quantized(tmp: Path, activations) -> Path:
    model = qcnn()
    float_path, q_path = tmp / "qcnn_float.onnx", tmp / f"qcnn_{activations.name}.onnx"
    onnx.save(model, float_path)
    quantization.quantize_static(str(float_path), str(q_path), _Calibration(model),
                                 quant_format=quantization.QuantFormat.QDQ, per_channel=True,
                                 activation_type=activations, weight_type=quantization.QuantType.QInt8)
    return q_path


@pytest.fixture(scope="module", params=["QInt8", "QUInt8"])
def qdq_model(request, tmp_path_factory) -> Path:
    return quantized(tmp_path_factory.mktemp("qdq"), getattr(quantization.QuantType, request.param))


def _options() -> CompileOptions:
    return CompileOptions(load_target("host"))


def _output_scale(path: Path) -> float:
    model = onnx.load(path)
    dq = next(n for n in model.graph.node if n.output[0] == "y")
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    return float(inits[dq.input[1]])


def test_qdq_model_runs_on_int8_kernels(qdq_model):
    build = compile_model(qdq_model, _options())
    g = build.graph
    int8_ops = [n.op for n in g.nodes if g.values[n.outputs[0]].dtype == "int8"]
    assert [n.op for n in g.nodes][0] == "Quantize" and g.nodes[-1].op == "Dequantize"
    assert {"Conv2D", "DepthwiseConv2D", "MaxPool2D", "Mean", "FullyConnected"} <= set(int8_ops)
    # the residual Add: int8, on its own or in its convolution's epilogue (fusion's Conv2DAdd)
    assert {"Add", "Conv2DAdd"} & set(int8_ops)
    assert not any(n.op in ("Conv2D", "DepthwiseConv2D", "FullyConnected", "Add", "Conv2DAdd")
                   and g.values[n.outputs[0]].dtype == "float32" for n in g.nodes)
    assert sum(n.op == "Transpose" for n in g.nodes) <= 1  # at most the input's, on int8
    assert set(build.manifest["kernels"]) >= {"conv2d_s8", "depthwise_conv2d_s8", "fully_connected_s8"}


def test_qdq_model_matches_onnxruntime_within_one_step(qdq_model):
    result = verify_model(qdq_model, _options(), samples=10)
    (out,) = result.outputs
    steps = out.max_abs_error / _output_scale(qdq_model)
    assert steps <= 1 + 1e-3, f"{steps:.3f} quantization steps from onnxruntime"


def test_each_int8_op_is_within_one_step_of_its_float_qdq_form(qdq_model):
    """Op by op, on the int8 tensors the compiled graph computes: the int8 op against its QDQ
    form (Dequantize the inputs, the float op on dequantized weights, Quantize), which is what
    onnxruntime computes (the imported QDQ graph matches onnxruntime exactly here)."""
    folded = run_pipeline(load(qdq_model, {}), verify_each=True)
    checked = set()
    for seed in range(5):
        values = run_graph(folded, om.random_feeds(qcnn(), seed=seed), keep_all=True)
        for node in folded.nodes:
            ins = [folded.values[i] for i in node.inputs]
            if folded.values[node.outputs[0]].dtype != "int8" or ins[0].dtype != "int8":
                continue
            twin = _float_twin(folded, node)
            feeds = {i: values[i] for i in twin.inputs}
            got = run_graph(_one_node_graph(folded, node), feeds)[node.outputs[0]]
            expected = run_graph(twin, feeds)[twin.outputs[0]]
            diff = np.abs(got.astype(np.int64) - expected.astype(np.int64))
            assert diff.max() <= 1, (node.name, int(diff.max()))
            checked.add(node.op)
    assert {"Conv2D", "DepthwiseConv2D", "MaxPool2D", "Add", "Mean", "FullyConnected"} <= checked


def _dequantized_const(b: GraphBuilder, v) -> str:
    """A constant int8/int32 tensor as DequantizeLinear gives it in float32."""
    q = v.quant
    scale = np.asarray(q.scale, np.float32)
    if q.per_channel:
        shape = [1] * len(v.shape)
        shape[q.axis] = -1
        scale = scale.reshape(shape)
    return b.const(v.name, (v.data.astype(np.float32) * scale).astype(np.float32))


def _float_twin(g: Graph, node) -> Graph:
    """Dequantize -> the float op -> Quantize, reading the int8 node's inputs."""
    b = GraphBuilder(f"{node.name}_float")
    args = []
    for name in node.inputs:
        v = g.values[name]
        if v.is_const:
            args.append(_dequantized_const(b, v))
        else:
            b.input(name, "int8", v.shape, quant=v.quant)
            args.append(b.node("Dequantize", [name]))
    y = b.node(node.op, args, **node.attrs)
    return b.output(b.node("Quantize", [y], quant=g.values[node.outputs[0]].quant)).build()


def _one_node_graph(g: Graph, node) -> Graph:
    values = {name: g.values[name] for name in node.inputs + node.outputs if name}
    inputs = [i for i in node.inputs if i and not g.values[i].is_const]
    return Graph(node.name, values, [node], inputs, list(node.outputs))


def qoperator_net() -> onnx.ModelProto:
    """Conv, Relu, depthwise Conv, an NHWC Transpose and a MatMul: QLinearConv and
    QLinearMatMul in onnxruntime's QOperator format."""
    b = om.ModelBuilder("qop", 13, seed=3)
    x = b.input("x", [1, 3, 8, 8])
    h = b.node("Conv", [x, b.weight("c1.w", (6, 3, 3, 3)), b.weight("c1.b", (6,), 0.1)], pads=[1, 1, 1, 1])
    h = b.node("Relu", [h])
    h = b.node("Conv", [h, b.weight("dw.w", (6, 1, 3, 3)), b.weight("dw.b", (6,), 0.1)], group=6, strides=[2, 2],
               pads=[1, 1, 1, 1])
    h = b.node("Transpose", [h], perm=[0, 2, 3, 1])
    b.nodes.append(helper.make_node("MatMul", [h, b.weight("mm", (6, 4))], ["y"], name="mm"))
    return b.output("y", [1, 4, 4, 4]).model()


def test_qoperator_model_imports_as_int8_ops(tmp_path):
    model = qoperator_net()
    onnx.save(model, tmp_path / "f.onnx")
    q_path = tmp_path / "q.onnx"
    quantization.quantize_static(str(tmp_path / "f.onnx"), str(q_path), _Calibration(model),
                                 quant_format=quantization.QuantFormat.QOperator, per_channel=True,
                                 activation_type=quantization.QuantType.QInt8,
                                 weight_type=quantization.QuantType.QInt8)
    assert {n.op_type for n in onnx.load(q_path).graph.node} >= {"QLinearConv", "QLinearMatMul"}
    build = compile_model(q_path, _options())
    assert [n.op for n in build.graph.nodes] == ["Quantize", "Transpose", "Conv2D", "DepthwiseConv2D",
                                                 "FullyConnected", "Dequantize"]
    (out,) = verify_model(q_path, _options(), samples=10).outputs
    assert out.max_abs_error / _output_scale(q_path) <= 1 + 1e-3
