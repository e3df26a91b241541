"""TFLite import of bad or unusual files: every problem is one KilnError naming the tensor or
operator; unsupported operators are all listed at once; dynamic (-1) dimensions and the user's
input shapes; random corruption never lets another exception escape."""

from __future__ import annotations

import numpy as np
import pytest
import tflite

from codegen.errors import KilnError, UnsupportedOpsError
from codegen.frontends import load_model, scan_model
from codegen.frontends.tflite import load_bytes, scan_bytes
from codegen.ir import Graph, run_graph
from tflite_models import ModelWriter, TensorSpec, const, run_litert, single_op_model


def i8(shape, scale=0.05, zp=0, **kw) -> TensorSpec:
    return TensorSpec(tuple(shape), "int8", scale=scale, zero_point=zp, **kw)


def f32(shape, **kw) -> TensorSpec:
    return TensorSpec(tuple(shape), "float32", **kw)


def _error(data: bytes, input_shapes=None) -> str:
    with pytest.raises(KilnError) as info:
        load_bytes(data, input_shapes)
    return str(info.value)


def _conv_model(**weight_quant) -> bytes:
    w = const(np.ones((6, 1, 1, 4), np.int8), "int8", **weight_quant)
    return single_op_model("CONV_2D", [i8((1, 4, 4, 4)), w, None], [i8((1, 4, 4, 6))],
                           {"padding": "VALID", "stride_w": 1, "stride_h": 1})


def _small_model() -> bytes:
    """Two int8 ops with per-channel weights: the seed for the corruption tests."""
    w = ModelWriter()
    x = w.tensor(i8((1, 8, 8, 3), zp=-2, name="x", shape_signature=(-1, 8, 8, 3)))
    wt = w.tensor(const(np.arange(-54, 54).reshape(4, 3, 3, 3), "int8", scale=[0.01, 0.02, 0.03, 0.04]))
    b = w.tensor(const(np.arange(4) * 10, "int32", scale=[0.0005, 0.001, 0.0015, 0.002]))
    y = w.tensor(i8((1, 8, 8, 4), 0.1, 5, name="y"))
    z = w.tensor(i8((1, 4, 4, 4), 0.1, 5, name="z"))
    w.op("CONV_2D", [x, wt, b], [y], {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                                      "fused_activation_function": "RELU"})
    w.op("MAX_POOL_2D", [y], [z], {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2,
                                   "filter_height": 2})
    return w.build([x], [z])


# -- files that are not (whole) TFLite models ------------------------------------------------------

@pytest.mark.parametrize("fraction", [0.0, 0.004, 0.1, 0.5, 0.9])
def test_truncated_files_are_reported(models_dir, fraction):
    data = (models_dir / "kws_ref_model.tflite").read_bytes()
    msg = _error(data[:int(len(data) * fraction)])
    assert "not a TFLite model" in msg or "truncated" in msg or "beyond the end" in msg, msg


def test_wrong_identifier_is_reported():
    data = bytearray(_small_model())
    data[4:8] = b"TFL2"
    assert "file identifier is b'TFL2', expected b'TFL3'" in _error(bytes(data))


@pytest.mark.parametrize("seed", range(4))
def test_garbage_is_reported(seed):
    rng = np.random.default_rng(seed)
    data = bytearray(rng.integers(0, 256, 300 + 500 * seed, dtype=np.uint8).tobytes())
    data[4:8] = b"TFL3"
    with pytest.raises(KilnError):
        load_bytes(bytes(data))
    with pytest.raises(KilnError):
        scan_bytes(bytes(data))


def test_load_model_names_the_file(tmp_path):
    path = tmp_path / "broken.tflite"
    path.write_bytes(_small_model()[:200])
    with pytest.raises(KilnError) as info:
        load_model(path)
    assert str(info.value).startswith(str(path))


def test_huge_vector_lengths_are_refused_without_work():
    data = bytearray(_small_model())
    sg = tflite.Model.GetRootAs(bytes(data), 0).Subgraphs(0)
    length_at = sg._tab.Vector(sg._tab.Offset(4)) - 4  # the tensor vector's element count
    data[length_at:length_at + 4] = (0x7FFFFFFF).to_bytes(4, "little")
    assert "the tensor list claims 2147483647 elements" in _error(bytes(data))


