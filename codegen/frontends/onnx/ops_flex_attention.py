"""FlexAttention (domain ai.onnx.preview): scaled dot-product attention whose scores and
probabilities pass through optional modifier subgraphs, inlined like an If branch.

    scores = (Q @ K^T) * scale            (scale defaults to 1 / sqrt(head size))
    scores = score_mod(scores)
    probs  = Softmax(scores, axis=-1)
    probs  = prob_mod(probs)
    Y      = probs @ V                    (grouped-query heads repeat each K/V head)

softmax_precision is not read: Kiln computes float32 throughout.
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.reader import OnnxNode
from codegen.frontends.onnx.subgraph import inline_graph


def _modified(ctx: ConvertContext, node: OnnxNode, value: str, attr: str) -> str:
    """`value` through the node's `attr` subgraph, if it has one."""
    graph = node.attr(attr)
    if graph is None:
        return value
    name = f"{node.name}::{attr}_input"
    ctx.bind(name, value)
    (out,) = inline_graph(ctx, node, graph, [name], attr)
    if ctx.shape(out) != ctx.b.g.values[value].shape:
        raise node.error(f"{attr} changes the shape {list(ctx.b.g.values[value].shape)} to {list(ctx.shape(out))}")
    return ctx.kiln(out)


def repeat_kv_heads(ctx: ConvertContext, node: OnnxNode, k: str, v: str, q_heads: int) -> tuple[str, str]:
    """Grouped-query attention: K and V [B, kv_heads, S, D] with each head repeated for the
    contiguous group of query heads that shares it (unchanged when the counts agree)."""
    kv_heads = ctx.b.g.values[k].shape[1]
    if q_heads == kv_heads:
        return k, v
    if q_heads % kv_heads:
        raise node.error(f"{q_heads} query heads do not group over {kv_heads} key/value heads")
    repeat = ctx.weight(node, "head_index", np.repeat(np.arange(kv_heads, dtype=np.int64), q_heads // kv_heads))
    return (ctx.add(node, "Gather", [k, repeat], role="k_groups", axis=1),
            ctx.add(node, "Gather", [v, repeat], role="v_groups", axis=1))


@converter("ai.onnx.preview.FlexAttention")
def convert_flex_attention(ctx, node):
    q, k, v = (ctx.kiln(node.input(i)) for i in range(3))
    shapes = [ctx.b.g.values[t].shape for t in (q, k, v)]
    if any(len(s) != 4 for s in shapes):
        raise node.error(f"Q, K and V must be rank 4, got {[list(s) for s in shapes]}")
    k, v = repeat_kv_heads(ctx, node, k, v, shapes[0][1])
    head = shapes[0][3]
    scale = node.attr("scale")
    scale = 1 / np.sqrt(head) if scale is None else float(scale)
    kt = ctx.add(node, "Transpose", [k], role="k_t", perm=(0, 1, 3, 2))
    scores = ctx.add(node, "Mul", [ctx.add(node, "MatMul", [q, kt], role="logits"),
                                   ctx.weight(node, "scale", np.array(scale, np.float32))], role="scores")
    probs = ctx.add(node, "Softmax", [_modified(ctx, node, scores, "score_mod")], role="softmax", axis=-1)
    ctx.add(node, "MatMul", [_modified(ctx, node, probs, "prob_mod"), v], out=node.outputs[0])
