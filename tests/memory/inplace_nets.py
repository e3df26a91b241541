"""A depthwise-heavy MobileNet-style test net (int8 or float32) for the in-place tests and
bench/memory.py: a stem conv, depthwise blocks (stride 1 and 2), pointwise convs that narrow
the channels, a residual Add, a Clip and a Sigmoid, so that every kind of in-place reuse is
on the schedule and the depthwise steps are where the no-aliasing peak is."""

from __future__ import annotations

import numpy as np

from codegen.compiler import compile_graph
from codegen.emit.render import render
from codegen.ir import Graph, GraphBuilder, Quant
from codegen.memory import Plan, validate_plan
from codegen.memory.planners import greedy_aliases, place_greedy
from codegen.options import CompileOptions
from codegen.targets import load_target


def mobilenet_style(dtype: str = "int8", hw: int = 24, seed: int = 0) -> Graph:
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"mobilenet_style_{dtype}")
    s8 = dtype == "int8"
    act_q = (lambda s, zp: Quant.of(s, zp)) if s8 else (lambda s, zp: None)

    def weights(name, shape, axis):
        if not s8:
            return b.const(name, (rng.standard_normal(shape) * 0.3).astype(np.float32))
        scales = rng.uniform(0.002, 0.01, shape[axis])
        return b.const(name, rng.integers(-127, 128, size=shape, dtype=np.int8),
                       quant=Quant.of(scales, 0, axis)), scales

    def bias(name, n, in_scale, w_scales):
        if not s8:
            return b.const(name, rng.standard_normal(n).astype(np.float32))
        return b.const(name, rng.integers(-2000, 2000, n).astype(np.int32),
                       quant=Quant.of(in_scale * w_scales, 0, 0))

    def layer(op, x, in_scale, w_shape, out_scale, name, **attrs):
        axis = 3 if op == "DepthwiseConv2D" else 0
        if s8:
            w, ws = weights(f"w_{name}", w_shape, axis)
            ins = [x, w, bias(f"b_{name}", w_shape[axis], in_scale, ws)]
        else:
            ins = [x, weights(f"w_{name}", w_shape, axis), bias(f"b_{name}", w_shape[axis], 0, 0)]
        return b.node(op, ins, name=name, quant=act_q(out_scale, -3), **attrs)

    x = b.input("x", dtype, (1, hw, hw, 3), act_q(0.02, -5))
    y = layer("Conv2D", x, 0.02, (16, 3, 3, 3), 0.05, "stem", pads=(1, 1, 1, 1), activation="relu6")
    y = layer("DepthwiseConv2D", y, 0.05, (1, 3, 3, 16), 0.05, "dw1", pads=(1, 1, 1, 1), activation="relu6")
    y = layer("Conv2D", y, 0.05, (8, 1, 1, 16), 0.06, "pw1")
    y = layer("DepthwiseConv2D", y, 0.06, (1, 3, 3, 8), 0.06, "dw2", strides=(2, 2), pads=(0, 0, 1, 1))
    z = layer("DepthwiseConv2D", y, 0.06, (1, 3, 3, 8), 0.06, "dw3", pads=(1, 1, 1, 1))
    y = b.node("Add", [z, y], name="res", quant=act_q(0.08, 0))
    y = b.node("Clip", [y], name="clip", quant=act_q(0.08, 0), min=-2.0, max=2.0)
    y = layer("DepthwiseConv2D", y, 0.08, (1, 3, 3, 8), 0.06, "dw4", strides=(2, 2), pads=(1, 1, 1, 1))
    y = b.node("Sigmoid", [y], name="sig", quant=act_q(1.0 / 256, -128))
    y = layer("Conv2D", y, 1.0 / 256, (4, 1, 1, 8), 0.05, "head")
    return b.output(y).build()


def forced_inplace(g: Graph, target: str = "host"):
    """The build without in-place reuse, and the same program with every usable alias taken
    (the planners only take those that lower the peak): (plain build, forced files, chosen)."""
    # Fusion off: the planner would merge the residual Add with the Clip after it (one buffer
    # less), and the tests are about every kind of in-place reuse of unfused kernels.
    plain = compile_graph(g, CompileOptions(load_target(target), planner="linear", fusion="off"), name="t",
                          model_file="t.test", model_sha256="0" * 64)
    chosen = greedy_aliases(plain.buffers, plain.aliases)
    offsets = place_greedy(plain.buffers, chosen)
    temps = [a.temp for a in chosen if a.temp is not None]
    arena = max(offsets[b.name] + b.size for b in plain.buffers + temps)
    plan = Plan(offsets, arena, plain.plan.lower_bound, "forced", "FEASIBLE", aliases=tuple(a.pair for a in chosen))
    validate_plan(plain.buffers, plan, plain.aliases)
    files = {**plain.files, **render(plain.lowered, plan, name="t", model_file="t.test", model_sha256="0" * 64)}
    return plain, files, chosen
