"""BatchNorm: against onnxruntime's BatchNormalization (within 1e-5 relative), NHWC against
the formula, and the generated C (a folded per-channel multiply-add) against the reference."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from helpers import build_graph
from op_testing import (assert_c_equals_reference, finish, graph_of_cases, random_feeds,
                        run_onnx_node)

ROLES = ("scale", "bias", "mean", "var")


def stats(rng, channels: int) -> dict[str, np.ndarray]:
    sign = rng.choice([-1.0, 1.0], channels)
    return {"scale": (rng.uniform(0.5, 2.0, channels) * sign).astype(np.float32),
            "bias": rng.standard_normal(channels).astype(np.float32),
            "mean": rng.standard_normal(channels).astype(np.float32),
            "var": rng.uniform(0.01, 3.0, channels).astype(np.float32)}


def case(shape, params: dict[str, np.ndarray], **attrs):
    def build(b: GraphBuilder, prefix: str) -> str:
        x = b.input(f"{prefix}x", "float32", shape)
        consts = [b.const(f"{prefix}{r}", params[r]) for r in ROLES]
        return b.node("BatchNorm", [x, *consts], **attrs)
    return build


ORT_CASES = [((1, 8, 5, 5), 1e-5), ((2, 3, 4), 1e-3), ((4, 6), 0.1)]


@pytest.mark.parametrize("shape,epsilon", ORT_CASES)
def test_matches_onnxruntime(shape, epsilon):
    """Within 1e-5 of the largest output (x * k + s and ORT's folding round differently)."""
    params = stats(np.random.default_rng(len(shape)), shape[1])
    g = graph_of_cases("bn", [case(shape, params, epsilon=epsilon, axis=1)])
    for feed in random_feeds(g, 2, 1):
        want = run_onnx_node("BatchNormalization", {"x": feed["c0_x"]}, {"epsilon": epsilon},
                             {r: params[r] for r in ROLES}, opset=15)
        got = run_graph(g, feed)[g.outputs[0]]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


def test_channels_last_axis():
    rng = np.random.default_rng(5)
    params = stats(rng, 6)
    g = graph_of_cases("bn", [case((1, 3, 3, 6), params, axis=-1, epsilon=1e-4)])
    x = random_feeds(g, 1, 2)[0]["c0_x"]
    want = ((x.astype(np.float64) - params["mean"]) / np.sqrt(params["var"].astype(np.float64) + 1e-4)
            * params["scale"] + params["bias"])
    np.testing.assert_allclose(run_graph(g, {"c0_x": x})[g.outputs[0]], want, rtol=1e-5, atol=1e-5)
    call = next(c for c in build_graph(g).lowered.calls if c.kernel == "batch_norm_f32")
    assert (call.params["outer"], call.params["channels"], call.params["inner"]) == (9, 6, 1)


def test_generated_c_equals_reference_bit_for_bit():
    """The C uses the reference's folded constants and the same float32 operations."""
    cases = [case(s, stats(np.random.default_rng(len(s)), s[1]), epsilon=e, axis=1) for s, e in ORT_CASES]
    cases.append(case((1, 3, 3, 6), stats(np.random.default_rng(5), 6), axis=-1, epsilon=1e-4))
    g = graph_of_cases("bn", cases)
    assert_c_equals_reference(g, random_feeds(g, 2, 3), rtol=0.0)


def test_non_constant_statistics_are_refused():
    b = GraphBuilder("bn")
    x = b.input("x", "float32", (1, 2, 2, 2))
    ins = [b.input(r, "float32", (2,)) for r in ROLES]
    g = finish(b, b.node("BatchNorm", [x, *ins]))
    with pytest.raises(KilnError, match="not a constant") as err:
        build_graph(g)
    assert err.value.node == g.nodes[0].name


def test_wrong_statistics_length_is_refused():
    b = GraphBuilder("bn")
    x = b.input("x", "float32", (1, 3, 2, 2))
    consts = [b.const(r, np.ones(2, np.float32)) for r in ROLES]
    with pytest.raises(KilnError, match="expected float32\\[3\\]"):
        b.node("BatchNorm", [x, *consts])
