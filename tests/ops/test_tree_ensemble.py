"""TreeEnsemble: random scikit-learn-shaped forests (a few trees of depth 4 over 5 features)
written as ai.onnx.ml 5 TreeEnsemble and as the older TreeEnsembleRegressor /
TreeEnsembleClassifier, imported by the ONNX frontend, against onnxruntime, and the generated
C (strict flags, sanitizers) against the numpy reference."""

from __future__ import annotations

import shutil

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_models as om
from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.ir import GraphBuilder, run_graph
from op_testing import assert_c_equals_reference

FEATURES, DEPTH = 5, 4
MODE_NAMES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ")


def random_tree(rng, modes, targets: int, depth: int = 0, max_depth: int = DEPTH, features: int = FEATURES) -> dict:
    """A nested tree: interior {mode, feature, split, members, missing, true, false} or leaf {votes}."""
    if depth == max_depth or (depth > 1 and rng.random() < 0.25):
        count = 1 if targets == 1 else int(rng.integers(1, targets + 1))
        return {"votes": [(int(t), float(np.float32(rng.normal())))
                          for t in rng.choice(targets, count, replace=False)]}
    mode = int(rng.choice(modes))
    split = float(np.float32(np.round(rng.normal(), 1)))  # on a 0.1 grid: inputs hit it exactly
    t = {"mode": mode, "feature": int(rng.integers(features)), "split": split,
         "members": sorted({float(v) for v in rng.integers(-3, 4, 3)}),  # categories (onnxruntime: integers)
         "missing": int(rng.integers(2))}
    for branch in ("true", "false"):  # drawn after the node, as before (the seeds' forests stay the same)
        t[branch] = random_tree(rng, modes, targets, depth + 1, max_depth, features)
    return t


def forest(seed: int, modes=tuple(range(6)), trees: int = 4, targets: int = 1, depth: int = DEPTH,
           features: int = FEATURES) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [random_tree(rng, modes, targets, 0, depth, features) for _ in range(trees)]


def rows(seed: int, n: int = 16, features: int = FEATURES) -> np.ndarray:
    """Inputs on the splits' 0.1 grid (ties with every comparison), a few NaN."""
    rng = np.random.default_rng(seed + 100)
    x = np.round(rng.normal(size=(n, features)), 1).astype(np.float32)
    x[rng.random(x.shape) < 0.08] = np.nan
    return x


def v5_node(trees: list[dict], targets: int, aggregate: int = 1, post_transform: int = 0):
    """The forest as a TreeEnsemble (ai.onnx.ml 5) node: interior nodes and leaves apart."""
    n = {k: [] for k in ("modes", "feature", "split", "missing", "true", "trueleaf", "false", "falseleaf")}
    leaf_targets, leaf_weights, members, roots = [], [], [], []

    def add(t) -> tuple[int, int]:
        if "votes" in t:
            ((target, w),) = t["votes"][:1]
            leaf_targets.append(target)
            leaf_weights.append(w)
            return len(leaf_targets) - 1, 1
        i = len(n["modes"])
        for k in n:
            n[k].append(0)
        n["modes"][i], n["feature"][i], n["missing"][i] = t["mode"], t["feature"], t["missing"]
        n["split"][i] = t["split"] if t["mode"] != 6 else np.nan
        if t["mode"] == 6:
            members.extend([*t["members"], np.nan])
        n["true"][i], n["trueleaf"][i] = add(t["true"])
        n["false"][i], n["falseleaf"][i] = add(t["false"])
        return i, 0

    for t in trees:
        at, leaf = add(t)
        if leaf:  # a one-leaf tree: one node whose both branches reach that leaf
            i = len(n["modes"])
            for k, v in zip(n, (0, 0, 0.0, 0, at, 1, at, 1)):
                n[k].append(v)
            at = i
        roots.append(at)
    attrs = {}
    if members:
        attrs["membership_values"] = numpy_helper.from_array(np.asarray(members, np.float32))
    return helper.make_node(
        "TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", n_targets=targets, aggregate_function=aggregate,
        post_transform=post_transform, tree_roots=roots,
        nodes_modes=numpy_helper.from_array(np.asarray(n["modes"], np.uint8)), nodes_featureids=n["feature"],
        nodes_splits=numpy_helper.from_array(np.asarray(n["split"], np.float32)),
        nodes_missing_value_tracks_true=n["missing"], nodes_truenodeids=n["true"], nodes_trueleafs=n["trueleaf"],
        nodes_falsenodeids=n["false"], nodes_falseleafs=n["falseleaf"], leaf_targetids=leaf_targets,
        leaf_weights=numpy_helper.from_array(np.asarray(leaf_weights, np.float32)), **attrs)


