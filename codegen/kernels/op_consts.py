"""A fast kernel that repacks an op's constant at compile time leaves the op's own array
unread: these keep it out of flash (where no other node reads it), either by putting the
packed data in its place or by dropping it."""

from __future__ import annotations

import numpy as np

from codegen.ops.request import ConstArray


def replace_const(ctx, old: ConstArray, data: np.ndarray, dtype: str, only_reader: bool) -> ConstArray:
    """`data` in place of the op's constant `old`, under its name, where this call is its only
    reader (so the op's layout leaves no unread array in flash); else a new constant."""
    arr = np.ascontiguousarray(np.asarray(data).astype(dtype).reshape(-1))
    if not only_reader or old not in ctx.consts:
        new = ConstArray(f"{old.name}_packed", dtype, arr)
        ctx.consts.append(new)
        return new
    new = ConstArray(old.name, dtype, arr)
    ctx.consts[ctx.consts.index(old)] = new
    return new


def drop_unread(ctx, node, value: str, const: ConstArray) -> None:
    """Remove `const`, the flash array of graph value `value`, unless another node reads it."""
    if all(value not in n.inputs for n in ctx.g.nodes if n is not node):
        ctx.consts[:] = [c for c in ctx.consts if c is not const]
