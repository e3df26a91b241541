"""The converter registry of the TFLite frontend: `converts` registers a converter per builtin
name in CONVERTERS, with its arity; and the geometry checks that several converter modules share.

The converter modules (ops.py and ops_*.py) import this one and register on import; the package
imports them all (codegen/frontends/tflite/__init__.py), so no converter module imports another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from codegen.frontends.converters import ConverterTable
from codegen.frontends.tflite.importer import OpContext

SAME, VALID = 0, 1  # tflite.Padding


@dataclass(frozen=True)
class Converter:
    fn: Callable[[OpContext], None]
    inputs: tuple[int, int | None]  # (required, maximum or None for any number)
    outputs: int | None = 1  # None: any number (SPLIT, UNPACK)

    def check_arity(self, ctx: OpContext) -> None:
        lo, hi = self.inputs
        n = len(ctx.op.inputs)
        if n < lo or (hi is not None and n > hi):
            span = f"{lo}" if lo == hi else f"{lo}..{hi if hi is not None else 'n'}"
            raise ctx.error(f"takes {span} inputs, the model gives {n}")
        missing = [k for k in range(lo) if ctx.tensor(k) is None]
        if missing:
            raise ctx.error(f"required input {missing[0]} is absent")
        if self.outputs is None and not ctx.op.outputs:
            raise ctx.error("has no outputs")
        if self.outputs is not None and len(ctx.op.outputs) != self.outputs:
            raise ctx.error(f"has {len(ctx.op.outputs)} outputs, expected {self.outputs}")


CONVERTERS: ConverterTable[Converter] = ConverterTable(
    "TFLite", lambda fn, inputs=(1, 1), outputs=1: Converter(fn, inputs, outputs))


def converts(*codes: str, inputs: tuple[int, int | None] = (1, 1), outputs: int | None = 1):
    """@converts("BUILTIN", inputs=(required, maximum), outputs=n): the shared idiom
    (codegen/frontends/converters.py) with the arity TFLite checks before converting."""
    return CONVERTERS.converts(*codes, inputs=inputs, outputs=outputs)


# -- helpers -----------------------------------------------------------------------------------

def check_rank(ctx: OpContext, k: int, rank: int, what: str) -> tuple[int, ...]:
    shape = ctx.shape(k)
    if len(shape) != rank:
        raise ctx.error(f"{what} must have rank {rank}, got shape {list(shape)}")
    return shape


def check_positive(ctx: OpContext, what: str, *values: int) -> tuple[int, ...]:
    if any(int(v) < 1 for v in values):
        raise ctx.error(f"{what} must be at least 1, got {tuple(int(v) for v in values)}")
    return tuple(int(v) for v in values)


def explicit_pads(ctx: OpContext, padding: int, in_hw, kernel_hw, strides, dilations) -> tuple[int, int, int, int]:
    """TFLite SAME/VALID as explicit (top, left, bottom, right); SAME puts the odd pixel last."""
    if padding == VALID:
        return (0, 0, 0, 0)
    if padding != SAME:
        raise ctx.error(f"unknown padding type {padding}")
    before, after = [], []
    for n, k, s, d in zip(in_hw, kernel_hw, strides, dilations):
        out = (n + s - 1) // s
        total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
        before.append(total // 2)
        after.append(total - total // 2)
    return (before[0], before[1], after[0], after[1])
