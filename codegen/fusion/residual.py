"""Residual fusion: an int8 convolution with the Add of a ResNet block in its epilogue.

A candidate is a Conv2D whose output is read by one int8 Add only (not a graph output), the
Add's other input (the residual) computed, both of the output's shape (no broadcast). It
becomes one Conv2DAdd node (codegen/ops/conv2d_add.py) at the Add's place in the order (its
inputs are all computed by then: the convolution's input, and the residual). When both Add
inputs come from such convolutions (a block with a projection shortcut), both are candidates
and the planner takes the better one.

Legal on every target; offered where the kernel that would run the convolution has a fused
variant (the same variant implements conv2d_add_s8), since elsewhere the fused kernel would
trade a faster convolution (NEON) for a slower one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from codegen.fusion.costmodel import Work
from codegen.fusion.work import node_work, step_of
from codegen.ir.graph import Graph, Node
from codegen.ops.add import Add
from codegen.ops.conv2d_add import CONV_ATTRS, Conv2DAdd
from codegen.passes.graph_edit import clone
from codegen.resources import TEMPLATES

# Bytes of the epilogue's rescale tables (two inputs x 256 values x int32).
_TABLE_BYTES = 2 * 256 * 4
_FUSED_KERNEL, _CONV_KERNEL = Conv2DAdd.kernels[0], "conv2d_s8"
_CONV, _ADD = Conv2DAdd.fuses


@dataclass(frozen=True)
class ResidualCandidate:
    conv: str
    add: str
    residual: str  # the Add's other input


def _has_kernel(kernel: str, variant: str) -> bool:
    """Whether `variant` implements `kernel`: its template exists (every template has its spec,
    tests/core/test_kernel_registry.py; fusion runs before the kernel registry is imported)."""
    return (TEMPLATES / "kernels" / variant / f"{kernel}.c.j2").is_file()


def fused_variant(variants: tuple[str, ...]) -> str | None:
    """The variant that would run the fused kernel, if it is the one that runs the convolution."""
    conv = next((v for v in variants if _has_kernel(_CONV_KERNEL, v)), None)
    fused = next((v for v in variants if _has_kernel(_FUSED_KERNEL, v)), None)
    return fused if fused == conv else None


def residual_candidates(g: Graph, variant: str | None = None) -> list[ResidualCandidate]:
    """Every (Conv2D, Add) pair that can become one Conv2DAdd node, in graph order; for the DSP
    and Helium kernels (`variant`), only Adds whose output multiplier shifts right (their
    epilogues' requantization assumes it; TFLM's Add constants give that unless the output
    scale is about 2^-19 of the inputs')."""
    producers, consumers = g.producers(), g.consumers()
    found = []
    for add in g.nodes:
        if add.op != _ADD or len(add.inputs) != 2 or len(set(add.inputs)) != 2:
            continue
        out = g.values[add.outputs[0]]
        ins = [g.values[i] for i in add.inputs]
        if out.dtype != "int8" or any(v.dtype != "int8" or v.is_const or v.quant is None or v.shape != out.shape
                                      for v in ins):
            continue
        if variant in ("cortex_m_dsp", "mve") and Add.int8_params(add, g).output_shift >= 0:
            continue
        for k, name in enumerate(add.inputs):
            conv = producers.get(name)
            if conv is None or conv.op != _CONV or g.values[conv.inputs[0]].dtype != "int8":
                continue
            if len(consumers.get(name, [])) != 1 or name in g.outputs:
                continue
            found.append(ResidualCandidate(conv.name, add.name, add.inputs[1 - k]))
    return found


def fused_work(conv: Node, add: Node, g: Graph) -> Work:
    """The fused kernel: the convolution's work, the residual read once per output, the Add
    run as one step of its epilogue, its two rescale tables in flash."""
    base = node_work(conv, g)
    return replace(base, in_elements=base.in_elements + base.out_elements,
                   weight_bytes=base.weight_bytes + _TABLE_BYTES, steps=(step_of(add, g),))


def unfused_works(conv: Node, add: Node, g: Graph) -> list[Work]:
    return [node_work(conv, g, frozenset(conv.outputs)), node_work(add, g)]


def apply_residual(g: Graph, cand: ResidualCandidate) -> Graph:
    """The graph with the pair replaced by one Conv2DAdd node at the Add's place."""
    g = clone(g)
    by_name = {n.name: n for n in g.nodes}
    conv, add = by_name[cand.conv], by_name[cand.add]
    mid = conv.outputs[0]
    attrs = {k: conv.attrs.get(k, Conv2DAdd.attributes[k]) for k in CONV_ATTRS}
    attrs.update(conv_quant=g.values[mid].quant, add_activation=add.attrs.get("activation", "none"),
                 conv_first=add.inputs[0] == mid)
    bias = conv.inputs[2] if len(conv.inputs) > 2 else ""
    fused = Node(Conv2DAdd.name, g.fresh_name(f"{conv.name}_add"), [conv.inputs[0], conv.inputs[1], bias, cand.residual],
                 list(add.outputs), attrs, tuple(conv.origin or (conv.name,)) + tuple(add.origin or (add.name,)))
    g.nodes[g.nodes.index(add)] = fused
    g.nodes.remove(conv)
    del g.values[mid]
    return g
