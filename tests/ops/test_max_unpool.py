"""MaxUnpool: MaxPool's values put back at its argmax indices, through the ONNX converter against
ONNX's reference implementation (with an output_shape larger than the unpooled one, the
backend tests and ONNX's reference scatter into the unpooled shape and pad at the end, where
onnxruntime scatters into output_shape directly: Kiln follows ONNX), and the generated C
against the reference, including duplicate and out-of-range indices."""

import numpy as np
import onnx
from onnx import TensorProto, helper

from onnx.reference import ReferenceEvaluator
from codegen.frontends.onnx import load
from codegen.ir import GraphBuilder, run_graph
from helpers import run_c


def test_converter_matches_onnxruntime(tmp_path):
    x = np.random.default_rng(0).standard_normal((1, 2, 6, 6)).astype(np.float32)
    nodes = [helper.make_node("MaxPool", ["x"], ["v", "i"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("MaxUnpool", ["v", "i", "shape"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    graph = helper.make_graph(nodes, "unpool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [onnx.numpy_helper.from_array(np.array([1, 2, 7, 8], np.int64), "shape")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 7
    onnx.save(m, tmp_path / "m.onnx")
    got = run_graph(load(tmp_path / "m.onnx", {}), {"x": x})["y"]
    np.testing.assert_array_equal(got, ReferenceEvaluator(m).run(None, {"x": x})[0])


def test_c_matches_reference():
    b = GraphBuilder("unpool")
    y = b.node("MaxUnpool", [b.input("x", "float32", (2, 5)), b.input("i", "int64", (2, 5))], shape=(3, 4))
    g = b.output(y).build()
    feed = {"x": np.arange(10, dtype=np.float32) + 1,
            "i": np.array([0, 3, 3, 11, -1, 12, 5, 7, 100, 2], np.int64)}  # duplicates and out of range
    feed = {"x": feed["x"].reshape(2, 5), "i": feed["i"].reshape(2, 5)}
    want = run_graph(g, feed)[y]
    assert want.reshape(-1)[3] == 3.0 and want.reshape(-1)[11] == 4.0  # the later duplicate wins
    (out,) = run_c(g, [feed])
    np.testing.assert_array_equal(out[y], want)
