"""The simple tensor ops of domain ai.onnx.ml: Binarizer and ArrayFeatureExtractor."""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import converter

DOMAIN = "ai.onnx.ml"


@converter(f"{DOMAIN}.Binarizer")
def convert_binarizer(ctx, node):
    """1 where x > threshold, else 0 (x's dtype)."""
    x = node.input(0)
    dtype = np.dtype("float32" if ctx.dtype(x) == "float32" else ctx.dtype(x))
    above = ctx.add(node, "Greater", [ctx.kiln(x), ctx.weight(node, "threshold",
                                                                np.array(node.attr("threshold", 0.0), dtype))],
                    role="above")
    ctx.add(node, "Where", [above, ctx.weight(node, "one", np.array(1, dtype)),
                            ctx.weight(node, "zero", np.array(0, dtype))], out=node.outputs[0])


@converter(f"{DOMAIN}.ArrayFeatureExtractor")
def convert_array_feature_extractor(ctx, node):
    """The elements of the last axis at the given indices (a 1-D input gives [1, count])."""
    x, indices = node.input(0), node.input(1)
    data = ctx.kiln(x)
    if len(ctx.shape(x)) == 1:
        data = ctx.add(node, "Reshape", [data], role="as_row", shape=(1, ctx.shape(x)[0]))
    flat = ctx.kiln(indices)
    if len(ctx.shape(indices)) != 1:
        flat = ctx.add(node, "Reshape", [flat], role="flat_indices", shape=(int(np.prod(ctx.shape(indices))),))
    rank = len(ctx.b.g.values[data].shape)
    ctx.add(node, "Gather", [data, flat], out=node.outputs[0], axis=rank - 1)