def test_random_corruption_only_ever_raises_kiln_errors():
    base = _small_model()
    rng = np.random.default_rng(0)
    outcomes = {"ok": 0, "error": 0}
    for k in range(300):
        data = bytearray(base)
        if k % 3 == 0:
            data = data[:rng.integers(0, len(data))]
        elif k % 3 == 1:
            for _ in range(3):
                data[rng.integers(0, len(data))] = rng.integers(0, 256)
        else:
            pos = int(rng.integers(8, len(data) - 4))
            data[pos:pos + 4] = int(rng.integers(0, 2 ** 32)).to_bytes(4, "little")
        for fn in (load_bytes, scan_bytes):
            try:
                fn(bytes(data))
                outcomes["ok"] += 1
            except KilnError:
                outcomes["error"] += 1
    assert outcomes["error"] > 100 and outcomes["ok"] > 10


# -- structurally invalid models -----------------------------------------------------------------

def test_out_of_range_tensor_index_names_the_operator():
    w = ModelWriter()
    x, y = w.tensor(f32((2,), name="x")), w.tensor(f32((2,), name="y"))
    w.op("ADD", [x, 17], [y])
    assert "operator 0 (ADD) has input tensor 17, but the subgraph has 2 tensors" in _error(w.build([x], [y]))


def test_out_of_range_graph_output():
    w = ModelWriter()
    x, y = w.tensor(f32((2,), name="x")), w.tensor(f32((2,), name="y"))
    w.op("RELU", [x], [y])
    assert "subgraph output refers to tensor 5" in _error(w.build([x], [5]))


def test_out_of_range_buffer_index_names_the_tensor():
    class BadBuffer(ModelWriter):
        @staticmethod
        def _tensor(b, t, index, buffer):
            return ModelWriter._tensor(b, t, index, 42 if t.name == "w" else buffer)

    w = BadBuffer()
    x, y = w.tensor(f32((2, 3), name="x")), w.tensor(f32((2, 4), name="y"))
    wt = w.tensor(const(np.ones((4, 3), np.float32), name="w"))
    w.op("FULLY_CONNECTED", [x, wt, None], [y])
    assert "node 'w': refers to buffer 42, but the model has 2 buffers" in _error(w.build([x], [y]))


def test_buffer_size_must_match_the_shape():
    w = TensorSpec((4, 3), "float32", data=np.ones(10, np.float32), name="w")
    msg = _error(single_op_model("FULLY_CONNECTED", [f32((2, 3)), w, None], [f32((2, 4))]))
    assert "node 'w': buffer 1 holds 40 bytes, but FLOAT32[4, 3] needs 48" in msg


@pytest.mark.parametrize("scale", [0.0, -0.5, float("nan")])
def test_non_positive_scales_are_refused(scale):
    msg = _error(single_op_model("RELU", [i8((4,), scale=scale, name="x")], [i8((4,))]))
    assert "node 'x'" in msg and "is not a positive number" in msg


def test_per_channel_arrays_must_match_the_channel_count():
    msg = _error(_conv_model(scale=[0.1] * 5, name="w"))
    assert "node 'w': 5 per-channel scales but dimension 0 of [6, 1, 1, 4] has 6 channels" in msg
    msg = _error(_conv_model(scale=[0.1] * 6, zero_point=[0] * 4, name="w"))
    assert "6 quantization scales but 4 zero points" in msg
    msg = _error(_conv_model(scale=[0.1] * 6, quantized_dimension=4, name="w"))
    assert "quantized_dimension 4 is outside the tensor's rank 4" in msg


def test_per_channel_quantization_is_read():
    g = load_bytes(_conv_model(scale=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], zero_point=0, name="w"))
    q = g.values["w"].quant
    assert q.axis == 0 and q.scale == pytest.approx((0.1, 0.2, 0.3, 0.4, 0.5, 0.6)) and q.zero_point == (0,) * 6


def test_cycles_are_refused():
    w = ModelWriter()
    x, a, b = (w.tensor(f32((2,), name=n)) for n in ("x", "a", "b"))
    w.op("ADD", [x, b], [a])
    w.op("ADD", [a, x], [b])
    assert "node 'a': ADD is part of a cycle" in _error(w.build([x], [b]))


