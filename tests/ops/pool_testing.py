"""Shared cases of the pooling tests (test_average_pool2d.py, test_max_pool2d.py).

float32: Kiln's NHWC reference against onnxruntime's NCHW AveragePool (count_include_pad=0)
/ MaxPool on the transposed input, then the generated C against the reference.
int8: the reference against a one-op AVERAGE_POOL_2D / MAX_POOL_2D model in TFLite Micro, bit
for bit, on inputs covering every int8 value, then the generated C against the reference.
"""

from __future__ import annotations

import numpy as np

from codegen.ir import GraphBuilder, Quant, run_graph
from codegen.ops.conv_geometry import same_pads
from op_testing import assert_c_equals_reference, finish, run_onnx_node

ONNX_OP = {"AveragePool2D": "AveragePool", "MaxPool2D": "MaxPool"}
TFLITE_OP = {"AveragePool2D": "AVERAGE_POOL_2D", "MaxPool2D": "MAX_POOL_2D"}
TFLITE_ACT = {"none": "NONE", "relu": "RELU", "relu6": "RELU6", "relu_n1_to_1": "RELU_N1_TO_1"}
CLIP = {"none": (-np.inf, np.inf), "relu": (0.0, np.inf), "relu6": (0.0, 6.0),
        "relu_n1_to_1": (-1.0, 1.0)}
# (NHWC input shape, kernel, strides, pads (top, left, bottom, right))
FLOAT_CASES = [
    ((1, 8, 8, 3), (2, 2), (2, 2), (0, 0, 0, 0)),
    ((2, 7, 9, 4), (3, 3), (1, 1), (1, 1, 1, 1)),
    ((1, 9, 6, 5), (3, 2), (2, 3), (2, 1, 0, 1)),
    ((1, 5, 5, 2), (5, 5), (1, 1), (0, 0, 0, 0)),  # global pooling
    ((1, 10, 4, 1), (4, 1), (3, 1), (1, 0, 2, 0)),
]


def pool_graph(op: str, shape, dtype: str, quant, **attrs):
    b = GraphBuilder(op.lower())
    x = b.input("x", dtype, shape, quant)
    return finish(b, b.node(op, [x], quant=quant, **attrs))


def check_float(op: str, shape, kernel, strides, pads, activation: str = "none", seed: int = 0):
    rng = np.random.default_rng(seed)
    g = pool_graph(op, shape, "float32", None, kernel=kernel, strides=strides, pads=pads,
                   activation=activation)
    feeds = [{"x": (rng.standard_normal(shape) * 4).astype(np.float32)} for _ in range(2)]
    attrs = {"kernel_shape": list(kernel), "strides": list(strides), "pads": list(pads)}
    if op == "AveragePool2D":
        attrs["count_include_pad"] = 0
    for feed in feeds:
        nchw = np.ascontiguousarray(feed["x"].transpose(0, 3, 1, 2))
        want = np.clip(run_onnx_node(ONNX_OP[op], {"x": nchw}, attrs).transpose(0, 2, 3, 1),
                       *CLIP[activation])
        got = run_graph(g, feed)[g.outputs[0]]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert_c_equals_reference(g, feeds)


def all_int8_values(shape, rng) -> np.ndarray:
    """A random int8 tensor of `shape` that holds each of the 256 values at least once."""
    flat = rng.integers(-128, 128, int(np.prod(shape)))
    flat[:256] = rng.permutation(np.arange(-128, 128))[:min(256, flat.size)]
    return rng.permutation(flat).astype(np.int8).reshape(shape)


def tflm_pool(op: str, shape, kernel, strides, padding: str, activation: str, scale: float,
              zero_point: int, x: np.ndarray) -> np.ndarray:
    from tflite_models import TensorSpec, run_tflm, single_op_model

    kh, kw = kernel
    sh, sw = strides
    if padding == "SAME":
        oh, ow = -(-shape[1] // sh), -(-shape[2] // sw)
    else:
        oh, ow = (shape[1] - kh) // sh + 1, (shape[2] - kw) // sw + 1
    model = single_op_model(
        TFLITE_OP[op], [TensorSpec(shape, "int8", scale, zero_point)],
        [TensorSpec((shape[0], oh, ow, shape[3]), "int8", scale, zero_point)],
        {"padding": padding, "stride_w": sw, "stride_h": sh, "filter_width": kw,
         "filter_height": kh, "fused_activation_function": TFLITE_ACT[activation]})
    return run_tflm(model, x)[0]


def check_int8(op: str, shape, kernel, strides, padding: str, activation: str, scale: float,
               zero_point: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    pads = same_pads(shape[1:3], kernel, strides) if padding == "SAME" else (0, 0, 0, 0)
    q = Quant.of(scale, zero_point)
    g = pool_graph(op, shape, "int8", q, kernel=kernel, strides=strides, pads=pads,
                   activation=activation)
    feeds = [{"x": all_int8_values(shape, rng)} for _ in range(2)]
    for feed in feeds:
        want = tflm_pool(op, shape, kernel, strides, padding, activation, scale, zero_point, feed["x"])
        got = run_graph(g, feed)[g.outputs[0]]
        np.testing.assert_array_equal(got, want)
    assert_c_equals_reference(g, feeds)


def mlperf_pools(path, builtin: str):
    """(input shape, kernel, strides, padding, activation, scale, zero point) of each `builtin`
    pooling operator of a .tflite model."""
    import tflite

    acts = {0: "none", 1: "relu", 2: "relu_n1_to_1", 3: "relu6"}
    m = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = m.Subgraphs(0)
    found = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = m.OperatorCodes(op.OpcodeIndex())
        if max(code.BuiltinCode(), code.DeprecatedBuiltinCode()) != getattr(tflite.BuiltinOperator, builtin):
            continue
        o = tflite.Pool2DOptions()
        o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
        t = sg.Tensors(op.Inputs(0))
        qp = t.Quantization()
        found.append((tuple(int(d) for d in t.ShapeAsNumpy()), (o.FilterHeight(), o.FilterWidth()),
                      (o.StrideH(), o.StrideW()), "SAME" if o.Padding() == tflite.Padding.SAME else "VALID",
                      acts[o.FusedActivationFunction()], float(qp.ScaleAsNumpy()[0]),
                      int(qp.ZeroPointAsNumpy()[0])))
    return found
