"""Quantized ONNX models as onnxruntime's quantizers write them, for the conformance set of
tests/frontends/test_onnx_quant_ort.py and the table bench/QUANT_ONNX.md.

Two float networks built here with fixed seeds (a small CNN with a residual Add, a Concat of
two pools, GlobalAveragePool, Gemm and Softmax; an MLP of Gemm with LeakyRelu and Sigmoid)
are quantized with `onnxruntime.quantization.quantize_static` in every combination of
format (QDQ, QOperator), activation type (uint8, int8) and weight quantization (per tensor,
per channel), calibrated on random inputs; an MLP of MatMul + Add and a one-layer transformer
encoder with `quantize_dynamic` (the encoder also statically, in the table only).

uint8 activations come with 7-bit weights (`reduce_range`), as onnxruntime advises for x86
without VNNI: its u8s8 integer GEMM (QGemm, QLinearMatMul, QLinearConv) adds products in
int16 pairs that saturate with full-range int8 weights, so onnxruntime's own answer would
be wrong (17 LSB from the exact integer result on the per-channel MLP's first QGemm).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def _weights(rng: np.random.Generator, name: str, shape: tuple[int, ...], scale: float) -> onnx.TensorProto:
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def cnn() -> onnx.ModelProto:
    rng = np.random.default_rng(19)
    inits = [_weights(rng, "c1.w", (8, 3, 3, 3), 0.3), _weights(rng, "c1.b", (8,), 0.1),
             _weights(rng, "dw.w", (8, 1, 3, 3), 0.3), _weights(rng, "dw.b", (8,), 0.1),
             _weights(rng, "pw.w", (8, 8, 1, 1), 0.3), _weights(rng, "pw.b", (8,), 0.1),
             _weights(rng, "c2.w", (16, 16, 1, 1), 0.3), _weights(rng, "c2.b", (16,), 0.1),
             _weights(rng, "fc.w", (10, 16), 0.3), _weights(rng, "fc.b", (10,), 0.1)]
    n = helper.make_node
    nodes = [n("Conv", ["x", "c1.w", "c1.b"], ["c1"], pads=[1, 1, 1, 1]), n("Relu", ["c1"], ["r1"]),
             n("Conv", ["r1", "dw.w", "dw.b"], ["dw"], group=8, pads=[1, 1, 1, 1]), n("Relu", ["dw"], ["r2"]),
             n("Conv", ["r2", "pw.w", "pw.b"], ["pw"]), n("Add", ["pw", "r1"], ["res"]),
             n("AveragePool", ["res"], ["avg"], kernel_shape=[2, 2], strides=[2, 2]),
             n("MaxPool", ["res"], ["max"], kernel_shape=[2, 2], strides=[2, 2]),
             n("Concat", ["avg", "max"], ["cat"], axis=1),
             n("Conv", ["cat", "c2.w", "c2.b"], ["c2"]), n("Relu", ["c2"], ["r3"]),
             n("GlobalAveragePool", ["r3"], ["gap"]), n("Flatten", ["gap"], ["flat"]),
             n("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], transB=1), n("Softmax", ["logits"], ["probs"], axis=-1)]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)


def mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(20)
    inits = [_weights(rng, "fc1.w", (64, 32), 0.25), _weights(rng, "fc1.b", (64,), 0.1),
             _weights(rng, "fc2.w", (32, 64), 0.25), _weights(rng, "fc2.b", (32,), 0.1),
             _weights(rng, "fc3.w", (10, 32), 0.25), _weights(rng, "fc3.b", (10,), 0.1)]
    n = helper.make_node
    nodes = [n("Gemm", ["x", "fc1.w", "fc1.b"], ["h1"], transB=1), n("LeakyRelu", ["h1"], ["a1"], alpha=0.1),
             n("Gemm", ["a1", "fc2.w", "fc2.b"], ["h2"], transB=1), n("Sigmoid", ["h2"], ["a2"]),
             n("Mul", ["a2", "h2"], ["swish"]),
             n("Gemm", ["swish", "fc3.w", "fc3.b"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)


def mlp_matmul() -> onnx.ModelProto:
    """MatMul + Add layers, what quantize_dynamic quantizes (it leaves Gemm in float)."""
    rng = np.random.default_rng(21)
    inits = [_weights(rng, "w1", (32, 48), 0.25), _weights(rng, "b1", (48,), 0.1),
             _weights(rng, "w2", (48, 10), 0.25), _weights(rng, "b2", (10,), 0.1)]
    n = helper.make_node
    nodes = [n("MatMul", ["x", "w1"], ["m1"]), n("Add", ["m1", "b1"], ["h1"]), n("Relu", ["h1"], ["a1"]),
             n("MatMul", ["a1", "w2"], ["m2"]), n("Add", ["m2", "b2"], ["y"])]
    graph = helper.make_graph(nodes, "mlp_matmul", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)


def encoder() -> onnx.ModelProto:
    """One single-head transformer encoder layer over 8 tokens of 16: attention (Q K^T, both
    computed), residual, LayerNormalization, a Relu feed-forward, residual, LayerNormalization."""
    rng = np.random.default_rng(22)
    d, f = 16, 32
    inits = [_weights(rng, n, s, 0.25) for n, s in (("wq", (d, d)), ("wk", (d, d)), ("wv", (d, d)), ("wo", (d, d)),
                                                   ("w1", (d, f)), ("w2", (f, d)))]
    inits += [_weights(rng, "b1", (f,), 0.1), _weights(rng, "b2", (d,), 0.1),
              numpy_helper.from_array(np.float32(0.25), "inv_sqrt_d"),
              numpy_helper.from_array(np.ones(d, np.float32), "g1"), numpy_helper.from_array(np.zeros(d, np.float32), "be1"),
              numpy_helper.from_array(np.ones(d, np.float32), "g2"), numpy_helper.from_array(np.zeros(d, np.float32), "be2")]
    n = helper.make_node
    nodes = [n("MatMul", ["x", "wq"], ["q"]), n("MatMul", ["x", "wk"], ["k"]), n("MatMul", ["x", "wv"], ["v"]),
             n("Transpose", ["k"], ["kt"], perm=[0, 2, 1]), n("MatMul", ["q", "kt"], ["qk"]),
             n("Mul", ["qk", "inv_sqrt_d"], ["scores"]), n("Softmax", ["scores"], ["att"], axis=-1),
             n("MatMul", ["att", "v"], ["ctx"]), n("MatMul", ["ctx", "wo"], ["o"]), n("Add", ["o", "x"], ["r1"]),
             n("LayerNormalization", ["r1", "g1", "be1"], ["n1"], axis=-1),
             n("MatMul", ["n1", "w1"], ["f1"]), n("Add", ["f1", "b1"], ["f1b"]), n("Relu", ["f1b"], ["f1r"]),
             n("MatMul", ["f1r", "w2"], ["f2"]), n("Add", ["f2", "b2"], ["f2b"]), n("Add", ["f2b", "n1"], ["r2"]),
             n("LayerNormalization", ["r2", "g2", "be2"], ["y"], axis=-1)]
    graph = helper.make_graph(nodes, "encoder", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, d])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def linear_cnn() -> onnx.ModelProto:
    """Only the layers whose onnxruntime arithmetic Kiln's onnxruntime numerics computes today
    (QLinearConv, depthwise QLinearConv, QGemm, QuantizeLinear, DequantizeLinear): a strided
    3x3 Conv + Relu, a padded depthwise 3x3 + Relu, Flatten, Gemm (tests/quant/test_onnxruntime_numerics.py)."""
    rng = np.random.default_rng(23)
    inits = [_weights(rng, "c1.w", (8, 3, 3, 3), 0.3), _weights(rng, "c1.b", (8,), 0.1),
             _weights(rng, "dw.w", (8, 1, 3, 3), 0.3), _weights(rng, "dw.b", (8,), 0.1),
             _weights(rng, "fc.w", (10, 8 * 6 * 6), 0.1), _weights(rng, "fc.b", (10,), 0.1)]
    n = helper.make_node
    nodes = [n("Conv", ["x", "c1.w", "c1.b"], ["c1"], strides=[2, 2]), n("Relu", ["c1"], ["r1"]),
             n("Conv", ["r1", "dw.w", "dw.b"], ["dw"], group=8, pads=[1, 1, 1, 1]), n("Relu", ["dw"], ["r2"]),
             n("Flatten", ["r2"], ["flat"]), n("Gemm", ["flat", "fc.w", "fc.b"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "linear_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 13, 13])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)


MODELS = {"cnn": cnn, "mlp": mlp, "mlp_matmul": mlp_matmul, "encoder": encoder, "linear_cnn": linear_cnn}


@dataclass(frozen=True)
class Variant:
    model: str
    fmt: str  # "QDQ", "QOperator" (quantize_static) or "dynamic" (quantize_dynamic)
    activations: str  # "uint8" or "int8"
    per_channel: bool

    @property
    def label(self) -> str:
        return f"{self.model}-{self.fmt}-{self.activations}-{'per_channel' if self.per_channel else 'per_tensor'}"


VARIANTS = [Variant(m, f, a, pc) for m, f, a, pc in
            itertools.product(("cnn", "mlp"), ("QDQ", "QOperator"), ("uint8", "int8"), (False, True))]
# quantize_dynamic: uint8 activations quantized at run time (DynamicQuantizeLinear, MatMulInteger)
VARIANTS += [Variant("mlp_matmul", "dynamic", "uint8", pc) for pc in (False, True)]
VARIANTS += [Variant("encoder", "dynamic", "uint8", True)]
# Convolutions and Gemm only, in every static combination: the smallest network on which the
# onnxruntime numerics' linear kernels are checked (tests/quant/test_onnxruntime_numerics.py)
LINEAR_CNN = [Variant("linear_cnn", f, a, pc)
              for f, a, pc in itertools.product(("QDQ", "QOperator"), ("uint8", "int8"), (False, True))]
# The static encoder: bit-exact with onnxruntime in onnxruntime's numerics (its QDQ and
# QOperator forms, tests/quant/test_onnxruntime_layer_norm.py), but not within the 2-LSB bound
# of tests/frontends/test_onnx_quant_ort.py in TFLite's numerics, so in the table only there:
# its two LayerNormalizations amplify one-step requantization differences to 3-4 LSB (QDQ), and
# in QOperator its last LayerNormalization stays float, so its float output carries them and
# fails the relative test.
MEASURED_ONLY = [Variant("encoder", f, a, True) for f, a in itertools.product(("QDQ", "QOperator"), ("uint8", "int8"))]


def quantized(variant: Variant, folder: Path) -> Path:
    """The variant's model quantized by onnxruntime, written into `folder`."""
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)

    model = MODELS[variant.model]()
    src = folder / f"{variant.model}_float.onnx"
    onnx.save(model, src)
    out = folder / f"{variant.label}.onnx"
    if variant.fmt == "dynamic":
        quantize_dynamic(str(src), str(out), per_channel=variant.per_channel, reduce_range=True,
                         weight_type=QuantType.QInt8)
        return out
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(0)
    feeds = [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(16)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(feeds)

        def get_next(self):
            return next(self.it, None)

    quantize_static(str(src), str(out), Reader(), per_channel=variant.per_channel,
                    quant_format=QuantFormat.QDQ if variant.fmt == "QDQ" else QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8 if variant.activations == "uint8" else QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=variant.activations == "uint8",
                    extra_options={"WeightSymmetric": True})
    return out
