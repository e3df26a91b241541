"""LayerNorm: the reference against onnxruntime's LayerNormalization (several axes, with and
without bias, the Mean and InvStdDev outputs; ONNX's reference for axis 0 without bias, where
onnxruntime 1.32 crashes), the generated C against the reference."""

import numpy as np

from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node, reference_node
from op_testing import assert_c_equals_reference, graph_of_cases

SHAPE = (2, 3, 8)


def test_layer_norm_matches_onnxruntime_and_c():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(SHAPE) * 3 + 1).astype(np.float32)
    variants = [(-1, True), (1, True), (0, False)]
    weights = {axis: (rng.standard_normal(SHAPE[axis:]).astype(np.float32),
                      rng.standard_normal(SHAPE[axis:]).astype(np.float32)) for axis, _ in variants}
    cases = []
    for axis, bias in variants:
        def case(b, p, axis=axis, bias=bias):
            s, c = weights[axis]
            ins = [b.input(f"{p}x", "float32", SHAPE), b.const(f"{p}s", s.reshape(-1))]
            if bias:
                ins.append(b.const(f"{p}b", c.reshape(-1)))
            return b.node("LayerNorm", ins, axis=axis, epsilon=1e-3)
        cases.append(case)
    g = graph_of_cases("layer_norm", cases)
    feed = {f"c{k}_x": x for k in range(len(variants))}
    got = run_graph(g, feed)
    for k, (axis, bias) in enumerate(variants):
        s, c = weights[axis]
        run = ort_node if bias else reference_node
        want = run("LayerNormalization", {"x": x, "s": s, "b": c if bias else None},
                   {"axis": axis, "epsilon": 1e-3}, opset=17)[0]
        np.testing.assert_allclose(got[g.outputs[k]], want, rtol=0, atol=2e-6 * float(np.abs(want).max()))
    assert_c_equals_reference(g, [feed])


def test_mean_and_inv_std_dev_outputs():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    s = rng.standard_normal(SHAPE[1:]).astype(np.float32)
    b = GraphBuilder("ln_stats")
    outs = b.node("LayerNorm", [b.input("x", "float32", SHAPE), b.const("s", s.reshape(-1))], axis=1, with_stats=True)
    g = b.output(*outs).build()
    want = ort_node("LayerNormalization", {"x": x, "s": s}, {"axis": 1}, opset=17, n_out=3)
    got = run_graph(g, {"x": x})
    for name, w in zip(outs, want):
        assert got[name].shape == w.shape
        np.testing.assert_allclose(got[name], w, rtol=0, atol=2e-6 * float(np.abs(w).max()))
    assert_c_equals_reference(g, [{"x": x}])
