"""TFLite import of the MLPerf Tiny models: the graph's ops, shapes and quantization, and its
interpreter output against TFLite Micro (int8, bit-exact) and LiteRT (float, 1e-5 relative)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import tflite

from codegen.frontends import load_model, scan_model
from codegen.ir import run_graph
from tflite_models import run_litert, run_tflm

OPS = {
    "ad01": {"FullyConnected": 10},
    "kws": {"Conv2D": 5, "DepthwiseConv2D": 4, "AveragePool2D": 1, "Reshape": 1, "FullyConnected": 1, "Softmax": 1},
    "kws_hybrid": {"HybridConv2D": 5, "DepthwiseConv2D": 4, "AveragePool2D": 1, "Reshape": 1, "FullyConnected": 1,
                   "Softmax": 1},
    "resnet": {"Conv2D": 9, "Add": 3, "AveragePool2D": 1, "Reshape": 1, "FullyConnected": 1, "Softmax": 1},
    "str_ww": {"DepthwiseConv2D": 4, "Conv2D": 4, "Reshape": 1, "FullyConnected": 1, "Softmax": 1},
    "vww": {"Conv2D": 14, "DepthwiseConv2D": 13, "AveragePool2D": 1, "Reshape": 1, "FullyConnected": 1,
            "Softmax": 1},
}
INT8 = {"ad01_int8.tflite": "ad01", "kws_ref_model.tflite": "kws", "pretrainedResnet_quant.tflite": "resnet",
        "str_ww_ref_model.tflite": "str_ww", "vww_96_int8.tflite": "vww"}
FLOAT = {"ad01_fp32.tflite": "ad01", "kws_ref_model_float32.tflite": "kws_hybrid", "pretrainedResnet.tflite": "resnet",
         "vww_96_float.tflite": "vww"}
# kws_ref_model_float32 is a dynamic-range ("hybrid") model: int8 weights, float activations.
# Its CONV_2D become HybridConv2D, which quantize the activations on the fly as LiteRT's
# builtin kernels do; the weights stay int8.
HYBRID = {"kws_ref_model_float32.tflite"}


def _io(path):
    """(name, shape, type, scales, zero points) of the subgraph's inputs and outputs, read with
    the `tflite` package directly, independently of the frontend."""
    sg = tflite.Model.GetRootAs(path.read_bytes(), 0).Subgraphs(0)

    def describe(i):
        t = sg.Tensors(i)
        q = t.Quantization()
        scales = tuple(q.ScaleAsNumpy()) if q is not None and q.ScaleLength() else ()
        zps = tuple(int(z) for z in q.ZeroPointAsNumpy()) if scales else ()
        return t.Name().decode(), tuple(int(d) for d in t.ShapeAsNumpy()), t.Type(), scales, zps

    return ([describe(int(i)) for i in sg.InputsAsNumpy()], [describe(int(i)) for i in sg.OutputsAsNumpy()])


def _random(v, rng):
    if v.dtype == "int8":
        return rng.integers(-128, 128, v.shape).astype(np.int8)
    return rng.standard_normal(v.shape).astype(np.float32)


@pytest.mark.parametrize("model", sorted({**INT8, **FLOAT}))
def test_import_ops_shapes_and_io_quantization(models_dir, model):
    path = models_dir / model
    g = load_model(path)
    assert Counter(n.op for n in g.nodes) == Counter(OPS[{**INT8, **FLOAT}[model]])
    assert all(n.origin == (n.name,) for n in g.nodes)
    ins, outs = _io(path)
    is_int8 = model in INT8
    for (name, shape, ttype, scales, zps), value in zip(ins + outs, g.inputs + g.outputs):
        v = g.values[value]
        assert (v.name, v.shape) == (name, shape)
        assert v.dtype == ("int8" if is_int8 else "float32") and ttype == (9 if is_int8 else 0)
        if is_int8:
            assert v.quant.scale == pytest.approx(scales, rel=1e-7) and v.quant.zero_point == zps
        else:
            assert v.quant is None
    assert g.values[g.outputs[0]].shape[0] == 1  # the -1 batch dimension became 1


@pytest.mark.parametrize("model", sorted(INT8))
def test_int8_weights_and_biases_are_quantized_consistently(models_dir, model):
    g = load_model(models_dir / model)
    linear = [n for n in g.nodes if n.op in ("Conv2D", "DepthwiseConv2D", "FullyConnected")]
    assert linear
    for n in linear:
        x, w, b = (g.values[i] for i in n.inputs)
        assert w.dtype == "int8" and w.is_const and b.dtype == "int32" and b.is_const
        channels = w.shape[3] if n.op == "DepthwiseConv2D" else w.shape[0]
        if w.quant.per_channel:
            assert w.quant.axis == (3 if n.op == "DepthwiseConv2D" else 0)
            assert len(w.quant.scale) == channels
        expected = np.asarray(w.quant.scale) * x.quant.s
        assert np.allclose(np.broadcast_to(b.quant.scale, (channels,)), expected, rtol=1e-5), n.name
        assert set(b.quant.zero_point) == {0}


@pytest.mark.parametrize("model", sorted(INT8))
def test_int8_models_match_tflm_bit_for_bit(models_dir, model):
    path = models_dir / model
    g = load_model(path)
    rng = np.random.default_rng(11)
    for _ in range(2):
        x = _random(g.values[g.inputs[0]], rng)
        expected = run_tflm(path.read_bytes(), x)[0]
        np.testing.assert_array_equal(run_graph(g, {g.inputs[0]: x})[g.outputs[0]], expected)


def _rel_error(got: np.ndarray, expected: np.ndarray) -> float:
    return float(np.abs(got - expected).max() / np.abs(expected).max())


@pytest.mark.parametrize("model", sorted(FLOAT))
def test_float_models_match_litert(models_dir, model):
    path = models_dir / model
    g = load_model(path)
    reference = path.read_bytes()
    if model in HYBRID:
        hybrid = [n for n in g.nodes if n.op == "HybridConv2D"]
        assert hybrid and all(g.values[n.inputs[1]].dtype == "int8" for n in hybrid)
    rng = np.random.default_rng(5)
    for _ in range(2):
        x = _random(g.values[g.inputs[0]], rng)
        got = run_graph(g, {g.inputs[0]: x})[g.outputs[0]]
        assert _rel_error(got, run_litert(reference, x)[0]) <= 1e-5


@pytest.mark.parametrize("model", ["pretrainedResnet.tflite", "ad01_fp32.tflite"])
def test_dynamic_batch_dimension_takes_the_given_size(models_dir, model):
    path = models_dir / model
    name = load_model(path).inputs[0]
    base = load_model(path).values[name].shape
    g = load_model(path, {name: (3,) + base[1:]})
    assert g.values[g.outputs[0]].shape[0] == 3
    reshape = [n for n in g.nodes if n.op == "Reshape"]
    assert all(n.attrs["shape"][0] == 3 for n in reshape)  # the flatten's -1 was solved for batch 3
    x = np.random.default_rng(2).standard_normal((3,) + base[1:]).astype(np.float32)
    expected = run_litert(path.read_bytes(), x)[0]
    got = run_graph(g, {name: x})[g.outputs[0]]
    assert got.shape == expected.shape and np.abs(got - expected).max() <= 1e-5 * np.abs(expected).max()


@pytest.mark.parametrize("model", sorted({**INT8, **FLOAT}))
def test_scan_lists_every_operator_as_supported(models_dir, model):
    ops = scan_model(models_dir / model)
    sg = tflite.Model.GetRootAs((models_dir / model).read_bytes(), 0).Subgraphs(0)
    assert len(ops) == sg.OperatorsLength()
    assert [o for o in ops if not o.supported] == []
    assert sum(OPS[{**INT8, **FLOAT}[model]].values()) == len(ops)
