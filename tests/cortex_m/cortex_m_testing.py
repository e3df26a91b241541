"""Small graphs for the Cortex-M tests and a helper to build them for any target."""

from __future__ import annotations

import numpy as np

from codegen.compiler import BuildResult
from codegen.ir import Graph, GraphBuilder, Quant
from helpers import build_graph

# Every Cortex-M target, and the three the issue asks to be exact on (M4F, M7, M55).
ALL_TARGETS = ["cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"]
MAIN_TARGETS = ["cortex-m4", "cortex-m7", "cortex-m55"]


def build(g: Graph, target: str, name: str = "t") -> BuildResult:
    return build_graph(g, name, target=target)


def float_graph() -> Graph:
    """float32: broadcast Add, Reshape, Add of two values, Mul by a constant."""
    b = GraphBuilder("f")
    x = b.input("x", "float32", (1, 4, 4, 6))
    y = b.node("Add", [x, b.const("bias", np.linspace(-1.5, 2.0, 6, dtype=np.float32))], activation="relu")
    r = b.node("Reshape", [y], shape=(1, 96))
    s = b.node("Add", [r, r])
    z = b.node("Mul", [s, b.const("gain", np.float32(0.375))])
    return b.output(z).build()


def int8_graph() -> Graph:
    """int8: per-channel broadcast Add with fused ReLU, Reshape, Add of two inputs."""
    b = GraphBuilder("q")
    x = b.input("x", "int8", (1, 4, 4, 8), Quant.of(0.05, -3))
    w = b.input("w", "int8", (1, 128), Quant.of(0.11, 7))
    c = b.const("offset", np.arange(-64, 64, 16, dtype=np.int8).reshape(1, 1, 1, 8), quant=Quant.of(0.02, 5))
    y = b.node("Add", [x, c], activation="relu", quant=Quant.of(0.06, -128))
    r = b.node("Reshape", [y], shape=(1, 128), quant=Quant.of(0.06, -128))
    z = b.node("Add", [r, w], quant=Quant.of(0.15, 2))
    return b.output(z).build()
