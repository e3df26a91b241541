"""The three ONNX encodings of tree ensembles flattened into the tables of Kiln's TreeEnsemble op
(codegen/ops/tree_ensemble.py): TreeEnsemble (ai.onnx.ml 5: interior nodes and leaves in
separate lists) and TreeEnsembleRegressor / TreeEnsembleClassifier (ai.onnx.ml 1 and 3: one
node list per tree id, leaves marked LEAF, votes listed apart by tree and node id)."""

from __future__ import annotations

import math

import numpy as np
from onnx import numpy_helper

from codegen.frontends.onnx.reader import OnnxNode
from codegen.ops.tree_ensemble import MEMBER, MODES

AGGREGATE_V5 = ("average", "sum", "min", "max")  # TreeEnsemble's aggregate_function enum
POST_TRANSFORM_V5 = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


def floats(node: OnnxNode, name: str) -> list[float] | None:
    """A float list attribute, or its `_as_tensor` / tensor form, as float32 values (None: absent)."""
    value = node.attr(name)
    if value is None:
        value = node.attr(f"{name}_as_tensor")
    if value is None:
        return None
    data = numpy_helper.to_array(value) if not isinstance(value, list) else np.asarray(value)
    return [float(v) for v in np.asarray(data, np.float32).reshape(-1)]


def ints(node: OnnxNode, name: str) -> list[int]:
    """An integer list attribute (or tensor), [] when absent."""
    value = node.attr(name)
    if value is None:
        return []
    data = value if isinstance(value, list) else numpy_helper.to_array(value).reshape(-1).tolist()
    return [int(v) for v in data]


def _branch(node_id: int, is_leaf: int) -> int:
    return -1 - node_id if is_leaf else node_id


def tree_ensemble_v5(node: OnnxNode) -> dict:
    """Kiln TreeEnsemble attributes of an ai.onnx.ml 5 TreeEnsemble node."""
    modes = ints(node, "nodes_modes")
    trueleafs, falseleafs = ints(node, "nodes_trueleafs"), ints(node, "nodes_falseleafs")
    truenodes, falsenodes = ints(node, "nodes_truenodeids"), ints(node, "nodes_falsenodeids")
    if not len(modes) == len(trueleafs) == len(falseleafs) == len(truenodes) == len(falsenodes):
        raise node.error("the nodes_* attributes differ in length")
    member_begin, members = _member_sets(node, modes)
    roots = []
    for root in ints(node, "tree_roots"):
        one_leaf = 0 <= root < len(modes) and trueleafs[root] and falseleafs[root] and \
            truenodes[root] == falsenodes[root]
        roots.append(-1 - truenodes[root] if one_leaf else root)
    targets = ints(node, "leaf_targetids")
    aggregate = node.attr("aggregate_function", 1)
    if not 0 <= aggregate < len(AGGREGATE_V5):
        raise node.error(f"aggregate_function {aggregate} is not one of 0..3")
    return {
        "n_targets": node.attr("n_targets", max(targets, default=0) + 1), "aggregate": AGGREGATE_V5[aggregate],
        "roots": tuple(roots), "features": tuple(ints(node, "nodes_featureids")), "modes": tuple(modes),
        "splits": tuple(0.0 if m == MEMBER else v for m, v in zip(modes, floats(node, "nodes_splits") or ())),
        "missing_true": tuple(ints(node, "nodes_missing_value_tracks_true")),
        "true_next": tuple(map(_branch, truenodes, trueleafs)),
        "false_next": tuple(map(_branch, falsenodes, falseleafs)),
        "member_begin": member_begin, "members": members,
        "leaf_begin": tuple(range(len(targets) + 1)), "leaf_targets": tuple(targets),
        "leaf_weights": tuple(floats(node, "leaf_weights") or ()),
    }


