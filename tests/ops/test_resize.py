"""Resize: nearest (every nearest mode; index_map, also on int8), linear and cubic
(resample_f32) with every coordinate transform, exclude_outside, antialiased shrinking and a
tf_crop_and_resize crop with extrapolation: the reference against onnxruntime, the generated C
against the reference."""

import numpy as np
import pytest

from codegen.ir import run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference, graph_of_cases

SHAPE = (1, 2, 4, 5)
# (sizes, attributes)
CASES = [
    ((1, 2, 8, 10), {"mode": "nearest"}),
    ((1, 2, 7, 3), {"mode": "nearest", "nearest_mode": "round_prefer_ceil", "coordinate_transformation_mode": "asymmetric"}),
    ((1, 2, 6, 7), {"mode": "nearest", "nearest_mode": "floor", "coordinate_transformation_mode": "align_corners"}),
    ((1, 2, 3, 9), {"mode": "nearest", "nearest_mode": "ceil", "coordinate_transformation_mode": "half_pixel"}),
    ((1, 2, 8, 10), {"mode": "linear"}),
    ((1, 2, 7, 3), {"mode": "linear", "coordinate_transformation_mode": "align_corners"}),
    ((1, 2, 6, 8), {"mode": "linear", "coordinate_transformation_mode": "asymmetric"}),
    ((1, 2, 1, 9), {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}),
    ((1, 2, 7, 9), {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"}),
    ((1, 2, 8, 10), {"mode": "cubic"}),
    ((1, 2, 5, 7), {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}),
    ((1, 2, 2, 3), {"mode": "linear", "antialias": 1}),
    ((1, 2, 2, 2), {"mode": "cubic", "antialias": 1}),
    ((2, 1, 3, 4), {"mode": "linear"}),  # N and C resized too: onnxruntime refuses, ONNX's reference
]


def _onnx(x, sizes, attrs):
    if sizes[:2] != SHAPE[:2]:
        from onnx import helper
        from onnx.reference import ReferenceEvaluator

        node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs)
        return ReferenceEvaluator(node).run(None, {"x": x, "sizes": np.array(sizes, np.int64)})[0]
    return ort_node("Resize", {"x": x, "roi": None, "scales": None, "sizes": np.array(sizes, np.int64)}, attrs,
                    opset=19)[0]


def _kiln_attrs(sizes, attrs):
    return {"sizes": sizes, "scales": tuple(o / i for o, i in zip(sizes, SHAPE)),
            **{k: (bool(v) if k in ("exclude_outside", "antialias") else v) for k, v in attrs.items()}}


def test_resize_matches_onnxruntime_and_c():
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    cases = [lambda b, p, s=s, a=a: b.node("Resize", [b.input(f"{p}x", "float32", SHAPE)], **_kiln_attrs(s, a))
             for s, a in CASES]
    g = graph_of_cases("resize", cases)
    feed = {f"c{k}_x": x for k in range(len(CASES))}
    got = run_graph(g, feed)
    for k, (sizes, attrs) in enumerate(CASES):
        want = _onnx(x, sizes, attrs)
        np.testing.assert_allclose(got[g.outputs[k]], want, rtol=0, atol=2e-6 * float(np.abs(want).max()),
                                   err_msg=str(attrs))
    assert_c_equals_reference(g, [feed])


@pytest.mark.parametrize("extrapolation", [0.0, 10.0])
def test_crop_and_resize_extrapolates(extrapolation):
    x = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    roi = (0.0, 0.0, -0.2, 0.4, 1.0, 1.0, 0.6, 1.3)
    attrs = {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize",
             "extrapolation_value": extrapolation}
    sizes = (1, 2, 5, 6)
    g = graph_of_cases("crop", [lambda b, p: b.node("Resize", [b.input(f"{p}x", "float32", SHAPE)],
                                                    roi=roi, **_kiln_attrs(sizes, attrs))])
    got = run_graph(g, {"c0_x": x})[g.outputs[0]]
    want = ort_node("Resize", {"x": x, "roi": np.array(roi, np.float32), "scales": None,
                               "sizes": np.array(sizes, np.int64)}, attrs, opset=19)[0]
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * float(np.abs(want).max()))
    assert_c_equals_reference(g, [{"c0_x": x}])


def test_nearest_on_int8_copies_bytes():
    x = np.arange(-20, 20, dtype=np.int8).reshape(SHAPE)
    g = graph_of_cases("near8", [lambda b, p: b.node("Resize", [b.input(f"{p}x", "int8", SHAPE)],
                                                     **_kiln_attrs((1, 2, 8, 10), {"mode": "nearest"}))])
    got = run_graph(g, {"c0_x": x})[g.outputs[0]]
    np.testing.assert_array_equal(got, np.repeat(np.repeat(x, 2, axis=2), 2, axis=3))
    assert_c_equals_reference(g, [{"c0_x": x}])
