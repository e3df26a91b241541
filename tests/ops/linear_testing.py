"""Helpers of the linear-op and kernel-variant tests: random int8 layers with sensible
quantization (linear ops, Add, AveragePool2D), and many one-node graphs merged into one so
that a single C build checks them all."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from codegen.ir import Graph, GraphBuilder, Quant


def int8_layer(op: str, x_shape: Sequence[int], w_shape: Sequence[int], *, seed: int = 0,
               in_zp: int = -5, per_channel: bool = True, bias: bool = True,
               out_zp: int = 3, gain: float = 1.0, w_min: int = -127, **attrs) -> Graph:
    """A one-node int8 graph of `op` with random symmetric weights in [w_min, 127] and an
    output scale that spreads the outputs over most of the int8 range (so the tests compare
    real values, not saturated ones), divided by `gain` (>= 4: requantization shifts right by
    less than 2, or left)."""
    rng = np.random.default_rng(seed)
    axis = 3 if op == "DepthwiseConv2D" else 0
    channels = w_shape[axis]
    w = rng.integers(w_min, 128, size=tuple(w_shape), dtype=np.int8)
    in_scale = 0.02
    w_scales = rng.uniform(0.002, 0.01, channels) if per_channel else np.array([0.006])
    depth = int(np.prod(w_shape)) // channels  # terms summed per output
    # rms of (x - in_zp) for uniform int8 x is 74 (in_zp 0) to 147 (in_zp -128); of w, 73.
    out_scale = in_scale * float(np.mean(w_scales)) * math.sqrt(depth) * 110 * 73 * 5 / 255 / gain
    b = GraphBuilder(f"{op.lower()}_s8")
    x = b.input("x", "int8", tuple(x_shape), Quant.of(in_scale, in_zp))
    ins = [x, b.const("w", w, quant=Quant.of(w_scales, 0, axis if per_channel else None))]
    if bias:
        ins.append(b.const("b", rng.integers(-3000, 3000, channels).astype(np.int32),
                           quant=Quant.of(in_scale * w_scales, 0, 0 if per_channel else None)))
    y = b.node(op, ins, quant=Quant.of(out_scale, out_zp), **attrs)
    return b.output(y).build()


def int8_add(a_shape: Sequence[int], b_shape: Sequence[int], activation: str, seed: int) -> Graph:
    """A one-node int8 Add of two inputs with random scales and distinct zero points."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder("add_s8")
    qa, qb = Quant.of(float(rng.uniform(0.01, 0.1)), -7), Quant.of(float(rng.uniform(0.01, 0.1)), 12)
    y = b.node("Add", [b.input("a", "int8", a_shape, qa), b.input("b", "int8", b_shape, qb)],
               activation=activation, quant=Quant.of(float(rng.uniform(0.05, 0.2)), -20))
    return b.output(y).build()


def int8_average_pool(shape: Sequence[int], kernel, strides, pads, seed: int, **attrs) -> Graph:
    """A one-node int8 AveragePool2D whose input and output share the zero point `seed - 10`."""
    b = GraphBuilder("pool_s8")
    q = Quant.of(0.05, seed - 10)
    y = b.node("AveragePool2D", [b.input("x", "int8", shape, q)], kernel=kernel, strides=strides, pads=pads,
               quant=q, **attrs)
    return b.output(y).build()


def int8_max_pool(shape, kernel, strides, pads, seed: int, **attrs) -> Graph:
    """A one-node int8 MaxPool2D whose input and output share the zero point `seed - 10`."""
    b = GraphBuilder("max_pool_s8")
    q = Quant.of(0.05, seed - 10)
    y = b.node("MaxPool2D", [b.input("x", "int8", shape, q)], kernel=kernel, strides=strides, pads=pads, quant=q,
               **attrs)
    return b.output(y).build()


def int8_concat(shapes, axis: int, seed: int) -> Graph:
    """A one-node int8 Concat of inputs of `shapes` sharing one quantization."""
    b = GraphBuilder("concat_s8")
    q = Quant.of(0.05, seed - 10)
    xs = [b.input(f"x{k}", "int8", shape, q) for k, shape in enumerate(shapes)]
    return b.output(b.node("Concat", xs, axis=axis, quant=q)).build()


