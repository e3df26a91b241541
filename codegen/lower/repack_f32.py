"""Compile-time layouts of the float32 Conv2D / FullyConnected weights, and the lowering that
hands them to the kernels: templates/kernels/neon/conv2d_f32 and fully_connected_f32 (packed
panels), or the reference kernels (output channel last).

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
from codegen.lower.inplace import allow_conv_overlap
from codegen.lower.kernel import Arg, ScratchArg

BLOCK = 16  # output channels of a full tile: four float32x4 accumulators per row
ROWS = 4  # rows of a full tile
NEON = "neon"


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


def _constant(node: Node, ctx, index: int, what: str) -> np.ndarray | None:
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


def lower_neon_f32(node: Node, ctx, kernel: str, params: dict) -> bool:
    """Lower a float32 Conv2D / FullyConnected for the NEON kernels with packed panels;
    False when the target's variant of `kernel` is not NEON's (the reference lowering
    applies). The emitter renders a kernel's template by name, so once the variant is NEON's
    there is no fallback: weights and bias must be constants."""
    if ctx.kernel_variant(kernel) != NEON:
        return False
    w = _constant(node, ctx, 1, "weights")
    rows = w.reshape(w.shape[0], -1)
    bias = _constant(node, ctx, 2, "bias")
    bias = np.zeros(rows.shape[0], np.float32) if bias is None else bias.reshape(-1)
    panels = ctx.constant(node, "w", gemm_panels(rows, bias), "float32")
    depth = rows.shape[1]
    out = ctx.tensor(node.outputs[0])
    if kernel == "fully_connected_f32":
        ctx.call(node, kernel, params, [ctx.tensor(node.inputs[0]), panels, out])
        return True
    pointwise = (params["k_h"] == 1 and params["k_w"] == 1 and params["pad_top"] == 0
                 and params["pad_left"] == 0  # and no pixel in the bottom/right padding:
                 and (params["out_h"] - 1) * params["stride_h"] < params["in_h"]
                 and (params["out_w"] - 1) * params["stride_w"] < params["in_w"])
    # General windows are gathered (im2col) into ROWS rows of `depth` floats; a pointwise
    # layer's rows are its input pixels as they lie.
    scratch = ScratchArg(4 if pointwise else ROWS * depth * 4)
    call = ctx.call(node, kernel, {**params, "depth": depth, "pointwise": pointwise},
                    [ctx.tensor(node.inputs[0]), panels, out, scratch])
    allow_conv_overlap(ctx, call, tile=ROWS)  # it reads a tile's windows until it writes the tile
    return True
