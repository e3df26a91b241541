"""RMSNorm: the reference against ONNX's reference RMSNormalization (onnxruntime has no
opset-23 kernel here), the generated C against the reference."""

import numpy as np

from codegen.ir import run_graph
from float_binary_testing import reference_node
from op_testing import assert_c_equals_reference, graph_of_cases

SHAPE = (2, 3, 8)


def test_rms_norm_matches_onnx_and_c():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(SHAPE) * 3 + 1).astype(np.float32)
    axes = [-1, 1]
    scales = {a: rng.standard_normal(SHAPE[a:]).astype(np.float32) for a in axes}
    cases = [lambda b, p, a=a: b.node("RMSNorm", [b.input(f"{p}x", "float32", SHAPE),
                                                  b.const(f"{p}s", scales[a].reshape(-1))], axis=a, epsilon=1e-4)
             for a in axes]
    g = graph_of_cases("rms_norm", cases)
    feed = {f"c{k}_x": x for k in range(len(axes))}
    got = run_graph(g, feed)
    for k, a in enumerate(axes):
        want = reference_node("RMSNormalization", {"x": x, "s": scales[a]}, {"axis": a, "epsilon": 1e-4},
                              opset=23)[0]
        np.testing.assert_allclose(got[g.outputs[k]], want, rtol=0, atol=2e-6 * float(np.abs(want).max()))
    assert_c_equals_reference(g, [feed])