def float_layer(op: str, x_shape: Sequence[int], w_shape: Sequence[int], *, seed: int = 0,
                bias: bool = True, **attrs) -> Graph:
    """A one-node float32 graph of `op` with random weights (and bias)."""
    rng = np.random.default_rng(seed)
    channels = w_shape[3] if op == "DepthwiseConv2D" else w_shape[0]
    b = GraphBuilder(f"{op.lower()}_f32")
    x = b.input("x", "float32", tuple(x_shape))
    ins = [x, b.const("w", rng.standard_normal(tuple(w_shape)).astype(np.float32))]
    if bias:
        ins.append(b.const("b", rng.standard_normal(channels).astype(np.float32)))
    return b.output(b.node(op, ins, **attrs)).build()


def random_input(g: Graph, seed: int = 1) -> np.ndarray:
    v = g.values[g.inputs[0]]
    rng = np.random.default_rng(seed)
    if v.dtype == "int8":
        return rng.integers(-128, 128, size=v.shape, dtype=np.int8)
    return rng.standard_normal(v.shape).astype(np.float32)


def merge(graphs: Sequence[Graph], name: str = "merged") -> tuple[Graph, list[str], list[str]]:
    """The one-node graphs side by side in one graph: graph k's inputs become `<input>_<k>`,
    its (first) output `y<k>` (after a trailing copy, so that each node writes into the arena as it
    would inside a model). Returns the graph and the input and output names per graph."""
    b = GraphBuilder(name)
    ins_of, outs = [], []
    for k, g in enumerate(graphs):
        (node,) = g.nodes
        ins, renamed = [], []
        for i in node.inputs:
            v = g.values[i] if i else None
            if v is None:
                ins.append("")
            elif v.is_const:
                ins.append(b.const(f"{i}{k}", v.data, quant=v.quant))
            else:
                ins.append(b.input(f"{i}_{k}", v.dtype, v.shape, v.quant))  # "_": x1 of 2 is not x of 12
                renamed.append(ins[-1])
        out_q = g.values[node.outputs[0]].quant
        quants = [g.values[o].quant for o in node.outputs]
        y = b.node(node.op, ins, name=f"{node.name}{k}", quant=quants if len(quants) > 1 else out_q, **node.attrs)
        y = y[0] if isinstance(y, list) else y  # a node of several outputs (an LSTM's y, h, c): the first
        out = b.node("Reshape", [y], shape=b.g.values[y].shape, outputs=[f"y{k}"], quant=out_q)
        b.output(out)
        ins_of.append(renamed)
        outs.append(out)
    return b.build(), ins_of, outs


def int8_conv_add(x_shape: Sequence[int], w_shape: Sequence[int], *, seed: int, conv_first: bool = True,
                  add_activation: str = "relu", **attrs) -> Graph:
    """A one-node int8 Conv2DAdd (a convolution with the residual Add in its epilogue, as the
    fusion planner makes it): int8_layer's convolution, its output quantization kept as the
    intermediate's, added to a residual input of the output's shape."""
    conv = int8_layer("Conv2D", x_shape, w_shape, seed=seed, **attrs)
    (node,) = conv.nodes
    mid = conv.values[node.outputs[0]]
    b = GraphBuilder("conv2d_add_s8")
    ins = [b.input("x", "int8", tuple(x_shape), conv.values[node.inputs[0]].quant)]
    ins += [b.const(i, conv.values[i].data, quant=conv.values[i].quant) for i in node.inputs[1:]]
    ins += [""] * (3 - len(ins))
    r = b.input("r", "int8", mid.shape, Quant.of(mid.quant.scale[0] * 1.7, -9))
    y = b.node("Conv2DAdd", [*ins, r], quant=Quant.of(mid.quant.scale[0] * 2.1, 5), conv_quant=mid.quant,
               add_activation=add_activation, conv_first=conv_first, **attrs)
    return b.output(y).build()
