"""TFLite import, one builtin at a time: each model is written with tests/tflite_models.py, run
in TFLite Micro (int8: bit-exact) or LiteRT (float: 1e-5 relative), imported, and run in the
Kiln interpreter. Attribute mapping (explicit pads, activations, axes) is checked directly."""

from __future__ import annotations

import math

import numpy as np
import pytest

from codegen.frontends.tflite import load_bytes
from codegen.ir import Graph, run_graph
from tflite_models import ModelWriter, TensorSpec, const, run_litert, run_tflm, single_op_model

RTOL = 1e-5
RNG = np.random.default_rng(1234)


def i8(shape, scale=0.05, zp=-3, **kw) -> TensorSpec:
    return TensorSpec(tuple(shape), "int8", scale=scale, zero_point=zp, **kw)


def f32(shape, **kw) -> TensorSpec:
    return TensorSpec(tuple(shape), "float32", **kw)


def _conv_opts(padding="SAME", stride=1, dilation=1, act="NONE", **extra):
    return {"padding": padding, "stride_w": stride, "stride_h": stride, "dilation_w_factor": dilation,
            "dilation_h_factor": dilation, "fused_activation_function": act, **extra}


def _pool_opts(padding="SAME", stride=2, size=3, act="NONE"):
    return {"padding": padding, "stride_w": stride, "stride_h": stride, "filter_width": size,
            "filter_height": size, "fused_activation_function": act}


_W = RNG.integers(-127, 128, (6, 3, 3, 4)).astype(np.int8)
_WS = RNG.uniform(0.005, 0.02, 6)
_B = RNG.integers(-500, 500, 6).astype(np.int32)
_DW = RNG.integers(-127, 128, (1, 3, 3, 8)).astype(np.int8)
_DWS = RNG.uniform(0.005, 0.02, 8)
_FW = RNG.integers(-127, 128, (5, 12)).astype(np.int8)
_PADS = np.array([[0, 0], [1, 2], [2, 1], [0, 0]], np.int32)

