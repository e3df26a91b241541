"""PoolND: max, average or Lp pooling over 1 to 3 spatial axes of a channels-first tensor
[N, C, D1 (, D2 (, D3))], with dilations, ceil mode and an optional argmax output — the ONNX
MaxPool / AveragePool / LpPool forms that the NHWC 2-D pools (pool2d.py) do not cover.

Windows follow ONNX's reference implementation (onnx.reference.ops.op_pool_common), which made
the backend tests' expected outputs: the output size is floor (or ceil) of
(in + pads - dilation * (kernel - 1) - 1) / stride + 1; when ceil mode asks for more input than
the pads give, half the shortfall is added to the begin pad (moving the windows) and the rest
to the end. A window reads the positions inside the input; with `count_include_pad`, the
average also counts the positions inside the declared pads (never those of the shortfall).
Max pooling of a window with no input position gives 0.

The kernels see every input as [N*C, 3 spatial axes], missing axes of size 1.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest

MODES = ("max", "average", "lp")


@dataclass(frozen=True)
class PoolGeometry:
    """Per spatial axis: input and output sizes, the window start offset, the end of the pads."""

    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    begins: tuple[int, ...]  # a window at output o starts at input o * stride - begin
    limits: tuple[int, ...]  # positions up to limit - begin - 1 lie in the input or its pads


def pool_geometry(node, spatial: tuple[int, ...]) -> PoolGeometry:
    a = node.attrs
    n = len(spatial)
    kernel, strides, dilations = (tuple(int(v) for v in a[k]) for k in ("kernel", "strides", "dilations"))
    pads = tuple(int(v) for v in a["pads"]) or (0,) * (2 * n)
    if not 1 <= n <= 3 or len(kernel) != n or len(strides) != n or len(dilations) != n or len(pads) != 2 * n:
        raise KilnError(f"PoolND needs 1 to 3 spatial axes with a kernel, strides and dilations each and 2 pads "
                        f"each (got {n} axes, kernel {list(kernel)}, strides {list(strides)}, dilations "
                        f"{list(dilations)}, pads {list(pads)})", node=node.name)
    if min(kernel + strides + dilations) < 1 or min(pads) < 0:
        raise KilnError("PoolND kernel, strides and dilations must be positive and pads not negative",
                        node=node.name)
    outs, begins, limits = [], [], []
    for d in range(n):
        span = dilations[d] * (kernel[d] - 1) + 1
        room = spatial[d] + pads[d] + pads[n + d] - span
        if room < 0:
            raise KilnError(f"PoolND window of {span} does not fit axis {d} of {spatial[d]} with its pads",
                            node=node.name)
        out = room // strides[d] + 1
        if a["ceil_mode"]:
            out = -(-room // strides[d]) + 1
            if (out - 1) * strides[d] >= spatial[d] + pads[d]:  # no window may start in the end pad
                out -= 1
        shortfall = (out - 1) * strides[d] + span - spatial[d] - pads[d] - pads[n + d]
        outs.append(out)
        begins.append(pads[d] + max(shortfall, 0) // 2)
        limits.append(spatial[d] + pads[d] + pads[n + d])
    return PoolGeometry(tuple(spatial), tuple(outs), tuple(begins), tuple(limits))


def _windows(node, geo: PoolGeometry):
    """Per axis: input positions [out, kernel], which lie in the input, which count."""
    a = node.attrs
    for d in range(len(geo.inputs)):
        pos = (np.arange(geo.outputs[d])[:, None] * a["strides"][d]
               + np.arange(a["kernel"][d])[None, :] * a["dilations"][d] - geo.begins[d])
        before_end = pos + geo.begins[d] < geo.limits[d]  # ONNX's reference drops what lies past the pads
        inside = (pos >= 0) & (pos < geo.inputs[d]) & before_end
        counted = inside | (bool(a["count_include_pad"]) & before_end)
        yield np.clip(pos, 0, geo.inputs[d] - 1), inside, counted


def _spread(arrays: list[np.ndarray], n: int) -> list[np.ndarray]:
    """[out_d, kernel_d] arrays of each axis shaped to broadcast as [o1, k1, o2, k2, ...]."""
    shaped = []
    for d, arr in enumerate(arrays):
        shape = [1] * (2 * n)
        shape[2 * d], shape[2 * d + 1] = arr.shape
        shaped.append(arr.reshape(shape))
    return shaped


@register
class PoolND(Op):
    name = "PoolND"
    kind = OpKind.OPAQUE
    attributes = {"mode": "max", "kernel": (), "strides": (), "dilations": (), "pads": (), "ceil_mode": False,
                  "count_include_pad": False, "p": 2, "with_indices": False, "column_major_indices": False}
    arity = (1, 1)
    kernels = ("max_pool_nd_f32", "average_pool_nd_f32", "lp_pool_nd_f32", "max_pool_nd_indices_f32")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        if node.attrs["mode"] not in MODES:
            raise KilnError(f"PoolND mode '{node.attrs['mode']}' is not one of {', '.join(MODES)}", node=node.name)
        if len(x.shape) < 3:
            raise KilnError(f"PoolND input must be [N, C, spatial...], got {list(x.shape)}", node=node.name)
        geo = pool_geometry(node, tuple(x.shape[2:]))
        shape = tuple(x.shape[:2]) + geo.outputs
        if node.attrs["with_indices"]:
            if node.attrs["mode"] != "max":
                raise KilnError("PoolND gives indices for max pooling only", node=node.name)
            return [(x.dtype, shape), ("int64", shape)]
        return [(x.dtype, shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))

    @classmethod
    def reference(cls, node, args, g):
        x = args[0].astype(np.float32)
        n = x.ndim - 2
        geo = pool_geometry(node, x.shape[2:])
        tables, inside, counted = zip(*_windows(node, geo))
        pos, inside, counted = (_spread(list(t), n) for t in (tables, inside, counted))
        vals = x[(slice(None), slice(None), *pos)]  # [N, C, o1, k1, o2, k2, ...]
        inside, counted = (functools.reduce(np.logical_and, masks) for masks in (inside, counted))
        kaxes = tuple(3 + 2 * d for d in range(n))
        mode = node.attrs["mode"]
        if mode == "average":
            total = np.where(inside, vals, 0.0).sum(axis=kaxes, dtype=np.float32)
            with np.errstate(all="ignore"):
                y = total / np.broadcast_to(counted, vals.shape).sum(axis=kaxes).astype(np.float32)
            return [y.astype(np.float32)]
        if mode == "lp":
            p = np.float32(node.attrs["p"])
            total = np.where(inside, np.abs(vals) ** p, 0.0).sum(axis=kaxes, dtype=np.float32)
            return [(total ** (np.float32(1) / p)).astype(np.float32)]
        masked = np.where(inside, vals, -np.inf)
        y = masked.max(axis=kaxes)
        y = np.where(np.isneginf(y) & ~np.broadcast_to(inside, vals.shape).any(axis=kaxes), 0.0, y).astype(np.float32)
        if not node.attrs["with_indices"]:
            return [y]
        return [y, _argmax_indices(node, x, masked, list(tables))]

    @classmethod
    def lower(cls, node, ctx):
        x = ctx.g.values[node.inputs[0]]
        n = len(x.shape) - 2
        geo = pool_geometry(node, tuple(x.shape[2:]))
        a = node.attrs

        def three(values, fill):
            return tuple(int(v) for v in values) + (fill,) * (3 - n)
        params = {"nc": int(x.shape[0] * x.shape[1]), "in_": three(geo.inputs, 1), "out": three(geo.outputs, 1),
                  "kernel": three(a["kernel"], 1), "stride": three(a["strides"], 1),
                  "dilation": three(a["dilations"], 1), "begin": three(geo.begins, 0),
                  "limit": three(geo.limits, 1)}
        args = (ctx.tensor(node.inputs[0]), *(ctx.tensor(o) for o in node.outputs))
        if a["with_indices"]:
            sizes = geo.inputs + (1,) * (3 - n)
            order = range(3) if a["column_major_indices"] else range(2, -1, -1)
            steps, acc = [0, 0, 0], 1
            for d in order:
                steps[d], acc = acc if d < n else 0, acc * sizes[d]
            kernel, params = "max_pool_nd_indices_f32", {**params, "index_step": tuple(steps)}
        elif a["mode"] == "lp":
            kernel, params = "lp_pool_nd_f32", {**params, "p": float(a["p"])}
        elif a["mode"] == "average":
            kernel, params = "average_pool_nd_f32", {**params, "count_include_pad": bool(a["count_include_pad"])}
        else:
            kernel = "max_pool_nd_f32"
        ctx.request(KernelRequest(kernel, node, params, args))


def _argmax_indices(node, x: np.ndarray, masked: np.ndarray, tables: list[np.ndarray]) -> np.ndarray:
    """Flat input index of each window's first maximum (row-major, or column-major over the
    spatial axes as ONNX's storage_order=1), counted from the start of the whole tensor;
    `tables` holds each axis's input positions [out, kernel]."""
    spatial, n = x.shape[2:], x.ndim - 2
    outs = masked.shape[2::2]
    order = [0] + [2 + 2 * d for d in range(n)] + [3 + 2 * d for d in range(n)]
    flat = masked.reshape(-1, *masked.shape[2:]).transpose(order[:1] + [a - 1 for a in order[1:]])
    best = np.argmax(flat.reshape(*flat.shape[:1 + n], -1), axis=-1)  # first maximum in window order
    kidx = np.unravel_index(best, [int(k) for k in node.attrs["kernel"]])
    oidx = np.indices(best.shape)[1:]
    coords = [tables[d][oidx[d], kidx[d]] for d in range(n)]
    if node.attrs["column_major_indices"]:
        inner = sum(c * int(np.prod(spatial[:d])) for d, c in enumerate(coords))
    else:
        inner = sum(c * int(np.prod(spatial[d + 1:])) for d, c in enumerate(coords))
    base = np.arange(best.shape[0]).reshape(-1, *[1] * n) * int(np.prod(spatial))
    return (base + inner).reshape(*x.shape[:2], *outs).astype(np.int64)