def test_dangling_inputs_are_refused():
    w = ModelWriter()
    x, ghost, y = (w.tensor(f32((2,), name=n)) for n in ("x", "ghost", "y"))
    w.op("ADD", [x, ghost], [y])
    assert "node 'y': ADD reads tensor 'ghost', which is neither a graph input" in _error(w.build([x], [y]))


def test_tensor_written_twice_is_refused():
    w = ModelWriter()
    x, y = w.tensor(f32((2,), name="x")), w.tensor(f32((2,), name="y"))
    w.op("RELU", [x], [y])
    w.op("RELU6", [x], [y])
    assert "node 'y': tensor is written by two operators" in _error(w.build([x], [y]))


def test_output_never_computed_is_refused():
    w = ModelWriter()
    x, y, z = (w.tensor(f32((2,), name=n)) for n in ("x", "y", "z"))
    w.op("RELU", [x], [y])
    assert "node 'z': graph output is never computed" in _error(w.build([x], [y, z]))


def test_operators_are_ordered_by_dataflow():
    """TFLite stores operators in execution order, but a file that does not is still imported."""
    w = ModelWriter()
    x, a, b = (w.tensor(f32((2,), name=n)) for n in ("x", "a", "b"))
    w.op("RELU6", [a], [b])
    w.op("RELU", [x], [a])
    g = load_bytes(w.build([x], [b]))
    assert [n.name for n in g.nodes] == ["a", "b"]


def test_options_of_the_wrong_type_are_refused():
    model = single_op_model("CONV_2D", [f32((1, 4, 4, 1)), const(np.ones((1, 1, 1, 1), np.float32)), None],
                            [f32((1, 4, 4, 1))], {"_table": "AddOptions"})
    assert "CONV_2D: has builtin options of type AddOptions, expected Conv2DOptions" in _error(model)


def test_wrong_arity_is_refused():
    w = ModelWriter()
    x, y = w.tensor(f32((2,), name="x")), w.tensor(f32((2,), name="y"))
    w.op("ADD", [x], [y])
    assert "node 'y': ADD: takes 2 inputs, the model gives 1" in _error(w.build([x], [y]))


def test_duplicate_and_empty_tensor_names_are_made_unique():
    w = ModelWriter()
    x = w.tensor(f32((2,), name="v"))
    a = w.tensor(f32((2,), name="v"))
    b = w.tensor(f32((2,), name=""))
    w.op("RELU", [x], [a])
    w.op("RELU6", [a], [b])
    g = load_bytes(w.build([x], [b]))
    assert g.inputs == ["v"] and [n.name for n in g.nodes] == ["v_1", "t2"]


# -- unsupported operators -----------------------------------------------------------------------

def _model_with_unsupported_ops() -> bytes:
    w = ModelWriter()
    x = w.tensor(f32((1, 4), name="x"))
    hs, cu, act, ok = (w.tensor(f32((1, 4), name=n)) for n in ("rnn", "custom", "act", "ok"))
    cat = w.tensor(f32((1, 8), name="cat"))
    w.op("RNN", [x], [hs])  # a builtin TFLite Micro does not register: no converter
    w.op("CUSTOM", [hs], [cu], custom_code="MyCustomOp")
    w.op("ADD", [cu, x], [act], {"fused_activation_function": "TANH"})
    w.op("RELU", [act], [ok])
    w.op("CONCATENATION", [ok, x], [cat], {"axis": 1, "fused_activation_function": "RELU"})
    return w.build([x], [cat])


def test_unsupported_operators_are_all_listed():
    with pytest.raises(UnsupportedOpsError) as info:
        load_bytes(_model_with_unsupported_ops())
    assert info.value.unsupported == [("RNN", "rnn"), ("MyCustomOp", "custom")]
    assert "2 unsupported operator(s): RNN (node 'rnn'), MyCustomOp (node 'custom')" in str(info.value)