def v1_node(op: str, trees: list[dict], **attrs):
    """The forest as a TreeEnsembleRegressor / TreeEnsembleClassifier (ai.onnx.ml 3) node."""
    prefix = "class" if op == "TreeEnsembleClassifier" else "target"
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_modes", "nodes_featureids", "nodes_values",
                         "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true",
                         f"{prefix}_treeids", f"{prefix}_nodeids", f"{prefix}_ids", f"{prefix}_weights")}

    def add(tree_id: int, t, counter: list[int]) -> int:
        node_id = counter[0]
        counter[0] += 1
        at = len(a["nodes_nodeids"])
        leaf = "votes" in t
        for k, v in (("nodes_treeids", tree_id), ("nodes_nodeids", node_id),
                     ("nodes_modes", "LEAF" if leaf else MODE_NAMES[t["mode"]]),
                     ("nodes_featureids", 0 if leaf else t["feature"]), ("nodes_values", 0.0 if leaf else t["split"]),
                     ("nodes_truenodeids", 0), ("nodes_falsenodeids", 0),
                     ("nodes_missing_value_tracks_true", 0 if leaf else t["missing"])):
            a[k].append(v)
        if leaf:
            for target, w in t["votes"]:
                for k, v in (("treeids", tree_id), ("nodeids", node_id), ("ids", target), ("weights", w)):
                    a[f"{prefix}_{k}"].append(v)
        else:
            a["nodes_truenodeids"][at] = add(tree_id, t["true"], counter)
            a["nodes_falsenodeids"][at] = add(tree_id, t["false"], counter)
        return node_id

    for tree_id, t in enumerate(trees):
        add(tree_id, t, [0])
    outputs = ["label", "y"] if prefix == "class" else ["y"]
    return helper.make_node(op, ["x"], outputs, domain="ai.onnx.ml", **a, **attrs)


def model(node, ml_opset: int = 5, shape=(16, FEATURES)) -> onnx.ModelProto:
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if "label" in node.output:
        outs.insert(0, helper.make_tensor_value_info("label", TensorProto.INT64, None))
    graph = helper.make_graph([node], "forest", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              outs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid("ai.onnx.ml", ml_opset)])
    m.ir_version = 10
    return m


def check_against_onnxruntime(m: onnx.ModelProto, x: np.ndarray, tmp_path, rtol: float = 1e-6) -> None:
    """Kiln's reference equals onnxruntime (integers exactly, floats within rtol of the largest
    score), and the generated C equals Kiln's reference."""
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    want = om.ort_outputs(m, {"x": x})
    got = run_graph(g, {"x": x})
    for name, w in want.items():
        if w.dtype == np.int64:
            np.testing.assert_array_equal(got[name], w, err_msg=name)
        else:
            assert om.max_rel_error(got[name], w) <= rtol, name
    assert_c_equals_reference(g, [{"x": x}], rtol=1e-7)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])  # AVERAGE, SUM, MIN, MAX
def test_tree_ensemble_v5_every_comparison(seed, aggregate, tmp_path):
    trees = forest(seed, trees=5, targets=3)
    check_against_onnxruntime(model(v5_node(trees, 3, aggregate)), rows(seed), tmp_path)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tree_ensemble_v5_set_membership(seed, tmp_path):
    trees = forest(seed, modes=(0, 6, 6, 3), trees=3, targets=2)
    x = np.where(np.isnan(rows(seed)), np.nan, np.round(rows(seed) * 2)).astype(np.float32)  # categories, NaN
    check_against_onnxruntime(model(v5_node(trees, 2)), x, tmp_path)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
def test_tree_ensemble_regressor(seed, aggregate, tmp_path):
    """Several votes per leaf and base values, as TreeEnsembleRegressor writes them."""
    trees = forest(seed, modes=(0, 1, 2, 3, 4, 5), trees=4, targets=2)
    node = v1_node("TreeEnsembleRegressor", trees, n_targets=2, aggregate_function=aggregate,
                   base_values=[0.5, -1.25])
    check_against_onnxruntime(model(node, ml_opset=3), rows(seed), tmp_path)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("post_transform", ["NONE", "SOFTMAX", "LOGISTIC"])
def test_tree_ensemble_classifier(seed, post_transform, tmp_path):
    """Labels (int64) and class scores of a 3-class forest, as skl2onnx writes it."""
    trees = forest(seed, modes=(0,), trees=4, targets=3)
    node = v1_node("TreeEnsembleClassifier", trees, classlabels_int64s=[3, 7, 11], post_transform=post_transform,
                   base_values=[0.25, -0.5, 0.0])
    check_against_onnxruntime(model(node, ml_opset=3), rows(seed), tmp_path)


