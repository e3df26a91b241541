"""TFLite spatial builtins (NHWC): block rearrangements, resizing, transposed convolution, L2 pooling.

DEPTH_TO_SPACE, SPACE_TO_DEPTH, BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND are Reshape /
Transpose (/ Slice, Pad) chains that move stored values, exact for every type.
RESIZE_NEAREST_NEIGHBOR picks input rows and columns with TFLite's own float32 index
arithmetic (computed here, then two Gathers), so it is exact for every type too;
RESIZE_BILINEAR (float32) is Kiln's linear Resize with the matching coordinate transform; on
int8 it is TFLite Micro's fixed-point ResizeBilinearInteger (ResizeBilinearInt8).
"""

from __future__ import annotations

import math

import numpy as np

from codegen.frontends.tflite.compose import constant, finish, ints, only_types, refuse_quantized, same_quant, step
from codegen.frontends.tflite.importer import OpContext
from codegen.frontends.tflite.converter import SAME, VALID, check_positive, check_rank, converts, explicit_pads


def _shuffle(ctx: OpContext, x: str, split: tuple[int, ...], perm: tuple[int, ...], out: tuple[int, ...]) -> None:
    q = ctx.tensor(0).quant
    y = step(ctx, "Reshape", [x], "split", quant=q, shape=split)
    y = step(ctx, "Transpose", [y], "move", quant=q, perm=perm)
    ctx.emit("Reshape", [y], shape=out)


