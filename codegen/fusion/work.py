"""What a node, or a candidate fused kernel, does: its `Work` for the cost model.

Read from the graph only (shapes, dtypes, constants, the op's kind and MAC count), never from
op names, so the cost model stays a function of kinds and sizes.
"""

from __future__ import annotations

import numpy as np

from codegen.fusion.costmodel import Step, Work
from codegen.ir.graph import Graph, Node
from codegen.ir.types import np_dtype
from codegen.ops.registry import OpKind, get_op

# Registers a step keeps live across the loop: an int8 broadcast step the pointer to TFLM's
# rescale constants and its operand offset (the per-element function reloads the rest, as
# the unfused kernel does); a table look-up its table; a float step its clamp bounds.
_STEP_CONSTANTS = {("int8", OpKind.BROADCAST): 2, ("int8", OpKind.ELEMENTWISE): 1}


def kind_of(node: Node) -> OpKind:
    return get_op(node.op).kind


def _dtype(g: Graph, node: Node) -> str:
    first = next((i for i in node.inputs if i), node.outputs[0])
    return g.values[first].dtype


def step_of(node: Node, g: Graph) -> Step:
    """The elementwise step a node becomes inside a fused loop."""
    kind, dtype = kind_of(node), _dtype(g, node)
    operand = sum(1 for i in node.inputs if i) > 1
    constants = _STEP_CONSTANTS.get((dtype, kind), _clamp_bounds(node) if dtype == "float32" else 1)
    return Step(kind=kind, dtype=dtype, constants=constants, operand=operand)


def _clamp_bounds(node: Node) -> int:
    """Finite clamp bounds a float step tests: a fused activation's two, or a clamp's finite
    `min` / `max` attributes."""
    if node.attrs.get("activation", "none") != "none":
        return 2
    return sum(1 for k in ("min", "max") if k in node.attrs and abs(float(node.attrs[k])) != float("inf"))


def _window(node: Node, g: Graph) -> int:
    """Positions of a MAC op's kernel window: the spatial dims of its constant weights (OHWI or
    [1,KH,KW,C]; 1 for [O,K]), else a `kernel` attribute (pooling)."""
    w = g.values[node.inputs[1]] if len(node.inputs) > 1 and node.inputs[1] else None
    if w is not None and w.is_const and len(w.shape) >= 2:
        return int(np.prod(w.shape[1:-1], dtype=np.int64))
    return int(np.prod(node.attrs.get("kernel", (1,)), dtype=np.int64))


def node_work(node: Node, g: Graph, intermediates: frozenset[str] = frozenset()) -> Work:
    """The Work of a node run as its own kernel. `intermediates`: outputs that only feed the
    rest of a candidate group (counted as arena bytes this kernel materialises)."""
    op = get_op(node.op)
    dtype = _dtype(g, node)
    outs = [g.values[o] for o in node.outputs]
    ins = [g.values[i] for i in node.inputs if i]
    acts = [v for v in ins if not v.is_const]
    weights = sum(v.nbytes for v in ins if v.is_const)
    elementwise = op.kind in (OpKind.ELEMENTWISE, OpKind.BROADCAST)
    out_elements = sum(v.size for v in outs)
    # An elementwise loop loads every input once per output element (broadcast or not).
    reads = out_elements * len(ins) if elementwise else sum(v.size for v in acts)
    mac = op.kind == OpKind.OUT_ELEMWISE_FUSABLE
    return Work(kind=op.kind, dtype=dtype, macs=op.macs(node, g) if mac else 0,
                taps=out_elements * _window(node, g) if mac else 0,
                out_elements=out_elements, in_elements=reads,
                itemsize=np_dtype(dtype).itemsize, weight_bytes=weights,
                steps=(step_of(node, g),) if elementwise else _epilogue(node, g),
                arena_bytes=sum(v.nbytes for v in outs if v.name in intermediates))


def _epilogue(node: Node, g: Graph) -> tuple[Step, ...]:
    """The steps a MAC op runs in its epilogue: the node of an op that stands for one (a
    residual Add, codegen/ops/conv2d_add.py) viewed as it was before fusion."""
    view = getattr(get_op(node.op), "epilogue_view", None)
    if view is None:
        return ()
    step, step_graph = view(node, g)
    return (step_of(step, step_graph),)


def chain_work(nodes: list[Node], g: Graph, operands: list[str]) -> Work:
    """The Work of one fused kernel running `nodes` as steps over the last node's output."""
    last = g.values[nodes[-1].outputs[0]]
    dtype = _dtype(g, nodes[0])
    reads = last.size * (1 + len(operands))  # one load per tensor and element
    weights = sum(g.values[o].nbytes for o in operands if g.values[o].is_const)
    return Work(kind=OpKind.ELEMENTWISE, dtype=dtype, out_elements=last.size, in_elements=reads,
                itemsize=np_dtype(dtype).itemsize, weight_bytes=weights,
                steps=tuple(step_of(n, g) for n in nodes))
