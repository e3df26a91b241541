"""Control flow: IF and WHILE compiled without an interpreter, their subgraphs inlined.

IF: both branches are inlined on the operator's inputs and each output selects between them
(Where on the condition); a constant condition keeps one branch. Branches hold no state, so
computing both gives TFLite Micro's results.

WHILE: unrolled at compile time. The condition subgraph is inlined on the loop values and
evaluated from constants (codegen.ir.interpreter's op references); while it holds, the body is
inlined on the values it produced. A condition that depends on run-time values, or more than
MAX_TRIPS trips, is refused with the reason.

Subgraphs that touch resource variables or variable tensors are refused: their state would
need the persistent region of the main subgraph (ops_state.py).
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.tflite import compose
from codegen.frontends.tflite.converter import CONVERTERS, converts
from codegen.frontends.tflite.importer import Importer, OpContext, execution_order
from codegen.frontends.tflite.reader import ModelInfo
from codegen.ir.graph import Graph
from codegen.ops.registry import get_op
from codegen.errors import KilnError

MAX_TRIPS = 1024
_STATEFUL = ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE")


class _Subgraph(Importer):
    """Converts one subgraph into the main graph's builder, its inputs bound to given values
    and its names prefixed (a subgraph may be inlined many times)."""

    def __init__(self, parent: Importer, model: ModelInfo, prefix: str, inputs: list[str]):
        super().__init__(model, parent.b.g.name, {})
        self.b = parent.b
        self.names = [f"{prefix}/{n}" for n in self.names]
        self.defined = dict(zip(model.inputs, inputs))
        self.resized = parent.resized

    def _bind_inputs(self, input_shapes) -> None:
        """Bound by the caller to values of the main graph (no graph inputs of their own)."""


def inline(ctx: OpContext, index: int, inputs: list[str], prefix: str) -> list[str]:
    """Subgraph `index` converted on `inputs`: the Kiln values of its outputs."""
    subgraphs = ctx.imp.model.subgraphs
    if not 0 < index < len(subgraphs):
        raise ctx.error(f"subgraph index {index} is not a subgraph of the model (it has {len(subgraphs)})")
    sub = subgraphs[index]
    if isinstance(sub, KilnError):
        raise ctx.error(f"cannot read subgraph {index}: {sub.message}")
    if len(sub.inputs) != len(inputs):
        raise ctx.error(f"subgraph {index} takes {len(sub.inputs)} inputs, the operator gives {len(inputs)}")
    if any(op.code in _STATEFUL for op in sub.operators) or any(t.variable for t in sub.tensors):
        raise ctx.error(f"subgraph {index} keeps state (resource variables or variable tensors), which Kiln "
                        "supports only in the main subgraph")
    for k, (i, name) in enumerate(zip(sub.inputs, inputs)):
        got = ctx.imp.b.g.values[name]
        if sub.tensors[i].dtype != got.dtype:
            raise ctx.error(f"subgraph {index} input {k} is {sub.tensors[i].type_name.lower()}, the operator "
                            f"gives {got.dtype}")
    imp = _Subgraph(ctx.imp, sub, prefix, inputs)
    imp.convert_all(execution_order(sub, imp.names), CONVERTERS)
    return [imp.value(o, ctx.name) for o in sub.outputs]


@converts("IF", inputs=(1, None), outputs=None)
def if_(ctx: OpContext) -> None:
    o = ctx.options("IfOptions")
    cond_t = ctx.tensor(0)
    if cond_t.type_name != "BOOL" or int(np.prod(cond_t.shape)) != 1:
        raise ctx.error(f"the condition must be one bool, got {cond_t.type_name.lower()}{list(cond_t.shape)}")
    args = [ctx.input(k) for k in range(1, len(ctx.op.inputs))]
    if cond_t.data is not None:  # known now: only the branch taken
        taken = int(o["ThenSubgraphIndex"] if cond_t.data.reshape(-1)[0] else o["ElseSubgraphIndex"])
        for k, value in enumerate(inline(ctx, taken, args, f"{ctx.name}/branch")):
            compose.emit_output(ctx, k, "Reshape", [value], shape=ctx.out_tensor(k).shape)
        return
    then = inline(ctx, int(o["ThenSubgraphIndex"]), args, f"{ctx.name}/then")
    other = inline(ctx, int(o["ElseSubgraphIndex"]), args, f"{ctx.name}/else")
    cond = compose.step(ctx, "Reshape", [ctx.input(0)], "cond", shape=())
    if len(then) != len(ctx.op.outputs) or len(other) != len(ctx.op.outputs):
        raise ctx.error(f"has {len(ctx.op.outputs)} outputs, its branches give {len(then)} and {len(other)}")
    for k, (a, b) in enumerate(zip(then, other)):
        compose.emit_output(ctx, k, "Where", [cond, a, b])


@converts("WHILE", inputs=(0, None), outputs=None)
def while_(ctx: OpContext) -> None:
    o = ctx.options("WhileOptions")
    values = [ctx.input(k) for k in range(len(ctx.op.inputs))]
    for trip in range(MAX_TRIPS + 1):
        (cond,) = inline(ctx, int(o["CondSubgraphIndex"]), values, f"{ctx.name}/cond{trip}")
        known = static_value(ctx.imp.b.g, cond)
        if known is None:
            raise ctx.error("the loop condition depends on run-time values; Kiln unrolls only loops whose trip "
                            "count is known at compile time")
        if not bool(np.asarray(known).reshape(-1)[0]):
            break
        if trip == MAX_TRIPS:
            raise ctx.error(f"runs more than {MAX_TRIPS} trips; Kiln unrolls loops up to that many")
        values = inline(ctx, int(o["BodySubgraphIndex"]), values, f"{ctx.name}/body{trip}")
    if len(values) != len(ctx.op.outputs):
        raise ctx.error(f"has {len(ctx.op.outputs)} outputs for {len(values)} loop values")
    for k, value in enumerate(values):
        compose.emit_output(ctx, k, "Reshape", [value], shape=ctx.out_tensor(k).shape)


def static_value(g: Graph, name: str) -> np.ndarray | None:
    """`name`'s value when it follows from constants alone (the op references), else None."""
    producers = g.producers()
    memo: dict[str, np.ndarray | None] = {}

    def value(v: str) -> np.ndarray | None:
        if v not in memo:
            memo[v] = g.values[v].data if g.values[v].is_const else compute(v)
        return memo[v]

    def compute(v: str) -> np.ndarray | None:
        node = producers.get(v)
        if node is None:
            return None
        args = [value(i) if i else None for i in node.inputs]
        if any(a is None for i, a in zip(node.inputs, args) if i):
            return None
        return get_op(node.op).reference(node, args, g)[node.outputs.index(v)]

    return value(name)
