"""Build FusedElementwise nodes (codegen/ops/fused_elementwise.py) from chains the planner chose."""

from __future__ import annotations

from codegen.ir.graph import Graph, Node
from codegen.ops.fused_elementwise import ChainBody, running_inputs


def chain_body(g: Graph, nodes: list[Node]) -> Graph:
    """The sub-graph of `nodes`: their inputs (constants with data) and outputs."""
    names = {i for n in nodes for i in n.inputs if i} | {o for n in nodes for o in n.outputs}
    body = Graph(f"{g.name}_chain", values={k: g.values[k] for k in sorted(names)}, nodes=list(nodes))
    produced = {o for n in nodes for o in n.outputs}
    body.inputs = [i for i in dict.fromkeys(i for n in nodes for i in n.inputs if i)
                   if i not in produced and not g.values[i].is_const]
    body.outputs = [nodes[-1].outputs[0]]
    return body


def fused_node(g: Graph, nodes: list[Node], name: str) -> Node:
    """One FusedElementwise node computing the chain `nodes` (first node's first running input)."""
    body = chain_body(g, nodes)
    running = running_inputs(nodes, g)
    operands = [_operand(n, r) for n, r in zip(nodes, running)]
    inputs = [running[0]] + [o for o in operands if o]
    origin = tuple(o for n in nodes for o in (n.origin or (n.name,)))
    return Node("FusedElementwise", name, inputs, [nodes[-1].outputs[0]], {"body": ChainBody(body)}, origin)


def _operand(node: Node, running: str) -> str:
    """The other input of a binary step ('' for a unary one)."""
    if len(node.inputs) < 2:
        return ""
    return node.inputs[1] if node.inputs[0] == running else node.inputs[0]