# (id, builtin, inputs, outputs, options, reference runtime)
CASES = [
    ("conv_s8_same_s2_perchannel", "CONV_2D",
     [i8((1, 7, 8, 4)), const(_W, "int8", scale=list(_WS)), const(_B, "int32", scale=list(_WS * 0.05))],
     [i8((1, 4, 4, 6), 0.1, 2)], _conv_opts(stride=2, act="RELU"), "tflm"),
    ("conv_s8_same_dilated_nobias", "CONV_2D", [i8((1, 7, 8, 4)), const(_W, "int8", scale=list(_WS)), None],
     [i8((1, 7, 8, 6), 0.1, 2)], _conv_opts(dilation=2), "tflm"),
    ("conv_s8_valid_relu6", "CONV_2D",
     [i8((1, 7, 8, 4)), const(_W, "int8", scale=list(_WS)), const(_B, "int32", scale=list(_WS * 0.05))],
     [i8((1, 5, 6, 6), 0.1, 2)], _conv_opts("VALID", act="RELU6"), "tflm"),
    ("conv_f32_same_s2", "CONV_2D",
     [f32((1, 7, 8, 4)), const(RNG.standard_normal((6, 3, 3, 4)).astype(np.float32)),
      const(RNG.standard_normal(6).astype(np.float32))], [f32((1, 4, 4, 6))], _conv_opts(stride=2), "litert"),
    ("depthwise_s8_mult2", "DEPTHWISE_CONV_2D",
     [i8((1, 6, 7, 4)), const(_DW, "int8", scale=list(_DWS), quantized_dimension=3),
      const(RNG.integers(-500, 500, 8).astype(np.int32), "int32", scale=list(_DWS * 0.05))],
     [i8((1, 3, 4, 8), 0.1, 2)], _conv_opts(stride=2, act="RELU6", depth_multiplier=2), "tflm"),
    ("depthwise_f32_mult2", "DEPTHWISE_CONV_2D",
     [f32((1, 6, 7, 4)), const(RNG.standard_normal((1, 3, 3, 8)).astype(np.float32)),
      const(RNG.standard_normal(8).astype(np.float32))], [f32((1, 6, 7, 8))],
     _conv_opts(depth_multiplier=2), "litert"),
    ("fc_s8_keep_dims", "FULLY_CONNECTED",
     [i8((2, 3, 12)), const(_FW, "int8", scale=0.01),
      const(RNG.integers(-500, 500, 5).astype(np.int32), "int32", scale=0.0005)],
     [i8((2, 3, 5), 0.1, 2)], {"keep_num_dims": True}, "tflm"),
    ("fc_s8_flatten_nobias_relu", "FULLY_CONNECTED", [i8((2, 3, 12)), const(_FW, "int8", scale=0.01), None],
     [i8((6, 5), 0.1, 2)], {"fused_activation_function": "RELU"}, "tflm"),
    ("fc_f32", "FULLY_CONNECTED",
     [f32((2, 12)), const(RNG.standard_normal((5, 12)).astype(np.float32)),
      const(RNG.standard_normal(5).astype(np.float32))], [f32((2, 5))], {}, "litert"),
    ("max_pool_s8_same", "MAX_POOL_2D", [i8((1, 7, 9, 4))], [i8((1, 4, 5, 4))], _pool_opts(), "tflm"),
    ("avg_pool_s8_same_relu6", "AVERAGE_POOL_2D", [i8((1, 7, 9, 4))], [i8((1, 4, 5, 4))],
     _pool_opts(act="RELU6"), "tflm"),
    ("avg_pool_f32_valid", "AVERAGE_POOL_2D", [f32((1, 7, 9, 4))], [f32((1, 3, 4, 4))],
     _pool_opts("VALID"), "litert"),
    ("max_pool_f32_same", "MAX_POOL_2D", [f32((1, 7, 9, 4))], [f32((1, 4, 5, 4))], _pool_opts(), "litert"),
    ("mean_s8_hw_keepdims", "MEAN", [i8((1, 5, 6, 3), 0.1, 3), const(np.array([1, 2], np.int32))],
     [i8((1, 1, 1, 3), 0.05, -2)], {"keep_dims": True}, "tflm"),
    ("mean_s8_hw", "MEAN", [i8((1, 5, 6, 3), 0.1, 3), const(np.array([2, 1], np.int32))],
     [i8((1, 3), 0.1, 3)], {"keep_dims": False}, "tflm"),
    ("mean_f32_last", "MEAN", [f32((2, 5, 6)), const(np.array([-1], np.int32))], [f32((2, 5))],
     {"keep_dims": False}, "litert"),
    ("add_s8_broadcast", "ADD", [i8((1, 4, 4, 3), 0.1, 2), i8((1, 1, 4, 3), 0.07, -5)],
     [i8((1, 4, 4, 3), 0.2, -1)], {}, "tflm"),
    ("sub_s8_relu_n1_to_1", "SUB", [i8((1, 4, 4, 3), 0.1, 2), i8((1, 4, 4, 3), 0.07, -5)],
     [i8((1, 4, 4, 3), 0.05, -1)], {"fused_activation_function": "RELU_N1_TO_1"}, "tflm"),
    ("mul_s8_broadcast_relu", "MUL", [i8((1, 4, 4, 3), 0.1, 2), i8((1, 1, 1, 3), 0.07, -5)],
     [i8((1, 4, 4, 3), 0.2, -1)], {"fused_activation_function": "RELU"}, "tflm"),
    ("add_f32_relu6", "ADD", [f32((2, 3)), f32((2, 3))], [f32((2, 3))],
     {"fused_activation_function": "RELU6"}, "litert"),
    ("logistic_s8", "LOGISTIC", [i8((1, 5, 6), 0.1, 4)], [i8((1, 5, 6), 1 / 256, -128)], {}, "tflm"),
    ("tanh_s8", "TANH", [i8((1, 5, 6), 0.05, 4)], [i8((1, 5, 6), 1 / 128, 0)], {}, "tflm"),
    ("logistic_f32", "LOGISTIC", [f32((2, 5))], [f32((2, 5))], {}, "litert"),
    ("tanh_f32", "TANH", [f32((2, 5))], [f32((2, 5))], {}, "litert"),
    ("relu_s8", "RELU", [i8((2, 8), 0.05, 1)], [i8((2, 8), 0.03, -128)], {}, "tflm"),
    # TFLM's int8 RELU6 clamps without rescaling, so it is only defined for equal quantization.
    ("relu6_s8", "RELU6", [i8((2, 8), 0.05, 1)], [i8((2, 8), 0.05, 1)], {}, "tflm"),
    ("relu_f32", "RELU", [f32((2, 8))], [f32((2, 8))], {}, "litert"),
    ("relu6_f32", "RELU6", [f32((2, 8))], [f32((2, 8))], {}, "litert"),
    ("relu_n1_to_1_f32", "RELU_N1_TO_1", [f32((2, 8))], [f32((2, 8))], {}, "litert"),
    ("softmax_s8", "SOFTMAX", [i8((2, 8), 0.1, 1)], [i8((2, 8), 1 / 256, -128)], {"beta": 1.0}, "tflm"),
    ("softmax_f32_beta", "SOFTMAX", [f32((2, 8))], [f32((2, 8))], {"beta": 0.5}, "litert"),
    ("concat_s8_last_axis", "CONCATENATION", [i8((1, 2, 2, 3)), i8((1, 2, 2, 5))], [i8((1, 2, 2, 8))],
     {"axis": -1}, "tflm"),
    ("concat_f32_axis1", "CONCATENATION", [f32((1, 2, 3)), f32((1, 4, 3))], [f32((1, 6, 3))], {"axis": 1},
     "litert"),
    ("pad_s8", "PAD", [i8((1, 3, 3, 2)), const(_PADS)], [i8((1, 6, 6, 2))], {}, "tflm"),
    ("padv2_s8", "PADV2", [i8((1, 3, 3, 2)), const(_PADS), const(np.array([-7]), "int8", scale=0.05, zero_point=-3)],
     [i8((1, 6, 6, 2))], {}, "tflm"),
    ("pad_f32", "PAD", [f32((2, 3)), const(np.array([[1, 0], [0, 2]], np.int32))], [f32((3, 5))], {}, "litert"),
    ("padv2_f32", "PADV2", [f32((2, 3)), const(np.array([[1, 0], [0, 2]], np.int32)),
                            const(np.array([1.5], np.float32))], [f32((3, 5))], {}, "litert"),
    ("transpose_s8", "TRANSPOSE", [i8((2, 3, 4)), const(np.array([2, 0, 1], np.int32))], [i8((4, 2, 3))], {},
     "tflm"),
    ("transpose_f32", "TRANSPOSE", [f32((1, 2, 3, 4)), const(np.array([0, 3, 1, 2], np.int32))],
     [f32((1, 4, 2, 3))], {}, "litert"),
    ("quantize_f32_to_s8", "QUANTIZE", [f32((2, 8))], [i8((2, 8), 0.02, 5)], {}, "tflm"),
    ("quantize_s8_requantize", "QUANTIZE", [i8((2, 8), 0.05, 1)], [i8((2, 8), 0.02, 5)], {}, "tflm"),
    ("dequantize_s8", "DEQUANTIZE", [i8((2, 8), 0.05, 1)], [f32((2, 8))], {}, "tflm"),
    ("reshape_s8", "RESHAPE", [i8((1, 2, 3, 4)), const(np.array([1, 24], np.int32))], [i8((1, 24))],
     {"new_shape": [1, 24]}, "tflm"),
    ("squeeze_f32", "SQUEEZE", [f32((1, 1, 3, 1))], [f32((3,))], {"squeeze_dims": [0, 1, 3]}, "litert"),
    ("expand_dims_f32", "EXPAND_DIMS", [f32((2, 3)), const(np.array([1], np.int32))], [f32((2, 1, 3))], {},
     "litert"),
    ("batch_matmul_f32", "BATCH_MATMUL", [f32((2, 3, 4)), f32((2, 4, 5))], [f32((2, 3, 5))], {}, "litert"),
]


