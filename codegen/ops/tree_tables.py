"""The flash layout of a TreeEnsemble (what `TreeEnsemble.lower` emits): every tree renumbered in
preorder, its branches relative to the tree, each index table in the narrowest signed type that
holds its values.

Why: the index tables, int32 and absolute, were most of a forest's flash. In preorder a node's
children follow it, so a branch to a node is a small positive step (less than the tree's node
count) and a branch to a leaf names it by its rank among the tree's leaves (-1 - rank): both fit
int8 for trees of depth 7 or less, however many trees the forest holds. Only the per-tree tables
(`roots`, `leaf_base`) grow with the forest.

A node's first child is laid out right after it, so only the step to its second child is stored
(one int8 a node less; 8 % of a 100-tree depth-6 forest). The first child is the true one, or
the false one when only that one is a node (mode bit SWAPPED); a node with two leaves
(TWO_LEAVES) has them at consecutive ranks. Storing the leaves as nodes of the same array (as
many embedded tree compilers do, the false branch the only one stored) was larger: a leaf would
then pay a feature, a mode and a branch entry besides its weight.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

INDEX_TYPES = ("int8", "int16", "int32")  # what narrowest_int chooses from
# the tables whose type the model decides (the kernel template's `<table>_t` variables)
INDEX_TABLES = ("roots", "leaf_base", "feature", "second_step", "true_step", "false_step", "member_begin", "leaf_begin",
                "leaf_target")

MAX_DAG_GROWTH = 4096  # entries a forest whose trees share subtrees may gain by their copies
SWAPPED = 16  # mode bit: the node's first child is its false child (its true child is a leaf)
TWO_LEAVES = 32  # mode bit: both children are leaves, the first one rank below the stored one


@dataclass(frozen=True)
class Preorder:
    """The forest in preorder: new node k is the old node `nodes[k]`, new leaf k the old leaf
    `leaves[k]`; roots, steps and mode bits as the kernel reads them (see the module docstring)."""

    roots: tuple[int, ...]  # per tree: its first node (absolute), or -1 (a one-leaf tree)
    leaf_base: tuple[int, ...]  # per tree: its first leaf
    nodes: tuple[int, ...]
    leaves: tuple[int, ...]
    second_step: tuple[int, ...]  # per node, to its second child: > 0 a node this far on, < 0 -1 - leaf rank
    layout_bits: tuple[int, ...]  # per node: SWAPPED, TWO_LEAVES


def preorder(roots, true_next, false_next) -> Preorder:
    """Renumbers each tree depth-first, a node's first child right after it: its true child, or its
    false child when only that one is a node. A node or leaf two branches reach (the tables allow
    a DAG) is laid out once per branch; walks stay the same. Laid out so, a DAG can grow
    exponentially: past twice the old tables (plus MAX_DAG_GROWTH entries) it is refused."""
    limit = 2 * (len(true_next) + len(roots)) + MAX_DAG_GROWTH
    nodes: list[int] = []
    leaves: list[int] = []
    second_step: list[int] = []
    bits: list[int] = []
    new_roots, leaf_base = [], []
    for root in roots:
        leaf_base.append(len(leaves))
        pending = [(root, None, False)]  # (old branch, new parent or None for the root, is its second child)
        while pending:
            branch, parent, second = pending.pop()
            if len(nodes) + len(leaves) > limit:
                raise ValueError(f"its trees share subtrees: one copy per path would exceed {limit} entries "
                                 f"(from {len(true_next)} nodes)")
            if branch < 0:
                code = -1 - (len(leaves) - leaf_base[-1])
                leaves.append(-1 - branch)
            else:
                code = len(nodes) if parent is None else len(nodes) - parent
                at = len(nodes)
                nodes.append(branch)
                swapped = true_next[branch] < 0 <= false_next[branch]
                first, then = (false_next[branch], true_next[branch]) if swapped else \
                    (true_next[branch], false_next[branch])
                second_step.append(0)
                bits.append((SWAPPED if swapped else 0) | (TWO_LEAVES if first < 0 else 0))
                pending += [(then, at, True), (first, at, False)]
            if parent is None:
                new_roots.append(code)
            elif second:
                second_step[parent] = code
    return Preorder(tuple(new_roots), tuple(leaf_base), tuple(nodes), tuple(leaves), tuple(second_step),
                    tuple(bits))


def narrowest_int(values) -> str:
    """The narrowest of int8 / int16 / int32 that holds every value (int8 for none)."""
    lo, hi = int(min(values, default=0)), int(max(values, default=0))
    for dtype in INDEX_TYPES:
        info = np.iinfo(dtype)
        if info.min <= lo and hi <= info.max:
            return dtype
    raise ValueError(f"index values {lo}..{hi} do not fit int32")


def branch_steps(order: Preorder) -> tuple[list[int], list[int]]:
    """Per node, the steps to its true and to its false child (> 0 a node this far on, < 0 -1 -
    leaf rank): both stored, the walk of a forest with one comparison everywhere is then a load,
    a compare and a select per node (no layout bits to decode; its mode table is one entry)."""
    true_step, false_step = [], []
    for second, bits in zip(order.second_step, order.layout_bits):
        first = second + 1 if bits & TWO_LEAVES else 1
        t, f = (second, first) if bits & SWAPPED else (first, second)
        true_step.append(t)
        false_step.append(f)
    return true_step, false_step


def flash_tables(a: dict, packed_modes: list[int], one_vote: bool, uniform: bool = False) -> dict[str, tuple[list, str]]:
    """The kernel's tables for TreeEnsemble attributes `a` in preorder, by name: (values, dtype).
    A table the forest does not need is one entry (the kernel's flags say which; `one_vote`:
    every leaf holds one vote, leaf_begin is not needed; `uniform`: one comparison for every
    node, walked by branch_steps instead of second_step and the mode bits)."""
    order = preorder(a["roots"], a["true_next"], a["false_next"])
    true_step, false_step = branch_steps(order) if uniform else ((), ())
    member_begin, members, leaf_begin, targets, weights = [0], [], [0], [], []
    for n in order.nodes:
        if a["member_begin"]:
            members += a["members"][a["member_begin"][n]:a["member_begin"][n + 1]]
            member_begin.append(len(members))
    for leaf in order.leaves:
        votes = range(a["leaf_begin"][leaf], a["leaf_begin"][leaf + 1])
        targets += [a["leaf_targets"][k] for k in votes]
        weights += [a["leaf_weights"][k] for k in votes]
        leaf_begin.append(len(targets))
    index_tables = {
        "roots": order.roots, "leaf_base": order.leaf_base, "feature": [a["features"][n] for n in order.nodes],
        "second_step": () if uniform else order.second_step, "true_step": true_step, "false_step": false_step,
        "member_begin": member_begin if a["member_begin"] else (), "leaf_begin": () if one_vote else leaf_begin,
        "leaf_target": targets if int(a["n_targets"]) > 1 else (),  # else every vote is for target 0
    }
    tables = {name: (list(v) or [0], narrowest_int(v)) for name, v in index_tables.items()}
    tables.update({
        "mode": ([packed_modes[n] | bits for n, bits in zip(order.nodes, order.layout_bits)][:1 if uniform else None]
                 or [0], "uint8"),
        "split": ([a["splits"][n] for n in order.nodes] or [0.0], "float32"),
        "members": (members or [0.0], "float32"),
        "leaf_weight": (weights or [0.0], "float32"),
    })
    return tables
