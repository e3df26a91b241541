"""Window geometry of the 2-D sliding-window ops (Conv2D, DepthwiseConv2D, pooling).

One place computes the output size from strides, dilations and explicit pads
(top, left, bottom, right), validates those attributes with errors that name the node, turns
SAME padding into explicit pads the way TFLite does, and gathers the input windows that the
numpy references reduce over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Node


def _ints(node: Node, attr: str, count: int, minimum: int) -> tuple[int, ...]:
    value = node.attrs.get(attr)
    try:
        items = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise KilnError(f"attribute {attr}={value!r} is not a list of {count} integers",
                        node=node.name) from None
    if len(items) != count or any(v < minimum for v in items):
        raise KilnError(f"attribute {attr}={list(items)} must be {count} integers >= {minimum}",
                        node=node.name)
    return items


def output_size(size: int, kernel: int, stride: int, dilation: int, pad_before: int,
                pad_after: int) -> int:
    """Output extent along one axis: how many window positions fit in the padded input."""
    effective = dilation * (kernel - 1) + 1
    return (size + pad_before + pad_after - effective) // stride + 1


def same_pads(in_hw: Sequence[int], kernel_hw: Sequence[int], strides: Sequence[int] = (1, 1),
              dilations: Sequence[int] = (1, 1)) -> tuple[int, int, int, int]:
    """TFLite/ONNX SAME_UPPER padding as explicit (top, left, bottom, right): output size
    ceil(in / stride), the odd padding pixel at the bottom/right."""
    pads = []
    for axis in range(2):
        size, k, s, d = (int(v[axis]) for v in (in_hw, kernel_hw, strides, dilations))
        out = -(-size // s)
        total = max((out - 1) * s + d * (k - 1) + 1 - size, 0)
        pads.append((total // 2, total - total // 2))
    (top, bottom), (left, right) = pads
    return top, left, bottom, right


# The geometry fields every window kernel's parameter block holds (codegen/kernels/linear.py
# declares its Window from them): bottom / right pads are implied by the output size.
WINDOW_FIELDS = ("batches", "in_h", "in_w", "out_h", "out_w", "k_h", "k_w", "stride_h", "stride_w",
                 "dilation_h", "dilation_w", "pad_top", "pad_left")


@dataclass(frozen=True)
class ConvGeometry:
    """Sizes of one 2-D window op over an NHWC input (batches, in_h, in_w) with an
    (k_h, k_w) window; every field is also a field of the kernels' params structs."""

    batches: int
    in_h: int
    in_w: int
    k_h: int
    k_w: int
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    pad_top: int
    pad_left: int
    pad_bottom: int
    pad_right: int
    out_h: int
    out_w: int

    @property
    def has_padding(self) -> bool:
        return any((self.pad_top, self.pad_left, self.pad_bottom, self.pad_right))

    def params(self) -> dict[str, Any]:
        """The geometry fields of a kernel's params struct (bottom/right pads are implied)."""
        return {name: getattr(self, name) for name in WINDOW_FIELDS}


def conv_geometry(node: Node, x_shape: Sequence[int], kernel_hw: Sequence[int],
                  dilated: bool = True) -> ConvGeometry:
    """Validate the node's strides/dilations/pads for an NHWC input and a (k_h, k_w) window.

    Pads must be non-negative and leave room for at least one window position; ops without
    a `dilations` attribute (pooling) pass dilated=False.
    """
    if len(x_shape) != 4:
        raise KilnError(f"{node.op} takes a 4-D NHWC input, got shape {list(x_shape)}",
                        node=node.name)
    n, h, w, _ = (int(d) for d in x_shape)
    kh, kw = (int(k) for k in kernel_hw)
    if kh < 1 or kw < 1:
        raise KilnError(f"{node.op} window {kh}x{kw} is empty", node=node.name)
    sh, sw = _ints(node, "strides", 2, 1)
    dh, dw = _ints(node, "dilations", 2, 1) if dilated else (1, 1)
    top, left, bottom, right = _ints(node, "pads", 4, 0)
    oh = output_size(h, kh, sh, dh, top, bottom)
    ow = output_size(w, kw, sw, dw, left, right)
    if oh < 1 or ow < 1:
        raise KilnError(f"{node.op} window {kh}x{kw} (dilations {dh},{dw}) does not fit the "
                        f"{h}x{w} input padded by {[top, left, bottom, right]}", node=node.name)
    return ConvGeometry(n, h, w, kh, kw, sh, sw, dh, dw, top, left, bottom, right, oh, ow)


def windows(x: np.ndarray, g: ConvGeometry, fill) -> np.ndarray:
    """All input windows of an NHWC array as [N, out_h, out_w, k_h, k_w, C]; taps that fall
    in the padding hold `fill`. A strided view of one padded copy of the input."""
    n, h, w, c = x.shape
    eff_h = g.dilation_h * (g.k_h - 1) + 1
    eff_w = g.dilation_w * (g.k_w - 1) + 1
    # Enough rows/columns for every tap of every output position, whatever the given pads.
    ph = max((g.out_h - 1) * g.stride_h + eff_h, g.pad_top + h)
    pw = max((g.out_w - 1) * g.stride_w + eff_w, g.pad_left + w)
    padded = np.full((n, ph, pw, c), fill, dtype=x.dtype)
    padded[:, g.pad_top:g.pad_top + h, g.pad_left:g.pad_left + w, :] = x
    view = np.lib.stride_tricks.sliding_window_view(padded, (eff_h, eff_w), axis=(1, 2))
    view = view[:, :(g.out_h - 1) * g.stride_h + 1:g.stride_h,
                :(g.out_w - 1) * g.stride_w + 1:g.stride_w, :, ::g.dilation_h, ::g.dilation_w]
    return view.transpose(0, 1, 2, 4, 5, 3)
