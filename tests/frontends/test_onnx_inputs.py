"""ONNX import of what surrounds the graph: dynamic input dimensions and --input-shape,
external tensor data, and scan() / unsupported operators listed all at once."""

from __future__ import annotations

import shutil

import onnx
import pytest

import onnx_models as om
from codegen.errors import KilnError, UnsupportedOpsError
from codegen.frontends import load_model, scan_model
from codegen.frontends.onnx import load, scan
from codegen.ir import run_graph


def save(model, tmp_path, name="model.onnx"):
    path = tmp_path / name
    onnx.save(model, path)
    return path


def test_dynamic_batch_defaults_to_one(tmp_path):
    path = save(om.mlp(batch="N"), tmp_path)
    g = load(path, {})
    assert g.values["x"].shape == (1, 16) and g.values["probs"].shape == (1, 10)
    g4 = load(path, {"x": (4, 16)})
    assert g4.values["probs"].shape == (4, 10)
    feeds = om.random_feeds(om.mlp(batch="N"), overrides={"x": (4, 16)})
    exp = om.ort_outputs(om.mlp(batch="N"), feeds)["probs"]
    assert om.max_rel_error(run_graph(g4, feeds)["probs"], exp) <= 1e-5


def test_dynamic_non_batch_dim_needs_input_shape(tmp_path):
    path = save(om.dynamic_seq(), tmp_path)
    with pytest.raises(KilnError) as info:
        load(path, {})
    msg = str(info.value)
    assert "tokens" in msg and "--input-shape tokens=d0,d1,d2" in msg and "dimension(s) 1" in msg
    g = load(path, {"tokens": (2, 5, 8)})
    assert g.values["y"].shape == (2, 5, 4)
    feeds = om.random_feeds(om.dynamic_seq(), overrides={"tokens": (2, 5, 8)})
    exp = om.ort_outputs(om.dynamic_seq(), feeds)["y"]
    assert om.max_rel_error(run_graph(g, feeds)["y"], exp) <= 1e-5


@pytest.mark.parametrize("shapes,words", [
    ({"nope": (1, 16)}, ["'nope'", "not a model input", "x"]),
    ({"tokens": (2, 5)}, ["tokens", "2 dimensions", "has 3"]),
    ({"tokens": (2, 5, 9)}, ["tokens", "dimension 2 is 9", "8"]),
    ({"tokens": (-1, 5, 8)}, ["tokens", "dimension 0 is -1"]),  # a 0 is real (test_onnx_empty_tensors.py)
])
def test_bad_input_shapes(tmp_path, shapes, words):
    path = save(om.dynamic_seq() if "nope" not in shapes else om.mlp(), tmp_path)
    with pytest.raises(KilnError) as info:
        load(path, shapes)
    for word in words:
        assert word in str(info.value)


def test_input_without_shape_needs_input_shape(tmp_path):
    model = om.dynamic_seq()
    model.graph.input[0].type.tensor_type.ClearField("shape")
    path = save(model, tmp_path)
    with pytest.raises(KilnError, match=r"no shape in the model.*--input-shape tokens="):
        load(path, {})
    assert load(path, {"tokens": (1, 3, 8)}).values["y"].shape == (1, 3, 4)


def test_external_data_is_read_from_the_model_folder(tmp_path):
    model = om.cnn()
    folder = tmp_path / "m"
    folder.mkdir()
    path = folder / "cnn.onnx"
    onnx.save_model(om.cnn(), path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="cnn.weights", size_threshold=0)
    assert (folder / "cnn.weights").exists()
    g = load(path, {})
    feeds = om.random_feeds(model)
    assert om.max_rel_error(run_graph(g, feeds)["logits"], om.ort_outputs(model, feeds)["logits"]) <= 1e-5
    # moved elsewhere without its data file: one clear error
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    shutil.copy(path, lonely / "cnn.onnx")
    with pytest.raises(KilnError, match="cannot read external data .cnn.weights.: No such file"):
        load(lonely / "cnn.onnx", {})
    with pytest.raises(KilnError) as info:
        load_model(lonely / "cnn.onnx")
    assert str(lonely / "cnn.onnx") in str(info.value)


def test_unsupported_ops_are_all_listed(tmp_path):
    path = save(om.unsupported(), tmp_path)
    with pytest.raises(UnsupportedOpsError) as info:
        load(path, {})
    assert info.value.unsupported == [("Bernoulli", "coin"), ("RandomUniformLike", "RandomUniformLike_2"),
                                      ("com.acme.Frob", "frob"), ("Multinomial", "draw")]
    assert "4 unsupported operator(s)" in str(info.value)


def test_scan_lists_every_node_without_raising(tmp_path):
    ops = scan(save(om.unsupported(), tmp_path))
    assert [(o.op_type, o.node, o.supported) for o in ops] == [
        ("Bernoulli", "coin", False), ("Relu", "relu0", True), ("RandomUniformLike", "RandomUniformLike_2", False),
        ("com.acme.Frob", "frob", False), ("Multinomial", "draw", False)]
    assert "com.acme" in ops[3].reason and "Multinomial" in ops[4].reason
    flat = scan_model(save(om.torch_flatten(), tmp_path, "flat.onnx"))
    by_type = {o.op_type: o for o in flat}
    assert all(o.supported for o in flat)
    assert "compile time" in by_type["Gather"].reason and by_type["Reshape"].reason == ""


def test_optional_tensor_input_is_read_as_its_tensor(tmp_path):
    """An optional(tensor) graph input is a plain tensor input of the compiled model: the C API
    always passes it, so OptionalHasElement is true and OptionalGetElement is the tensor."""
    import numpy as np
    from onnx import TensorProto, helper

    tensor = helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("OptionalGetElement", ["x"], ["t"]),
             helper.make_node("OptionalHasElement", ["x"], ["has"]),
             helper.make_node("Cast", ["has"], ["one"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["t", "one"], ["y"])]
    graph = helper.make_graph(nodes, "opt", [helper.make_value_info("x", helper.make_optional_type_proto(tensor))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    g = load(save(model, tmp_path), {})
    assert g.values["x"].shape == (2, 3)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(run_graph(g, {"x": x})["y"], x + 1)
