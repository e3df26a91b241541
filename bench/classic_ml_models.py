"""The classic-ML models of bench/classic_ml.py, built with onnx.helper from fixed seeds in the
shapes scikit-learn + skl2onnx (zipmap=False) write: TreeEnsembleClassifier with full trees
(what a forest grows on enough data), Scaler + LinearClassifier, Scaler + SVMClassifier.
One row of FEATURES float32 features in; the label (int64) and the class scores out.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

FEATURES = 16


def _model(nodes: list, classes: int, name: str) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, FEATURES])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, [1]),
         helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, classes])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def _tree_attrs(rng: np.random.Generator, trees: int, depth: int, leaf_votes) -> dict[str, list]:
    """Full binary trees of `depth` (BRANCH_LEQ on a random feature at a standard-normal
    threshold, as the inputs are); `leaf_votes(tree)` gives each leaf's (class, weight) list."""
    a: dict[str, list] = {k: [] for k in (
        "nodes_treeids", "nodes_nodeids", "nodes_modes", "nodes_featureids", "nodes_values", "nodes_truenodeids",
        "nodes_falsenodeids", "nodes_missing_value_tracks_true", "class_treeids", "class_nodeids", "class_ids",
        "class_weights")}
    interior = 2 ** depth - 1
    for t in range(trees):
        for n in range(2 * interior + 1):  # heap order: the children of n are 2n + 1 and 2n + 2
            leaf = n >= interior
            for k, v in (("treeids", t), ("nodeids", n), ("modes", "LEAF" if leaf else "BRANCH_LEQ"),
                         ("featureids", 0 if leaf else int(rng.integers(FEATURES))),
                         ("values", 0.0 if leaf else float(np.float32(rng.standard_normal() * 0.7))),
                         ("truenodeids", 0 if leaf else 2 * n + 1), ("falsenodeids", 0 if leaf else 2 * n + 2),
                         ("missing_value_tracks_true", 0)):
                a[f"nodes_{k}"].append(v)
            if leaf:
                for c, w in leaf_votes(t):
                    for k, v in (("treeids", t), ("nodeids", n), ("ids", c), ("weights", float(np.float32(w)))):
                        a[f"class_{k}"].append(v)
    return a


def random_forest(trees: int, depth: int, seed: int) -> onnx.ModelProto:
    """A binary RandomForestClassifier as skl2onnx writes it: each leaf votes its probability of
    class 1, divided by the number of trees, under class id 0."""
    rng = np.random.default_rng(seed)
    node = helper.make_node("TreeEnsembleClassifier", ["x"], ["label", "probabilities"], domain="ai.onnx.ml",
                            classlabels_int64s=[0, 1], post_transform="NONE",
                            **_tree_attrs(rng, trees, depth, lambda _t: [(0, rng.beta(0.5, 0.5) / trees)]))
    return _model([node], 2, f"forest_{trees}x{depth}")


def gradient_boosting(rounds: int, depth: int, classes: int, seed: int) -> onnx.ModelProto:
    """A multi-class GradientBoostingClassifier: per round one tree per class voting for its
    class, class priors as base values, softmax of the sums."""
    rng = np.random.default_rng(seed)
    node = helper.make_node("TreeEnsembleClassifier", ["x"], ["label", "probabilities"], domain="ai.onnx.ml",
                            classlabels_int64s=list(range(classes)), post_transform="SOFTMAX",
                            base_values=rng.uniform(-1.5, -0.5, classes).astype(np.float32).tolist(),
                            **_tree_attrs(rng, rounds * classes, depth,
                                          lambda t: [(t % classes, rng.standard_normal() * 0.1)]))
    return _model([node], classes, f"boosting_{rounds}x{classes}x{depth}")


def _scaler(rng: np.random.Generator) -> onnx.NodeProto:
    """StandardScaler: (x - mean) * (1 / std)."""
    return helper.make_node("Scaler", ["x"], ["scaled"], domain="ai.onnx.ml",
                            offset=rng.normal(0, 0.3, FEATURES).astype(np.float32).tolist(),
                            scale=rng.uniform(0.5, 2.0, FEATURES).astype(np.float32).tolist())


def scaler_logistic_regression(classes: int, seed: int) -> onnx.ModelProto:
    """StandardScaler + multinomial LogisticRegression."""
    rng = np.random.default_rng(seed)
    linear = helper.make_node("LinearClassifier", ["scaled"], ["label", "probabilities"], domain="ai.onnx.ml",
                              coefficients=rng.standard_normal(classes * FEATURES).astype(np.float32).tolist(),
                              intercepts=rng.normal(0, 0.5, classes).astype(np.float32).tolist(),
                              classlabels_ints=list(range(classes)), post_transform="SOFTMAX", multi_class=1)
    return _model([_scaler(rng), linear], classes, f"logreg_{classes}")


def scaler_rbf_svc(vectors_per_class: list[int], seed: int) -> onnx.ModelProto:
    """StandardScaler + SVC(kernel="rbf", gamma="scale"), one-vs-one decision values."""
    rng = np.random.default_rng(seed)
    classes, vectors = len(vectors_per_class), sum(vectors_per_class)
    pairs = classes * (classes - 1) // 2
    svm = helper.make_node("SVMClassifier", ["scaled"], ["label", "probabilities"], domain="ai.onnx.ml",
                           kernel_type="RBF", kernel_params=[1.0 / FEATURES, 0.0, 3.0],
                           support_vectors=rng.standard_normal(vectors * FEATURES).astype(np.float32).tolist(),
                           coefficients=rng.uniform(-1, 1, (classes - 1) * vectors).astype(np.float32).tolist(),
                           rho=rng.uniform(-0.5, 0.5, pairs).astype(np.float32).tolist(),
                           vectors_per_class=vectors_per_class, post_transform="NONE",
                           classlabels_ints=list(range(classes)))
    return _model([_scaler(rng), svm], pairs, f"svc_rbf_{vectors}")


# (key, description, builder): the bench's fixed set, in the order of its table; the keys name
# the same shapes trained with scikit-learn in bench/peers/classic_ml.json.
MODELS = [
    ("forest_10x6", "random forest, 2 classes, 10 trees, depth 6", lambda: random_forest(10, 6, seed=1)),
    ("forest_100x8", "random forest, 2 classes, 100 trees, depth 8", lambda: random_forest(100, 8, seed=2)),
    ("boosting_30x3x3", "gradient boosting, 3 classes, 30 rounds, depth 3",
     lambda: gradient_boosting(30, 3, 3, seed=3)),
    ("logreg_3", "StandardScaler + logistic regression, 3 classes", lambda: scaler_logistic_regression(3, seed=4)),
    ("svc_rbf", "StandardScaler + RBF SVC, 3 classes, 100 support vectors",
     lambda: scaler_rbf_svc([34, 33, 33], seed=5)),
]