def _random(spec: TensorSpec, rng: np.random.Generator) -> np.ndarray:
    if spec.dtype == "int8":
        return rng.integers(-128, 128, spec.shape).astype(np.int8)
    return rng.standard_normal(spec.shape).astype(np.float32)


def assert_same(expected: np.ndarray, actual: np.ndarray, what: str = "") -> None:
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, what
    if expected.dtype == np.float32:
        scale = max(float(np.abs(expected).max()), 1e-30)
        assert float(np.abs(actual - expected).max()) <= RTOL * scale, what
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def compare(model: bytes, g: Graph, reference: str, feeds: list[np.ndarray]) -> None:
    expected = (run_tflm if reference == "tflm" else run_litert)(model, *feeds)
    got = run_graph(g, dict(zip(g.inputs, feeds)))
    for name, want in zip(g.outputs, expected):
        assert_same(want, got[name], name)


@pytest.mark.parametrize("label, op, inputs, outputs, options, reference", CASES, ids=[c[0] for c in CASES])
def test_single_op_matches_reference(label, op, inputs, outputs, options, reference):
    model = single_op_model(op, inputs, outputs, options)
    g = load_bytes(model)
    assert len(g.nodes) == 1 and g.nodes[0].origin == (g.nodes[0].name,) == ("out0",)
    rng = np.random.default_rng(7)
    for _ in range(10):
        compare(model, g, reference, [_random(s, rng) for s in inputs if s is not None and s.data is None])


