"""The converters of the coverage ops on their ONNX variants (opsets, attribute forms, optional
inputs and outputs) that the backend node tests leave out: each small model imported by Kiln
and run by the numpy interpreter against onnxruntime (ONNX's reference where onnxruntime
lacks the variant)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from codegen.errors import KilnError
from codegen.frontends.onnx.convert import build_graph
from codegen.frontends.onnx.reader import parse_model
from codegen.ir import run_graph
from onnx_models import ir_version_for

R = np.random.default_rng(3)


def f32(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def i64(*values):
    return np.array(values, np.int64)


# (id, opset, inputs {name: shape} (float32), initializers, nodes [(op, inputs, outputs, attrs)], outputs)
CASES = [
    ("div_by_power_of_two_is_a_mul", 13, {"x": (2, 3)}, {"c": np.float32([2, 0.5, -4])},
     [("Div", ["x", "c"], ["y"], {})], ["y"]),
    ("div_by_other_constants", 13, {"x": (2, 3)}, {"c": np.float32([3, 7, -1.5])}, [("Div", ["x", "c"], ["y"], {})], ["y"]),
    ("pow_integer_exponent", 13, {"x": (2, 3)}, {"e": np.array(3, np.int64)}, [("Pow", ["x", "e"], ["y"], {})], ["y"]),
    ("max_of_three", 13, {"x": (2, 3), "z": (3,)}, {"c": f32(2, 1)}, [("Max", ["x", "z", "c"], ["y"], {})], ["y"]),
    ("mean_of_three", 13, {"x": (2, 3), "z": (2, 3)}, {"c": f32(3)}, [("Mean", ["x", "z", "c"], ["y"], {})], ["y"]),
    ("cast_to_int_and_back", 13, {"x": (2, 5)}, {},
     [("Cast", ["x"], ["i"], {"to": TensorProto.INT32}), ("Cast", ["i"], ["y"], {"to": TensorProto.FLOAT})], ["y"]),
    ("castlike_same_type_is_a_view", 15, {"x": (2, 5)}, {"t": np.float32(0)}, [("CastLike", ["x", "t"], ["y"], {})],
     ["y"]),
    ("comparison_where", 16, {"x": (2, 5), "z": (5,)}, {},
     [("Greater", ["x", "z"], ["m"], {}), ("Where", ["m", "x", "z"], ["y"], {})], ["y"]),
    ("slice_opset9_attributes", 9, {"x": (4, 6)}, {},
     [("Slice", ["x"], ["y"], {"starts": [1, -4], "ends": [3, 100], "axes": [0, 1]})], ["y"]),
    ("slice_negative_steps", 13, {"x": (4, 6)}, {"s": i64(-1, 5), "e": i64(-100, 0), "a": i64(0, 1), "t": i64(-1, -2)},
     [("Slice", ["x", "s", "e", "a", "t"], ["y"], {})], ["y"]),
    ("split_num_outputs_uneven", 18, {"x": (2, 7)}, {},
     [("Split", ["x"], ["a", "b", "c"], {"axis": 1, "num_outputs": 3})], ["a", "b", "c"]),
    ("split_opset11_attribute", 11, {"x": (6, 2)}, {}, [("Split", ["x"], ["a", "b"], {"split": [2, 4]})], ["a", "b"]),
    ("pad_reflect_and_crop", 13, {"x": (1, 2, 5, 5)}, {"p": i64(0, 0, 2, -1, 0, 0, -1, 2)},
     [("Pad", ["x", "p"], ["y"], {"mode": "reflect"})], ["y"]),
    ("pad_edge", 13, {"x": (2, 4)}, {"p": i64(1, 2, 0, 3)}, [("Pad", ["x", "p"], ["y"], {"mode": "edge"})], ["y"]),
    ("depth_to_space_crd", 13, {"x": (1, 8, 2, 3)}, {}, [("DepthToSpace", ["x"], ["y"], {"blocksize": 2, "mode": "CRD"})],
     ["y"]),
    ("resize_opset10_scales", 10, {"x": (1, 2, 3, 4)}, {"s": np.float32([1, 1, 2, 1.5])},
     [("Resize", ["x", "s"], ["y"], {"mode": "linear"})], ["y"]),
    ("resize_opset13_sizes_cubic", 13, {"x": (1, 1, 4, 5)}, {"r": np.zeros(0, np.float32), "s": np.zeros(0, np.float32),
                                                             "z": i64(1, 1, 7, 3)},
     [("Resize", ["x", "r", "s", "z"], ["y"], {"mode": "cubic"})], ["y"]),
    ("upsample_opset9", 9, {"x": (1, 2, 2, 3)}, {"s": np.float32([1, 1, 2, 3])},
     [("Upsample", ["x", "s"], ["y"], {"mode": "nearest"})], ["y"]),
    ("grouped_conv_1d", 13, {"x": (1, 6, 9)}, {"w": f32(4, 3, 3), "b": f32(4)},
     [("Conv", ["x", "w", "b"], ["y"], {"group": 2, "pads": [1, 0]})], ["y"]),
    ("conv_transpose_same_lower", 13, {"x": (1, 2, 3, 3)}, {"w": f32(2, 3, 3, 3)},
     [("ConvTranspose", ["x", "w"], ["y"], {"strides": [2, 2], "auto_pad": "SAME_LOWER"})], ["y"]),
    ("layer_norm_with_statistics", 17, {"x": (2, 3, 4)}, {"s": f32(3, 4), "b": f32(4)},
     [("LayerNormalization", ["x", "s", "b"], ["y", "m", "r"], {"axis": 1})], ["y", "m", "r"]),
    ("instance_norm", 13, {"x": (2, 3, 4, 5)}, {"s": f32(3), "b": f32(3)},
     [("InstanceNormalization", ["x", "s", "b"], ["y"], {"epsilon": 1e-3})], ["y"]),
    ("lstm_batch_first_with_state", 14, {"x": (2, 4, 3), "h": (2, 1, 5), "c": (2, 1, 5)},
     {"w": f32(1, 20, 3, scale=0.5), "r": f32(1, 20, 5, scale=0.5), "b": f32(1, 40, scale=0.5)},
     [("LSTM", ["x", "w", "r", "b", "", "h", "c"], ["y", "yh", "yc"], {"hidden_size": 5, "layout": 1})],
     ["y", "yh", "yc"]),
    ("gru_reverse", 14, {"x": (3, 2, 4)}, {"w": f32(1, 9, 4, scale=0.5), "r": f32(1, 9, 3, scale=0.5)},
     [("GRU", ["x", "w", "r"], ["y", "yh"], {"hidden_size": 3, "direction": "reverse"})], ["y", "yh"]),
    ("reduce_log_sum_exp_drop_dims", 13, {"x": (2, 3, 4)}, {},
     [("ReduceLogSumExp", ["x"], ["y"], {"axes": [0, 2], "keepdims": 0})], ["y"]),
    ("reduce_sum_noop_empty_axes", 13, {"x": (2, 3)}, {"a": np.zeros(0, np.int64)},
     [("ReduceSum", ["x", "a"], ["y"], {"noop_with_empty_axes": 1})], ["y"]),
    ("log_softmax_opset11_flattens", 11, {"x": (2, 3, 4)}, {}, [("LogSoftmax", ["x"], ["y"], {"axis": 1})], ["y"]),
    ("hardmax_last_axis", 13, {"x": (3, 5)}, {}, [("Hardmax", ["x"], ["y"], {})], ["y"]),
    ("topk_opset9_attribute", 9, {"x": (2, 6)}, {}, [("TopK", ["x"], ["v", "i"], {"k": 3})], ["v", "i"]),
    ("cumsum_reverse_exclusive", 14, {"x": (2, 5)}, {"a": np.array(1, np.int64)},
     [("CumSum", ["x", "a"], ["y"], {"reverse": 1, "exclusive": 1})], ["y"]),
    ("gather_elements_constant", 13, {"x": (3, 4)}, {"i": np.array([[0, 3], [2, -1], [1, 1]], np.int64)},
     [("GatherElements", ["x", "i"], ["y"], {"axis": 1})], ["y"]),
    ("trilu_lower_k1", 14, {"x": (4, 5)}, {"k": np.array(1, np.int64)}, [("Trilu", ["x", "k"], ["y"], {"upper": 0})],
     ["y"]),
    ("scatternd_rows", 13, {"x": (4, 3), "u": (2, 3)}, {"i": np.array([[3], [0]], np.int64)},
     [("ScatterND", ["x", "i", "u"], ["y"], {})], ["y"]),
    ("dropout_mask_is_all_true", 13, {"x": (2, 3)}, {},
     [("Dropout", ["x"], ["d", "mask"], {}), ("Cast", ["mask"], ["m"], {"to": TensorProto.FLOAT}),
      ("Mul", ["d", "m"], ["y"], {})], ["y"]),
    ("max_pool_ceil_mode", 13, {"x": (1, 2, 6, 7)}, {},
     [("MaxPool", ["x"], ["y"], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1})], ["y"]),
    ("avg_pool_count_include_pad", 13, {"x": (1, 2, 5, 5)}, {},
     [("AveragePool", ["x"], ["y"], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1})],
     ["y"]),
    ("global_lp_pool", 13, {"x": (1, 3, 4, 5)}, {}, [("GlobalLpPool", ["x"], ["y"], {"p": 3})], ["y"]),
    ("gelu_tanh", 20, {"x": (2, 8)}, {}, [("Gelu", ["x"], ["y"], {"approximate": "tanh"})], ["y"]),
    ("attention_4d_float_mask", 23, {"q": (1, 2, 3, 4), "k": (1, 2, 5, 4), "v": (1, 2, 5, 6)}, {"m": f32(3, 5)},
     [("Attention", ["q", "k", "v", "m"], ["y"], {})], ["y"]),
]


# onnxruntime 1.32 refuses batch-first (layout=1) recurrent layers.
REFERENCE_ONLY = {"lstm_batch_first_with_state"}


def build(case) -> onnx.ModelProto:
    _, opset, inputs, inits, nodes, outputs = case
    graph = helper.make_graph(
        [helper.make_node(op, ins, outs, name=f"n{k}", **attrs) for k, (op, ins, outs, attrs) in enumerate(nodes)],
        "case", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()], [],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version_for(min(opset, 21))
    inferred = onnx.shape_inference.infer_shapes(model).graph.value_info
    types = {vi.name: vi.type.tensor_type.elem_type for vi in inferred}
    model.graph.output.extend(helper.make_tensor_value_info(o, types.get(o, TensorProto.FLOAT), None) for o in outputs)
    return model


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_converter_matches_onnxruntime(case):
    model = build(case)
    g = build_graph(parse_model(model), {})
    feeds = {n: f32(*s) for n, s in case[2].items()}
    if case[0] in REFERENCE_ONLY:
        from onnx.reference import ReferenceEvaluator

        want = ReferenceEvaluator(model).run(None, feeds)
    else:
        want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = run_graph(g, feeds)
    for name, w in zip(case[5], want):
        assert got[name].shape == w.shape, name
        if np.issubdtype(w.dtype, np.floating):
            np.testing.assert_allclose(got[name], w, rtol=0, atol=1e-5 * max(float(np.abs(w).max()), 1e-30), err_msg=name)
        else:
            np.testing.assert_array_equal(got[name], w, err_msg=name)


@pytest.mark.parametrize("op,ins,attrs,inits,words", [
    ("Mod", ["x", "x"], {"fmod": 0}, {}, None),
    ("Conv", ["x", "w"], {"group": 3}, {"w": f32(4, 2, 1, 1)}, "do not fit"),
    ("LSTM", ["x", "w", "r"], {"hidden_size": 2, "activations": ["Relu", "Tanh", "Tanh"]},
     {"w": f32(1, 8, 4), "r": f32(1, 8, 2)}, "activations"),
    ("Resize", ["x", "", "s", "z"], {}, {"s": np.float32([1, 1, 2, 2]), "z": i64(1, 4, 6, 6)}, "exactly one of"),
    ("ScatterND", ["x", "x", "x"], {}, {}, "must be a constant"),
    ("ScatterElements", ["x", "i", "x"], {"reduction": "sum"}, {"i": np.zeros((1, 4, 3, 3), np.int64)},
     "reduction 'sum'"),
])
def test_refusals_name_the_node(op, ins, attrs, inits, words):
    graph = helper.make_graph([helper.make_node(op, ins, ["y"], name="n", **attrs)], "bad",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 4, 3, 3))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    if words is None:  # accepted
        build_graph(parse_model(model), {})
        return
    with pytest.raises(KilnError, match=words) as info:
        build_graph(parse_model(model), {})
    assert info.value.node == "n"
