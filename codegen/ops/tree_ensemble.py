"""TreeEnsemble: decision trees over the features of each row, their leaf weights aggregated per
target (ONNX ai.onnx.ml TreeEnsemble, and TreeEnsembleRegressor / TreeEnsembleClassifier
through the frontend); float32 rows x[N, F] -> scores [N, n_targets].

The frontend flattens every encoding into one layout, kept as attributes and emitted as
`const` tables in flash:
- per interior node: `features`, `modes` (ONNX's enum: 0 <=, 1 <, 2 >=, 3 >, 4 ==, 5 !=,
  6 member of a set), `splits`, `missing_true` (a NaN feature takes the true branch) and the
  branches `true_next` / `false_next`: a node index, or -1 - leaf index for a leaf;
- set membership: `member_begin` (per node, plus one end; empty when no node tests a set)
  delimits each node's values in `members`;
- per leaf: `leaf_begin` (plus one end) delimits its (target, weight) votes in `leaf_targets`
  and `leaf_weights` (one vote in TreeEnsemble, any number in the older operators);
- `roots`: the first branch of every tree (a node, or a leaf for a one-leaf tree).

Lowering lays these tables out for flash (codegen/ops/tree_tables.py): trees in preorder, branches
relative to their tree, every index table in the narrowest integer type its values need.

Aggregation follows onnxruntime: "sum" adds the votes in float32, tree by tree and vote by
vote; "average" divides that sum by the number of trees; "min" / "max" keep the extreme vote;
and `base_values` (per target, the older operators) are added last, except to a target no
vote reached, which stays 0.
"""

from __future__ import annotations

import hashlib

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import C_TYPES
from codegen.ops.request import KernelRequest, ScratchArg
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.tree_tables import INDEX_TABLES, flash_tables

MODES = ("leq", "lt", "gte", "gt", "eq", "neq", "member")  # index = ONNX's enum value
MEMBER = MODES.index("member")
AGGREGATES = ("sum", "average", "min", "max")  # index = the kernel's switch value
_NODE_TABLES = ("features", "modes", "splits", "missing_true", "true_next", "false_next")


def _compare(mode: int, v: np.float32, split: np.float32, members: tuple[float, ...]) -> bool:
    if mode == MEMBER:
        return bool(v in members)
    return bool((v <= split, v < split, v >= split, v > split, v == split, v != split)[mode])


