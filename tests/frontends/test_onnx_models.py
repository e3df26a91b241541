"""ONNX import of small models: the imported graph's interpreter output and the generated C's
output both match onnxruntime within 1e-5 relative, and the graph has the expected shape."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import onnx_models as om
from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.ir import Graph, run_graph

RTOL = 1e-5


def import_model(model: onnx.ModelProto, tmp_path: Path, shapes=None) -> Graph:
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    try:
        return load(path, shapes or {})
    except KilnError as err:  # only while another helper's op is still missing
        if "no Kiln operator" in str(err):
            pytest.skip(f"Kiln op not implemented yet: {err}")
        raise


def run_or_skip(g: Graph, feeds):
    try:
        return run_graph(g, feeds)
    except NotImplementedError as err:
        pytest.skip(f"an op's numpy reference is not implemented yet: {err}")


def assert_matches_ort(model: onnx.ModelProto, g: Graph, seed: int = 0) -> None:
    feeds = om.random_feeds(model, seed)
    expected = om.ort_outputs(model, feeds)
    got = run_or_skip(g, feeds)
    assert list(got) == [o.name for o in model.graph.output]
    for name, exp in expected.items():
        assert got[name].shape == exp.shape, name
        assert om.max_rel_error(got[name], exp) <= RTOL, name


@pytest.mark.parametrize("name", sorted(om.RUNNABLE))
def test_interpreter_matches_onnxruntime(name, tmp_path):
    model = om.RUNNABLE[name]()
    g = import_model(model, tmp_path)
    for seed in (0, 1):
        assert_matches_ort(model, g, seed)


@pytest.mark.parametrize("name", sorted(om.RUNNABLE))
def test_generated_c_matches_onnxruntime(name, tmp_path):
    host = pytest.importorskip("codegen.verify.host", reason="codegen.verify.host not written yet")
    from helpers import build_graph

    model = om.RUNNABLE[name]()
    g = import_model(model, tmp_path)
    samples = [om.random_feeds(model, seed) for seed in (0, 1)]
    outputs = host.run_generated(build_graph(g, "t").files, "t", samples)
    for feeds, got in zip(samples, outputs):
        for out, exp in om.ort_outputs(model, feeds).items():
            assert om.max_rel_error(got[out], exp) <= RTOL, out


def ops_of(g: Graph) -> list[str]:
    return [n.op for n in g.nodes]


def test_cnn_structure(tmp_path):
    """NCHW Conv/pools are wrapped in transposes; Relu is Clip(0, inf); names follow ONNX."""
    g = import_model(om.cnn(), tmp_path)
    assert g.inputs == ["image"] and g.outputs == ["logits"]
    assert ops_of(g) == ["Transpose", "Conv2D", "Transpose", "BatchNorm", "Clip",
                         "Transpose", "MaxPool2D", "Transpose", "Transpose", "Conv2D", "Transpose",
                         "Clip", "Mean", "Reshape", "FullyConnected"]
    conv1 = next(n for n in g.nodes if n.name == "conv1")
    assert conv1.op == "Conv2D" and conv1.attrs["pads"] == (1, 1, 1, 1)
    # weights OIHW -> OHWI
    w_onnx = onnx.numpy_helper.to_array(next(t for t in om.cnn().graph.initializer if t.name == "conv1.w"))
    np.testing.assert_array_equal(g.values[conv1.inputs[1]].data, w_onnx.transpose(0, 2, 3, 1))
    conv2 = next(n for n in g.nodes if n.name == "conv2")
    assert conv2.attrs["pads"] == (0, 0, 1, 1)  # SAME_UPPER: the odd pixel at the end
    relu = next(n for n in g.nodes if n.name == "relu1")
    assert relu.op == "Clip" and relu.attrs["min"] == 0.0 and relu.attrs["max"] == float("inf")
    mean = next(n for n in g.nodes if n.op == "Mean")
    assert mean.attrs["axes"] == (2, 3) and mean.attrs["keepdims"] is True
    # every Kiln node names the ONNX node it comes from
    onnx_names = {n.name for n in om.cnn().graph.node}
    assert all(len(n.origin) == 1 and n.origin[0] in onnx_names for n in g.nodes)
    assert {n.origin[0] for n in g.nodes if n.op == "Transpose"} == {"conv1", "pool1", "conv2"}
    assert "bn1_out" in g.values and "relu2_out" in g.values  # ONNX tensor names kept


def test_depthwise_and_residual(tmp_path):
    g = import_model(om.residual_depthwise(), tmp_path)
    dw = next(n for n in g.nodes if n.name == "depthwise")
    assert dw.op == "DepthwiseConv2D" and dw.attrs["depth_multiplier"] == 1
    assert g.values[dw.inputs[1]].shape == (1, 3, 3, 8)
    assert [n.op for n in g.nodes if n.origin == ("skip",)] == ["Add"]
    clip = next(n for n in g.nodes if n.name == "relu6")
    assert (clip.attrs["min"], clip.attrs["max"]) == (0.0, 6.0)
    g2 = import_model(om.depthwise_multiplier(), tmp_path)
    dw2 = next(n for n in g2.nodes if n.op == "DepthwiseConv2D")
    assert dw2.attrs["depth_multiplier"] == 2 and dw2.attrs["pads"] == (1, 1, 0, 0)  # SAME_LOWER


def test_gemm_folds_alpha_beta_into_constants(tmp_path):
    g = import_model(om.mlp(), tmp_path)
    assert ops_of(g) == ["FullyConnected", "Clip", "FullyConnected", "Softmax"]
    fc2 = next(n for n in g.nodes if n.name == "fc2")
    init = {t.name: onnx.numpy_helper.to_array(t) for t in om.mlp().graph.initializer}
    np.testing.assert_allclose(g.values[fc2.inputs[1]].data, 0.5 * init["fc2.weight"].T, rtol=1e-7)
    np.testing.assert_allclose(g.values[fc2.inputs[2]].data, 2.0 * init["fc2.bias"], rtol=1e-7)


def test_matmul_by_constant_is_fully_connected(tmp_path):
    g = import_model(om.matmuls(), tmp_path)
    proj = next(n for n in g.nodes if n.name == "proj")
    assert proj.op == "FullyConnected" and proj.attrs["keep_dims"] is True
    assert next(n for n in g.nodes if n.name == "scores").op == "MatMul"
    assert [n.op for n in g.nodes if n.origin == ("dyn_gemm",)] == ["Transpose", "MatMul", "Mul", "Add"]
    assert g.outputs == ["y"]  # the Identity's output name, without a copy
    assert not any(n.origin == ("ident",) for n in g.nodes)


def test_old_opsets(tmp_path):
    """Opset 7/9: initializers listed as inputs are constants; Softmax(axis=1) of a 4-D tensor
    is a softmax over C*H*W via Reshape; Clip/Pad attributes become Kiln attributes."""
    for opset in (7, 9, 11):
        g = import_model(om.old_opset(opset), tmp_path)
        assert g.inputs == ["x"], opset
        assert ops_of(g)[-3:] == ["Reshape", "Softmax", "Reshape"], opset
        flat = next(n for n in g.nodes if n.op == "Softmax")
        assert g.values[flat.inputs[0]].shape == (1, 36)
        clip = next(n for n in g.nodes if n.op == "Clip")
        assert clip.attrs["min"] == -0.5 and clip.attrs["max"] == (1.5 if opset < 11 else float("inf"))
        pad = next(n for n in g.nodes if n.op == "Pad")
        assert pad.attrs["pads"] == (0, 0, 1, 0, 0, 0, 0, 1) and pad.attrs["value"] == -0.25


def test_softmax_opset13_keeps_axis(tmp_path):
    g = import_model(om.mlp(13), tmp_path)
    assert next(n for n in g.nodes if n.op == "Softmax").attrs["axis"] == -1


def test_constant_shape_arithmetic_folds(tmp_path):
    """PyTorch's flatten (Shape/Gather/Unsqueeze/Concat) and Constant nodes leave no nodes."""
    g = import_model(om.torch_flatten(), tmp_path)
    assert ops_of(g) == ["Reshape", "Mul", "Add"]
    assert next(n for n in g.nodes if n.op == "Reshape").attrs["shape"] == (1, 24)


