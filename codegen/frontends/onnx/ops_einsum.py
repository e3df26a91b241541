"""Einsum as Kiln ops: diagonals (Take), sums over labels used once (ReduceSum), one batched
MatMul per pair of operands (between Transposes and Reshapes) and a final Transpose.

Operands are contracted left to right. For a pair with labels A and B, the labels both share
and still needed later are batch axes, those shared and needed no more are contracted, the
rest are free: a goes to [batch..., free_a, K], b to [batch..., K, free_b] and MatMul's batch
broadcasting does the rest (an ellipsis of size 1 against a larger one included).
"""

from __future__ import annotations

import string

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.reader import OnnxNode

LETTERS = string.ascii_letters


def parse_equation(node: OnnxNode, equation: str, ranks: list[int]) -> tuple[list[str], str]:
    """The operand terms and the output term, every ellipsis spelled out in upper-case letters
    from the end of the alphabet (ONNX labels are lower case)."""
    text = equation.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise node.error(f"equation '{equation}' names {len(terms)} operands, the node has {len(ranks)}")
    ell_rank = max([rank - len(t.replace("...", "")) for t, rank in zip(terms, ranks) if "..." in t], default=0)
    ellipsis = "ZYXWVUTSRQPONMLKJIHGFEDCBA"[:ell_rank][::-1]
    spelled = []
    for t, rank in zip(terms, ranks):
        plain = t.replace("...", "")
        if not all(c in string.ascii_lowercase for c in plain) or t.count("...") > 1:
            raise node.error(f"equation '{equation}': operand '{t}' is not lower-case labels with at most one '...'")
        n = rank - len(plain)
        if ("..." not in t and n != 0) or n < 0:
            raise node.error(f"equation '{equation}': operand '{t}' does not match its rank {rank}")
        spelled.append(t.replace("...", ellipsis[ell_rank - n:]))
    if arrow:
        out = rhs.replace("...", ellipsis)
    else:  # implicit output: the ellipsis, then the labels used once, in alphabetical order
        counts = "".join(spelled)
        out = ellipsis + "".join(sorted(c for c in set(counts) if c.islower() and counts.count(c) == 1))
    if len(set(out)) != len(out) or any(c not in "".join(spelled) for c in out):
        raise node.error(f"equation '{equation}': the output repeats a label or names one no operand has")
    return spelled, out


@converter("Einsum")
def convert_einsum(ctx, node):
    names = [i for i in node.inputs if i]
    if any(ctx.dtype(n) != "float32" for n in names):
        raise node.error(f"operands are {sorted({ctx.dtype(n) for n in names})}; Kiln's Einsum is float32")
    terms, out = parse_equation(node, str(node.attr("equation")), [len(ctx.shape(n)) for n in names])
    operands = [(ctx.kiln(n), t) for n, t in zip(names, terms)]
    for k, (value, term) in enumerate(operands):
        needed = set(out).union(*(t for j, (_, t) in enumerate(operands) if j != k))
        operands[k] = _prepare(ctx, node, value, term, needed, f"in{k}")
    value, term = operands[0]
    for k, (other, other_term) in enumerate(operands[1:], start=1):
        needed = set(out).union(*(t for _, t in operands[k + 1:]))
        value, term = _contract(ctx, node, (value, term), (other, other_term), needed, f"pair{k}")
    perm = tuple(term.index(c) for c in out)
    if perm != tuple(range(len(perm))):
        value = ctx.add(node, "Transpose", [value], role="to_output", perm=perm)
    ctx.bind(node.outputs[0], value)


def _prepare(ctx: ConvertContext, node: OnnxNode, value: str, term: str, needed: set[str],
             tag: str) -> tuple[str, str]:
    """One operand with its repeated labels reduced to their diagonal and the labels no other
    operand nor the output uses summed away."""
    shape = ctx.b.g.values[value].shape
    if len(set(term)) != len(term):
        unique = "".join(dict.fromkeys(term))
        index = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
        diag = np.ascontiguousarray(np.einsum(f"{term}->{unique}", index))
        value = ctx.add(node, "Take", [value, ctx.weight(node, f"{tag}_diagonal", diag)], role=f"{tag}_diagonal")
        term = unique
    alone = [i for i, c in enumerate(term) if c not in needed]
    if alone:
        value = ctx.add(node, "ReduceSum", [value], role=f"{tag}_sum", axes=tuple(alone), keepdims=False)
        term = "".join(c for c in term if c in needed)
    return value, term


def _contract(ctx: ConvertContext, node: OnnxNode, a: tuple[str, str], b: tuple[str, str], needed: set[str],
              tag: str) -> tuple[str, str]:
    (va, ta), (vb, tb) = a, b
    sa, sb = dict(zip(ta, ctx.b.g.values[va].shape)), dict(zip(tb, ctx.b.g.values[vb].shape))
    batch = "".join(c for c in ta if c in tb and c in needed)
    summed = "".join(c for c in ta if c in tb and c not in needed)
    free_a = "".join(c for c in ta if c not in tb)
    free_b = "".join(c for c in tb if c not in ta)
    for c in summed:
        if sa[c] != sb[c]:
            raise node.error(f"label '{c}' has sizes {sa[c]} and {sb[c]} in two operands")
    k = int(np.prod([sa[c] for c in summed], dtype=np.int64))
    fa = int(np.prod([sa[c] for c in free_a], dtype=np.int64))
    fb = int(np.prod([sb[c] for c in free_b], dtype=np.int64))
    left = _arrange(ctx, node, va, ta, batch + free_a + summed,
                    tuple(sa[c] for c in batch) + (fa, k), f"{tag}_a")
    right = _arrange(ctx, node, vb, tb, batch + summed + free_b,
                     tuple(sb[c] for c in batch) + (k, fb), f"{tag}_b")
    product = ctx.add(node, "MatMul", [left, right], role=f"{tag}_matmul")
    sizes = {**sa, **{c: max(sa.get(c, 1), sb[c]) for c in tb}}
    result_term = batch + free_a + free_b
    shape = tuple(sizes[c] for c in result_term)
    if ctx.b.g.values[product].shape != shape:
        product = ctx.add(node, "Reshape", [product], role=f"{tag}_unflatten", shape=shape)
    return product, result_term


def _arrange(ctx: ConvertContext, node: OnnxNode, value: str, term: str, order: str, shape: tuple[int, ...],
             tag: str) -> str:
    """`value` (labels `term`) transposed to the label order `order` and reshaped to `shape`."""
    perm = tuple(term.index(c) for c in order)
    if perm != tuple(range(len(perm))):
        value = ctx.add(node, "Transpose", [value], role=f"{tag}_order", perm=perm)
    if ctx.b.g.values[value].shape != shape:
        value = ctx.add(node, "Reshape", [value], role=f"{tag}_shape", shape=shape)
    return value