@register
class TreeEnsemble(Op):
    name = "TreeEnsemble"
    kind = OpKind.OPAQUE
    attributes = {"n_targets": 1, "aggregate": "sum", "roots": (), "features": (), "modes": (),
                  "splits": (), "missing_true": (), "true_next": (), "false_next": (),
                  "member_begin": (), "members": (), "leaf_begin": (), "leaf_targets": (),
                  "leaf_weights": (), "base_values": ()}
    arity = (1, 1)
    kernels = ("tree_ensemble_f32",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        a = node.attrs
        if len(x.shape) != 2:
            raise KilnError(f"TreeEnsemble needs rows x[N, F], got shape {list(x.shape)}", node=node.name)
        if a["aggregate"] not in AGGREGATES:
            raise KilnError(f"TreeEnsemble aggregate '{a['aggregate']}' is not one of {', '.join(AGGREGATES)}",
                            node=node.name)
        _check_tables(node, features=x.shape[1])
        return [("float32", (x.shape[0], int(a["n_targets"])))]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        a = node.attrs
        targets = int(a["n_targets"])
        out = np.zeros((x.shape[0], targets), np.float32)
        for row, y in zip(x, out):
            seen = np.zeros(targets, bool)
            for root in a["roots"]:
                leaf = _leaf_of(a, row, root)
                for k in range(a["leaf_begin"][leaf], a["leaf_begin"][leaf + 1]):
                    t, w = a["leaf_targets"][k], np.float32(a["leaf_weights"][k])
                    if a["aggregate"] in ("sum", "average"):
                        y[t] = np.float32(y[t] + w)
                    elif not seen[t] or (w < y[t] if a["aggregate"] == "min" else w > y[t]):
                        y[t] = w
                    seen[t] = True
            if a["aggregate"] == "average":
                y[:] = y / np.float32(len(a["roots"]))
            if a["base_values"]:
                y[seen] = y[seen] + np.asarray(a["base_values"], np.float32)[seen]
        return [out]

    @classmethod
    def lower(cls, node, ctx):
        a = node.attrs
        x = ctx.g.values[node.inputs[0]]
        # tables a forest does not need shrink to one entry, behind a flag: no sets, one vote a leaf
        one_vote = tuple(a["leaf_begin"]) == tuple(range(len(a["leaf_begin"])))
        # both branch steps stored: a load, a compare and a select per node, about twice as fast,
        # for a few % more flash (one step per node more); --optimize size keeps one step and
        # decodes the layout bits
        fixed_shape = _fixed_shape(a, one_vote, two_steps=ctx.optimize != "size")
        try:
            tables = flash_tables(a, _packed_modes(a), one_vote, uniform=dict(fixed_shape)["two_steps"])
        except ValueError as err:
            raise KilnError(f"TreeEnsemble: {err}", node=node.name) from None
        params = {
            "rows": x.shape[0], "features": x.shape[1], "targets": int(a["n_targets"]), "trees": len(a["roots"]),
            "base": ctx.constant(node, "base", a["base_values"] or (0.0,), "float32"),
            **{name: ctx.constant(node, name, values, dtype) for name, (values, dtype) in tables.items()},
        }
        # the index tables' types and what the model fixes are the kernel's: one kernel per combination
        fixed = (*((f"{name}_t", C_TYPES[tables[name][1]]) for name in INDEX_TABLES), *fixed_shape)
        kernel = f"tree_ensemble_f32__{hashlib.sha256(repr(fixed).encode()).hexdigest()[:10]}"
        ctx.request(KernelRequest(kernel, node, params, (ctx.tensor(node.inputs[0]), ctx.tensor(node.outputs[0]),
                                                         ScratchArg(int(a["n_targets"]))),
                                  template="tree_ensemble_f32", template_vars=(("name", kernel), *fixed)))


def _fixed_shape(a, one_vote: bool, two_steps: bool = True) -> tuple[tuple[str, object], ...]:
    """What the model fixes for the kernel's walk and vote, as template variables: the one C
    comparison of every node when they share one (scikit-learn writes only BRANCH_LEQ; '' when
    they differ or test sets) and whether a NaN feature then goes true; whether both branch
    steps are stored (tree_tables.branch_steps: with one comparison, unless `two_steps` is off); one vote a leaf; one
    target; the aggregate; whether the per-target `seen` flags are needed (min/max, base values)."""
    packed = set(_packed_modes(a))
    uniform = len(packed) == 1 and (next(iter(packed)) & 7) != MEMBER
    mode = next(iter(packed)) if uniform else 0
    aggregate = AGGREGATES.index(a["aggregate"])
    return (("uniform_cmp", ("<=", "<", ">=", ">", "==", "!=")[mode & 7] if uniform else ""),
            ("two_steps", uniform and two_steps),
            ("nan_true", bool(mode & 8)), ("one_vote", one_vote), ("one_target", int(a["n_targets"]) == 1),
            ("aggregate", aggregate), ("has_base", bool(a["base_values"])),
            ("has_members", bool(a["member_begin"])), ("track_seen", aggregate >= 2 or bool(a["base_values"])))


def _packed_modes(a) -> list[int]:
    """Each node's mode in the low bits, bit 3 set when a NaN feature takes the true branch."""
    missing = a["missing_true"] or (0,) * len(a["modes"])
    return [int(m) | (8 if t else 0) for m, t in zip(a["modes"], missing)]


def _leaf_of(a, row: np.ndarray, branch: int) -> int:
    """The leaf one row reaches from `branch` (a node index, or -1 - leaf)."""
    while branch >= 0:
        v = np.float32(row[a["features"][branch]])
        mode = int(a["modes"][branch])
        members = tuple(a["members"][a["member_begin"][branch]:a["member_begin"][branch + 1]]) \
            if mode == MEMBER else ()
        went_true = _compare(mode, v, np.float32(a["splits"][branch]), members) or \
            bool(np.isnan(v) and a["missing_true"] and a["missing_true"][branch])
        branch = a["true_next"][branch] if went_true else a["false_next"][branch]
    return -1 - branch


def _check_tables(node, features: int) -> None:
    """Refuse tables that disagree in length, branch outside them, or loop (the kernel walks
    them without bounds checks)."""
    a = node.attrs
    nodes = len(a["features"])
    leaves = len(a["leaf_begin"]) - 1

    def bad(what: str):
        return KilnError(f"TreeEnsemble: {what}", node=node.name)

    if any(len(a[t]) != nodes for t in _NODE_TABLES if t != "missing_true") or \
            len(a["missing_true"]) not in (0, nodes):
        raise bad("the per-node tables differ in length")
    if leaves < 0 or len(a["leaf_targets"]) != len(a["leaf_weights"]) or a["leaf_begin"][-1] != len(a["leaf_targets"]) \
            or any(b > e for b, e in zip(a["leaf_begin"], a["leaf_begin"][1:])) or a["leaf_begin"][0] != 0:
        raise bad("the leaf tables are inconsistent")
    if not a["roots"]:
        raise bad("no trees")
    if any(not 0 <= t < int(a["n_targets"]) for t in a["leaf_targets"]):
        raise bad(f"a leaf votes for a target outside 0..{int(a['n_targets']) - 1}")
    if any(not 0 <= f < features for f in a["features"]):
        raise bad(f"a node reads a feature outside 0..{features - 1}")
    if any(not 0 <= int(m) < len(MODES) for m in a["modes"]):
        raise bad("a node mode outside 0..6")
    if MEMBER in a["modes"] and len(a["member_begin"]) != nodes + 1:
        raise bad("set membership nodes without their member table")
    branches = [*a["roots"], *a["true_next"], *a["false_next"]]
    if any(not -leaves <= b < nodes for b in branches):
        raise bad("a branch points outside the node or leaf tables")
    _check_acyclic(a["roots"], a["true_next"], a["false_next"], bad)


def _check_acyclic(roots, true_next, false_next, bad) -> None:
    """Every walk from a root ends at a leaf: no node reaches itself (iterative depth-first)."""
    state = [0] * len(true_next)  # 0 unseen, 1 on the current path, 2 done
    for root in roots:
        if root < 0 or state[root]:
            continue
        stack = [(root, 0)]
        state[root] = 1
        while stack:
            at, step = stack.pop()
            if step == 2:
                state[at] = 2
                continue
            stack.append((at, step + 1))
            child = (true_next, false_next)[step][at]
            if child >= 0:
                if state[child] == 1:
                    raise bad("a tree branches back to one of its own nodes")
                if state[child] == 0:
                    state[child] = 1
                    stack.append((child, 0))
