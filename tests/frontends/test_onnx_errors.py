"""Bad ONNX input gives one KilnError line naming the node (or tensor), never a Python crash."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnx_models as om
from codegen.errors import KilnError
from codegen.frontends import load_model
from codegen.frontends.onnx import load


def load_proto(model: onnx.ModelProto, tmp_path, shapes=None):
    path = tmp_path / "bad.onnx"
    onnx.save(model, path)
    return load(path, shapes or {})


def expect_error(model, tmp_path, *words, shapes=None) -> KilnError:
    with pytest.raises(KilnError) as info:
        load_proto(model, tmp_path, shapes)
    msg = str(info.value)
    assert "\n" not in msg
    for word in words:
        assert word in msg, msg
    return info.value


def one_node(op: str, inputs=("x",), shape=(1, 4, 6, 6), inits=None, opset=13, out_shape=None, **attrs):
    """A model of one node named 'n' reading graph input x of `shape`."""
    b = om.ModelBuilder("one", opset)
    b.input("x", shape)
    for name, data in (inits or {}).items():
        b.init(name, data)
    b.nodes.append(helper.make_node(op, list(inputs), ["y"], name="n", **attrs))
    return b.output("y", out_shape).model()


@pytest.mark.parametrize("data,words", [
    (b"this is not a model at all", ["not a valid ONNX model", "does not parse"]),
    (b"", ["not a valid ONNX model"]),
])
def test_not_a_model(tmp_path, data, words):
    path = tmp_path / "junk.onnx"
    path.write_bytes(data)
    with pytest.raises(KilnError) as info:
        load_model(path)
    assert str(path) in str(info.value)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("fraction", [0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_truncated_file(tmp_path, fraction):
    data = om.cnn().SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[:int(len(data) * fraction)])
    with pytest.raises(KilnError):
        load(path, {})


def test_missing_file(tmp_path):
    with pytest.raises(KilnError, match="cannot read model"):
        load_model(tmp_path / "absent.onnx")


def test_dangling_input_names_node_and_tensor(tmp_path):
    model = one_node("Add", inputs=("x", "ghost"))
    err = expect_error(model, tmp_path, "'ghost'", "not a graph input")
    assert err.node == "n"


def test_cycle(tmp_path):
    b = om.ModelBuilder("cyc")
    b.input("x", [1, 4])
    b.nodes += [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
                helper.make_node("Relu", ["a"], ["b"], name="second")]
    expect_error(b.output("b").model(), tmp_path, "cycle")


def test_tensor_defined_twice(tmp_path):
    b = om.ModelBuilder("dup")
    b.input("x", [1, 4])
    b.nodes += [helper.make_node("Relu", ["x"], ["a"], name="r1"),
                helper.make_node("Sigmoid", ["x"], ["a"], name="r2")]
    expect_error(b.output("a").model(), tmp_path, "'a'", "more than once", "r2")


def test_output_never_computed(tmp_path):
    model = one_node("Relu")
    model.graph.output.append(helper.make_tensor_value_info("nowhere", TensorProto.FLOAT, None))
    expect_error(model, tmp_path, "'nowhere'", "computed by no node")


def test_string_input(tmp_path):
    b = om.ModelBuilder("strings")
    b.input("x", [1, 4], TensorProto.STRING)
    b.nodes.append(helper.make_node("Identity", ["x"], ["y"], name="n"))
    expect_error(b.output("y").model(), tmp_path, "'x'", "string", "float32")


def test_opset_before_7_with_changed_op_is_refused(tmp_path):
    model = one_node("Add", inputs=("x", "x"))  # Add took a `broadcast` attribute before opset 7
    model.opset_import[0].version = 6
    expect_error(model, tmp_path, "opset 6", "Add", "changed")


def test_opset_before_7_with_unchanged_ops_compiles(tmp_path):
    """Not and Relu read the same at opset 1/6 as at opset 7: such a model compiles as opset 7."""
    model = one_node("Relu")
    model.opset_import[0].version = 6
    assert [n.op for n in load_proto(model, tmp_path).nodes] == ["Clip"]  # Kiln's form of Relu


def test_declared_output_shape_must_agree(tmp_path):
    expect_error(one_node("Relu", out_shape=[1, 4, 6, 7]), tmp_path, "'y'", "declared [1,4,6,7]")


W3 = np.ones((4, 2, 3, 3), np.float32)


@pytest.mark.parametrize("op,kwargs,words", [
    ("Conv", dict(inputs=("x", "w"), inits={"w": W3}, group=3), ["do not fit 4 input channels, group=3"]),
    ("Conv", dict(inputs=("x", "x")), ["weights (input 1) must be a float32 constant"]),
    ("Conv", dict(inputs=("x", "w"), inits={"w": np.ones((4, 4, 3, 3), np.float32)}, auto_pad="WRONG"),
     ["auto_pad 'WRONG'"]),
    ("Conv", dict(inputs=("x", "w"), inits={"w": np.ones((4, 4, 3, 3), np.float32)}, strides=[0, 1]),
     ["'strides'"]),
    ("Conv", dict(inputs=("x", "w"), inits={"w": np.ones((4, 4, 3, 3), np.float32)}, kernel_shape=[2, 2]),
     ["kernel_shape [2, 2]"]),
    ("Conv", dict(inputs=("x", "w"), shape=(1, 4, 3, 3, 3), inits={"w": np.ones((4, 4, 1, 1, 1), np.float32)}),
     ["rank 3 or 4"]),
    ("LpPool", dict(kernel_shape=[2, 2, 2, 2], shape=(1, 1, 3, 3, 3, 3)), ["rank 3 or 4"]),
    ("MaxPool", dict(kernel_shape=[2, 2], dilations=[2, 0]), ["dilations must be positive"]),
    ("MaxPool", dict(), ["kernel_shape"]),
    ("AveragePool", dict(kernel_shape=[3, 3], dilations=[4, 4]), ["window of 9 does not fit"]),
    ("Concat", dict(inputs=("x", "x"), axis=4), ["axis 4", "rank 4"]),
    ("Transpose", dict(perm=[0, 1, 1, 2]), ["perm [0, 1, 1, 2]"]),
    ("Softmax", dict(axis=-5), ["axis -5"]),
    ("Squeeze", dict(inputs=("x", "a"), inits={"a": np.array([1], np.int64)}), ["squeeze axis 1 of size 4"]),
    ("Reshape", dict(inputs=("x", "x")), ["shape (input 1, 'x') must be a constant"]),
    ("Reshape", dict(inputs=("x", "s"), inits={"s": np.array([5, -1], np.int64)}), ["cannot reshape"]),
    ("Reshape", dict(inputs=("x", "s"), inits={"s": np.array([-1, -1], np.int64)}), ["more than one -1"]),
    ("Pad", dict(inputs=("x", "p"), inits={"p": np.zeros(8, np.int64)}, mode="symmetric"), ["mode 'symmetric'"]),
    ("Pad", dict(inputs=("x", "p"), inits={"p": np.zeros(6, np.int64)}), ["pads has 6 entries"]),
    ("Clip", dict(inputs=("x", "x")), ["min (input 1, 'x') must be a constant"]),
    ("Div", dict(inputs=("x", "c"), inits={"c": np.ones(4, np.int64)}), ["Div of float32 and int64"]),
    ("BatchNormalization", dict(inputs=("x", "s", "s", "s", "x"), inits={"s": np.ones(4, np.float32)},
                                opset=15, training_mode=1), ["must be a constant"]),
    ("QuantizeLinear", dict(inputs=("x", "s"), inits={"s": np.array(0.1, np.float32)}, opset=21,
                            output_dtype=TensorProto.STRING), ["quantization to string"]),
    ("QuantizeLinear", dict(inputs=("x", "x"), opset=21, block_size=2), ["blocked", "constant scale"]),
])
def test_bad_attributes_and_inputs(tmp_path, op, kwargs, words):
    err = expect_error(one_node(op, **kwargs), tmp_path, *words)
    assert err.node == "n"


def test_unused_extra_outputs_are_fine_but_used_ones_are_refused(tmp_path):
    b = om.ModelBuilder("bn", 14)
    b.input("x", [1, 2, 4, 4])
    for name in "sbmv":
        b.init(name, np.ones(2, np.float32))
    b.nodes.append(helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "mean"], name="n"))
    ok = b.output("y").model()
    assert load_proto(ok, tmp_path).outputs == ["y"]
    ok.graph.output.append(helper.make_tensor_value_info("mean", TensorProto.FLOAT, None))
    expect_error(ok, tmp_path, "output 'mean'", "not supported")


def test_constant_folding_error_is_a_kiln_error(tmp_path):
    b = om.ModelBuilder("fold")
    b.input("x", [1, 4])
    b.init("a", np.ones((2, 3), np.float32))
    b.init("c", np.ones((4, 5), np.float32))
    b.nodes += [helper.make_node("MatMul", ["a", "c"], ["m"], name="bad_fold"),
                helper.make_node("Add", ["x", "m"], ["y"], name="n")]
    expect_error(b.output("y").model(), tmp_path, "bad_fold", "cannot compute")