def test_qdq_puts_quantization_on_values(tmp_path):
    g = import_model(om.qdq(), tmp_path)
    assert ops_of(g) == ["Quantize", "Dequantize", "FullyConnected"]
    q = g.values[g.nodes[0].outputs[0]]
    assert q.dtype == "int8" and q.quant.s == pytest.approx(0.05) and q.quant.zp == 3
    assert g.values[g.nodes[2].inputs[1]].dtype == "float32"  # int8 weights dequantized at import


def test_nodes_out_of_order_are_sorted(tmp_path):
    model = om.cnn()
    shuffled = onnx.ModelProto()
    shuffled.CopyFrom(model)
    nodes = list(shuffled.graph.node)
    del shuffled.graph.node[:]
    shuffled.graph.node.extend(reversed(nodes))
    g = import_model(shuffled, tmp_path)
    assert_matches_ort(model, g)


def test_outputs_that_are_inputs_or_constants_keep_their_names(tmp_path):
    b = om.ModelBuilder("passthrough")
    b.input("x", [2, 3])
    b.nodes += [onnx.helper.make_node("Identity", ["x"], ["same"], name="ident"),
                onnx.helper.make_node("Shape", ["x"], ["shape"], name="shape_of_x"),
                onnx.helper.make_node("Relu", ["x"], ["r"], name="relu"),
                onnx.helper.make_node("Identity", ["r"], ["r2"], name="ident2")]
    b.output("same").output("r").output("r2")
    b.outputs.append(onnx.helper.make_tensor_value_info("shape", onnx.TensorProto.INT64, [2]))
    model = b.model()
    g = import_model(model, tmp_path)
    assert g.outputs == ["same", "r", "r2", "shape"]
    feeds = om.random_feeds(model)
    got, exp = run_graph(g, feeds), om.ort_outputs(model, feeds)
    for name in g.outputs:
        np.testing.assert_array_equal(got[name], exp[name])
    assert {n.origin[0] for n in g.nodes} == {"ident", "relu", "ident2", "shape_of_x"}
