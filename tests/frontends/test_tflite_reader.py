"""The TFLite reader on its own: tensor types, constant data, quantization and builtin options
decoded into plain data, independently of any Kiln op."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.frontends.tflite.reader import empty_options, read_model
from tflite_models import ModelWriter, TensorSpec, const

DATA = {
    "float32": np.array([[1.5, -2.25]], np.float32),
    "float16": np.array([0.5, 3.0], np.float16),
    "int8": np.array([-128, 0, 127], np.int8),
    "uint8": np.array([0, 200, 255], np.uint8),
    "int16": np.array([-32768, 7, 32767], np.int16),
    "int32": np.array([-(2 ** 31), 5], np.int32),
    "int64": np.array([2 ** 40, -3], np.int64),
    "bool": np.array([True, False, True]),
}


def _model_of(*specs: TensorSpec, op="RELU", options=None) -> bytes:
    w = ModelWriter()
    for s in specs:
        w.tensor(s)
    x, y = w.tensor(TensorSpec((2,), name="x")), w.tensor(TensorSpec((2,), name="y"))
    w.op(op, [x], [y], options)
    return w.build([x], [y])


def test_constant_data_of_every_type_is_read():
    model = read_model(_model_of(*(const(v, t, name=t) for t, v in DATA.items())))
    by_name = {t.name: t for t in model.tensors}
    for dtype, values in DATA.items():
        t = by_name[dtype]
        assert t.type_name == dtype.upper() and t.data.dtype == values.dtype
        np.testing.assert_array_equal(t.data, values)
        assert t.dtype == (None if dtype == "float16" else dtype)


def test_shape_signature_and_dynamic_dims():
    model = read_model(_model_of(TensorSpec((1, 5, 3), name="a", shape_signature=(-1, 5, -1))))
    a = model.tensors[0]
    assert a.shape == (1, 5, 3) and a.signature == (-1, 5, -1) and a.dynamic_dims == (0, 2)


def test_quantization_per_tensor_and_per_channel():
    specs = [TensorSpec((3,), "int8", scale=0.5, zero_point=-4, name="pt"),
             TensorSpec((2, 3), "int8", scale=[0.1, 0.2, 0.3], zero_point=0, quantized_dimension=1, name="pc"),
             TensorSpec((4,), "int16", scale=0.001, zero_point=0, name="s16"),
             TensorSpec((2,), "float32", scale=0.25, name="stale")]
    t = {x.name: x for x in read_model(_model_of(*specs)).tensors}
    assert (t["pt"].quant.scale, t["pt"].quant.zero_point, t["pt"].quant.axis) == ((0.5,), (-4,), None)
    assert t["pc"].quant.axis == 1 and t["pc"].quant.scale == pytest.approx((0.1, 0.2, 0.3))
    assert t["s16"].quant.scale == pytest.approx((0.001,))
    assert t["stale"].quant is None  # quantization left on a float tensor is ignored


def test_zero_point_out_of_range_is_refused():
    with pytest.raises(KilnError, match="node 'q': zero point 200 is out of range for int8"):
        read_model(_model_of(TensorSpec((2,), "int8", scale=0.1, zero_point=200, name="q")))


def test_builtin_options_are_decoded_with_vectors():
    model = read_model(_model_of(op="SQUEEZE", options={"squeeze_dims": [0, 2]}))
    assert model.operators[0].options == {"SqueezeDims": (0, 2)}
    model = read_model(_model_of(op="SOFTMAX", options={"beta": 0.75}))
    assert model.operators[0].options_type == "SoftmaxOptions"
    assert model.operators[0].options["Beta"] == 0.75


def test_schema_defaults_for_absent_options():
    conv = empty_options("Conv2DOptions")
    assert conv["Padding"] == 0 and conv["DilationWFactor"] == 1 and conv["FusedActivationFunction"] == 0
    assert empty_options("NONE") == {}


def test_opcode_read_from_builtin_code_only():
    """Writers that fill only `builtin_code` (not the deprecated byte) are read correctly."""
    import tflite

    data = bytearray(_model_of(op="SUB", options={}))
    oc = tflite.Model.GetRootAs(bytes(data), 0).OperatorCodes(0)
    slot = oc._tab.Pos + oc._tab.Offset(4)  # deprecated_builtin_code
    data[slot] = 0
    assert tflite.Model.GetRootAs(bytes(data), 0).OperatorCodes(0).DeprecatedBuiltinCode() == 0
    assert read_model(bytes(data)).operators[0].code == "SUB"
