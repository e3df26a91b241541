"""Shared part of the passes that fold a per-channel scale and shift into a linear op (not a pass).

y = conv(x, W) + b followed by y * k + s (per output channel) is conv(x, W * k) + (b * k + s).
Float32 only: the new weights and bias are computed in double and rounded once, so the
folded op differs from the two-step one by float32 rounding alone.
"""

from __future__ import annotations

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.passes.graph_edit import add_const

# Linear ops whose output channel is the last axis of the output, and that axis of the weights.
WEIGHT_CHANNEL_AXIS = {"Conv2D": 0, "DepthwiseConv2D": 3, "FullyConnected": 0}


def foldable_linear(g: Graph, name: str) -> Node | None:
    """The float linear node computing `name`, when a scale/shift of `name` may move into it.

    It must be a float32 Conv2D / DepthwiseConv2D / FullyConnected with constant weights and
    bias, no fused activation, and `name` must be read by exactly one node and be no graph
    output (the unscaled value must not be needed elsewhere).
    """
    node = g.producers().get(name)
    if node is None or node.op not in WEIGHT_CHANNEL_AXIS or node.attrs.get("activation") != "none":
        return None
    if g.values[name].dtype != "float32" or name in g.outputs:
        return None
    if sum(i == name for n in g.nodes for i in n.inputs) != 1:
        return None
    params = [i for i in node.inputs[1:] if i]
    if not all(g.values[i].is_const and g.values[i].dtype == "float32" for i in params):
        return None
    return node


def channels(g: Graph, node: Node) -> int:
    return g.values[node.outputs[0]].shape[-1]


def per_channel(g: Graph, const: str, out_shape: tuple[int, ...]) -> np.ndarray | None:
    """A constant operand as one value per output channel (the last axis), or None when it
    varies along another axis or would broadcast the output to a bigger shape."""
    v = g.values[const]
    if not v.is_const or v.dtype != "float32" or len(v.shape) > len(out_shape):
        return None
    shape = (1,) * (len(out_shape) - len(v.shape)) + tuple(v.shape)
    if any(d != 1 for d in shape[:-1]) or (shape and shape[-1] not in (1, out_shape[-1])):
        return None
    c = out_shape[-1] if out_shape else 1
    return np.broadcast_to(v.data.reshape(-1) if v.size > 1 else v.data.reshape(1), (c,)).astype(np.float64)


def scale_shift(g: Graph, node: Node, k: np.ndarray | None, s: np.ndarray | None) -> None:
    """Rewrite `node`'s weights and bias so that it computes its output * k + s."""
    c = channels(g, node)
    axis = WEIGHT_CHANNEL_AXIS[node.op]
    w_name = node.inputs[1]
    b_name = node.inputs[2] if len(node.inputs) > 2 else ""
    bias = g.values[b_name].data.astype(np.float64) if b_name else np.zeros(c)
    if k is not None:
        w = g.values[w_name].data.astype(np.float64)
        shape = [1] * w.ndim
        shape[axis] = c
        node.inputs[1] = add_const(g, f"{w_name}_folded", (w * k.reshape(shape)).astype(np.float32))
        bias = bias * k
    if s is not None:
        bias = bias + s
    if b_name or s is not None:
        new_b = add_const(g, f"{b_name or node.name + '_bias'}_folded", bias.astype(np.float32))
        node.inputs = node.inputs[:2] + [new_b]
