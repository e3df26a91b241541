"""GridSample: every mode, padding and align_corners on a 2-D image (points inside, on the
edges and far outside) against onnxruntime (ONNX's reference for cubic with border padding,
where onnxruntime 1.32 clamps the coordinate differently from the spec's reference), a 3-D
volume against ONNX's reference, the generated C against the reference."""

import itertools

import numpy as np

from codegen.ir import run_graph
from float_binary_testing import ort_node, reference_node
from op_testing import assert_c_equals_reference, graph_of_cases

VARIANTS = list(itertools.product(["nearest", "linear", "cubic"], ["zeros", "border", "reflection"], [False, True]))


def _grid(shape, seed):
    rng = np.random.default_rng(seed)
    g = rng.uniform(-1.6, 1.6, shape).astype(np.float32)
    g.reshape(-1)[:4] = [1.0, -1.0, 0.0, 7.5]  # exact edges and a point far outside
    return g


def test_grid_sample_2d_matches_onnxruntime_and_c():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    grid = _grid((2, 3, 6, 2), 1)
    cases = [lambda b, p, m=m, pad=pad, a=a: b.node("GridSample", [b.input(f"{p}x", "float32", x.shape),
                                                                   b.input(f"{p}g", "float32", grid.shape)],
                                                    mode=m, padding_mode=pad, align_corners=a)
             for m, pad, a in VARIANTS]
    g = graph_of_cases("grid_sample", cases)
    feed = {k: v for i in range(len(VARIANTS)) for k, v in ((f"c{i}_x", x), (f"c{i}_g", grid))}
    got = run_graph(g, feed)
    for i, (m, pad, a) in enumerate(VARIANTS):
        run = reference_node if (m, pad) == ("cubic", "border") else ort_node
        want = run("GridSample", {"x": x, "g": grid}, {"mode": m, "padding_mode": pad, "align_corners": int(a)},
                   opset=20)[0]
        np.testing.assert_allclose(got[g.outputs[i]], want, rtol=0, atol=1e-5 * float(np.abs(want).max()),
                                   err_msg=str((m, pad, a)))
    assert_c_equals_reference(g, [feed])


def test_grid_sample_3d_matches_onnx_and_c():
    x = np.random.default_rng(2).standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    grid = _grid((1, 2, 3, 4, 3), 3)
    variants = [("linear", "zeros", False), ("nearest", "border", True), ("linear", "reflection", True)]
    cases = [lambda b, p, m=m, pad=pad, a=a: b.node("GridSample", [b.input(f"{p}x", "float32", x.shape),
                                                                   b.input(f"{p}g", "float32", grid.shape)],
                                                    mode=m, padding_mode=pad, align_corners=a)
             for m, pad, a in variants]
    g = graph_of_cases("grid_sample3", cases)
    feed = {k: v for i in range(len(variants)) for k, v in ((f"c{i}_x", x), (f"c{i}_g", grid))}
    got = run_graph(g, feed)
    for i, (m, pad, a) in enumerate(variants):
        want = reference_node("GridSample", {"x": x, "g": grid}, {"mode": m, "padding_mode": pad,
                                                                  "align_corners": int(a)}, opset=20)[0]
        np.testing.assert_allclose(got[g.outputs[i]], want, rtol=0, atol=1e-5 * float(np.abs(want).max()))
    assert_c_equals_reference(g, [feed])