@converts("DEPTH_TO_SPACE")
def depth_to_space(ctx: OpContext) -> None:
    n, h, w, c = check_rank(ctx, 0, 4, "the input")
    (b,) = check_positive(ctx, "block_size", ctx.options("DepthToSpaceOptions")["BlockSize"])
    if c % (b * b):
        raise ctx.error(f"{c} channels do not divide by block_size² = {b * b}")
    same_quant(ctx)
    _shuffle(ctx, ctx.input(0), (n, h, w, b, b, c // (b * b)), (0, 1, 3, 2, 4, 5), (n, h * b, w * b, c // (b * b)))


@converts("SPACE_TO_DEPTH")
def space_to_depth(ctx: OpContext) -> None:
    n, h, w, c = check_rank(ctx, 0, 4, "the input")
    (b,) = check_positive(ctx, "block_size", ctx.options("SpaceToDepthOptions")["BlockSize"])
    if h % b or w % b:
        raise ctx.error(f"spatial size {h}x{w} does not divide by block_size {b}")
    same_quant(ctx)
    _shuffle(ctx, ctx.input(0), (n, h // b, b, w // b, b, c), (0, 1, 3, 2, 4, 5), (n, h // b, w // b, b * b * c))


def _block(ctx: OpContext) -> tuple[tuple[int, ...], list[int], np.ndarray]:
    """(input shape, block shape, [M, 2] crops or paddings) of a *_ND operator."""
    shape = ctx.shape(0)
    block = ints(ctx, 1, "block_shape")
    m = len(block)
    if not 1 <= m <= len(shape) - 1 or min(block) < 1:
        raise ctx.error(f"block_shape {block} does not fit an input of shape {list(shape)}")
    amounts = np.asarray(ints(ctx, 2, "crops or paddings")).reshape(-1, 2)
    if amounts.shape != (m, 2) or np.any(amounts < 0):
        raise ctx.error(f"crops/paddings {amounts.tolist()} are not [{m}, 2] non-negative values")
    return shape, block, amounts


@converts("BATCH_TO_SPACE_ND", inputs=(3, 3))
def batch_to_space_nd(ctx: OpContext) -> None:
    shape, block, crops = _block(ctx)
    m, prod = len(block), math.prod(block)
    if shape[0] % prod:
        raise ctx.error(f"batch {shape[0]} does not divide by the block size {prod}")
    same_quant(ctx)
    q = ctx.tensor(0).quant
    batch, spatial, rest = shape[0] // prod, shape[1:1 + m], shape[1 + m:]
    y = step(ctx, "Reshape", [ctx.input(0)], "split", quant=q, shape=(*block, batch, *spatial, *rest))
    perm = (m,) + tuple(p for i in range(m) for p in (m + 1 + i, i)) + tuple(range(2 * m + 1, 2 * m + 1 + len(rest)))
    y = step(ctx, "Transpose", [y], "move", quant=q, perm=perm)
    full = (batch, *(s * b for s, b in zip(spatial, block)), *rest)
    if not crops.any():
        ctx.emit("Reshape", [y], shape=full)
        return
    y = step(ctx, "Reshape", [y], "merge", quant=q, shape=full)
    starts = (0, *(int(c) for c in crops[:, 0]), *(0,) * len(rest))
    ends = (batch, *(f - int(c) for f, c in zip(full[1:1 + m], crops[:, 1])), *rest)
    ctx.emit("Slice", [y], starts=starts, ends=ends, steps=(1,) * len(full))


@converts("SPACE_TO_BATCH_ND", inputs=(3, 3))
def space_to_batch_nd(ctx: OpContext) -> None:
    shape, block, paddings = _block(ctx)
    m = len(block)
    padded = [s + int(p.sum()) for s, p in zip(shape[1:1 + m], paddings)]
    if any(p % b for p, b in zip(padded, block)):
        raise ctx.error(f"padded spatial size {padded} does not divide by block_shape {block}")
    same_quant(ctx)
    q = ctx.tensor(0).quant
    x, rest = ctx.input(0), shape[1 + m:]
    if paddings.any() and ctx.tensor(0).quant is not None:
        # TFLite Micro pads with an offset it never sets (persistent memory left as it was;
        # LiteRT uses the zero point), so padded quantized values are not defined there.
        raise ctx.error("padding a quantized tensor is not supported (TFLite Micro's pad value is "
                        "left unset)")
    if paddings.any():  # real zeros
        pads = (0, *(int(p) for p in paddings[:, 0]), *(0,) * len(rest)) + \
               (0, *(int(p) for p in paddings[:, 1]), *(0,) * len(rest))
        x = step(ctx, "Pad", [x], "pad", quant=q, pads=pads, value=0.0)
    split = (shape[0],) + tuple(d for p, b in zip(padded, block) for d in (p // b, b)) + rest
    y = step(ctx, "Reshape", [x], "split", quant=q, shape=split)
    perm = tuple(2 + 2 * i for i in range(m)) + (0,) + tuple(1 + 2 * i for i in range(m)) + \
        tuple(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    y = step(ctx, "Transpose", [y], "move", quant=q, perm=perm)
    ctx.emit("Reshape", [y], shape=(shape[0] * math.prod(block), *(p // b for p, b in zip(padded, block)), *rest))


# -- resizing ----------------------------------------------------------------------------------------

def _resize_options(ctx: OpContext, options: str) -> tuple[tuple[int, ...], int, int, bool, bool]:
    n, h, w, c = check_rank(ctx, 0, 4, "the input")
    size = ints(ctx, 1, "size")
    if len(size) != 2 or min(size) < 1:
        raise ctx.error(f"size {size} is not two positive values")
    o = ctx.options(options)
    align, half = bool(o["AlignCorners"]), bool(o["HalfPixelCenters"])
    if align and half:
        raise ctx.error("align_corners and half_pixel_centers are both set")
    return (n, h, w, c), size[0], size[1], align, half


def nearest_indices(in_size: int, out_size: int, align: bool, half: bool) -> np.ndarray:
    """TFLite's GetNearestNeighbor for every output index, in its float32 arithmetic."""
    f32 = np.float32
    scale = f32(in_size - 1) / f32(out_size - 1) if align and out_size > 1 else f32(in_size) / f32(out_size)
    pos = (np.arange(out_size, dtype=f32) + f32(0.5 if half else 0.0)) * scale
    # TfLiteRound rounds half away from zero; the positions are never negative.
    idx = np.floor(pos + f32(0.5)) if align else np.floor(pos)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    return np.maximum(idx, 0).astype(np.int32)


@converts("RESIZE_NEAREST_NEIGHBOR", inputs=(2, 2))
def resize_nearest_neighbor(ctx: OpContext) -> None:
    (n, h, w, c), oh, ow, align, half = _resize_options(ctx, "ResizeNearestNeighborOptions")
    same_quant(ctx)
    rows = constant(ctx, "rows", nearest_indices(h, oh, align, half))
    y = step(ctx, "Gather", [ctx.input(0), rows], "rows", quant=ctx.tensor(0).quant, axis=1)
    ctx.emit("Gather", [y, constant(ctx, "cols", nearest_indices(w, ow, align, half))], axis=2)


@converts("RESIZE_BILINEAR", inputs=(2, 2))
def resize_bilinear(ctx: OpContext) -> None:
    (n, h, w, c), oh, ow, align, half = _resize_options(ctx, "ResizeBilinearOptions")
    if ctx.tensor(0).type_name == "INT8":
        # TFLite Micro interpolates the stored values whatever the two quantizations are
        ctx.emit("ResizeBilinearInt8", [ctx.input(0)], size=(oh, ow), align_corners=int(align),
                 half_pixel_centers=int(half))
        return
    refuse_quantized(ctx, "TFLite Micro's int16 bilinear resize needs a kernel")
    only_types(ctx, ("FLOAT32",))
    # TFLite clamps the lower tap at 0 and the upper at size-1, which is ONNX's half_pixel
    # (not pytorch_half_pixel) for half-pixel centres; align_corners and asymmetric agree as named.
    mode = "align_corners" if align else "half_pixel" if half else "asymmetric"
    ctx.emit("Resize", [ctx.input(0)], sizes=(n, oh, ow, c), scales=(1.0, oh / h, ow / w, 1.0), mode="linear",
             coordinate_transformation_mode=mode)


# -- transposed convolution and L2 pooling -----------------------------------------------------------

@converts("TRANSPOSE_CONV", inputs=(3, 4))
def transpose_conv(ctx: OpContext) -> None:
    """Inputs (output_shape, weights [O, KH, KW, I], input, bias?). TFLite places input pixel
    y at y * stride - pad_top and drops what falls outside the output: a ConvTranspose2D
    whose full output is cropped by pad_top / pad_left in front and the rest behind."""
    only_types(ctx, ("FLOAT32", "INT8", "INT16"), k=2)
    o = ctx.options("TransposeConvOptions")
    out_shape = ints(ctx, 0, "output_shape")
    x = ctx.shape(2)
    w = check_rank(ctx, 1, 4, "the weights")
    if len(x) != 4 or len(out_shape) != 4 or w[3] != x[3] or w[0] != out_shape[3]:
        raise ctx.error(f"weights {list(w)}, input {list(x)} and output_shape {out_shape} do not agree")
    strides = check_positive(ctx, "strides", o["StrideH"], o["StrideW"])
    crops = []
    for axis in (0, 1):
        out, k, s, n = out_shape[1 + axis], w[1 + axis], strides[axis], x[1 + axis]
        if o["Padding"] == SAME:
            conv_out = (out + s - 1) // s
        elif o["Padding"] == VALID:
            conv_out = (out - k + s) // s
        else:
            raise ctx.error(f"unknown padding type {o['Padding']}")
        if conv_out != n:
            raise ctx.error(f"output_shape {out_shape} does not give the input's size {n} on axis {1 + axis}")
        front = max((n - 1) * s + k - out, 0) // 2
        crops.append((front, (n - 1) * s + k - out - front))
    pads = (crops[0][0], crops[1][0], crops[0][1], crops[1][1])
    if ctx.tensor(2).type_name == "INT16":  # TFLM's 16x8 kernel clamps to the fused activation
        ctx.emit("ConvTranspose2D", [ctx.input(2), ctx.input(1), ctx.input(3)], strides=strides, pads=pads,
                 activation=ctx.activation(o))
        return
    finish(ctx, "ConvTranspose2D", [ctx.input(2), ctx.input(1), ctx.input(3)], ctx.activation(o),
           strides=strides, pads=pads)


@converts("L2_POOL_2D")
def l2_pool_2d(ctx: OpContext) -> None:
    """sqrt(mean of squares over the window, padding excluded): Mul, AveragePool2D, Sqrt."""
    only_types(ctx, ("FLOAT32",))
    o = ctx.options("Pool2DOptions")
    x = check_rank(ctx, 0, 4, "the input")
    kernel = check_positive(ctx, "filter size", o["FilterHeight"], o["FilterWidth"])
    strides = check_positive(ctx, "strides", o["StrideH"], o["StrideW"])
    pads = explicit_pads(ctx, o["Padding"], x[1:3], kernel, strides, (1, 1))
    sq = step(ctx, "Mul", [ctx.input(0), ctx.input(0)], "square")
    mean = step(ctx, "AveragePool2D", [sq], "mean", kernel=kernel, strides=strides, pads=pads)
    finish(ctx, "Sqrt", [mean], ctx.activation(o))
