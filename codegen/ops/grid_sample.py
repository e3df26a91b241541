"""GridSample: sample x at the positions of a grid (ONNX GridSample: spatial transformers,
optical-flow warps); float32, 2-D or 3-D images.

x [N, C, (D,) H, W], grid [N, (Do,) Ho, Wo, 2 or 3] with normalised (x, y(, z)) coordinates
in [-1, 1]; output [N, C, (Do,) Ho, Wo]. Modes nearest (round half to even), linear and
cubic (Keys, a = -0.75), padding zeros, border or reflection, align_corners, all as ONNX's
reference (PyTorch's grid_sampler) computes them, in float32.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest

MODES = {"nearest": 0, "linear": 1, "cubic": 2}
PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def _reflect(x: float, lo: float, hi: float) -> float:
    span = hi - lo
    if span <= 0:
        return lo
    if x < lo:
        n, r = divmod(lo - x, span)
        return lo + r if int(n) % 2 == 0 else hi - r
    if x > hi:
        n, r = divmod(x - hi, span)
        return hi - r if int(n) % 2 == 0 else lo + r
    return x


def _cubic(f: np.ndarray) -> np.ndarray:
    a = np.float32(-0.75)
    one = np.float32(1)
    return np.stack([((a * (f + 1) - 5 * a) * (f + 1) + 8 * a) * (f + 1) - 4 * a,
                     ((a + 2) * f - (a + 3)) * f * f + 1,
                     ((a + 2) * (one - f) - (a + 3)) * (one - f) * (one - f) + 1,
                     ((a * (2 - f) - 5 * a) * (2 - f) + 8 * a) * (2 - f) - 4 * a], axis=-1).astype(np.float32)


def axis_taps(coord: np.ndarray, size: int, mode: str, padding: str, align: bool):
    """(input index, weight, valid) [points, taps] along one image axis for normalised coords."""
    c = coord.astype(np.float32)
    if align:
        x = (c + np.float32(1)) / np.float32(2) * np.float32(size - 1)
        lo, hi = 0.0, float(size - 1)
    else:
        x = ((c + np.float32(1)) * np.float32(size) - np.float32(1)) / np.float32(2)
        lo, hi = -0.5, size - 0.5
    if mode == "nearest":
        x = np.rint(x)
    outside = (x < lo) | (x > hi)
    if padding == "border":
        x = np.where(outside, np.clip(x, 0, size - 1), x).astype(np.float32)
    elif padding == "reflection":
        x = np.where(outside, np.vectorize(lambda v: _reflect(float(v), lo, hi))(x), x).astype(np.float32)
    if mode == "nearest":
        taps, w = x.astype(np.int64)[:, None], np.ones((x.size, 1), np.float32)
    else:
        x0 = np.floor(x)
        f = (x - x0).astype(np.float32)
        if mode == "linear":
            taps, w = x0.astype(np.int64)[:, None] + np.arange(2), np.stack([np.float32(1) - f, f], axis=-1)
        else:
            taps, w = x0.astype(np.int64)[:, None] + np.arange(-1, 3), _cubic(f)
    if padding == "zeros":
        valid = (taps >= 0) & (taps < size)
    else:
        valid = np.ones(taps.shape, bool)
        if padding == "border":
            taps = np.clip(taps, 0, size - 1)
        else:
            taps = np.vectorize(lambda t: int(_reflect(float(t), lo, hi)))(taps)
    return np.where(valid, taps, 0), w, valid


def _attrs(node) -> tuple[str, str, bool]:
    mode, padding = node.attrs["mode"], node.attrs["padding_mode"]
    if mode not in MODES or padding not in PADDINGS:
        raise KilnError(f"GridSample mode '{mode}' / padding_mode '{padding}' are not supported "
                        f"({', '.join(MODES)} / {', '.join(PADDINGS)})", node=node.name)
    return mode, padding, bool(node.attrs["align_corners"])


@register
class GridSample(Op):
    name = "GridSample"
    kind = OpKind.OPAQUE
    attributes = {"mode": "linear", "padding_mode": "zeros", "align_corners": False}
    arity = (2, 2)
    kernels = ("grid_sample_f32",)

    @classmethod
    def infer(cls, node, ins):
        x, grid = ins
        _attrs(node)
        spatial = len(x.shape) - 2
        if spatial not in (2, 3) or len(grid.shape) != spatial + 2 or grid.shape[0] != x.shape[0] \
                or grid.shape[-1] != spatial:
            raise KilnError(f"GridSample of x {list(x.shape)} with grid {list(grid.shape)}: expected "
                            "[N,C,H,W] with [N,Ho,Wo,2] or [N,C,D,H,W] with [N,Do,Ho,Wo,3]", node=node.name)
        return [(x.dtype, (x.shape[0], x.shape[1], *grid.shape[1:-1]))]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))

    @classmethod
    def reference(cls, node, args, g):
        x, grid = args
        mode, padding, align = _attrs(node)
        n, c, *dims = x.shape
        out_spatial = grid.shape[1:-1]
        pts = grid.reshape(n, -1, len(dims))
        y = np.zeros((n, c, pts.shape[1]), np.float32)
        for b in range(n):
            # grid coordinates are (x, y[, z]): the last image axis first
            taps = [axis_taps(pts[b, :, len(dims) - 1 - a], dims[a], mode, padding, align) for a in range(len(dims))]
            img = x[b].reshape(c, -1)
            strides = [int(np.prod(dims[a + 1:])) for a in range(len(dims))]
            for combo in np.ndindex(*[t[0].shape[1] for t in taps]):
                w = np.ones(pts.shape[1], np.float32)
                offset = np.zeros(pts.shape[1], np.int64)
                valid = np.ones(pts.shape[1], bool)
                for a, (idx, wt, ok) in enumerate(taps):
                    w = w * wt[:, combo[a]]
                    offset = offset + idx[:, combo[a]] * strides[a]
                    valid &= ok[:, combo[a]]
                y[b] += np.where(valid, img[:, offset], np.float32(0)) * w
        return [y.reshape(n, c, *out_spatial)]

    @classmethod
    def lower(cls, node, ctx):
        x, grid = node.inputs
        mode, padding, align = _attrs(node)
        shape = ctx.g.values[x].shape
        gshape = ctx.g.values[grid].shape
        dims = (1,) * (5 - len(shape)) + tuple(shape[2:])
        out = (1,) * (5 - len(gshape)) + tuple(gshape[1:-1])
        ctx.request(KernelRequest("grid_sample_f32", node,
                                  {"batches": shape[0], "channels": shape[1], "dims": dims, "out": out,
                                   "coords": len(shape) - 2, "mode": MODES[mode], "padding": PADDINGS[padding],
                                   "align_corners": align},
                                  (ctx.tensor(x), ctx.tensor(grid), ctx.tensor(node.outputs[0])), ("math.h",)))
