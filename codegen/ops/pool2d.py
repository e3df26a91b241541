"""Shared part of the 2-D pooling ops (AveragePool2D, MaxPool2D): NHWC window geometry.

Both ops slide a `kernel` window with `strides` over an input padded by `pads` (top, left,
bottom, right); padded positions never enter a window (TFLite's pooling and ONNX's
count_include_pad=0): windows are clipped to the input, as TFLM's reference kernels do.
Padding must be smaller than the window, so that no window is empty (ONNX requires it).
int8 and int16 pooling do not rescale: like TFLM, the output must carry the input's quantization.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.request import KernelRequest, Lowering
from codegen.ops.common import check_activation, float_activation, quant_of, require_dtypes
from codegen.ops.registry import Op, OpKind
from codegen.quant import quantized_activation_range


def _pair(node: Node, key: str, n: int) -> tuple[int, ...]:
    value = tuple(int(v) for v in node.attrs[key])
    if len(value) != n:
        raise KilnError(f"attribute '{key}' needs {n} values, got {list(value)}", node=node.name)
    return value


def pool_geometry(node: Node, in_shape: tuple[int, ...]) -> dict[str, int]:
    """Sizes of the pooling loop nests, validated; raises KilnError naming the attribute."""
    if len(in_shape) != 4:
        raise KilnError(f"{node.op} needs a 4-D NHWC input, got shape {list(in_shape)}", node=node.name)
    kh, kw = _pair(node, "kernel", 2)
    sh, sw = _pair(node, "strides", 2)
    pt, pl, pb, pr = _pair(node, "pads", 4)
    if min(kh, kw, sh, sw) < 1:
        raise KilnError(f"kernel {[kh, kw]} and strides {[sh, sw]} must be positive", node=node.name)
    if min(pt, pl, pb, pr) < 0 or max(pt, pb) >= kh or max(pl, pr) >= kw:
        raise KilnError(f"pads {[pt, pl, pb, pr]} must be non-negative and smaller than the "
                        f"kernel {[kh, kw]}", node=node.name)
    n, h, w, c = in_shape
    oh = (h + pt + pb - kh) // sh + 1
    ow = (w + pl + pr - kw) // sw + 1
    if oh < 1 or ow < 1:
        raise KilnError(f"kernel {[kh, kw]} is larger than the padded input {[h + pt + pb, w + pl + pr]}",
                        node=node.name)
    return {"batches": n, "in_h": h, "in_w": w, "channels": c, "out_h": oh, "out_w": ow,
            "kernel_h": kh, "kernel_w": kw, "stride_h": sh, "stride_w": sw,
            "pad_top": pt, "pad_left": pl}


def pool_windows(x: np.ndarray, node: Node, fill) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per kernel offset (row-major over the window, as the C loops run): the input value
    under it for every output position, and whether that position is inside the input."""
    geo = pool_geometry(node, x.shape)
    pt, pl, pb, pr = (int(v) for v in node.attrs["pads"])
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill)
    valid = np.pad(np.ones(x.shape[1:3], bool), ((pt, pb), (pl, pr)), constant_values=False)
    oh, ow, sh, sw = geo["out_h"], geo["out_w"], geo["stride_h"], geo["stride_w"]
    values, masks = [], []
    for fy in range(geo["kernel_h"]):
        for fx in range(geo["kernel_w"]):
            rows = slice(fy, fy + sh * (oh - 1) + 1, sh)
            cols = slice(fx, fx + sw * (ow - 1) + 1, sw)
            values.append(xp[:, rows, cols, :])
            masks.append(valid[rows, cols][None, :, :, None])
    return values, masks


class Pool2D(Op):
    kind = OpKind.OUT_ELEMWISE_FUSABLE
    attributes = {"kernel": (1, 1), "strides": (1, 1), "pads": (0, 0, 0, 0), "activation": "none"}
    arity = (1, 1)
    kernel_stem: ClassVar[str]  # "average_pool2d" -> kernels average_pool2d_f32 / _s8
    s8_headers: ClassVar[tuple[str, ...]] = ()  # runtime headers the int8 kernel includes

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        geo = pool_geometry(node, x.shape)
        return [(x.dtype, (geo["batches"], geo["out_h"], geo["out_w"], geo["channels"]))]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        check_activation(node)
        if require_dtypes(node, g, ("float32", "int8", "int16")) != "float32":
            qi = quant_of(g, node.inputs[0], node)
            qo = quant_of(g, node.outputs[0], node)
            # TFLM's PoolingPrepare: same zero point, scales equal to 1e-6.
            if qi.per_channel or qo.per_channel or qi.zp != qo.zp or \
                    abs(float(np.float32(qi.s)) - float(np.float32(qo.s))) > 1e-6:
                raise KilnError(f"{g.values[node.inputs[0]].dtype} {node.op} needs the output quantization to equal the input's "
                                f"(input {qi.s!r}, {qi.zp}; output {qo.s!r}, {qo.zp})", node=node.name)

    @classmethod
    def int8_activation_range(cls, node: Node, g: Graph) -> tuple[int, int]:
        qo = quant_of(g, node.outputs[0], node)
        return quantized_activation_range(check_activation(node), qo.s, qo.zp, g.values[node.outputs[0]].dtype)

    @classmethod
    def lower(cls, node, ctx: Lowering):
        g = ctx.g
        x = node.inputs[0]
        params: dict = dict(pool_geometry(node, g.values[x].shape))
        if g.values[x].dtype == "float32":
            lo, hi = float_activation(node)
            params.update(act_min=lo, act_max=hi)
            kernel, headers = f"{cls.kernel_stem}_f32", ()
        else:
            lo_q, hi_q = cls.int8_activation_range(node, g)
            params.update(act_min=lo_q, act_max=hi_q)
            suffix = "s16" if g.values[x].dtype == "int16" else "s8"  # int16: TFLM's loop, int16 values
            kernel, headers = f"{cls.kernel_stem}_{suffix}", cls.s8_headers
        ctx.request(KernelRequest(kernel, node, params, headers=headers))