def test_sub_s8_matches_tflm_on_known_hard_inputs():
    # Scales whose rescale factors differ in float32 and double: TFLM uses double.
    model = single_op_model("SUB", [i8((1, 3), 0.1, 2), i8((1, 3), 0.07, -5)], [i8((1, 3), 0.2, -1)])
    compare(model, load_bytes(model), "tflm", [np.array([[90, -82, -18]], np.int8),
                                               np.array([[125, 125, 125]], np.int8)])


def _node(op, inputs, outputs, options=None):
    (node,) = load_bytes(single_op_model(op, inputs, outputs, options)).nodes
    return node


def test_same_padding_puts_odd_pixel_bottom_right():
    w = const(np.ones((2, 3, 3, 1), np.float32))
    node = _node("CONV_2D", [f32((1, 8, 8, 1)), w, None], [f32((1, 4, 4, 2))], _conv_opts(stride=2))
    assert node.attrs == {"strides": (2, 2), "dilations": (1, 1), "pads": (0, 0, 1, 1), "activation": "none"}
    assert node.inputs[2] == ""  # absent bias
    node = _node("CONV_2D", [f32((1, 7, 7, 1)), w, None], [f32((1, 7, 7, 2))], _conv_opts(dilation=2))
    assert node.attrs["pads"] == (2, 2, 2, 2) and node.attrs["dilations"] == (2, 2)
    node = _node("MAX_POOL_2D", [f32((1, 6, 5, 1))], [f32((1, 3, 3, 1))], _pool_opts(stride=2, size=2))
    assert node.attrs == {"kernel": (2, 2), "strides": (2, 2), "pads": (0, 0, 0, 1), "activation": "none"}


def test_activations_and_clip_bounds():
    node = _node("ADD", [f32((2,)), f32((2,))], [f32((2,))], {"fused_activation_function": "RELU_N1_TO_1"})
    assert node.attrs == {"activation": "relu_n1_to_1"}
    for op, bounds in (("RELU", (0.0, math.inf)), ("RELU6", (0.0, 6.0)), ("RELU_N1_TO_1", (-1.0, 1.0))):
        node = _node(op, [f32((3,))], [f32((3,))])
        assert (node.op, node.attrs["min"], node.attrs["max"]) == ("Clip", *bounds)


def test_pad_mean_transpose_concat_attributes():
    node = _node("PAD", [f32((1, 3, 3, 2)), const(_PADS)], [f32((1, 6, 6, 2))])
    assert node.attrs == {"pads": (0, 1, 2, 0, 0, 2, 1, 0), "value": 0.0}
    node = _node("PADV2", [i8((1, 3, 3, 2)), const(_PADS), const(np.array([7]), "int8", scale=0.05, zero_point=-3)],
                 [i8((1, 6, 6, 2))])
    assert node.attrs["value"] == pytest.approx(0.05 * (7 + 3))
    node = _node("MEAN", [f32((1, 5, 6, 3)), const(np.array([-2, 1, 1], np.int32))], [f32((1, 3))])
    assert node.attrs == {"axes": (1, 2), "keepdims": False}
    node = _node("TRANSPOSE", [f32((2, 3, 4)), const(np.array([-1, 0, 1], np.int32))], [f32((4, 2, 3))])
    assert node.attrs == {"perm": (2, 0, 1)}
    node = _node("CONCATENATION", [f32((2, 3)), f32((2, 1))], [f32((2, 4))], {"axis": -1})
    assert (node.op, node.attrs) == ("Concat", {"axis": 1})
    node = _node("SOFTMAX", [f32((2, 3))], [f32((2, 3))], {"beta": 0.25})
    assert node.attrs == {"axis": -1, "beta": 0.25, "any_output_quant": False}


def test_quantization_is_carried_onto_values():
    g = load_bytes(single_op_model(*CASES[0][1:5]))
    conv = g.nodes[0]
    w, b = (g.values[n] for n in conv.inputs[1:])
    assert w.quant.axis == 0 and w.quant.scale == pytest.approx(tuple(_WS), rel=1e-6)
    assert b.dtype == "int32" and b.quant.zero_point == (0,) * 6
    np.testing.assert_array_equal(w.data, _W)
    out = g.values[conv.outputs[0]]
    assert out.quant.scale == pytest.approx((0.1,)) and out.quant.zero_point == (2,)
    g = load_bytes(single_op_model(*CASES[4][1:5]))
    assert g.values[g.nodes[0].inputs[1]].quant.axis == 3


def test_missing_options_take_schema_defaults():
    # A SOFTMAX stored without its options table: beta defaults to 0.0 in the schema.
    node = _node("SOFTMAX", [f32((2, 3))], [f32((2, 3))], {"_table": None})
    assert node.attrs["beta"] == 0.0


