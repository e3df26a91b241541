"""ONNX CNNs through the whole pipeline: node counts, no Transpose inside, no BatchNorm, no
no-op left, results still those of onnxruntime; and `kiln build --dump-ir`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_models as om
from codegen.frontends.onnx import load
from codegen.ir import Graph, run_graph
from codegen.passes.dce import noop_input
from codegen.passes.pipeline import run_pipeline


def constant_of_shape_net() -> onnx.ModelProto:
    """A CNN whose weights are computed in the graph: ConstantOfShape + Mul/Add of initializers,
    a Cast of an int initializer, the PyTorch Shape -> Gather -> Concat -> Reshape flatten,
    Identity and Dropout, and a BatchNormalization after the second conv."""
    b = om.ModelBuilder("cos", 13)
    x = b.input("x", [1, 3, 8, 8])
    ones = b.node("ConstantOfShape", [b.ints("w1_shape", [6, 3, 3, 3])],
                  value=numpy_helper.from_array(np.array([0.1], np.float32)))
    w1 = b.node("Add", [ones, b.weight("w1_noise", (6, 3, 3, 3), 0.3)])
    bias = b.node("Cast", [b.init("b1_int", np.arange(6, dtype=np.int64) - 3)], to=TensorProto.FLOAT)
    h = b.node("Conv", [x, w1, b.node("Mul", [bias, b.scalar("b1_scale", 0.25)])], pads=[1, 1, 1, 1], name="conv1")
    h = b.node("Relu", [h])
    h = b.node("Identity", [h])
    zeros = b.node("ConstantOfShape", [b.ints("b2_shape", [4])])         # default value 0.0
    h = b.node("Conv", [h, b.weight("w2", (4, 6, 3, 3), 0.3), zeros], strides=[2, 2], name="conv2")
    h = b.node("BatchNormalization", [h, b.positive("s", (4,)), b.weight("o", (4,)), b.weight("m", (4,)),
                                      b.positive("v", (4,))], name="bn")
    h = b.node("Dropout", [h])
    n = b.node("Gather", [b.node("Shape", [h]), b.node("Constant", [], value=numpy_helper.from_array(np.array(0, np.int64)))],
               axis=0)
    shape = b.node("Concat", [b.node("Unsqueeze", [n, b.ints("ax", [0])]), b.ints("minus1", [-1])], axis=0)
    h = b.node("Reshape", [h, shape])                                      # [1, 36]: an NCHW flatten
    b.nodes.append(helper.make_node("Gemm", [h, b.weight("fc", (5, 36)), b.weight("fcb", (5,))], ["y"],
                                    name="fc", transB=1))
    return b.output("y", [1, 5]).model()


MODELS = {
    "cnn": (om.cnn, 15, 6),
    "residual_depthwise": (om.residual_depthwise, 9, 5),
    "concat_branches": (om.concat_branches, 11, 6),
    "constant_of_shape": (constant_of_shape_net, 10, 4),
}


def _import(model: onnx.ModelProto, tmp_path: Path) -> Graph:
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    return load(path, {})


def _inner_transposes(g: Graph) -> list[str]:
    """Transposes that neither read a graph input nor write a graph output."""
    return [n.name for n in g.nodes if n.op == "Transpose"
            and n.inputs[0] not in g.inputs and n.outputs[0] not in g.outputs]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_cnn_ends_channels_last_without_batchnorm_or_noops(name, tmp_path):
    make, count_before, count_after = MODELS[name]
    model = make()
    g = _import(model, tmp_path)
    after = run_pipeline(g, verify_each=True)
    assert (len(g.nodes), len(after.nodes)) == (count_before, count_after)
    assert _inner_transposes(after) == []
    assert not any(n.op == "BatchNorm" for n in after.nodes)
    assert all(noop_input(n, after) is None for n in after.nodes)
    for seed in (0, 1):
        feeds = om.random_feeds(model, seed)
        expected = om.ort_outputs(model, feeds)
        got = run_graph(after, feeds)
        for out, exp in expected.items():
            assert om.max_rel_error(got[out], exp) <= 1e-5, out


def test_cnn_keeps_only_the_input_transpose(tmp_path):
    after = run_pipeline(_import(om.cnn(), tmp_path))
    assert [n.op for n in after.nodes] == ["Transpose", "Conv2D", "MaxPool2D", "Conv2D", "Mean", "FullyConnected"]
    assert [n.attrs["activation"] for n in after.nodes if n.op == "Conv2D"] == ["relu", "relu"]
    assert after.nodes[1].origin == ("conv1", "bn1", "relu1")


def test_kiln_build_dump_ir(tmp_path):
    path = tmp_path / "cnn.onnx"
    onnx.save(om.cnn(), path)
    res = subprocess.run([sys.executable, "-m", "codegen", "build", str(path), "--target", "host",
                          "-o", str(tmp_path / "out"), "--dump-ir", str(tmp_path / "ir")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    files = sorted(p.name for p in (tmp_path / "ir").iterdir())
    assert files[0] == "00_input.ir" and files[-1].endswith("_schedule.ir")
    first, last = ((tmp_path / "ir" / f).read_text() for f in (files[0], files[-1]))
    assert first.count("Transpose(") == 6 and last.count("Transpose(") == 1
    assert "BatchNorm(" in first and "BatchNorm(" not in last
