"""Bounded dynamic dimensions (`--max-shape NAME=d0,...`): which tensors carry the bounded axis,
and whether the code compiled for the maximum computes, for any smaller extent T, exactly what
the model computes at T.

It does when every op that touches the axis maps position t of its output from positions of
its input at t or before (never after), without storing anything per element that depends on
the extent: elementwise and broadcast ops along it, linear layers and matrix products that do
not contract it, reshapes and transposes that keep it whole, per-sample ops on a batch axis,
and recurrent layers along their time axis (LSTM, GRU, RNN, TFLite's integer LSTM), which take
the actual extent at run time as their sequence length (ONNX's sequence_lens: later steps
output zeros, the last state is the one at step T). Reductions, softmax, convolutions or pooling along it, reshapes that
merge it with a non-unit dimension, and anything not listed are refused with the reason.
Buffers keep their largest shape: the caller fills positions 0..T-1 along the axis (in an
input whose bounded axis is not the outermost, the same positions of every row); positions
from T on of the outputs that carry the axis are not defined.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph
from codegen.ops.recurrent import RecurrentOp
from codegen.ops.registry import OpKind, get_op

# ops that compute every sample of axis 0 on its own (NHWC batch)
PER_SAMPLE = {"Conv2D", "DepthwiseConv2D", "GroupConv2D", "MaxPool2D", "AveragePool2D"}
CAUSAL = {"Conv2D", "DepthwiseConv2D", "GroupConv2D"}  # causal along a spatial axis: see _causal


@dataclass(frozen=True)
class BoundedAxis:
    input: str
    axis: int  # of the input
    maximum: int
    axes: dict  # value name -> its bounded axis
    recurrent: tuple[str, ...]  # names of the recurrent nodes that take the extent as their length


def takes_the_extent(op) -> bool:
    """Recurrent layers loop over their time axis up to a length read at run time: the float
    ones (LSTM, GRU, RNN: their `lens`) and TFLite Micro's integer LSTM (its `steps`)."""
    return issubclass(op, RecurrentOp) or op.name == "IntegerLSTM"


def _refuse(node, why: str) -> KilnError:
    return KilnError(f"the bounded dimension cannot vary here: {node.op} {why}", node=node.name)


def _reshaped_axis(in_shape, out_shape, axis: int) -> int | None:
    """The output axis a reshape keeps the bounded axis whole at: everything before it has the
    same element count and it keeps its extent; None when the reshape merges or splits it."""
    before = int(np.prod(in_shape[:axis], dtype=np.int64))
    for j in range(len(out_shape)):
        if int(np.prod(out_shape[:j], dtype=np.int64)) == before and out_shape[j] == in_shape[axis]:
            return j
    return None


def _causal(node, g: Graph, axis: int) -> bool:
    """A convolution along NHWC axis 1 or 2 whose output position t reads input positions up to
    t only: stride 1, no padding after, as many output positions as input positions."""
    k = axis - 1
    pads = tuple(node.attrs.get("pads", (0, 0, 0, 0)))
    return (tuple(node.attrs.get("strides", (1, 1)))[k] == 1 and pads[2 + k] == 0
            and g.values[node.outputs[0]].shape[axis] == g.values[node.inputs[0]].shape[axis])