def test_scan_reports_every_operator_without_raising():
    ops = scan_bytes(_model_with_unsupported_ops())
    assert [(o.op_type, o.node, o.supported) for o in ops] == [
        ("RNN", "rnn", False), ("MyCustomOp", "custom", False), ("ADD", "act", False),
        ("RELU", "ok", True), ("CONCATENATION", "cat", False)]
    assert ops[0].reason == "no Kiln conversion for this TFLite builtin"
    assert ops[1].reason == "custom operator"
    assert "fused activation TANH is not supported" in ops[2].reason
    assert "fused activation on CONCATENATION" in ops[4].reason


def test_scan_model_through_the_frontend_entry(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(_model_with_unsupported_ops())
    assert [o.supported for o in scan_model(path)] == [False, False, False, True, False]


def test_unsupported_fused_activation_is_a_kiln_error():
    model = single_op_model("ADD", [f32((2,)), f32((2,))], [f32((2,), name="sum")],
                            {"fused_activation_function": "SIGN_BIT"})
    assert "node 'sum': ADD: fused activation SIGN_BIT is not supported" in _error(model)
    model = single_op_model("CONCATENATION", [f32((2,)), f32((2,))], [f32((4,), name="c")],
                            {"axis": 0, "fused_activation_function": "RELU6"})
    assert "node 'c': CONCATENATION: a fused activation on CONCATENATION is not supported" in _error(model)


# -- dynamic dimensions and user input shapes -----------------------------------------------------

def _dynamic_batch_model() -> bytes:
    """conv -> flatten (RESHAPE to [-1, 32]) -> fully connected -> softmax, batch dimension -1."""
    rng = np.random.default_rng(4)
    w = ModelWriter()
    x = w.tensor(f32((1, 4, 4, 2), name="x", shape_signature=(-1, 4, 4, 2)))
    c = w.tensor(f32((1, 4, 4, 2), name="conv", shape_signature=(-1, 4, 4, 2)))
    r = w.tensor(f32((1, 32), name="flat", shape_signature=(-1, 32)))
    f = w.tensor(f32((1, 3), name="fc", shape_signature=(-1, 3)))
    y = w.tensor(f32((1, 3), name="y", shape_signature=(-1, 3)))
    wt = w.tensor(const(rng.standard_normal((2, 3, 3, 2)).astype(np.float32)))
    cb = w.tensor(const(rng.standard_normal(2).astype(np.float32)))
    fw = w.tensor(const(rng.standard_normal((3, 32)).astype(np.float32)))
    fb = w.tensor(const(rng.standard_normal(3).astype(np.float32)))
    shape = w.tensor(const(np.array([-1, 32], np.int32)))
    w.op("CONV_2D", [x, wt, cb], [c], {"padding": "SAME", "stride_w": 1, "stride_h": 1})
    w.op("RESHAPE", [c, shape], [r], {"new_shape": [-1, 32]})
    w.op("FULLY_CONNECTED", [r, fw, fb], [f])
    w.op("SOFTMAX", [f], [y], {"beta": 1.0})
    return w.build([x], [y])


def test_minus_one_batch_becomes_one():
    g = load_bytes(_dynamic_batch_model())
    assert g.values["x"].shape == (1, 4, 4, 2) and g.values["y"].shape == (1, 3)


def test_input_shapes_resize_the_dynamic_batch():
    model = _dynamic_batch_model()
    g: Graph = load_bytes(model, {"x": (5, 4, 4, 2)})
    assert g.values["flat"].shape == (5, 32) and g.values["y"].shape == (5, 3)
    x = np.random.default_rng(0).standard_normal((5, 4, 4, 2)).astype(np.float32)
    expected = run_litert(model, x)[0]
    np.testing.assert_allclose(run_graph(g, {"x": x})["y"], expected, rtol=1e-5, atol=1e-6)


def test_bad_input_shapes_are_refused():
    model = _dynamic_batch_model()
    assert "an input shape is given for 'nope', but the model's inputs are 'x'" in _error(model, {"nope": (1,)})
    assert "node 'x': dimension 1 of the input is fixed at 4 by the model, got 8" in _error(model, {"x": (1, 8, 4, 2)})
    assert "node 'x': input shape [2, 4] has rank 2" in _error(model, {"x": (2, 4)})
    assert "non-positive" in _error(model, {"x": (0, 4, 4, 2)})
