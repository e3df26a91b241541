"""Training losses, evaluated as ONNX's reference does: NegativeLogLikelihoodLoss and
SoftmaxCrossEntropyLoss (= NegativeLogLikelihoodLoss of LogSoftmax over axis 1).

    picked[n, d] = input[n, target[n, d], d]          (GatherElements on axis 1)
    loss[n, d]   = -picked * w[target[n, d]]           0 where target == ignore_index
    reduction    none: loss; sum: sum(loss); mean: sum(loss) / sum(w[target])

The class weights are a constant; the targets may be computed (int32 or int64).
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ops_reduce import log_softmax
from codegen.frontends.onnx.reader import OnnxNode


def nll(ctx: ConvertContext, node: OnnxNode, logp: str, ones_without_ignore: bool) -> None:
    """The loss of log-probabilities `logp` [N, C, d..] against the targets (input 1).

    `ones_without_ignore`: without class weights the mean divides by the number of
    non-ignored targets (NegativeLogLikelihoodLoss does so unless ignore_index is -1)."""
    shape = ctx.b.g.values[logp].shape
    target = node.input(1)
    t_shape = ctx.shape(target)
    if tuple(t_shape) != (shape[0],) + tuple(shape[2:]):
        raise node.error(f"target {list(t_shape)} does not match input {list(shape)}")
    reduction = node.attr("reduction", "mean")
    if reduction not in ("none", "sum", "mean"):
        raise node.error(f"reduction '{reduction}' is not none, sum or mean")
    ignore = node.attr("ignore_index")
    t = ctx.kiln(target)
    if ctx.dtype(target) not in ("int32", "int64"):
        raise node.error(f"target is {ctx.dtype(target)}, not an integer")
    idx = ctx.add(node, "Reshape", [t], role="target_axis", shape=(shape[0], 1) + tuple(shape[2:]))
    picked = ctx.add(node, "GatherElements", [logp, idx], role="picked", axis=1)
    loss = ctx.add(node, "Neg", [ctx.add(node, "Reshape", [picked], role="squeeze", shape=tuple(t_shape))],
                   role="neg")
    zero = ctx.weight(node, "zero", np.array(0.0, np.float32))
    ignored = None
    if ignore is not None:
        ignored = ctx.add(node, "Equal", [t, ctx.weight(node, "ignore", np.array(ignore, np.int64 if
                                                                               ctx.dtype(target) == "int64" else np.int32))],
                          role="ignored")
        loss = ctx.add(node, "Where", [ignored, zero, loss], role="kept")
    weights = None
    if node.input(2):
        w = ctx.require_const(node, 2, "weight").astype(np.float32)
        weights = ctx.add(node, "Gather", [ctx.weight(node, "class_weight", w), t], role="weights", axis=0)
        if ignored is not None:
            weights = ctx.add(node, "Where", [ignored, zero, weights], role="weights_kept")
    elif ignored is not None and ones_without_ignore:
        weights = ctx.add(node, "Where", [ignored, zero, ctx.weight(node, "one", np.array(1.0, np.float32))],
                          role="counted")
        weights = ctx.add(node, "Expand", [weights], role="counted_all", shape=tuple(t_shape))
    out = node.outputs[0]
    if weights is not None and node.input(2):
        loss = ctx.add(node, "Mul", [weights, loss], role="weighted", out=out if reduction == "none" else None)
    elif reduction == "none":
        ctx.add(node, "Reshape", [loss], out=out, role="out", shape=tuple(t_shape))
    if reduction == "none":
        return
    axes = tuple(range(len(t_shape)))
    total = ctx.add(node, "ReduceSum", [loss], role="sum", axes=axes, keepdims=False,
                    out=out if reduction == "sum" else None)
    if reduction == "sum":
        return
    if weights is not None:
        count = ctx.add(node, "ReduceSum", [weights], role="weight_sum", axes=axes, keepdims=False)
    else:
        count = ctx.weight(node, "count", np.array(float(np.prod(t_shape)), np.float32))
    ctx.add(node, "Div", [total, count], out=out)


@converter("NegativeLogLikelihoodLoss")
def convert_nll(ctx, node):
    nll(ctx, node, ctx.kiln(node.input(0)), ones_without_ignore=node.attr("ignore_index") != -1)


@converter("SoftmaxCrossEntropyLoss")
def convert_sce(ctx, node):
    shape = ctx.shape(node.input(0))
    if len(shape) < 2:
        raise node.error(f"scores must be [N, C, ...], got {list(shape)}")
    logp = log_softmax(ctx, node, ctx.kiln(node.input(0)), 1,
                       out=node.outputs[1] if len(node.outputs) > 1 and node.outputs[1] else None)
    nll(ctx, node, logp, ones_without_ignore=True)
