"""Compile-time layouts of the float32 Conv2D / FullyConnected weights: packed panels for
templates/kernels/neon/conv2d_f32 and fully_connected_f32 (codegen/kernels/neon/), the
output channel last for the reference kernels (codegen/kernels/reference/).

The NEON micro-kernels (templates/kernels/neon/_gemm_f32.c.j2) compute a tile of up to 4 rows
(output pixels, or input rows of a fully connected layer) by up to 16 output channels: 16
float32x4 accumulators, and per step of the accumulation depth one broadcast input lane times
the tile's weight vectors (FMLA by element). They stream the weights as *panels*: for each
block of 16 output channels (the last one narrowed to the channels left, rounded up to 4),
the block's bias, then for each k in order the block's weights of that k. Padded channels
hold zeros and are computed but never stored. Summation stays in the reference kernels'
order (k ascending, then the bias), so only FMA's single rounding separates the results.

The reference kernels sum all output channels of a pixel (a row) at once, one term after the
other; with the output channel last in the weights their innermost loop is contiguous and
compilers vectorise it, and each sum keeps its order (`reference_weights`).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Node
from codegen.kernels.spec import Prepared
from codegen.ops.request import Arg
from codegen.ops.conv2d import float_bias_arg

BLOCK = 16  # output channels of a full tile: four float32x4 accumulators per row
ROWS = 4  # rows of a full tile


def block_widths(channels: int) -> list[int]:
    """Widths of the output-channel blocks: full blocks of 16, then the rest rounded up to 4."""
    full, rest = divmod(int(channels), BLOCK)
    return [BLOCK] * full + ([-(-rest // 4) * 4] if rest else [])


def gemm_panels(rows: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """[O, K] float32 weights and their [O] bias as the micro-kernels' panels (1-D float32):
    per block of channels, bias[width] then [K][width] weights, zero-padded channels."""
    o, k = rows.shape
    panels, start = [], 0
    for width in block_widths(o):
        w = np.zeros((k + 1, width), np.float32)
        stop = min(start + width, o)
        w[0, :stop - start] = bias[start:stop]
        w[1:, :stop - start] = rows[start:stop].T
        panels.append(w.reshape(-1))
        start += width
    return np.concatenate(panels) if panels else np.zeros(0, np.float32)


def reference_weights(node: Node, ctx) -> tuple[Arg, int]:
    """The weights of the reference float Conv2D / FullyConnected kernels and their stride
    between output channels: constant ones with the output channel moved last (HWIO, [K][O];
    stride 1: the kernels' innermost loop runs over contiguous output channels and
    vectorises), computed ones as stored (OHWI, [O][K]; stride K)."""
    value = ctx.g.values[node.inputs[1]]
    if value.data is None:
        return ctx.tensor(node.inputs[1]), int(np.prod(value.shape[1:]))
    return ctx.constant(node, "w", np.moveaxis(value.data, 0, -1), "float32"), 1


def prepare_reference(params_type: type, request, ctx):
    """The reference float Conv2D / FullyConnected call: input, `reference_weights`, the float
    bias and output, the op's fields with the weights' stride (`params_type`'s w_oc_stride)."""
    node = request.node
    w_arg, stride = reference_weights(node, ctx)
    args = (ctx.tensor(node.inputs[0]), w_arg, float_bias_arg(node, ctx, request.params["out_c"]),
            ctx.tensor(node.outputs[0]))
    return Prepared(params_type(**request.params, w_oc_stride=stride), args, tuple(request.headers))


def neon_constant(node: Node, ctx, index: int, what: str) -> np.ndarray | None:
    """Input `index` of the node as float32 data (None when the input is absent); the NEON
    kernels take only packed constants, so a value computed at run time is an error."""
    name = node.inputs[index] if len(node.inputs) > index else ""
    if not name:
        return None
    value = ctx.g.values[name]
    if value.data is None:
        raise KilnError(f"float32 {node.op} on a NEON target needs constant {what}; '{name}' is "
                        "computed at run time", node=node.name)
    return np.asarray(value.data, np.float32)
