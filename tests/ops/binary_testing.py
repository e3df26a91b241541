"""Shared cases of the Add / Sub / Mul tests (tests/ops/test_add.py, test_sub.py, test_mul.py).

float32: the op's reference against onnxruntime. int8: the op's reference against the
TFLite Micro interpreter on a one-op .tflite with random quantization parameters, bit for bit.
Then the generated C of all cases at once against the reference (bit for bit on int8).
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from op_testing import assert_c_equals_reference, finish, graph_of_cases, random_feeds, run_onnx_node

ACTIVATIONS = ["none", "relu", "relu6", "relu_n1_to_1"]
# (a shape, b shape): same shape, per-channel vector, scalar, both sides broadcasting, 5-D.
SHAPES = [
    ((1, 4, 4, 8), (1, 4, 4, 8)),
    ((1, 4, 4, 8), (1, 1, 1, 8)),
    ((1, 4, 4, 8), ()),
    ((), (2, 3)),
    ((2, 1, 3, 1), (1, 4, 1, 5)),
    ((1, 1, 1, 8), (1, 4, 4, 1)),
    ((2, 3, 4, 5, 6), (1, 1, 1, 5, 6)),
]
TFLITE_ACT = {"none": "NONE", "relu": "RELU", "relu6": "RELU6", "relu_n1_to_1": "RELU_N1_TO_1"}
CLIP = {"none": (-np.inf, np.inf), "relu": (0.0, np.inf), "relu6": (0.0, 6.0),
        "relu_n1_to_1": (-1.0, 1.0)}


def case(op: str, sa, sb, activation: str, quants=None):
    """A graph_of_cases case: `op` on two inputs (int8 when `quants` = (qa, qb, qo) is given)."""
    def build(b: GraphBuilder, prefix: str) -> str:
        dtype = "float32" if quants is None else "int8"
        qa, qb, qo = [None] * 3 if quants is None else [Quant.of(*q) for q in quants]
        x = b.input(f"{prefix}a", dtype, sa, qa)
        y = b.input(f"{prefix}b", dtype, sb, qb)
        return b.node(op, [x, y], activation=activation, quant=qo)
    return build


def check_float(op: str, sa, sb, activation: str, seed: int = 0) -> None:
    """The reference against onnxruntime (clamped afterwards for a fused activation)."""
    g = graph_of_cases(op, [case(op, sa, sb, activation)])
    for feed in random_feeds(g, 2, seed):
        want = np.clip(run_onnx_node(op, {"a": feed["c0_a"], "b": feed["c0_b"]}), *CLIP[activation])
        np.testing.assert_allclose(run_graph(g, feed)[g.outputs[0]], want, rtol=1e-6, atol=0)


def rand_quants(op: str, seed: int) -> list[tuple[float, int]]:
    """Random (scale, zero point) of a, b and the output, the output scale sized so that the
    result mostly stays inside the int8 range (a test that only saturates proves little)."""
    rng = np.random.default_rng(seed)
    sa, sb = (float(np.float32(10 ** rng.uniform(-2.5, -0.5))) for _ in range(2))
    so = (sa + sb) * 2 if op in ("Add", "Sub") else sa * sb * 128
    so = float(np.float32(so * rng.uniform(0.5, 1.5)))
    za, zb = (int(z) for z in rng.integers(-128, 128, 2))
    return [(sa, za), (sb, zb), (so, int(rng.integers(-40, 41)))]


def tflm_binary(op: str, sa, sb, quants, activation: str, a, b) -> np.ndarray:
    """The output of a one-op int8 ADD / SUB / MUL model in the TFLite Micro interpreter."""
    from tflite_models import TensorSpec, run_tflm, single_op_model

    qa, qb, qo = quants
    model = single_op_model(
        op.upper(), [TensorSpec(sa, "int8", *qa), TensorSpec(sb, "int8", *qb)],
        [TensorSpec(np.broadcast_shapes(sa, sb), "int8", *qo)],
        {"fused_activation_function": TFLITE_ACT[activation]})
    return run_tflm(model, a, b)[0]


def check_int8(op: str, sa, sb, activation: str, seed: int) -> None:
    """The reference against TFLM, bit for bit, on random quantization parameters."""
    quants = rand_quants(op, seed)
    g = graph_of_cases(op, [case(op, sa, sb, activation, quants)])
    for feed in random_feeds(g, 2, seed):
        want = tflm_binary(op, sa, sb, quants, activation, feed["c0_a"], feed["c0_b"])
        got = run_graph(g, feed)[g.outputs[0]]
        np.testing.assert_array_equal(got, np.asarray(want).reshape(got.shape))
        if activation == "none" and got.size > 16:
            assert np.mean((got == -128) | (got == 127)) < 0.5, "mostly saturated: a weak test"


def check_c(op: str, dtype: str) -> None:
    """Every shape and activation case in one graph: the generated C equals the reference."""
    cases = []
    for k, (sa, sb) in enumerate(SHAPES):
        cases.append(case(op, sa, sb, "none", rand_quants(op, k) if dtype == "int8" else None))
    for k, act in enumerate(ACTIVATIONS[1:]):
        quants = rand_quants(op, 50 + k) if dtype == "int8" else None
        cases.append(case(op, (1, 4, 4, 8), (1, 1, 1, 8), act, quants))
    g = graph_of_cases(op, cases)
    assert_c_equals_reference(g, random_feeds(g, 2, 1))


def check_too_many_dims(op: str) -> None:
    """A broadcast that leaves five distinct loop dimensions is refused, naming the node."""
    from helpers import build_graph

    b = GraphBuilder(op)
    x = b.input("a", "float32", (2, 1, 3, 1, 2))
    y = b.input("b", "float32", (1, 4, 1, 5, 1))
    g = finish(b, b.node(op, [x, y]))
    with pytest.raises(KilnError, match="distinct dimensions") as err:
        build_graph(g)
    assert err.value.node == g.nodes[0].name
