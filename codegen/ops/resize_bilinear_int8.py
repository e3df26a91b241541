"""ResizeBilinearInt8: TFLite RESIZE_BILINEAR on int8 as TFLite Micro computes it
(reference_ops::ResizeBilinearInteger), NHWC, height and width resized.

TFLite Micro interpolates the stored values (input and output share one quantization) with
10-bit fixed-point source coordinates: per output row and column a lower and an upper tap and
the upper tap's weight in 1/1024 (negative left of the first centre with half-pixel centres),
the four products summed in int64 and divided by 2**20 rounding half away from zero. The taps
and weights depend only on the shapes: they are computed here at compile time (`axis_taps`)
and the kernel reads them from flash.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest

ONE = 1 << 10


def _c_div(a: np.ndarray, b: int) -> np.ndarray:
    """C's integer division (toward zero)."""
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


def axis_taps(in_size: int, out_size: int, align_corners: bool, half_pixel: bool):
    """(lower tap, upper tap, upper weight in 1/1024) per output index, as
    ComputeInterpolationValuesInteger gives them."""
    if align_corners and out_size > 1:
        scale = (ONE * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    else:
        scale = (ONE * in_size + out_size // 2) // out_size
    v = np.arange(out_size, dtype=np.int64) * scale
    if half_pixel:
        v = v + scale // 2 - (1 << 9)
    lo = np.maximum(_c_div(v, ONE), 0)
    hi = np.minimum(_c_div(v + ONE - 1, ONE), in_size - 1)
    return lo, hi, v - ONE * lo


@register
class ResizeBilinearInt8(Op):
    name = "ResizeBilinearInt8"
    kind = OpKind.INJECTIVE
    attributes = {"size": (1, 1), "align_corners": 0, "half_pixel_centers": 0}
    arity = (1, 1)
    kernels = ("resize_bilinear_s8",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        if x.dtype != "int8" or len(x.shape) != 4:
            raise KilnError(f"ResizeBilinearInt8 takes an int8 NHWC tensor, not {x.dtype}{list(x.shape)}",
                            node=node.name)
        oh, ow = (int(d) for d in node.attrs["size"])
        if oh < 1 or ow < 1:
            raise KilnError(f"ResizeBilinearInt8 to size {[oh, ow]}", node=node.name)
        return [("int8", (x.shape[0], oh, ow, x.shape[3]))]

    @classmethod
    def _taps(cls, node, shape):
        a = bool(node.attrs["align_corners"])
        h = bool(node.attrs["half_pixel_centers"])
        oh, ow = node.attrs["size"]
        return axis_taps(shape[1], oh, a, h), axis_taps(shape[2], ow, a, h)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        (y0, y1, wy), (x0, x1, wx) = cls._taps(node, x.shape)
        v = x.astype(np.int64)
        wy, wx = wy[None, :, None, None], wx[None, None, :, None]
        rows0, rows1 = v[:, y0], v[:, y1]
        acc = (rows0[:, :, x0] * (ONE - wy) * (ONE - wx) + rows1[:, :, x0] * wy * (ONE - wx)
               + rows0[:, :, x1] * (ONE - wy) * wx + rows1[:, :, x1] * wy * wx)
        out = _c_div(acc + np.where(acc > 0, 1 << 19, -(1 << 19)), 1 << 20)
        return [out.astype(np.int8)]  # TFLite Micro casts without saturating

    @classmethod
    def lower(cls, node, ctx):
        shape = ctx.g.values[node.inputs[0]].shape
        taps = cls._taps(node, shape)
        params = {"batches": shape[0], "in_h": shape[1], "in_w": shape[2], "channels": shape[3],
                  "out_h": int(node.attrs["size"][0]), "out_w": int(node.attrs["size"][1])}
        for axis, (lo, hi, w) in zip("yx", taps):
            params[f"{axis}0"] = ctx.constant(node, f"{axis}0", lo, "int32")
            params[f"{axis}1"] = ctx.constant(node, f"{axis}1", hi, "int32")
            params[f"w{axis}"] = ctx.constant(node, f"w{axis}", w, "int32")
        ctx.request(KernelRequest("resize_bilinear_s8", node, params))
