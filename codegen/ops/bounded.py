"""Outputs whose length depends on the data (NonZero, Unique, NonMaxSuppression).

Kiln's shapes are static, so such an output is given its static upper bound on the axis whose
extent depends on the data: its buffer is sized for the bound, the kernel writes the actual
tensor compactly (row-major in its actual shape, the rest of the buffer zeros) and reports the
actual extent of that axis through an `int32_t *` argument (LengthArg), as firmware detection
heads do (TFLite's detection postprocess: max detections + num_detections). The generated
`run` function passes that pointer through as an out-parameter, one per such graph output.

The rest of the graph only knows the bound, so such a tensor may only be a graph output,
possibly through unary elementwise ops (the Cast to a model's declared output type): those
compute the whole bound and keep the length. An op declares which of its outputs are bounded
with a `bounded_outputs(node, g)` classmethod returning {output index: axis}.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.registry import OpKind, get_op


@dataclass(frozen=True)
class LengthArg:
    """Kernel argument: where to write the actual extent of `value`'s bounded axis (an
    `int32_t *`: the length of the graph output `value` reaches, NULL when none does)."""

    value: str


def _passes_length(node: Node, g: Graph) -> bool:
    """A unary elementwise op (a Cast to the output's declared dtype, say) keeps its input's
    data-dependent length: it computes the whole bound, the compact tensor included."""
    ins = [i for i in node.inputs if i]
    return (get_op(node.op).kind is OpKind.ELEMENTWISE and len(ins) == 1 and len(node.outputs) == 1
            and g.values[node.outputs[0]].shape == g.values[ins[0]].shape)


def bounded_values(g: Graph) -> dict[str, tuple[int, int]]:
    """{value: (axis, bound)} for every value with a data-dependent length: the outputs an op
    declares, and the results of unary elementwise ops on them."""
    found: dict[str, tuple[int, int]] = {}
    for node in g.nodes:
        declare = getattr(get_op(node.op), "bounded_outputs", None)
        if declare is not None:
            for k, axis in declare(node, g).items():
                if node.outputs[k]:
                    found[node.outputs[k]] = (axis, g.values[node.outputs[k]].shape[axis])
        elif node.inputs and node.inputs[0] in found and _passes_length(node, g):
            found[node.outputs[0]] = found[node.inputs[0]]
    return found


def _followers(name: str, g: Graph, consumers: dict) -> list[str]:
    """`name` and the values computed from it by unary elementwise ops, in order."""
    chain = [name]
    for value in chain:
        chain += [n.outputs[0] for n in consumers.get(value, []) if _passes_length(n, g)]
    return chain


def length_output(name: str, g: Graph) -> str | None:
    """The graph output whose length the kernel computing `name` reports (None: no caller reads it)."""
    return next((v for v in _followers(name, g, g.consumers()) if v in g.outputs), None)


def check_graph_outputs_only(node: Node, g: Graph) -> None:
    """A bounded output may reach one graph output, through unary elementwise ops at most: any
    other consumer would read the whole bound as data."""
    consumers = g.consumers()
    declared = getattr(get_op(node.op), "bounded_outputs")(node, g)
    for name in (node.outputs[k] for k in declared if node.outputs[k]):
        chain = _followers(name, g, consumers)
        for value in chain:
            other = next((n for n in consumers.get(value, []) if not _passes_length(n, g)), None)
            if other is not None:
                raise KilnError(f"{node.op} output '{name}' has a data-dependent length and feeds '{other.name}'; "
                                "Kiln compiles it only as a graph output", node=node.name)
        if len([v for v in chain if v in g.outputs]) > 1:
            raise KilnError(f"{node.op} output '{name}' has a data-dependent length and reaches several graph "
                            "outputs; Kiln reports one length per such output", node=node.name)


def fits_bound(g: Graph, name: str, shape: tuple[int, ...]) -> bool:
    """Whether a reference result of `shape` for value `name` fits its static bound (equal on
    every axis but a data-dependent one, at most the bound there)."""
    bounded = bounded_values(g).get(name)
    static = g.values[name].shape
    return bounded is not None and len(shape) == len(static) and all(
        s == b if k != bounded[0] else s <= b for k, (s, b) in enumerate(zip(shape, static)))


def manifest_entry(g: Graph, name: str) -> dict:
    """The manifest fields of a graph output with a data-dependent axis (none for the others)."""
    bounded = bounded_values(g).get(name)
    return {} if bounded is None else {"length_axis": bounded[0], "max_length": bounded[1]}
