"""Softmax and Add emulation against TFLite Micro inside the real MLPerf Tiny int8 models.

The models end in an int8 SOFTMAX; the interpreter is run with every tensor preserved, the
softmax input is read back, and codegen.quant must reproduce TFLM's output bit for bit with
the parameters read from the flatbuffer. The ResNet's int8 ADDs are checked the same way.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen import quant as q

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
tflite = pytest.importorskip("tflite")

SOFTMAX_MODELS = {"kws_ref_model.tflite": 50, "pretrainedResnet_quant.tflite": 10,
                  "vww_96_int8.tflite": 10, "str_ww_ref_model.tflite": 10}
ACT_NAMES = {0: "none", 1: "relu", 2: "relu_n1_to_1", 3: "relu6"}


def opcode_of(model, op) -> int:
    code = model.OperatorCodes(op.OpcodeIndex())
    return max(code.BuiltinCode(), code.DeprecatedBuiltinCode())


def quant_of(subgraph, index) -> tuple[float, int]:
    qp = subgraph.Tensors(index).Quantization()
    return float(qp.Scale(0)), int(qp.ZeroPoint(0))


def options(op, cls):
    table = op.BuiltinOptions()
    opts = cls()
    opts.Init(table.Bytes, table.Pos)
    return opts


def random_inputs(rng, details, count):
    """int8 inputs around the input zero point with a varying spread, so that the softmax
    sees both peaked and flat rows."""
    zp = int(details["quantization_parameters"]["zero_points"][0])
    for i in range(count):
        spread = (4, 16, 48, 128)[i % 4]
        yield np.clip(rng.integers(zp - spread, zp + spread + 1, details["shape"]),
                      -128, 127).astype(np.int8)


def preserving_interpreter(path):
    return runtime.Interpreter.from_file(
        str(path), intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)


@pytest.mark.parametrize("name", sorted(SOFTMAX_MODELS))
def test_final_softmax_matches_tflm(models_dir, name):
    path = models_dir / name
    model = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = model.Subgraphs(0)
    op = sg.Operators(sg.OperatorsLength() - 1)
    assert opcode_of(model, op) == tflite.BuiltinOperator.SOFTMAX
    in_scale, _ = quant_of(sg, op.Inputs(0))
    out_scale, out_zp = quant_of(sg, op.Outputs(0))
    q.check_softmax_output("int8", out_scale, out_zp)
    params = q.softmax_params(options(op, tflite.SoftmaxOptions).Beta(), in_scale)

    interp = preserving_interpreter(path)
    rng = np.random.default_rng(2024)
    unsaturated = 0
    for x in random_inputs(rng, interp.get_input_details(0), SOFTMAX_MODELS[name]):
        interp.set_input(x, 0)
        interp.invoke()
        logits = interp.GetTensor(op.Inputs(0), 0)["tensor_data"]
        want = interp.get_output(0)
        np.testing.assert_array_equal(q.softmax_int8(logits, params), want)
        unsaturated += int(np.count_nonzero((want > -128) & (want < 127)))
    assert unsaturated > 0, "every output saturated: the comparison proved little"


def test_resnet_adds_match_tflm(models_dir):
    path = models_dir / "pretrainedResnet_quant.tflite"
    model = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = model.Subgraphs(0)
    adds = [sg.Operators(i) for i in range(sg.OperatorsLength())
            if opcode_of(model, sg.Operators(i)) == tflite.BuiltinOperator.ADD]
    assert adds
    interp = preserving_interpreter(path)
    rng = np.random.default_rng(3)
    for x in random_inputs(rng, interp.get_input_details(0), 3):
        interp.set_input(x, 0)
        interp.invoke()
        for op in adds:
            (s1, z1), (s2, z2) = quant_of(sg, op.Inputs(0)), quant_of(sg, op.Inputs(1))
            so, zo = quant_of(sg, op.Outputs(0))
            act = ACT_NAMES[options(op, tflite.AddOptions).FusedActivationFunction()]
            p = q.add_sub_params("add", s1, z1, s2, z2, so, zo, act)
            a = interp.GetTensor(op.Inputs(0), 0)["tensor_data"]
            b = interp.GetTensor(op.Inputs(1), 0)["tensor_data"]
            want = interp.GetTensor(op.Outputs(0), 0)["tensor_data"]
            np.testing.assert_array_equal(q.add_int8(a, b, p), want)