def test_dequantize_of_constants_is_folded():
    w = ModelWriter()
    x = w.tensor(f32((2, 4), name="x"))
    h = w.tensor(const(RNG.standard_normal((2, 4)).astype(np.float16), "float16", name="half"))
    q = w.tensor(const(np.array([[-4, 0, 3, 127]] * 2, np.int8), "int8", scale=[0.5, 0.25], quantized_dimension=0,
                       name="q"))
    hf, qf, s, y = (w.tensor(f32((2, 4), name=n)) for n in ("half_f32", "q_f32", "sum", "y"))
    w.op("DEQUANTIZE", [h], [hf])
    w.op("DEQUANTIZE", [q], [qf])
    w.op("ADD", [x, hf], [s])
    w.op("ADD", [s, qf], [y])
    model = w.build([x], [y])
    g = load_bytes(model)
    assert [n.op for n in g.nodes] == ["Add", "Add"]
    np.testing.assert_array_equal(g.values["q_f32"].data, [[-2, 0, 1.5, 63.5], [-1, 0, 0.75, 31.75]])
    compare(model, g, "litert", [RNG.standard_normal((2, 4)).astype(np.float32)])


def test_hybrid_weights_are_dequantized_for_float_ops():
    """A hybrid FULLY_CONNECTED with a scale per row reads its int8 weights dequantized once;
    with one scale it keeps them int8 (a HybridConv2D: tests/ops/test_hybrid_fully_connected.py)."""
    scales = np.linspace(0.005, 0.01, 5)
    fw = const(_FW, "int8", scale=list(scales), zero_point=[0] * 5)
    g = load_bytes(single_op_model("FULLY_CONNECTED", [f32((2, 12)), fw, None], [f32((2, 5))]))
    w = g.values[g.nodes[0].inputs[1]]
    assert w.dtype == "float32"
    np.testing.assert_allclose(w.data, _FW * scales.astype(np.float32)[:, None], rtol=1e-6)
    g = load_bytes(single_op_model("FULLY_CONNECTED", [f32((2, 12)), const(_FW, "int8", scale=0.01), None],
                                   [f32((2, 5))]))
    (conv,) = [n for n in g.nodes if n.op == "HybridConv2D"]
    assert g.values[conv.inputs[1]].dtype == "int8"


def test_writer_models_run_in_tflm_with_multiple_ops():
    """A three-operator int8 model written by tflite_models: conv -> max pool -> fc."""
    w = ModelWriter()
    x = w.tensor(i8((1, 6, 6, 4), name="x"))
    c = w.tensor(i8((1, 6, 6, 6), 0.1, 2, name="conv"))
    p = w.tensor(i8((1, 3, 3, 6), 0.1, 2, name="pool"))
    y = w.tensor(i8((1, 5), 0.2, 0, name="y"))
    wt = w.tensor(const(_W, "int8", scale=list(_WS)))
    b = w.tensor(const(_B, "int32", scale=list(_WS * 0.05)))
    fw = w.tensor(const(RNG.integers(-127, 128, (5, 54)).astype(np.int8), "int8", scale=0.01))
    w.op("CONV_2D", [x, wt, b], [c], _conv_opts(act="RELU"))
    w.op("MAX_POOL_2D", [c], [p], _pool_opts("VALID", 2, 2))
    w.op("FULLY_CONNECTED", [p, fw, None], [y])
    model = w.build([x], [y])
    g = load_bytes(model)
    assert [n.op for n in g.nodes] == ["Conv2D", "MaxPool2D", "FullyConnected"]
    assert [n.name for n in g.nodes] == ["conv", "pool", "y"]
    rng = np.random.default_rng(3)
    for _ in range(3):
        compare(model, g, "tflm", [rng.integers(-128, 128, (1, 6, 6, 4)).astype(np.int8)])


def test_external_buffers_read_like_inline_ones():
    """Constant data placed after the flatbuffer (offset/size fields, as in >2 GB models)."""
    w = ModelWriter()
    x = w.tensor(f32((2, 12), name="x"))
    y = w.tensor(f32((2, 5), name="y"))
    wt = w.tensor(const(RNG.standard_normal((5, 12)).astype(np.float32), name="w"))
    b = w.tensor(const(RNG.standard_normal(5).astype(np.float32), name="b"))
    w.op("FULLY_CONNECTED", [x, wt, b], [y])
    inline, external = load_bytes(w.build([x], [y])), load_bytes(w.build([x], [y], external_buffers=True))
    for name in ("w", "b"):
        np.testing.assert_array_equal(external.values[name].data, inline.values[name].data)