def test_refused_with_one_line_errors(tmp_path):
    trees = forest(0, modes=(0,), trees=2, targets=2)
    cases = [
        (v1_node("TreeEnsembleClassifier", trees, classlabels_strings=["a", "b"]), "string class labels"),
        (v1_node("TreeEnsembleClassifier", trees, classlabels_int64s=[0, 1]), r"2 classes voted for as \[0, 1\]"),
        (v5_node(trees, 2, post_transform=4), "post_transform PROBIT"),
    ]
    for node, message in cases:
        onnx.save(model(node), tmp_path / "m.onnx")
        with pytest.raises(KilnError, match=message):
            load(tmp_path / "m.onnx", {})


def kiln_tables(**changes) -> dict:
    """A valid two-node, three-leaf tree in Kiln's tables, with `changes`."""
    attrs = {"n_targets": 2, "roots": (0,), "features": (1, 0), "modes": (0, 3), "splits": (0.5, -1.0),
             "true_next": (1, -2), "false_next": (-1, -3), "leaf_begin": (0, 1, 2, 4),
             "leaf_targets": (0, 1, 0, 1), "leaf_weights": (1.0, 2.0, 3.0, 4.0)}
    return {**attrs, **changes}


def test_kiln_tables_walk_and_compile():
    b = GraphBuilder("tables")
    y = b.node("TreeEnsemble", [b.input("x", "float32", (4, 2))], **kiln_tables())
    g = b.output(y).build()
    x = np.array([[0.0, 0.0], [-2.0, 0.0], [0.0, 1.0], [np.nan, np.nan]], np.float32)
    np.testing.assert_array_equal(run_graph(g, {"x": x})[y], [[0, 2], [3, 4], [1, 0], [1, 0]])  # NaN: false
    assert_c_equals_reference(g, [{"x": x}], rtol=0.0)


@pytest.mark.parametrize("changes,message", [
    ({"true_next": (1, 0)}, "branches back"),
    ({"false_next": (-1, -4)}, "outside the node or leaf tables"),
    ({"features": (1, 2)}, "feature outside 0..1"),
    ({"leaf_targets": (0, 1, 0, 2)}, "target outside 0..1"),
    ({"modes": (0, 6)}, "without their member table"),
    ({"splits": (0.5,)}, "differ in length"),
])
def test_kiln_tables_refused(changes, message):
    b = GraphBuilder("bad")
    with pytest.raises(KilnError, match=message):
        b.node("TreeEnsemble", [b.input("x", "float32", (1, 2))], **kiln_tables(**changes))


def votes_for_class_0(trees: list[dict], positive: bool) -> list[dict]:
    """The forest with one vote per leaf, for class 0 (a binary boosted model: one score)."""
    def fix(t):
        if "votes" in t:
            w = t["votes"][0][1]
            return {"votes": [(0, abs(w) / 4 if positive else w)]}
        return {**t, "true": fix(t["true"]), "false": fix(t["false"])}
    return [fix(t) for t in trees]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("positive", [True, False])
@pytest.mark.parametrize("post_transform", ["NONE", "LOGISTIC", "SOFTMAX"])
def test_binary_tree_ensemble_classifier(seed, positive, post_transform, tmp_path):
    """Two labels, votes for class 0 only, a base value: onnxruntime's binary rules."""
    trees = votes_for_class_0(forest(seed, modes=(0, 1), trees=3, targets=1), positive)
    node = v1_node("TreeEnsembleClassifier", trees, classlabels_int64s=[4, 9], post_transform=post_transform,
                   base_values=[0.125 if positive else -0.25])
    check_against_onnxruntime(model(node, ml_opset=3), rows(seed), tmp_path)


