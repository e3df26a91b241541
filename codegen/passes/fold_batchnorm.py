"""Fold BatchNorm into the float Conv2D / DepthwiseConv2D / FullyConnected before it.

BatchNorm over the output channels (the last axis: after the layout pass, ONNX's axis 1 of
a convolution is NHWC's axis 3) is y = x * k + s with k = scale / sqrt(var + eps) and
s = bias - mean * k; the linear op before it absorbs k into its weights and bias and s into
its bias, and the BatchNorm node disappears. A BatchNorm with nothing to fold into stays:
its kernel already is the per-channel multiply-add with k and s computed at compile time.

Needs: a verified graph; layout already channels-last. Keeps: every output's value (to
float32 rounding), output names (the linear op takes over the BatchNorm's output).
Only float32, and only when the linear op has no fused activation and no other reader.
"""

from __future__ import annotations

from codegen.ir.graph import Graph
from codegen.ops.batch_norm import channel_axis, fold
from codegen.passes.dce import eliminate_dead_code
from codegen.passes.graph_edit import clone, merged_origin
from codegen.passes.linear_fold import foldable_linear, scale_shift


def fold_batchnorm(g: Graph) -> Graph:
    g = clone(g)
    changed = False
    for bn in list(g.nodes):
        if bn.op != "BatchNorm" or not all(g.values[i].is_const for i in bn.inputs[1:]):
            continue
        x = bn.inputs[0]
        rank = len(g.values[x].shape)
        linear = foldable_linear(g, x)
        if linear is None or channel_axis(bn, rank) != rank - 1:
            continue
        k, s = fold(bn, *[g.values[n].data.reshape(-1) for n in bn.inputs[1:]])
        scale_shift(g, linear, k.astype("float64"), s.astype("float64"))
        linear.outputs = [bn.outputs[0]]
        linear.origin = merged_origin(linear, bn)
        g.nodes = [n for n in g.nodes if n is not bn]
        changed = True
    return eliminate_dead_code(g) if changed else g