def _node_axes(node, g: Graph, axes: dict) -> dict:
    """The bounded axis of each output of `node`, given its inputs' (KilnError when unsound)."""
    op = get_op(node.op)
    dyn = {k: axes[i] for k, i in enumerate(node.inputs) if i in axes}
    shape = lambda v: g.values[v].shape  # noqa: E731
    if takes_the_extent(op):
        if set(dyn) != {0} or dyn[0] != 0:
            raise _refuse(node, "reads the bounded dimension elsewhere than its time axis (input 0, axis 0)")
        if node.attrs.get("seq_lens"):
            raise _refuse(node, "has sequence lengths of its own")
        return {node.outputs[0]: 0}  # the final states are the ones at step T: no bounded axis
    if node.op == "Reshape":
        j = _reshaped_axis(shape(node.inputs[0]), shape(node.outputs[0]), dyn[0])
        if j is None:
            raise _refuse(node, "merges the bounded dimension with another")
        return {node.outputs[0]: j}
    if node.op == "Transpose":
        return {node.outputs[0]: list(node.attrs["perm"]).index(dyn[0])}
    if node.op in ("FullyConnected", "MatMul"):
        rank = len(shape(node.inputs[0]))
        if (set(dyn) == {0} and dyn[0] == 0 and not node.attrs.get("keep_dims", True)
                and shape(node.outputs[0])[0] == shape(node.inputs[0])[0]):
            return {node.outputs[0]: 0}  # a linear layer over everything after the batch axis
        if set(dyn) != {0} or dyn[0] == rank - 1 or len(shape(node.outputs[0])) != rank:
            raise _refuse(node, "contracts the bounded dimension")
        return {node.outputs[0]: dyn[0]}
    if node.op in PER_SAMPLE:
        if set(dyn) == {0} and dyn[0] in (1, 2) and node.op in CAUSAL and _causal(node, g, dyn[0]):
            return {node.outputs[0]: dyn[0]}
        if set(dyn) != {0} or dyn[0] != 0:
            raise _refuse(node, "slides a window along the bounded dimension that reads later positions "
                                "(only a causal convolution, stride 1 and padding before only, can)")
        return {node.outputs[0]: 0}
    if op.kind == OpKind.REDUCTION and "axes" in node.attrs and set(dyn) == {0}:
        rank = len(shape(node.inputs[0]))
        reduced = {a % rank for a in node.attrs["axes"]} if node.attrs["axes"] else set(range(rank))
        if dyn[0] in reduced:
            raise _refuse(node, "reduces over the bounded dimension")
        keep = node.attrs.get("keepdims", True)
        return {node.outputs[0]: dyn[0] if keep else dyn[0] - sum(1 for a in reduced if a < dyn[0])}
    if node.op == "Softmax" and set(dyn) == {0}:
        rank = len(shape(node.inputs[0]))
        if node.attrs["axis"] % rank == dyn[0]:
            raise _refuse(node, "normalises over the bounded dimension")
        return {node.outputs[0]: dyn[0]}
    if op.kind in (OpKind.ELEMENTWISE, OpKind.BROADCAST):
        out = shape(node.outputs[0])
        from_end = {len(out) - len(shape(node.inputs[k])) + a for k, a in dyn.items()}
        if len(from_end) != 1:
            raise _refuse(node, "combines tensors bounded along different axes")
        (axis,) = from_end
        for k, name in enumerate(node.inputs):
            if name and k not in dyn:
                s = shape(name)
                j = axis - (len(out) - len(s))
                if 0 <= j < len(s) and s[j] != 1:
                    raise _refuse(node, f"reads '{name}', which varies along the bounded dimension")
        return {o: axis for o in node.outputs}
    raise _refuse(node, "reduces, mixes or reorders the bounded dimension (only elementwise ops, linear "
                        "layers, reshapes and transposes that keep it, per-sample ops on a batch axis and "
                        "recurrent layers along their time axis can)")


def bounded_axes(g: Graph, input_name: str, axis: int) -> BoundedAxis:
    """Follow the bounded axis of graph input `input_name` through `g` (the graph as compiled:
    after passes and fusion); KilnError naming the node where a smaller extent would change
    what the code computes."""
    axes = {input_name: axis}
    recurrent = []
    for node in g.nodes:
        if not any(i in axes for i in node.inputs if i):
            continue
        axes.update(_node_axes(node, g, axes))
        if takes_the_extent(get_op(node.op)):
            recurrent.append(node.name)
    return BoundedAxis(input_name, axis, g.values[input_name].shape[axis], axes, tuple(recurrent))
