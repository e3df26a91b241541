"""Helpers shared by many ops: broadcasting, fused activations, quantization look-ups."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ir.types import Quant, Value

# Fused activations (TFLite's names); their real-valued clamp bounds.
ACTIVATION_RANGE = {
    "none": (-np.inf, np.inf),
    "relu": (0.0, np.inf),
    "relu6": (0.0, 6.0),
    "relu_n1_to_1": (-1.0, 1.0),
}

MAX_RANK = 4  # elementwise kernels index at most this many (coalesced) dimensions


def check_activation(node: Node) -> str:
    act = node.attrs.get("activation", "none")
    if act not in ACTIVATION_RANGE:
        raise KilnError(f"unsupported fused activation '{act}'", node=node.name)
    return act


def float_activation(node: Node) -> tuple[float, float]:
    return ACTIVATION_RANGE[check_activation(node)]


def apply_float_activation(x: np.ndarray, node: Node) -> np.ndarray:
    lo, hi = float_activation(node)
    return np.clip(x, np.float32(lo), np.float32(hi)).astype(np.float32) if (lo, hi) != (-np.inf, np.inf) else x


def broadcast_shape(node: Node, *shapes: Sequence[int]) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise KilnError(f"shapes {' and '.join(str(list(s)) for s in shapes)} do not broadcast",
                        node=node.name) from None


def broadcast_plan(node: Node, out_shape: Sequence[int], *in_shapes: Sequence[int]
                   ) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Dimensions and per-input element strides (0 where broadcast) of an elementwise loop.

    Adjacent dimensions that broadcast the same way in every input are merged, so that the
    kernel loops over at most MAX_RANK dimensions; the result is left-padded to MAX_RANK.
    """
    rank = len(out_shape)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in in_shapes]
    dims: list[int] = []
    kinds: list[tuple[bool, ...]] = []  # per merged dim: does each input vary along it
    for axis, d in enumerate(out_shape):
        if d == 1:
            continue
        kind = tuple(s[axis] != 1 for s in padded)
        if dims and kinds[-1] == kind:
            dims[-1] *= d
        else:
            dims.append(d)
            kinds.append(kind)
    if len(dims) > MAX_RANK:
        raise KilnError(f"broadcast of {len(dims)} distinct dimensions (at most {MAX_RANK})", node=node.name)
    strides = []
    for k in range(len(in_shapes)):
        st, acc = [], 1
        for d, kind in zip(reversed(dims), reversed(kinds)):
            st.append(acc if kind[k] else 0)
            acc *= d if kind[k] else 1
        strides.append(tuple([0] * (MAX_RANK - len(dims)) + list(reversed(st))))
    return tuple([1] * (MAX_RANK - len(dims)) + dims), strides


def quant_of(g: Graph, name: str, node: Node) -> Quant:
    q = g.values[name].quant
    if q is None:
        raise KilnError(f"int8 tensor '{name}' has no quantization parameters", node=node.name)
    return q


def per_tensor_quants(node: Node, g: Graph) -> tuple[Quant, Quant]:
    """The per-tensor quantization of the node's first input and its output (TFLM's unary
    integer kernels take no other)."""
    qi, qo = (quant_of(g, name, node) for name in (node.inputs[0], node.outputs[0]))
    if qi.per_channel or qo.per_channel:
        raise KilnError(f"{node.op} needs per-tensor quantization", node=node.name)
    return qi, qo


@contextmanager
def naming(node: Node) -> Iterator[None]:
    """Errors raised inside (codegen.quant's, which know no node) name this node."""
    try:
        yield
    except KilnError as err:
        err.node = err.node or node.name
        raise


def is_int8(v: Value | None) -> bool:
    return v is not None and v.dtype == "int8"


def require_dtypes(node: Node, g: Graph, allowed: Sequence[str]) -> str:
    """The dtype of the node's first input, refused unless it is one of `allowed`."""
    dtype = g.values[node.inputs[0]].dtype
    if dtype not in allowed:
        raise KilnError(f"{node.op} on {dtype} is not supported (supported: {', '.join(allowed)})",
                        node=node.name)
    return dtype


def check_sign_multipliers(node: Node) -> None:
    """The (multiplier, shift) pairs a sign-dependent rescale applies to values >= 0 (`positive`)
    and < 0 (`negative`) are in the range TFLite Micro's MultiplyByQuantizedMultiplier takes."""
    for side in ("positive", "negative"):
        m, s = node.attrs[side]
        if not 0 <= m < 2 ** 31 or not -31 <= s <= 30:
            raise KilnError(f"{node.op} {side} multiplier {m} / shift {s} out of range", node=node.name)
