"""Add: float32 against onnxruntime, int8 against TFLite Micro (one-op models and the ADDs
inside the MLPerf Tiny ResNet-8), and the generated C against the numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

import binary_testing as bt

OP = "Add"


@pytest.mark.parametrize("sa,sb", bt.SHAPES)
def test_float_matches_onnxruntime(sa, sb):
    bt.check_float(OP, sa, sb, "none")


@pytest.mark.parametrize("activation", bt.ACTIVATIONS[1:])
def test_float_fused_activation(activation):
    bt.check_float(OP, (1, 4, 4, 8), (1, 1, 1, 8), activation)


@pytest.mark.parametrize("k,sa_sb", list(enumerate(bt.SHAPES)))
def test_int8_matches_tflm(k, sa_sb):
    bt.check_int8(OP, *sa_sb, "none", seed=100 + k)


@pytest.mark.parametrize("k,activation", list(enumerate(bt.ACTIVATIONS)))
def test_int8_fused_activation(k, activation):
    bt.check_int8(OP, (1, 4, 4, 8), (1, 1, 1, 8), activation, seed=200 + k)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_generated_c_equals_reference(dtype):
    bt.check_c(OP, dtype)


def test_int8_scales_that_tflm_rejects_are_refused():
    """An output scale so small that TFLM's output multiplier would exceed 1."""
    from codegen.errors import KilnError
    from helpers import build_graph
    from op_testing import graph_of_cases

    g = graph_of_cases("add", [bt.case(OP, (1, 4), (1, 4), "none", [(1.0, 0), (1.0, 0), (1e-9, 0)])])
    with pytest.raises(KilnError, match="TFLM rejects") as err:
        build_graph(g)
    assert err.value.node == g.nodes[0].name


def test_broadcast_of_too_many_dimensions_is_refused():
    bt.check_too_many_dims(OP)


# -- int8: the three residual ADDs (fused ReLU) of the MLPerf Tiny ResNet-8, in TFLM -------

RESNET = "pretrainedResnet_quant.tflite"


def resnet_adds(path):
    """(input tensors, output tensor, activation, Quant by tensor) of each ADD in the model."""
    import tflite

    from codegen.ir import Quant

    m = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = m.Subgraphs(0)
    acts = {0: "none", 1: "relu", 2: "relu_n1_to_1", 3: "relu6"}
    adds = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = m.OperatorCodes(op.OpcodeIndex())
        if max(code.BuiltinCode(), code.DeprecatedBuiltinCode()) != tflite.BuiltinOperator.ADD:
            continue
        opts = tflite.AddOptions()
        table = op.BuiltinOptions()
        opts.Init(table.Bytes, table.Pos)
        tensors = [op.Inputs(0), op.Inputs(1), op.Outputs(0)]
        quant = {}
        for t in tensors:
            q = sg.Tensors(t).Quantization()
            quant[t] = Quant.of(float(q.ScaleAsNumpy()[0]), int(q.ZeroPointAsNumpy()[0]))
        adds.append((tensors, acts[opts.FusedActivationFunction()], quant))
    return adds


def test_int8_matches_tflm_on_resnet8_adds(models_dir):
    from tflite_micro.python.tflite_micro import runtime

    from codegen.ir import run_graph
    from op_testing import assert_c_equals_reference, graph_of_cases

    path = models_dir / RESNET
    adds = resnet_adds(path)
    assert len(adds) == 3
    interp = runtime.Interpreter.from_bytes(
        path.read_bytes(), arena_size=1 << 21,
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    shapes = [tuple(interp.GetTensor(t[0][0], 0)["shape"]) for t in adds]
    g = graph_of_cases("resnet_adds", [
        bt.case(OP, shape, shape, act, [(q.s, q.zp) for q in (quant[i] for i in tensors)])
        for shape, (tensors, act, quant) in zip(shapes, adds)])
    rng = np.random.default_rng(8)
    feeds = []
    for _ in range(3):
        interp.set_input(rng.integers(-128, 128, (1, 32, 32, 3)).astype(np.int8), 0)
        interp.invoke()
        feed, want = {}, {}
        for k, ((ia, ib, io), _, _) in enumerate(adds):
            feed[f"c{k}_a"], feed[f"c{k}_b"], want[k] = (
                interp.GetTensor(t, 0)["tensor_data"] for t in (ia, ib, io))
        got = run_graph(g, feed)
        for k, out in enumerate(g.outputs):
            np.testing.assert_array_equal(got[out], want[k], err_msg=f"ADD {k}")
        feeds.append(feed)
    assert_c_equals_reference(g, feeds)
