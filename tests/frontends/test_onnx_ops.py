"""Each converter's attribute and opset variants, one small model each, against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

import onnx_models as om
from codegen.frontends.onnx import load
from codegen.ir import run_graph

R = np.random.default_rng(7)


def w(*shape):
    return (R.standard_normal(shape) * 0.5).astype(np.float32)


def i64(*values):
    return np.array(values, np.int64)


def f32(value):
    return np.array(value, np.float32)


# (id, op, input shape, extra inputs as {name: data} in order ('' = absent), attributes, opset)
CASES = [
    ("softmax13_axis1", "Softmax", (2, 3, 4), {}, {"axis": 1}, 13),
    ("softmax11_last", "Softmax", (2, 3, 4), {}, {"axis": -1}, 11),
    ("softmax11_axis0", "Softmax", (2, 3, 4), {}, {"axis": 0}, 11),
    ("flatten_axis0", "Flatten", (2, 3, 4), {}, {"axis": 0}, 13),
    ("flatten_neg", "Flatten", (2, 3, 4), {}, {"axis": -1}, 13),
    ("flatten_end", "Flatten", (2, 3, 4), {}, {"axis": 3}, 13),
    ("reshape_zero_copy", "Reshape", (2, 3, 4), {"s": i64(0, 0, 2, 2)}, {}, 13),
    ("reshape_allowzero", "Reshape", (2, 3, 4), {"s": i64(4, 3, 2)}, {"allowzero": 1}, 14),
    ("squeeze_all", "Squeeze", (1, 3, 1, 4), {}, {}, 13),
    ("squeeze_neg11", "Squeeze", (1, 3, 1, 4), {}, {"axes": [-2]}, 11),
    ("unsqueeze_neg", "Unsqueeze", (3, 4), {"a": i64(-1, 1)}, {}, 13),
    ("transpose_default", "Transpose", (2, 3, 4), {}, {}, 13),
    ("pad11_no_value", "Pad", (1, 2, 3, 3), {"p": i64(0, 0, 1, 2, 0, 1, 0, 1)}, {}, 11),
    ("pad18_axes", "Pad", (1, 2, 3, 3), {"p": i64(1, 2, 0, 1), "v": f32(1.5), "a": i64(-2, 3)}, {}, 18),
    ("pad_zero", "Pad", (1, 2, 3, 3), {"p": i64(0, 0, 0, 0, 0, 0, 0, 0)}, {}, 13),
    ("clip11_max_only", "Clip", (2, 5), {"": None, "hi": f32(0.3)}, {}, 11),
    ("clip7_defaults", "Clip", (2, 5), {}, {}, 7),
    ("sub_const_first", "Sub", None, {"c": w(5), "x": None}, {}, 13),
    ("mul_broadcast", "Mul", (2, 3, 5), {"c": w(3, 1)}, {}, 13),
    ("div_const", "Div", (2, 5), {"c": f32([1, 2, -4, 0.5, 3])}, {}, 13),
    ("gemm_c_row", "Gemm", (3, 4), {"b": w(4, 5), "c": w(1, 5)}, {"beta": 0.5}, 13),
    ("gemm_c_scalar", "Gemm", (3, 4), {"b": w(5, 4), "c": f32(0.7)}, {"transB": 1}, 13),
    ("gemm_no_c", "Gemm", (3, 4), {"b": w(4, 5)}, {"alpha": 2.0}, 13),
    ("gemm_beta0", "Gemm", (3, 4), {"b": w(4, 5), "c": w(3, 5)}, {"beta": 0.0}, 13),
    ("gemm_transA", "Gemm", (4, 3), {"b": w(4, 5), "c": w(5)}, {"transA": 1}, 7),
    ("gemm_col_c", "Gemm", (3, 4), {"b": w(4, 5), "c": w(3, 1)}, {}, 13),
    ("matmul_1d", "MatMul", (4,), {"b": w(4, 3)}, {}, 13),
    ("matmul_batched_const", "MatMul", (2, 3, 4), {"b": w(2, 4, 3)}, {}, 13),
    ("conv1d_same", "Conv", (1, 2, 9), {"w": w(3, 2, 4), "b": w(3)}, {"auto_pad": "SAME_UPPER", "strides": [2]}, 13),
    ("conv_valid_dilated", "Conv", (1, 3, 9, 9), {"w": w(4, 3, 3, 3)}, {"auto_pad": "VALID", "dilations": [2, 1]}, 13),
    ("conv_asym_pads", "Conv", (1, 3, 6, 7), {"w": w(2, 3, 2, 3)}, {"pads": [0, 1, 2, 1], "strides": [1, 2]}, 11),
    ("conv_1_channel_group1", "Conv", (1, 1, 5, 5), {"w": w(3, 1, 3, 3)}, {"group": 1}, 13),
    ("avgpool_same_lower", "AveragePool", (1, 2, 7, 7), {}, {"kernel_shape": [3, 2], "auto_pad": "SAME_LOWER",
                                                             "strides": [2, 2]}, 13),
    ("maxpool_pads", "MaxPool", (1, 2, 7, 7), {}, {"kernel_shape": [3, 3], "pads": [1, 0, 1, 2]}, 12),
    ("avgpool7", "AveragePool", (1, 2, 6, 6), {}, {"kernel_shape": [2, 2], "strides": [2, 2]}, 7),
    ("gap_1d", "GlobalAveragePool", (1, 3, 7), {}, {}, 13),
    ("gmp", "GlobalMaxPool", (1, 3, 4, 5), {}, {}, 13),
    ("bn7_spatial", "BatchNormalization", (2, 3, 4),
     {"s": f32([1, 2, 3]), "b": f32([0, 1, -1]), "m": f32([0.1, 0.2, 0.3]), "v": f32([1, 2, 0.5])},
     {"spatial": 1, "epsilon": 1e-4}, 7),
    ("identity", "Identity", (2, 3), {}, {}, 13),
    ("dropout12", "Dropout", (2, 3), {}, {}, 12),
    ("concat_const", "Concat", (2, 3), {"c": w(2, 2)}, {"axis": 1}, 13),
    ("tanh", "Tanh", (2, 3), {}, {}, 6 + 7),
    ("conv_transpose_3d", "ConvTranspose", (1, 2, 3, 4, 3), {"w": w(2, 3, 2, 3, 2), "b": w(3)},
     {"strides": [2, 1, 2], "pads": [1, 0, 0, 0, 1, 1], "output_padding": [1, 0, 0]}, 13),
    ("conv_transpose_3d_groups_dilated", "ConvTranspose", (2, 4, 2, 3, 3), {"w": w(4, 1, 2, 2, 3)},
     {"group": 2, "dilations": [1, 2, 1], "strides": [1, 1, 2]}, 13),
]


def case_model(op, shape, extra, attrs, opset):
    b = om.ModelBuilder("case", opset)
    names = []
    if shape is not None:
        names.append(b.input("x", shape))
    for name, data in extra.items():
        if name == "x":
            names.append(b.input("x", (2, 5)))
        elif data is None:
            names.append("")
        else:
            names.append(b.init(name, data))
    b.nodes.append(helper.make_node(op, names, ["y"], name="n", **attrs))
    return b.output("y").model()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_onnxruntime(case, tmp_path):
    _, op, shape, extra, attrs, opset = case
    model = case_model(op, shape, extra, attrs, opset)
    onnx.save(model, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    assert g.outputs == ["y"]
    assert all(n.origin == ("n",) for n in g.nodes)
    for seed in (0, 1):
        feeds = om.random_feeds(model, seed)
        exp = om.ort_outputs(model, feeds)["y"]
        got = run_graph(g, feeds)["y"]
        assert got.shape == exp.shape
        assert om.max_rel_error(got, exp) <= 1e-5


def test_conv_transpose_3d_in_c(tmp_path):
    from helpers import run_c

    case = next(c for c in CASES if c[0] == "conv_transpose_3d_groups_dilated")
    model = case_model(*case[1:])
    onnx.save(model, tmp_path / "m.onnx")
    feeds = om.random_feeds(model, 3)
    got = run_c(load(tmp_path / "m.onnx", {}), [feeds])[0]["y"]
    assert om.max_rel_error(got, om.ort_outputs(model, feeds)["y"]) <= 1e-5