@pytest.mark.parametrize("post_transform", [1, 2])
def test_tree_ensemble_v5_post_transform_as_the_spec_says(post_transform, tmp_path):
    """1 is SOFTMAX, 2 LOGISTIC in the ONNX spec; onnxruntime 1.32 swaps them and onnx's
    reference ignores the attribute: checked against numpy on onnxruntime's untransformed scores."""
    trees = forest(5, trees=3, targets=3)
    x = rows(5)
    scores = om.ort_outputs(model(v5_node(trees, 3)), {"x": x})["y"].astype(np.float64)
    if post_transform == 1:
        want = np.exp(scores - scores.max(1, keepdims=True))
        want /= want.sum(1, keepdims=True)
    else:
        want = 1 / (1 + np.exp(-scores))
    onnx.save(model(v5_node(trees, 3, post_transform=post_transform)), tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    assert om.max_rel_error(run_graph(g, {"x": x})["y"], want) <= 1e-6
    assert_c_equals_reference(g, [{"x": x}], rtol=1e-6)


def lowered_types(g) -> dict[str, str]:
    """The dtype of each TreeEnsemble table the lowering emits, by table name."""
    from codegen.lower import lower_graph
    from codegen.targets import load_target

    return {c.name.removesuffix("_tree_ensemble_0"): c.dtype for c in lower_graph(g, load_target("host")).consts}


def test_hundred_trees_of_depth_6_in_int8_tables(tmp_path):
    """Relative branches keep a large forest's per-node tables int8; only the per-tree ones grow."""
    trees = forest(7, trees=100, depth=6, features=20)
    m = model(v5_node(trees, 1), shape=(16, 20))
    check_against_onnxruntime(m, rows(7, features=20), tmp_path)
    types = lowered_types(load(tmp_path / "m.onnx", {}))
    assert types["feature"] == types["second_step"] == "int8"
    assert types["roots"] == types["leaf_base"] == "int16"  # a few thousand nodes and leaves


def chain_tables(length: int) -> dict:
    """One tree: node i sends x[i] <= 0 to leaf i, else on to node i + 1; the last node ends in leaf
    `length` (leaf ranks down to -1 - length, features up to length - 1)."""
    return {"roots": (0,), "features": tuple(range(length)), "modes": (0,) * length, "splits": (0.0,) * length,
            "true_next": tuple(-1 - i for i in range(length)),
            "false_next": (*range(1, length), -1 - length),
            "leaf_begin": tuple(range(length + 2)), "leaf_targets": (0,) * (length + 1),
            "leaf_weights": tuple(float(i) for i in range(length + 1))}


def test_a_long_chain_needs_int16_and_walks_the_same_in_c():
    length = 200
    b = GraphBuilder("chain")
    y = b.node("TreeEnsemble", [b.input("x", "float32", (4, length))], **chain_tables(length))
    g = b.output(y).build()
    types = lowered_types(g)
    assert types["feature"] == types["true_step"] == "int16"  # one comparison: both steps stored
    x = np.ones((4, length), np.float32)
    x[0, 0], x[1, 150], x[2, 199] = -1, 0, np.nan  # leaf 0, leaf 150, the last leaf (NaN goes false)
    np.testing.assert_array_equal(run_graph(g, {"x": x})[y][:, 0], [0, 150, 200, 200])
    assert_c_equals_reference(g, [{"x": x}], rtol=0.0)


def test_more_than_32767_nodes_need_int32_roots():
    """16,400 two-node trees: the per-tree tables outgrow int16, the per-node ones stay int8."""
    trees = 16_400
    tables = {"roots": tuple(range(0, 2 * trees, 2)), "features": (0, 1) * trees, "modes": (0,) * (2 * trees),
              "splits": (0.0,) * (2 * trees),
              "true_next": tuple(v for t in range(trees) for v in (2 * t + 1, -1 - 3 * t)),
              "false_next": tuple(v for t in range(trees) for v in (-2 - 3 * t, -3 - 3 * t)),
              "leaf_begin": tuple(range(3 * trees + 1)), "leaf_targets": (0,) * (3 * trees),
              "leaf_weights": (1.0,) * (3 * trees)}
    b = GraphBuilder("big")
    b.output(b.node("TreeEnsemble", [b.input("x", "float32", (1, 2))], **tables))
    types = lowered_types(b.build())
    assert types["roots"] == types["leaf_base"] == "int32"
    assert types["feature"] == types["second_step"] == "int8"


@pytest.mark.skipif(not (shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")),
                    reason="no Arm toolchain or QEMU (Debian gcc-arm-none-eabi, qemu-system-arm)")
@pytest.mark.parametrize("kind", ["forest_100_trees", "classifier_3_classes"])
def test_on_cortex_m4_equal_the_reference(kind, tmp_path):
    """The narrow tables (int16 per tree, int8 per node) read the same on the Arm target."""
    from codegen.targets import load_target
    from codegen.verify.qemu import run_generated as run_on_qemu
    from helpers import build_graph

    if kind == "forest_100_trees":
        m, x = model(v5_node(forest(7, trees=100, depth=6, features=20), 1), shape=(16, 20)), rows(7, features=20)
    else:
        node = v1_node("TreeEnsembleClassifier", forest(0, modes=(0,), trees=4, targets=3),
                       classlabels_int64s=[3, 7, 11], base_values=[0.25, -0.5, 0.0])
        m, x = model(node, ml_opset=3), rows(0)
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    (got,) = run_on_qemu(build_graph(g, "t", target="cortex-m4").files, "t", [{"x": x}], load_target("cortex-m4"))
    for name, want in run_graph(g, {"x": x}).items():
        np.testing.assert_array_equal(got[name], want, err_msg=name)


def test_preorder_layout_puts_a_node_first_and_steps_within_the_tree():
    from codegen.ops.tree_tables import SWAPPED, TWO_LEAVES, preorder

    # two trees: node 0 (true: node 1, false: leaf 0), node 1 (two leaves, 1 and 2); then a
    # one-leaf tree (leaf 3); then node 2 whose true child is leaf 4 and false child node 1
    order = preorder(roots=(0, -4, 2), true_next=(1, -2, -5), false_next=(-1, -3, 1))
    assert order.nodes == (0, 1, 2, 1)  # node 1 is reached twice: laid out twice
    assert order.leaves == (1, 2, 0, 3, 1, 2, 4)
    assert order.roots == (0, -1, 2) and order.leaf_base == (0, 3, 4)
    assert order.second_step == (-3, -2, -3, -2)  # -1 - the rank of the other leaf in its tree
    assert order.layout_bits == (0, TWO_LEAVES, SWAPPED, TWO_LEAVES)


def test_trees_sharing_subtrees_exponentially_are_refused():
    """A DAG whose every node branches twice to the next: laid out per path it would double at
    each of its 40 levels; refused with one line instead of hanging."""
    from codegen.ops.tree_tables import preorder

    depth = 40
    true_next = [k + 1 for k in range(depth - 1)] + [-1]
    false_next = list(true_next)
    with pytest.raises(ValueError, match="share subtrees"):
        preorder([0], true_next, false_next)
    small = preorder([0], true_next[:3] + [-1], false_next[:3] + [-1])  # 4 levels: 15 nodes, fine
    assert len(small.nodes) == 15


def with_missing(t: dict, missing: int) -> dict:
    """The tree with every node's NaN rule set to `missing` (1: a NaN feature goes true)."""
    if "votes" in t:
        return t
    return {**t, "missing": missing, "true": with_missing(t["true"], missing),
            "false": with_missing(t["false"], missing)}


@pytest.mark.parametrize("mode", range(6))
@pytest.mark.parametrize("missing", [0, 1])
def test_one_comparison_for_every_node_is_compiled_into_the_walk(mode, missing, tmp_path):
    """scikit-learn writes BRANCH_LEQ everywhere: the kernel then compares inline (no mode switch),
    NaN features included, with the same results."""
    trees = [with_missing(t, missing) for t in forest(mode + 10 * missing, modes=(mode,), trees=4, targets=3)]
    m = model(v5_node(trees, 3, aggregate=1))
    check_against_onnxruntime(m, rows(mode), tmp_path)
    from helpers import build_graph as build

    source = build(load(tmp_path / "m.onnx", {})).files["t.c"]
    op = ("<=", "<", ">=", ">", "==", "!=")[mode]
    assert f"{'v != v || ' if missing else ''}v {op} split[at]" in source
    assert "_goes_true" not in source


@pytest.mark.parametrize("optimize", ["speed", "size"])
def test_optimize_size_keeps_one_step_a_node(optimize, tmp_path):
    """--optimize size stores one branch step a node (and decodes the layout bits), speed both:
    the same results either way, speed with fewer instructions, size with fewer bytes."""
    from codegen.verify.host import run_generated
    from helpers import build_graph as build

    trees = [with_missing(t, 0) for t in forest(5, modes=(0,), trees=6, targets=2, depth=6)]
    onnx.save(model(v5_node(trees, 2)), tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    res = build(g, optimize=optimize)
    (call,) = [c for c in res.lowered.calls if c.kernel.startswith("tree_ensemble")]
    size = {k: v.data.size for k, v in call.params.items() if k.endswith("step") or k == "split"}
    if optimize == "speed":
        assert size["true_step"] == size["false_step"] == size["split"] > 1 and size["second_step"] == 1
    else:
        assert size["second_step"] == size["split"] > 1 and size["true_step"] == size["false_step"] == 1
    x = rows(5)
    got = run_generated(res.files, "t", [{"x": x}], sanitize=True)[0]
    for name, want in run_graph(g, {"x": x}).items():
        np.testing.assert_array_equal(got[name], want, err_msg=name)  # the same sums in the same order
