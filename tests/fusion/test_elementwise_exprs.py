"""Every float32 elementwise op's C expression is written once (a macro of
templates/kernels/reference/_elementwise_exprs.c.j2) and fuses: each op of the registry that a
fused chain can run is built inside a chain (Add -> op -> Neg) with every fusion taken, and
without fusion (its own kernel), compiled with the strict flags, run on the host and compared
with the op's numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.emit.render import _ENV
from codegen.ir import run_graph
from codegen.ir.builder import GraphBuilder
from codegen.ir.graph import Node
from codegen.ops.binary import BinaryOp
from codegen.ops.broadcast_binary import BroadcastBinaryOp
from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.fused_elementwise import step_expr, step_fn
from codegen.ops.registry import all_ops
from codegen.ops.unary import UnaryOp
from helpers import build_graph
from codegen.verify.host import run_generated

SHAPE = (2, 3, 8)
# attributes choosing one of an op's kernels or its float expression
VARIANTS = {"Gelu": [{}, {"approximate": "tanh"}], "Mod": [{"fmod": 1}], "Clip": [{"min": 0.2, "max": 0.7}]}
# the chain's first step moves x in [0.1, 0.9] into the op's domain
OFFSET = {"Acosh": 1.5}
MACROS = _ENV.get_template("kernels/reference/_elementwise_exprs.c.j2").module


def _float_elementwise_ops() -> list[tuple[str, dict]]:
    ops = [(name, op) for name, op in sorted(all_ops().items())
           if issubclass(op, FloatUnaryOp) or issubclass(op, UnaryOp) and op.float_kernel is not None or
           issubclass(op, BinaryOp) and f"{op.kernel_stem}_f32" in op.kernels or  # not the int8-only QuantizedDiv
           (issubclass(op, BroadcastBinaryOp) and "float32" in op.dtypes and op.out_dtype is None)]
    return [(name, attrs) for name, op in ops for attrs in VARIANTS.get(name, [{}])]


CASES = _float_elementwise_ops()


def test_every_float_elementwise_op_has_an_expression():
    for name, attrs in CASES:
        node = Node(name, name.lower(), ["x"], ["y"], {**all_ops()[name].attributes, **attrs})
        fn = step_fn(node, "float32")
        assert fn is not None, f"{name} cannot fuse"
        expr = step_expr(node, fn)
        assert expr == "" and name == "Clip" or hasattr(MACROS, expr), f"{name}: no macro {expr!r}"
    assert len(CASES) >= 45


def _graph():
    b = GraphBuilder("exprs")
    x = b.input("x", "float32", SHAPE)
    y = b.input("y", "float32", SHAPE)
    outs = []
    for k, (name, attrs) in enumerate(CASES):
        h = b.node("Add", [x, b.const(f"c{k}", np.float32(OFFSET.get(name, 0.0)))], name=f"shift{k}")
        binary = issubclass(all_ops()[name], (BinaryOp, BroadcastBinaryOp))
        h = b.node(name, [h, y] if binary else [h], name=f"op{k}", **attrs)
        outs.append(b.node("Neg", [h], name=f"neg{k}", outputs=[f"out{k}"]))
    return b.output(*outs).build()


@pytest.mark.parametrize("fusion", ["all", "off"])
def test_every_float_elementwise_op_fuses_and_matches_its_reference(fusion):
    g = _graph()
    res = build_graph(g, "exprs", fusion=fusion)
    groups = {node: group["kernel"] for group in res.manifest["fusion_groups"] for node in group["nodes"]}
    for k, (name, _) in enumerate(CASES):
        fused = groups[f"op{k}"].startswith("fused_elementwise_f32__")
        assert fused == (fusion == "all"), f"{name}: {groups[f'op{k}']}"
    rng = np.random.default_rng(0)
    samples = [{"x": rng.uniform(0.1, 0.9, SHAPE).astype(np.float32),
                "y": rng.uniform(0.5, 1.5, SHAPE).astype(np.float32)} for _ in range(2)]
    for sample, got in zip(samples, run_generated(res.files, "exprs", samples)):
        want = run_graph(g, sample)
        for k, (name, attrs) in enumerate(CASES):
            np.testing.assert_allclose(got[f"out{k}"], want[f"out{k}"], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} {attrs} (fusion {fusion})")