def _member_sets(node: OnnxNode, modes: list[int]) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """membership_values (NaN-delimited sets, one per BRANCH_MEMBER node in node order) as
    per-node ranges into one member list; ((), ()) when no node tests a set."""
    if MEMBER not in modes:
        return (), ()
    values = floats(node, "membership_values") or []
    sets: list[list[float]] = [[]]
    for v in values:
        if math.isnan(v):
            sets.append([])
        else:
            sets[-1].append(v)
    if not sets[-1]:
        sets.pop()  # the delimiter after the last set
    if len(sets) != modes.count(MEMBER):
        raise node.error(f"membership_values hold {len(sets)} sets for {modes.count(MEMBER)} BRANCH_MEMBER nodes")
    begin, members, pending = [0], [], iter(sets)
    for mode in modes:
        if mode == MEMBER:
            members.extend(next(pending))
        begin.append(len(members))
    return tuple(begin), tuple(members)


def tree_ensemble_v1(node: OnnxNode, vote_prefix: str, n_targets: int) -> dict:
    """Kiln TreeEnsemble attributes of a TreeEnsembleRegressor (votes `target_*`) or
    TreeEnsembleClassifier (votes `class_*`, targets = classes)."""
    tree_ids, node_ids = ints(node, "nodes_treeids"), ints(node, "nodes_nodeids")
    modes = node.attr("nodes_modes", [])
    position = {(t, n): i for i, (t, n) in enumerate(zip(tree_ids, node_ids))}
    if len(position) != len(tree_ids) or len(modes) != len(tree_ids):
        raise node.error("nodes_treeids / nodes_nodeids / nodes_modes differ in length or repeat a node")
    unknown = sorted(set(modes) - {f"BRANCH_{m.upper()}" for m in MODES if m != "member"} - {"LEAF"})
    if unknown:
        raise node.error(f"node mode(s) {', '.join(unknown)} are not supported")
    interior = [i for i, m in enumerate(modes) if m != "LEAF"]
    leaves = [i for i, m in enumerate(modes) if m == "LEAF"]
    slot = {i: k for k, i in enumerate(interior)} | {i: -1 - k for k, i in enumerate(leaves)}

    def branch(i: int, ids: list[int]) -> int:
        key = (tree_ids[i], ids[i])
        if key not in position:
            raise node.error(f"tree {key[0]} node {node_ids[i]} branches to a missing node {key[1]}")
        return slot[position[key]]

    truenodes, falsenodes = ints(node, "nodes_truenodeids"), ints(node, "nodes_falsenodeids")
    votes: list[list[tuple[int, float]]] = [[] for _ in leaves]
    vote_trees, vote_nodes = ints(node, f"{vote_prefix}_treeids"), ints(node, f"{vote_prefix}_nodeids")
    for t, n, target, w in zip(vote_trees, vote_nodes, ints(node, f"{vote_prefix}_ids"),
                               floats(node, f"{vote_prefix}_weights") or []):
        at = position.get((t, n))
        if at is None or modes[at] != "LEAF":
            raise node.error(f"a vote for tree {t} node {n}, which is not a leaf")
        votes[-1 - slot[at]].append((target, w))
    first_of_tree = {}
    for i, t in enumerate(tree_ids):
        first_of_tree.setdefault(t, i)
    aggregate = str(node.attr("aggregate_function", "SUM")).lower()
    missing = ints(node, "nodes_missing_value_tracks_true")
    values = floats(node, "nodes_values") or [0.0] * len(modes)
    features = ints(node, "nodes_featureids")
    return {
        "n_targets": n_targets, "aggregate": aggregate, "roots": tuple(slot[i] for i in first_of_tree.values()),
        "features": tuple(features[i] for i in interior),
        "modes": tuple(MODES.index(modes[i][len("BRANCH_"):].lower()) for i in interior),
        "splits": tuple(values[i] for i in interior),
        "missing_true": tuple(missing[i] for i in interior) if missing else (),
        "true_next": tuple(branch(i, truenodes) for i in interior),
        "false_next": tuple(branch(i, falsenodes) for i in interior),
        "leaf_begin": tuple(np.cumsum([0] + [len(v) for v in votes]).tolist()),
        "leaf_targets": tuple(t for v in votes for t, _ in v), "leaf_weights": tuple(w for v in votes for _, w in v),
        "base_values": tuple(floats(node, "base_values") or ()),
    }
